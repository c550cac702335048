"""Renyi-2 (collision) entropy of a categorical attribute, epsilon = 1."""

import math

import _paths
import numpy as np

from mpc.arith.rng import CSPRNG
from ustat.specs import UMPCSpec
from ustat.umpc import run_umpc

g = CSPRNG()
X = np.minimum(g.integers(8, (2000,)), g.integers(8, (2000,))).astype(float)[:, None]
res = run_umpc(X, UMPCSpec.of("renyi2", epsilon=1.0), evaluate=True)
print(f"private Renyi-2 entropy: {res.estimate:.4f} nats "
      f"(exact: {-math.log(res.evaluation['u_complete']):.4f})")
print(f"  {_paths.uncertainty(res)}")
