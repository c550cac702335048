"""Inverse ECDF, quantiles and histograms from one private ECDF, at no extra epsilon.

Barczewski, Mawass, Ramon, Section 4.3, Algorithm 1 (binary search on the
noisy or smoothed ECDF), run on the public grid: for a level p, the smallest
threshold index i with F(tau_i) >= p (tau_{N-1} if none). On an exact ECDF
whose grid holds every data value this is the inverse of the empirical CDF,
``numpy.quantile(x, p, method="inverted_cdf")``. On a noisy, non-monotone
F^ it returns some crossing of level p, as Algorithm 1 does.

Sources: a released curve (counts or smoothed values) is searched locally;
a live :class:`~ustat.ecdf.release.Deployment` is searched by queries to the
servers, one batch per step for all levels at once: ceil(log2 N) adaptive
steps, len(p) queries per step, and no extra epsilon (the node noise is
reused). Every step asks for every level, also those already settled (their
answer changes nothing): the number of steps and of queries is public, so
the servers (and every process of a run across processes) know what each
step brings before the analyst's answers exist. :func:`private_quantiles`
deploys, searches and queries the whole curve (for the intervals), on any
executor (:func:`quantile_program`); with ``spec.smooth`` it releases the
whole curve, smooths it and searches the smoothed curve. Histograms are
differences of the cumulative curve (post-processing; the paper's Section 7
remark: tree noise is logarithmic in the number of bins).
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from ..executors import Executor, Place, Program, Simulator
from ..specs.ecdf import QuantileSpec, check_levels
from .intervals import quantile_noise_check
from .release import (
    Deployment,
    ECDFRelease,
    _curve,
    branching_for,
    check_values,
    column_program,
    deploy,
    exact_counts,
    session_for,
)
from .thresholds import grid_rank
from .tree import Tree, planned_law

if TYPE_CHECKING:
    from collections.abc import Callable

    from numpy.typing import ArrayLike

    from mpc.session import Session

__all__ = [
    "QuantileRelease",
    "check_levels",
    "check_quantile_noise",
    "histogram",
    "interpolated_quantiles",
    "live_search",
    "private_quantiles",
    "quantile_program",
    "quantiles",
    "search",
]


def search(evaluate: Callable[[np.ndarray], ArrayLike], n_points: int, targets: ArrayLike, *,
           every_step: bool = False) -> np.ndarray:
    """Algorithm 1 on the grid: smallest index i with evaluate(i) >= target, per target.

    ``evaluate(idx) -> values`` is called once per step with one index per
    unsettled target (at most ceil(log2 N) calls), or, with ``every_step``,
    exactly ceil(log2 N) times with one index per target (a settled target
    asks for its answer again, which changes nothing): a public number of
    calls of a public size, as queries to live servers need. A float64 ``targets``
    array is used in place (not copied), read after each call of ``evaluate``
    (:func:`live_search` updates it). Returns int64 indices in 0..N-1.
    """
    t = np.asarray(targets, dtype=np.float64).reshape(-1)
    lo = np.zeros(t.size, dtype=np.int64)
    hi = np.full(t.size, int(n_points) - 1, dtype=np.int64)
    for _ in range((int(n_points) - 1).bit_length()):     # one step per tree level
        active = lo < hi
        if not (every_step or active.any()):
            break
        mid = (lo + hi) // 2
        below = np.zeros(t.size, dtype=bool)
        if every_step:
            below = np.asarray(evaluate(mid), dtype=np.float64) < t
        else:
            below[active] = np.asarray(evaluate(mid[active]), dtype=np.float64) < t[active]
        lo = np.where(active & below, mid + 1, lo)
        hi = np.where(active & ~below, mid, hi)
    return lo


def live_search(deployment: Deployment, q: ArrayLike) -> np.ndarray:
    """The grid indices of the q-quantiles by queries to a live deployment (analyst side):
    ceil(log2 N) batches of len(q) queries, no extra epsilon. The targets n q follow the
    deployment's n, which the first answer may lower (the pointwise backend leaves out the
    parties lost at it: :mod:`ustat.ecdf.pointwise`)."""
    levels = check_levels(q)
    targets = deployment.n * levels

    def ask(idx: np.ndarray) -> np.ndarray:
        out = deployment.query(idx)
        targets[:] = deployment.n * levels      # read by search after this call (no copy)
        return out

    return search(ask, deployment.tree.n_points, targets, every_step=True)


def quantiles(source: ECDFRelease | Deployment | ArrayLike, q: ArrayLike, *,
              thresholds: ArrayLike | None = None,
              values: ArrayLike | None = None) -> np.ndarray:
    """The p-quantiles (thresholds) of a private ECDF for every level in ``q``.

    ``source``: an :class:`~ustat.ecdf.release.ECDFRelease` (searched on its
    noisy counts against n p, the comparison numpy uses), a
    :class:`~ustat.ecdf.release.Deployment` (live queries to the servers), or
    an array of ECDF values in [0, 1] (e.g. smoothed) with ``thresholds``.
    ``values``: optional ECDF values overriding a release's counts (smoothed).
    """
    p = check_levels(q)
    if isinstance(source, Deployment):
        return source.thresholds[live_search(source, p)]
    if isinstance(source, ECDFRelease):
        tau = source.thresholds
        if values is None:
            counts = source.counts
            idx = search(lambda i: counts[i], tau.size, source.n * p)
            return tau[idx]
        F = np.asarray(values, dtype=np.float64)
    else:
        if thresholds is None:
            raise TypeError("quantiles of an array of ECDF values need thresholds=")
        tau = np.asarray(thresholds, dtype=np.float64)
        F = np.asarray(source, dtype=np.float64)
    if F.shape != tau.shape:
        raise ValueError(f"values: {F.size} ECDF values for {tau.size} thresholds")
    idx = search(lambda i: F[i], tau.size, p)
    return tau[idx]


def interpolated_quantiles(values: ArrayLike, q: ArrayLike, thresholds: ArrayLike) -> np.ndarray:
    """Quantiles of the grid-interpolated ECDF: the classical grouped-data quantile.

    F_int joins the points (tau_i, F(tau_i)) by straight lines (the ECDF as if
    the values of each bin (tau_{i-1}, tau_i] were spread evenly over it);
    Q_int(p) is the smallest x >= tau_0 with F_int(x) >= p: tau_0 if
    F(tau_0) >= p, else tau_{i-1} + (p - F_{i-1}) / (F_i - F_{i-1}) (tau_i - tau_{i-1})
    for the first i with F_i >= p (tau_{N-1} if none). The grid quantile of
    :func:`quantiles` is the smallest threshold >= Q_int(p). ``values``: ECDF
    values in [0, 1] at the thresholds (exact, smoothed, or noisy: the first
    crossing is used). When the thresholds are the distinct data values and
    no value repeats, Q_int(p) is ``numpy.quantile(x, p,
    method="interpolated_inverted_cdf")`` for p >= 1/n (Hyndman and Fan's type 4).
    """
    p = check_levels(q)
    F = np.asarray(values, dtype=np.float64).reshape(-1)
    tau = np.asarray(thresholds, dtype=np.float64).reshape(-1)
    if F.shape != tau.shape:
        raise ValueError(f"values: {F.size} ECDF values for {tau.size} thresholds")
    ok = F[None, :] >= p[:, None]
    i = np.where(ok.any(axis=1), ok.argmax(axis=1), tau.size - 1)
    prev = np.where(i > 0, F[np.maximum(i - 1, 0)], -np.inf)
    rise = F[i] - prev
    with np.errstate(divide="ignore", invalid="ignore"):
        w = np.where((i > 0) & (rise > 0), np.clip((p - prev) / rise, 0.0, 1.0), 1.0)
    left = tau[np.maximum(i - 1, 0)]
    return np.where(i == 0, tau[0], left + w * (tau[i] - left))


def histogram(counts: ArrayLike, thresholds: ArrayLike,
              bins: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """DP histogram from the cumulative (noisy or smoothed) counts at the thresholds.

    Bin k is (edge_{k-1}, edge_k] with edge_{-1} = -inf; the edges are every
    ``N / bins``-th threshold (``bins`` must divide into N evenly enough:
    edges at ceil((k+1) N / bins) - 1), or every threshold (``bins=None``).
    Returns (edges, bin_counts) as float64.
    """
    c = np.asarray(counts, dtype=np.float64).reshape(-1)
    tau = np.asarray(thresholds, dtype=np.float64).reshape(-1)
    if c.shape != tau.shape:
        raise ValueError(f"counts: {c.size} values for {tau.size} thresholds")
    N = tau.size
    if bins is None:
        at = np.arange(N)
    else:
        if isinstance(bins, (bool, np.bool_)) or not isinstance(bins, numbers.Integral):
            raise TypeError(f"bins must be an integer, got {bins!r}")
        bins = int(bins)
        if not 1 <= bins <= N:
            raise ValueError(f"bins must be in 1..{N} (the number of thresholds), got {bins}")
        at = -(-(np.arange(1, bins + 1) * N) // bins) - 1
    cum = c[at]
    return tau[at], np.diff(np.concatenate([[0.0], cum]))


@dataclass
class QuantileRelease:
    """Quantiles found by live queries (Algorithm 1) and the noisy ECDF of the same deployment.

    ``ecdf`` holds the noisy counts at every threshold (the same node noise:
    no extra epsilon), from which :meth:`intervals` are computed; with ``spec.smooth`` the
    quantiles are those of the smoothed curve (``smoothed``, also ``ecdf.smoothed``).
    ``exact`` (with ``evaluate``): the data's grid quantiles (``quantiles``, numpy's
    ``inverted_cdf``) and interpolated ones (``quantiles_interpolated``), read in the clear.
    """

    q: np.ndarray
    quantiles: np.ndarray           # the thresholds found (NaN where the analyst does not run)
    indices: np.ndarray             # their grid indices
    ecdf: ECDFRelease
    released: bool = True
    processes: int = 1
    process_costs: list | None = None
    spec: dict = field(default_factory=dict)    # the QuantileSpec it ran (from_dict)
    exact: dict | None = field(default=None, repr=False)

    @property
    def smoothed(self) -> np.ndarray | None:
        """The smoothed ECDF the quantiles were searched on (None without smoothing)."""
        return self.ecdf.smoothed

    @property
    def communication(self) -> dict | None:
        return self.ecdf.communication

    def intervals(self, confidence: float | None = None) -> dict:
        """CIs for the data's grid quantiles (:meth:`ECDFRelease.quantile_intervals`; the
        spec's level by default)."""
        level = self.spec.get("confidence", 0.95) if confidence is None else confidence
        return self.ecdf.quantile_intervals(self.q, level)


