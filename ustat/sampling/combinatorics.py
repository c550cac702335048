"""Combinatorics of the samplers: ranking and unranking k-subsets, canonical form, duplicates.

Part of :mod:`ustat.sampling`. Rows are k-subsets of [n] stored as sorted
int64 rows; the lexicographic rank of a row is computed in the
combinatorial number system; rows pack exactly into 64-bit words when
k bit_length(n - 1) <= 63, which makes sorting and duplicate checks one
np.sort of words.
"""

from __future__ import annotations

import math

import numpy as np

from mpc.arith.rng import CSPRNG

# Ranks up to this bound are unranked exactly with int64 binomial tables.
_RANK_LIMIT = 1 << 61
_CAP = np.int64(1 << 62)


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
    """Sort inside each row, in place (``edges`` must be writable), and return it.

    For k <= 3 an odd-even transposition network of column-wise
    ``np.minimum``/``np.maximum`` (k = 2: one exchange, 8x faster than
    ``sort(axis=1)`` on 2 x 10^6 rows; k = 3: three, 2.5x); a sorting
    network sorts every input, so the result equals ``np.sort(edges, axis=1)``.
    """
    k = edges.shape[1] if edges.ndim == 2 else 0
    if k > 3 or edges.shape[0] < 64:
        edges.sort(axis=1)
        return edges
    for rnd in range(k):
        for i in range(rnd % 2, k - 1, 2):
            x, y = edges[:, i], edges[:, i + 1]
            lo = np.minimum(x, y)
            np.maximum(x, y, out=y)
            x[...] = lo
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


def _canonical(edges: np.ndarray, n: int, sorted_words=None) -> np.ndarray:
    """Rows sorted inside, then rows sorted lexicographically (reuses ``edges``' memory).

    When a row packs into one 64-bit word (k bit_length(n-1) <= 63: every
    k = 2 graph up to n = 2^31) the words themselves are sorted and unpacked,
    a plain ``np.sort`` several times faster than an argsort plus a gather.
    ``sorted_words``: the rows' packed words already sorted (the caller
    vouches that ``edges`` holds exactly those rows, sorted inside, and that
    one word per row is exact): then nothing is sorted at all.
    """
    edges = np.ascontiguousarray(edges, dtype=np.int64)
    if sorted_words is None:
        words = _pack(_sort_rows(edges), n)
        if len(words) > 1:
            return edges[np.lexsort(words[::-1])]
        w = words[0]
        w.sort()
    else:
        w = sorted_words.copy()
    bits = max(1, (n - 1).bit_length())
    k = edges.shape[1]
    w >>= np.uint64(bits * (max(1, 63 // bits) - k))
    mask = np.uint64((1 << bits) - 1)
    for j in range(k - 1, -1, -1):
        edges[:, j] = w & mask
        w >>= np.uint64(bits)
    return edges


def _one_word(n: int, k: int) -> bool:
    """Whether a row of k ids below n packs exactly into one word (keys are then exact)."""
    return k <= max(1, 63 // max(1, (n - 1).bit_length()))


def _repeat_mask(edges: np.ndarray) -> np.ndarray:
    """Rows (sorted inside) with a repeated vertex."""
    return np.any(edges[:, 1:] == edges[:, :-1], axis=1)


#: Repeated values up to which _key_dup_mask locates them by comparison passes.
_FEW_REPEATS = 4


def _key_dup_mask(keys: np.ndarray, sorted_keys=None) -> np.ndarray:
    """Entries equal to an earlier entry: all copies of a value but the first are marked.

    One ``np.sort`` of the keys (or the caller's ``sorted_keys``, the same
    values sorted) finds the repeated values (few); only the entries holding
    one of them are then located, no argsort: by one comparison pass per
    value when there are at most ``_FEW_REPEATS`` of them (the usual case: a
    handful of repeated rows; 2 ms at m = 2 x 10^6 against 30 ms for a
    binary search of every key), else by binary search (O(m log r)).
    """
    mask = np.zeros(keys.size, dtype=bool)
    if keys.size < 2:
        return mask
    s = np.sort(keys) if sorted_keys is None else sorted_keys
    repeated = s[1:][s[1:] == s[:-1]]
    if repeated.size == 0:
        return mask
    values = np.unique(repeated)
    if values.size <= _FEW_REPEATS:
        hit = keys == values[0]
        for v in values[1:]:
            hit |= keys == v
        cand = np.flatnonzero(hit)
    else:
        cand = np.flatnonzero(_in_sorted(keys, values))
    _, first = np.unique(keys[cand], return_index=True)
    mask[cand] = True
    mask[cand[first]] = False
    return mask


def _distinct_sorted(s: np.ndarray) -> np.ndarray:
    """The distinct values of the sorted array ``s`` (``np.unique`` without its sort)."""
    if s.size == 0:
        return s.copy()
    keep = np.empty(s.size, dtype=bool)
    keep[0] = True
    np.not_equal(s[1:], s[:-1], out=keep[1:])
    return s[keep]


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
            _sort_rows(t)
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


def _lex_ranks(edges: np.ndarray, n: int, k: int) -> np.ndarray:
    """Lexicographic ranks of sorted rows (inverse of :func:`_unrank_lex`)."""
    tables = _binom_tables(n, k)
    N = math.comb(n, k)
    colex = np.zeros(edges.shape[0], dtype=np.int64)
    for j in range(1, k + 1):
        colex += tables[j][(n - 1) - edges[:, k - j]]
    return (N - 1) - colex
