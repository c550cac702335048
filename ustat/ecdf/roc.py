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

Uncertainty (post-processing of the two released curves and the public node-
noise law, :mod:`ustat.ecdf.noise_law`): a parametric bootstrap. The plug-in
truth is the isotonic (non-decreasing) fit of each noisy class curve; in each
of ``B`` draws it is scaled to a plausible true class size (the released size
less a fresh draw of that point's path noise: a run whose noisy class size
came out large by chance must not look precise), fresh path noises of each
tree (same law, fixed seed) are added, and the unsmoothed estimator is
recomputed as the release computes it (draws whose noisy class size is <= 0
would not be released and are dropped). The AUC CI is the basic bootstrap
interval [AUC^ - q_(1-alpha/2), AUC^ - q_(alpha/2)] of the draws' errors
against the plug-in's AUC (bias included: the trapezoid estimator on noisy
curves is biased when the noise is large), the whole [0, 1] when more than
alpha of the draws could have an empty class; ``auc_noise_std`` is half the
central 68% range of the errors (a robust sd); the ROC band is simultaneous
over the thresholds: TPR^_k +- t s_k and FPR^_k +- t s'_k with s, s' the
pointwise bootstrap sds and t the (1 - alpha) quantile of the largest
studentised error over k and both coordinates. They cover the data's ROC
points at the release's thresholds and its AUC there (trapezoids: the AUC of
the scores rounded up to the grid, ties counted half; ``roc_auc_score`` when
the grid holds every distinct score). With smoothing, the curve and AUC shown
are the smoothed ones, the intervals are those of the unsmoothed estimator
(``auc_unsmoothed``), which is what they are calibrated for.

Refusal: before anything is computed, a grid of one threshold (the upper bound
only: the curve would be (1, 1) -> (0, 0), AUC 0.5 whatever the data) is
refused, and :func:`best_case_auc_halfwidth` runs the same bootstrap on the
most favourable case public parameters can name (n / 2 per class, both curves
rising evenly); above ``MAX_AUC_HALFWIDTH`` the noise dominates and
:func:`private_roc` refuses.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from ..executors import Executor, Place, Program, Simulator
from ..specs.ecdf import (
    MAX_AUC_HALFWIDTH,
    ECDFDesign,
    ECDFExecution,
    ECDFPrecision,
    ECDFPrivacy,
    ECDFSpec,
    ROCSpec,
)
from .dropouts import LateDropoutError
from .intervals import check_confidence, simulate_path_noise
from .noise_law import SIM_SEED
from .release import (
    _filler,
    _local_only,
    branching_for,
    check_values,
    deploy,
    exact_counts,
    family_program,
    session_for,
)
from .smoothing import isotonic
from .smoothing import smooth as _smooth
from .thresholds import grid, grid_rank
from .tree import Tree, planned_law

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

    from mpc.session import Session

    from .noise_law import NodeNoiseLaw

__all__ = [
    "BOOTSTRAP_DRAWS",
    "MAX_AUC_HALFWIDTH",
    "ROCRelease",
    "auc",
    "best_case_auc_halfwidth",
    "private_roc",
    "roc_intervals",
    "roc_points",
    "roc_program",
]

BOOTSTRAP_DRAWS = 2000


def roc_points(c_pos: ArrayLike, c_neg: ArrayLike, n_pos: float,
               n_neg: float) -> tuple[np.ndarray, np.ndarray]:
    """(fpr, tpr) from cumulative class counts at increasing thresholds, with (1, 1) first."""
    tpr = np.concatenate([[1.0], (n_pos - np.asarray(c_pos, np.float64)) / n_pos])
    fpr = np.concatenate([[1.0], (n_neg - np.asarray(c_neg, np.float64)) / n_neg])
    if fpr[-1] != 0.0 or tpr[-1] != 0.0:
        fpr, tpr = np.append(fpr, 0.0), np.append(tpr, 0.0)
    return fpr, tpr


def auc(fpr: ArrayLike, tpr: ArrayLike) -> float:
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
    intervals: dict | None = None       # auc_ci, auc_noise_std, band, method (roc_intervals)
    released: bool = True               # False in a process of a run without the analyst
    processes: int = 1
    process_costs: list | None = None   # per process: rank, holds, wire counts, seconds
    costs: object = field(default=None, repr=False)   # mpc.comm.costs.Costs of the run
    spec: dict = field(default_factory=dict)    # the ROCSpec it ran (ROCSpec.from_dict)


