"""Hypergraph samplers: which k-subsets of the n parties form the edge set E.

An incomplete U-statistic of degree k averages the kernel over a set E of
k-subsets ("edges") of the n parties instead of all C(n, k) of them. The
sampler decides E; its maximal vertex degree delta_G^max drives the DP noise
scale of the U-MPC protocol (Sinh & Ramon, Section 4 and Appendix D), and its
shape drives the variance of the estimate (Section 6.2.3, Table 2 compares
BalancedSamp, Bernoulli sampling and sampling without replacement).

Samplers (all return a :class:`Hypergraph`, all randomness from a
:class:`mpc.arith.rng.CSPRNG`):

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

Modules: :mod:`.hypergraph` (the result type, argument checks),
:mod:`.combinatorics` (ranking, packing, canonical form, duplicates),
:mod:`.without_replacement` (``all_edges``, ``uniform``, ``bernoulli``),
:mod:`.balanced_samp` (BalancedSamp and its switch chain). Every public name
is importable from ``ustat.sampling``.
"""

from __future__ import annotations

import numbers
from collections.abc import Callable
from typing import TYPE_CHECKING

from .balanced_samp import balanced
from .combinatorics import _lex_ranks, _random_ksubsets, _unrank_lex  # noqa: F401 (tests)
from .hypergraph import ENUMERATION_LIMIT, Hypergraph, n_subsets
from .without_replacement import _binomial, all_edges, bernoulli, uniform  # noqa: F401 (tests)

if TYPE_CHECKING:
    from mpc.arith.rng import RngLike

__all__ = [
    "ENUMERATION_LIMIT",
    "SAMPLERS",
    "Hypergraph",
    "all_edges",
    "balanced",
    "bernoulli",
    "n_subsets",
    "sample",
    "uniform",
]

#: Names accepted by :func:`sample`.
SAMPLERS = ("balanced", "uniform", "bernoulli", "all")

_DISPATCH: dict[str, Callable[..., Hypergraph]] = {
    "balanced": balanced,
    "uniform": uniform,
    "bernoulli": bernoulli,
}


def sample(name: str, n: int, m: int | float | None, k: int, rng: RngLike = None) -> Hypergraph:
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
