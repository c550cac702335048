"""Comparisons of secure values, and the max / min tournaments built on them.

``x < y``, ``x <= y``, ``x > y``, ``x >= y``, ``x == y`` on a
:class:`mpc.values.secure_array.SecureArray` (:func:`compare`): the difference ``z = x - y`` (or
``x`` minus a public value) is formed locally at the operands' common scale, its tracked
bound checked against the gate's domain (|z| < 2^(l-1); ValueError naming the operand, before
any message, never reading a share), and handed to the session's comparison provider
(:mod:`mpc.protocols.providers`: the first that serves the number of holders) as a
``ltz`` or ``eqz`` gate on ``bound.bit_length() + 1`` input bits. Results are 0/1 values
at scale 0 with bound 1. A batch above :data:`CHUNK` comparisons goes in chunks that
travel together (:func:`in_chunks`). ``max``, ``min``, ``argmax``, ``argmin`` over an
axis (:func:`tournament`): ceil(log2 n) levels, each one batched comparison of the pairs
and one round of Beaver products selecting the winners (and their indices).

Cost: the provider's per comparison (one round with ``fss.FSSGates()``, about 8 with the
p-party circuit :mod:`mpc.protocols.compare`, Yao with ``mpc.gc.GarbledCircuits()``); a
tournament level adds one product round. Threat model: the provider's (static
semi-honest holders; a trusted dealer for its keys, none with garbled circuits).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

import mpc.values.arrays as _arrays
import mpc.values.fixedpoint as _fp
from mpc.values.operands import concat, moveaxis, neg, public_shares, shift_axis

if TYPE_CHECKING:
    from mpc.session import Session
    from mpc.values.secure_array import SecureArray

__all__ = ["CHUNK", "compare", "in_chunks", "tournament"]

#: comparisons per chunk of a large batch (bounds the dealer's keys in memory, and lets the
#: processes of a run overlap one chunk's key generation with the previous chunk's evaluation;
#: ``mpc.values.CHUNK`` is this value, re-exported: to change it, set it here)
CHUNK = 1 << 17


def compare(x: SecureArray, other: Any, op: str, flip: bool = False) -> SecureArray:
    """``x op other`` elementwise, a 0/1 secure value at scale 0 (``op``: ``"<"``, ``">"``,
    ``">="``, ``"=="``; ``flip`` compares ``other - x`` instead of ``x - other``, so that
    ``>`` and ``<=`` are ``<`` and ``>=`` with the operands swapped).

    ``other``: a secure value (aligned to the common shape and scale) or a public number.
    Raises ValueError before any message if the difference may leave the gate's domain.
    Cost: one batched comparison of the session's provider.
    """
    x._additive(op)
    x = _fp.widen_for(x, other)
    if isinstance(other, type(x)):
        a, b = x._broadcast_aligned(other, op)
        z_shares = (a._shares - b._shares) & a.ring.mask
        bound = a.bound + b.bound
        what = "the difference of the operands"
    else:
        a, enc, pb = x._public_operand(other, op, "the compared public value")
        z_shares = a._add_public(neg(enc, x.ring))
        bound = a.bound + pb
        what = "the operand minus the public value"
    if flip:
        z_shares = neg(z_shares, x.ring)
    l = a.ring.bits
    if bound >= 1 << (l - 1):
        raise ValueError(
            f"comparison operand out of the gate's domain: {what} may reach 2^"
            f"{bound.bit_length() - 1} or more in magnitude, and must stay below 2^{l - 1} "
            f"(Z_2^{l}); give smaller input bounds (session.input(..., bound=...)), "
            "x.assume_bound(B) after a step that provably bounds the value, or a wider "
            "ring")
    in_bits = bound.bit_length() + 1
    in_bits = in_bits if in_bits < l else None
    holders = a.holders
    shape = z_shares.shape[1:]
    flat = z_shares.reshape(z_shares.shape[0], -1)
    hflat = holders if holders.ndim == 1 else holders.reshape(holders.shape[0], -1)
    fn = x.session.comparison_for(flat.shape[0]).compare
    gate = "eqz" if op == "==" else "ltz"
    out = in_chunks(x.session, fn, np.ascontiguousarray(flat), hflat, gate, in_bits)
    if op == ">=":                                      # 1 - [z < 0]
        out = neg(out, a.ring)
        out[0] = (out[0] + np.uint64(1)) & a.ring.mask
    res = out.reshape((flat.shape[0],) + shape)
    return type(x)(x.session, res, holders, ring=a.ring, frac_bits=0, bound=1)


def in_chunks(session: Session, fn: Any, z: np.ndarray, holders: np.ndarray, gate: str,
              in_bits: int | None) -> np.ndarray:
    """``fn`` on a (p, m) batch, in chunks of :data:`CHUNK` that travel together.

    Each chunk is a lane of one ``net.parallel()`` block: their rounds count
    once, as one batch's would; the bits are the same. In a run across
    processes nothing waits for the whole batch: the dealer deals the next
    chunk while the holders evaluate this one. Inside an open parallel block
    (or for a small batch) the batch goes in one piece.
    """
    m = z.shape[1]
    net = session.net
    if m <= CHUNK or net._lanes is not None or net._round_depth:
        return fn(session, z, holders, gate, in_bits)
    out = np.empty_like(z)
    per_instance = holders.ndim > 1
    with net.parallel():
        for a in range(0, m, CHUNK):
            b = min(a + CHUNK, m)
            with net.lane():
                out[:, a:b] = fn(session, np.ascontiguousarray(z[:, a:b]),
                                 holders[:, a:b] if per_instance else holders, gate, in_bits)
    return out


def tournament(x: SecureArray, axis: int, mode: str,
               with_index: bool = False) -> tuple[SecureArray, Any]:
    """max/min (``mode``) of ``x`` over ``axis``, and with ``with_index`` its index (the first
    on ties, as numpy; None without), by pairwise rounds: one batched comparison and one
    batched product round (:meth:`mpc.values.secure_array.SecureArray.if_else`) per level,
    ceil(log2 n) levels."""
    x._additive(mode)
    ax = shift_axis(axis, x.ndim) - 1
    vals = moveaxis(x, ax)
    n = vals.shape[0]
    idx: Any = None
    if with_index:
        idx_pub = np.broadcast_to(np.arange(n).reshape((n,) + (1,) * (vals.ndim - 1)),
                                  vals.shape)
        idx = vals._like(public_shares(vals, idx_pub), frac_bits=0, bound=n)
    while vals.shape[0] > 1:
        half = vals.shape[0] // 2
        a, b = vals[:half], vals[half:2 * half]
        c = (b > a) if mode == "max" else (b < a)
        if with_index:
            ia, ib = idx[:half], idx[half:2 * half]
            both = _arrays.stack([c, c]).if_else(_arrays.stack([b, ib]),
                                                 _arrays.stack([a, ia]))
            new_v, new_i = both[0], both[1]
            new_v = new_v._like(new_v._shares, frac_bits=vals.frac_bits, bound=vals.bound)
            new_i = new_i._like(new_i._shares, frac_bits=0, bound=n)
        else:
            new_v = c.if_else(b, a)
            new_v = new_v._like(new_v._shares, bound=vals.bound)
        if vals.shape[0] % 2:
            new_v = concat(new_v, vals[2 * half:])
            if with_index:
                new_i = concat(new_i, idx[2 * half:])
        vals = new_v
        if with_index:
            idx = new_i
    return vals[0], (idx[0] if with_index else None)
