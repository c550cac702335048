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
  bound q(alpha / N) of the exact law instead: valid, wider);
* **quantiles** -- for a level p the target is the data's grid quantile
  Q(p) = the smallest tau_i with F(tau_i) >= p (``numpy.quantile(x, p,
  method="inverted_cdf")`` when the grid holds every data value). The
  interval [tau_lo, tau_hi] takes lo = the first i with c^_i >= p n - q_lo and
  hi = the first i with c^_i >= p n + q_hi (tau_{N-1} if none). lo > Q needs
  Z_Q < -q_lo (one point: the one-sided quantile of the exact law at alpha_1);
  hi < Q needs some i < Q with Z_i > q_hi (one-sided simultaneous: the
  Monte Carlo law of max_i Z_i at alpha - alpha_1). alpha_1 is chosen on a
  grid to minimise q_lo + q_hi (public parameters only). Each level's
  interval holds on its own at the stated level. When the data's ECDF jumps
  by more than the noise at Q(p) (coarse data, large n), the interval is
  often the single point Q(p), and it covers with probability near 1: an
  interval between grid points cannot be narrower.

Smoothing, isotonic or not, is not what these intervals are about: they are
computed from the raw noisy counts, which is what they cover the truth with.
"""

from __future__ import annotations

import functools

import numpy as np

from .noise_law import SIM_SEED, NodeNoiseLaw
from .tree import Tree

__all__ = ["simulate_path_noise", "path_extremes", "ecdf_intervals", "quantile_intervals",
           "BAND_DRAWS", "BAND_WORK", "check_confidence"]

BAND_DRAWS = 4000
#: Largest draws x N x (L + 1) for the Monte Carlo band; beyond it, Bonferroni.
BAND_WORK = 4e8


def check_confidence(confidence) -> float:
    if isinstance(confidence, bool) or not isinstance(confidence, (int, float)) \
            or not 0 < confidence < 1:
        raise ValueError(f"confidence must be a level in (0, 1), e.g. 0.95, got {confidence!r}")
    return float(confidence)


def simulate_path_noise(law: NodeNoiseLaw, tree: Tree, draws: int, gen) -> np.ndarray:
    """(draws, N) int64: the path noise Z_i of every leaf, for ``draws`` independent trees."""
    b, N = tree.branching, tree.n_points
    leaves = np.arange(N)
    Z = np.zeros((draws, N), dtype=np.int64)
    for lev, size in enumerate(tree.level_sizes):      # one gather per level
        eta = law.sample((draws, int(size)), gen)
        Z += eta[:, leaves // b ** lev]
    return Z


@functools.lru_cache(maxsize=32)
def _extremes(law: NodeNoiseLaw, n_points: int, branching: int, draws: int):
    tree = Tree(n_points, branching)
    gen = np.random.default_rng(SIM_SEED)
    chunk = max(1, int(2 ** 23 // n_points))
    hi, ab = [], []
    for start in range(0, draws, chunk):               # memory: chunk x N int64
        Z = simulate_path_noise(law, tree, min(chunk, draws - start), gen)
        hi.append(Z.max(axis=1))
        ab.append(np.abs(Z).max(axis=1))
    return np.sort(np.concatenate(hi)), np.sort(np.concatenate(ab))


def path_extremes(law: NodeNoiseLaw, tree: Tree):
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


def band_halfwidth(law: NodeNoiseLaw, tree: Tree, alpha: float) -> tuple[int, str]:
    """Half-width in counts of the simultaneous band at level 1 - alpha, and how it was found."""
    if law.noiseless:
        return 0, "no noise"
    ext = path_extremes(law, tree)
    if ext is None:
        return (law.quantile(alpha / tree.n_points, tree.levels + 1),
                "Bonferroni bound over the N points (exact path-noise law at alpha / N)")
    return (_upper(ext[1], alpha),
            f"Monte Carlo law of max_i |Z_i| over the tree ({ext[1].size} draws, fixed seed)")


def ecdf_intervals(counts, n: int, law: NodeNoiseLaw, tree: Tree, confidence: float) -> dict:
    """Pointwise intervals and the simultaneous band of a released ECDF (module docstring)."""
    confidence = check_confidence(confidence)
    alpha = 1.0 - confidence
    c = np.asarray(counts, dtype=np.float64)
    terms = tree.levels + 1
    q_pt = law.quantile(alpha, terms)
    q_band, how = band_halfwidth(law, tree, alpha)

    def clip(v):
        return np.clip(v / n, 0.0, 1.0)

    return {
        "confidence": confidence,
        "noise_std_counts": law.std(terms), "noise_std": law.std(terms) / n,
        "pointwise_halfwidth_counts": q_pt, "band_halfwidth_counts": q_band,
        "pointwise_lo": clip(c - q_pt), "pointwise_hi": clip(c + q_pt),
        "band_lo": clip(c - q_band), "band_hi": clip(c + q_band),
        "method": (f"pointwise: exact law of the path noise (sum of {terms} node noises, "
                   f"{_law_text(law)}), "
                   f"two-sided level {confidence:g} at each threshold; band: all thresholds "
                   f"at once at level {confidence:g}, {how}. Cover the ECDF of these n records "
                   "at the thresholds (counts / n)."),
    }


def _law_text(law: NodeNoiseLaw) -> str:
    if law.noiseless:
        return "no noise"
    return (f"each node the sum of {law.copies} discrete Laplace of scale {float(law.scale):.4g}"
            if law.copies > 1 else f"discrete Laplace of scale {float(law.scale):.4g} per node")


def _split_alpha(law, tree, alpha, ext):
    """alpha_1 (lower end, pointwise) minimising q_lo + q_hi on a grid, and both half-widths."""
    terms = tree.levels + 1
    best = None
    for a1 in alpha * np.linspace(0.05, 0.95, 19):
        q_lo = law.quantile(a1, terms, two_sided=False)
        a2 = alpha - a1
        q_hi = (_upper(ext[0], a2) if ext is not None
                else law.quantile(a2 / tree.n_points, terms, two_sided=False))
        if best is None or q_lo + q_hi < best[1] + best[2]:
            best = (float(a1), q_lo, q_hi)
    return best


def quantile_intervals(counts, thresholds, n: int, law: NodeNoiseLaw, tree: Tree, levels,
                       confidence: float) -> dict:
    """CIs [lo, hi] (thresholds) for the data's grid quantiles at ``levels`` (module docstring)."""
    confidence = check_confidence(confidence)
    alpha = 1.0 - confidence
    c = np.asarray(counts, dtype=np.float64)
    tau = np.asarray(thresholds, dtype=np.float64)
    p = np.asarray(levels, dtype=np.float64).reshape(-1)
    if law.noiseless:
        a1, q_lo, q_hi = alpha, 0, 0
    else:
        a1, q_lo, q_hi = _split_alpha(law, tree, alpha, path_extremes(law, tree))
    N = c.size

    def first_at_least(target):
        ok = c[None, :] >= target[:, None]
        return np.where(ok.any(axis=1), ok.argmax(axis=1), N - 1)

    lo = first_at_least(p * n - q_lo)
    hi = first_at_least(p * n + q_hi)
    return {
        "confidence": confidence, "lo": tau[lo], "hi": tau[hi],
        "halfwidths_counts": [q_lo, q_hi], "alpha_split": [a1, alpha - a1],
        "method": (f"level {confidence:g} for each quantile on its own: lower end from the exact "
                   f"path-noise law at one threshold (alpha {a1:.3g}), upper end from the "
                   f"simultaneous law of max_i Z_i (alpha {alpha - a1:.3g}); covers the data's "
                   "grid quantile (smallest threshold with F >= p)"),
    }
