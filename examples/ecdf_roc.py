"""Private ROC curve and AUC of a logistic-regression score on UCI Bank (or synthetic), epsilon = 1.

The ECDFs of the positive and negative scores are released by two FSS
servers with epsilon/2 each; every party's key carries its label as a 0/1
weight, so the servers never learn the classes. The class sizes are the
noisy counts at the top threshold (no extra epsilon).
"""

import os
import tempfile

import _paths  # noqa: F401 - puts the repository on sys.path (imported for that effect)
import numpy as np
from ecdf_scores import bank_scores

from ustat.ecdf import private_roc
from ustat.specs import ROCSpec

p, y, source = bank_scores()
spec = ROCSpec.of(thresholds=np.linspace(0, 1, 256), bounds=(0, 1), epsilon=1.0, smooth="l2",
                  backend="fss")
r = private_roc(p, y, spec, evaluate=True)
print(f"{source}: n = {y.size}")
print(f"  private AUC {r.auc:.4f} (true {r.exact['auc']:.4f}); "
      f"epsilon = {r.account['epsilon']:.3g} "
      f"({r.account['epsilon_per_class']:.3g} per class)")
lo, hi = r.intervals["auc_ci"]
print(f"  95% CI of the AUC [{lo:.4f}, {hi:.4f}] (around the unsmoothed "
      f"{r.intervals['auc_unsmoothed']:.4f}), noise std {r.intervals['auc_noise_std']:.3g}")
print(f"  noisy class sizes n+ ~ {r.n_pos:.0f}, n- ~ {r.n_neg:.0f} "
      f"(true {r.exact['n_pos']}, {r.exact['n_neg']})")
try:
    from ustat.ecdf.plots import plot_roc
    path = plot_roc(os.path.join(tempfile.gettempdir(), "ecdf_bank_roc.png"), r,
                    score="logistic score", label="subscribed", positive="yes")
    print(f"  plot: {path}")
except ImportError as exc:
    print(f"  (no plot: {exc})")
