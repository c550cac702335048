"""The result type of every sampler (:class:`Hypergraph`) and argument validation.

Part of :mod:`ustat.sampling` (import from there).
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

#: Largest C(n, k) that :func:`~ustat.sampling.all_edges` (and the complement step of
#: :func:`~ustat.sampling.balanced`) will materialise.
ENUMERATION_LIMIT = 10**7

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
