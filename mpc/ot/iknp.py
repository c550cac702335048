"""IKNP OT extension (semi-honest), vectorized over OTs and over party pairs.

Protocol (Ishai, Kilian, Nissim, Petrank, CRYPTO 2003, section 3.1, in the
notation of Asharov-Lindell-Schneider-Zohner CCS 2013, Protocol 4) for one
pair with M OTs, extension sender S, extension receiver R, choices r (M bits),
kappa = 128:

1. Base OTs with the roles reversed: R is the base sender with seed pairs
   (k_i^0, k_i^1), S the base receiver with choice bits s = (s_1..s_128)
   and learns k_i^{s_i} (:mod:`mpc.ot.base`).
2. R expands t^i = G(k_i^0) and sends u^i = t^i ^ G(k_i^1) ^ r (128 rows of
   M bits: the IKNP matrix).
3. S computes q^i = G(k_i^{s_i}) ^ s_i u^i = t^i ^ s_i r. Transposing
   (:mod:`mpc.ot.transpose`) gives, per OT j, the 128-bit rows with
   q_j = t_j ^ r_j s: a correlated OT with offset s.
4. Random OT: S outputs H(j, q_j), H(j, q_j ^ s); R outputs H(j, t_j)
   (:mod:`mpc.ot.prg`). A correlated OT with a given offset Delta takes
   s = Delta and outputs q_j, t_j without hashing (as EMP-toolkit's IKNP
   ``send_cot`` does for free-XOR labels).

G is the fixed-key AES PRG and H the fixed-key AES correlation-robust hash
of :mod:`mpc.ot.prg`.

Batching across pairs: every pair's M OTs are padded to whole 128-bit
blocks and laid side by side as the columns of one 128 x (sum of blocks)
matrix; the PRG for all seeds and blocks is one AES call, the transpose one
call, the hash one call. The padding is local: only M bits per row are sent.

Cost per pair: the base OTs (128 of them: 264 + 128 * 264 bits, 2 rounds)
plus 128 * M bits for u in one round (3 rounds for a random or correlated
OT). Computation per OT: 3 AES blocks of PRG (2 at R, 1 at S), one
transpose of 128 bits on each side, and 1 (R) + 2 (S) AES blocks of hash
for random OTs.

Security: semi-honest S and R (IKNP's passive protocol); G a PRG and H
correlation robust (random-permutation model for fixed-key AES); the base
OT as in :mod:`mpc.ot.base`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from mpc.ot.prg import mmo, sigma_into
from mpc.ot.transpose import transpose_bits

if TYPE_CHECKING:
    from mpc.comm.network import Network
    from mpc.ot.messages import Landing

KAPPA = 128
_U64 = np.uint64


class Layout:
    """Column layout of a batch of pairs with ``counts[g]`` OTs each.

    Pair g owns blocks ``first[g] .. first[g] + blocks[g] - 1`` (128 columns
    each); OT j of pair g is column ``128 first[g] + j``.
    """

    def __init__(self, counts: np.ndarray):
        counts = np.asarray(counts, dtype=np.int64)
        self.counts = counts
        self.blocks = -(-counts // KAPPA)
        self.first = np.concatenate([[0], np.cumsum(self.blocks)[:-1]]).astype(np.int64)
        self.n_blocks = int(self.blocks.sum())
        self.group_of_block = np.repeat(np.arange(counts.size), self.blocks)
        self.counter = np.arange(self.n_blocks, dtype=np.int64) - self.first[self.group_of_block]
        n = int(counts.sum())
        if n == self.n_blocks * KAPPA or counts.size == 1 or not (counts[:-1] % KAPPA).any():
            self.columns = slice(0, n)              # padding only at the end
        else:
            start = np.concatenate([[0], np.cumsum(counts)[:-1]])
            gid = np.repeat(np.arange(counts.size), counts)
            self.columns = KAPPA * self.first[gid] + (np.arange(n) - start[gid])


def prg_matrix(seeds: np.ndarray, layout: Layout) -> np.ndarray:
    """Rows ``G(seed_{g,i})`` laid out as ``uint64 (128, n_blocks, 2)`` (one AES call).

    ``seeds``: ``uint8 (G, 128, 16)``: pair g's 128 seeds.
    """
    words = np.ascontiguousarray(seeds).view(_U64).reshape(-1, KAPPA, 2)
    sig = sigma_into(words, np.empty_like(words)).transpose(1, 0, 2)
    if words.shape[0] == 1:
        buf = np.empty((KAPPA, layout.n_blocks, 2), dtype=_U64)
        buf[...] = sig[:, :1, :]
    else:
        buf = np.ascontiguousarray(np.take(sig, layout.group_of_block, axis=1))
    buf[:, :, 0] ^= layout.counter.astype(_U64)
    return mmo(buf)


def _pack_columns(bits: np.ndarray, layout: Layout) -> np.ndarray:
    """Per-OT bits ``(N,)`` as one padded row ``uint64 (n_blocks, 2)``."""
    padded = np.zeros(layout.n_blocks * KAPPA, dtype=np.uint8)
    padded[layout.columns] = bits
    packed = np.packbits(padded, bitorder="little")
    return packed.view(_U64).reshape(layout.n_blocks, 2)


def receiver_matrix(k0: np.ndarray, k1: np.ndarray, r: np.ndarray,
                    layout: Layout) -> tuple[np.ndarray, np.ndarray]:
    """R's step 2: ``(t, u)``, both ``uint64 (128, n_blocks, 2)``; u is what R sends."""
    t = prg_matrix(k0, layout)
    u = prg_matrix(k1, layout)
    u ^= t
    u ^= _pack_columns(r, layout)[None]
    return t, u


