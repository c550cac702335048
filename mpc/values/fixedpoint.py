"""Fixed-point arithmetic on secure values: truncation, division, reciprocal, sqrt, exp, sigmoid,
abs, mean and var.

Scales. A :class:`~mpc.values.SecureArray` at scale c holds round(v 2^c) in
Z_2^l. A product of two values at scales a, b > 0 is computed at scale
a + b and truncated back to max(a, b) (:func:`truncate`, one round and a
dealer round: :mod:`mpc.protocols.truncation`); a product with an integer
(scale 0) value, e.g. a 0/1 comparison, is exact and needs none. The
truncation is *probabilistic* (stochastic rounding): the result is x / 2^m
rounded down or up, up with probability equal to the dropped fraction, so
its error is below one unit of the last place and its mean is exact. Its
opened mask is uniform in the ring (perfect security); it needs the
value before truncation to be below 2^(l-2) in magnitude (checked on the
tracked bound, ValueError naming the operation otherwise).

Public factors. ``x * f`` and ``x / d`` with a public float or integer
divisor use MPyC's trick for means: f is encoded at the widest scale e
the ring allows (F = round(f 2^e)), the product truncated by e, and, when
the ring is too narrow for that, x is first truncated by t bits
(:func:`plan_public_factor` picks t and e for the smallest error). The
error bound in units of the result's last place is computed from the
tracked bound; a factor that cannot be applied within 2^(c/2) units
raises rather than losing precision silently.

Iterative functions state their iteration counts, computed from the
domain (public), and their errors; each iteration is a few products (two
rounds each: a Beaver round and a truncation round). Threat model: that of
products and comparisons of the session (static semi-honest holders, a
trusted dealer for triples, truncation masks and comparison keys).
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from mpc.values import SecureArray

__all__ = [
    "abs_value", "divide", "divide_public", "exp", "mean", "multiply_public",
    "plan_public_factor", "reciprocal", "rescale_product", "sigmoid", "sqrt", "truncate", "var",
    "widen_for",
]


def _limit(x: SecureArray) -> int:
    return 1 << (x.ring.bits - 2)


def _with_bound(x: SecureArray, bound: int) -> SecureArray:
    return x._like(x._shares, bound=int(bound))


def truncate(x: SecureArray, m: int) -> SecureArray:
    """``x`` divided by 2^m, one scale lower per bit: the same number at scale ``frac_bits - m``.

    Input: an additive value with |x| < 2^(l-2) in ring units (tracked
    bound; ValueError otherwise) and 0 <= m <= ``x.frac_bits``. Output: at
    scale ``frac_bits - m``, stochastically rounded (error < 1 unit of the
    new last place, exact in expectation), bound ``bound // 2^m + 1``.
    Cost: one online round ((p - 1) l bits per element per holder), one
    dealer round (3 p l bits per element). Security: the opened value is
    masked by a uniform ring element (perfect); the masks come from the session's
    preprocessing provider (:meth:`mpc.protocols.providers.Preprocessing.truncate`: the
    trusted dealer; a session without one raises ValueError).
    """
    x._additive("truncate")
    m = int(m)
    if not 0 <= m <= x.frac_bits:
        raise ValueError(f"m must be in 0..{x.frac_bits} (the value's fractional bits), got {m}")
    if m == 0:
        return x
    if x.bound >= _limit(x):
        raise ValueError(f"truncation needs |value| < 2^{x.ring.bits - 2} in Z_2^{x.ring.bits},"
                         f" and this value may reach 2^{x.bound.bit_length() - 1}: give smaller "
                         "input bounds (session.input(..., bound=)), assume_bound() after a "
                         "proven step, or a wider ring (Session(bits=64))")
    out = x.session.preprocessing.truncate(x.session, x._shares, x.holders, m)
    return x._like(out, frac_bits=x.frac_bits - m, bound=(x.bound >> m) + 1)


def rescale_product(z: SecureArray, a: int, b: int) -> SecureArray:
    """The Beaver product ``z`` of values at scales ``a`` and ``b`` (z at scale a + b) brought back
    to max(a, b) by :func:`truncate` when both are fixed point; unchanged otherwise (a
    product with an integer is exact)."""
    if a == 0 or b == 0:
        return z
    if z.bound >= _limit(z):
        raise ValueError(f"a product of fixed-point values may reach 2^{z.bound.bit_length() - 1}"
                         f" in ring units before its truncation, and must stay below "
                         f"2^{z.ring.bits - 2} in Z_2^{z.ring.bits}: give smaller input bounds "
                         "(session.input(..., bound=)), assume_bound() after a proven step, or "
                         "a wider ring (Session(bits=64))")
    return truncate(z, min(a, b))


# -- public factors -----------------------------------------------------------------------------
def plan_public_factor(bound: int, factor: Fraction, bits: int) -> tuple[int, int, int, float]:
    """How to multiply a value of tracked ``bound`` (ring units) by the public ``factor``
    (already including any change of scale) in Z_2^``bits``: ``(t, e, F, err)``.

    The value is truncated by t bits, multiplied by F = round(factor 2^e) and
    truncated by e - t bits. ``err`` bounds the result's error in units of its
    last place: F's rounding (bound |F 2^-e - factor|), the first truncation
    (|F| 2^(t-e)) and the last (1). The plan with the smallest error is
    chosen (fewest truncations on ties); |F| < 2^52 and the product below
    2^(bits-2) are guaranteed. Public computation only.
    """
    lim = 1 << (bits - 2)
    f = abs(factor)
    best: tuple[int, int, int, float] | None = None
    for t in range(bits - 2):
        bt = bound if t == 0 else (bound >> t) + 1
        if f == 0:
            return (0, 0, 0, 0.0)
        e = max(t, math.floor(math.log2(lim / (bt * float(f)))) + 1)
        while e >= t:
            big = round(f * (1 << e))
            if bt * big < lim and big < (1 << 52):
                break
            e -= 1
        if e < t:
            continue
        big = round(f * (1 << e))
        err = float(abs(Fraction(big, 1 << e) - f) * bound) + (1.0 if e > t else 0.0)
        if t:
            err += big / float(1 << (e - t))
        if best is None or err < best[3] - 1e-12:
            best = (t, e, round(factor * (1 << e)), err)
        if t and err > 4 * best[3]:
            break
    if best is None:
        raise ValueError(f"no plan multiplies a value bounded by {bound} by {float(factor):g} "
                         f"in Z_2^{bits}: use a wider ring")
    return best


def multiply_public(x: SecureArray, factor: float | Fraction | np.ndarray) -> SecureArray:
    """``x`` times a public scalar (or float array, broadcast), at scale max(x's, the
    session's fractional bits).

    Exact for factors that are integers times a power of two within the
    scale; otherwise as planned by :func:`plan_public_factor` (one or two
    truncations, each one round), with an error of at most ``err`` units of
    the result's last place (err <= 2^(c/2); ValueError if no plan reaches it:
    a wider ring or a smaller bound is needed).
    """
    x._additive("*")
    if isinstance(factor, np.ndarray) and factor.ndim:
        return _multiply_public_array(x, factor.astype(np.float64))
    fac = factor if isinstance(factor, Fraction) else Fraction(float(factor))
    c = max(x.frac_bits, x.session.fp.frac_bits)
    eff = fac * (1 << (c - x.frac_bits))
    if eff.denominator == 1:
        enc, _ = x._public(int(eff), 0)
        return x._like((x._shares * enc) & x.ring.mask, frac_bits=c,
                       bound=x.bound * max(abs(int(eff)), 1))
    t, e, big, err = plan_public_factor(x.bound, eff, x.ring.bits)
    if err > max(2.0, 2.0 ** (c / 2)):
        raise ValueError(f"the public factor {float(fac):g} cannot be applied to a value bounded"
                         f" by 2^{x.bound.bit_length()} ring units within 2^{c // 2} units of "
                         f"its last place in Z_2^{x.ring.bits}: use a wider ring or smaller "
                         "bounds")
    y = x if t == 0 else truncate(x._like(x._shares, frac_bits=c + e), t)
    y = y._like(y._shares, frac_bits=c + e - t)
    enc = np.uint64(big % (1 << 64)) & x.ring.mask
    prod = y._like((y._shares * enc) & x.ring.mask,
                   bound=max(1, math.ceil(y.bound * abs(big))))
    out = truncate(prod, e - t)
    return _with_bound(out, math.ceil(float(abs(eff)) * x.bound + err) + 1)


def _multiply_public_array(x: SecureArray, factor: np.ndarray) -> SecureArray:
    """``x`` times a public float array (broadcast): one plan for the largest |factor|, each
    factor rounded at that plan's scale e (error at most bound 2^-(e+1) + the truncations')."""
    if not np.all(np.isfinite(factor)):
        raise ValueError("a public factor must be finite")
    c = max(x.frac_bits, x.session.fp.frac_bits)
    eff = factor * float(1 << (c - x.frac_bits))
    top = Fraction(float(np.max(np.abs(eff)))) if eff.size else Fraction(0)
    if top == 0:
        return x._like(np.zeros(np.broadcast_shapes(x._shares.shape, (1,) + factor.shape),
                                dtype=np.uint64), frac_bits=c, bound=0)
    t, e, _, err = plan_public_factor(x.bound, top, x.ring.bits)
    err += x.bound / float(1 << (e + 1))
    if err > max(2.0, 2.0 ** (c / 2)):
        raise ValueError(f"public factors up to {float(top):g} cannot be applied within "
                         f"2^{c // 2} units of the last place in Z_2^{x.ring.bits}: use a wider "
                         "ring or smaller bounds")
    big = np.rint(np.ldexp(eff, e)).astype(np.int64)
    y = x if t == 0 else truncate(x._like(x._shares, frac_bits=c + e), t)
    y = y._like(y._shares, frac_bits=c + e - t)
    enc = big.astype(np.uint64) & x.ring.mask
    sh = (y._shares * enc) & x.ring.mask
    prod = y._like(sh, holders=np.broadcast_to(y.holders, sh.shape) if y.holders.ndim > 1
                   else y.holders, bound=max(1, math.ceil(y.bound * int(np.max(np.abs(big))))))
    out = truncate(prod, e - t)
    return _with_bound(out, math.ceil(float(top) * x.bound + err) + 1)


def widen_for(x: SecureArray, v: object) -> SecureArray:
    """``x`` at the session's scale when the public float ``v`` is not a whole number of units
    of ``x``'s last place (``x + 0.5`` on an integer value, ``x < 0.5``): an exact shift,
    so the public operand loses nothing to ``x``'s scale."""
    if isinstance(v, type(x)):
        return x
    arr = np.asarray(v)
    c = x.session.fp.frac_bits
    if arr.dtype.kind != "f" or x.frac_bits >= c or not np.all(np.isfinite(arr)):
        return x
    scaled = arr * float(1 << x.frac_bits)
    return x if np.array_equal(scaled, np.rint(scaled)) else x._rescaled(c)