def _auc_rows(c_pos, c_neg) -> np.ndarray:
    """Trapezoidal AUC of each row of cumulative class counts (last column = class size)."""
    n_pos, n_neg = c_pos[..., -1:], c_neg[..., -1:]
    one = np.ones(c_pos.shape[:-1] + (1,))
    tpr = np.concatenate([one, (n_pos - c_pos) / n_pos], axis=-1)
    fpr = np.concatenate([one, (n_neg - c_neg) / n_neg], axis=-1)
    return -np.sum(np.diff(fpr, axis=-1) * (tpr[..., 1:] + tpr[..., :-1]) / 2.0, axis=-1)


def _plug_in(counts) -> np.ndarray:
    """A non-decreasing curve in [0, n^] fitted to noisy cumulative counts (isotonic)."""
    c = np.asarray(counts, dtype=np.float64)
    top = max(float(c[-1]), 1.0)
    return np.maximum(isotonic(c / top) * top, 0.0)


def _class_size_factors(law, tree, top: float, draws: int, gen) -> np.ndarray:
    """Per draw, a plausible true class size over the released one: (n^ - zeta) / n^, zeta a
    fresh draw of the last point's path noise (0 where the class could be empty)."""
    zeta = law.sample((draws, tree.levels + 1), gen).sum(axis=1)
    return np.maximum(top - zeta, 0.0) / top


def roc_intervals(c_pos: ArrayLike, c_neg: ArrayLike, law_pos: NodeNoiseLaw,
                  law_neg: NodeNoiseLaw, tree: Tree, confidence: float = 0.95,
                  draws: int = BOOTSTRAP_DRAWS) -> dict:
    """AUC CI and simultaneous ROC band from the released class curves (module docstring)."""
    confidence = check_confidence(confidence)
    alpha = 1.0 - confidence
    cp, cn = (np.asarray(c, dtype=np.float64) for c in (c_pos, c_neg))
    raw = float(_auc_rows(cp, cn)) if cp[-1] > 0 and cn[-1] > 0 else math.nan
    method = ("parametric bootstrap from the released curves: plug-in = isotonic fit of each "
              "noisy class curve, scaled in each draw to a plausible true class size (the "
              f"released one less a fresh draw of its noise), {draws} fresh path noises per "
              "class from the release's node-noise law (fixed seed), basic interval for the "
              "AUC (the whole [0, 1] when a class could be empty), simultaneous studentised "
              "band over the thresholds; covers the data's AUC and ROC points at these "
              "thresholds")
    if law_pos.noiseless and law_neg.noiseless:
        return {"confidence": confidence, "auc_ci": [raw, raw], "auc_noise_std": 0.0,
                "auc_unsmoothed": raw, "band_t": 0.0, "tpr_sd": np.zeros(cp.size + 1),
                "fpr_sd": np.zeros(cp.size + 1), "auc_error_quantiles": [0.0, 0.0],
                "method": "no noise: the intervals are points"}
    gen = np.random.default_rng(SIM_SEED)
    hp, hn = _plug_in(cp), _plug_in(cn)
    fp = _class_size_factors(law_pos, tree, hp[-1], draws, gen)
    fn = _class_size_factors(law_neg, tree, hn[-1], draws, gen)
    sp = hp[None, :] * fp[:, None] + simulate_path_noise(law_pos, tree, draws, gen)
    sn = hn[None, :] * fn[:, None] + simulate_path_noise(law_neg, tree, draws, gen)
    released = (sp[:, -1] > 0) & (sn[:, -1] > 0)   # as the release: no curve otherwise
    sp, sn, fp, fn = sp[released], sn[released], fp[released], fn[released]
    ok = (hp[-1] * fp >= 1.0) & (hn[-1] * fn >= 1.0)     # else a class could be empty
    empty = 1.0 - ok.mean() if ok.size else 1.0
    # the estimator's error in each draw, bias included (the basic bootstrap; quantiles, not
    # moments: a draw with a tiny noisy class size gives a wild AUC)
    err = _auc_rows(sp[ok], sn[ok]) - float(_auc_rows(hp, hn))
    if empty / 2.0 >= alpha / 2.0 or err.size < 10 or not math.isfinite(raw):
        lo_q, hi_q = -math.inf, math.inf
    else:                                   # the empty-class draws count at both ends
        level = (alpha / 2.0 - empty / 2.0) / (1.0 - empty)
        lo_q, hi_q = np.quantile(err, [level, 1.0 - level])
    ci = [min(max(raw - hi_q, 0.0), 1.0), min(max(raw - lo_q, 0.0), 1.0)] \
        if math.isfinite(raw) else [0.0, 1.0]
    sp, sn, fp, fn = sp[ok], sn[ok], fp[ok], fn[ok]
    d_tpr = (sp[:, -1:] - sp) / sp[:, -1:] - (hp[-1] - hp) / hp[-1]
    d_fpr = (sn[:, -1:] - sn) / sn[:, -1:] - (hn[-1] - hn) / hn[-1]
    s_tpr, s_fpr = (np.maximum(d.std(axis=0), 1e-12) if d.size else np.ones(cp.size)
                    for d in (d_tpr, d_fpr))
    t = np.maximum(np.abs(d_tpr) / s_tpr, np.abs(d_fpr) / s_fpr).max(axis=1)
    band_t = float(np.quantile(t, confidence, method="higher")) if t.size else math.inf
    zero = np.zeros(1)                                # the public point (1, 1) first
    spread = np.quantile(err, [0.1587, 0.8413]) if err.size else [-math.inf, math.inf]
    return {"confidence": confidence, "auc_ci": ci,
            "auc_noise_std": float(spread[1] - spread[0]) / 2.0,
            "auc_unsmoothed": raw, "band_t": band_t, "auc_error_quantiles": [lo_q, hi_q],
            "tpr_sd": np.concatenate([zero, s_tpr]), "fpr_sd": np.concatenate([zero, s_fpr]),
            "method": method}