def sender_matrix(ks: np.ndarray, s_bits: np.ndarray, u: np.ndarray,
                  layout: Layout) -> np.ndarray:
    """S's step 3: ``q^i = G(k_i^{s_i}) ^ s_i u^i`` as ``uint64 (128, n_blocks, 2)``.

    ``ks``: ``uint8 (G, 128, 16)`` the seeds S received; ``s_bits``: ``(G, 128)``.
    """
    q = prg_matrix(ks, layout)
    mask = np.zeros((KAPPA, layout.n_blocks), dtype=_U64)
    mask -= s_bits.T.astype(_U64)[:, layout.group_of_block]     # all-ones where s_i = 1
    q ^= u & mask[:, :, None]
    return q


def rows(matrix: np.ndarray, layout: Layout) -> np.ndarray:
    """Transpose a ``(128, n_blocks, 2)`` matrix to the per-OT rows ``uint8 (N, 16)``."""
    flat = matrix.view(np.uint8).reshape(KAPPA, layout.n_blocks * 16)
    return transpose_bits(flat)[layout.columns]


def send_u(net: Network, senders: np.ndarray, receivers: np.ndarray, u: np.ndarray,
           layout: Layout, *, offline: bool | None, landing: Landing) -> None:
    """Step 2's message: pair g's M_g columns of u (128 rows of M_g bits), one message per pair.

    Counted as 128 M_g bits. A pair whose M_g is a multiple of 8 sends the
    bytes of its columns (a view of ``u`` when it is the only pair of its size,
    so the received matrix lands in ``u`` itself); otherwise the bits
    themselves (one per element, packed on the wire). Copies are written back
    into ``u`` by ``landing`` after the round, so S reads the received u from
    ``u`` in every case; padding columns are not sent.
    """
    u8 = u.view(np.uint8).reshape(KAPPA, 16 * layout.n_blocks)
    counts = layout.counts
    for M in np.unique(counts).tolist():              # loop over distinct sizes (few)
        sel = np.flatnonzero(counts == M)
        nb = -(-M // 8)
        if M % 8 == 0 and sel.size == 1:
            f = 16 * int(layout.first[sel[0]])
            net.send(senders[sel], receivers[sel], u8[None, :, f:f + nb], 8, offline=offline)
            continue
        cols = ((16 * layout.first[sel])[:, None] + np.arange(nb)).reshape(-1)
        got = u8[:, cols].reshape(KAPPA, sel.size, nb).transpose(1, 0, 2)
        if M % 8 == 0:
            payload, bits = np.ascontiguousarray(got), 8
        else:
            payload, bits = np.unpackbits(got, axis=2, count=M, bitorder="little"), 1
        net.send(senders[sel], receivers[sel], payload, bits, offline=offline)
        landing.keep(_u_writer(u8, cols, payload, bits == 1))


def _u_writer(u8, cols, payload, as_bits: bool):
    def write_back():
        by = np.packbits(payload, axis=2, bitorder="little") if as_bits else payload
        u8[:, cols] = by.transpose(1, 0, 2).reshape(KAPPA, -1)
    return write_back
