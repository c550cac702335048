"""Uncertainty of a private ECDF release: pointwise intervals, a simultaneous band, quantile CIs.

All of it is post-processing of the released noisy counts c^_i = c_i + Z_i
and public parameters (the tree and the node-noise law of
:mod:`ustat.ecdf.noise_law`): no privacy cost. Z_i is the sum of the L + 1
node noises on leaf i's path, so every Z_i has the same law (exact pmf by
convolution) and neighbouring Z_i share most of their nodes.

What the intervals cover (the target is the data, not a population):

* **pointwise** -- for each threshold tau_i, the data's ECDF
  F(tau_i) = c_i / n lies in [(c^_i - q)/n, (c^_i + q)/n] (clipped to [0, 1])
  with probability >= the level, q the two-sided quantile of Z_i's exact law;
* **band** -- all N values at once: q_band from the law of max_i |Z_i|,
  calibrated by Monte Carlo over the tree (``BAND_DRAWS`` draws of every node,
  fixed seed; above ``BAND_WORK`` node-leaf operations, the Bonferroni
  bound q(alpha / N) of the exact law instead: valid, wider). The noise is
  integer, so one whole count more or less moves the coverage by a step
  (0.988 -> 0.993 at N = 16, epsilon 3): the band narrows to q_band - 1 at
  the first j thresholds of a spread-out order (bit-reversed leaf index),
  j the largest with P(|Z_i| <= q_i for all i) >= the level on the same draws
  (:func:`band_widths`), so it covers at the level up to the Monte Carlo
  error (sd 0.0016 at 0.99), not a step above it;
* **quantiles** -- for a level p the target is the data's *interpolated*
  (grouped-data) quantile Q_int(p): the smallest x >= tau_0 where the ECDF,
  joined linearly between thresholds, reaches p
  (:func:`ustat.ecdf.quantiles.interpolated_quantiles`). By test inversion,
  the interval is the hull of the x where the interpolated noisy counts are
  less than q + 1 from p n, q the two-sided pointwise quantile of the
  (integer) path noise (at tau_0, where F may jump, the one-sided
  c^_0 >= p n - q). At x = Q_int(p) the interpolated noise
  (1 - w) Z_{i-1} + w Z_i is at least as concentrated as one Z_i: Proschan's
  peakedness theorem for symmetric log-concave laws, in the continuous limit;
  for the lattice laws, P(|(1 - w) Z_{i-1} + w Z_i| >= q + 1) <= alpha was
  checked exactly (node scales 0.3-6, 2-12 path terms, any split of shared
  nodes, w in 0.05..0.95, alpha 0.01-0.1: at most 0.94 alpha), where q alone
  fails by up to 15% at scales below 1. So the interval covers with
  probability >= the level. Rounded up to the
  thresholds it covers the grid quantile Q(p) = the smallest tau_i with
  F(tau_i) >= p (``numpy.quantile(x, p, method="inverted_cdf")`` when the
  grid holds every value), which is the smallest threshold >= Q_int(p). On
  coarse data that one is nearly always exact: no interval of grid points
  can be calibrated there. :func:`quantile_noise_check` refuses (public
  parameters) when q / n > ``MAX_QUANTILE_HALFWIDTH``.

Smoothing, isotonic or not, is not what these intervals are about: they are
computed from the raw noisy counts, which is what they cover the truth with.
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING

import numpy as np

from ..specs.ecdf import MAX_QUANTILE_HALFWIDTH
from .noise_law import SIM_SEED, NodeNoiseLaw
from .tree import Tree

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

__all__ = [
    "BAND_DRAWS",
    "BAND_WORK",
    "MAX_QUANTILE_HALFWIDTH",
    "band_widths",
    "check_confidence",
    "ecdf_intervals",
    "path_extremes",
    "quantile_intervals",
    "quantile_noise_check",
    "simulate_path_noise",
]

BAND_DRAWS = 4000
#: Largest draws x N x (L + 1) for the Monte Carlo band; beyond it, Bonferroni.
BAND_WORK = 4e8


def check_confidence(confidence: float) -> float:
    if isinstance(confidence, bool) or not isinstance(confidence, (int, float)) \
            or not 0 < confidence < 1:
        raise ValueError(f"confidence must be a level in (0, 1), e.g. 0.95, got {confidence!r}")
    return float(confidence)


def simulate_path_noise(law: NodeNoiseLaw, tree: Tree, draws: int,
                        gen: np.random.Generator) -> np.ndarray:
    """(draws, N) int64: the path noise Z_i of every leaf, for ``draws`` independent trees."""
    b, N = tree.branching, tree.n_points
    leaves = np.arange(N)
    Z = np.zeros((draws, N), dtype=np.int64)
    for lev, size in enumerate(tree.level_sizes):      # one gather per level
        eta = law.sample((draws, int(size)), gen)
        Z += eta[:, leaves // b ** lev]
    return Z


def spread_order(n_points: int) -> np.ndarray:
    """Rank of each leaf in the bit-reversed order (any prefix of it is spread over the grid)."""
    bits = max(1, (n_points - 1).bit_length())
    i = np.arange(n_points)
    rev = np.zeros(n_points, dtype=np.int64)
    for b in range(bits):                               # loop over bits, not leaves
        rev |= ((i >> b) & 1) << (bits - 1 - b)
    rank = np.empty(n_points, dtype=np.int64)
    rank[np.argsort(rev, kind="stable")] = np.arange(n_points)
    return rank


@functools.lru_cache(maxsize=32)
def _draws(law: NodeNoiseLaw, n_points: int, branching: int, draws: int):
    """Per draw: max_i Z_i, M = max_i |Z_i| and the smallest spread rank of a leaf with
    |Z_i| = M (unsorted, draw order)."""
    tree = Tree(n_points, branching)
    gen = np.random.default_rng(SIM_SEED)
    rank = spread_order(n_points)
    chunk = max(1, int(2 ** 23 // n_points))
    hi, ab, first = [], [], []
    for start in range(0, draws, chunk):               # memory: chunk x N int64
        Z = simulate_path_noise(law, tree, min(chunk, draws - start), gen)
        A = np.abs(Z)
        M = A.max(axis=1)
        hi.append(Z.max(axis=1))
        ab.append(M)
        first.append(np.where(M[:, None] == A, rank[None, :], n_points).min(axis=1))
    return np.concatenate(hi), np.concatenate(ab), np.concatenate(first)


def _extremes(law: NodeNoiseLaw, n_points: int, branching: int, draws: int):
    hi, ab, _ = _draws(law, n_points, branching, draws)
    return np.sort(hi), np.sort(ab)


def path_extremes(law: NodeNoiseLaw, tree: Tree) -> tuple[np.ndarray, np.ndarray] | None:
    """Sorted Monte Carlo draws of (max_i Z_i, max_i |Z_i|), or None when too costly."""
    if law.noiseless:
        return None
    draws = BAND_DRAWS
    if draws * tree.n_points * (tree.levels + 1) > BAND_WORK:
        return None
    return _extremes(law, tree.n_points, tree.branching, draws)


def _upper(sorted_draws: np.ndarray, alpha: float) -> int:
    """Smallest simulated value v with (fraction of draws > v) <= alpha."""
    k = int(np.ceil((1.0 - alpha) * sorted_draws.size)) - 1
    return int(sorted_draws[min(max(k, 0), sorted_draws.size - 1)])


def band_widths(law: NodeNoiseLaw, tree: Tree, alpha: float) -> tuple[np.ndarray, str]:
    """Per threshold the band's half-width in counts at level 1 - alpha (module docstring):
    q_band, or q_band - 1 at the first j thresholds of :func:`spread_order`, j the largest
    with a simulated coverage >= 1 - alpha; and how it was found."""
    q, how = band_halfwidth(law, tree, alpha)
    widths = np.full(tree.n_points, q, dtype=np.int64)
    if law.noiseless or q <= 0 or path_extremes(law, tree) is None:
        return widths, how
    _, M, first = _draws(law, tree.n_points, tree.branching, BAND_DRAWS)
    # covered with the first j ranks at q - 1: M < q, or M == q with no |Z_i| = q in them
    need = int(np.ceil((1.0 - alpha) * M.size - 1e-9))
    below = int(np.count_nonzero(q > M))
    at = np.sort(first[q == M])[::-1]          # the draws at q, by their first rank, descending
    keep = need - below                         # draws at q that must stay covered
    if keep > at.size:
        return widths, how
    # the largest j with at least ``keep`` draws whose first rank at q is >= j
    j = min(int(at[keep - 1]), tree.n_points) if keep > 0 else tree.n_points
    widths[spread_order(tree.n_points) < j] = q - 1
    if j:
        how += (f"; {q - 1} at {j} of the {tree.n_points} thresholds (spread out, calibrated "
                "on the same draws: the noise is integer)")
    return widths, how


def band_halfwidth(law: NodeNoiseLaw, tree: Tree, alpha: float) -> tuple[int, str]:
    """Half-width in counts of the simultaneous band at level 1 - alpha, and how it was found
    (the widest; :func:`band_widths` narrows it by a count at some thresholds)."""
    if law.noiseless:
        return 0, "no noise"
    ext = path_extremes(law, tree)
    if ext is None:
        return (law.quantile(alpha / tree.n_points, tree.levels + 1),
                "Bonferroni bound over the N points (exact path-noise law at alpha / N)")
    return (_upper(ext[1], alpha),
            f"Monte Carlo law of max_i |Z_i| over the tree ({ext[1].size} draws, fixed seed)")


def ecdf_intervals(counts: ArrayLike, n: int, law: NodeNoiseLaw, tree: Tree,
                   confidence: float) -> dict:
    """Pointwise intervals and the simultaneous band of a released ECDF (module docstring)."""
    confidence = check_confidence(confidence)
    alpha = 1.0 - confidence
    c = np.asarray(counts, dtype=np.float64)
    terms = tree.levels + 1
    q_pt = law.quantile(alpha, terms)
    widths, how = band_widths(law, tree, alpha)
    q_band = int(widths.max()) if widths.size else 0

    def clip(v):
        return np.clip(v / n, 0.0, 1.0)

    return {
        "confidence": confidence,
        "noise_std_counts": law.std(terms), "noise_std": law.std(terms) / n,
        "pointwise_halfwidth_counts": q_pt, "band_halfwidth_counts": q_band,
        "band_halfwidth_counts_min": int(widths.min()) if widths.size else 0,
        "pointwise_lo": clip(c - q_pt), "pointwise_hi": clip(c + q_pt),
        "band_lo": clip(c - widths), "band_hi": clip(c + widths),
        "method": (f"pointwise: exact law of the path noise (sum of {terms} node noises, "
                   f"{_law_text(law)}), "
                   f"two-sided level {confidence:g} at each threshold; band: all thresholds "
                   f"at once at level {confidence:g}, {how}. Cover the ECDF of these n records "
                   "at the thresholds (counts / n)."),
    }


def _law_text(law: NodeNoiseLaw) -> str:
    if law.noiseless or law.scale is None:
        return "no noise"
    return (f"each node the sum of {law.copies} discrete Laplace of scale {float(law.scale):.4g}"
            if law.copies > 1 else f"discrete Laplace of scale {float(law.scale):.4g} per node")


def _accepted_segments(c, target, q, strict):
    """Per level and segment (tau_{i-1}, tau_i], the w in [0, 1] with
    |(1 - w) c_{i-1} + w c_i - target| < q (``strict``: w_lo, w_hi are then the ends of an
    open interval, which give the same hull) or <= q: (w_lo, w_hi, any) arrays of shape
    (levels, N - 1)."""
    a = c[None, :-1] - target[:, None]                 # f(w) = a + w d
    d = np.broadcast_to((c[1:] - c[:-1])[None, :], a.shape)
    flat = d == 0
    with np.errstate(divide="ignore", invalid="ignore"):
        e1, e2 = (-q - a) / d, (q - a) / d
    w_lo = np.where(flat, 0.0, np.maximum(np.minimum(e1, e2), 0.0))
    w_hi = np.where(flat, 1.0, np.minimum(np.maximum(e1, e2), 1.0))
    if strict:
        ok = np.where(flat, np.abs(a) < q, w_lo < w_hi)
    else:
        ok = np.where(flat, np.abs(a) <= q, w_lo <= w_hi)
    return w_lo, w_hi, ok


def quantile_noise_check(n: int, law: NodeNoiseLaw, tree: Tree, confidence: float,
                         n_thresholds: int | None = None,
                         limit: float = MAX_QUANTILE_HALFWIDTH) -> None:
    """ValueError when a point of the ECDF is known only to +- ``limit``
    (``MAX_QUANTILE_HALFWIDTH``) or worse (the pointwise half-width over n: public
    parameters only). Quantiles are then not locatable, and the intervals, valid but about
    the whole range, cover far more often than their level."""
    h = law.quantile(1.0 - check_confidence(confidence), tree.levels + 1) / n
    if h > limit:
        raise ValueError(
            f"quantile: the DP noise dominates with n = {n} and "
            f"{n_thresholds or tree.n_points} thresholds: each point of the ECDF is known only "
            f"to +-{h:.2f} ({100 * confidence:g}%), more than {limit:g}, so no "
            "quantile can be located; refusing. Use a larger epsilon, more records or fewer "
            "thresholds (--thresholds)")


def quantile_intervals(counts: ArrayLike, thresholds: ArrayLike, n: int, law: NodeNoiseLaw,
                       tree: Tree, levels: ArrayLike, confidence: float) -> dict:
    """CIs for the data's interpolated and grid quantiles at ``levels`` (module docstring)."""
    confidence = check_confidence(confidence)
    alpha = 1.0 - confidence
    c = np.asarray(counts, dtype=np.float64)
    tau = np.asarray(thresholds, dtype=np.float64)
    p = np.asarray(levels, dtype=np.float64).reshape(-1)
    q = law.quantile(alpha, tree.levels + 1)
    target = p * n
    # between thresholds the noise is off the integer lattice: |noise| < q + 1 there has
    # probability >= the level (and at a threshold it is |Z| <= q: the same test). Without
    # noise the test is exact: |F_int(x) n - p n| <= 0
    noisy = not law.noiseless
    w_lo, w_hi, ok = _accepted_segments(c, target, q + 1.0 if noisy else 0.0, strict=noisy)
    width = np.diff(tau)[None, :]
    x_lo = np.where(ok, tau[None, :-1] + w_lo * width, np.inf)
    x_hi = np.where(ok, tau[None, :-1] + w_hi * width, -np.inf)
    at_first = c[0] >= target - q                      # Q_int = tau_0 iff F(tau_0) >= p
    lo = np.where(at_first, tau[0], x_lo.min(axis=1, initial=np.inf))
    hi = np.maximum(np.where(at_first, tau[0], -np.inf), x_hi.max(axis=1, initial=-np.inf))
    empty = ~np.isfinite(lo)                           # no x passes: say nothing
    lo, hi = np.where(empty, tau[0], lo), np.where(empty, tau[-1], hi)
    up = np.minimum(np.searchsorted(tau, [lo, hi], side="left"), tau.size - 1)
    return {
        "confidence": confidence, "interpolated_lo": lo, "interpolated_hi": hi,
        "lo": tau[up[0]], "hi": tau[up[1]], "halfwidth_counts": q,
        "method": (f"level {confidence:g} for each quantile on its own: the x where the "
                   "linearly interpolated noisy ECDF is less than q + 1 counts from p n, q = "
                   f"{q} the pointwise half-width (exact path-noise law; the extra count for "
                   "the noise between thresholds), by test inversion; covers the "
                   "data's interpolated (grouped-data) quantile, and rounded up to the "
                   "thresholds, its grid quantile (smallest threshold with F >= p)"),
    }
