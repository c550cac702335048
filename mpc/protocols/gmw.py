"""Boolean GMW among p holders on bit-sliced XOR shares: openings, AND gates, bits to Z_2^l.

Shares are plain ``uint64`` arrays, party axis first: ``(p, *rows, W)``. A
batch of I instances is bit-sliced as in :mod:`mpc.gc.plain`: instance i is
bit i % 64 of word i // 64, so one numpy operation on a row acts on 64
instances; bits past I in the last word stay 0 (``GMW.mask``). A message
carries the ceil(I/8) bytes of each row that hold instances (counted as
sent: at most 7 bits of padding per row). Holder j's XOR share of a row is
``shares[j]``.

Protocol (Goldreich, Micali, Wigderson 1987, with Beaver's triples):

* **AND** of XOR-shared x, y with a triple (a, b, c = a AND b): the holders
  open d = x XOR a and e = y XOR b (one opening for all gates of a layer),
  then z_j = c_j XOR (d AND b_j) XOR (e AND a_j), holder 0 also XORs d AND e.
* **Opening.** p = 2: the two holders swap their rows (1 round). p > 2: the
  rows of an opening are cut into min(p, rows) blocks, each with its own
  *king* (the kings rotate over the holders); every holder sends a block to
  its king, who sends the XOR back to all (2 rounds; 2 (p - 1) messages per
  block instead of the p (p - 1) of an all-to-all opening, so a holder
  sends and receives O(bits opened) plus its kings' share). What a king
  receives, x_j XOR a_j for every j, is what every holder would receive in
  an all-to-all opening, so it learns nothing more (semi-honest kings).
* **Triples**, two sources (``triples=``):
  ``"dealer"``: the session's trusted dealer deals XOR shares of random
  (a, b, a AND b) (offline, 3 bits per gate and holder, one round);
  ``"ot"``: dealer-free. Every holder draws its own a_j, b_j; each cross
  term a_i b_j (i != j) is XOR-shared between i and j by one random OT
  (:func:`mpc.ot.random_ot`, i sends, j chooses b_j: i keeps s0, j gets
  s_{b_j}, and i sends the correction a_i XOR s0 XOR s1, after which the
  two bits XOR to a_i b_j). Offline cost per gate: p (p - 1) OTs (IKNP: 128
  bits each) plus p (p - 1) correction bits, and every ordered pair sets up
  its OT extension once per :meth:`GMW.reserve` (128 base OTs).
* **Bits to Z_2^l** (:meth:`GMW.to_arith`): ``"dealer"``: a daBit r (XOR
  and additive shares of one random bit): open e = b XOR r (1 bit per
  holder), then [b] = e + [r] - 2 e [r]. ``"ot"``: the holders fold
  b = b_0 XOR ... XOR b_{p-1} into additive shares one holder at a time,
  [a XOR b_k] = [a] + b_k - 2 b_k [a], each product by one chosen OT per
  earlier holder (p - 1 steps, p (p - 1) / 2 OTs of l-bit messages per bit).

Threat model: static semi-honest adversary corrupting up to p - 1 of the p
holders; private authenticated channels; with ``"dealer"`` a trusted dealer
that colludes with no holder, with ``"ot"`` no dealer (OT's assumptions,
:mod:`mpc.ot`). Every opened value is masked by a triple or daBit that no
p - 1 holders know, so a coalition's view is independent of the honest
holder's inputs.

Randomness: each holder's own bits (its inputs when a caller asks, its OT
triple halves, its fold masks) come from a seed or stream derived for that
holder (the key of ``rng.derive(label, holder_id)``, expanded by the
fixed-key AES PRG of :mod:`mpc.ot.prg` in :meth:`GMW.holder_words`); the
dealer draws from its own stream; the OT engine takes one stream per side,
as :mod:`mpc.ot` does.
Communication goes through ``session.net`` inside ``net.round()`` blocks, and
what a holder receives is read, after the round, from the array it was sent
in (the per-process runtime writes received rows there).
"""

