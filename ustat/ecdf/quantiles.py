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
deploys, searches and queries the whole curve (for the intervals), in one
process or several. Histograms are differences of the cumulative curve
(post-processing; the paper's Section 7 remark: tree noise is logarithmic
in the number of bins).
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass

import numpy as np

__all__ = ["search", "live_search", "quantiles", "interpolated_quantiles", "histogram",
           "check_levels", "private_quantiles", "QuantileRelease"]


def check_levels(q) -> np.ndarray:
    """Quantile levels as float64 (k,), each finite in [0, 1]."""
    if isinstance(q, (bool, np.bool_)):
        raise TypeError("q must be numbers in [0, 1], got bool")
    try:
        p = np.array(q, dtype=np.float64).reshape(-1)
    except (TypeError, ValueError):
        raise TypeError(f"q must be numbers in [0, 1], got {q!r}") from None
    if p.size == 0:
        raise ValueError("q: give at least one quantile level")
    bad = np.flatnonzero(~(np.isfinite(p) & (p >= 0) & (p <= 1)))
    if bad.size:
        raise ValueError(f"q: level {p[bad[0]]!r} is not in [0, 1]")
    return p


def search(evaluate, n_points: int, targets, *, every_step: bool = False) -> np.ndarray:
    """Algorithm 1 on the grid: smallest index i with evaluate(i) >= target, per target.

    ``evaluate(idx) -> values`` is called once per step with one index per
    unsettled target (at most ceil(log2 N) calls), or, with ``every_step``,
    exactly ceil(log2 N) times with one index per target (a settled target
    asks for its answer again, which changes nothing): a public number of
    calls of a public size, as queries to live servers need. Returns int64
    indices in 0..N-1.
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


def live_search(deployment, q) -> np.ndarray:
    """The grid indices of the q-quantiles by queries to a live deployment (analyst side):
    ceil(log2 N) batches of len(q) queries, no extra epsilon."""
    return search(deployment.query, deployment.tree.n_points, deployment.n * check_levels(q),
                  every_step=True)


def quantiles(source, q, *, thresholds=None, n=None, values=None) -> np.ndarray:
    """The p-quantiles (thresholds) of a private ECDF for every level in ``q``.

    ``source``: an :class:`~ustat.ecdf.release.ECDFRelease` (searched on its
    noisy counts against n p, the comparison numpy uses), a
    :class:`~ustat.ecdf.release.Deployment` (live queries to the servers), or
    an array of ECDF values in [0, 1] (e.g. smoothed) with ``thresholds``.
    ``values``: optional ECDF values overriding a release's counts (smoothed).
    """
    from .release import Deployment, ECDFRelease

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


def interpolated_quantiles(values, q, thresholds) -> np.ndarray:
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


def histogram(counts, thresholds, bins=None):
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
        if not 1 <= bins <= N:
            raise ValueError(f"bins must be in 1..{N} (the number of thresholds), got {bins}")
        at = -(-(np.arange(1, bins + 1) * N) // bins) - 1
    cum = c[at]
    return tau[at], np.diff(np.concatenate([[0.0], cum]))


@dataclass
class QuantileRelease:
    """Quantiles found by live queries (Algorithm 1) and the noisy ECDF of the same deployment.

    ``ecdf`` holds the noisy counts at every threshold (the same node noise:
    no extra epsilon), from which :meth:`intervals` are computed.
    """

    q: np.ndarray
    quantiles: np.ndarray           # the thresholds found (NaN where the analyst does not run)
    indices: np.ndarray             # their grid indices
    ecdf: object                    # ustat.ecdf.release.ECDFRelease
    released: bool = True
    processes: int = 1
    process_costs: list | None = None

    def intervals(self, confidence: float = 0.95) -> dict:
        """CIs for the data's grid quantiles (:meth:`ECDFRelease.quantile_intervals`)."""
        return self.ecdf.quantile_intervals(self.q, confidence)


def private_quantiles(values, thresholds, q, epsilon, *, processes=None, runtime=None,
                      timeout=None, **kwargs) -> QuantileRelease:
    """The q-quantiles of ``values`` on the grid ``thresholds`` by live queries to the servers.

    :func:`ustat.ecdf.release.deploy` (``kwargs`` go there), then
    :func:`live_search` (ceil(log2 N) batches of len(q) queries), then all N
    points (for the intervals); one epsilon in all. ``processes`` /
    ``runtime`` / ``timeout``: as :func:`ustat.ecdf.release.release`.
    """
    from .release import ECDFRelease, deploy

    levels = check_levels(q)
    if processes is not None and runtime is None:
        from .processes import across
        return across("private_quantiles",
                      {"values": values, "weights": kwargs.pop("weights", None)},
                      dict(thresholds=thresholds, q=levels, epsilon=epsilon, **kwargs),
                      processes=processes, timeout=timeout)
    dep = deploy(values, thresholds, epsilon, runtime=runtime, **kwargs)
    idx = live_search(dep, levels)
    counts = dep.query(np.arange(dep.tree.n_points))      # node noise reused: no extra epsilon
    ok = dep.released
    insecure = bool(dep.session.insecure) if dep.session is not None else \
        kwargs.get("seed") is not None
    curve = ECDFRelease(dep.thresholds, counts if ok else np.full(counts.size, np.nan), dep.n,
                        dep.backend, dep.account(), dep.communication(), insecure, None, ok,
                        dep.processes, costs=dep.costs())
    found = dep.thresholds[idx] if ok else np.full(levels.size, np.nan)
    return QuantileRelease(levels, found, idx, curve, ok, dep.processes)
