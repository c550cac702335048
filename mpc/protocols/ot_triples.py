"""Arithmetic Beaver triples without a dealer: Gilboa's OT multiplication between the holders.

Each holder i draws its own uniform a_i, b_i in Z_2^l (its private stream);
c = (sum a_i)(sum b_i) = sum_i a_i b_i + sum_{i != j} a_i b_j. Every cross
term a_i b_j is shared between i and j by l random OTs (Gilboa 1999), holder
j choosing with the bits of b_j: for bit k the sender i gets random (m0, m1),
the receiver m_{b_jk}; i sends the correction f_k = m0 - m1 + 2^k a_i, the
receiver keeps m_{b_jk} + b_jk f_k = m0 + b_jk 2^k a_i and the sender
-m0. Summed over k the two hold shares of a_i b_j.

Inputs: the session, ``holders`` ``(p,)`` party ids (the same for the whole
batch) and the batch ``shape``. Outputs: ``(a, b, c)``, each
``uint64 (p, *shape)``, row j held by ``holders[j]`` (in a run across
processes only local rows are meaningful).

Cost per triple: p (p - 1) l random OTs (IKNP: 128 bits each plus a pair's
base OTs, 3 rounds) and p (p - 1) l^2 bits of corrections (one round), all
offline; no dealer bit. With l = 40 and two holders: 80 OTs and 3,200
correction bits, against 240 bits from a dealer.

Threat model: static semi-honest holders, up to p - 1 of them corrupted; no
dealer (computational security of the OT extension). A correction is
f_k = m0 - m1 + 2^k a_i with m_{1 - b_jk} uniform and unknown to j, so it
reveals nothing of a_i; the OT hides b_j from i.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import ArrayLike

if TYPE_CHECKING:
    from mpc.session import Session

#: products per block of OTs (bounds the (pairs, block, l, 8) OT messages in memory)
BLOCK = 1 << 14


def ot_beaver_triples(session: Session, holders: ArrayLike,
                      shape: tuple) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Beaver triples ``(a, b, c = a b)`` among ``holders`` by OT (module docstring)."""
    h = np.asarray(holders, dtype=np.int64)
    if h.ndim != 1:
        raise ValueError("OT triples need the same holders for the whole batch; per-instance "
                         "holders take the dealer's triples (TrustedDealerPreprocessing)")
    ring = session.ring
    p, m = h.size, math.prod(shape)
    rng = session.stream("ot-triples")
    a = np.stack([rng.derive("a", int(j)).ring_elements(ring, (m,)) for j in h])
    b = np.stack([rng.derive("b", int(j)).ring_elements(ring, (m,)) for j in h])
    c = ring.mul(a, b)
    ii, jj = np.nonzero(~np.eye(p, dtype=bool))                # ordered pairs i != j
    with session.net.phase("ot-triples", offline=True):
        for lo in range(0, m, BLOCK):
            hi = min(m, lo + BLOCK)
            cross_s, cross_r = _cross_terms(session, h[ii], h[jj], a[ii, lo:hi], b[jj, lo:hi],
                                            rng.derive("block", lo))
            np.add.at(c[:, lo:hi], ii, cross_s)
            np.add.at(c[:, lo:hi], jj, cross_r)
    c &= ring.mask
    return a.reshape((p,) + tuple(shape)), b.reshape((p,) + tuple(shape)), \
        c.reshape((p,) + tuple(shape))


def _cross_terms(session, senders, receivers, a_s, b_r, rng):
    """Shares (sender's, receiver's) of a_s * b_r per pair and product: ``(P, n)`` each."""
    from mpc.ot import random_ot
    ring = session.ring
    l = ring.bits
    P, n = a_s.shape
    k = np.arange(l, dtype=np.uint64)
    choices = ((b_r[:, :, None] >> k) & np.uint64(1)).astype(np.uint8)       # (P, n, l)
    m0, m1, mc = random_ot(session, senders, receivers, choices.reshape(P, n * l),
                           rng_sender=rng.derive("senders"),
                           rng_receiver=rng.derive("receivers"), length=8, offline=True)
    w = [np.ascontiguousarray(x).view(np.uint64).reshape(P, n, l) & ring.mask
         for x in (m0, m1, mc)]
    f = (w[0] - w[1] + (a_s[:, :, None] << k)) & ring.mask
    with session.net.round():
        session.net.send(senders, receivers, f, l, offline=True)
    mine = (w[2] + choices.astype(np.uint64) * f) & ring.mask
    return (-w[0].sum(axis=2, dtype=np.uint64)) & ring.mask, \
        mine.sum(axis=2, dtype=np.uint64) & ring.mask