from __future__ import annotations

import numpy as np

from mpc.protocols.dealer import check_holders

__all__ = ["GMW", "TRIPLE_SOURCES", "pack_rows", "unpack_rows"]

TRIPLE_SOURCES = ("dealer", "ot")
_U64 = np.uint64
#: Most OTs one random_ot call handles (bounds the OT engine's memory, ~100 bytes per OT).
OT_CHUNK = 1 << 21


def pack_rows(bits: np.ndarray) -> np.ndarray:
    """Bits ``uint8 (..., I)`` -> bit-sliced words ``uint64 (..., ceil(I / 64))``."""
    bits = np.asarray(bits, dtype=np.uint8)
    I = bits.shape[-1]
    W = -(-I // 64)
    packed = np.zeros(bits.shape[:-1] + (8 * W,), dtype=np.uint8)
    packed[..., :-(-I // 8)] = np.packbits(bits, axis=-1, bitorder="little")
    return packed.view("<u8").astype(_U64, copy=False)


def unpack_rows(words: np.ndarray, I: int) -> np.ndarray:
    """Inverse of :func:`pack_rows`: ``uint64 (..., W)`` -> ``uint8 (..., I)``."""
    raw = np.ascontiguousarray(words).astype("<u8", copy=False).view(np.uint8)
    return np.unpackbits(raw, axis=-1, count=I, bitorder="little")


class GMW:
    """One GMW computation on a batch of ``n_instances`` among ``holders``.

    ``rng``: the computation's stream; holder j's randomness is derived from
    it per label and holder id. ``triples``: ``"dealer"`` or ``"ot"``
    (module docstring). Counters: ``and_rows`` (AND gates per instance
    evaluated), ``openings``.
    """

    def __init__(self, session, holders, n_instances: int, rng, *, triples: str = "dealer"):
        if triples not in TRIPLE_SOURCES:
            raise ValueError(f"triples must be one of {TRIPLE_SOURCES}, got {triples!r}")
        if isinstance(n_instances, bool) or not isinstance(n_instances, (int, np.integer)) \
                or n_instances < 1:
            raise ValueError(f"n_instances must be a positive integer, got {n_instances!r}")
        self.s, self.net, self.ring = session, session.net, session.ring
        self.h = check_holders(holders, session.net)
        if self.h.ndim != 1 or np.unique(self.h).size != self.h.size:
            raise ValueError("holders must be a 1-d array of distinct party ids")
        self.p = int(self.h.size)
        self.I = int(n_instances)
        self.W = -(-self.I // 64)
        self._row_bytes = -(-self.I // 8)
        self.mask = np.full(self.W, ~_U64(0), dtype=_U64)
        if self.I % 64:
            self.mask[-1] = _U64((1 << (self.I % 64)) - 1)
        self.rng = rng
        self.triples = triples
        self.and_rows = 0
        self.openings = 0
        # reserved triples (a, b, c), each (p, R, W)
        self._pool: tuple[np.ndarray, ...] | None = None
        self._used = 0
        self._tags = 0
        self._king_cursor = 0       # the next king's position (kings rotate over the holders)

    # -- randomness ---------------------------------------------------------------
    def _tag(self, label: str) -> str:
        self._tags += 1
        return f"{label}-{self._tags}"

    def holder_words(self, label: str, rows: int) -> np.ndarray:
        """``(p, rows, W)`` uniform words; holder j's row is the expansion of its own seed.

        Holder j's seed is the key of ``rng.derive(label, j)`` (one HMAC, so a
        process holding j computes it alone); it is expanded by the
        fixed-key AES PRG of :mod:`mpc.ot.prg` (one AES call for all
        holders). ``label`` must be new for every call.
        """
        from mpc.ot.prg import prg_blocks
        n = rows * self.W
        blocks = -(-n // 2)
        seeds = self.rng.derived_keys(label, self.h)
        words = prg_blocks(seeds, np.repeat(np.arange(self.p), blocks),
                           np.tile(np.arange(blocks, dtype=np.int64), self.p))
        out = words.reshape(self.p, 2 * blocks)[:, :n].reshape(self.p, rows, self.W)
        out &= self.mask
        return out

    def _dealer_words(self, shape) -> np.ndarray:
        return self.s.dealer.rng.uint64(tuple(shape) + (self.W,)) & self.mask

    def _wire(self, rows: np.ndarray) -> np.ndarray:
        """What a message of word rows ``(m, ..., W)`` carries: the ceil(I/8) bytes of each row
        that hold instances, as a view (the runtime writes received rows into the words)."""
        return rows.view(np.uint8)[..., :self._row_bytes]

    # -- openings ---------------------------------------------------------------
    def open(self, shares: np.ndarray) -> np.ndarray:
        """Open XOR shares ``(p, *rows, W)``; returns every holder's copy of the value (same shape).

        p = 2: one round (the holders swap rows); p > 2: two rounds through
        the kings (module docstring). Sent and counted: the ceil(I/8) bytes of
        each row that hold instances.
        """
        sh = shares
        p, net = self.p, self.net
        self.openings += 1
        if p == 1:
            return sh.copy()
        if p == 2:
            with net.round():
                net.send(self.h, self.h[::-1], self._wire(sh), 8)
            out = np.empty_like(sh)
            out[:] = sh[0] ^ sh[1]
            return out
        flat = sh.reshape(p, -1, self.W)                  # rows split among up to p kings
        out = np.empty_like(sh)
        flat_out = out.reshape(p, -1, self.W)
        blocks = self._king_blocks(flat.shape[1])
        with net.round():
            for k, r0, r1 in blocks:
                self._send_around(k, flat[:, r0:r1], to_king=True)
        flat_out[:] = np.bitwise_xor.reduce(flat, axis=0)   # each king's XOR of its rows
        with net.round():
            for k, r0, r1 in blocks:
                self._send_around(k, flat_out[:, r0:r1], to_king=False)
        return out

    def _king_blocks(self, R: int):
        """(king position, r0, r1): the R rows in min(p, R) blocks, kings rotating per opening."""
        q = min(self.p, R)
        cuts = np.linspace(0, R, q + 1).astype(np.int64)
        start = self._king_cursor
        self._king_cursor += q
        return [((start + b) % self.p, int(cuts[b]), int(cuts[b + 1])) for b in range(q)]

    def _send_around(self, k, rows, *, to_king: bool):
        """Holders other than the king (position k) send their rows to it, or receive them."""
        king = int(self.h[k])
        for sl in (slice(0, k), slice(k + 1, self.p)):
            if sl.stop > sl.start:
                others = self.h[sl]
                if to_king:
                    self.net.send(others, king, self._wire(rows[sl]), 8)
                else:
                    self.net.send(king, others, self._wire(rows[sl]), 8)

    # -- triples ----------------------------------------------------------------------
    def reserve(self, rows: int) -> None:
        """Prepare triples for ``rows`` AND rows (of I gates each), used in order by :meth:`and_`.

        One dealing (``"dealer"``) or one OT pass (``"ot"``: each ordered pair
        sets up its extension once per call), offline in the caller's phase.
        """
        rows = int(rows)
        if rows < 1:
            return
        a, b, c = (self._deal_triples(rows) if self.triples == "dealer"
                   else self._ot_triples(rows))
        if self._pool is not None and self._used < self._pool[0].shape[1]:
            a, b, c = (np.concatenate([old[:, self._used:], new], axis=1)
                       for old, new in zip(self._pool, (a, b, c)))
        self._pool, self._used = (a, b, c), 0

    def _take(self, rows: int):
        left = 0 if self._pool is None else self._pool[0].shape[1] - self._used
        if left < rows:
            self.reserve(rows - left)
        u = self._used
        self._used += rows
        assert self._pool is not None, "reserve() filled the pool"
        return tuple(t[:, u:u + rows] for t in self._pool)

    def _deal_triples(self, rows):
        p, net = self.p, self.net
        a = self._dealer_words((rows,))
        b = self._dealer_words((rows,))
        sh = np.empty((p, 3, rows, self.W), dtype=_U64)
        if p > 1:
            sh[1:] = self._dealer_words((p - 1, 3, rows))
            sh[0] = np.bitwise_xor.reduce(sh[1:], axis=0)
        else:
            sh[0] = 0
        sh[0, 0] ^= a
        sh[0, 1] ^= b
        sh[0, 2] ^= a & b
        with net.round():
            net.send(self.s.dealer.id, self.h, self._wire(sh), 8, offline=True)
        return sh[:, 0], sh[:, 1], sh[:, 2]

    def _ot_triples(self, rows):
        p = self.p
        a = self.holder_words(self._tag("ot-a"), rows)
        b = self.holder_words(self._tag("ot-b"), rows)
        c = a & b
        if p == 1:
            return a, b, c
        nb = rows * self.I
        a_bits = unpack_rows(a, self.I).reshape(p, nb)
        b_bits = unpack_rows(b, self.I).reshape(p, nb)
        ii, jj = np.nonzero(~np.eye(p, dtype=bool))        # ordered pairs i != j
        acc = np.zeros((p, nb), dtype=np.uint8)
        for pairs, c0, c1 in _ot_blocks(ii.size, nb):
            i, j = ii[pairs], jj[pairs]
            choices = np.ascontiguousarray(b_bits[j, c0:c1])
            s0, r = self._bit_products(i, j, choices, a_bits[i, c0:c1])
            np.bitwise_xor.at(acc[:, c0:c1], i, s0)
            np.bitwise_xor.at(acc[:, c0:c1], j, r)
        c ^= pack_rows(acc.reshape(p, rows, self.I))
        return a, b, c

    def _bit_products(self, i, j, choices, a_i):
        """XOR shares (s0 at i, r at j) of a_i AND choices for every ordered pair (i, j), by ROT."""
        from mpc.ot import random_ot
        net = self.net
        tag = self._tag("rot")
        m0, m1, mc = random_ot(self.s, self.h[i], self.h[j], choices,
                               rng_sender=self.rng.derive(tag, "senders"),
                               rng_receiver=self.rng.derive(tag, "receivers"),
                               length=1, offline=True)
        s0 = m0[..., 0] & 1
        f = a_i ^ s0 ^ (m1[..., 0] & 1)                    # the sender's correction
        with net.round():
            net.send(self.h[i], self.h[j], f, 1, offline=True)
        r = (mc[..., 0] & 1) ^ (choices & f)
        return s0, r

    # -- gates ----------------------------------------------------------------------
    def and_(self, x: np.ndarray, y: np.ndarray) -> np.ndarray:
        """XOR shares of x AND y, both ``(p, *rows, W)`` (one opening: 1 or 2 rounds)."""
        shape = x.shape
        rows = int(np.prod(shape[1:-1], dtype=np.int64))
        a, b, c = (t.reshape(shape) for t in self._take(rows))
        de = np.empty((self.p, 2) + shape[1:], dtype=_U64)
        np.bitwise_xor(x, a, out=de[:, 0])
        np.bitwise_xor(y, b, out=de[:, 1])
        o = self.open(de)
        d, e = o[:, 0], o[:, 1]
        z = c ^ (d & b) ^ (e & a)
        z[0] ^= d[0] & e[0]
        self.and_rows += rows
        return z

    def not_(self, x: np.ndarray) -> np.ndarray:
        """NOT of XOR shares (holder 0 flips its share), local."""
        z = x.copy()
        z[0] ^= self.mask
        return z

    # -- bits to Z_2^l ----------------------------------------------------------------------
    def to_arith(self, bits: np.ndarray) -> np.ndarray:
        """Additive shares in Z_2^l ``uint64 (p, rows, I)`` of XOR-shared bits ``(p, rows, W)``."""
        if self.triples == "dealer":
            return self._dabit_convert(bits)
        return self._fold_convert(bits)

    def _dabit_convert(self, bits):
        p, ring, net = self.p, self.ring, self.net
        rows = bits.shape[1]
        r = self._dealer_words((rows,))
        r_int = unpack_rows(r, self.I).astype(_U64)                    # (rows, I)
        xor_sh = np.empty((p, rows, self.W), dtype=_U64)
        ar_sh = np.empty((p, rows, self.I), dtype=_U64)
        if p > 1:
            xor_sh[1:] = self._dealer_words((p - 1, rows))
            xor_sh[0] = np.bitwise_xor.reduce(xor_sh[1:], axis=0) ^ r
            ar_sh[1:] = self.s.dealer.rng.ring_elements(ring, (p - 1, rows, self.I))
            ar_sh[0] = ring.sub(r_int, ring.sum(ar_sh[1:], axis=0))
        else:
            xor_sh[0], ar_sh[0] = r, r_int
        with net.round():
            net.send(self.s.dealer.id, self.h, self._wire(xor_sh), 8, offline=True)
            net.send(self.s.dealer.id, self.h, ar_sh, ring.bits, offline=True)
        e = unpack_rows(self.open(bits ^ xor_sh), self.I).astype(_U64)   # (p, rows, I)
        out = ring.mul(ar_sh, (_U64(1) - _U64(2) * e) & ring.mask)
        out[0] = ring.add(out[0], e[0])
        return out

    def _fold_convert(self, bits):
        """Dealer-free: fold the holders' bits into additive shares, one holder per step."""
        from mpc.ot import chosen_ot
        p, ring = self.p, self.ring
        rows = bits.shape[1]
        b = unpack_rows(bits, self.I).reshape(p, rows * self.I)          # holder j's bits
        acc = np.zeros(b.shape, dtype=_U64)
        acc[0] = b[0]
        for k in range(1, p):      # one step per holder (sequential: p - 1 rounds of OTs)
            tag = self._tag("fold")
            s = np.empty((k, b.shape[1]), dtype=_U64)
            for j, pid in enumerate(self.h[:k].tolist()):
                s[j] = self.rng.derive(tag, pid).ring_elements(ring, b.shape[1])
            m0 = np.ascontiguousarray(s).view(np.uint8).reshape(k, -1, 8)
            m1 = np.ascontiguousarray(ring.add(s, acc[:k])).view(np.uint8).reshape(k, -1, 8)
            choices = np.repeat(b[k][None], k, axis=0)
            got = chosen_ot(self.s, self.h[:k], np.full(k, self.h[k]), choices, m0, m1,
                            rng_sender=self.rng.derive(tag, "senders"),
                            rng_receiver=self.rng.derive(tag, "receivers"))
            prod = ring.sum(np.ascontiguousarray(got).view(_U64).reshape(k, -1), axis=0)
            acc[:k] = ring.add(acc[:k], ring.add(s, s))                  # a_j - 2 (-s_j)
            acc[k] = ring.sub(b[k].astype(_U64), ring.add(prod, prod))  # b_k - 2 sum(s_j + b_k a_j)
        return acc.reshape(p, rows, self.I)


def _ot_blocks(n_pairs: int, nb: int):
    """(pair indices, c0, c1) blocks of at most OT_CHUNK OTs: whole pairs when they fit."""
    if n_pairs * nb <= OT_CHUNK:
        yield np.arange(n_pairs), 0, nb
        return
    per = max(1, OT_CHUNK // nb)
    if per > 1:
        for start in range(0, n_pairs, per):
            yield np.arange(start, min(n_pairs, start + per)), 0, nb
        return
    step = max(1, OT_CHUNK // max(n_pairs, 1))
    for c0 in range(0, nb, step):
        yield np.arange(n_pairs), c0, min(nb, c0 + step)
