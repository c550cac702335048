"""Exact rational parameters and rigorous bounds for the samplers of :mod:`noise.samplers`.

Every scale, variance or probability a sampler takes is an exact rational
(:func:`as_fraction`: a float is the rational it represents, never rounded);
:func:`round_scale_up` rounds a scale up on a dyadic grid when its numerator
is too large for the samplers (:data:`MAX_NUMERATOR_BITS`). The samplers'
only irrational quantities are comparisons ``U < exp(-gamma)`` and
``U < base^j`` of a uniform real with an exponential or a power; this module
brackets those by rational intervals as narrow as asked
(:func:`exp_neg_bounds`, Taylor series with remainder, rounded outward) and
decides each comparison exactly on a uniform known by a prefix of its bits,
drawing more bits only while the interval straddles it (:class:`_LazyUniform`).

Inputs: ints, Fractions, floats, numpy scalars. Outputs: Fractions and
booleans. Cost: a few rational multiplications per bound, at precisions a
few bits above the uniform's prefix; the samplers reach this code with
probability about 2^-36 per comparison. Threat model: local computation on
public parameters; the uniform's bits come from the caller's CSPRNG.
"""

from __future__ import annotations

import functools
import math
import numbers
from collections.abc import Callable
from fractions import Fraction

import numpy as np

from mpc.arith.rng import CSPRNG

__all__ = ["MAX_NUMERATOR_BITS", "RealLike", "as_fraction", "exp_neg_bounds", "round_scale_up"]

#: Largest numerator bit length accepted for a scale t/s (U uniform in [0, t)
#: and X = U + t V must stay far inside int64).
MAX_NUMERATOR_BITS = 56
#: A real parameter, taken exactly (:func:`as_fraction`): an int, a float, a Fraction or a
#: numpy scalar.
RealLike = float | Fraction | np.integer | np.floating


# -- argument handling --------------------------------------------------------
def as_fraction(x: RealLike, name: str, *, positive: bool = True,
                allow_zero: bool = False) -> Fraction:
    """The exact rational value of ``x`` (int, Fraction, float, numpy scalar).

    A float is converted exactly (``Fraction(x)``), not approximated.
    Raises ``TypeError`` for non-numbers and bools, ``ValueError`` for NaN,
    infinities and (by default) non-positive values.
    """
    if isinstance(x, (bool, np.bool_)):
        raise TypeError(f"{name} must be a number, got bool")
    if isinstance(x, np.generic):
        x = x.item()
    if isinstance(x, numbers.Rational):
        q = Fraction(x.numerator, x.denominator)
    elif isinstance(x, numbers.Real):
        xf = float(x)
        if not math.isfinite(xf):
            raise ValueError(f"{name} must be finite, got {x!r}")
        q = Fraction(xf)
    else:
        raise TypeError(f"{name} must be a real number (int, float or Fraction), "
                        f"got {type(x).__name__}")
    if positive and (q < 0 or (q == 0 and not allow_zero)):
        raise ValueError(f"{name} must be {'>= 0' if allow_zero else '> 0'}, got {x!r}")
    return q