def check_quantile_noise(spec: QuantileSpec, n: int) -> None:
    """ValueError when the noise hides every quantile: a point of the ECDF is known only to
    +- more than ``spec.max_halfwidth`` (:func:`ustat.ecdf.intervals.quantile_noise_check`;
    public parameters only: n, the grid, epsilon, the tree and the noise mode)."""
    if math.isinf(spec.max_halfwidth):
        return
    pr, ex = spec.privacy, spec.execution
    N = spec.design.n_points
    tree = Tree(N, branching_for(spec.design, N, pr.epsilon))
    mode = "central" if ex.backend == "central" else pr.noise_mode or "each"
    law = planned_law(tree, pr.epsilon, mode=mode, servers=ex.servers, rule=pr.sensitivity)
    quantile_noise_check(n, law, tree, spec.confidence, N, limit=spec.max_halfwidth)


def private_quantiles(values: ArrayLike, spec: QuantileSpec, executor: Executor | None = None, *,
                      weights: ArrayLike | None = None, evaluate: bool = False,
                      session: Session | None = None,
                      record_views: bool = False) -> QuantileRelease:
    """The ``spec.q``-quantiles of ``values`` on the spec's grid by live queries to the servers.

    :func:`ustat.ecdf.release.deploy`, then :func:`live_search` (ceil(log2 N) batches of
    len(q) queries), then all N points (for the intervals); one epsilon in all. With
    ``spec.smooth``: the whole curve, smoothed, searched locally. Refused before anything
    is computed when the noise hides every quantile (:func:`check_quantile_noise`).
    ``executor``, ``weights``, ``evaluate``, ``session``, ``record_views``: as
    :func:`ustat.ecdf.release.release`.
    """
    program = quantile_program(values, spec, weights=weights, evaluate=evaluate,
                               session=session, record_views=record_views)
    return (Simulator() if executor is None else executor).run(program)


