"""Operands of secure values: data shapes, scales, public numbers, and whether two values combine.

The local bookkeeping behind the operators of :class:`mpc.values.secure_array.SecureArray`,
:mod:`mpc.values.comparisons`, :mod:`mpc.values.fixedpoint` and :mod:`mpc.values.arrays`
(protocol authors use the operators, not these):

- shapes: a value's shares are ``uint64 (p, *shape)``; numpy's broadcasting applies to
  the data axes only, the holder axis stays first and is never broadcast against
  (:func:`data_shape`, :func:`to_shape`, :func:`moveaxis`, :func:`concat`);
- scales: values of different scales meet at the larger one, the other shifted up
  exactly (a public factor 2^d, no truncation: :func:`aligned`, :func:`rescaled`), its
  tracked bound shifted alike and checked against the ring (:func:`check_bound`);
- public numbers: encoded at a value's scale with their bound, refused (ValueError naming
  the operand) when the ring cannot hold them (:func:`encode_public`), and added to the
  first holder's share (:func:`add_public`);
- combining: two values must share a session, a ring, a sharing kind and holders
  (:func:`same_family`).

Cost: local, no message; no decision here reads a share. Threat model: none of its own
(nothing is sent or opened).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from mpc.arith.ring import Ring

if TYPE_CHECKING:
    from mpc.values.secure_array import SecureArray


# -- public operands ---------------------------------------------------------------------------
def encode_public(x: SecureArray, v: Any, frac_bits: int,
                  name: str = "public operand") -> tuple[np.ndarray, int]:
    """``v`` encoded at scale ``frac_bits`` in ``x``'s ring (uint64) and its bound in ring units.

    Raises TypeError for a non-numeric ``v`` and ValueError, naming ``name``, for a
    non-finite one or one outside the ring's signed range at that scale. Local.
    """
    arr = np.asarray(v)
    if arr.dtype.kind not in "iufb":
        raise TypeError(f"{name} must be numeric, got {arr.dtype}")
    lim = 1 << (x.ring.bits - 1)
    if arr.dtype.kind == "f":
        if not np.all(np.isfinite(arr)):
            raise ValueError(f"{name} must be finite")
        scaled = np.rint(arr * float(1 << frac_bits))
        if scaled.size and np.max(np.abs(scaled)) >= lim:
            raise ValueError(f"{name} {show(arr)} is outside the range of Z_2^"
                             f"{x.ring.bits} at {frac_bits} fractional bits "
                             f"(|value| < {lim / (1 << frac_bits):g})")
        enc = scaled.astype(np.int64)
    else:
        lo, hi = (int(arr.min()), int(arr.max())) if arr.size else (0, 0)
        if max(abs(lo), abs(hi)) << frac_bits >= lim:
            raise ValueError(f"{name} {show(arr)} is outside the range of Z_2^"
                             f"{x.ring.bits} at {frac_bits} fractional bits "
                             f"(|value| < 2^{x.ring.bits - 1 - frac_bits})")
        enc = arr.astype(np.int64) << frac_bits
    bound = int(np.max(np.abs(enc))) if enc.size else 0
    return enc.astype(np.uint64) & x.ring.mask, bound


def add_public(x: SecureArray, enc: np.ndarray) -> np.ndarray:
    """Shares of ``x`` plus the encoded public ``enc`` (``enc``'s shape must broadcast to
    ``x``'s: :func:`public_operand` expands the value first). Local."""
    out = np.array(x._shares, copy=True)
    row0 = x._public_row()
    out[row0] = (out[row0] + np.broadcast_to(enc, x.shape)) & x.ring.mask
    return out


def public_operand(x: SecureArray, v: Any, op: str,
                   name: str = "public operand") -> tuple[SecureArray, np.ndarray, int]:
    """``x`` broadcast against the public ``v`` (numpy's rules on the data axes), and ``v``
    encoded at ``x``'s scale with its bound (the caller widens ``x`` first where the scale
    would round ``v``: :func:`mpc.values.fixedpoint.widen_for`). Local."""
    enc, bound = x._public(v, x.frac_bits, name)
    return x._to_shape(data_shape(x.shape, enc.shape, op)), enc, bound


def public_shares(x: SecureArray, values: Any) -> np.ndarray:
    """Shares of a public integer array among ``x``'s holders (holder 0 holds it, zeros
    elsewhere). Local."""
    out = np.zeros((x.p,) + np.shape(values), dtype=np.uint64)
    out[0] = np.asarray(values, dtype=np.int64).astype(np.uint64) & x.ring.mask
    return out


# -- shapes ------------------------------------------------------------------------------------
def data_shape(a: tuple, b: tuple, op: str) -> tuple:
    """numpy's broadcast of two data shapes, or a ValueError naming them (not the shares')."""
    try:
        return tuple(np.broadcast_shapes(tuple(a), tuple(b)))
    except ValueError:
        raise ValueError(f"operands of {op!r} could not be broadcast together: data shapes "
                         f"{tuple(a)} and {tuple(b)}") from None


def to_shape(x: SecureArray, shape: tuple) -> SecureArray:
    """``x`` broadcast to the data shape ``shape`` (numpy's rules; the holder axis stays first
    and is never broadcast against). A view, no message."""
    shape = tuple(shape)
    if shape == x.shape:
        return x
    full = (x.p,) + shape
    lead = (x.p,) + (1,) * (len(shape) - x.ndim) + x.shape
    shares = np.broadcast_to(x._shares.reshape(lead), full)
    h = x.holders if x.holders.ndim == 1 else \
        np.broadcast_to(x.holders.reshape(lead), full)
    return x._like(shares, holders=h)


def shift_axis(axis: Any, ndim: int) -> Any:
    """A data axis (or a tuple of them; negative ones counted from the end) as an axis of the
    shares, whose first axis is the holders'."""
    ax = np.atleast_1d(axis)
    out = tuple(int(a) % ndim + 1 for a in ax) if ndim else (1,)
    return out if np.ndim(axis) else out[0]


def moveaxis(x: SecureArray, ax: int) -> SecureArray:
    """``x`` with its data axis ``ax`` moved first (a contiguous copy). Local."""
    if ax == 0:
        return x
    shares = np.moveaxis(x._shares, ax + 1, 1)
    h = x.holders if x.holders.ndim == 1 else np.moveaxis(x.holders, ax + 1, 1)
    return x._like(np.ascontiguousarray(shares), holders=h)


def concat(a: SecureArray, b: SecureArray) -> SecureArray:
    """``a`` and ``b`` joined along their first data axis, the larger bound kept. Local."""
    h = a.holders if a.holders.ndim == 1 else np.concatenate([a.holders, b.holders], axis=1)
    return a._like(np.concatenate([a._shares, b._shares], axis=1), holders=h,
                   bound=max(a.bound, b.bound))


# -- scales ------------------------------------------------------------------------------------
def broadcast_aligned(x: SecureArray, other: SecureArray,
                      op: str) -> tuple[SecureArray, SecureArray]:
    """Both operands at one data shape (numpy's rules on the data axes) and one scale."""
    shape = data_shape(x.shape, other.shape, op)
    return x._to_shape(shape)._aligned(other._to_shape(shape))


def aligned(x: SecureArray, other: SecureArray) -> tuple[SecureArray, SecureArray]:
    """Both operands (same family) at the larger scale (an exact shift)."""
    same_family(x, other)
    a, b = x, other
    if a.frac_bits < b.frac_bits:
        a = a._rescaled(b.frac_bits)
    elif b.frac_bits < a.frac_bits:
        b = b._rescaled(a.frac_bits)
    return a, b


def rescaled(x: SecureArray, frac_bits: int) -> SecureArray:
    """``x`` at the larger scale ``frac_bits``: shares and bound shifted up exactly (ValueError
    if the bound would leave the ring's signed range). Local."""
    d = frac_bits - x.frac_bits
    bound = x.bound << d
    check_bound(bound, x.ring, f"a value rescaled to {frac_bits} fractional bits")
    return x._like((x._shares << np.uint64(d)) & x.ring.mask, frac_bits=frac_bits,
                   bound=bound)


# -- checks ------------------------------------------------------------------------------------
def same_family(a: SecureArray, b: SecureArray) -> None:
    """Refuse to combine values of different sessions, rings, kinds or holders."""
    if a.session is not b.session:
        raise ValueError("secure values of different sessions cannot be combined")
    if a.ring != b.ring:
        raise ValueError(f"secure values of rings Z_2^{a.ring.bits} and Z_2^{b.ring.bits} "
                         "cannot be combined")
    if a.kind != b.kind:
        raise TypeError(f"cannot combine {a.kind} and {b.kind} values")
    if not (a.holders.shape == b.holders.shape and np.array_equal(a.holders, b.holders)) \
            and not (a.holders.ndim == 1 and b.holders.ndim == 1
                     and np.array_equal(a.holders, b.holders)):
        raise ValueError("secure values held by different parties cannot be combined")


def check_bound(bound: int, ring: Ring, what: str) -> None:
    """Refuse a tracked ``bound`` that may reach the signed range of ``ring`` (ValueError
    naming ``what``)."""
    if bound >= 1 << (ring.bits - 1):
        raise ValueError(f"{what} may exceed the signed range of Z_2^{ring.bits}")


def exact_at(arr: np.ndarray, frac_bits: int) -> bool:
    """Whether the public ``arr`` is exact at ``frac_bits`` fractional bits (integers always)."""
    if arr.dtype.kind != "f":
        return True
    scaled = arr * 2.0 ** frac_bits
    return bool(np.array_equal(np.rint(scaled), scaled))


def neg(x: Any, ring: Ring) -> np.ndarray:
    """-x mod 2^l (arrays or numpy scalars; the wrap is the ring's)."""
    return np.negative(np.asarray(x, dtype=np.uint64)) & ring.mask


def show(arr: Any) -> str:
    """A public operand for an error message: its value, or its largest magnitude."""
    a = np.asarray(arr)
    if a.size == 1:
        return repr(a.item())
    return f"(max |value| {np.max(np.abs(a)):g})"