def best_case_auc_halfwidth(n: int, law: NodeNoiseLaw, tree: Tree, confidence: float = 0.95,
                            draws: int = 500) -> float:
    """Half-width of the AUC interval in the most favourable case we can name from public
    parameters: n / 2 records per class and both class curves rising evenly over the
    thresholds (a chance-level score). ``inf`` when a class could be empty."""
    c = np.linspace(0.0, n / 2.0, tree.n_points + 1)[1:]
    lo_q, hi_q = roc_intervals(c, c, law, law, tree, confidence, draws)["auc_error_quantiles"]
    return float(hi_q - lo_q) / 2.0


def band_arrays(fpr: np.ndarray, tpr: np.ndarray, iv: dict) -> dict:
    """The band's corners at every point of a released curve (clipped to [0, 1])."""
    m = min(len(fpr), len(iv["tpr_sd"]))
    t = iv["band_t"]
    pad = np.zeros(len(fpr) - m)

    def clip(v):
        return np.clip(v, 0.0, 1.0)

    st, sf = np.concatenate([iv["tpr_sd"][:m], pad]), np.concatenate([iv["fpr_sd"][:m], pad])
    return {"tpr_lo": clip(tpr - t * st), "tpr_hi": clip(tpr + t * st),
            "fpr_lo": clip(fpr - t * sf), "fpr_hi": clip(fpr + t * sf)}


def _refuse_if_noise_dominates(spec: ROCSpec, n: int, n_points: int, branching: int) -> None:
    """ValueError when :func:`best_case_auc_halfwidth` exceeds ``spec.max_auc_halfwidth``
    (public parameters: n, the grid, epsilon, the tree and the noise mode)."""
    pr, ex = spec.privacy, spec.execution
    limit, eps = spec.max_auc_halfwidth, pr.epsilon
    if math.isinf(eps) or math.isinf(limit):
        return
    half_eps, confidence = eps / 2.0, spec.confidence
    tree = Tree(n_points, branching)
    mode = "central" if ex.backend == "central" else pr.noise_mode or "each"
    law = planned_law(tree, half_eps, mode=mode, servers=ex.servers, rule=pr.sensitivity)
    hw = best_case_auc_halfwidth(n, law, tree, confidence)
    if hw > limit:
        shown = "the whole [0, 1]" if not math.isfinite(hw) else f"+-{hw:.2f}"
        raise ValueError(
            f"roc: the DP noise dominates at epsilon {2 * half_eps:g} with n = {n} and "
            f"{n_points} thresholds: even with balanced classes the AUC's "
            f"{100 * confidence:g}% interval would be {shown} (a class curve point is known "
            f"to +-{law.std(tree.levels + 1):.3g} records); refusing rather than release a "
            "curve the noise hides. Use a larger epsilon, more records or fewer thresholds "
            "(--thresholds)")


