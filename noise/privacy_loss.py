"""Exact privacy loss of Polya-difference noise: what a colluding coalition is left with.

Distributed discrete Laplace noise (:mod:`noise.distributed`) is a sum of
per-contributor differences X_i - Y_i of Polya(r0, a) variables, a =
exp(-1/t). A coalition that knows its members' draws subtracts them; what
protects an honest party is the sum over the honest contributors only,

    Z = X - Y,   X, Y iid Polya(r, a),   r = (honest contributors) * r0,

which is discrete Laplace(a) for r = 1, more noise for r > 1 and less for
r < 1. :func:`polya_difference_epsilon` gives the pure-DP epsilon of adding Z
to an integer query of L1 sensitivity Delta.

How (and why the maximization is exact)
---------------------------------------
Write P(z) = P(Z = z), symmetric in z, and d = floor(Delta) (query values
are integers, so shifts are integers |s| <= d). The loss is
sup_z sup_{|s| <= d} ln P(z) - ln P(z + s).

* r >= 1: Polya(r, a) is log-concave, and so is the difference of two
  independent log-concave variables. The decrements ln P(z) - ln P(z + 1)
  increase on z >= 0 towards their limit -ln a = 1/t, so the supremum is the
  tail limit d / t (the discrete Laplace value; more noise does not lower a
  pure-DP epsilon, its supremum sits in the tails).
* r < 1: Polya(r, a) is decreasing and log-convex on k >= 0 (its ratio
  a (k + r) / (k + 1) increases with k). For z >= 0, P(z) = sum_k
  P_X(k + z) P_Y(k) is a sum of decreasing log-convex sequences in z, hence
  decreasing and log-convex; every window of d decrements is then largest at
  z = 0, and windows that straddle 0 are sub-windows of it. So the loss is
  exactly ln P(0) - ln P(d).

Numerics: S_z = sum_k exp(l(k) + l(k + z)) with the exact log-pmf l (common
constants cancel in ln S_0 - ln S_d). Terms k < 2^14 are summed directly;
beyond that (large scales) the sum is the integral of the smooth extension
of the summand (Gauss-Legendre on panels no wider than t/16 or 3 % of x)
plus the Euler-Maclaurin end corrections. The sum is truncated where the
summand is below e^-50 of its value at the start of the tail. log Gamma
differences use math.lgamma below 32 and a cancellation-free Stirling
difference above. The float64 result has a relative error far below 1e-9;
it is returned rounded up by ``1e-9`` relative (an accounting number, not
a sampler).
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike

from .accounting import check_sensitivity
from .samplers import RealLike, as_fraction

__all__ = ["polya_difference_epsilon", "polya_log_pmf"]

#: Direct summation below this index; the smooth tail is integrated beyond it.
_DIRECT = 1 << 14
_STIRLING_FROM = 32.0
_SAFETY = 1e-9
#: Gauss-Legendre nodes and weights on [-1, 1] (16 points).
_GL_X, _GL_W = np.polynomial.legendre.leggauss(16)


def _stirling_series(y: np.ndarray) -> np.ndarray:
    """ln Gamma(y) - [(y - 1/2) ln y - y + ln(2 pi) / 2] for y >= 32 (error < 1e-17)."""
    inv = 1.0 / y
    inv2 = inv * inv
    return inv * (1 / 12 - inv2 * (1 / 360 - inv2 * (1 / 1260 - inv2 / 1680)))


def _lgamma_ratio(x: np.ndarray, r: float) -> np.ndarray:
    """ln Gamma(x + r) - ln Gamma(x + 1) for real x >= 0, 0 < r (vectorized, no cancellation)."""
    x = np.asarray(x, dtype=np.float64)
    out = np.empty_like(x)
    small = x < _STIRLING_FROM
    if small.any():
        xs = x[small]
        out[small] = np.fromiter((math.lgamma(v + r) - math.lgamma(v + 1.0) for v in xs),
                                 dtype=np.float64, count=xs.size)
    big = ~small
    if big.any():
        xb = x[big]
        out[big] = ((xb + 0.5) * np.log1p((r - 1.0) / (xb + 1.0)) + (r - 1.0) * np.log(xb + r)
                    - (r - 1.0) + _stirling_series(xb + r) - _stirling_series(xb + 1.0))
    return out


def polya_log_pmf(k: ArrayLike, r: RealLike, scale: RealLike) -> np.ndarray:
    """ln P(K = k) of Polya(r, a = exp(-1/scale)) for real k >= 0 (float64, vectorized).

    ln Gamma(k + r) - ln Gamma(k + 1) - ln Gamma(r) + r ln(1 - a) + k ln a,
    evaluated without cancellation for large k (see the module docstring).
    """
    r = float(as_fraction(r, "r"))
    t = float(as_fraction(scale, "scale"))
    k = np.asarray(k, dtype=np.float64)
    log1ma = math.log(-math.expm1(-1.0 / t))
    return _lgamma_ratio(k, r) - math.lgamma(r) + r * log1ma - k / t


def _log_terms(k: np.ndarray, z: int, r: float, t: float) -> np.ndarray:
    """l(k) + l(k + z) without the constants, l(x) = lnG(x + r) - lnG(x + 1) + x ln a."""
    return _lgamma_ratio(k, r) + _lgamma_ratio(k + z, r) - (2.0 * k + z) / t


def _log_sum(r: float, t: float, z: int, direct: int) -> float:
    """ln S_z, S_z = sum_{k >= 0} exp(l(k) + l(k + z)) (see the module docstring)."""
    log_cut = 50.0
    k_end = math.ceil(log_cut * t / 2.0) + 64                 # exp(-2 k / t) < e^-50 from here
    n_direct = min(k_end, direct)
    parts = []
    for start in range(0, n_direct, 1 << 20):
        k = np.arange(start, min(n_direct, start + (1 << 20)), dtype=np.float64)
        parts.append(_log_terms(k, z, r, t))
    head = np.concatenate(parts)
    m = float(head.max())
    total = float(np.exp(head - m).sum())
    if k_end > n_direct:
        x0 = float(n_direct)
        f0 = _log_terms(np.array([x0 - 1.0, x0, x0 + 1.0]), z, r, t) - m
        # Euler-Maclaurin: sum_{k >= x0} f(k) = int_{x0}^inf f + f(x0)/2 - f'(x0)/12 + ...
        total += math.exp(f0[1]) / 2.0 - (math.exp(f0[2]) - math.exp(f0[0])) / 24.0
        total += _tail_integral(x0, float(k_end), z, r, t, m)
    return m + math.log(total)


def _tail_integral(x0: float, x_end: float, z: int, r: float, t: float, shift: float) -> float:
    """int_{x0}^{x_end} exp(l(x) + l(x + z) - shift) dx by Gauss-Legendre on panels."""
    edges = [x0]
    x = x0
    while x < x_end:
        x = min(x_end, x + min(0.03 * x, t / 16.0))
        edges.append(x)
    e = np.asarray(edges)
    lo, hi = e[:-1, None], e[1:, None]
    mid, half = (lo + hi) / 2.0, (hi - lo) / 2.0
    nodes = mid + half * _GL_X[None, :]
    vals = np.exp(_log_terms(nodes.ravel(), z, r, t) - shift).reshape(nodes.shape)
    return float((half * vals * _GL_W[None, :]).sum())


def polya_difference_epsilon(r: RealLike, scale: RealLike, sensitivity: RealLike, *,
                             _direct: int = _DIRECT) -> float:
    """Pure-DP epsilon of adding X - Y (X, Y iid Polya(r, exp(-1/scale))) to an integer query.

    ``r``: the Polya shape of the noise that remains (e.g. the honest
    contributors' total shape); ``scale``: t with a = exp(-1/t), in the
    query's integer units; ``sensitivity``: its L1 sensitivity Delta in the
    same units. Returns floor(Delta)/t for r >= 1 (the discrete Laplace value,
    exact supremum) and ln P(0) - ln P(floor(Delta)) for r < 1 (exact by
    log-convexity), computed numerically as the module docstring says and
    rounded up by 1e-9 relative. Cost: O(min(t, 2^14)) float operations plus a
    few thousand for the tail.
    """
    rq = as_fraction(r, "r")
    t = float(as_fraction(scale, "scale"))
    delta = check_sensitivity(sensitivity)
    d = math.floor(delta)
    if d == 0:
        return 0.0
    if rq >= 1:
        return d / t * (1.0 + _SAFETY)
    rf = float(rq)
    eps = _log_sum(rf, t, 0, _direct) - _log_sum(rf, t, d, _direct)
    return max(eps, d / t) * (1.0 + _SAFETY)
