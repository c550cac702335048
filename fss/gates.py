"""FSS gates on additively shared ring values: comparison, equality, sign, |x|, intervals.

Every gate follows the masked-input paradigm of Boyle, Gilboa, Ishai,
"Secure computation with preprocessing via function secret sharing"
(TCC 2019) with the DCF/DPF keys of Boyle et al., "Function secret sharing
for mixed-mode and fixed-point secure computation" (EUROCRYPT 2021):

Offline (trusted dealer ``s.dealer``, counted as offline traffic in the
caller's phase, one offline round):
  1. draw the input mask r (uniform in Z_2^l) and share it p-of-p among the
     holders (each holder gets r_j; l bits each);
  2. generate the FSS key pair for the gate function shifted by r, send key
     b to key holder ``holders[b]`` (b = 0, 1), counted at its serialized
     payload size (:func:`fss.dcf.wire_bits` / :func:`fss.dpf.wire_bits` per
     instance; the header of public parameters is not counted); with
     ``record_views`` the views hold those serialized bytes;
  3. share p-of-p the output-mask correction (r's top bit for the
     comparison gates, 0 otherwise) among all holders (l bits each); it
     makes the output shares uniformly random and folds in dealer-known
     terms.
Online (one round, inside the caller's phase):
  4. each holder j sends its masked share x_j + r_j to the key holders
     (holder 0 <-> holder 1 exchange; every other holder sends to both);
     the key holders add them up to the public-to-them value x^ = x + r;
  5. the key holders evaluate their keys at x^ (locally) and every holder
     combines the result with its output-mask share into an additive share
     of the gate output in Z_2^l (0/1, or -1/0/+1 for :func:`sign`).

The offline part of a call can be dealt ahead, before its operands exist:
:func:`prepare` returns it and the gate takes it back as ``prep=`` (the
same dealer draws in the same order, so the same bits; a ``prep`` dealt for
another shape or width is refused before anything is opened).

Keys come from the dealer's stream: a seeded session (``Session(seed=...)``)
makes keys flagged ``insecure``. Every gate takes ``workers=`` (threads for
key generation and evaluation; None: all cores for large batches); results
do not depend on it.

Online cost per gate instance: 1 round. With p = 2 every party sends l bits
(and receives l bits): exactly l bits per party per comparison. With p > 2,
each non-key holder sends 2 l bits, each key holder sends l bits and
receives (p - 1) l bits. Offline per instance: key_bits to each key holder
plus 2 l bits to every holder. :func:`abs_value` adds one Beaver
multiplication (1 more round, 2 (p-1) l bits per holder online).
:func:`costs` returns these numbers per gate; the tests check that they
equal what the network measures.

Threat model: static semi-honest adversary, trusted dealer (sees no input),
private authenticated channels. For p = 2 the view of either party is
simulatable (the opened x^ is uniform since r is, its key is pseudorandom
and independent of r by DCF/DPF security). For p > 2 (the k-member edge
extension): x^ = x + sum_j r_j is uniform to any coalition missing one
holder's r_j, and each key alone hides r, so any coalition that does *not*
contain both key holders learns nothing. A coalition containing both key
holders (holders[0] and holders[1]) can recover r from the two keys and so
learns the compared value x - y (not the other members' individual
shares). This is inherent to two-key FSS with an opened masked input; it
is weaker than "nothing unless all p collude" and must be accounted for by
whoever picks the key holders; :mod:`mpc.protocols.compare` gives the p-party
alternative (secure against any p-1 holders, about 8 rounds), which the
U-MPC protocol uses for edges of k > 2 members. For p > 2 the outputs of
:func:`less_than`, :func:`greater_than`, :func:`sign` and :func:`abs_value`
are shared between the two key holders only (the other rows are 0), since
they depend on MSB(x^), which only the key holders see.

Shares: ``uint64 (p, *batch)`` in ``s.ring``; ``holders``: ``(p,)`` party
ids or ``(p, *batch)`` per-instance ids; p >= 2, holders[0] != holders[1]
(the key holders). Outputs have the shape of the inputs and are held by
the same holders. Gates need l >= 2.
"""

from __future__ import annotations

import numbers
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import ArrayLike

from mpc.arith.ring import ring as _ring
from mpc.protocols.compare import signed_bound
from mpc.protocols.dealer import check_holders

from . import tree
from .dealing import deal_masked_keys, deal_msb
from .keys import DCFParams, DPFParams, TreeParams

