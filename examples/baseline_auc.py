"""A private AUC four ways on UCI Bank: U-MPC, Bell et al.'s AUC protocol, FedAUC RR and Lap.

The score is the call duration normalized with the public bound 0:5000 s
(the README's `ustat estimate auc --columns duration,y` example); labels y.
Each release is clamped into [0, 1] (the raw value is shown when it fell outside) and
printed with its DP noise std and 95% interval (every protocol here has a public variance
formula: U-MPC's noise law, Bell et al.'s Theorem 3 bound, FedAUC's delta method).
"""


import _paths
import numpy as np

from mpc.arith.rng import CSPRNG
from ustat.baselines import BaselineSpec, run_protocol
from ustat.data import load_csv, normalize

if _paths.have(_paths.BANK):
    raw, _ = load_csv(_paths.BANK, columns=["duration", "y"], categorical=["y"])
    score, _ = normalize(raw[:, 0], bounds=[(0, 5000)], clip=True)
    X = np.column_stack([score, raw[:, 1]])
else:                                   # synthetic stand-in when ../shared is absent
    g = CSPRNG()
    s = g.random(3000)
    X = np.column_stack([s, (g.random(3000) < 0.1 + 0.6 * s).astype(float)])

print(f"n = {X.shape[0]}, positives = {int(X[:, 1].sum())}, epsilon = 1")
for name, extra in (("umpc", {"threat_model": "hf"}), ("bell-auc", {"bins": 64}),
                    ("fedauc-rr", {}), ("fedauc-lap", {})):
    r = run_protocol(X, BaselineSpec.of(name, "auc", epsilon=1.0, **extra), evaluate=True)
    raw = "" if r.estimate == r.estimate_raw else f", raw {r.estimate_raw:.4g}"
    print(f"{name:<10} AUC {r.estimate:.4f}{raw} (exact {r.evaluation['statistic_complete']:.4f}) "
          f"online bits {r.online_bits:.3g}, rounds {r.rounds}\n           "
          f"{_paths.uncertainty(r)}\n           {r.trust}")
