"""Volume under the ROC surface (degree 3) for three ordered classes, epsilon = 1.

The class counts n0, n1, n2 are released with 10% of epsilon and the VUS is
U * C(n,3) / (n0 n1 n2): at small n their noise dominates the error, so this
example uses n = 3000.
"""

import _paths
import numpy as np

from mpc.arith.rng import CSPRNG
from ustat.specs import UMPCSpec
from ustat.umpc import run_umpc

g = CSPRNG()
n = 3000
cls = g.integers(3, (n,))
score = np.clip(0.2 + 0.25 * cls + 0.35 * g.random(n), 0, 1)
res = run_umpc(
    np.column_stack([score, cls]),
    UMPCSpec.of("vus", epsilon=1.0, edges="4n", threat_model="hf"),
    evaluate="incomplete")
print(f"private VUS: {res.estimate:.4f} (exact on the sampled triples: "
      f"{res.evaluation['statistic_incomplete']:.4f}; chance level 1/6)")
print(f"  {_paths.uncertainty(res)}")
