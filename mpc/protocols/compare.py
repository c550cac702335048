"""Comparison and equality among p >= 2 parties, secure against any p - 1 of them.

Inputs are additive p-of-p sharings in Z_2^l (``(p, *batch)`` uint64) held by
``holders`` ((p,) party ids or (p, *batch) per instance); outputs are additive
sharings of the result (0/1 or -1/0/1 as ring integers) among the same
holders, ready for Beaver multiplication.

Protocol (masked opening plus a boolean circuit; cf. Damgard, Fitzi, Kiltz,
Nielsen, Toft, TCC 2006, and the edaBits of Escudero et al., CRYPTO 2020):

1. *Offline* (trusted dealer, :mod:`mpc.protocols.dealer`): a uniform mask r in Z_2^l
   shared twice, additively in Z_2^l and bit by bit in XOR shares; boolean
   Beaver triples (a, b, a AND b) for the circuit; a daBit (a random bit
   shared both in XOR and in Z_2^l) for the conversion of the result.
2. *Open* c = x + r to all holders (one round, (p-1) l bits sent per holder).
   c is uniform whatever x is, because no p-1 holders know r.
3. *Circuit* on the public c and the XOR-shared bits of r:
   - ``ltz`` ([x < 0], two's complement): with c', r' the low l-1 bits,
     MSB(x) = c_{l-1} XOR r_{l-1} XOR [c' < r']; the borrow [c' < r'] is a
     tree of (generate, propagate) pairs, ceil(log2(l-1)) AND rounds,
     2 (l-2) - 1 AND gates;
   - ``eqz`` ([x = 0]): x = 0 iff c = r, the AND of the l bits
     NOT(c_i XOR r_i): ceil(log2 l) AND rounds, l-1 AND gates;
   - ``in_interval`` ([lo <= x <= hi], public lo, hi, exact for every x):
     x' = x + 2^(l-1) in unsigned order, c = x' + r; [lo' <= x' <= hi'] =
     [r <= u_lo] - [r <= u_hi] + [hi' >= c] - [lo' > c] with u_lo = c - lo',
     u_hi = c - hi' - 1 mod 2^l (the interval gate of Boyle et al.,
     EUROCRYPT 2021), the two comparisons of the shared r with public values
     by the borrow tree on all l bits: ceil(log2 l) AND rounds,
     2 (2 (l-1) - 1) AND gates, two daBits.
   Each AND gate opens two masked bits: (p-1) * 2 bits sent per holder.
4. *Convert* the XOR-shared result to Z_2^l with the daBit: open
   e = bit XOR b (one round, p-1 bits per holder), then [bit] = e + [b] - 2e[b].

Domains: ``ltz``, ``eqz``, ``in_interval`` are exact on all of Z_2^l;
``less_than``/``greater_than`` need |x - y| < 2^(l-1); ``sign`` and
``abs_value`` need x != -2^(l-1) (sign(-2^(l-1)) returns 0, abs returns
-2^(l-1)).

Cost per comparison at l = 40, p holders: online ceil(log2 39) + 2 = 8 rounds,
(p-1) (40 + 2 * 75 + 1) bits sent per holder; equality 8 rounds,
(p-1) (40 + 2 * 39 + 1) bits. Offline per comparison and holder: 2l bits of
masks, 3 bits per AND triple, 1 + l bits of daBit. Use FSS gates (:mod:`fss.gates`) when p = 2:
one round and l bits.

Threat model: static semi-honest adversary corrupting up to p-1 of the p
holders; trusted dealer; private authenticated channels. Every opened value
(c, the masked AND inputs, e) is uniform given the coalition's view, so
nothing about x or the result is revealed unless all p holders collude.
"""

from __future__ import annotations

import numbers
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import ArrayLike

from mpc.arith.sharing import additive_share, xor_share
from mpc.protocols.beaver import exchange, multiply
from mpc.protocols.dealer import check_holders

if TYPE_CHECKING:
    from mpc.session import Session

