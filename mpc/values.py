"""Secure values: typed secret-shared arrays with operators, ``input`` and ``output``.

A :class:`SecureArray` is what a protocol author works with instead of raw
share arrays. It carries

- its shares, ``uint64 (p, *shape)``: row j belongs to ``holders[j]``
  (``holders`` is ``(p,)``, or ``(p, *shape)`` for per-instance holders such
  as the members of each edge). In a run of several processes only the rows
  of holders local to this process are here; :meth:`SecureArray.share` of
  any other holder raises;
- its sharing ``kind``: ``"additive"`` (mod 2^l) or ``"xor"`` (bitwise);
- its ring (width l) and fixed-point scale ``frac_bits`` (c): the secret is
  ``signed(sum of shares) / 2^c``. Values of different scales combine: the
  lower scale is shifted up exactly (a public factor 2^d, no truncation);
  a product of two fixed-point values is truncated back to the larger of
  their scales (:mod:`mpc.fixedpoint`: one round more, error below one unit
  of the last place), a product with an integer value is exact;
- ``bound``: a public bound on the secret's magnitude in ring units. Inputs
  get theirs from ``session.input(..., bound=...)`` (checked on the inputs,
  by the party that has them), operations propagate it (a sum's bound is the
  sum of bounds, ...), and a comparison whose operands could leave its
  gate's domain (|x - y| >= 2^(l-1), where x - y would wrap) raises a
  ValueError naming the operand, before any message. No check ever reads
  shares.

Operators: ``+ - * /`` with secure values and public numbers (``*`` of two
secure values is a Beaver product, one round; public factors and divisors
and the fixed-point functions ``reciprocal``, ``sqrt``, ``exp``,
``sigmoid``, ``abs``, ``mean``, ``var``: :mod:`mpc.fixedpoint`; ``sort``,
``argsort``, ``shuffle``, ``take``, item assignment and numpy's functions:
:mod:`mpc.arrays`); comparisons ``< <= > >= ==``
(0/1 results at scale 0); :func:`where`; ``sum``, ``dot``; ``max``,
``min``, ``argmax``, ``argmin`` over an axis (a tournament: log2(n) levels,
each one batched comparison and one round of products); ``^``, ``&`` on
XOR values. Comparisons use the session's comparison providers
(:mod:`mpc.protocols.providers`): the first that serves the number of
holders, e.g. ``fss.FSSGates()`` for two holders (one round), the p-party
circuit :mod:`mpc.protocols.compare` for any number (about 8 rounds, secure
against any p - 1 holders), or ``mpc.gc.GarbledCircuits()`` (two holders,
oblivious transfer instead of a dealer). Products take Beaver triples from
the session's preprocessing: the trusted dealer, or with ``OTPreprocessing()``
(the default when the comparisons are dealer-free, e.g. garbled circuits)
Gilboa's OT multiplication between the holders, no dealer
(:mod:`mpc.protocols.ot_triples`); ANDs of XOR values, daBits and the
truncation of a product of two fixed-point values still need the dealer.

Threat model: that of the providers (static semi-honest adversary; a
trusted dealer for triples and keys, none with garbled circuits and OT
preprocessing); openings happen only in :func:`output_values`.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import ArrayLike

from mpc import arrays as _arrays
from mpc import fixedpoint as _fp
from mpc.arith.ring import Ring
from mpc.protocols import compare as _compare
from mpc.protocols.beaver import multiply as _multiply
from mpc.protocols.dealer import check_holders

if TYPE_CHECKING:
    from mpc.session import Session

KINDS = ("additive", "xor")

class SecureArray:
    """A secret-shared array with ``+ - *``, ``< <= > >= ==``, ``^ &`` (XOR values), indexing
    and the methods below (module docstring). Make one with ``session.input``."""

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
        """``v`` encoded at scale ``frac_bits`` (uint64, broadcast to the shape) and its bound."""
        arr = np.asarray(v)
        if arr.dtype.kind not in "iufb":
            raise TypeError(f"{name} must be numeric, got {arr.dtype}")
        lim = 1 << (self.ring.bits - 1)
        if arr.dtype.kind == "f":
            if not np.all(np.isfinite(arr)):
                raise ValueError(f"{name} must be finite")
            scaled = np.rint(arr * float(1 << frac_bits))
            if scaled.size and np.max(np.abs(scaled)) >= lim:
                raise ValueError(f"{name} {_show(arr)} is outside the range of Z_2^"
                                 f"{self.ring.bits} at {frac_bits} fractional bits "
                                 f"(|value| < {lim / (1 << frac_bits):g})")
            enc = scaled.astype(np.int64)
        else:
            lo, hi = (int(arr.min()), int(arr.max())) if arr.size else (0, 0)
            if max(abs(lo), abs(hi)) << frac_bits >= lim:
                raise ValueError(f"{name} {_show(arr)} is outside the range of Z_2^"
                                 f"{self.ring.bits} at {frac_bits} fractional bits "
                                 f"(|value| < 2^{self.ring.bits - 1 - frac_bits})")
            enc = arr.astype(np.int64) << frac_bits
        bound = int(np.max(np.abs(enc))) if enc.size else 0
        return enc.astype(np.uint64) & self.ring.mask, bound

    def _add_public(self, enc):
        """Shares of this value plus the encoded public ``enc`` (``enc``'s shape must broadcast
        to this value's: :meth:`_public_operand` expands the value first)."""
        out = np.array(self._shares, copy=True)
        row0 = self._public_row()
        out[row0] = (out[row0] + np.broadcast_to(enc, self.shape)) & self.ring.mask
        return out

    def _public_operand(self, v, op: str, name: str = "public operand"):
        """This value broadcast against the public ``v`` (numpy's rules on the data axes), and
        ``v`` encoded at the value's scale with its bound (the caller widens the value first
        where the scale would round ``v``: :func:`mpc.fixedpoint.widen_for`)."""
        enc, bound = self._public(v, self.frac_bits, name)
        return self._to_shape(_data_shape(self.shape, enc.shape, op)), enc, bound

    def _to_shape(self, shape: tuple) -> SecureArray:
        """This value broadcast to the data shape ``shape`` (numpy's rules; the holder axis stays
        first and is never broadcast against). A view, no message."""
        shape = tuple(shape)
        if shape == self.shape:
            return self
        full = (self.p,) + shape
        lead = (self.p,) + (1,) * (len(shape) - self.ndim) + self.shape
        shares = np.broadcast_to(self._shares.reshape(lead), full)
        h = self.holders if self.holders.ndim == 1 else \
            np.broadcast_to(self.holders.reshape(lead), full)
        return self._like(shares, holders=h)

    def _public_row(self):
        """Where a public constant is added: the first holder's row (per instance alike)."""
        return 0

    # -- alignment of scales -----------------------------------------------------------------------
    def _broadcast_aligned(self, other: SecureArray, op: str):
        """Both operands at one data shape (numpy's rules on the data axes) and one scale."""
        shape = _data_shape(self.shape, other.shape, op)
        return self._to_shape(shape)._aligned(other._to_shape(shape))

    def _aligned(self, other: SecureArray):
        """Both operands (same family) at the larger scale (an exact shift)."""
        _same_family(self, other)
        a, b = self, other
        if a.frac_bits < b.frac_bits:
            a = a._rescaled(b.frac_bits)
        elif b.frac_bits < a.frac_bits:
            b = b._rescaled(a.frac_bits)
        return a, b

    def _rescaled(self, frac_bits: int) -> SecureArray:
        d = frac_bits - self.frac_bits
        bound = self.bound << d
        _check_bound(bound, self.ring, f"a value rescaled to {frac_bits} fractional bits")
        return self._like((self._shares << np.uint64(d)) & self.ring.mask, frac_bits=frac_bits,
                          bound=bound)

    # -- arithmetic -------------------------------------------------------------------------------
    def __add__(self, other):
        """``x + y``: local. A secure ``y`` is aligned to the larger scale exactly; a public
        float that is not a whole number of units of x's scale widens x to the session's
        scale first (:func:`mpc.fixedpoint.widen_for`). The bound is the sum of bounds."""
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
        return self._like(_neg(self._shares, self.ring))

    def __sub__(self, other):
        return self + (-other if isinstance(other, SecureArray) else -np.asarray(other))

    def __rsub__(self, other):
        return (-self) + other

    def __mul__(self, other):
        """``x * y``. Two secure values: a Beaver product (one round), truncated back to the
        larger scale when both are fixed point (:func:`mpc.fixedpoint.rescale_product`, one
        round more; exact with an integer value). A public integer: local and exact. A
        public float (or float array): :func:`mpc.fixedpoint.multiply_public` (planned
        scale, error stated, ValueError rather than a silent loss)."""
        self._additive("*")
        if isinstance(other, SecureArray):
            other._additive("*")
            shape = _data_shape(self.shape, other.shape, "*")
            x, y = self._to_shape(shape), other._to_shape(shape)
            _same_family(x, y)
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
            x = self._to_shape(_data_shape(self.shape, enc.shape, "*"))
            return x._like((x._shares * enc) & self.ring.mask, bound=self.bound * max(bound, 1))
        if arr.dtype.kind != "f":
            raise TypeError(f"public operand must be numeric, got {arr.dtype}")
        x = self._to_shape(_data_shape(self.shape, arr.shape, "*"))
        return _fp.multiply_public(x, arr if arr.ndim else float(arr))

    __rmul__ = __mul__

    def __truediv__(self, other):
        """``x / d``: a public divisor by :func:`mpc.fixedpoint.divide_public` (exact to the
        stated error), a secure one by :func:`mpc.fixedpoint.divide`."""
        if isinstance(other, SecureArray):
            return _fp.divide(self, other)
        arr = np.asarray(other)
        if arr.ndim:
            x = self._to_shape(_data_shape(self.shape, arr.shape, "/"))
            return _fp.multiply_public(x, 1.0 / arr.astype(np.float64))
        return _fp.divide_public(self, other.item() if isinstance(other, np.generic) else other)

    def __rtruediv__(self, other):
        """``c / x`` for a public ``c``: :func:`mpc.fixedpoint.divide` (an integer ``x``:
        the domain |x| >= 1; a fixed-point one needs ``divide(c, x, lower=...)``)."""
        return _fp.divide(other, self)

    def __abs__(self):
        """``abs(x)``: :func:`mpc.fixedpoint.abs_value` (one comparison, one product)."""
        return _fp.abs_value(self)

    def _additive(self, op):
        if self.kind != "additive":
            raise TypeError(f"'{op}' needs additive values; this one is {self.kind!r} "
                            "(to_additive() converts a bit)")

    # -- comparisons ------------------------------------------------------------------------------
    def _compare(self, other, op: str, flip: bool = False):
        self._additive(op)
        self = _fp.widen_for(self, other)
        if isinstance(other, SecureArray):
            a, b = self._broadcast_aligned(other, op)
            z_shares = (a._shares - b._shares) & a.ring.mask
            bound = a.bound + b.bound
            what = "the difference of the operands"
        else:
            a, enc, pb = self._public_operand(other, op, "the compared public value")
            z_shares = a._add_public(_neg(enc, self.ring))
            bound = a.bound + pb
            what = "the operand minus the public value"
        if flip:
            z_shares = _neg(z_shares, self.ring)
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
        fn = self.session.comparison_for(flat.shape[0]).compare
        gate = "eqz" if op == "==" else "ltz"
        out = _in_chunks(self.session, fn, np.ascontiguousarray(flat), hflat, gate, in_bits)
        if op == ">=":                                      # 1 - [z < 0]
            out = _neg(out, a.ring)
            out[0] = (out[0] + np.uint64(1)) & a.ring.mask
        res = out.reshape((flat.shape[0],) + shape)
        return SecureArray(self.session, res, holders, ring=a.ring, frac_bits=0, bound=1)

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
        ax = tuple(range(1, self.ndim + 1)) if axis is None else _shift_axis(axis, self.ndim)
        count = math.prod(self.shape[a - 1] for a in np.atleast_1d(ax))
        s = self._shares.sum(axis=ax, dtype=np.uint64) & self.ring.mask
        return self._like(s, bound=self.bound * count)

    def dot(self, other: SecureArray | ArrayLike) -> SecureArray:
        """Inner product over the last axis (one Beaver round for the products)."""
        return (self * other).sum(axis=-1)

    def max(self, axis: int = 0) -> SecureArray:
        """Maximum over ``axis``: ceil(log2 n) levels of one comparison and one product round."""
        return _tournament(self, axis, "max")[0]

    def min(self, axis: int = 0) -> SecureArray:
        """Minimum over ``axis`` (as :meth:`max`)."""
        return _tournament(self, axis, "min")[0]

    def argmax(self, axis: int = 0) -> SecureArray:
        """Index of the maximum over ``axis`` (the first on ties, as numpy), secret, as
        :meth:`max` with the indices selected in the same product rounds."""
        return _tournament(self, axis, "max", with_index=True)[1]

    def argmin(self, axis: int = 0) -> SecureArray:
        """Index of the minimum over ``axis`` (the first on ties), as :meth:`argmax`."""
        return _tournament(self, axis, "min", with_index=True)[1]

    # -- fixed point (mpc.fixedpoint) and array operations (mpc.arrays) ---------------------------
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
        """Divide by 2^m, m fractional bits fewer: :func:`mpc.fixedpoint.truncate`."""
        return _fp.truncate(self, m)

    def reciprocal(self, lower: float | None = None) -> SecureArray:
        """1 / x on [lower, bound], Newton's iteration: :func:`mpc.fixedpoint.reciprocal`."""
        return _fp.reciprocal(self, lower)

    def sqrt(self, lower: float | None = None) -> SecureArray:
        """Square root, Newton on the inverse square root: :func:`mpc.fixedpoint.sqrt`."""
        return _fp.sqrt(self, lower)

    def exp(self) -> SecureArray:
        """e^x, Taylor and squarings: :func:`mpc.fixedpoint.exp`."""
        return _fp.exp(self)

    def sigmoid(self) -> SecureArray:
        """1 / (1 + e^-x): :func:`mpc.fixedpoint.sigmoid`."""
        return _fp.sigmoid(self)

    def mean(self, axis: int | None = None) -> SecureArray:
        """Mean over ``axis`` (sum times the public 1/n): :func:`mpc.fixedpoint.mean`."""
        return _fp.mean(self, axis)

    def var(self, axis: int | None = None, ddof: int = 0) -> SecureArray:
        """Variance over ``axis``: :func:`mpc.fixedpoint.var`."""
        return _fp.var(self, axis, ddof)

    def sort(self, axis: int = 0) -> SecureArray:
        """Sorted ascending along ``axis``, Batcher's network: :func:`mpc.arrays.sort`."""
        return _arrays.sort(self, axis)

    def argsort(self, axis: int = 0) -> SecureArray:
        """Secret indices that sort along ``axis``: :func:`mpc.arrays.argsort`."""
        return _arrays.argsort(self, axis)

    def shuffle(self, axis: int = 0) -> SecureArray:
        """A secret uniform permutation along ``axis``: :func:`mpc.arrays.shuffle`."""
        return _arrays.shuffle(self, axis)

    def take(self, index: SecureArray) -> SecureArray:
        """``x[index]`` for a secret integer index: :func:`mpc.arrays.take`."""
        return _arrays.take(self, index)

    def __setitem__(self, index, value):
        """``x[index] = value`` (secure or public), in place: :func:`mpc.arrays.setitem`."""
        _arrays.setitem(self, index, value)

    def __array_function__(self, func, types, args, kwargs):
        """numpy functions: concatenate, stack, sum, mean, var, where, sort, argsort run
        securely; others raise TypeError naming what to use (:func:`mpc.arrays.array_function`):
        never an object array."""
        return _arrays.array_function(func, args, kwargs)

    def __array__(self, dtype=None, copy=None):
        """``np.asarray(x)``: refused (TypeError), never an object array of a secret."""
        raise TypeError("a secure value is not a numpy array: open it with session.output(x), "
                        "or use mpc.arrays / the SecureArray methods")

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        """numpy ufuncs (``np.add``, ``np.less``, ``np.abs``, ``np.sqrt``, ``np.exp``, and a
        numpy array on the left of an operator): :func:`mpc.arrays.array_ufunc`."""
        return _arrays.array_ufunc(SecureArray, ufunc, method, inputs, kwargs)

    # -- XOR values -------------------------------------------------------------------------------
    def __xor__(self, other):
        self._xor_kind("^")
        if isinstance(other, SecureArray):
            other._xor_kind("^")
            _same_family(self, other)
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
        return self._like(_xor_and(self, other))

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


def from_shares(session: Session, shares: Any, holders: ArrayLike, *, frac_bits: int,
                bound: float | None = None) -> SecureArray:
    """A secure value from additive shares made elsewhere (e.g. distributed noise), in an
    explicit unit.

    ``shares``: ``uint64 (p, *shape)``, row j held by ``holders[j]``, or an
    object with ``.shares`` and, when it states them, ``.frac_bits`` (its
    unit) and ``.bound`` (|secret| bound in its ring units), such as
    :class:`noise.shares.NoiseShares`. ``frac_bits`` (required): the scale of
    the result; the secret is ``signed(sum of shares) / 2^frac_bits``. Shares
    that state a lower unit are converted up exactly (a public factor
    2^d, no message); a higher one raises (it would drop fractional bits,
    e.g. wrapping noise at 14 fractional bits as integers multiplies it by
    2^14). ``bound``: public bound on |secret| in real units (default: the
    stated one, else the ring's range). Cost: local, no message. Threat model:
    whatever produced the shares; nothing is opened.
    """
    arr, unit, stated = shares, None, None
    if hasattr(shares, "shares"):
        arr, unit, stated = shares.shares, getattr(shares, "frac_bits", None), \
            getattr(shares, "bound", None)
    frac_bits = int(frac_bits)
    unit = frac_bits if unit is None else int(unit)
    if unit > frac_bits:
        raise ValueError(f"the shares are in units of 2^-{unit} (frac_bits={unit}); "
                         f"frac_bits={frac_bits} would drop {unit - frac_bits} fractional bits "
                         f"and scale the secret by 2^{unit - frac_bits}: pass frac_bits={unit}")
    ring = session.ring
    if bound is not None:
        bound_ring: int | None = math.ceil(float(bound) * (1 << unit))
    else:
        bound_ring = None if stated is None else math.ceil(float(stated))
    x = SecureArray(session, np.asarray(arr, dtype=np.uint64) & ring.mask, holders,
                    frac_bits=unit, bound=bound_ring)
    return x if unit == frac_bits else x._rescaled(frac_bits)


def stack(values: Iterable[SecureArray], axis: int = 0) -> SecureArray:
    """Secure values of one shape and family stacked along a new ``axis``:
    :func:`mpc.arrays.stack`."""
    return _arrays.stack(values, axis)


def _tournament(x: SecureArray, axis, mode: str, with_index: bool = False):
    """max/min (and the index) over ``axis`` by pairwise rounds: one batched comparison and one
    batched product round per level, ceil(log2 n) levels."""
    x._additive(mode)
    ax = _shift_axis(axis, x.ndim) - 1
    vals = _moveaxis(x, ax)
    n = vals.shape[0]
    idx: Any = None
    if with_index:
        idx_pub = np.broadcast_to(np.arange(n).reshape((n,) + (1,) * (vals.ndim - 1)),
                                  vals.shape)
        idx = vals._like(_public_shares(vals, idx_pub), frac_bits=0, bound=n)
    while vals.shape[0] > 1:
        half = vals.shape[0] // 2
        a, b = vals[:half], vals[half:2 * half]
        c = (b > a) if mode == "max" else (b < a)
        if with_index:
            ia, ib = idx[:half], idx[half:2 * half]
            both = where(stack([c, c]), stack([b, ib]), stack([a, ia]))
            new_v, new_i = both[0], both[1]
            new_v = new_v._like(new_v._shares, frac_bits=vals.frac_bits, bound=vals.bound)
            new_i = new_i._like(new_i._shares, frac_bits=0, bound=n)
        else:
            new_v = where(c, b, a)
            new_v = new_v._like(new_v._shares, bound=vals.bound)
        if vals.shape[0] % 2:
            new_v = _concat(new_v, vals[2 * half:])
            if with_index:
                new_i = _concat(new_i, idx[2 * half:])
        vals = new_v
        if with_index:
            idx = new_i
    return vals[0], (idx[0] if with_index else None)


#: comparisons per chunk of a large batch (bounds the dealer's keys in memory, and lets the
#: processes of a run overlap one chunk's key generation with the previous chunk's evaluation)
CHUNK = 1 << 17


def _in_chunks(session, fn, z, holders, gate, in_bits):
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


def _moveaxis(x: SecureArray, ax: int) -> SecureArray:
    if ax == 0:
        return x
    shares = np.moveaxis(x._shares, ax + 1, 1)
    h = x.holders if x.holders.ndim == 1 else np.moveaxis(x.holders, ax + 1, 1)
    return x._like(np.ascontiguousarray(shares), holders=h)


def _concat(a: SecureArray, b: SecureArray) -> SecureArray:
    h = a.holders if a.holders.ndim == 1 else np.concatenate([a.holders, b.holders], axis=1)
    return a._like(np.concatenate([a._shares, b._shares], axis=1), holders=h,
                   bound=max(a.bound, b.bound))


def _public_shares(x: SecureArray, values) -> np.ndarray:
    """Shares of a public array (held by holder 0, zeros elsewhere)."""
    out = np.zeros((x.p,) + np.shape(values), dtype=np.uint64)
    out[0] = np.asarray(values, dtype=np.int64).astype(np.uint64) & x.ring.mask
    return out


def _xor_and(x: SecureArray, y: SecureArray) -> np.ndarray:
    """Bitwise AND of XOR-shared words with boolean Beaver triples from the dealer (1 round)."""
    s = x.session
    ring = x.ring
    h = x.holders
    p = x.p
    dealer = s.dealer
    shape = x.shape
    a = dealer.rng.uint64(shape) & ring.mask
    b = dealer.rng.uint64(shape) & ring.mask
    abc = np.stack([a, b, a & b], axis=-1)
    sh = np.empty((p,) + abc.shape, dtype=np.uint64)
    sh[1:] = dealer.rng.uint64((p - 1,) + abc.shape) & ring.mask
    sh[0] = abc ^ np.bitwise_xor.reduce(sh[1:], axis=0) if p > 1 else abc
    with s.net.round():
        dealer.distribute(h, sh, ring.bits)
    ta, tb, tc = sh[..., 0], sh[..., 1], sh[..., 2]
    de = np.stack([x._shares ^ ta, y._shares ^ tb], axis=-1)
    from mpc.protocols.beaver import exchange
    exchange(s, de, h, ring.bits)
    opened = np.bitwise_xor.reduce(de, axis=0)
    d, e = opened[..., 0], opened[..., 1]
    z = tc ^ (d & tb) ^ (e & ta)
    z[0] ^= d & e
    return z


def constant(session: Session, value: ArrayLike, holders: ArrayLike,
             frac_bits: int | None = None) -> SecureArray:
    """A secure value holding the public ``value`` among ``holders`` (no message; holder 0's
    share is the encoding): :func:`mpc.arrays.public_like`. ``frac_bits``: the unit (default
    0 for integers, the session's for floats); a value an explicit ``frac_bits`` does not hold
    exactly (0.01 at 4 fractional bits) raises ValueError instead of rounding."""
    if frac_bits is not None and not _exact_at(np.asarray(value), int(frac_bits)):
        raise ValueError(f"constant {_show(value)} is not exact at {int(frac_bits)} fractional "
                         "bits: pass the scale that holds it (frac_bits=)")
    h = np.atleast_1d(np.asarray([session.participant(x) for x in np.atleast_1d(holders)]))
    empty = SecureArray(session, np.zeros((h.size, 1), dtype=np.uint64), h, bound=0)
    return _arrays.public_like(empty, value, frac_bits)


# -- input and output ------------------------------------------------------------------------------
def input_values(session: Session, values: ArrayLike | None, by: ArrayLike, *,
                 holders: ArrayLike | None = None, bound: float | None = None,
                 frac_bits: int = 0) -> SecureArray:
    """Parties ``by`` secret-share their inputs among ``holders`` (one round).

    ``values``: ``(len(by), *shape)``, row j given by party ``by[j]`` (only
    the rows of parties local to this process are read; pass None or zeros
    for the others). ``holders``: who holds the shares (default ``by``,
    which must then name at least two parties). ``bound``: public bound on
    |value|, inclusive (default 2^(l-2) / 2^frac_bits, so that a difference of two
    inputs stays comparable); each party checks its own values against it
    and against the ring (ValueError naming the party). ``frac_bits``: the
    fixed-point scale of the inputs (0: integers).
    Cost: one round; each party sends (p - 1) l bits per element (none to
    itself when it is a holder). Shares come from the session's input
    streams, a fresh derivation per call.
    """
    by = np.atleast_1d(np.asarray(by))
    if by.dtype.kind not in "iu" or by.ndim != 1 or by.size == 0:
        raise TypeError(f"by must be party ids, got {by!r}")
    session.net._ids(by, "by")
    holders = by if holders is None else np.atleast_1d(np.asarray(
        [session.participant(h) for h in np.atleast_1d(holders)]))
    if holders.size < 2:
        raise ValueError("a secret needs at least two holders: name them with holders=")
    if np.unique(holders).size != holders.size:
        raise ValueError("holders must be distinct")
    ring = session.ring
    frac_bits = int(frac_bits)
    lim = 1 << (ring.bits - 1)
    if bound is None:
        bound_ring = 1 << (ring.bits - 2)
    else:
        bound_ring = math.floor(float(bound) * (1 << frac_bits))
        if bound_ring <= 0 or bound_ring >= lim:
            raise ValueError(f"bound {bound!r} must be positive and below 2^{ring.bits - 1} at "
                             f"{frac_bits} fractional bits")
    local = np.asarray(session.net.is_local(by), dtype=bool)
    if values is None:
        if local.any():
            raise ValueError(f"values is None but parties {by[local].tolist()} run here")
        arr = None
    else:
        arr = np.asarray(values)
        if arr.ndim < 1 or arr.shape[0] != by.size:
            raise ValueError(f"values must have one row per party of by ({by.size}), got "
                             f"shape {arr.shape}")
    if arr is None:
        raise ValueError("values is None in a process that inputs nothing: pass an array of "
                         "zeros with the public shape")
    enc = _encode_inputs(arr, local, by, frac_bits, bound_ring, ring)
    p = holders.size
    rng = session.stream("input")
    S = np.empty((p,) + enc.shape, dtype=np.uint64)             # S[i, j]: holder i's share of row j
    S[1:] = rng.ring_elements(ring, (p - 1,) + enc.shape)
    S[0] = (enc - S[1:].sum(axis=0, dtype=np.uint64)) & ring.mask
    net = session.net
    partial = []                    # rows sent to a holder that is itself one of the inputters
    with net.round():
        for i in range(p):                                      # loop over the holders (few)
            send = np.flatnonzero(by != holders[i])
            if send.size == by.size:
                net.send(by, int(holders[i]), S[i], ring.bits)
            elif send.size:
                rows = S[i][send]
                partial.append((i, send, rows))
                net.send(by[send], int(holders[i]), rows, ring.bits)
    for i, send, rows in partial:                               # what those holders received
        S[i][send] = rows
    return SecureArray(session, S, holders, frac_bits=frac_bits, bound=bound_ring)


def _encode_inputs(arr, local, by, frac_bits, bound_ring, ring):
    enc = np.zeros(arr.shape, dtype=np.uint64)
    if not local.any():
        return enc
    rows = arr[local]
    if rows.dtype.kind == "f":
        if not np.all(np.isfinite(rows)):
            bad = by[local][~np.all(np.isfinite(rows.reshape(rows.shape[0], -1)), axis=1)][0]
            raise ValueError(f"values of party {int(bad)} are not finite")
        scaled = np.rint(rows * float(1 << frac_bits)).astype(np.int64)
    elif rows.dtype.kind in "iub":
        scaled = rows.astype(np.int64) << frac_bits
    else:
        raise TypeError(f"values must be numeric, got {rows.dtype}")
    mag = np.abs(scaled).reshape(scaled.shape[0], -1).max(axis=1) if scaled.size else \
        np.zeros(scaled.shape[0], np.int64)
    over = mag > bound_ring
    if over.any():
        who = int(by[local][over][0])
        raise ValueError(f"values of party {who} exceed the input bound: |value| <= "
                         f"{bound_ring / (1 << frac_bits):g} is required (bound=), at "
                         f"{frac_bits} fractional bits in Z_2^{ring.bits}")
    enc[local] = scaled.astype(np.uint64) & ring.mask
    return enc


def output_values(session: Session, x: SecureArray,
                  to: int | str | Sequence[int | str] | None = None
                  ) -> np.ndarray | NotReceived:
    """Open ``x`` to ``to`` (a participant id, a role name, a list of them; default: every
    holder), one round: each holder sends its share to every receiver but itself.

    Returns the values (float64 at scale > 0, int64 at scale 0; signed) in
    processes where a receiver runs; elsewhere a :class:`NotReceived`, which
    refuses to be used (truth value, comparison, arithmetic, indexing: a
    branch on it would silently diverge from the receivers' program) and
    travels back from :func:`mpc.run.launch.launch` as None; test it with
    :func:`received`. Raises ValueError, before any message, if the value's
    tracked bound exceeds the ring's signed range (it may have wrapped).
    Cost: one round, (p - 1) l bits per element to a receiver that holds a
    share, p l to one that does not.
    """
    if not isinstance(x, SecureArray):
        raise TypeError(f"output takes a SecureArray, got {type(x).__name__}")
    _check_openable(x)
    if to is None:
        receivers = np.unique(x.holders)
    else:
        items: Iterable[Any] = to if isinstance(to, (list, tuple, np.ndarray, range)) else [to]
        receivers = np.array([session.participant(t) for t in items], dtype=np.int64)
    net = session.net
    ring = x.ring
    width = ring.bits
    sh = x._shares.copy()           # the receivers' copies of every share (written in place)
    h = x.holders
    partial = []
    with net.round():
        for r in receivers.tolist():
            for j in range(x.p):                               # loop over the holders (few)
                hj = h[j]
                if hj.ndim == 0:
                    if int(hj) != r:
                        net.send(int(hj), r, sh[j, ...], width)    # a view, also for 0-d values
                else:
                    keep = np.flatnonzero(hj.reshape(-1) != r)
                    if keep.size:
                        rows = sh[j].reshape(-1)[keep]
                        partial.append((j, keep, rows))
                        net.send(hj.reshape(-1)[keep], r, rows, width)
    for j, keep, rows in partial:
        sh[j].reshape(-1)[keep] = rows
    if not np.any(net.is_local(receivers)):
        return NotReceived(receivers.tolist(), x.shape)
    if x.kind == "xor":
        return np.bitwise_xor.reduce(sh, axis=0)
    total = sh.sum(axis=0, dtype=np.uint64) & ring.mask
    signed = ring.to_signed(total)
    if x.frac_bits:
        return signed.astype(np.float64) / float(1 << x.frac_bits)
    return signed


class NotReceived:
    """What :func:`output_values` returns in a process where no receiver of the output runs.

    Any use that would decide something from the value (``bool``, ``==``,
    ``<``, arithmetic, indexing, ``len``, numpy conversion) raises TypeError
    naming the receivers: the processes that hold them took their branch on
    the real value, and a silent default here would make this one diverge.
    Pickled (e.g. returned from a launched program) it becomes None.
    """

    __slots__ = ("receivers", "shape")

    def __init__(self, receivers: list, shape: tuple):
        self.receivers = receivers
        self.shape = shape

    def _refuse(self, *_: Any, **__: Any) -> Any:
        raise TypeError(f"this process did not receive this output (opened to participant(s) "
                        f"{self.receivers}, which run elsewhere): it has no value to branch or "
                        "compute on here; open it to this process too (output(..., to=...)) or "
                        "test mpc.values.received(out) first")

    __bool__ = __len__ = __iter__ = __getitem__ = __array__ = __index__ = __int__ = _refuse
    __float__ = __lt__ = __le__ = __gt__ = __ge__ = __eq__ = __ne__ = _refuse
    __add__ = __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = _refuse
    __truediv__ = __rtruediv__ = __floordiv__ = __neg__ = __abs__ = _refuse
    __hash__ = None  # type: ignore[assignment]

    def __reduce__(self) -> tuple:
        return (_none, ())

    def __repr__(self) -> str:
        return f"NotReceived(receivers={self.receivers}, shape={self.shape})"


def _none() -> None:
    return None


def received(out: Any) -> bool:
    """Whether ``out`` (what :func:`output_values` returned) is a value this process received."""
    return not isinstance(out, NotReceived)


# -- helpers ---------------------------------------------------------------------------------------
def _check_openable(x: SecureArray) -> None:
    """Refuse to open an additive value whose tracked bound exceeds the ring's signed range (it may
    have wrapped: opening would print a wrong number). Values made without a bound carry the
    ring's range itself (2^(l-1)) and pass; no share is read."""
    l = x.ring.bits
    if x.kind != "additive" or x.bound <= 1 << (l - 1):
        return
    raise ValueError(
        f"output refused: the value's tracked bound needs {x.bound.bit_length() + 1} bits "
        f"(|value| < 2^{math.log2(x.bound):.1f} ring units at {x.frac_bits} fractional bits) "
        f"and Z_2^{l} holds {l} bits signed, so it may have wrapped; use a wider ring "
        "(Session(bits=...)), tighter input bounds, or fewer fractional bits")


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


def _same_family(a: SecureArray, b: SecureArray) -> None:
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


def _exact_at(arr: np.ndarray, frac_bits: int) -> bool:
    """Whether the public ``arr`` is exact at ``frac_bits`` fractional bits (integers always)."""
    if arr.dtype.kind != "f":
        return True
    scaled = arr * 2.0 ** frac_bits
    return bool(np.array_equal(np.rint(scaled), scaled))


def _data_shape(a: tuple, b: tuple, op: str) -> tuple:
    """numpy's broadcast of two data shapes, or a ValueError naming them (not the shares')."""
    try:
        return tuple(np.broadcast_shapes(tuple(a), tuple(b)))
    except ValueError:
        raise ValueError(f"operands of {op!r} could not be broadcast together: data shapes "
                         f"{tuple(a)} and {tuple(b)}") from None


def _neg(x, ring: Ring) -> np.ndarray:
    """-x mod 2^l (arrays or numpy scalars; the wrap is the ring's)."""
    return np.negative(np.asarray(x, dtype=np.uint64)) & ring.mask


def _check_bound(bound: int, ring: Ring, what: str) -> None:
    if bound >= 1 << (ring.bits - 1):
        raise ValueError(f"{what} may exceed the signed range of Z_2^{ring.bits}")


def _shift_axis(axis, ndim):
    ax = np.atleast_1d(axis)
    out = tuple(int(a) % ndim + 1 for a in ax) if ndim else (1,)
    return out if np.ndim(axis) else out[0]


def _show(arr) -> str:
    a = np.asarray(arr)
    if a.size == 1:
        return repr(a.item())
    return f"(max |value| {np.max(np.abs(a)):g})"
