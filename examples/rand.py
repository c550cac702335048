"""Rand index between two clusterings held by 1000 parties, epsilon = 1."""

import _paths
import numpy as np

from mpc.arith.rng import CSPRNG
from ustat.specs import UMPCSpec
from ustat.umpc import run_umpc

g = CSPRNG()
a = g.integers(4, (1000,))
b = np.where(g.random(1000) < 0.8, a, g.integers(4, (1000,)))   # mostly agreeing
res = run_umpc(
    np.column_stack([a, b]).astype(float),
    UMPCSpec.of("rand", epsilon=1.0),
    evaluate=True)
print(f"private Rand index: {res.estimate:.4f} (exact: {res.evaluation['u_complete']:.4f})")
print(f"  {_paths.uncertainty(res)}")
