"""Samplers without degree control: the complete graph, sampling without replacement, Bernoulli.

Part of :mod:`ustat.sampling` (import from there). Paper: the "uniform"
and Bernoulli baselines of Sinh & Ramon, Section 6.2.3 (Table 2).
"""

from __future__ import annotations

import math
import numbers

import numpy as np

from mpc.arith.rng import CSPRNG, RngLike, as_rng

from .combinatorics import (
    _RANK_LIMIT,
    _enumerate,
    _lex_order,
    _random_ksubsets,
    _unrank_lex,
)
from .hypergraph import ENUMERATION_LIMIT, Hypergraph, _check_m, _check_nk


def all_edges(n: int, k: int, *, limit: int = ENUMERATION_LIMIT) -> Hypergraph:
    """Every k-subset of [n]: the complete U-statistic's edge set, lexicographic order.

    Refuses (ValueError) when C(n, k) exceeds ``limit`` (default 10^7), since
    the array alone would take C(n,k)*k*8 bytes.

    Cost: O(C(n,k) k log n) time, C(n,k) k int64 memory. Paper: the complete
    U-statistic U_{f, C_k^n} of Section 2 (E = all of C_k^n).
    """
    n, k, N = _check_nk(n, k)
    if limit < N:
        raise ValueError(
            f"C(n, k) = C({n}, {k}) = {N} edges exceeds the enumeration limit "
            f"{limit}; use a sampler ('balanced', 'uniform', 'bernoulli') instead")
    return Hypergraph(_enumerate(n, k), n, k, "all")


def uniform(n: int, m: int, k: int, rng: RngLike = None) -> Hypergraph:
    """m distinct k-subsets of [n], uniformly without replacement ("sampling without replacement").

    If C(n, k) < 2^61: draw m distinct ranks with ``rng.choice`` (rejection of
    repeats when sparse, a permutation of the ranks when m >= C(n,k)/4) and
    unrank them in the combinatorial number system (exact, no enumeration).
    Otherwise: draw uniform k-subsets and reject duplicates until m distinct
    remain (duplicates are then very rare). Both are exactly uniform over
    m-subsets of C_k^n.

    Cost: O(m k log n) time after an O(n k) binomial table; O(C(n,k)) only in
    the dense case m >= C(n,k)/4. Paper: the "uniform" / sampling without
    replacement baseline of Section 6.2.3 (Table 2).
    """
    n, k, N = _check_nk(n, k)
    m = _check_m(m, N, n, k)
    rng = as_rng(rng)
    return Hypergraph(_uniform_edges(n, m, k, N, rng), n, k, "uniform")


def _uniform_edges(n: int, m: int, k: int, N: int, rng: CSPRNG) -> np.ndarray:
    if m == 0:
        return np.empty((0, k), dtype=np.int64)
    if N < _RANK_LIMIT:
        ranks = np.sort(rng.choice(N, m))
        return _unrank_lex(ranks, n, k)  # ascending ranks -> lexicographic rows
    # Huge C(n,k): duplicates are rare. Draw candidates, sort them
    # lexicographically, drop adjacent repeats (exact), top up if short.
    edges = np.empty((0, k), dtype=np.int64)
    while edges.shape[0] < m:
        need = m - edges.shape[0]
        cand = np.concatenate([edges, _random_ksubsets(n, k, need + need // 64 + 16, rng)])
        cand = cand[_lex_order(cand, n)]
        keep = np.ones(cand.shape[0], dtype=bool)
        keep[1:] = np.any(cand[1:] != cand[:-1], axis=1)
        edges = cand[keep]
    # A uniformly random m-subset of the distinct candidates (they are an
    # exchangeable set, so this is a uniform m-subset of C_k^n); sorted
    # indices keep the lexicographic order.
    return edges[np.sort(rng.choice(edges.shape[0], m))]


def bernoulli(n: int, p_or_m: float | int, k: int, rng: RngLike = None) -> Hypergraph:
    """Each k-subset of [n] independently with probability p ("Bernoulli sampling").

    ``p_or_m``: a float is the probability p in (0, 1]; an integer m in
    [1, C(n,k)] is an expected size, p = m / C(n, k). The number of edges is
    random, Binomial(C(n,k), p), and may be 0.

    Method: draw K ~ Binomial(C(n,k), p) by inversion of the CDF over a window
    of +-(12 sd + 12) around the mean (the whole support when it is smaller;
    the mass left out is below 1e-30), then K distinct edges uniformly as in
    :func:`uniform`. Given K, the Bernoulli edge set is a uniform K-subset, so
    this is the Bernoulli design without visiting all C(n,k) subsets.

    Cost: O(sqrt(m) + K k log n). Paper: the Bernoulli baseline of Section
    6.2.3 (Table 2).
    """
    n, k, N = _check_nk(n, k)
    if isinstance(p_or_m, (bool, np.bool_)):
        raise TypeError(f"p_or_m must be a float probability or an integer size, got {p_or_m!r}")
    if isinstance(p_or_m, numbers.Integral):
        m = _check_m(p_or_m, N, n, k)
        p = m / N
    elif isinstance(p_or_m, numbers.Real):
        p = float(p_or_m)
        if not (0.0 < p <= 1.0) or math.isnan(p):
            raise ValueError(f"p_or_m as a probability p must be in (0, 1], got {p_or_m!r}")
    else:
        raise TypeError(f"p_or_m must be a float probability or an integer size, "
                        f"got {type(p_or_m).__name__}")
    rng = as_rng(rng)
    count = _binomial(N, p, rng)
    return Hypergraph(_uniform_edges(n, count, k, N, rng), n, k, "bernoulli")


def _binomial(N: int, p: float, rng: CSPRNG) -> int:
    """One Binomial(N, p) draw, N may exceed 2^63: inversion on a window around the mean."""
    if p >= 1.0:
        return N
    mean = N * p
    sd = math.sqrt(mean * (1.0 - p))
    w = int(math.ceil(12.0 * sd + 12.0))
    c = int(math.floor(mean))
    lo = max(0, c - w)
    hi = min(N, c + w)
    # log pmf relative to j = lo via ratios pmf(j+1)/pmf(j) = (N-j)/(j+1) * p/(1-p).
    j = np.arange(hi - lo, dtype=np.float64) + float(lo)  # j = lo .. hi-1
    log_ratio = np.log(float(N) - j) - np.log(j + 1.0) + (math.log(p) - math.log1p(-p))
    logpmf = np.concatenate([[0.0], np.cumsum(log_ratio)])
    pmf = np.exp(logpmf - logpmf.max())
    cdf = np.cumsum(pmf)
    u = float(rng.random()) * cdf[-1]
    idx = int(np.searchsorted(cdf, u, side="right"))
    return lo + min(idx, hi - lo)