_U8 = np.uint8


def _bits_of(values: np.ndarray, l: int) -> np.ndarray:
    """Little-endian bits of uint64 values: shape (*values.shape, l), uint8."""
    shifts = np.arange(l, dtype=np.uint64)
    return ((values[..., None] >> shifts) & np.uint64(1)).astype(_U8)


class _Context:
    """Holders, session and the dealer's traffic for one batched comparison."""

    def __init__(self, session, holders, batch_shape):
        self.s = session
        self.ring = session.ring
        self.l = session.ring.bits
        self.h = check_holders(holders, session.net, batch_shape)
        self.p = self.h.shape[0]
        self.batch = tuple(batch_shape)
        self.dealer = session.dealer

    def deal_xor(self, bits: np.ndarray) -> np.ndarray:
        """XOR-share ``bits`` (shape (*batch, ...)) among the holders, offline."""
        sh = xor_share(bits, self.p, self.dealer.rng)
        self.dealer.distribute(self.h, sh, 1)
        return sh

    def deal_arith(self, values: np.ndarray) -> np.ndarray:
        sh = additive_share(self.ring, values, self.p, self.dealer.rng)
        self.dealer.distribute(self.h, sh, self.l)
        return sh

    def and_(self, x: np.ndarray, y: np.ndarray) -> np.ndarray:
        """AND of XOR-shared bit arrays ``(p, *batch, w)`` (boolean Beaver, one round)."""
        rng = self.dealer.rng
        shape = x.shape[1:]
        with self.s.net.round():
            a = rng.bits(shape)
            b = rng.bits(shape)
            trip = self.deal_xor(np.stack([a, b, a & b], axis=-1))
        ta, tb, tc = trip[..., 0], trip[..., 1], trip[..., 2]
        de = np.stack([x ^ ta, y ^ tb], axis=-1)
        exchange(self.s, de, self.h, 1)
        de = np.bitwise_xor.reduce(de, axis=0)
        d, e = de[..., 0], de[..., 1]
        z = tc ^ (d & tb) ^ (e & ta)
        z[0] ^= d & e
        return z

    def open_masked(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Deal r (both sharings), open c = x + r; return (c, XOR shares of r's bits)."""
        r = self.dealer.rng.ring_elements(self.ring, self.batch)
        with self.s.net.round():
            r_arith = self.deal_arith(r)
            r_bits = self.deal_xor(_bits_of(r, self.l))
        masked = self.ring.add(x, r_arith)
        exchange(self.s, masked, self.h, self.l)
        return self.ring.sum(masked, axis=0), r_bits

    def bit_to_arith(self, bit: np.ndarray) -> np.ndarray:
        """Z_2^l sharing of XOR-shared bits ``(p, *batch, ...)`` via daBits (one round)."""
        b = self.dealer.rng.bits(bit.shape[1:])
        with self.s.net.round():
            b_xor = self.deal_xor(b)
            b_arith = self.deal_arith(b.astype(np.uint64))
        masked = bit ^ b_xor
        exchange(self.s, masked, self.h, 1)
        e = np.bitwise_xor.reduce(masked, axis=0).astype(np.uint64)
        factor = (np.uint64(1) - np.uint64(2) * e) & self.ring.mask
        out = self.ring.mul(b_arith, factor)
        out[0] = self.ring.add(out[0], e)
        return out


def _public_bits_into_share(public: np.ndarray, p: int) -> np.ndarray:
    """XOR sharing of public bits: member 0 holds them, the others 0."""
    out = np.zeros((p,) + public.shape, dtype=_U8)
    out[0] = public
    return out


def _and_tree(ctx: _Context, bits: np.ndarray) -> np.ndarray:
    """AND of the last axis of XOR-shared bits ``(p, *batch, w)``: ceil(log2 w) rounds."""
    while bits.shape[-1] > 1:
        w = bits.shape[-1]
        half = w // 2
        paired = ctx.and_(bits[..., 0:2 * half:2], bits[..., 1:2 * half:2])
        bits = np.concatenate([paired, bits[..., 2 * half:]], axis=-1) if w % 2 else paired
    return bits[..., 0]


def _borrow_tree(ctx: _Context, g: np.ndarray, pr: np.ndarray) -> np.ndarray:
    """Combine (generate, propagate) pairs, LSB first on the last axis, to the top generate.

    A node (G, P) over bits [lo..hi] says [c < r] and [c == r] on those bits;
    high part H over low part L: G = G_H XOR (P_H AND G_L), P = P_H AND P_L.
    """
    while g.shape[-1] > 1:
        w = g.shape[-1]
        half = w // 2
        g_lo, g_hi = g[..., 0:2 * half:2], g[..., 1:2 * half:2]
        p_lo, p_hi = pr[..., 0:2 * half:2], pr[..., 1:2 * half:2]
        last = w == 2
        if last:
            prod = ctx.and_(p_hi, g_lo)
            return (g_hi ^ prod)[..., 0]
        prod = ctx.and_(np.concatenate([p_hi, p_hi], axis=-1),
                        np.concatenate([g_lo, p_lo], axis=-1))
        new_g = g_hi ^ prod[..., :half]
        new_p = prod[..., half:]
        if w % 2:
            new_g = np.concatenate([new_g, g[..., -1:]], axis=-1)
            new_p = np.concatenate([new_p, pr[..., -1:]], axis=-1)
        g, pr = new_g, new_p
    return g[..., 0]


def _public_less_than_shared(ctx: _Context, r_bits: np.ndarray, k: np.ndarray) -> np.ndarray:
    """XOR shares of [K < r] for public K ``(*batch, w)`` (uint64) and XOR-shared bits of r.

    ``r_bits``: ``(p, *batch, w, l)``; the borrow circuit of :func:`ltz` on all
    l bits (generate r_i AND NOT K_i, propagate NOT (r_i XOR K_i)).
    """
    k_bits = _bits_of(k, ctx.l)
    g = r_bits & (1 - k_bits)
    pr = r_bits ^ _public_bits_into_share(k_bits ^ 1, ctx.p)
    return _borrow_tree(ctx, g, pr)


def _check(session: Session, x: ArrayLike, holders: ArrayLike) -> tuple[_Context, np.ndarray]:
    x = np.asarray(x)
    if x.dtype != np.uint64 or x.ndim < 1:
        raise TypeError("x must be uint64 ring shares with a leading party axis")
    if session.ring.bits < 2:
        raise ValueError("comparison needs a ring of at least 2 bits")
    ctx = _Context(session, holders, x.shape[1:])
    if ctx.p != x.shape[0]:
        raise ValueError(f"holders names {ctx.p} parties but the shares have {x.shape[0]} rows")
    return ctx, x


def ltz(session: Session, x: ArrayLike, holders: ArrayLike) -> np.ndarray:
    """Shares of [x < 0] (two's complement sign bit of x), as ring integers 0/1."""
    ctx, x = _check(session, x, holders)
    p, l = ctx.p, ctx.l
    c, r_bits = ctx.open_masked(x)
    c_bits = _bits_of(c, l)                                    # public (*batch, l)
    msb = r_bits[..., l - 1].copy()
    msb[0] ^= c_bits[..., l - 1]
    if l > 1:
        low_c = c_bits[..., :l - 1]
        low_r = r_bits[..., :l - 1]
        g = low_r & (1 - low_c)                                # r_i AND NOT c_i
        pr = low_r ^ _public_bits_into_share(low_c ^ 1, p)     # NOT (r_i XOR c_i)
        msb ^= _borrow_tree(ctx, g, pr)
    return ctx.bit_to_arith(msb)


def eqz(session: Session, x: ArrayLike, holders: ArrayLike) -> np.ndarray:
    """Shares of [x == 0] as ring integers 0/1."""
    ctx, x = _check(session, x, holders)
    c, r_bits = ctx.open_masked(x)
    same = r_bits ^ _public_bits_into_share(_bits_of(c, ctx.l) ^ 1, ctx.p)
    return ctx.bit_to_arith(_and_tree(ctx, same))


def _concat(parts):
    return np.concatenate(parts, axis=1)


def _tile(holders, times):
    h = np.asarray(holders)
    return h if h.ndim == 1 else np.tile(h, (1, times) + (1,) * (h.ndim - 2))


def less_than(session: Session, x: ArrayLike, y: ArrayLike, holders: ArrayLike, *,
              bound: int | None = None) -> np.ndarray:
    """[x < y] on signed values x, y of Z_2^l.

    ``bound``: a public bound on |x - y| that the caller guarantees (below
    2^(l-1), else ValueError): one sign extraction of x - y (about 8 rounds).
    Without it the comparison is exact for every pair of signed values:
    [x < y] = [x < 0] when the signs of x and y differ, else [x - y < 0] (the
    three signs in the same rounds, then two Beaver products: 2 rounds and
    three times the bits). Secure values (:mod:`mpc.values`) pass the bound
    they track.
    """
    return _lt(session, x, y, holders, bound)


def greater_than(session: Session, x: ArrayLike, y: ArrayLike, holders: ArrayLike, *,
                 bound: int | None = None) -> np.ndarray:
    """[x > y] on signed values: :func:`less_than` (y, x); ``bound`` as there."""
    return _lt(session, y, x, holders, bound)


def _lt(session, x, y, holders, bound):
    ring = session.ring
    if bound is not None:
        if isinstance(bound, bool) or not isinstance(bound, (int, np.integer)) or bound < 0:
            raise TypeError(f"bound must be a non-negative integer (ring units), got {bound!r}")
        if bound >= 1 << (ring.bits - 1):
            raise ValueError(f"bound {bound} on |x - y| is not below 2^{ring.bits - 1}: x - y "
                             f"could wrap in Z_2^{ring.bits}; omit bound for the exact form")
        return ltz(session, ring.sub(x, y), holders)
    x, y = np.asarray(x), np.asarray(y)
    m = x.shape[1] if x.ndim > 1 else 1
    signs = ltz(session, _concat([x, y, ring.sub(x, y)]), _tile(holders, 3))
    a, b, c = signs[:, :m], signs[:, m:2 * m], signs[:, 2 * m:]
    ab = multiply(session, a, b, holders)
    t = ring.sub(ring.add(a, b), ring.smul(2, ab))            # a XOR b
    return ring.add(c, multiply(session, t, ring.sub(a, c), holders))


def equal(session: Session, x: ArrayLike, y: ArrayLike, holders: ArrayLike) -> np.ndarray:
    """[x == y]."""
    return eqz(session, session.ring.sub(x, y), holders)


def sign(session: Session, x: ArrayLike, holders: ArrayLike) -> np.ndarray:
    """sign(x) in {-1, 0, 1}: [x > 0] - [x < 0], both comparisons in the same rounds.

    Domain: x in (-2^(l-1), 2^(l-1)), i.e. every ring value but -2^(l-1), whose
    negation wraps to itself: sign(-2^(l-1)) returns 0 (as in :func:`fss.gates.sign`).
    """
    ring = session.ring
    x = np.asarray(x)
    m = x.shape[1]
    both = ltz(session, _concat([ring.neg(x), x]), _tile(holders, 2))
    return ring.sub(both[:, :m], both[:, m:])


def abs_value(session: Session, x: ArrayLike, holders: ArrayLike) -> np.ndarray:
    """|x| = x (1 - 2 [x < 0]): one comparison and one Beaver product.

    Domain: x in (-2^(l-1), 2^(l-1)); |-2^(l-1)| = 2^(l-1) is not a signed
    ring value, and -2^(l-1) is returned for it.
    """
    ring = session.ring
    neg = ltz(session, x, holders)
    factor = ring.smul(-2, neg)
    factor[0] = ring.add(factor[0], np.uint64(1))
    return multiply(session, np.asarray(x), factor, holders)


def signed_bound(v: ArrayLike, l: int, name: str, batch: tuple | int) -> np.ndarray:
    """A public signed bound of an interval test (an int or an integer array) as int64 values
    of the batch's shape; TypeError for what is not an integer, ValueError outside
    [-2^(l-1), 2^(l-1) - 1] or for a shape that does not broadcast to ``batch``."""
    lo_lim, hi_lim = -(1 << (l - 1)), (1 << (l - 1)) - 1
    if isinstance(v, (bool, np.bool_)):
        raise TypeError(f"{name} must be an integer, got bool")
    if isinstance(v, numbers.Integral):
        v = int(v)
        if not lo_lim <= v <= hi_lim:
            raise ValueError(f"{name} must be a signed value in [{lo_lim}, {hi_lim}], got {v}")
        return np.full(batch, v, dtype=np.int64)
    arr = np.asarray(v)
    if arr.dtype.kind not in "iu":
        raise TypeError(f"{name} must be an integer or an integer array, got dtype {arr.dtype}")
    if arr.size and (int(arr.min()) < lo_lim or int(arr.max()) > hi_lim):
        raise ValueError(f"{name} must be signed values in [{lo_lim}, {hi_lim}]")
    try:
        return np.broadcast_to(arr.astype(np.int64), batch)
    except ValueError:
        raise ValueError(f"{name} of shape {arr.shape} does not broadcast to the batch "
                         f"{batch}") from None


def in_interval(session: Session, x: ArrayLike, lo: int | np.ndarray, hi: int | np.ndarray,
                holders: ArrayLike) -> np.ndarray:
    """[lo <= x <= hi] for signed x and public signed bounds lo <= hi (ints or arrays).

    Domain: every x in Z_2^l read as signed, every lo <= hi in [-2^(l-1),
    2^(l-1)) (broadcast to the batch). Steps: one masked opening of
    x' + r (x' = x + 2^(l-1), the unsigned order), two comparisons of the
    shared r with the public u_lo = c - lo' and u_hi = c - hi' - 1 by the
    borrow circuit, both converted with daBits in one round; the public
    terms [hi' >= c] - [lo' > c] are added by holder 0 (module docstring).
    Cost: online 1 + ceil(log2 l) + 1 rounds (8 at l = 40), per holder (p-1)
    (l + 2 * 2 (2 (l-1) - 1) + 2) bits; offline 2 l mask bits, 2 (2 (l-1) - 1)
    AND triples and 2 daBits per element.
    """
    x = np.asarray(x)
    ctx, x = _check(session, x, holders)
    ring, l = ctx.ring, ctx.l
    lo_a = signed_bound(lo, l, "lo", ctx.batch)
    hi_a = signed_bound(hi, l, "hi", ctx.batch)
    if np.any(lo_a > hi_a):
        raise ValueError(f"in_interval needs lo <= hi, got lo={lo}, hi={hi}")
    half = np.uint64(1 << (l - 1))
    lo_u = (lo_a.astype(np.uint64) + half) & ring.mask
    hi_u = (hi_a.astype(np.uint64) + half) & ring.mask
    x_u = x.copy()
    x_u[0] = ring.add(x_u[0], half)
    c, r_bits = ctx.open_masked(x_u)
    u = np.stack([ring.sub(c, lo_u), ring.sub(ring.sub(c, hi_u), np.uint64(1))], axis=-1)
    r2 = np.broadcast_to(r_bits[..., None, :], r_bits.shape[:-1] + (2, l))
    le = _public_less_than_shared(ctx, r2, u)                  # [u < r], (p, *batch, 2)
    le[0] ^= 1                                                 # [r <= u]
    a = ctx.bit_to_arith(le)
    out = ring.sub(a[..., 0], a[..., 1])
    pub = (hi_u >= c).astype(np.uint64) - (lo_u > c).astype(np.uint64)
    out[0] = ring.add(out[0], pub & ring.mask)
    return out
