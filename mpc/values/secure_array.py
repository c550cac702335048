"""The secure value: :class:`SecureArray`, its arithmetic, and :func:`where`.

A :class:`SecureArray` holds its shares ``uint64 (p, *shape)``, holders, sharing kind,
ring, fixed-point scale and tracked bound (the whole reference: :mod:`mpc.values`). Here:
the class with its arithmetic (``+ - *``; a product of two secure values is a Beaver
product, one round), indexing, reductions, the XOR values' ``^``, ``&`` and bit
conversion, and the selection :func:`where`. The rest is delegated along the protocol's
seams: shapes, scales and public operands to :mod:`mpc.values.operands`; comparisons and
max / min to :mod:`mpc.values.comparisons`; fixed-point functions to
:mod:`mpc.values.fixedpoint`; sorting, item assignment and numpy's protocols
(``__array_function__``, ``__array_ufunc__``) to :mod:`mpc.values.arrays`; inputs,
constants and outputs: :mod:`mpc.values.input_output`.

Cost: local except products (one Beaver round: the session's preprocessing, a trusted
dealer or OT between the holders), comparisons (the session's comparison provider) and
the XOR values' ``&`` and ``to_additive`` (one round with the dealer's triples / daBits).
Threat model: that of the providers (static semi-honest adversary; a trusted dealer for
triples and keys, none with garbled circuits and OT preprocessing); nothing is opened here.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import ArrayLike

import mpc.values.arrays as _arrays
import mpc.values.comparisons as _cmp
import mpc.values.fixedpoint as _fp
import mpc.values.operands as _ops
from mpc.arith.ring import Ring
from mpc.protocols import compare as _compare
from mpc.protocols.beaver import multiply as _multiply
from mpc.protocols.beaver import multiply_xor as _multiply_xor
from mpc.protocols.dealer import check_holders

if TYPE_CHECKING:
    from mpc.session import Session

__all__ = ["KINDS", "SecureArray", "stack", "where"]

KINDS = ("additive", "xor")


class SecureArray:
    """A secret-shared array with ``+ - *``, ``< <= > >= ==``, ``^ &`` (XOR values), indexing
    and the methods below (:mod:`mpc.values`). Make one with ``session.input``."""

    __slots__ = ("_shares", "bound", "frac_bits", "holders", "kind", "ring", "session")
    __array_priority__ = 100            # numpy scalars and arrays defer to our operators

    def __init__(self, session: Session, shares: ArrayLike, holders: ArrayLike, *,
                 kind: str = "additive", ring: Ring | None = None, frac_bits: int = 0,
                 bound: int | None = None):
        if kind not in KINDS:
            raise ValueError(f"kind must be one of {KINDS}, got {kind!r}")
        shares = np.asarray(shares)
        if shares.dtype != np.uint64 or shares.ndim < 1:
            raise TypeError(f"shares must be uint64 (p, *shape), got {shares.dtype} of shape "
                            f"{shares.shape}")
        self.session = session
        self.ring = session.ring if ring is None else ring
        self.holders = _check_value_holders(session, holders, shares.shape)
        self._shares = shares
        self.kind = kind
        self.frac_bits = int(frac_bits)
        top = 1 << (self.ring.bits - 1) if kind == "additive" else 1 << self.ring.bits
        self.bound = top if bound is None else int(bound)

    # -- what it is -------------------------------------------------------------------------
    @property
    def shape(self) -> tuple:
        """The public shape of the secret (the shares' shape without the holder axis)."""
        return self._shares.shape[1:]

    @property
    def p(self) -> int:
        """Number of holders (share rows)."""
        return self._shares.shape[0]

    @property
    def ndim(self) -> int:
        """Number of dimensions of the secret."""
        return self._shares.ndim - 1

    def __len__(self) -> int:
        return self.shape[0]

    def __repr__(self) -> str:
        return (f"SecureArray(shape={self.shape}, kind={self.kind!r}, l={self.ring.bits}, "
                f"frac_bits={self.frac_bits}, holders={self.holders.shape[0]})")

    def share(self, holder: int) -> np.ndarray:
        """The share of holder ``holder`` (a party id in ``holders``), if it runs here.

        Raises ValueError if ``holder`` is not a holder and PermissionError if
        it is not local to this process: a share that is not local cannot be
        read, in any mode.
        """
        h = self.holders
        rows = np.flatnonzero(np.any(h.reshape(h.shape[0], -1) == holder, axis=1))
        if rows.size == 0:
            raise ValueError(f"participant {holder} holds no share of this value")
        if not self.session.is_local(holder):
            raise PermissionError(f"participant {holder} does not run in this process: its "
                                  "share cannot be read here")
        if h.ndim == 1:
            return self._shares[int(rows[0])].copy()
        mask = h == holder
        return np.where(mask, self._shares, np.uint64(0)).sum(axis=0, dtype=np.uint64)

    @property
    def shares(self) -> np.ndarray:
        """Every share row, for protocol code below this layer (the simulator: everyone's; in a
        run of several processes the rows of holders elsewhere hold nothing meaningful)."""
        return self._shares

    def _like(self, shares, *, frac_bits=None, bound=None, kind=None, holders=None):
        return SecureArray(self.session, shares, self.holders if holders is None else holders,
                           kind=self.kind if kind is None else kind, ring=self.ring,
                           frac_bits=self.frac_bits if frac_bits is None else frac_bits,
                           bound=self.bound if bound is None else bound)

    # -- public operands --------------------------------------------------------------------------
    def _public(self, v, frac_bits: int, name: str = "public operand"):
        """``v`` encoded at scale ``frac_bits`` (uint64, broadcast to the shape) and its bound:
        :func:`mpc.values.operands.encode_public`."""
        return _ops.encode_public(self, v, frac_bits, name)

    def _add_public(self, enc):
        """Shares of this value plus the encoded public ``enc``
        (:func:`mpc.values.operands.add_public`)."""
        return _ops.add_public(self, enc)

    def _public_operand(self, v, op: str, name: str = "public operand"):
        """This value broadcast against the public ``v`` and ``v`` encoded at the value's scale
        with its bound: :func:`mpc.values.operands.public_operand`."""
        return _ops.public_operand(self, v, op, name)

    def _to_shape(self, shape: tuple) -> SecureArray:
        """This value broadcast to the data shape ``shape`` (a view, no message):
        :func:`mpc.values.operands.to_shape`."""
        return _ops.to_shape(self, shape)

    def _public_row(self):
        """Where a public constant is added: the first holder's row (per instance alike)."""
        return 0

    # -- alignment of scales -----------------------------------------------------------------------
    def _broadcast_aligned(self, other: SecureArray, op: str):
        """Both operands at one data shape and one scale
        (:func:`mpc.values.operands.broadcast_aligned`)."""
        return _ops.broadcast_aligned(self, other, op)

    def _aligned(self, other: SecureArray):
        """Both operands (same family) at the larger scale (an exact shift):
        :func:`mpc.values.operands.aligned`."""
        return _ops.aligned(self, other)

    def _rescaled(self, frac_bits: int) -> SecureArray:
        return _ops.rescaled(self, frac_bits)

    # -- arithmetic -------------------------------------------------------------------------------
    def __add__(self, other):
        """``x + y``: local. A secure ``y`` is aligned to the larger scale exactly; a public
        float that is not a whole number of units of x's scale widens x to the session's
        scale first (:func:`mpc.values.fixedpoint.widen_for`). The bound is the sum of bounds."""
        self._additive("+")
        self = _fp.widen_for(self, other)
        if isinstance(other, SecureArray):
            a, b = self._broadcast_aligned(other, "+")
            return a._like((a._shares + b._shares) & a.ring.mask, bound=a.bound + b.bound)
        x, enc, bound = self._public_operand(other, "+")
        return x._like(x._add_public(enc), bound=x.bound + bound)

    __radd__ = __add__

    def __neg__(self):
        self._additive("-")
        return self._like(_ops.neg(self._shares, self.ring))

    def __sub__(self, other):
        return self + (-other if isinstance(other, SecureArray) else -np.asarray(other))

    def __rsub__(self, other):
        return (-self) + other

    def __mul__(self, other):
        """``x * y``. Two secure values: a Beaver product (one round), truncated back to the
        larger scale when both are fixed point (:func:`mpc.values.fixedpoint.rescale_product`, one
        round more; exact with an integer value). A public integer: local and exact. A
        public float (or float array): :func:`mpc.values.fixedpoint.multiply_public` (planned
        scale, error stated, ValueError rather than a silent loss)."""
        self._additive("*")
        if isinstance(other, SecureArray):
            other._additive("*")
            shape = _ops.data_shape(self.shape, other.shape, "*")
            x, y = self._to_shape(shape), other._to_shape(shape)
            _ops.same_family(x, y)
            h = x.holders
            pre = self.session.preprocessing
            triples = pre.triples(self.session, h, shape) if not pre.dealer else None
            z = _multiply(self.session, np.ascontiguousarray(x._shares),
                          np.ascontiguousarray(y._shares), h, triples)
            return _fp.rescale_product(
                SecureArray(self.session, z, h, ring=self.ring,
                            frac_bits=self.frac_bits + other.frac_bits,
                            bound=self.bound * other.bound), self.frac_bits, other.frac_bits)
        arr = np.asarray(other)
        if arr.dtype.kind in "iub":
            enc, bound = self._public(arr, 0)
            x = self._to_shape(_ops.data_shape(self.shape, enc.shape, "*"))
            return x._like((x._shares * enc) & self.ring.mask, bound=self.bound * max(bound, 1))
        if arr.dtype.kind != "f":
            raise TypeError(f"public operand must be numeric, got {arr.dtype}")
        x = self._to_shape(_ops.data_shape(self.shape, arr.shape, "*"))
        return _fp.multiply_public(x, arr if arr.ndim else float(arr))

    __rmul__ = __mul__

    def __truediv__(self, other):
        """``x / d``: a public divisor by :func:`mpc.values.fixedpoint.divide_public` (exact to the
        stated error), a secure one by :func:`mpc.values.fixedpoint.divide`."""
        if isinstance(other, SecureArray):
            return _fp.divide(self, other)
        arr = np.asarray(other)
        if arr.ndim:
            x = self._to_shape(_ops.data_shape(self.shape, arr.shape, "/"))
            return _fp.multiply_public(x, 1.0 / arr.astype(np.float64))
        return _fp.divide_public(self, other.item() if isinstance(other, np.generic) else other)

    def __rtruediv__(self, other):
        """``c / x`` for a public ``c``: :func:`mpc.values.fixedpoint.divide` (an integer ``x``:
        the domain |x| >= 1; a fixed-point one needs ``divide(c, x, lower=...)``)."""
        return _fp.divide(other, self)

    def __abs__(self):
        """``abs(x)``: :func:`mpc.values.fixedpoint.abs_value` (one comparison, one product)."""
        return _fp.abs_value(self)

    def _additive(self, op):
        if self.kind != "additive":
            raise TypeError(f"'{op}' needs additive values; this one is {self.kind!r} "
                            "(to_additive() converts a bit)")

    # -- comparisons ------------------------------------------------------------------------------
    def _compare(self, other, op: str, flip: bool = False):
        return _cmp.compare(self, other, op, flip)

    def __lt__(self, other):
        return self._compare(other, "<")

    def __gt__(self, other):
        return self._compare(other, ">", flip=True)

    def __le__(self, other):
        return self._compare(other, ">=", flip=True)        # x <= y  <=>  not (y - x < 0)

    def __ge__(self, other):
        return self._compare(other, ">=")                   # x >= y  <=>  not (x - y < 0)

    def __eq__(self, other):                                # elementwise, as numpy
        return self._compare(other, "==")

    __hash__ = None  # type: ignore[assignment]  # unhashable, as numpy arrays

    def __bool__(self):
        raise TypeError("a secure value has no truth value in the clear: open it with "
                        "session.output(...) or select with mpc.values.where")

    # -- selection and reductions ---------------------------------------------------------------
    def if_else(self, a: SecureArray | ArrayLike, b: SecureArray | ArrayLike) -> SecureArray:
        """``a`` where this 0/1 value is 1, else ``b`` (one Beaver product): :func:`where`."""
        return where(self, a, b)

    def __getitem__(self, index):
        """``x[index]``: numpy's basic and advanced indexing on the data axes (local); a secret
        index: :meth:`take`."""
        idx = index if isinstance(index, tuple) else (index,)
        shares = self._shares[(slice(None),) + idx]
        h = self.holders if self.holders.ndim == 1 else self.holders[(slice(None),) + idx]
        return self._like(shares, holders=h)

    def reshape(self, *shape: int | tuple[int, ...]) -> SecureArray:
        """The same secret with another shape (local)."""
        shape = shape[0] if len(shape) == 1 and isinstance(shape[0], tuple) else shape
        h = self.holders if self.holders.ndim == 1 else \
            self.holders.reshape((self.p,) + tuple(shape))
        return self._like(self._shares.reshape((self.p,) + tuple(shape)), holders=h)

    def sum(self, axis: int | tuple[int, ...] | None = None) -> SecureArray:
        """Sum over ``axis`` (all axes when None): local, no message."""
        self._additive("sum")
        if self.holders.ndim > 1:
            raise ValueError("sum needs the same holders for every element")
        ax = tuple(range(1, self.ndim + 1)) if axis is None else _ops.shift_axis(axis, self.ndim)
        count = math.prod(self.shape[a - 1] for a in np.atleast_1d(ax))
        s = self._shares.sum(axis=ax, dtype=np.uint64) & self.ring.mask
        return self._like(s, bound=self.bound * count)

    def dot(self, other: SecureArray | ArrayLike) -> SecureArray:
        """Inner product over the last axis (one Beaver round for the products)."""
        return (self * other).sum(axis=-1)

    def max(self, axis: int = 0) -> SecureArray:
        """Maximum over ``axis``: ceil(log2 n) levels of one comparison and one product round."""
        return _cmp.tournament(self, axis, "max")[0]

    def min(self, axis: int = 0) -> SecureArray:
        """Minimum over ``axis`` (as :meth:`max`)."""
        return _cmp.tournament(self, axis, "min")[0]

    def argmax(self, axis: int = 0) -> SecureArray:
        """Index of the maximum over ``axis`` (the first on ties, as numpy), secret, as
        :meth:`max` with the indices selected in the same product rounds."""
        return _cmp.tournament(self, axis, "max", with_index=True)[1]

    def argmin(self, axis: int = 0) -> SecureArray:
        """Index of the minimum over ``axis`` (the first on ties), as :meth:`argmax`."""
        return _cmp.tournament(self, axis, "min", with_index=True)[1]

    # -- fixed point (mpc.values.fixedpoint) and array operations (mpc.values.arrays) --------------
    def assume_bound(self, bound: float) -> SecureArray:
        """The same secret with tracked bound |value| <= ``bound`` (in value units, at this
        scale): the caller's proof, not checked (no share is read). Use after a step that
        provably shrinks a value the tracking cannot see (a clipped or normalized value, a
        sum of 0/1 flags over known groups): a wrong bound makes later comparisons and
        truncations silently wrong."""
        ring_bound = math.ceil(float(bound) * (1 << self.frac_bits))
        if not 0 <= ring_bound < 1 << (self.ring.bits - 1):
            raise ValueError(f"bound {bound!r} must be >= 0 and below 2^{self.ring.bits - 1} "
                             f"ring units at {self.frac_bits} fractional bits")
        return self._like(self._shares, bound=ring_bound)

    def truncate(self, m: int) -> SecureArray:
        """Divide by 2^m, m fractional bits fewer: :func:`mpc.values.fixedpoint.truncate`."""
        return _fp.truncate(self, m)

    def reciprocal(self, lower: float | None = None) -> SecureArray:
        """1 / x on [lower, bound], Newton's iteration: :func:`mpc.values.fixedpoint.reciprocal`."""
        return _fp.reciprocal(self, lower)

    def sqrt(self, lower: float | None = None) -> SecureArray:
        """Square root, Newton on the inverse square root: :func:`mpc.values.fixedpoint.sqrt`."""
        return _fp.sqrt(self, lower)

    def exp(self) -> SecureArray:
        """e^x, Taylor and squarings: :func:`mpc.values.fixedpoint.exp`."""
        return _fp.exp(self)

    def sigmoid(self) -> SecureArray:
        """1 / (1 + e^-x): :func:`mpc.values.fixedpoint.sigmoid`."""
        return _fp.sigmoid(self)

    def mean(self, axis: int | None = None) -> SecureArray:
        """Mean over ``axis`` (sum times the public 1/n): :func:`mpc.values.fixedpoint.mean`."""
        return _fp.mean(self, axis)

    def var(self, axis: int | None = None, ddof: int = 0) -> SecureArray:
        """Variance over ``axis``: :func:`mpc.values.fixedpoint.var`."""
        return _fp.var(self, axis, ddof)

    def sort(self, axis: int = 0) -> SecureArray:
        """Sorted ascending along ``axis``, Batcher's network: :func:`mpc.values.arrays.sort`."""
        return _arrays.sort(self, axis)

    def argsort(self, axis: int = 0) -> SecureArray:
        """Secret indices that sort along ``axis``: :func:`mpc.values.arrays.argsort`."""
        return _arrays.argsort(self, axis)

    def shuffle(self, axis: int = 0) -> SecureArray:
        """A secret uniform permutation along ``axis``: :func:`mpc.values.arrays.shuffle`."""
        return _arrays.shuffle(self, axis)

    def take(self, index: SecureArray) -> SecureArray:
        """``x[index]`` for a secret integer index: :func:`mpc.values.arrays.take`."""
        return _arrays.take(self, index)

    def __setitem__(self, index, value):
        """``x[index] = value`` (secure or public), in place: :func:`mpc.values.arrays.setitem`."""
        _arrays.setitem(self, index, value)

    def __array_function__(self, func, types, args, kwargs):
        """numpy functions: concatenate, stack, sum, mean, var, where, sort, argsort run
        securely; others raise TypeError naming what to use
        (:func:`mpc.values.arrays.array_function`): never an object array."""
        return _arrays.array_function(func, args, kwargs)

    def __array__(self, dtype=None, copy=None):
        """``np.asarray(x)``: refused (TypeError), never an object array of a secret."""
        raise TypeError("a secure value is not a numpy array: open it with session.output(x), "
                        "or use mpc.values.arrays / the SecureArray methods")

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        """numpy ufuncs (``np.add``, ``np.less``, ``np.abs``, ``np.sqrt``, ``np.exp``, and a
        numpy array on the left of an operator): :func:`mpc.values.arrays.array_ufunc`."""
        return _arrays.array_ufunc(SecureArray, ufunc, method, inputs, kwargs)

    # -- XOR values -------------------------------------------------------------------------------
    def __xor__(self, other):
        self._xor_kind("^")
        if isinstance(other, SecureArray):
            other._xor_kind("^")
            _ops.same_family(self, other)
            return self._like(self._shares ^ other._shares)
        out = self._shares.copy()
        out[0] ^= np.broadcast_to(np.asarray(other, dtype=np.uint64) & self.ring.mask,
                                  self.shape)
        return self._like(out)

    __rxor__ = __xor__

    def __and__(self, other):
        self._xor_kind("&")
        if not isinstance(other, SecureArray):
            return self._like(self._shares & (np.asarray(other, dtype=np.uint64) & self.ring.mask))
        other._xor_kind("&")
        _check_products(self.session)
        return self._like(_multiply_xor(self.session, self._shares, other._shares,
                                        self.holders, self.ring))

    __rand__ = __and__

    def to_additive(self) -> SecureArray:
        """A 1-bit XOR value as an additive 0/1 value (a daBit, one round)."""
        self._xor_kind("to_additive")
        if self.ring.bits != 1 and self.bound > 1:
            raise ValueError("to_additive converts single bits (an XOR value of a 1-bit ring)")
        _check_products(self.session)
        ctx = _compare._Context(self.session, self.holders, self.shape)
        bits = (self._shares & np.uint64(1)).astype(np.uint8)
        out = ctx.bit_to_arith(bits)
        return SecureArray(self.session, out, self.holders, bound=1)

    def _xor_kind(self, op):
        if self.kind != "xor":
            raise TypeError(f"'{op}' needs XOR values; this one is {self.kind!r}")


# -- module functions -----------------------------------------------------------------------------
def where(cond: SecureArray, a: SecureArray | ArrayLike,
          b: SecureArray | ArrayLike) -> SecureArray:
    """``a`` where the 0/1 value ``cond`` is 1, else ``b``: b + cond (a - b), one Beaver product.
    The result is one of the two, so its tracked bound is the larger of theirs (a selection
    never grows it, e.g. in a hand-written sort).

    ``a``, ``b``: secure values or public numbers (at least one secure, or
    ``cond`` alone carries the holders).
    """
    if not isinstance(cond, SecureArray) or cond.bound > 1:
        raise TypeError("cond must be a 0/1 secure value (the result of a comparison)")
    if isinstance(a, SecureArray):
        diff = a - b
    elif isinstance(b, SecureArray):
        diff = -(b - a)
    else:
        return cond * (np.asarray(a) - np.asarray(b)) + b
    out = cond * diff + b
    return out._like(out._shares, bound=max(_bound_of(a, out), _bound_of(b, out)))


def _bound_of(v, like: SecureArray) -> int:
    """The tracked bound of ``v`` at ``like``'s scale (a public ``v``: its encoding's)."""
    if isinstance(v, SecureArray):
        return v.bound << (like.frac_bits - v.frac_bits)
    return like._public(v, like.frac_bits)[1]


def stack(values: Iterable[SecureArray], axis: int = 0) -> SecureArray:
    """Secure values of one shape and family stacked along a new ``axis``:
    :func:`mpc.values.arrays.stack`."""
    return _arrays.stack(values, axis)


# -- helpers --------------------------------------------------------------------------------------
def _check_products(session) -> None:
    """ANDs of XOR values and daBits come from the session's trusted dealer: refused without
    one (products of additive values take the preprocessing's triples, OT ones too)."""
    pre = session.preprocessing
    if not pre.dealer:
        raise ValueError(f"an AND or a bit conversion of secure values needs the dealer's "
                         f"triples, and this session's "
                         f"preprocessing ({type(pre).__name__}: {pre.trust}) deals none; use "
                         "Session(preprocessing=TrustedDealerPreprocessing()) for them")


def _check_value_holders(session, holders, shape) -> np.ndarray:
    h = check_holders(holders, session.net, shape[1:] if np.ndim(holders) > 1 else None)
    if h.shape[0] != shape[0]:
        raise ValueError(f"shares have {shape[0]} rows but holders names {h.shape[0]}")
    return h