def quantile_program(values: ArrayLike, spec: QuantileSpec, *, weights: ArrayLike | None = None,
                     evaluate: bool = False, session: Session | None = None,
                     record_views: bool = False) -> Program:
    """:func:`private_quantiles` as one SPMD program (:class:`ustat.executors.Program`)."""
    if not isinstance(spec, QuantileSpec):
        raise TypeError(f"spec must be a ustat.specs.QuantileSpec, got {type(spec).__name__} "
                        "(e.g. QuantileSpec.of([0.5], thresholds=tau, epsilon=1.0))")
    options = {"evaluate": evaluate, "session": session, "record_views": record_views}
    program = column_program("quantiles", _quantile_main, spec, values, weights, options)
    check_quantile_noise(spec, program.n)
    return program


def _quantile_main(place: Place, spec: QuantileSpec, options: dict, values, weights=None):
    """The quantiles in one process (:func:`private_quantiles`)."""
    levels = np.asarray(spec.q, dtype=np.float64)
    evaluate = options["evaluate"]
    session = session_for(place, spec, options, np.asarray(values).reshape(-1).size)
    dep = deploy(values, spec, weights=weights, session=session)
    N = dep.tree.n_points
    if spec.smooth is None:
        idx = live_search(dep, levels)
        counts = dep.query(np.arange(N))                # node noise reused: no extra epsilon
        curve = _curve(dep, spec, counts, values, weights, evaluate)
    else:                                               # the whole curve, smoothed, searched
        curve = _curve(dep, spec, dep.query(np.arange(N)), values, weights, evaluate)
        F = curve.smoothed
        idx = search(lambda i: F[i], N, levels) if F is not None else np.zeros(levels.size,
                                                                             np.int64)
    ok = dep.released
    found = dep.thresholds[idx] if ok else np.full(levels.size, np.nan)
    exact = None
    if evaluate:
        x = check_values(values, spec.precision.bounds, spec.precision.clip)
        tau = dep.thresholds
        F_exact = exact_counts(grid_rank(x, tau), N) / x.size
        exact = {"quantiles": np.quantile(x, levels, method="inverted_cdf"),
                 "quantiles_interpolated": interpolated_quantiles(F_exact, levels, tau)}
    return QuantileRelease(levels, found, idx, curve, ok, dep.processes, spec=spec.to_dict(),
                           exact=exact)