if TYPE_CHECKING:
    from mpc.session import Session

_U64 = np.uint64
_ONE = _U64(1)


# -- argument checks ---------------------------------------------------------------------------
def _check_session(s):
    for attr in ("ring", "net", "dealer"):
        if not hasattr(s, attr):
            raise TypeError(f"s must be an mpc.session.Session, got {type(s).__name__}")
    if s.ring.bits < 2:
        raise ValueError(f"FSS gates need a ring of at least 2 bits, got l={s.ring.bits}")
    return s


def _check_shares(s, x, name: str) -> np.ndarray:
    x = np.asarray(x)
    if x.dtype != _U64:
        raise TypeError(f"{name} must be uint64 ring shares, got dtype {x.dtype}")
    if x.ndim < 1 or x.shape[0] < 2:
        raise ValueError(f"{name} must have shape (p, *batch) with p >= 2, got {x.shape}")
    if x.size and s.ring.bits < 64 and np.any(x > s.ring.mask):
        raise ValueError(f"{name} holds values outside Z_2^{s.ring.bits}")
    return x


def _check_holders(s, holders, x) -> np.ndarray:
    """``holders`` checked against shares ``x`` (or their shape, a tuple)."""
    h = check_holders(holders, s.net)
    shape = x if isinstance(x, tuple) else x.shape
    p = shape[0]
    if h.shape[0] != p:
        raise ValueError(f"holders names {h.shape[0]} parties but the shares have {p} rows")
    if h.ndim > 1 and h.shape != shape:
        raise ValueError(
            f"per-instance holders must have the shape of the shares {shape}, got {h.shape}"
        )
    if np.any(h[0] == h[1]):
        raise ValueError("holders[0] and holders[1] (the key holders) must be distinct parties")
    return h


# -- online building blocks (the dealer's offline side: fss.dealing) -----------------------------
def _open_to_key_holders(s, u, h, ring=None) -> np.ndarray:
    """One round: holders send masked shares u_j to the two key holders; returns x^ = sum u_j
    (in ``ring``, default the session's: ring.bits per share sent)."""
    net, ring = s.net, s.ring if ring is None else ring
    p = u.shape[0]
    l = ring.bits
    with net.round():
        for j in range(p):                                    # loop over the p members only
            targets = (1,) if j == 0 else (0,) if j == 1 else (0, 1)
            for t in targets:
                if h.ndim == 1:
                    net.send(int(h[j]), int(h[t]), u[j], l)
                else:
                    net.send(h[j].reshape(-1), h[t].reshape(-1), u[j].reshape(-1), l)
    return ring.sum(u, axis=0)


def _eval_pair(s, params: TreeParams, h, keys, x, workers):
    """Both key holders' evaluations at ``x`` (``(*batch)`` or ``(m, *batch)``), each where its
    key holder runs in this process (zeros elsewhere: nobody here may use them). In the
    simulator, every instance of both keys."""
    net = s.net
    out = []
    for b, key in enumerate(keys):
        if net.link is None:
            out.append(tree.eval(params, b, key, x, workers=workers))
            continue
        local = net.is_local(h[b])
        if np.ndim(local) == 0:
            out.append(tree.eval(params, b, key, x, workers=workers) if local
                       else np.zeros(np.shape(x), dtype=_U64))
            continue
        idx = np.flatnonzero(local.reshape(-1))
        res = np.zeros(np.shape(x), dtype=_U64)
        if idx.size:
            lead = np.ndim(x) - local.ndim
            xf = np.asarray(x).reshape(np.shape(x)[:lead] + (-1,))[..., idx]
            res.reshape(np.shape(x)[:lead] + (-1,))[..., idx] = \
                tree.eval(params, b, key.take(idx), xf, workers=workers)
        out.append(res)
    return out


def _key_holder_rows(p: int, y0, y1, w):
    """Output shares: w_j for every holder, plus the key outputs at rows 0 and 1."""
    out = w.copy()
    out[0] += y0
    out[1] += y1
    return out


