"""Randles' triples statistic (degree 3) for asymmetry of a skewed sample, epsilon = 1."""

import _paths

from mpc.arith.rng import CSPRNG
from ustat.specs import UMPCSpec
from ustat.umpc import run_umpc

g = CSPRNG()
x = g.random(600) ** 3            # right-skewed in [0, 1]
res = run_umpc(x, UMPCSpec.of("triples", epsilon=1.0, edges="3n"), evaluate="incomplete")
print(f"private triples statistic: {res.estimate / 3:.4f} "
      f"(exact on the sampled triples: {res.evaluation['u_incomplete'] / 3:.4f}); "
      f"positive = right skew")
print(f"  {_paths.uncertainty(res, 1 / 3)}")
print(f"n={res.n} |E|={res.edges} rounds={res.rounds} online={res.online_bits / 8e6:.2f} MB")
