"""Gini mean difference of 1000 parties' incomes (synthetic), epsilon = 1."""

import _paths
import numpy as np

from mpc.arith.rng import CSPRNG
from ustat.data import normalize
from ustat.specs import UMPCSpec
from ustat.umpc import run_umpc

rng = CSPRNG()
income = 20_000 + 80_000 * rng.random(1000) ** 2        # one record per party
X, _ = normalize(income, bounds=[(0, 100_000)])          # public bounds
res = run_umpc(X, UMPCSpec.of("gini", epsilon=1.0))
print(f"private Gini mean difference: {res.estimate * 100_000:,.0f} "
      f"(plaintext {np.mean(np.abs(income[:, None] - income[None, :])) * 1000 / 999:,.0f})")
print(f"  {_paths.uncertainty(res, 100_000)}")
print(f"n={res.n} |E|={res.edges} online={res.online_bits / 8e6:.2f} MB rounds={res.rounds}")