def _msb_gate(s, z, h, points=1, workers=None, in_bits=None, prep=None):
    """Shares of MSB(z - k) for k in range(points) (0 or 0 and 1), on one opening.

    Uses MSB(z) = m ^ r_msb ^ [z^' < r'] with z^ = z + r, m = MSB(z^), primes
    the low d-1 bits (borrow of the low-part subtraction), one DCF on d-1
    bits with alpha = r', beta = 1 - 2 r_msb, and shares of r_msb as the
    output mask. Returns a list of ``points`` share arrays (p, *batch) in Z_2^l.

    ``in_bits`` (d, default l): the input side works in Z_2^d. Reducing each
    share mod 2^d is local and exact (2^d divides 2^l), the mask r is
    uniform in Z_2^d and only z + r mod 2^d is opened (d bits per share,
    uniform whatever z is), and MSB_d(z mod 2^d) = [z < 0] whenever
    |z| < 2^(d-1), which the caller guarantees; the outputs stay in Z_2^l.
    ``prep``: :func:`fss.dealing.deal_msb`'s output for this batch, dealt earlier.
    """
    ring = s.ring
    l = ring.bits
    d = l if in_bits is None else in_bits
    rd = ring if d == l else _ring(d)
    if d < l:
        z = z & rd.mask
    p = z.shape[0]
    params = DCFParams(d - 1, l)
    low = _U64((1 << (d - 1)) - 1)
    r_sh, w_sh, k0, k1 = deal_msb(s, h, z.shape[1:], d, workers) if prep is None else \
        _check_prep(prep, z.shape, params)
    # online
    u = rd.add(z, r_sh)
    zh = _open_to_key_holders(s, u, h, rd)
    pts = np.stack([rd.sub(zh, _U64(k)) for k in range(points)])   # (points, *batch)
    c0, c1 = _eval_pair(s, params, h, (k0, k1), pts & low, workers)
    outs = []
    for k in range(points):
        m = pts[k] >> _U64(d - 1)
        dk = _key_holder_rows(p, c0[k], c1[k], w_sh)                  # shares of r_msb ^ c
        sgn = np.where(m == 0, _ONE, _U64(0xFFFFFFFFFFFFFFFF))      # 1 - 2m mod 2^64
        y = dk * sgn[None]
        y[0] += m
        outs.append(y & ring.mask)
    return outs


def _check_in_bits(l, in_bits):
    """``in_bits`` of the comparison gates on an l-bit ring: None (or l) -> None, else 2..l-1."""
    if in_bits is None:
        return None
    if isinstance(in_bits, bool) or not isinstance(in_bits, numbers.Integral) \
            or not 2 <= int(in_bits) <= l:
        raise ValueError(f"in_bits must be an integer in 2..{l} (the ring's bits), got {in_bits!r}")
    return None if int(in_bits) == l else int(in_bits)


def _check_pair(s, x, y, holders):
    """Validate a two-operand gate's session, shares and holders."""
    s = _check_session(s)
    x = _check_shares(s, x, "x")
    y = _check_shares(s, y, "y")
    if x.shape != y.shape:
        raise ValueError(f"x and y must have the same shape, got {x.shape} and {y.shape}")
    return s, x, y, _check_holders(s, holders, x)


# -- public gates ------------------------------------------------------------------------------
def less_than(s: Session, x: np.ndarray, y: np.ndarray, holders: ArrayLike, *,
              workers: int | None = None, in_bits: int | None = None,
              prep: tuple | None = None) -> np.ndarray:
    """Additive shares of [x < y] (0/1 in Z_2^l) for signed two's complement x, y.

    Correct whenever |x - y| < 2^(l-1). ``in_bits`` (d <= l): the caller
    guarantees |x - y| < 2^(d-1); the mask, the opening and the DCF then
    live on d bits (d - 1 DCF levels, d bits sent per party, mask shares
    d bits; the output and its mask stay in Z_2^l): the l-bit form below
    with l replaced by d on the input side. Nothing changes for security
    (the opened value is uniform in Z_2^d); an operand outside the bound
    gives a wrong result, not a leak. Steps: z = x - y locally; dealer
    deals r (shared p-of-p), a DCF key pair on l-1 bits for alpha = r mod
    2^(l-1), beta = 1 - 2 MSB(r), and shares of MSB(r); the holders open
    z + r to the key holders (1 round); MSB(z) = MSB(z^) xor MSB(r) xor
    [low(z^) < low(r)] (the borrow out of the low l-1 bits) is assembled
    locally; DCF of EUROCRYPT 2021, masked-input gate of TCC 2019.
    Cost: online 1 round, l bits sent per party (p = 2); offline per
    instance the serialized key, wire_bits(l-1, l) bits to each key holder
    (6800 bits at l = 40; its information content key_bits is 6798) plus
    2 l bits to every holder.
    ``prep``: this batch's offline part from :func:`prepare` (every gate takes it).
    Threat model: see the module docstring.
    """
    s, x, y, h = _check_pair(s, x, y, holders)
    d = _check_in_bits(s.ring.bits, in_bits)
    return _msb_gate(s, s.ring.sub(x, y), h, workers=workers, in_bits=d, prep=prep)[0]