def _labels(labels, n: int) -> np.ndarray:
    y = np.asarray(labels)
    if y.shape != (n,):
        raise ValueError(f"labels: need {n} labels (one per score), got shape {y.shape}")
    if y.dtype.kind not in "biu" or (y.size and (y.min() < 0 or y.max() > 1)):
        raise ValueError("labels must be 0/1 or booleans (1 = positive); map other labels first")
    # Whether both classes occur is not checked here: that is a fact about the data
    # set, not about one record, and is only learnt from the DP class counts below.
    return y.astype(np.int64)


def _grid(spec: ROCSpec, x: np.ndarray) -> tuple[np.ndarray, int]:
    """The thresholds with the upper bound last (appended if missing; without bounds the
    largest score) and the tree's branching (``auto``: chosen for the grid as given)."""
    bounds = spec.precision.bounds
    tau = grid(spec.design.thresholds, spec.design.grid, bounds)
    branching = branching_for(spec.design, tau.size, spec.privacy.epsilon)
    hi = float(bounds[1]) if bounds is not None else float(x.max())
    if tau[-1] < hi:
        tau = np.append(tau, hi)
    if tau[-1] < x.max():
        raise ValueError("thresholds: the last threshold must be >= every score (give bounds)")
    if tau.size < 2:
        raise ValueError(f"thresholds: a ROC curve needs at least 2 thresholds (the upper "
                         f"bound {tau[-1]:g} and one below it): with only the upper bound the "
                         f"curve is (1, 1) -> (0, 0) and the AUC 0.5 whatever the data")
    return tau, branching


def private_roc(scores: ArrayLike, labels: ArrayLike, spec: ROCSpec,
                executor: Executor | None = None, *, evaluate: bool = False,
                session: Session | None = None, record_views: bool = False) -> ROCRelease:
    """The ROC curve of ``scores`` for 0/1 ``labels`` from two private class ECDFs.

    ``spec``: a :class:`~ustat.specs.ROCSpec`: the grid (inside the bounds; the upper
    bound is appended if missing), epsilon (each class ECDF spends epsilon / 2: tree noise,
    :func:`ustat.ecdf.release.deploy`), the backend and noise, ``smooth`` (None,
    "isotonic", "l1", "l2"), ``confidence`` (of the AUC CI and the ROC band,
    :func:`roc_intervals`) and ``max_auc_halfwidth`` (refuse, ValueError before anything is
    computed, when even balanced classes would leave the AUC interval wider than +- this:
    :func:`best_case_auc_halfwidth`, public parameters only; inf: never refuse).
    ``executor``: where it runs (as :func:`ustat.ecdf.release.release`; across processes
    the spec needs public bounds: the last threshold must not come from the data); only the
    analyst's process computes the curve. ``evaluate``: also the exact curve (in the
    clear, this process only). ``session``: the servers' session to use (as
    :func:`~ustat.ecdf.release.deploy`'s). ``record_views``: as there.
    """
    program = roc_program(scores, labels, spec, evaluate=evaluate, session=session,
                          record_views=record_views)
    return (Simulator() if executor is None else executor).run(program)


def roc_program(scores: ArrayLike, labels: ArrayLike, spec: ROCSpec, *, evaluate: bool = False,
                session: Session | None = None, record_views: bool = False) -> Program:
    """:func:`private_roc` as one SPMD program (:class:`ustat.executors.Program`): the
    scores and labels are the parties' private rows. The refusal runs here, before any
    process starts."""
    if not isinstance(spec, ROCSpec):
        raise TypeError(f"spec must be a ustat.specs.ROCSpec, got {type(spec).__name__} (e.g. "
                        "ROCSpec.of(thresholds=64, bounds=(0, 1), epsilon=1.0))")
    prec = spec.precision
    x = check_values(scores, prec.bounds, prec.clip, name="scores")
    _labels(labels, x.size)
    tau, branching = _grid(spec, x)
    _refuse_if_noise_dominates(spec, x.size, tau.size, branching)
    local_only = _local_only(spec, session, evaluate)
    if local_only is None and prec.bounds is None:
        local_only = ("a ROC curve across processes needs public bounds (the last threshold "
                      "would otherwise be the largest score, which no process knows)")
    options = {"evaluate": evaluate, "session": session, "record_views": record_views}
    rows = {"scores": (scores, _filler(spec)), "labels": (labels, 0)}
    return family_program("ROC", _roc_main, spec, options, x.size, rows, local_only)


