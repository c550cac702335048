"""Exact replace-one sensitivity of the ECDF tree, for every N and branching b.

Barczewski, Mawass, Ramon, Theorem 3.1, made exact (see :mod:`ustat.ecdf.tree`
for why the sensitivity in node units is a graph diameter). The tree over N
leaves has, at level l = 0..L (L = ceil(log_b N)), the nodes covering leaves
[j b^l, min((j + 1) b^l, N)). Seen as edges s -- e between the boundary points
0..N (the point N stands for "above every leaf": a node that runs past the
last leaf only shifts leaves < N, so its right end is N), a node-noise shift
absorbs a record's move from grid rank t1 to t2 iff it is a unit flow from
t1 to t2, so

    Delta(N, b) = diameter of that boundary graph.

When N is a power of b this is the full tree's diameter (L for b = 2, L >= 1);
otherwise the last subtree of every level is truncated and the diameter can
be smaller: Bank's age on 78 thresholds (b = 2, L = 7) has Delta = 6, not 7.

:func:`tree_sensitivity` computes it by a DP over levels: a (possibly
truncated) subtree of depth d is summarised by the Pareto-maximal pairs
(dist(a, left end), dist(a, right end)) over its boundary points a and by its
diameter. Its c = ceil(N_sub / b^(d-1)) children (c - 1 full ones, the last
possibly truncated) have boundaries 0, B, .., (c - 1) B, N_sub, which with
the subtree's own edge form a cycle of length c + 1; a path between two
points of different children leaves each through one of its ends. Full
subtrees are memoised, so one call costs O(L b^2 |S|^2) with |S| (the Pareto
set) a few pairs. :func:`brute_force_sensitivity` is the independent check:
BFS from every boundary point (scipy's csgraph), O(N^2 b / (b - 1)).
"""

from __future__ import annotations

import functools

import numpy as np

__all__ = ["boundary_edges", "brute_force_sensitivity", "tree_sensitivity"]

_LEAF = (frozenset({(0, 1), (1, 0)}), 1)


def _levels(n_points: int, b: int) -> int:
    L, cap = 0, 1
    while cap < n_points:
        cap *= b
        L += 1
    return L


def _combine(b_children, states):
    """The state of a subtree from its children's states (in order), module docstring."""
    c = len(states)
    cyc = np.array([[min(abs(i - j), c + 1 - abs(i - j)) for j in range(c + 1)]
                    for i in range(c + 1)])
    rows: list[np.ndarray] = []
    owner: list[int] = []
    diam = max(d for _, d in states)
    for k, (pairs, _) in enumerate(states):
        for p, q in pairs:
            rows.append(np.minimum(p + cyc[k], q + cyc[k + 1]))
            owner.append(k)
    d = np.array(rows)                                   # (points, c + 1) distances to boundaries
    child = np.array(owner)
    best = np.full((d.shape[0], d.shape[0]), np.iinfo(np.int64).max)
    for e in range(c + 1):
        best = np.minimum(best, d[:, e][:, None] + d[:, e][None, :])
    cross = child[:, None] != child[None, :]
    if cross.any():
        diam = max(diam, int(best[cross].max()))
    ends = {(int(r[0]), int(r[c])) for r in d}
    pairs = frozenset(pq for pq in ends if not any(o != pq and o[0] >= pq[0] and o[1] >= pq[1]
                                                   for o in ends))
    return pairs, diam


@functools.cache
def _full(b: int, depth: int):
    if depth == 0:
        return _LEAF
    return _combine(b, [_full(b, depth - 1)] * b)


def _subtree(n_points: int, b: int, depth: int):
    if n_points == 1:
        return _LEAF
    depth = min(depth, _levels(n_points, b))   # higher levels only repeat the edge 0 -- N
    B = b ** (depth - 1)
    c = -(-n_points // B)
    last = n_points - (c - 1) * B
    states = [_full(b, depth - 1)] * (c - 1)
    states.append(_full(b, depth - 1) if last == B else _subtree(last, b, depth - 1))
    return _combine(b, states)


def tree_sensitivity(n_points: int, branching: int = 2) -> int:
    """Delta(N, b): the diameter of the boundary graph of the tree over N leaves (exact)."""
    n_points, b = int(n_points), int(branching)
    if n_points < 1 or b < 2:
        raise ValueError(f"need N >= 1 and branching >= 2, got N = {n_points}, b = {b}")
    return _subtree(n_points, b, _levels(n_points, b))[1]


def boundary_edges(n_points: int, branching: int = 2) -> np.ndarray:
    """(M, 2) int64 edges s -- e of every tree node between boundary points 0..N."""
    N, b = int(n_points), int(branching)
    out = []
    for lev in range(_levels(N, b) + 1):
        w = b ** lev
        s = np.arange(0, N, w, dtype=np.int64)
        out.append(np.stack([s, np.minimum(s + w, N)], axis=1))
    return np.concatenate(out)


def brute_force_sensitivity(n_points: int, branching: int = 2) -> int:
    """Delta(N, b) by BFS from every boundary point (scipy csgraph; the independent check)."""
    import scipy.sparse as sp
    from scipy.sparse.csgraph import shortest_path

    N = int(n_points)
    e = boundary_edges(N, branching)
    g = sp.coo_matrix((np.ones(len(e)), (e[:, 0], e[:, 1])), shape=(N + 1, N + 1)).tocsr()
    return int(shortest_path(g, directed=False, unweighted=True).max())