def greater_than(s: Session, x: np.ndarray, y: np.ndarray, holders: ArrayLike, *,
                 workers: int | None = None, in_bits: int | None = None,
                 prep: tuple | None = None) -> np.ndarray:
    """Additive shares of [x > y] for signed x, y (|x - y| < 2^(l-1)); = less_than(y, x).

    Cost, threat model, ``in_bits``: as :func:`less_than` (1 online round, l bits per
    party for p = 2).
    """
    return less_than(s, y, x, holders, workers=workers, in_bits=in_bits, prep=prep)


def sign(s: Session, x: np.ndarray, holders: ArrayLike, *, workers: int | None = None,
         in_bits: int | None = None, prep: tuple | None = None) -> np.ndarray:
    """Additive shares of sign(x) in {-1, 0, +1} (as ring elements) for signed x.

    Correct for |x| < 2^(l-1) (every value but -2^(l-1)).
    Steps: sign(x) = 1 - MSB(x) - MSB(x - 1); one opening of x + r, and the
    single DCF key of :func:`less_than` evaluated at two points (x^ and
    x^ - 1 share the mask r), so offline cost equals one comparison.
    Cost: online 1 round, l bits per party (p = 2), 2 DCF evaluations per
    key holder; offline as :func:`less_than`. Needed for Kendall's tau with
    ties. ``in_bits`` (|x| < 2^(in_bits-1)): as :func:`less_than`.
    Threat model: module docstring.
    """
    s = _check_session(s)
    x = _check_shares(s, x, "x")
    h = _check_holders(s, holders, x)
    ring = s.ring
    m0, m1 = _msb_gate(s, x, h, points=2, workers=workers,
                       in_bits=_check_in_bits(s.ring.bits, in_bits), prep=prep)
    out = ring.neg(ring.add(m0, m1))
    out[0] = ring.add(out[0], _ONE)
    return out


def equal(s: Session, x: np.ndarray, y: np.ndarray, holders: ArrayLike, *,
          workers: int | None = None, prep: tuple | None = None) -> np.ndarray:
    """Additive shares of [x == y] (0/1 in Z_2^l), via a DPF on the full l-bit domain.

    Steps: z = x - y; dealer deals r and a DPF key pair for alpha = r, beta = 1
    (BGI CCS 2016) plus a p-of-p sharing of zero as output mask; open z + r
    to the key holders (1 round); DPF at z^ gives shares of [z^ == r] = [z == 0].
    Cost: online 1 round, l bits per party (p = 2); offline the serialized
    DPF key, wire_bits(l, l) bits per key holder (5368 at l = 40) plus 2 l
    bits per holder. Exact for all x, y. Threat model: module docstring.
    """
    s, x, y, h = _check_pair(s, x, y, holders)
    ring = s.ring
    l = ring.bits
    batch = x.shape[1:]
    params = DPFParams(l, l)
    r_sh, w_sh, k0, k1 = deal_masked_keys(s, h, batch, params, workers) \
        if prep is None else _check_prep(prep, x.shape, params)
    zh = _open_to_key_holders(s, ring.add(ring.sub(x, y), r_sh), h)
    e0, e1 = _eval_pair(s, params, h, (k0, k1), zh, workers)
    return _key_holder_rows(x.shape[0], e0, e1, w_sh) & ring.mask


def abs_value(s: Session, x: np.ndarray, holders: ArrayLike, *, workers: int | None = None,
              in_bits: int | None = None, prep: tuple | None = None) -> np.ndarray:
    """Additive shares of |x| for signed x with |x| < 2^(l-1).

    ``in_bits`` (|x| < 2^(in_bits-1)): the comparison as :func:`less_than`'s;
    the product stays in Z_2^l.
    Steps: b = MSB(x) with the :func:`less_than` machinery (1 round), then
    |x| = x - 2 x b with one Beaver multiplication (``mpc.protocols.beaver.multiply``,
    1 round, triple from the dealer).
    Cost: online 2 rounds; per party (p = 2) l + 2 l = 3 l bits sent;
    offline one comparison plus one Beaver triple (3 p l bits).
    Threat model: module docstring; Beaver: semi-honest, trusted dealer.
    """
    from mpc.protocols.beaver import multiply

    s = _check_session(s)
    x = _check_shares(s, x, "x")
    h = _check_holders(s, holders, x)
    ring = s.ring
    msb_prep, triples = (None, None) if prep is None else prep
    if triples is not None and any(np.shape(t) != x.shape for t in triples):
        raise ValueError(f"prep holds Beaver triples of shape {np.shape(triples[0])}, "
                         f"the call's operand has shape {x.shape}")
    b = _msb_gate(s, x, h, workers=workers, in_bits=_check_in_bits(s.ring.bits, in_bits),
                  prep=msb_prep)[0]
    xb = multiply(s, x, b, h, triples)
    return ring.sub(x, ring.smul(2, xb))


