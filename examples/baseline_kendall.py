"""Kendall's tau on UCI Bank (age, balance) by every protocol: estimate, error, bits, rounds, trust.

One run each at epsilon = 1 with t = 16 bins per column (T = 256 cells);
benchmarks/baselines.py repeats this 50 times at t = 64 for MSEs. Every release is
clamped into tau's range [-1, 1] (the raw value is shown beside it when it fell outside)
and comes with its DP noise std and a 95% interval where the protocol has a public
variance formula (U-MPC, bell-ldp), else the reason it has none.
"""


import _paths
import numpy as np

from mpc.arith.rng import CSPRNG
from ustat.baselines import PROTOCOLS, BaselineSpec, run_protocol
from ustat.data import load_csv, normalize

if _paths.have(_paths.BANK):
    raw, _ = load_csv(_paths.BANK, columns=["age", "balance"])
    X, _ = normalize(raw, bounds=[(18, 95), (-8019, 102127)])
else:                                   # synthetic stand-in when ../shared is absent
    g = CSPRNG()
    a = g.random(3000)
    X = np.column_stack([a, np.clip(0.7 * a + 0.3 * g.random(3000), 0, 1)])

print(f"n = {X.shape[0]}, epsilon = 1, t = 16")
print(f"{'protocol':<10} {'estimate':>12} {'exact':>9} {'online bits':>13} {'rounds':>6}  DP model")
for name, info in PROTOCOLS.items():
    if info.kernels == "auc":
        continue
    # each protocol takes its own options: U-MPC a threat model, the discretizing ones bins
    extra = {"threat_model": "hf"} if name == "umpc" else {"bins": 16} if info.uses_bins else {}
    spec = BaselineSpec.of(name, "kendall", epsilon=1.0, **extra)
    r = run_protocol(X, spec, evaluate=True)
    raw = "" if r.estimate == r.estimate_raw else f" (raw {r.estimate_raw:.4g})"
    print(f"{name:<10} {r.estimate:>12.4f} {r.evaluation['u_complete']:>9.4f} "
          f"{r.online_bits:>13.3g} {r.rounds:>6}  {r.dp_model}{raw}")
    print(f"{'':<10} {_paths.uncertainty(r)}")
print("\ntrust models:")
for name, info in PROTOCOLS.items():
    print(f"  {name}: {info.trust}")
