"""A user-defined kernel: the probability that two parties' values are within 0.1.

f(x, y) = [|x - y| <= 0.1], written from secure operations (abs, interval
containment, conversion to fixed point) and run by the same protocol.
"""

import _paths
import numpy as np

from mpc.arith.rng import CSPRNG
from ustat.kernels import Kernel
from ustat.specs import UMPCSpec
from ustat.umpc import run_umpc

WIDTH = 0.1


def plain(X):
    return (np.abs(X[:, 0, 0] - X[:, 1, 0]) <= WIDTH).astype(float)


def secure(ops, x):
    d = ops.abs(ops.sub(x[0][0], x[1][0]))
    close = ops.in_interval(d, 0, int(round(WIDTH * ops.fp.scale)))
    return ops.to_fixed(close)


near = Kernel("near", 2, 1, plain, secure, (0.0, 1.0), "[|x - y| <= 0.1]")
x = CSPRNG().random(800)
res = run_umpc(x, UMPCSpec.of(near, epsilon=1.0), evaluate=True)
print(f"private P(|X - Y| <= 0.1): {res.estimate:.4f} (exact: {res.evaluation['u_complete']:.4f}, "
      f"theory for U(0,1): {1 - 0.9 ** 2:.4f})")
print(f"  {_paths.uncertainty(res)}")
