"""Duplicate pair ratio of the job category (UCI Bank, or synthetic), epsilon = 1."""


import _paths

from mpc.arith.rng import CSPRNG
from ustat.data import load_csv
from ustat.specs import UMPCSpec
from ustat.umpc import run_umpc

if _paths.have(_paths.BANK):
    X, _ = load_csv(_paths.BANK, columns=["job"], categorical=True)
else:
    X = CSPRNG().integers(12, (3000, 1)).astype(float)
res = run_umpc(X, UMPCSpec.of("duplicate", epsilon=1.0, edges="4n"), evaluate=True)
print(f"private duplicate pair ratio: {res.estimate:.4f} "
      f"(exact: {res.evaluation['u_complete']:.4f}); |E| = {res.edges}")
print(f"  {_paths.uncertainty(res)}")
