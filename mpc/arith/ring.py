"""The ring Z_2^l on ``numpy.uint64`` arrays, with signed and fixed-point views.

A :class:`Ring` is a small immutable object made (and cached) by :func:`ring`.
Elements are ``uint64`` arrays whose values lie in ``[0, 2^l)``; numpy's
wrap-around arithmetic reduces modulo 2^64 and a mask reduces to 2^l.
Signed values use two's complement in l bits. Fixed point (:class:`FixedPoint`)
scales a real value by ``2^c`` and rounds to the nearest integer; encoding a
value outside the representable range, NaN or inf raises ``ValueError`` that
states the range, never wraps silently.

Defaults follow the U-MPC paper (Sinh and Ramon): ``l = 40``, ``c = 14``.

Public functions validate their arguments; inner arithmetic does not re-check
that inputs are already reduced (validate at the boundary, trust inside).
"""

from __future__ import annotations

import functools
import numbers
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

DEFAULT_BITS = 40
DEFAULT_FRAC_BITS = 14

_U64 = np.uint64


def check_bits(bits: int, name: str = "bits") -> int:
    """Return ``bits`` as an int after checking it lies in 1..64."""
    if isinstance(bits, bool) or not isinstance(bits, numbers.Integral):
        raise TypeError(f"{name} must be an integer in 1..64, got {bits!r}")
    bits = int(bits)
    if not 1 <= bits <= 64:
        raise ValueError(f"{name} must be in 1..64, got {bits}")
    return bits


@dataclass(frozen=True)
class Ring:
    """Z_2^l: ``bits`` = l, ``mask`` = 2^l - 1 as ``uint64``. Use :func:`ring`."""

    bits: int

    @property
    def mask(self) -> np.uint64:
        return _U64((1 << self.bits) - 1)

    @property
    def modulus(self) -> int:
        return 1 << self.bits

    @property
    def dtype(self) -> np.dtype:
        return np.dtype(np.uint64)

    def __repr__(self) -> str:
        return f"Ring(Z_2^{self.bits})"

    # -- conversion -----------------------------------------------------
    def element(self, x: ArrayLike) -> np.ndarray:
        """Validate integer data and return it reduced mod 2^l as ``uint64``.

        Accepts Python ints (any sign, any size), integer arrays of any
        integer dtype. Floats, bools and objects that are not integers raise
        ``TypeError``.
        """
        if isinstance(x, np.ndarray) and x.dtype == np.uint64:
            return x & self.mask
        if isinstance(x, numbers.Integral) and not isinstance(x, (bool, np.bool_)):
            return np.asarray(int(x) % self.modulus, dtype=_U64)
        arr = np.asarray(x)
        if arr.dtype == object:
            flat = [int(v) % self.modulus for v in arr.ravel()]
            for v in arr.ravel():
                if not isinstance(v, numbers.Integral) or isinstance(v, (bool, np.bool_)):
                    raise TypeError(f"ring elements must be integers, got {type(v).__name__}")
            return np.asarray(flat, dtype=_U64).reshape(arr.shape)
        if arr.dtype.kind == "b" or arr.dtype.kind not in "iu":
            raise TypeError(f"ring elements must be integers, got dtype {arr.dtype}")
        return arr.astype(np.int64 if arr.dtype.kind == "i" else _U64).astype(_U64) & self.mask

    def reduce(self, x: np.ndarray) -> np.ndarray:
        """Reduce a ``uint64`` array mod 2^l (no validation)."""
        return x & self.mask

    def zeros(self, shape: int | tuple[int, ...] = ()) -> np.ndarray:
        return np.zeros(shape, dtype=_U64)

    # -- arithmetic (inputs assumed reduced uint64) ----------------------
    def add(self, a: ArrayLike, b: ArrayLike) -> np.ndarray:
        return (np.asarray(a, _U64) + np.asarray(b, _U64)) & self.mask

    def sub(self, a: ArrayLike, b: ArrayLike) -> np.ndarray:
        return (np.asarray(a, _U64) - np.asarray(b, _U64)) & self.mask

    def neg(self, a: ArrayLike) -> np.ndarray:
        return (_U64(0) - np.asarray(a, _U64)) & self.mask

    def mul(self, a: ArrayLike, b: ArrayLike) -> np.ndarray:
        return (np.asarray(a, _U64) * np.asarray(b, _U64)) & self.mask

    def smul(self, scalar: int, a: ArrayLike) -> np.ndarray:
        """Multiply by an integer scalar (any sign)."""
        if isinstance(scalar, bool) or not isinstance(scalar, numbers.Integral):
            raise TypeError(f"scalar must be an integer, got {scalar!r}")
        s = _U64(int(scalar) % self.modulus)
        return (np.asarray(a, _U64) * s) & self.mask

    def sum(self, a: ArrayLike, axis: int | tuple[int, ...] | None = None) -> np.ndarray:
        """Sum along ``axis`` mod 2^l (uint64 sums wrap mod 2^64, then mask)."""
        return np.sum(np.asarray(a, _U64), axis=axis, dtype=_U64) & self.mask

    # -- comparisons of representatives -----------------------------------
    def lt(self, a: ArrayLike, b: ArrayLike) -> np.ndarray:
        """``a < b`` on the unsigned representatives in [0, 2^l)."""
        return np.asarray(a, _U64) < np.asarray(b, _U64)

    def signed_lt(self, a: ArrayLike, b: ArrayLike) -> np.ndarray:
        """``a < b`` on the two's complement (signed) values."""
        return self.to_signed(a) < self.to_signed(b)

    # -- signed view --------------------------------------------------------
    def to_signed(self, a: ArrayLike) -> np.ndarray:
        """Two's complement value of each element as ``int64``."""
        shift = _U64(64 - self.bits)
        return (np.asarray(a, _U64) << shift).view(np.int64) >> np.int64(64 - self.bits)

    def from_signed(self, v: ArrayLike) -> np.ndarray:
        """Encode signed integers; raises ``ValueError`` outside [-2^(l-1), 2^(l-1))."""
        arr = np.asarray(v)
        if arr.dtype.kind not in "iu" and arr.dtype != object:
            raise TypeError(f"signed values must be integers, got dtype {arr.dtype}")
        lo, hi = -(1 << (self.bits - 1)), (1 << (self.bits - 1)) - 1
        if arr.size:
            mn, mx = int(arr.min()), int(arr.max())
            if mn < lo or mx > hi:
                raise ValueError(
                    f"signed value out of range for Z_2^{self.bits}: must be in [{lo}, {hi}]"
                )
        if arr.dtype == object:
            return self.element(arr)
        return arr.astype(np.int64).astype(_U64) & self.mask