def _class_spec(spec: ROCSpec, tau: np.ndarray, branching: int, epsilon: float,
                seed) -> ECDFSpec:
    """The spec of one class ECDF: the ROC's grid (upper bound included), epsilon / 2."""
    pr, prec, ex = spec.privacy, spec.precision, spec.execution
    return ECDFSpec(ECDFPrivacy(epsilon, pr.noise_mode, pr.sensitivity),
                    ECDFPrecision(prec.bits, prec.bounds, prec.clip),
                    ECDFDesign(tuple(tau.tolist()), branching=branching),
                    ECDFExecution(ex.backend, ex.servers, seed, ex.verify_keys))


def _same_parties(deps: list) -> None:
    """A deployed run that may lose party hosts (:mod:`ustat.ecdf.dropouts`): a host lost
    between the two class uploads is left out of the first class too, so both curves count
    the same parties (the second upload's kept set is a subset of the first's)."""
    first, second = (d.answerer for d in deps)
    lost = [(getattr(a, "lost", None) or {}).get("parties_lost", 0) for a in (first, second)]
    if lost[1] > lost[0]:
        first.keep_only(second)
        deps[0].n = first.counted


def _roc_main(place: Place, spec: ROCSpec, options: dict, scores, labels) -> ROCRelease:
    """The ROC release in one process (:func:`private_roc`)."""
    prec, ex = spec.precision, spec.execution
    evaluate, smooth, seed = options["evaluate"], spec.smooth, ex.seed
    x = check_values(scores, prec.bounds, prec.clip, name="scores")
    y = _labels(labels, x.size)
    tau, branching = _grid(spec, x)
    eps = spec.privacy.epsilon
    half = eps / 2.0 if not math.isinf(eps) else eps
    session = session_for(place, spec, options, x.size)
    seeds = [seed, seed]
    if ex.backend == "central" and seed is not None:    # not the same noise twice
        seeds[1] = f"{seed!r}/negative class"
    deps = [deploy(x, _class_spec(spec, tau, branching, half, sd), weights=w, session=session)
            for w, sd in ((y, seeds[0]), (1 - y, seeds[1]))]
    _same_parties(deps)
    N = tau.size
    c_pos, c_neg = (d.query(np.arange(N)) for d in deps)
    if ex.backend == "pointwise" and deps[0].n != deps[1].n:   # lost at the 2nd class's answers
        raise LateDropoutError(f"{deps[0].n - deps[1].n} parties lost after the positive "
                               "class's answers were opened (pointwise backend): no release")
    if not deps[0].released:        # the analyst runs in another process: nothing to release
        none = np.empty(0)                  # the curve's length depends on the noisy counts
        assert session is not None          # unreleased only in a run (which has a session)
        return ROCRelease(tau, none, none, math.nan, math.nan, math.nan, deps[0].account(),
                          smooth, session.net.report(), released=False,
                          processes=deps[0].processes, costs=session.costs(),
                          spec=spec.to_dict())
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
    if "keys_dropped" in acc:                   # each class's keys are checked apart
        per_class = [d.key_check()["keys_dropped"] for d in deps]
        acc.update(keys_dropped=sum(per_class), keys_dropped_per_class=per_class)
    exact = None
    if evaluate:
        r = grid_rank(x, tau)
        ep, en = exact_counts(r, N, y), exact_counts(r, N, 1 - y)
        f, t = roc_points(ep, en, float(y.sum()), float((1 - y).sum()))
        exact = {"fpr": f, "tpr": t, "auc": auc(f, t), "n_pos": int(y.sum()),
                 "n_neg": int((1 - y).sum())}
    comm = session.net.report() if session is not None else None
    iv = roc_intervals(c_pos, c_neg, deps[0].noise.law, deps[1].noise.law, deps[0].tree,
                       spec.confidence)
    iv.update(band_arrays(*roc_points(c_pos, c_neg, n_pos, n_neg), iv))
    acc["node_noise"] = {"positives": deps[0].noise.law.to_dict(),
                         "negatives": deps[1].noise.law.to_dict()}
    area = min(max(auc(fpr, tpr), 0.0), 1.0)
    return ROCRelease(tau, fpr, tpr, area, n_pos, n_neg, acc, smooth, comm, exact, iv,
                      processes=deps[0].processes,
                      costs=None if session is None else session.costs(), spec=spec.to_dict())
