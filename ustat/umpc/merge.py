"""Merging the chunks of a U-MPC run into the calling process: shares and traffic.

After steps 1 and 2 of Protocol 3.1 ran on a chunk of edges
(:func:`ustat.umpc.chunk.run_chunk`), the calling process adds the chunk's
shares of f(x_e) to each member's running sum, z_i += sum over the chunk's
edges e containing i of i's share of f(x_e) (mod 2^64, reduced mod 2^l once
at the end), and the chunk's traffic to the session's network under the map
slot ``e k + j`` -> party ``edges[e, j]``. Both are sums, so their result
does not depend on the order of the chunks; :func:`merge_chunk` is still
called in chunk order, so recorded views keep their order.

Cost per chunk of m_c edges: k scatter-adds of m_c words
(:func:`add_shares`), and :meth:`mpc.comm.network.Network.absorb` of the chunk's
traffic (O(m_c k) ids kept, counted later). Nothing of size n per chunk.

Why ``np.add.at``: with numpy 2 its indexed loop is a tight scatter-add for
native integer types (about 7 ns per word at m_c = 2^17, n = 10^6). A
``np.bincount`` would be exact only on 32-bit halves in float64 and costs
O(n) per chunk (10 to 20 times slower for a chunk much smaller than n), and
a sort with ``np.add.reduceat`` costs O(m_c log m_c) (12 times slower). The
adds run on ``int64`` views (two's complement: the same bits as uint64
arithmetic mod 2^64) with contiguous index columns, which numpy's fast path
takes about 1.6 times faster than strided uint64.

Threat model: none of its own; this is local arithmetic on one party's own
shares (simulated in one process).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from mpc.comm.network import Network

    from .chunk import ChunkResult


def add_shares(z: np.ndarray, edges: np.ndarray, shares: np.ndarray) -> np.ndarray:
    """``z[edges[e, j]] += shares[j, e]`` for every edge e and member j, mod 2^64, in place.

    ``z``: uint64 (n,), C-contiguous (each party's running sum); ``edges``:
    (m_c, k) integer party ids in 0..n-1; ``shares``: uint64 (k, m_c). Equal
    ids (a party in several edges of the chunk) accumulate. Returns ``z``.
    Cost: k ``np.add.at`` of m_c words, O(m_c k).
    """
    edges = np.asarray(edges)
    shares = np.asarray(shares)
    if not (isinstance(z, np.ndarray) and z.dtype == np.uint64 and z.ndim == 1
            and z.flags.c_contiguous and z.flags.writeable):
        raise TypeError("z must be a writable, contiguous 1-d uint64 array")
    if edges.ndim != 2 or shares.shape != (edges.shape[1], edges.shape[0]):
        raise ValueError(f"shares must have shape (k, m_c) = {edges.shape[::-1]} for edges of "
                         f"shape {edges.shape}, got {shares.shape}")
    if shares.dtype != np.uint64:
        raise TypeError(f"shares must be uint64, got {shares.dtype}")
    if edges.size and (edges.min() < 0 or edges.max() >= z.size):
        raise ValueError(f"edges must hold party ids in 0..{z.size - 1}")
    zi = z.view(np.int64)
    for j in range(edges.shape[1]):
        np.add.at(zi, np.ascontiguousarray(edges[:, j], dtype=np.intp),
                  np.ascontiguousarray(shares[j]).view(np.int64))
    return z


def merge_chunk(net: Network, z: np.ndarray, edges: np.ndarray, result: ChunkResult,
                z_aux: np.ndarray | None = None) -> None:
    """Merge one chunk's result: its traffic into ``net`` (in a lane), its shares into ``z``
    and its edge sums' shares (if any) into the rows of ``z_aux`` (uint64 (a, n)).

    ``edges``: the chunk's (m_c, k) global party ids (slot ``e k + j`` of the
    chunk's traffic is ``edges[e, j]``); ``result``: its
    :class:`~ustat.umpc.chunk.ChunkResult`. Call inside ``net.parallel()``,
    in chunk order.
    """
    with net.lane():
        net.absorb(result.traffic, edges.ravel())
    add_shares(z, edges, result.shares)
    if result.aux_shares is not None:
        if z_aux is None or z_aux.shape[0] != result.aux_shares.shape[0]:
            raise ValueError("the chunk has edge sums: merge_chunk needs z_aux with a row each")
        for row, shares in zip(z_aux, result.aux_shares):
            add_shares(row, edges, shares)
