"""AUC of call duration as a score for subscription (UCI Bank, or synthetic), epsilon = 1.

The positive-class count is released with its own share of epsilon, chosen
from public parameters (0.27 at the default |E| = 2n); the AUC is the
U-statistic rescaled by C(n,2) / (n+ n-).
"""


import _paths
import numpy as np

from mpc.arith.rng import CSPRNG
from ustat.data import load_csv, normalize
from ustat.specs import UMPCSpec
from ustat.umpc import run_umpc

if _paths.have(_paths.BANK):
    raw, _ = load_csv(_paths.BANK, columns=["duration", "y"], categorical=["y"])
    score, _ = normalize(raw[:, 0], bounds=[(0, 5000)])
    X = np.column_stack([score, raw[:, 1]])
else:
    g = CSPRNG()
    y = g.integers(2, (2000,))
    X = np.column_stack([np.clip(0.3 + 0.2 * y + 0.3 * g.random(2000), 0, 1), y])
res = run_umpc(X, UMPCSpec.of("auc", epsilon=1.0, threat_model="hf"), evaluate=True)
print(f"private AUC: {res.estimate:.4f} (exact AUC: {res.evaluation['statistic_complete']:.4f})")
print(f"  {_paths.uncertainty(res)}")
print(f"noisy n+ = {res.aux['noisy_sums'][0]:.1f}; threat model {res.threat_model}; class-count "
      f"share of epsilon {res.aux_epsilon_fraction:g}")
