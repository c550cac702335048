"""Kendall's tau between age and balance on UCI Bank (or synthetic data), epsilon = 1."""


import _paths
import numpy as np

from mpc.arith.rng import CSPRNG
from ustat.data import load_csv, normalize
from ustat.specs import UMPCSpec
from ustat.umpc import run_umpc

if _paths.have(_paths.BANK):
    raw, _ = load_csv(_paths.BANK, columns=["age", "balance"])
    X, _ = normalize(raw, bounds=[(18, 95), (-8019, 102127)])
else:
    g = CSPRNG()
    a = g.random(2000)
    X = np.column_stack([a, np.clip(a + 0.3 * g.random(2000), 0, 1)])
res = run_umpc(X, UMPCSpec.of("kendall", epsilon=1.0, edges="2n"), evaluate=True)
print(f"private Kendall tau: {res.estimate:.4f}  (complete U on the same data: "
      f"{res.evaluation['u_complete']:.4f}, incomplete on the sampled edges: "
      f"{res.evaluation['u_incomplete']:.4f})")
print(f"  {_paths.uncertainty(res)} (the interval covers the complete U)")
print(f"n={res.n} |E|={res.edges} max degree={res.max_degree} seconds={res.seconds:.2f}")
