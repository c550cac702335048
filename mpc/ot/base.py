"""Chou-Orlandi "simplest OT" with transcript hashing, batched over many party pairs.

Protocol (Chou, Orlandi, LATINCRYPT 2015, "The simplest protocol for
oblivious transfer", Fig. 1, random-OT form), for a batch of OTs between a
base sender S and a base receiver R, in a group of prime order n with
generator G (:mod:`mpc.ot.group`):

1. S draws a in [1, n-1] and sends A = aG. One A per party for the whole
   batch and for all its receivers: the construction allows reusing A, and
   every key below hashes A and B, so keys of different OTs stay independent.
2. For its OT number k with choice c_k, R draws b_k and sends
   B_k = b_k G + c_k A; its key is H(k, A, B_k, b_k A).
3. S refuses B_k = A (then a B_k - aA is the point at infinity and k1 a
   public constant) and computes k0 = H(k, A, B_k, a B_k) and
   k1 = H(k, A, B_k, a B_k - aA) (-aA computed once per batch).
   Then k_{c_k} is R's key and k_{1-c_k} is hidden from R (CDH).

H is SHA-256 over a domain string, the OT's index k in the batch and the
three 33-byte encodings, truncated to 128 bits (:func:`mpc.ot.group.kdf`):
the key hashes the transcript (A, B_k) and the index, not only the shared
point, as the repaired variants of the protocol do (Hauck, Loss, ePrint
2017/1011): a receiver that sends one B for two OTs under the same A gets
unrelated keys for them.

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

Processes: each side computes only with its own scalars and what it
received. A process computes A for the base senders it holds, B and the
receiver's key for the OTs whose base receiver it holds (decoding A from the
received encoding when its sender runs elsewhere), and the sender's keys
for the OTs whose base sender it holds (from the received B); the other rows
stay zero. A and the B points travel as their 33-byte encodings. An OT
whose peer's process vanished (a dropout the transport noted,
:meth:`mpc.comm.network.Network.vanished`: what it owed reads as zeros,
never a point) is skipped: its keys stay zero and its B is zeros; the
caller leaves the pair's result out.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import ArrayLike

from mpc.ot.group import POINT_BYTES, SCALAR_RAW_BYTES
from mpc.ot.messages import send_groups

if TYPE_CHECKING:
    from mpc.comm.network import Network
    from mpc.ot.group import Group


class BaseOTBatch:
    """Chou-Orlandi state for a batch of base-OT groups (one group = one (S, R) pair).

    ``bs``, ``br``: base sender / receiver party id per group ``(G,)``;
    ``sender_key``: ``(G,)`` integers naming whose scalar ``a`` a group uses
    (groups with equal keys share one A); ``counts``: OTs per group.
    """

    def __init__(self, grp: Group, bs: ArrayLike, br: ArrayLike, sender_key: ArrayLike,
                 counts: ArrayLike):
        self.grp = grp
        self.bs = np.asarray(bs, dtype=np.int64)
        self.br = np.asarray(br, dtype=np.int64)
        self.counts = np.asarray(counts, dtype=np.int64)
        uniq, self._inv = np.unique(np.asarray(sender_key), return_inverse=True)
        self.n_senders = uniq.size
        self.sender_roles = uniq % 2          # the caller's convention: key = 2 party + role
        self._who = np.repeat(self._inv, self.counts)       # sender key of every OT
        self._setup: list[Any] = []   # per sender: (a, A, encoding of A, -aA), from send_a

    def _local_ots(self, local_groups: np.ndarray) -> np.ndarray:
        """The OTs of the groups ``local_groups`` (a mask) as positions, in order."""
        return np.flatnonzero(np.repeat(local_groups, self.counts))

    def send_a(self, net: Network, raw_a: np.ndarray, offline: bool | None) -> np.ndarray:
        """Step 1: every local base sender draws a (``raw_a``: 40 bytes per sender), sends A.

        Returns the encodings of A per group ``uint8 (G, 33)``: the rows of
        groups whose sender runs elsewhere arrive at the end of the round.
        """
        g = self.grp
        raw = raw_a.tobytes()
        self._mine_s = np.asarray(net.is_local(self.bs), dtype=bool)
        self._mine_r = np.asarray(net.is_local(self.br), dtype=bool)
        local = np.zeros(self.n_senders, dtype=bool)
        local[self._inv[self._mine_s]] = True
        self._setup = [None] * self.n_senders
        enc = np.zeros((self.n_senders, POINT_BYTES), dtype=np.uint8)
        for u in np.flatnonzero(local).tolist():       # one curve call per local sender
            a = g.scalar(raw[u * SCALAR_RAW_BYTES:(u + 1) * SCALAR_RAW_BYTES])
            self._setup[u] = (a,) + g.setup(a)
            enc[u] = np.frombuffer(self._setup[u][2], dtype=np.uint8)
        self.a_enc = enc[self._inv]
        net.send(self.bs, self.br, self.a_enc, 8, offline=offline)
        return self.a_enc

    def _a_points(self, ots: np.ndarray) -> dict:
        """Sender key -> (A, its encoding) for the OTs ``ots``: the sender's own point where it
        runs here, else decoded from the encoding received (once per sender)."""
        points = {}
        group_of = np.repeat(np.arange(self.counts.size), self.counts)
        keys, first = np.unique(self._who[ots], return_index=True)
        for u, k in zip(keys.tolist(), ots[first].tolist()):   # loop over senders (few)
            if self._setup[u] is not None:
                points[u] = self._setup[u][1], self._setup[u][2]
            else:
                enc = self.a_enc[group_of[k]].tobytes()
                points[u] = self.grp.point(enc), enc
        return points

    def choose(self, net: Network, choices: np.ndarray, raw_b: np.ndarray,
               offline: bool | None) -> np.ndarray:
        """Step 2: receivers send B_k for every OT; returns their keys ``uint8 (N, 16)``.

        ``choices``: ``(N,)`` bits, OTs ordered by group; ``raw_b``: 40 random
        bytes per OT from the receivers' streams. Only the OTs of local
        receivers are computed (the other rows: zero); one message per group.
        """
        g = self.grp
        n = int(self.counts.sum())
        self.b_enc = np.zeros((n, POINT_BYTES), dtype=np.uint8)
        keys = np.zeros((n, 16), dtype=np.uint8)
        ots = self._local_ots(self._mine_r & ~net.vanished(self.bs))
        if ots.size:
            points = self._a_points(ots)
            raw = raw_b.tobytes()
            cs = choices[ots].tolist()
            encs, ks = [], []
            for k, u, c in zip(ots.tolist(), self._who[ots].tolist(), cs):
                A, a_enc = points[u]
                b = g.scalar(raw[k * SCALAR_RAW_BYTES:(k + 1) * SCALAR_RAW_BYTES])
                b_enc, key = g.choose(A, a_enc, b, c, k)
                encs.append(b_enc)
                ks.append(key)
            sel = slice(None) if ots.size == n else ots
            self.b_enc[sel] = np.frombuffer(b"".join(encs), dtype=np.uint8).reshape(-1, POINT_BYTES)
            keys[sel] = np.frombuffer(b"".join(ks), dtype=np.uint8).reshape(-1, 16)
        self._b_landing = send_groups(net, self.br, self.bs, self.b_enc, self.counts,
                                      offline=offline)
        self._net = net
        return keys

    def sender_keys(self) -> tuple[np.ndarray, np.ndarray]:
        """Step 3 (local, after the round of step 2): the local senders' key pairs ``(k0, k1)``,
        each ``uint8 (N, 16)`` (zero rows for senders elsewhere)."""
        self._b_landing.land()
        g = self.grp
        n = int(self.counts.sum())
        k0 = np.zeros((n, 16), dtype=np.uint8)
        k1 = np.zeros((n, 16), dtype=np.uint8)
        ots = self._local_ots(self._mine_s & ~self._net.vanished(self.br))
        if ots.size:
            setup = self._setup
            b = self.b_enc.tobytes()
            x0s, x1s = [], []
            for k, u in zip(ots.tolist(), self._who[ots].tolist()):
                a, _, a_enc, neg_aa = setup[u]
                x0, x1 = g.keys(a, a_enc, neg_aa, b[k * POINT_BYTES:(k + 1) * POINT_BYTES], k)
                x0s.append(x0)
                x1s.append(x1)
            sel = slice(None) if ots.size == n else ots
            k0[sel] = np.frombuffer(b"".join(x0s), dtype=np.uint8).reshape(-1, 16)
            k1[sel] = np.frombuffer(b"".join(x1s), dtype=np.uint8).reshape(-1, 16)
        return k0, k1