def divide_public(x: SecureArray, d: float | int) -> SecureArray:
    """``x / d`` for a public nonzero number ``d`` (an integer divisor is used exactly as the
    fraction 1/d): :func:`multiply_public`."""
    frac = Fraction(d)
    if frac == 0:
        raise ZeroDivisionError("division of a secure value by zero")
    return multiply_public(x, 1 / frac)


# -- iterative functions -------------------------------------------------------------------------
def _fixed(x: SecureArray) -> SecureArray:
    """``x`` at scale max(its own, the session's) (an exact shift)."""
    c = max(x.frac_bits, x.session.fp.frac_bits)
    return x if x.frac_bits == c else x._rescaled(c)


def _iterations(step, e0s, tol: float, cap: int = 64) -> int:
    """Iterations of the public error recurrence ``step`` until every start in ``e0s`` is within
    ``tol``."""
    worst = 0
    for e in e0s:
        n = 0
        while abs(e) > tol and n < cap:
            e = step(e)
            n += 1
        if n >= cap:
            raise ValueError("the iteration does not converge on this domain")
        worst = max(worst, n)
    return worst


def _domain(x: SecureArray, lower: float | None) -> tuple[float, float]:
    hi = x.bound / float(1 << x.frac_bits)
    lo = 1.0 if lower is None else float(lower)
    if not 0 < lo <= hi:
        raise ValueError(f"lower must be in (0, {hi:g}] (the value's bound), got {lower!r}")
    return lo, hi