def in_interval(s: Session, x: np.ndarray, lo: ArrayLike, hi: ArrayLike, holders: ArrayLike, *,
                workers: int | None = None, prep: tuple | None = None) -> np.ndarray:
    """Additive shares of [lo <= x <= hi] for signed x and public signed bounds lo <= hi.

    ``lo``, ``hi``: ints (or integer arrays broadcastable to the batch) in
    [-2^(l-1), 2^(l-1)). Steps (EUROCRYPT 2021, interval containment gate):
    shift to unsigned order x' = x + 2^(l-1); with D(t) = [t < r] (one DCF on
    l bits, alpha = r, beta = 1) and x^' = x' + r opened to the key holders,
    [x' < a] = D(x^' - a) - D(x^') + [x^' < a] for every public a in
    [0, 2^l], so [lo' <= x' <= hi'] = D(x^' - hi' - 1) - D(x^' - lo') +
    [x^' <= hi'] - [x^' < lo'] (D(x^') cancels): two evaluations of one key.
    Cost: online 1 round, l bits per party (p = 2); offline the serialized
    DCF key, wire_bits(l, l) bits per key holder plus 2 l bits per holder.
    Exact for every x. Threat model: module docstring.
    """
    s = _check_session(s)
    x = _check_shares(s, x, "x")
    h = _check_holders(s, holders, x)
    ring = s.ring
    l = ring.bits
    batch = x.shape[1:]
    lo_a = signed_bound(lo, l, "lo", batch)
    hi_a = signed_bound(hi, l, "hi", batch)
    if np.any(lo_a > hi_a):
        raise ValueError("lo must be <= hi")
    half = 1 << (l - 1)
    lo_u = (lo_a.astype(_U64) + _U64(half)) & ring.mask      # unsigned order, in [0, 2^l)
    hi_u = (hi_a.astype(_U64) + _U64(half)) & ring.mask
    params = DCFParams(l, l)
    r_sh, w_sh, k0, k1 = deal_masked_keys(s, h, batch, params, workers) \
        if prep is None else _check_prep(prep, x.shape, params)
    zh = _open_to_key_holders(s, ring.add(x, r_sh), h)
    xs = ring.add(zh, _U64(half))                              # x^' = x' + r
    pts = np.stack([ring.sub(ring.sub(xs, hi_u), _ONE), ring.sub(xs, lo_u)])
    d0, d1 = _eval_pair(s, params, h, (k0, k1), pts, workers)
    pub = np.subtract(np.asarray(xs <= hi_u, _U64), np.asarray(xs < lo_u, _U64), dtype=_U64)
    y0 = d0[0] - d0[1] + pub
    y1 = d1[0] - d1[1]
    return _key_holder_rows(x.shape[0], y0, y1, w_sh) & ring.mask


def _check_prep(prep, shape, params):
    """A dealt offline part must fit the call before anything is opened with it (a mask of
    another shape or width would open x + r with a reused or too short mask)."""
    r_sh, w_sh, k0, k1 = prep
    if np.shape(r_sh) != shape or np.shape(w_sh) != shape:
        raise ValueError(f"prep was dealt for operands of shape {np.shape(r_sh)}, "
                         f"the call's have shape {shape}")
    for key in (k0, k1):
        if (key.n_bits, key.out_bits, tuple(key.shape)) != \
                (params.n_bits, params.out_bits, tuple(shape[1:])):
            raise ValueError(f"prep holds keys on {key.n_bits} bits for a batch of shape "
                             f"{tuple(key.shape)}; the call needs {params.n_bits} bits and "
                             f"{tuple(shape[1:])}")
    return prep


