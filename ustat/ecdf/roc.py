"""Private ROC curve and AUC from the ECDFs of the positive and negative scores.

Barczewski, Mawass, Ramon, Section 5.1. Every party holds (score s_i,
label y_i). Two tree-noise ECDFs are released over *all* n parties, with
weights y_i (positives) and 1 - y_i (negatives), so the servers never learn
a party's class (the weight is inside its DCF key / its shares):

    c+(tau_k) = #{y = 1, s <= tau_k},   c-(tau_k) = #{y = 0, s <= tau_k}.

Accounting: replacing one record changes each class curve by an interval
(moving within a class) or a suffix (changing class), both covered by the
tree sensitivity, so each curve gets epsilon / 2 and the pair is epsilon-DP
(the paper's "eps/2 each"). Class sizes: the last threshold is the public
upper bound of the scores (appended if missing), so n+^ = c+^(tau_N) and
n-^ = c-^(tau_N) come out of the same two releases -- no extra epsilon, no
separate count (their noise is the L + 1 node noises of the last leaf).

Convention (scikit-learn's): a higher score predicts the positive class; at
threshold tau the classifier says "positive" when s > tau, so
TPR(tau) = 1 - c+(tau)/n+ and FPR(tau) = 1 - c-(tau)/n-. The curve starts
at (1, 1) (tau = -inf, a public fact) and ends at (0, 0) (tau = tau_N).
With epsilon = inf and the distinct scores as thresholds it is exactly
``sklearn.metrics.roc_curve(..., drop_intermediate=False)``. AUC: trapezoids
over the points, as ``sklearn.metrics.auc``. Smoothing (optional) is applied
to each class ECDF c^/n^ (post-processing).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from mpc.rng import CSPRNG

from .release import deploy, exact_counts, check_values
from .servers import make_session
from .smoothing import smooth as _smooth
from .thresholds import check_thresholds, grid_rank

__all__ = ["ROCRelease", "private_roc", "roc_points", "auc"]


def roc_points(c_pos, c_neg, n_pos, n_neg):
    """(fpr, tpr) from cumulative class counts at increasing thresholds, with (1, 1) first."""
    tpr = np.concatenate([[1.0], (n_pos - np.asarray(c_pos, np.float64)) / n_pos])
    fpr = np.concatenate([[1.0], (n_neg - np.asarray(c_neg, np.float64)) / n_neg])
    if fpr[-1] != 0.0 or tpr[-1] != 0.0:
        fpr, tpr = np.append(fpr, 0.0), np.append(tpr, 0.0)
    return fpr, tpr


def auc(fpr, tpr) -> float:
    """Trapezoidal area under the points (any order along the curve, as sklearn.metrics.auc)."""
    fpr, tpr = np.asarray(fpr, np.float64), np.asarray(tpr, np.float64)
    area = float(np.sum(np.diff(fpr) * (tpr[1:] + tpr[:-1]) / 2.0))
    return -area if fpr[0] > fpr[-1] else area


@dataclass
class ROCRelease:
    """A private ROC curve (points from threshold -inf to tau_N) and its AUC."""

    thresholds: np.ndarray
    fpr: np.ndarray
    tpr: np.ndarray
    auc: float
    n_pos: float
    n_neg: float
    account: dict
    smoothing: str | None = None
    communication: dict | None = None
    exact: dict | None = field(default=None, repr=False)


def _labels(labels, n: int) -> np.ndarray:
    y = np.asarray(labels)
    if y.shape != (n,):
        raise ValueError(f"labels: need {n} labels (one per score), got shape {y.shape}")
    if y.dtype.kind not in "biu" or (y.size and (y.min() < 0 or y.max() > 1)):
        raise ValueError("labels must be 0/1 or booleans (1 = positive); map other labels first")
    # Whether both classes occur is not checked here: that is a fact about the data
    # set, not about one record, and is only learnt from the DP class counts below.
    return y.astype(np.int64)


def private_roc(scores, labels, thresholds, epsilon, *, bounds=None, clip: bool = False,
                smooth: str | None = None, backend: str = "fss", evaluate: bool = False,
                seed=None, **kwargs) -> ROCRelease:
    """The ROC curve of ``scores`` for 0/1 ``labels`` from two private class ECDFs.

    ``thresholds``: increasing grid inside ``bounds``; the upper bound is
    appended if missing. Each class ECDF spends epsilon / 2 (tree noise,
    :func:`ustat.ecdf.release.deploy`; ``kwargs`` go there, e.g. branching,
    noise_mode, servers). ``smooth``: None, "isotonic", "l1" or "l2".
    """
    x = check_values(scores, bounds, clip, name="scores")
    y = _labels(labels, x.size)
    tau = check_thresholds(thresholds, bounds)
    hi = float(bounds[1]) if bounds is not None else float(x.max())
    if tau[-1] < hi:
        tau = np.append(tau, hi)
    if tau[-1] < x.max():
        raise ValueError("thresholds: the last threshold must be >= every score (give bounds)")
    eps = float(epsilon)
    half = eps / 2.0 if not math.isinf(eps) else eps
    session = None
    if backend != "central":
        session = make_session(x.size, kwargs.pop("servers", 2), bits=kwargs.pop("bits", 32),
                               seed=seed, record_views=kwargs.pop("record_views", False))
    common = dict(backend=backend, bounds=bounds, clip=clip, seed=seed, session=session, **kwargs)
    seeds = [seed, seed]
    if backend == "central":
        common.pop("session")
        if seed is not None and not isinstance(seed, CSPRNG):   # not the same noise twice
            seeds[1] = f"{seed!r}/negative class"
    common.pop("seed")
    deps = [deploy(x, tau, half, weights=w, seed=sd, **common) for w, sd in ((y, seeds[0]),
                                                                             (1 - y, seeds[1]))]
    N = tau.size
    c_pos, c_neg = (d.query(np.arange(N)) for d in deps)
    n_pos, n_neg = float(c_pos[-1]), float(c_neg[-1])
    if n_pos <= 0 or n_neg <= 0:
        raise ValueError(f"noisy class size <= 0 (n+ ~ {n_pos:.0f}, n- ~ {n_neg:.0f}): the "
                         f"class is empty or too small for this epsilon; "
                         f"check the label column and the positive label (matched exactly), or "
                         f"use a larger epsilon")
    if smooth is None:
        fpr, tpr = roc_points(c_pos, c_neg, n_pos, n_neg)
    else:
        Fp = _smooth(c_pos / n_pos, deps[0].tree, smooth)
        Fn = _smooth(c_neg / n_neg, deps[1].tree, smooth)
        fpr, tpr = roc_points(Fp, Fn, 1.0, 1.0)
    acc = deps[0].account()
    acc.pop("mse")
    acc["mse_counts_note"] = "per class count (TPR error ~ mse_counts / n+^2)"
    acc.update(epsilon=sum(d.noise.epsilon for d in deps), epsilon_per_class=acc["epsilon"],
               epsilon_requested=eps,
               epsilon_vs_server_seeing_output=sum(d.noise.coalition_epsilon() for d in deps),
               class_sizes="noisy counts at the last threshold (same releases, no extra epsilon)")
    exact = None
    if evaluate:
        r = grid_rank(x, tau)
        ep, en = exact_counts(r, N, y), exact_counts(r, N, 1 - y)
        f, t = roc_points(ep, en, float(y.sum()), float((1 - y).sum()))
        exact = {"fpr": f, "tpr": t, "auc": auc(f, t), "n_pos": int(y.sum()),
                 "n_neg": int((1 - y).sum())}
    comm = session.net.report() if session is not None else None
    return ROCRelease(tau, fpr, tpr, auc(fpr, tpr), n_pos, n_neg, acc, smooth, comm, exact)
