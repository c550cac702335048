"""Chou-Orlandi "simplest OT" with transcript hashing, batched over many party pairs.

Protocol (Chou, Orlandi, LATINCRYPT 2015, "The simplest protocol for
oblivious transfer", Fig. 1, random-OT form), for a batch of OTs between a
base sender S and a base receiver R, in a group of prime order n with
generator G (:mod:`mpc.gc.ot.group`):

1. S draws a in [1, n-1] and sends A = aG. One A per party for the whole
   batch and for all its receivers: the construction allows reusing A, and
   every key below hashes A and B, so keys of different OTs stay independent.
2. For its OT number k with choice c_k, R draws b_k and sends
   B_k = b_k G + c_k A; its key is H(A, B_k, b_k A).
3. S computes, for every B_k, k0 = H(A, B_k, a B_k) and
   k1 = H(A, B_k, a B_k - aA) (-aA computed once per batch).
   Then k_{c_k} is R's key and k_{1-c_k} is hidden from R (CDH).

H is SHA-256 over a domain string and the three 33-byte encodings,
truncated to 128 bits (:func:`mpc.gc.ot.group.kdf`): the key hashes the
transcript (A, B_k), not only the shared point, as the repaired variants of
the protocol do (Hauck, Loss, ePrint 2017/1011).

Cost: 264 bits (one encoded point) per S -> R pair for A, plus 264 bits per
OT for B; 2 rounds (A, then B). Computation: 2 scalar multiplications per
base sender (A and -aA); per OT, 1 fixed-base + 1 variable-base
multiplication (+ 1 addition when c = 1) for R and 1 variable-base
multiplication + 1 addition for S, each one call into the curve library.

Security: static semi-honest adversary; H a random oracle; CDH hard in the
group. Known caveats of the construction: (1) the original UC proof is
flawed (Genc, Iovino, Rial, "'The simplest protocol for oblivious
transfer' revisited", ePrint 2017/370): as published the protocol is not
UC-secure against active adversaries (e.g. the receiver's choice cannot be
extracted), and repairs need more than transcript hashing; only
semi-honest security is claimed here. Against active adversaries use a
maliciously secure base OT (Hauck-Loss, or Masny-Rindal, ePrint 2019/706).
(2) Over a group with a cofactor (Curve25519, edwards25519) small-subgroup
points must be rejected; both backends here have cofactor 1 and decode only
valid points. (3) Reusing A across receivers is safe for semi-honest
parties only; a malicious receiver could correlate its B with another
receiver's.
"""

from __future__ import annotations

import numpy as np

from .group import POINT_BITS, POINT_BYTES, SCALAR_RAW_BYTES


def views_payload(net, flat: np.ndarray, counts: np.ndarray):
    """One payload per message (group) for recorded views; ``None`` when views are off."""
    if not net.record_views:
        return None
    parts = np.split(flat, np.cumsum(counts)[:-1])
    out = np.empty(len(parts), dtype=object)
    for i, part in enumerate(parts):
        out[i] = part
    return out


class BaseOTBatch:
    """Chou-Orlandi state for a batch of base-OT groups (one group = one (S, R) pair).

    ``bs``, ``br``: base sender / receiver party id per group ``(G,)``;
    ``sender_key``: ``(G,)`` integers naming whose scalar ``a`` a group uses
    (groups with equal keys share one A); ``counts``: OTs per group.
    """

    def __init__(self, grp, bs, br, sender_key, counts):
        self.grp = grp
        self.bs = np.asarray(bs, dtype=np.int64)
        self.br = np.asarray(br, dtype=np.int64)
        self.counts = np.asarray(counts, dtype=np.int64)
        uniq, self._inv = np.unique(np.asarray(sender_key), return_inverse=True)
        self.n_senders = uniq.size
        self.sender_roles = uniq % 2          # the caller's convention: key = 2 party + role
        self._setup = None

    def send_a(self, net, raw_a: np.ndarray, offline):
        """Step 1: every base sender draws a (from ``raw_a``, 40 bytes per sender) and sends A."""
        g = self.grp
        raw = raw_a.tobytes()
        self._setup = []
        for u in range(self.n_senders):
            a = g.scalar(raw[u * SCALAR_RAW_BYTES:(u + 1) * SCALAR_RAW_BYTES])
            self._setup.append((a,) + g.setup(a))
        enc = np.frombuffer(b"".join(s[2] for s in self._setup), dtype=np.uint8)
        enc = enc.reshape(self.n_senders, POINT_BYTES)[self._inv]
        net.send(self.bs, self.br, enc, 8, offline=offline)
        return enc

    def choose(self, net, choices: np.ndarray, raw_b: np.ndarray, offline):
        """Step 2: receivers send B_k for every OT; returns their keys ``uint8 (N, 16)``.

        ``choices``: ``(N,)`` bits, OTs ordered by group; ``raw_b``: 40 random
        bytes per OT from the receivers' streams.
        """
        g = self.grp
        setup = self._setup
        who = np.repeat(self._inv, self.counts).tolist()
        raw = raw_b.tobytes()
        encs, keys = [], []
        for k, (u, c) in enumerate(zip(who, choices.tolist())):
            _, A, a_enc, _ = setup[u]
            b = g.scalar(raw[k * SCALAR_RAW_BYTES:(k + 1) * SCALAR_RAW_BYTES])
            b_enc, key = g.choose(A, a_enc, b, c)
            encs.append(b_enc)
            keys.append(key)
        self._b = b"".join(encs)
        b_arr = np.frombuffer(self._b, dtype=np.uint8).reshape(-1, POINT_BYTES)
        net.send_bits(self.br, self.bs, self.counts * POINT_BITS,
                      views_payload(net, b_arr, self.counts), offline=offline)
        return np.frombuffer(b"".join(keys), dtype=np.uint8).reshape(-1, 16)

    def sender_keys(self):
        """Step 3 (local): the senders' key pairs ``(k0, k1)``, each ``uint8 (N, 16)``."""
        g = self.grp
        setup = self._setup
        who = np.repeat(self._inv, self.counts).tolist()
        b = self._b
        k0, k1 = [], []
        for k, u in enumerate(who):
            a, _, a_enc, neg_aa = setup[u]
            x0, x1 = g.keys(a, a_enc, neg_aa, b[k * POINT_BYTES:(k + 1) * POINT_BYTES])
            k0.append(x0)
            k1.append(x1)
        return (np.frombuffer(b"".join(k0), dtype=np.uint8).reshape(-1, 16),
                np.frombuffer(b"".join(k1), dtype=np.uint8).reshape(-1, 16))