def round_scale_up(scale: RealLike, max_bits: int = 48) -> Fraction:
    """Smallest dyadic rational >= ``scale`` whose numerator has < ``max_bits`` bits.

    Rounding a noise scale *up* only adds noise, so a privacy guarantee
    proved for the requested scale still holds. A scale that already has a
    small numerator is returned unchanged.
    """
    q = as_fraction(scale, "scale")
    if not isinstance(max_bits, numbers.Integral) or not 8 <= max_bits <= MAX_NUMERATOR_BITS:
        raise ValueError(f"max_bits must be an integer in 8..{MAX_NUMERATOR_BITS}, "
                         f"got {max_bits!r}")
    if q.numerator.bit_length() < max_bits and q.denominator.bit_length() < 62:
        return q
    # choose k with ceil(q 2^k) < 2^(max_bits-1)
    k = (max_bits - 2) - (q.numerator.bit_length() - q.denominator.bit_length() + 1)
    num = -((-q.numerator * (1 << max(k, 0))) // (q.denominator << max(-k, 0)))  # ceil
    out = Fraction(num, 1 << k) if k >= 0 else Fraction(num << (-k))
    assert out >= q
    return out


def _probability(p: RealLike) -> Fraction:
    """``p`` as an exact fraction in [0, 1] (ValueError outside)."""
    q = as_fraction(p, "p", allow_zero=True)
    if q > 1:
        raise ValueError(f"p must be in [0, 1], got {p!r}")
    return q


def _check_numerator(q: Fraction, name: str):
    if q.numerator.bit_length() > MAX_NUMERATOR_BITS or q.denominator.bit_length() > 62:
        raise ValueError(
            f"{name} = {q} has a numerator or denominator too large for the exact sampler "
            f"(numerator < 2^{MAX_NUMERATOR_BITS}, denominator < 2^62); round it up with "
            f"noise.samplers.round_scale_up({name})")


# -- rigorous bounds and the lazy uniform ------------------------------------
def _floor_dyadic(x: Fraction, prec: int) -> Fraction:
    return Fraction((x.numerator << prec) // x.denominator, 1 << prec)


def _ceil_dyadic(x: Fraction, prec: int) -> Fraction:
    return Fraction(-((-x.numerator << prec) // x.denominator), 1 << prec)


def _exp_neg_frac_bounds(f: Fraction, prec: int) -> tuple[Fraction, Fraction]:
    """Bounds on exp(-f) for 0 <= f <= 1 from the alternating Taylor series."""
    # Terms f^j / j! decrease for j >= 1 when f <= 1, so consecutive partial
    # sums bracket the limit.
    s = Fraction(1)
    term = Fraction(1)
    j = 0
    eps = Fraction(1, 1 << (prec + 2))
    while True:
        j += 1
        term = term * f / j
        nxt = s - term if j % 2 else s + term
        if term <= eps:
            lo, hi = (nxt, s) if j % 2 else (s, nxt)
            return _floor_dyadic(lo, prec + 2), _ceil_dyadic(hi, prec + 2)
        s = nxt


@functools.lru_cache(maxsize=64)
def _exp_neg_one_bounds(prec: int) -> tuple[Fraction, Fraction]:
    return _exp_neg_frac_bounds(Fraction(1), prec)


def exp_neg_bounds(gamma: RealLike, prec: int) -> tuple[Fraction, Fraction]:
    """Rational ``lo <= exp(-gamma) <= hi`` with ``hi - lo <= 2^-prec`` (gamma >= 0 rational).

    exp(-gamma) = exp(-1)^m exp(-f) with m = floor(gamma), f = gamma - m, each
    bracketed by partial sums of the alternating Taylor series and rounded
    outward to dyadic rationals.
    """
    g = as_fraction(gamma, "gamma", allow_zero=True)
    if g == 0:
        return Fraction(1), Fraction(1)
    m = g.numerator // g.denominator
    f = g - m
    extra = max(m, 1).bit_length() + 4
    p = prec + extra
    lo_f, hi_f = _exp_neg_frac_bounds(f, p) if f else (Fraction(1), Fraction(1))
    if m:
        lo1, hi1 = _exp_neg_one_bounds(p)
        lo_m, hi_m = Fraction(1), Fraction(1)
        # repeated squaring with outward dyadic rounding
        base_lo, base_hi, e = lo1, hi1, m
        while e:
            if e & 1:
                lo_m = _floor_dyadic(lo_m * base_lo, p + 4)
                hi_m = _ceil_dyadic(hi_m * base_hi, p + 4)
            e >>= 1
            if e:
                base_lo = _floor_dyadic(base_lo * base_lo, p + 4)
                base_hi = _ceil_dyadic(base_hi * base_hi, p + 4)
    else:
        lo_m = hi_m = Fraction(1)
    lo, hi = lo_m * lo_f, hi_m * hi_f
    if hi - lo > Fraction(1, 1 << prec):  # widen the working precision and retry
        return exp_neg_bounds(g, prec + 2 * extra + 8)
    return lo, hi


class _LazyUniform:
    """A uniform real U in [0, 1) known by a prefix ``num / 2^nbits``; more bits on demand."""

    __slots__ = ("nbits", "num", "rng")

    def __init__(self, num: int, nbits: int, rng: CSPRNG):
        self.num, self.nbits, self.rng = int(num), int(nbits), rng

    def _refine(self):
        self.num = (self.num << 64) | int(self.rng.uint64())
        self.nbits += 64

    def lt_rational(self, q: Fraction) -> bool:
        """Exactly decide U < q."""
        return self.lt_bounds(lambda prec: (q, q))

    def lt_bounds(self, bounds: Callable[[int], tuple[Fraction, Fraction]]) -> bool:
        """Exactly decide U < x from rational bounds on x.

        ``bounds(prec) -> (lo, hi)`` with lo <= x <= hi and hi - lo <= 2^-prec.
        """
        while True:
            lo, hi = bounds(self.nbits + 8)
            den = 1 << self.nbits
            if (self.num + 1) * lo.denominator <= lo.numerator * den:
                return True
            if self.num * hi.denominator >= hi.numerator * den:
                return False
            self._refine()

    def lt_exp(self, gamma: Fraction) -> bool:
        """Exactly decide U < exp(-gamma) (gamma >= 0 rational)."""
        if gamma == 0:
            return True
        return self.lt_bounds(lambda prec: exp_neg_bounds(gamma, prec))


def _pow_bounds(base: Fraction, j: int, prec: int) -> tuple[Fraction, Fraction]:
    """Rational bounds lo <= base^j <= hi (0 <= base <= 1) with hi - lo <= 2^-prec.

    Repeated squaring with outward dyadic rounding at a working precision
    that absorbs the 2 log2(j) rounding steps; cheap even for j ~ 2^60.
    """
    p = prec + 2 * max(j, 1).bit_length() + 8
    while True:
        lo = hi = Fraction(1)
        blo, bhi, e = _floor_dyadic(base, p), _ceil_dyadic(base, p), j
        while e:
            if e & 1:
                lo, hi = _floor_dyadic(lo * blo, p), _ceil_dyadic(hi * bhi, p)
            e >>= 1
            if e:
                blo, bhi = _floor_dyadic(blo * blo, p), _ceil_dyadic(bhi * bhi, p)
        if hi - lo <= Fraction(1, 1 << prec):
            return lo, hi
        p += p