def _check_domain(x: SecureArray, lo: float, hi: float, inverse_bound: int, what: str) -> None:
    """Raise, naming ``lower``, if x times a value bounded by ``inverse_bound`` (ring units,
    the iteration's largest factor) may not fit below 2^(l-2) before its truncation."""
    if x.bound * inverse_bound >= _limit(x):
        raise ValueError(f"{what} on [{lo:g}, {hi:g}] at {x.frac_bits} fractional bits does not "
                         f"fit Z_2^{x.ring.bits} (bound / lower times 2^{2 * x.frac_bits} must "
                         f"stay below 2^{x.ring.bits - 2}): give a larger lower=, a smaller "
                         "bound (assume_bound), or a wider ring (Session(bits=64))")


def _clamped(x: SecureArray, lo: float) -> SecureArray:
    """max(x, lo) for x >= 0 (one comparison, one product)."""
    low = x < lo
    return low.if_else(lo, x)


def reciprocal(x: SecureArray, lower: float | None = None) -> SecureArray:
    """1 / x for x in [lower, bound] (positive), by Newton's iteration y <- y (2 - x y).

    ``lower``: the smallest value of the domain (default 1.0, right for
    nonzero integer values such as counts); smaller values are treated as
    ``lower`` (one comparison). Start y0 = 2 / (lower + bound); the error
    e = 1 - x y squares each step, and the iteration count (public) is the
    smallest with |e| <= 2^-(c+2) on the whole domain (about
    log2(c ln 2 bound / lower)). Output at scale c = max(x's, the
    session's); error a few units of the last place. Cost per iteration:
    two products with truncation (4 rounds). The ring must hold
    (bound / lower) 2^(2c) below 2^(l-2) (ValueError otherwise).
    """
    x = _fixed(x)
    lo, hi = _domain(x, lower)
    c = x.frac_bits
    y0 = 2.0 / (lo + hi)
    n = _iterations(lambda e: e * e, [1 - lo * y0, 1 - hi * y0], 2.0 ** -(c + 2))
    one = 1 << c
    y_bound = math.ceil(one / lo) + 4
    _check_domain(x, lo, hi, y_bound + math.ceil(y0 * one) + 1, "the reciprocal")
    x = _clamped(x, lo)
    y = x._like(np.zeros_like(x._shares), bound=y_bound) + y0
    for _ in range(n):
        xy = _with_bound(x * y, 2 * one + 4)
        y = _with_bound(y * (2 - xy), y_bound)
    return y