@functools.cache
def _ring(bits: int) -> Ring:
    return Ring(bits)


def ring(bits: int = DEFAULT_BITS) -> Ring:
    """The (cached) ring Z_2^bits, 1 <= bits <= 64."""
    return _ring(check_bits(bits))


@dataclass(frozen=True)
class FixedPoint:
    """Fixed-point encoding of reals in ``ring`` with ``frac_bits`` fractional bits.

    A real v is encoded as round(v * 2^c) in two's complement. Representable
    range: [-2^(l-1-c), (2^(l-1) - 1) / 2^c]. Resolution 2^-c.
    """

    ring: Ring
    frac_bits: int

    def __post_init__(self):
        if not isinstance(self.ring, Ring):
            raise TypeError(f"ring must be a Ring, got {type(self.ring).__name__}")
        if isinstance(self.frac_bits, bool) or not isinstance(self.frac_bits, numbers.Integral):
            raise TypeError(f"frac_bits must be an integer, got {self.frac_bits!r}")
        if not 0 <= self.frac_bits < self.ring.bits:
            raise ValueError(
                f"frac_bits must be in 0..{self.ring.bits - 1} for Z_2^{self.ring.bits}, "
                f"got {self.frac_bits}"
            )

    @property
    def scale(self) -> int:
        return 1 << self.frac_bits

    @property
    def min_value(self) -> float:
        return -float(1 << (self.ring.bits - 1)) / self.scale

    @property
    def max_value(self) -> float:
        return float((1 << (self.ring.bits - 1)) - 1) / self.scale

    def encode(self, values: ArrayLike) -> np.ndarray:
        """Encode finite reals; ``ValueError`` naming the range otherwise."""
        arr = np.asarray(values, dtype=np.float64)
        if not np.all(np.isfinite(arr)):
            raise ValueError("values must be finite (got NaN or inf) for fixed-point encoding")
        scaled = np.rint(arr * self.scale)
        lo = -float(1 << (self.ring.bits - 1))
        hi = float(1 << (self.ring.bits - 1))  # exclusive; exact power of two in float
        if arr.size and (scaled.min() < lo or scaled.max() >= hi):
            raise ValueError(
                f"value out of fixed-point range [{self.min_value}, {self.max_value}] "
                f"(l={self.ring.bits}, c={self.frac_bits})"
            )
        # Values in [-2^63, 2^63) convert to int64 exactly after rint.
        return scaled.astype(np.int64).astype(_U64) & self.ring.mask

    def decode(self, x: ArrayLike) -> np.ndarray:
        """Decode ring elements to float64 reals."""
        return self.ring.to_signed(x).astype(np.float64) / self.scale


def fixed_point(bits: int = DEFAULT_BITS, frac_bits: int = DEFAULT_FRAC_BITS) -> FixedPoint:
    """Fixed-point codec on Z_2^bits with ``frac_bits`` fractional bits."""
    return FixedPoint(ring(bits), frac_bits)
