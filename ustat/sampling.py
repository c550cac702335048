"""Hypergraph samplers: which k-subsets of the n parties form the edge set E.

An incomplete U-statistic of degree k averages the kernel over a set E of
k-subsets ("edges") of the n parties instead of all C(n, k) of them. The
sampler decides E; its maximal vertex degree delta_G^max drives the DP noise
scale of the U-MPC protocol (Sinh & Ramon, Section 4 and Appendix D), and its
shape drives the variance of the estimate (Section 6.2.3, Table 2 compares
BalancedSamp, Bernoulli sampling and sampling without replacement).

Samplers (all return a :class:`Hypergraph`, all randomness from a
:class:`mpc.rng.CSPRNG`):

``balanced(n, m, k, rng)``
    BalancedSamp (Algorithm 1, Appendix F): m distinct edges, every vertex
    degree floor(k m / n) or ceil(k m / n).
``uniform(n, m, k, rng)``
    m distinct edges uniformly without replacement from the C(n, k) subsets.
``bernoulli(n, p_or_m, k, rng)``
    every k-subset independently with probability p (or p = m / C(n, k)).
``all_edges(n, k)``
    the complete U-statistic: every k-subset.

Edges are stored as an ``int64`` array of shape (m, k), each row sorted
ascending, rows in lexicographic order (a canonical form of the set E, so
equal sets give equal arrays). None of these samplers touch a secret: E is
public in the protocol. They still take the CSPRNG so that experiments are
reproducible from one seed and no second generator exists in the toolkit.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass
from typing import Iterator

import numpy as np

from mpc.rng import CSPRNG, as_rng

__all__ = [
    "Hypergraph",
    "SAMPLERS",
    "ENUMERATION_LIMIT",
    "balanced",
    "uniform",
    "bernoulli",
    "all_edges",
    "sample",
    "n_subsets",
]

#: Largest C(n, k) that :func:`all_edges` (and the complement step of
#: :func:`balanced`) will materialise.
ENUMERATION_LIMIT = 10**7

#: Names accepted by :func:`sample`.
SAMPLERS = ("balanced", "uniform", "bernoulli", "all")

# Ranks up to this bound are unranked exactly with int64 binomial tables.
_RANK_LIMIT = 1 << 61
_CAP = np.int64(1 << 62)


# ----------------------------------------------------------------------------
# Result type
# ----------------------------------------------------------------------------
@dataclass(frozen=True, eq=False)
class Hypergraph:
    """A k-uniform hypergraph G = ([n], E): the edge set of an incomplete U-statistic.

    Attributes
    ----------
    edges : ndarray of int64, shape (m, k)
        One edge per row, each row strictly increasing, rows in lexicographic
        order, no duplicate rows. Read-only.
    n : int
        Number of vertices (parties), labelled 0..n-1.
    k : int
        Edge size (kernel degree).
    name : str
        Sampler that produced it: "balanced", "uniform", "bernoulli" or "all".

    Cost: ``degrees`` is one ``np.bincount`` over m*k entries (O(m k + n)).
    """

    edges: np.ndarray
    n: int
    k: int
    name: str

    def __post_init__(self):
        e = np.asarray(self.edges, dtype=np.int64)
        if e.ndim != 2 or e.shape[1] != self.k:
            raise ValueError(f"edges must have shape (m, {self.k}), got {e.shape}")
        if e is self.edges:
            e = e.view()
        e.setflags(write=False)
        object.__setattr__(self, "edges", e)

    @property
    def m(self) -> int:
        """Number of edges |E|."""
        return int(self.edges.shape[0])

    @property
    def degrees(self) -> np.ndarray:
        """Degree of every vertex (``int64``, length n): edges containing it."""
        return np.bincount(self.edges.ravel(), minlength=self.n).astype(np.int64)

    @property
    def max_degree(self) -> int:
        """delta_G^max, the largest vertex degree (0 for an empty edge set)."""
        return int(self.degrees.max()) if self.n else 0

    def iter_chunks(self, size: int) -> Iterator[np.ndarray]:
        """Yield consecutive blocks of at most ``size`` edges (views, (<=size, k)).

        For streaming kernel evaluation over large E with bounded memory.
        """
        size = _check_int(size, "size")
        if size < 1:
            raise ValueError(f"size must be >= 1, got {size}")
        for start in range(0, self.m, size):
            yield self.edges[start:start + size]

    def __len__(self) -> int:
        return self.m

    def __repr__(self) -> str:
        return f"Hypergraph(name={self.name!r}, n={self.n}, k={self.k}, m={self.m})"


# ----------------------------------------------------------------------------
# Validation helpers
# ----------------------------------------------------------------------------
def _check_int(x, name: str) -> int:
    if isinstance(x, (bool, np.bool_)) or not isinstance(x, numbers.Integral):
        raise TypeError(f"{name} must be an integer, got {x!r} ({type(x).__name__})")
    return int(x)


def _check_nk(n, k) -> tuple[int, int, int]:
    n = _check_int(n, "n")
    k = _check_int(k, "k")
    if k < 2:
        raise ValueError(f"k must be >= 2 (kernel degree), got k={k}")
    if n < k:
        raise ValueError(f"n must be >= k: need at least k={k} parties, got n={n}")
    return n, k, math.comb(n, k)


def _check_m(m, N: int, n: int, k: int) -> int:
    m = _check_int(m, "m")
    if m < 1:
        raise ValueError(f"m must be >= 1, got m={m}")
    if m > N:
        raise ValueError(f"m must be <= C(n, k) = C({n}, {k}) = {N}, got m={m}")
    return m


def n_subsets(n: int, k: int) -> int:
    """C(n, k), the number of possible edges (exact Python int)."""
    n = _check_int(n, "n")
    k = _check_int(k, "k")
    return math.comb(n, k)


# ----------------------------------------------------------------------------
# Combinatorial helpers (ranking / unranking, canonical form, duplicates)
# ----------------------------------------------------------------------------
def _binom_tables(n: int, k: int) -> list[np.ndarray]:
    """T[j][c] = C(c, j) for c in 0..n-1, j in 0..k, saturated at 2^62 (int64).

    Built by Pascal's rule C(c, j) = sum_{i<c} C(i, j-1) (a cumsum per j);
    entries beyond 2^61 are replaced by the cap, which exceeds every rank we
    unrank (ranks < 2^61), so searches stay exact. Cost O(n k).
    """
    tables = [np.ones(n, dtype=np.int64)]
    for _ in range(k):
        prev = tables[-1]
        ics = np.zeros(n, dtype=np.int64)
        fcs = np.zeros(n, dtype=np.float64)
        with np.errstate(over="ignore"):
            ics[1:] = np.cumsum(prev[:-1])
        fcs[1:] = np.cumsum(prev[:-1].astype(np.float64))
        ics[fcs > float(_RANK_LIMIT)] = _CAP
        tables.append(ics)
    return tables


def _unrank_lex(ranks: np.ndarray, n: int, k: int, tables=None) -> np.ndarray:
    """k-subsets of [n] with the given lexicographic ranks (rows ascending).

    Uses the combinatorial number system: colex rank of {c_1<...<c_k} is
    sum_j C(c_j, j); reflecting x -> n-1-x turns colex order into reversed
    lex order, so lex rank r is the reflection of colex rank N-1-r.
    Cost O(len(ranks) * k * log n), vectorised over ranks.
    """
    N = math.comb(n, k)
    if tables is None:
        tables = _binom_tables(n, k)
    r = (N - 1) - np.asarray(ranks, dtype=np.int64)
    out = np.empty((r.size, k), dtype=np.int64)
    for j in range(k, 0, -1):
        c = np.searchsorted(tables[j], r, side="right") - 1
        r = r - tables[j][c]
        # colex element c_j (largest first) reflected -> lex position k-j
        out[:, k - j] = (n - 1) - c
    return out


def _sort_rows(edges: np.ndarray) -> np.ndarray:
    """Sort inside each row (in place for int64 input), return it."""
    edges.sort(axis=1)
    return edges


def _pack(edges: np.ndarray, n: int) -> list[np.ndarray]:
    """Exact packing of rows into uint64 words, most significant word first.

    Each word holds floor(63 / bits) columns of ``bits = bit_length(n - 1)``
    bits, so comparing the word lists compares rows lexicographically.
    """
    k = edges.shape[1]
    bits = max(1, (n - 1).bit_length())
    per = max(1, 63 // bits)
    words = []
    for start in range(0, k, per):
        w = np.zeros(edges.shape[0], dtype=np.uint64)
        for j in range(start, min(k, start + per)):
            w <<= np.uint64(bits)
            w |= edges[:, j].astype(np.uint64)
        # left-align a short last word so that word order stays lexicographic
        w <<= np.uint64(bits * (per - min(per, k - start)))
        words.append(w)
    return words


_MIX = (np.uint64(0x9E3779B97F4A7C15), np.uint64(0xBF58476D1CE4E5B9),
        np.uint64(0x94D049BB133111EB))


def _row_key(edges: np.ndarray, n: int) -> np.ndarray:
    """One uint64 per row (sorted inside): exact when a row packs into one word.

    Otherwise a splitmix64-style hash of the packed words: equal rows always
    get equal keys, so a key test can only over-report duplicates (callers
    use it where a false alarm costs one extra repair, never validity).
    """
    words = _pack(edges, n)
    if len(words) == 1:
        return words[0]
    h = np.zeros(edges.shape[0], dtype=np.uint64)
    with np.errstate(over="ignore"):
        for w in words:
            h = (h ^ w) * _MIX[0]
            h ^= h >> np.uint64(30)
            h *= _MIX[1]
            h ^= h >> np.uint64(27)
            h *= _MIX[2]
            h ^= h >> np.uint64(31)
    return h


def _lex_order(edges: np.ndarray, n: int) -> np.ndarray:
    """Permutation that sorts rows (sorted inside) lexicographically."""
    words = _pack(edges, n)
    if len(words) == 1:
        return np.argsort(words[0])
    return np.lexsort(words[::-1])


def _canonical(edges: np.ndarray, n: int) -> np.ndarray:
    """Rows sorted inside, then rows sorted lexicographically (reuses ``edges``' memory).

    When a row packs into one 64-bit word (k bit_length(n-1) <= 63: every
    k = 2 graph up to n = 2^31) the words themselves are sorted and unpacked,
    a plain ``np.sort`` several times faster than an argsort plus a gather.
    """
    edges = _sort_rows(np.ascontiguousarray(edges, dtype=np.int64))
    words = _pack(edges, n)
    if len(words) > 1:
        return edges[np.lexsort(words[::-1])]
    w = words[0]
    w.sort()
    bits = max(1, (n - 1).bit_length())
    k = edges.shape[1]
    w >>= np.uint64(bits * (max(1, 63 // bits) - k))
    mask = np.uint64((1 << bits) - 1)
    for j in range(k - 1, -1, -1):
        edges[:, j] = w & mask
        w >>= np.uint64(bits)
    return edges


def _repeat_mask(edges: np.ndarray) -> np.ndarray:
    """Rows (sorted inside) with a repeated vertex."""
    return np.any(edges[:, 1:] == edges[:, :-1], axis=1)


def _key_dup_mask(keys: np.ndarray) -> np.ndarray:
    """Entries equal to an earlier entry: all copies of a value but the first are marked.

    One ``np.sort`` of the keys finds the repeated values (few); only the
    entries holding one of them are then located (O(m log r)), no argsort.
    """
    mask = np.zeros(keys.size, dtype=bool)
    if keys.size < 2:
        return mask
    s = np.sort(keys)
    repeated = s[1:][s[1:] == s[:-1]]
    if repeated.size == 0:
        return mask
    cand = np.flatnonzero(_in_sorted(keys, np.unique(repeated)))
    _, first = np.unique(keys[cand], return_index=True)
    mask[cand] = True
    mask[cand[first]] = False
    return mask


def _in_sorted(x: np.ndarray, s: np.ndarray) -> np.ndarray:
    """Membership of x in the sorted array s (O(len(x) log len(s)))."""
    if s.size == 0:
        return np.zeros(x.size, dtype=bool)
    pos = np.minimum(np.searchsorted(s, x), s.size - 1)
    return s[pos] == x


def _random_ksubsets(n: int, k: int, count: int, rng: CSPRNG) -> np.ndarray:
    """``count`` independent uniform k-subsets of [n] (rows sorted). Repeats possible.

    k^2 <= n: uniform k-tuples with rejection of tuples with a repeated vertex
    (acceptance >= 1 - k^2/(2n) >= 1/2). Otherwise the first k entries of a
    random permutation of [n] per row (the k smallest of n random words), in batches.
    """
    out = np.empty((count, k), dtype=np.int64)
    filled = 0
    if k * k <= n:
        while filled < count:
            need = count - filled
            acc = math.prod(1.0 - i / n for i in range(k))  # P(no repeat)
            t = rng.integers(n, (int(need / acc * 1.01) + 16, k))
            t.sort(axis=1)
            t = t[~_repeat_mask(t)][:need]
            out[filled:filled + t.shape[0]] = t
            filled += t.shape[0]
        return out
    batch = max(1, (1 << 22) // n)
    while filled < count:
        b = min(batch, count - filled)
        # the k smallest of n random words: a uniform k-subset (order is not needed)
        rows = np.argpartition(rng.uint64((b, n)), k - 1, axis=1)[:, :k]
        rows.sort(axis=1)
        out[filled:filled + b] = rows
        filled += b
    return out


def _enumerate(n: int, k: int) -> np.ndarray:
    """All k-subsets of [n] in lexicographic order, shape (C(n,k), k)."""
    N = math.comb(n, k)
    return _unrank_lex(np.arange(N, dtype=np.int64), n, k)


# ----------------------------------------------------------------------------
# Samplers
# ----------------------------------------------------------------------------
def all_edges(n: int, k: int, *, limit: int = ENUMERATION_LIMIT) -> Hypergraph:
    """Every k-subset of [n]: the complete U-statistic's edge set, lexicographic order.

    Refuses (ValueError) when C(n, k) exceeds ``limit`` (default 10^7), since
    the array alone would take C(n,k)*k*8 bytes.

    Cost: O(C(n,k) k log n) time, C(n,k) k int64 memory. Paper: the complete
    U-statistic U_{f, C_k^n} of Section 2 (E = all of C_k^n).
    """
    n, k, N = _check_nk(n, k)
    if N > limit:
        raise ValueError(
            f"C(n, k) = C({n}, {k}) = {N} edges exceeds the enumeration limit "
            f"{limit}; use a sampler ('balanced', 'uniform', 'bernoulli') instead")
    return Hypergraph(_enumerate(n, k), n, k, "all")


def uniform(n: int, m: int, k: int, rng=None) -> Hypergraph:
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


def bernoulli(n: int, p_or_m, k: int, rng=None) -> Hypergraph:
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


def balanced(n: int, m: int, k: int, rng=None, *, max_rounds: int = 10_000,
             mix_sweeps: int | None = None) -> Hypergraph:
    """BalancedSamp: m distinct k-subsets with every degree floor(km/n) or ceil(km/n).

    Paper: Sinh & Ramon, Algorithm 1 (Appendix F). Algorithm 1 gives every
    vertex a capacity p_i and draws edges one at a time, each vertex with
    probability proportional to its remaining capacity. Drawing vertices
    proportionally to remaining capacity is exactly reading a uniformly
    random permutation of the "stub" list in which vertex i appears p_i
    times, so we do that for all edges at once (the configuration model):

    1. Degree targets: q, r = divmod(k m, n); a uniformly random set of r
       vertices gets degree q + 1, the others q. (Algorithm 1 gives every
       vertex capacity ceil(k m / n), so its degrees are only bounded above;
       fixing the capacities to sum to k m makes the floor/ceil property
       exact.)
    2. One random permutation of the k m stubs, cut into m rows of k.
    3. Repair: rows with a repeated vertex, or equal to another row, are
       invalid (Algorithm 1 samples without replacement inside an edge and
       stores E as a set; a plain permutation enforces neither). Each
       invalid row e exchanges one vertex occurrence (a repeated one if any)
       with a random valid row f: e' = e - u + w, f' = f - w + u, accepted
       when f' is valid and new. Vertex occurrences are only moved, never
       created, so degrees stay exactly at their targets. Batched over all
       invalid rows per round; when k m / n << n only a handful of rows need
       it and it takes a few rounds.
    4. Mixing: the repair is a greedy, not a reversible, move, so it biases
       the law when many rows were repaired (dense or small cases). Rounds of
       the classical switch chain (random pairs of rows on disjoint vertex
       sets exchange a vertex when both results stay valid and new) then
       move the law towards uniform over simple hypergraphs with the given
       degrees: ``mix_sweeps`` * m proposals (default 5 when k m <= 2*10^5,
       else 5 * min(1, 10 * initial invalid fraction), usually 0 for large
       sparse E where the stub permutation is already close to uniform; at
       most 300 rounds).
    5. If m > C(n, k) / 2 the dense case is reduced to the sparse one: sample
       a balanced hypergraph with C(n,k) - m edges and return its complement
       in the complete k-graph (which is regular, so the complement is
       balanced too).

    Distribution: conditioned on the degree sequence, a uniformly random
    stub permutation that happens to be simple is a uniform simple
    hypergraph with those degrees; steps 3-4 keep the result close to that
    law (tested on n = 6, k = 2, m = 6, where the repair alone is biased by
    a factor 2 on one isomorphism class and the mixed sampler is not). The
    choice of which r vertices get the larger degree is exactly uniform.

    Cost: one permutation of k m stubs (AES keystream + a sort of packed
    words, O(k m log(k m))) plus O(m log m) sorts of packed rows (duplicate
    check, canonical order) and O(m) per repair/mixing round; n = 10^6,
    m = 2*10^6, k = 2 takes about 0.5 s,
    n = 2000, m = 10^6, k = 2 (density 1/2) about 5 s. The dense case
    enumerates C(n, k) <= 2m edges.
    """
    n, k, N = _check_nk(n, k)
    m = _check_m(m, N, n, k)
    max_rounds = _check_int(max_rounds, "max_rounds")
    if mix_sweeps is not None and _check_int(mix_sweeps, "mix_sweeps") < 0:
        raise ValueError(f"mix_sweeps must be >= 0, got {mix_sweeps}")
    rng = as_rng(rng)
    if 2 * m > N and N <= ENUMERATION_LIMIT:
        allk = _enumerate(n, k)
        if m == N:
            return Hypergraph(allk, n, k, "balanced")
        comp = _balanced_edges(n, N - m, k, rng, max_rounds, mix_sweeps)
        ranks = _lex_ranks(comp, n, k)
        keep = np.ones(N, dtype=bool)
        keep[ranks] = False
        return Hypergraph(allk[keep], n, k, "balanced")
    return Hypergraph(_balanced_edges(n, m, k, rng, max_rounds, mix_sweeps), n, k, "balanced")


def _lex_ranks(edges: np.ndarray, n: int, k: int) -> np.ndarray:
    """Lexicographic ranks of sorted rows (inverse of :func:`_unrank_lex`)."""
    tables = _binom_tables(n, k)
    N = math.comb(n, k)
    colex = np.zeros(edges.shape[0], dtype=np.int64)
    for j in range(1, k + 1):
        colex += tables[j][(n - 1) - edges[:, k - j]]
    return (N - 1) - colex


def _balanced_edges(n: int, m: int, k: int, rng: CSPRNG, max_rounds: int,
                    mix_sweeps=None) -> np.ndarray:
    q, r = divmod(k * m, n)
    for _attempt in range(20):
        deg = np.full(n, q, dtype=np.int64)
        if r:
            deg[rng.choice(n, r)] += 1
        stubs = np.repeat(np.arange(n, dtype=np.int64), deg)
        edges = stubs[rng.permutation(stubs.size)].reshape(m, k)
        edges.sort(axis=1)
        st = _SwitchState(edges, n)
        bad_frac = st.bad.size / m
        if not st.repair(rng, max_rounds):
            continue
        sweeps = mix_sweeps
        if sweeps is None:
            sweeps = 5 if k * m <= 200_000 else int(round(5 * min(1.0, 10 * bad_frac)))
        if sweeps:
            st.mix(rng, sweeps * m)
        return _canonical(st.edges, n)
    raise RuntimeError(  # pragma: no cover - never observed
        f"balanced sampling did not converge for n={n}, m={m}, k={k}")


class _SwitchState:
    """Rows of a stub configuration plus the sorted keys of its valid rows.

    A *switch* exchanges one vertex occurrence between two rows e and f:
    e' = e - u + w, f' = f - w + u (u in e, w in f). Switches preserve every
    degree. ``repair`` applies them to invalid rows (repeated vertex or
    duplicate) with random valid partners, accepting a switch when f' stays
    valid and new; ``mix`` applies random switches between valid rows,
    accepting when both results are valid and new: the classical switch
    Markov chain, whose stationary law is uniform over simple hypergraphs
    with the given degrees. Each round is batched over disjoint row pairs;
    proposals whose new rows collide with each other are rejected.
    """

    def __init__(self, edges: np.ndarray, n: int):
        self.edges, self.n = edges, n
        self.m, self.k = edges.shape
        self.keys = _row_key(edges, n)
        bad = _repeat_mask(edges)
        bad |= _key_dup_mask(np.where(bad, np.uint64(0), self.keys)) & ~bad
        self.is_bad = bad
        self.bad = np.flatnonzero(bad)
        self.valid = np.sort(self.keys[~bad])  # distinct keys of the valid rows

    def _propose(self, rows_e, rows_f, pos_i, rng):
        e, f = self.edges[rows_e], self.edges[rows_f]
        t = np.arange(rows_e.size)
        pos_j = rng.integers(self.k, (rows_e.size,))
        u, w = e[t, pos_i], f[t, pos_j]
        ok = ~np.any(e == w[:, None], axis=1) & ~np.any(f == u[:, None], axis=1)
        e2, f2 = e.copy(), f.copy()
        e2[t, pos_i] = w
        f2[t, pos_j] = u
        e2.sort(axis=1)
        f2.sort(axis=1)
        return e2, f2, ok

    def _apply(self, rows_e, rows_f, e2, f2, acc, e_valid):
        """Commit accepted switches; rows_e become valid where e_valid."""
        ke, kf = _row_key(e2, self.n), _row_key(f2, self.n)
        # reject proposals whose new valid keys collide inside the batch
        new = np.concatenate([kf[acc], ke[acc & e_valid]])
        owner = np.concatenate([np.flatnonzero(acc), np.flatnonzero(acc & e_valid)])
        if new.size:
            order = np.argsort(new)
            s = new[order]
            clash = np.zeros(new.size, dtype=bool)
            eq = s[1:] == s[:-1]
            clash[order[1:][eq]] = True
            clash[order[:-1][eq]] = True
            acc = acc.copy()
            acc[owner[clash]] = False
        ev = acc & e_valid
        old = np.concatenate([self.keys[rows_f[acc]], self.keys[rows_e[acc & ~self.is_bad[rows_e]]]])
        if old.size:
            self.valid = np.delete(self.valid, np.searchsorted(self.valid, old))
        self.edges[rows_e[acc]] = e2[acc]
        self.edges[rows_f[acc]] = f2[acc]
        self.keys[rows_e[acc]] = ke[acc]
        self.keys[rows_f[acc]] = kf[acc]
        add = np.sort(np.concatenate([kf[acc], ke[ev]]))
        self.valid = np.insert(self.valid, np.searchsorted(self.valid, add), add)
        self.is_bad[rows_e[ev]] = False
        return ev

    def _partners(self, count, rng, exclude_bad=True):
        p = rng.integers(self.m, (count,))
        _, first = np.unique(p, return_index=True)
        uniq = np.zeros(count, dtype=bool)
        uniq[first] = True
        return p, uniq & ~self.is_bad[p]

    def repair(self, rng, max_rounds: int) -> bool:
        for _ in range(max_rounds):
            if self.bad.size == 0:
                return True
            rows_e = self.bad
            b = rows_e.size
            e = self.edges[rows_e]
            rep = e[:, 1:] == e[:, :-1]
            has_rep = rep.any(axis=1)
            pos_i = np.where(has_rep, np.argmax(rep, axis=1) + 1, rng.integers(self.k, (b,)))
            rows_f, ok_f = self._partners(b, rng)
            e2, f2, ok = self._propose(rows_e, rows_f, pos_i, rng)
            kf = _row_key(f2, self.n)
            ke = _row_key(e2, self.n)
            acc = ok & ok_f & ~_in_sorted(kf, self.valid)
            e_valid = ~_repeat_mask(e2) & ~_in_sorted(ke, self.valid)
            fixed = self._apply(rows_e, rows_f, e2, f2, acc, e_valid)
            self.bad = rows_e[~fixed]
        return False

    def mix(self, rng, attempts: int, max_rounds: int = 300) -> None:
        """About ``attempts`` switch proposals between random pairs of (valid) rows.

        Each round draws h disjoint row pairs and keeps the *active* ones:
        pairs none of whose vertices occurs in an earlier pair of the round.
        A switch does not change the vertex set of its pair, so the active
        set is the same before and after the round, and active switches
        cannot interfere (their rows live on disjoint vertex sets): a round
        is a product of independent reversible switches, and the chain keeps
        the uniform law on simple hypergraphs with these degrees.
        """
        n, m, k = self.n, self.m, self.k
        h = max(1, min(m // 2, n // (4 * k)))
        done = rounds = 0
        while done < attempts and rounds < max_rounds and m >= 2:
            rounds += 1
            rows = rng.choice(m, 2 * h)
            rows_e, rows_f = rows[:h], rows[h:]
            verts = np.concatenate([self.edges[rows_e], self.edges[rows_f]], axis=1)
            first = np.full(n, h, dtype=np.int64)
            np.minimum.at(first, verts.ravel(), np.repeat(np.arange(h), 2 * k))
            active = np.all(first[verts] == np.arange(h)[:, None], axis=1)
            rows_e, rows_f = rows_e[active], rows_f[active]
            done += rows_e.size
            pos_i = rng.integers(k, (rows_e.size,))
            e2, f2, ok = self._propose(rows_e, rows_f, pos_i, rng)
            ke, kf = _row_key(e2, n), _row_key(f2, n)
            acc = ok & ~_in_sorted(ke, self.valid) & ~_in_sorted(kf, self.valid)
            self._apply(rows_e, rows_f, e2, f2, acc, np.ones(rows_e.size, dtype=bool))


_DISPATCH = {
    "balanced": balanced,
    "uniform": uniform,
    "bernoulli": bernoulli,
}


def sample(name: str, n: int, m, k: int, rng=None) -> Hypergraph:
    """Dispatch to a sampler by name: "balanced", "uniform", "bernoulli" or "all".

    For "bernoulli", ``m`` is passed as ``p_or_m`` (an integer is the
    expected size). For "all", ``m`` must be None or C(n, k).
    Cost: that of the sampler. Paper: Section 6.2.3 compares the first three.
    """
    if not isinstance(name, str) or name not in SAMPLERS:
        raise ValueError(f"unknown sampler {name!r}; valid samplers: {', '.join(SAMPLERS)}")
    if name == "all":
        g = all_edges(n, k)
        if m is not None and (isinstance(m, bool) or not isinstance(m, numbers.Integral)
                              or int(m) != g.m):
            raise ValueError(f"m must be None or C(n, k) = {g.m} for sampler 'all', got m={m!r}")
        return g
    return _DISPATCH[name](n, m, k, rng)