def prepare(gate: Callable[..., np.ndarray], s: Session, holders: ArrayLike, batch: Any, *,
            workers: int | None = None, in_bits: int | None = None) -> tuple:
    """Deal the offline part of one call of ``gate`` (a gate of this module) on a batch, now.

    ``batch``: the shape of the call's operands less their first axis;
    ``holders``, ``workers``, ``in_bits``: those the call will get. Returns
    what ``gate(..., prep=...)`` takes instead of dealing: the same dealer
    draws in the same order and the same offline traffic, so prepare-then-call
    gives the bits of a plain call. Nothing of it depends on the operands,
    which may not exist yet (:func:`ustat.umpc.chunk.prepare_chunk` deals a
    chunk's gates while its edges are still being drawn).
    Cost: the gate's offline cost (its docstring).
    """
    s = _check_session(s)
    batch = tuple(int(b) for b in np.atleast_1d(batch)) if np.ndim(batch) else (int(batch),)
    h = _check_holders(s, holders, (np.shape(holders)[0],) + batch)
    l = s.ring.bits
    if gate in (less_than, greater_than, sign, abs_value):
        d = _check_in_bits(l, in_bits)
        msb = deal_msb(s, h, batch, l if d is None else d, workers)
        return (msb, s.dealer.beaver_triples(h, batch)) if gate is abs_value else msb
    if in_bits is not None:
        raise ValueError(f"{getattr(gate, '__name__', gate)} takes no in_bits")
    if gate is equal:
        return deal_masked_keys(s, h, batch, DPFParams(l, l), workers)
    if gate is in_interval:
        return deal_masked_keys(s, h, batch, DCFParams(l, l), workers)
    raise ValueError(f"no offline part to prepare for {gate!r}")


_GATES = ("less_than", "greater_than", "sign", "equal", "in_interval", "abs_value")


def costs(gate: str, l: int, p: int = 2, in_bits: int | None = None) -> dict:
    """Per-instance communication of a gate, as the network measures it (tests check equality).

    Returns ``online_rounds``, ``offline_rounds`` and bits per instance:
    ``online_sent_key_holder`` (each of holders[0], holders[1]),
    ``online_sent_other`` (each other holder), ``online_received_key_holder``,
    ``offline_key_holder`` / ``offline_other`` (received from the dealer),
    ``key_bits`` (one FSS key as sent: its serialized payload) and
    ``key_info_bits`` (the paper's count, 128 + n (130 + l) + l for a DCF,
    which the payload exceeds only by byte padding). For ``abs_value`` the Beaver multiplication
    is included (2 (p-1) l bits sent per holder, 3 l bits per holder offline).
    ``in_bits`` (d): the narrow comparison of :func:`less_than` (less_than,
    greater_than, sign, abs_value): d bits per opened share, a DCF on d - 1
    bits, mask shares of d bits (the output-mask shares stay l bits).
    """
    if gate not in _GATES:
        raise ValueError(f"gate must be one of {_GATES}, got {gate!r}")
    if isinstance(l, bool) or not isinstance(l, numbers.Integral) or not 2 <= l <= 64:
        raise ValueError(f"l must be an integer in 2..64, got {l!r}")
    if isinstance(p, bool) or not isinstance(p, numbers.Integral) or p < 2:
        raise ValueError(f"p must be an integer >= 2, got {p!r}")
    d = _check_in_bits(l, in_bits) or l
    if d < l and gate in ("equal", "in_interval"):
        raise ValueError(f"in_bits applies to the comparison gates, not {gate!r}")
    prm: TreeParams = DPFParams(l, l) if gate == "equal" else \
        DCFParams(l, l) if gate == "in_interval" else DCFParams(d - 1, l)
    kb = prm.wire_bits
    out = {
        "online_rounds": 1, "offline_rounds": 1, "key_bits": kb,
        "key_info_bits": prm.key_bits,
        "online_sent_key_holder": d, "online_sent_other": 2 * d,
        "online_received_key_holder": (p - 1) * d,
        "offline_key_holder": kb + d + l, "offline_other": d + l,
    }
    if gate == "abs_value":
        mul = 2 * (p - 1) * l
        out.update(online_rounds=2, offline_rounds=2,
                   online_sent_key_holder=d + mul, online_sent_other=2 * d + mul,
                   online_received_key_holder=(p - 1) * d + mul,
                   offline_key_holder=kb + d + 4 * l, offline_other=d + 4 * l)
    if p == 2:
        out.pop("online_sent_other")
        out.pop("offline_other")
    return out