def divide(x: SecureArray, y: SecureArray, lower: float | None = None) -> SecureArray:
    """x / y for secure y with |y| in [lower, bound] (either sign): x times
    :func:`reciprocal` of |y| with y's sign restored (one comparison and one product more).

    ``lower`` defaults to 1.0 for integer y (a nonzero integer has |y| >= 1)
    and must be given for fixed-point y (TypeError otherwise): below it the
    reciprocal is that of ``lower``. Error: that of the reciprocal times |x|
    plus one truncation.
    """
    if y.frac_bits and lower is None:
        raise TypeError("dividing by a fixed-point secure value needs the divisor's domain: "
                        "mpc.values.fixedpoint.divide(x, y, lower=...) with |y| >= lower")
    neg = y < 0
    sign = 1 - 2 * neg
    r = reciprocal(_with_bound(y * sign, y.bound), lower)
    r = _with_bound(r * sign, r.bound)
    return x * r if not isinstance(x, (int, float)) else r * x


def sqrt(x: SecureArray, lower: float | None = None) -> SecureArray:
    """sqrt(x) for x in {0} and [lower, bound]: x times the inverse square root, by Newton's
    iteration y <- y (3 - x y^2) / 2 (CrypTen's ``inv_sqrt`` iteration).

    Values below ``lower`` (default 2^-(c/2)) use ``lower`` in the inverse
    square root (so sqrt(0) = 0 exactly, and 0 < x < lower gives
    x / sqrt(lower)). Start y0 = sqrt(2 / (lower + bound)); iterations (public):
    the smallest count with |1 - x y^2| <= 2^-(c+2) on the domain. Then
    s = x y and two corrections s <- s + (y / 2)(x - s^2), which square the
    error left by y's rounding (amplified by x in x y). Cost per iteration:
    three products with truncation (6 rounds), 5 products more at the end.
    Output at scale c; error a few units of the last place on [lower, bound].
    The ring must hold (bound / lower) 2^(2c) below 2^(l-2) (ValueError naming
    ``lower`` otherwise: in the default 40-bit ring a domain such as [16, 300]).
    """
    x = _fixed(x)
    c = x.frac_bits
    lo, hi = _domain(x, 2.0 ** -(c // 2) if lower is None else lower)
    y0 = math.sqrt(2.0 / (lo + hi))
    n = _iterations(lambda e: 0.75 * e * e + 0.25 * e ** 3,
                    [1 - lo * y0 * y0, 1 - hi * y0 * y0], 2.0 ** -(c + 2))
    one = 1 << c
    _check_domain(x, lo, hi, math.ceil(one / lo) + 4, "the square root")
    xc = _clamped(x, lo)
    y_bound = math.ceil(one / math.sqrt(lo)) + 4
    y = x._like(np.zeros_like(x._shares), bound=y_bound) + y0
    for _ in range(n):
        y2 = _with_bound(y * y, math.ceil(one / lo) + 4)
        xy2 = _with_bound(xc * y2, 3 * one)
        y = _with_bound(multiply_public(y * (3 - xy2), 0.5), y_bound)
    s_bound = math.ceil(math.sqrt(hi) * one) + 8
    root = _with_bound(x * y, s_bound)
    half = _with_bound(multiply_public(y, 0.5), y_bound)
    for _ in range(2):                  # s <- s + (x - s^2) / (2 sqrt(x)): error squared
        res = _with_bound(x - root * root, x.bound + s_bound * s_bound // one + 2)
        root = _with_bound(root + half * res, s_bound)
    return root


def exp(x: SecureArray, degree: int = 8) -> SecureArray:
    """e^x for |x| <= bound: e^x = (e^(x / 2^k))^(2^k) with k = ceil(log2 bound) + 1, so that
    |x / 2^k| <= 1/2, the inner exponential by its Taylor polynomial of ``degree`` (Horner).

    x / 2^k is x itself read at k more fractional bits (exact). The
    polynomial runs at scale w = min(c + k + 8, (l - 3) // 2) and the k
    squarings at the widest scale ws <= w (>= c) whose squares fit the ring.
    Error: the Taylor remainder 2^-(degree+1) / (degree+1)! (5e-9 for 8) plus
    about (degree + 2) units of 2^-w, multiplied by 2^k by the squarings,
    plus k units of 2^-ws relative to each square, then the final rounding
    to scale c: relative 2^(k - ws) (degree + 2 + k) plus one unit of 2^-c.
    Cost: degree + k products with truncation, 2 (degree + k) + 2 rounds.
    The result must fit: e^bound 2^c < 2^(l-3) (ValueError otherwise).
    """
    x = _fixed(x)
    c = x.frac_bits
    hi = x.bound / float(1 << c)
    if hi * math.log2(math.e) + c >= x.ring.bits - 3:
        raise ValueError(f"e^x for |x| <= {hi:g} does not fit Z_2^{x.ring.bits} at {c} "
                         "fractional bits: give a smaller bound or a wider ring")
    k = max(0, math.ceil(math.log2(hi)) + 1) if hi > 0 else 0
    w = max(k, min(c + k + 8, (x.ring.bits - 3) // 2))  # Horner's scale: its products fit
    ws = max(c, min(w, math.floor((x.ring.bits - 3) / 2 - hi * math.log2(math.e))))
    if w > (x.ring.bits - 3) // 2:
        raise ValueError(f"e^x for |x| <= {hi:g} needs a wider ring than Z_2^{x.ring.bits}")
    z = x._like(x._shares, frac_bits=c + k)            # x / 2^k, exactly
    z = z._rescaled(w) if w >= c + k else truncate(z, c + k - w)
    acc = z._like(np.zeros_like(z._shares), bound=0) + 1.0 / math.factorial(degree)
    for j in range(degree - 1, -1, -1):
        acc = _with_bound(acc * z + 1.0 / math.factorial(j), 2 << w)
    out = truncate(acc, w - ws)                        # squarings at scale ws >= c
    for i in range(k):
        val = math.exp(hi / (1 << (k - i - 1)))
        out = _with_bound(out * out, math.ceil(val * (1 << ws)) + 8)
    return truncate(out, ws - c)


def abs_value(x: SecureArray) -> SecureArray:
    """|x|: x (1 - 2 [x < 0]), one comparison and one product (exact; bound unchanged)."""
    neg = x < 0
    return _with_bound(x * (1 - 2 * neg), x.bound)


def sigmoid(x: SecureArray) -> SecureArray:
    """1 / (1 + e^-x): s = 1 / (1 + e^-|x|) (|x| by :func:`abs_value`, e^-|x| by :func:`exp`,
    the reciprocal on [1, 2] by :func:`reciprocal`, 4 iterations at 14 fractional bits),
    then 1 - s where x < 0. Error: that of :func:`exp` on [-bound, 0] (absolute, below
    2^(k - c) (degree + 2)) plus a few units of the last place. Cost: two comparisons, about
    20 products with truncation."""
    x = _fixed(x)
    neg = x < 0
    t = _with_bound(x * (1 - 2 * neg), x.bound)
    u = exp(-t)
    u = _with_bound(u, (1 << u.frac_bits) + 8)
    d = _with_bound(u + 1, (2 << u.frac_bits) + 8)
    s = reciprocal(d, lower=1.0)
    return neg.if_else(1 - s, s)


def mean(x: SecureArray, axis: int | None = None) -> SecureArray:
    """Mean over ``axis`` (all when None): the local sum times the public 1/n
    (:func:`divide_public`, MPyC's 2^e / n), at scale max(x's, the session's)."""
    s = x.sum(axis)
    n = x.shares[0].size // max(s.shares[0].size, 1)
    return divide_public(s, n)


def var(x: SecureArray, axis: int | None = None, ddof: int = 0) -> SecureArray:
    """Variance over ``axis``: the squared deviations from the mean, each divided by
    n - ``ddof`` (:func:`divide_public` on one square's bound, not the sum's: the error
    relative to the variance stays near 2^-(l/2)), then summed. Cost: the mean, one Beaver
    round and one truncation for the squares, one or two for the division. The squares must
    fit: (2 bound)^2 < 2^(l-2) ring units (a 64-bit ring for most fixed-point data)."""
    x = _fixed(x)
    m = mean(x, axis)
    if axis is None:
        m_sh = np.broadcast_to(m.shares.reshape((x.p,) + (1,) * x.ndim), x.shares.shape)
    else:
        ax = int(axis) % x.ndim + 1
        m_sh = np.broadcast_to(np.expand_dims(m.shares, ax), x.shares.shape)
    d = x - x._like(np.ascontiguousarray(m_sh), bound=x.bound)
    n = x.shares[0].size // max(m.shares[0].size, 1)
    if n - ddof <= 0:
        raise ValueError(f"ddof={ddof} leaves no degrees of freedom for {n} values")
    return divide_public(d * d, n - ddof).sum(axis)
