"""Exact samplers on the integers for differential privacy, batched over samples.

Every sampler takes the randomness explicitly (``rng``: an
:class:`mpc.arith.rng.CSPRNG`, or a seed for tests, or ``None`` for a fresh
``os.urandom``-keyed stream) and returns an ``int64`` array of the requested
``shape``. numpy's generators are never used.

Parameters are rationals
------------------------
Exactness needs rational parameters. Every scale / variance / probability
argument may be an ``int``, a :class:`fractions.Fraction` or a ``float``; a
float is converted to the *exact* rational it represents (``Fraction(x)``,
no rounding), so the distribution sampled is exactly the one of that rational
and a privacy claim must be made for it. :func:`round_scale_up` rounds a
scale *up* on a dyadic grid (more noise, so the privacy of the requested
scale still holds) when its numerator is too large for the samplers. Both,
and the rigorous bounds below, live in :mod:`noise.rationals` (re-exported
here).

How exactness is obtained (and what it assumes)
-----------------------------------------------
The algorithms are those of Canonne, Kamath and Steinke, "The Discrete
Gaussian for Differential Privacy", NeurIPS 2020 (CKS20): Algorithm 1
(Bernoulli(exp(-gamma))), Algorithm 2 (discrete Laplace), Algorithm 3
(discrete Gaussian). The only irrational quantities they need are
comparisons ``U < exp(-gamma)`` of a uniform real ``U`` with an exponential of
a rational. We decide each such comparison *lazily*: ``U`` is a 53-bit
uniform prefix (plus further bits drawn on demand), and

* the fast path compares the prefix interval ``[w, w+1) / 2^53`` with the
  float64 value of ``exp(-gamma)`` widened by a relative safety margin of
  ``2^-36 (1 + gamma)``; it decides only when the whole interval lies on
  one side of the widened value;
* otherwise (probability about ``2^-36`` per comparison) the slow path draws
  64 more bits of ``U`` at a time and compares with rigorous rational
  interval bounds on ``exp(-gamma)`` (Taylor series with remainder,
  :func:`exp_neg_bounds`) until the comparison is decided.

So the output distribution is exact provided that numpy's float64 ``exp``
(and ``log``, for :func:`geometric`) has relative error below ``2^-40`` (it
is within a few ulp, i.e. ~2^-51) on arguments computed to within a few ulp
-- a far weaker assumption than trusting floating-point noise. Tests force
the slow path (by widening the margin) and check the law is unchanged. The
geometric Geometric(1 - e^-1) part uses exact 64-bit integer thresholds
``floor(2^64 e^-k)`` computed in rational arithmetic, with the same lazy
refinement on ties.

Polya (negative binomial) with any rational shape r is exact too: integer
shapes sum geometrics, the fractional part thins the cycles of a geometric
(see :func:`polya`).

Cost: O(1) expected CSPRNG words and vectorized numpy passes per sample;
rejection loops run over rounds of the batch (geometric decay), never over
samples. Throughput is measured by ``benchmarks/noise.py``.

Threat model: the samplers are local computations of one party; their
security rests on the CSPRNG (AES-128 as a PRF, see :mod:`mpc.arith.rng`).
"""

from __future__ import annotations

import functools
import math
import numbers
from fractions import Fraction

import numpy as np
from numpy.typing import ArrayLike

from mpc.arith.rng import CSPRNG, RngLike, ShapeLike, as_rng, check_shape

from .rationals import (
    MAX_NUMERATOR_BITS,
    RealLike,
    _check_numerator,
    _LazyUniform,
    _pow_bounds,
    _probability,
    as_fraction,
    exp_neg_bounds,
    round_scale_up,
)

__all__ = [
    "MAX_NUMERATOR_BITS", "RealLike", "as_fraction", "bernoulli", "bernoulli_exp", "binomial",
    "discrete_gaussian", "discrete_gaussian_pmf", "discrete_laplace", "discrete_laplace_many",
    "discrete_laplace_pmf", "exp_neg_bounds", "gaussian_float", "geometric", "geometric_exp",
    "laplace_float", "polya", "polya_pmf", "round_scale_up",
]

#: Relative safety margin of the float fast path (times 1 + gamma).
_REL_MARGIN = 2.0 ** -36
#: Margin of the float inverse-CDF fast path of :func:`geometric` (times 1 + |log|).
_GEOM_MARGIN = 2.0 ** -44
_TWO53 = float(2 ** 53)
_INV53 = 2.0 ** -53


_shape = check_shape


def _size(shape) -> int:
    return int(np.prod(shape, dtype=np.int64))


def _rng(rng: RngLike) -> CSPRNG:
    if rng is not None and not isinstance(rng, (CSPRNG, numbers.Integral, str, bytes, bytearray)):
        raise TypeError(f"rng must be an mpc.arith.rng.CSPRNG, a seed or None, "
                        f"got {type(rng).__name__}")
    return as_rng(rng)


def _bern_exp_core(gamma_f: np.ndarray, exact_gamma, rng: CSPRNG) -> np.ndarray:
    """Vectorized Bernoulli(exp(-gamma_i)); ``exact_gamma(i)`` gives the exact rational.

    ``gamma_f`` holds float approximations with relative error far below the
    safety margin. Fast path: float compare with margin; slow path: lazy exact.
    """
    m = gamma_f.size
    w = rng.uint64(m) >> np.uint64(11)                       # 53-bit prefix of U
    lo = w.astype(np.float64) * _INV53
    hi = (w + np.uint64(1)).astype(np.float64) * _INV53
    e = np.exp(-gamma_f)
    marg = _REL_MARGIN * (1.0 + gamma_f)
    yes = hi <= e * (1.0 - marg)
    no = lo > e * (1.0 + marg)
    amb = np.flatnonzero(~(yes | no))
    for i in amb:  # probability ~2^-36 each: essentially never runs
        yes[i] = _LazyUniform(int(w[i]), 53, rng).lt_exp(exact_gamma(int(i)))
    return yes


@functools.lru_cache(maxsize=1)
def _exp_thresholds() -> np.ndarray:
    """T_k = floor(2^64 e^-k) for k = 1..64 (exact integers; 0 from k = 45 on)."""
    out = []
    for k in range(1, 65):
        prec = 80
        while True:
            lo, hi = exp_neg_bounds(Fraction(k), prec)
            a = (lo.numerator << 64) // lo.denominator
            b = (hi.numerator << 64) // hi.denominator
            if a == b:
                out.append(a)
                break
            prec += 64
    return np.array(out, dtype=np.uint64)


def _geom_e1(m: int, rng: CSPRNG) -> np.ndarray:
    """V with P(V = v) = (1 - e^-1) e^-v, v >= 0 (exact; inverse CDF with exact thresholds).

    V = #{k >= 1 : U < e^-k}. With U in [w, w+1) / 2^64: w < T_k decides
    U < e^-k, w > T_k decides the opposite, w == T_k is refined lazily.
    """
    T = _exp_thresholds()
    T_asc = T[::-1]
    w = rng.uint64(m)
    left = np.searchsorted(T_asc, w, side="left")
    right = np.searchsorted(T_asc, w, side="right")
    v = (T.size - right).astype(np.int64)                   # count of T_k > w
    for i in np.flatnonzero(left != right):                 # w equals some T_k
        u = _LazyUniform(int(w[i]), 64, rng)
        k = int(v[i]) + 1
        while u.lt_exp(Fraction(k)):
            k += 1
        v[i] = k - 1
    return v


def _geom_t(t: int, m: int, rng: CSPRNG) -> np.ndarray:
    """X with P(X = x) proportional to exp(-x / t), x >= 0 (CKS20 Alg. 2, steps 2-7)."""
    out = np.empty(m, dtype=np.int64)
    if t == 1:
        out[:] = 0
    else:
        todo = np.arange(m)
        while todo.size:
            u = rng.integers(t, (todo.size,))
            uf = u.astype(np.float64) / float(t)
            acc = _bern_exp_core(uf, lambda i, u=u: Fraction(int(u[i]), t), rng)
            out[todo[acc]] = u[acc]
            todo = todo[~acc]
    return out + np.int64(t) * _geom_e1(m, rng)


# -- public samplers ----------------------------------------------------------------
def bernoulli(p: RealLike, shape: ShapeLike = (), rng: RngLike = None) -> np.ndarray:
    """Exact Bernoulli(p) for rational p in [0, 1]; returns ``bool``.

    Algorithm: U < p with U uniform; a 64-bit prefix w decides unless
    w == floor(p 2^64), which is refined lazily with further bits.
    Cost: one 64-bit word per sample (plus ~2^-64 refinements).
    """
    q = _probability(p)
    shape = _shape(shape)
    rng = _rng(rng)
    m = _size(shape)
    if q == 1:
        return np.ones(shape, dtype=bool)
    thr = (q.numerator << 64) // q.denominator           # < 2^64 since q < 1
    w = rng.uint64(m)
    t = np.uint64(thr)
    out = w < t
    exact_tie = (Fraction(thr, 1 << 64) == q)
    if not exact_tie:
        for i in np.flatnonzero(w == t):
            out[i] = _LazyUniform(int(w[i]), 64, rng).lt_rational(q)
    return out.reshape(shape)


def bernoulli_exp(gamma: RealLike, shape: ShapeLike = (), rng: RngLike = None) -> np.ndarray:
    """Exact Bernoulli(exp(-gamma)) for rational gamma >= 0; returns ``bool``.

    Algorithm: lazy comparison of a uniform with exp(-gamma) (float fast path
    with safety margin, rational Taylor bounds on ties); the output is
    distributed exactly as CKS20 Algorithm 1. Cost: one word per sample.
    """
    g = as_fraction(gamma, "gamma", allow_zero=True)
    shape = _shape(shape)
    rng = _rng(rng)
    m = _size(shape)
    gf = np.full(m, float(g))
    return _bern_exp_core(gf, lambda i: g, rng).reshape(shape)


def geometric(p: RealLike, shape: ShapeLike = (), rng: RngLike = None) -> np.ndarray:
    """Exact geometric: number of failures before the first success, P(k) = p (1-p)^k.

    ``p`` is a rational in (0, 1]. Algorithm: inverse CDF, k = max{j :
    U < (1-p)^j}; a float candidate is verified against both neighbouring
    thresholds with a safety margin, ties decided exactly with rational
    arithmetic on a lazily refined uniform. Cost: one word per sample.
    """
    q = as_fraction(p, "p")
    if q > 1:
        raise ValueError(f"p must be in (0, 1], got {p!r}")
    shape = _shape(shape)
    rng = _rng(rng)
    m = _size(shape)
    if q == 1:
        return np.zeros(shape, dtype=np.int64)
    # log(1-p) < 0 to ~1 ulp: log1p for small p, log of the exact rational 1-p otherwise
    lq = math.log1p(-float(q)) if q < Fraction(1, 2) else math.log(1 - q)
    w = rng.uint64(m) >> np.uint64(11)
    lo = w.astype(np.float64) * _INV53
    hi = (w + np.uint64(1)).astype(np.float64) * _INV53
    mid = (lo + hi) * 0.5
    k = np.floor(np.log(mid) / lq)
    k = np.maximum(k, 0.0)
    with np.errstate(divide="ignore"):
        lhi, llo = np.log(hi), np.log(lo)
    # need U < (1-p)^k  <=  log(hi) <= k lq - margin;
    # and U >= (1-p)^(k+1)  <=  log(lo) >= (k+1) lq + margin
    a = k * lq
    b = (k + 1.0) * lq
    # float errors here are ~1 ulp of |log| (log is within 1 ulp, k * lq within 2): a
    # margin of 2^-44 (1 + |b|) keeps the fast path rare to miss even for tiny p
    marg = _GEOM_MARGIN * (1.0 + np.abs(b))
    ok = (lhi <= a - marg) & (llo >= b + marg) & np.isfinite(llo) & (k < 2.0 ** 62)
    out = k.astype(np.int64)
    one_minus = 1 - q
    for i in np.flatnonzero(~ok):
        u = _LazyUniform(int(w[i]), 53, rng)
        # exact search: start from the float candidate (clipped) and walk
        j = int(min(max(k[i], 0.0), 2.0 ** 62))
        def below(jj, u=u):  # U < (1-p)^jj, decided exactly
            return u.lt_bounds(lambda prec: _pow_bounds(one_minus, jj, prec))

        while j > 0 and not below(j):
            j -= 1
        while below(j + 1):
            j += 1
        out[i] = j
    return out.reshape(shape)


def geometric_exp(gamma: RealLike, shape: ShapeLike = (), rng: RngLike = None) -> np.ndarray:
    """Exact geometric with P(k) = (1 - e^-gamma) e^(-gamma k), k >= 0, gamma > 0 rational.

    Algorithm (CKS20 Alg. 2, without the sign): with gamma = s/t,
    X = U + t V where U in [0, t) is accepted with probability exp(-U/t) and
    V ~ Geometric(1 - e^-1); then floor(X / s). Cost: ~1.6 uniforms in [0, t)
    and ~2.6 words per sample.
    """
    g = as_fraction(gamma, "gamma")
    shape = _shape(shape)
    rng = _rng(rng)
    s, t = g.numerator, g.denominator
    _check_numerator(1 / g, "1/gamma")
    m = _size(shape)
    return (_geom_t(t, m, rng) // np.int64(s)).reshape(shape)


def discrete_laplace(scale: RealLike, shape: ShapeLike = (), rng: RngLike = None) -> np.ndarray:
    """Exact discrete Laplace: P(z) = (1-a)/(1+a) a^|z| with a = exp(-1/scale), z in Z.

    ``scale`` = t/s is a positive rational (a float is taken exactly; see
    :func:`round_scale_up`). Algorithm: CKS20 Algorithm 2 -- a geometric
    Y = floor(X / s) with X ~ Geom(1 - e^(-1/t)) built from a uniform in
    [0, t) accepted w.p. exp(-U/t) and a Geom(1 - e^-1); a uniform sign,
    rejecting (sign = -, Y = 0). Cost: expected < 2 rounds of the batch,
    about 4 CSPRNG words per sample. Variance 2a / (1-a)^2.
    """
    q = as_fraction(scale, "scale")
    _check_numerator(q, "scale")
    shape = _shape(shape)
    rng = _rng(rng)
    t, s = q.numerator, q.denominator
    m = _size(shape)
    out = np.empty(m, dtype=np.int64)
    todo = np.arange(m)
    while todo.size:
        k = todo.size
        y = _geom_t(t, k, rng) // np.int64(s)
        neg = rng.bits(k).astype(bool)
        ok = ~(neg & (y == 0))
        z = np.where(neg, -y, y)
        out[todo[ok]] = z[ok]
        todo = todo[~ok]
    return out.reshape(shape)


def discrete_laplace_many(numerators: ArrayLike, denominators: ArrayLike,
                          rng: RngLike = None) -> np.ndarray:
    """Exact discrete Laplace, one draw per scale t_i / s_i (many distinct scales, one batch).

    ``numerators`` t_i and ``denominators`` s_i: positive integer arrays of
    one shape, t_i < 2^56 and s_i < 2^62 (the bounds of
    :func:`discrete_laplace`). Draw i has P(z) = (1-a_i)/(1+a_i) a_i^|z| with
    a_i = exp(-s_i / t_i): the law :func:`discrete_laplace` gives for the
    scale Fraction(t_i, s_i), by the same algorithm (CKS20 Algorithm 2),
    vectorized over the scales instead of one call per scale. Cost: expected
    < 2 rounds of the batch, about 4 CSPRNG words per draw.
    """
    t = np.asarray(numerators)
    s = np.asarray(denominators)
    if t.dtype.kind not in "iu" or s.dtype.kind not in "iu":
        raise TypeError("numerators and denominators must be integer arrays")
    if t.shape != s.shape:
        raise ValueError(f"numerators {t.shape} and denominators {s.shape} differ in shape")
    if t.size and (t.min() < 1 or s.min() < 1):
        raise ValueError("numerators and denominators must be >= 1")
    if t.size and (int(t.max()).bit_length() > MAX_NUMERATOR_BITS
                   or int(s.max()).bit_length() > 62):
        raise ValueError(f"numerators must be < 2^{MAX_NUMERATOR_BITS} and denominators "
                         "< 2^62; round the scales up first")
    rng = _rng(rng)
    shape = t.shape
    t = t.astype(np.int64).reshape(-1)
    s = s.astype(np.int64).reshape(-1)
    out = np.empty(t.size, dtype=np.int64)
    todo = np.arange(t.size)
    while todo.size:
        y = _geom_many(t[todo], rng) // s[todo]
        neg = rng.bits(todo.size).astype(bool)
        ok = ~(neg & (y == 0))
        out[todo[ok]] = np.where(neg, -y, y)[ok]
        todo = todo[~ok]
    return out.reshape(shape)


def _geom_many(t: np.ndarray, rng: CSPRNG) -> np.ndarray:
    """X_i with P(X_i = x) proportional to exp(-x / t_i): :func:`_geom_t` over an array of t."""
    m = t.size
    out = np.zeros(m, dtype=np.int64)
    todo = np.flatnonzero(t > 1)                      # t = 1: the uniform part is 0
    while todo.size:
        tt = t[todo]
        u = rng.integers(tt, (todo.size,))
        uf = u.astype(np.float64) / tt.astype(np.float64)
        acc = _bern_exp_core(uf, lambda i, u=u, tt=tt: Fraction(int(u[i]), int(tt[i])), rng)
        out[todo[acc]] = u[acc]
        todo = todo[~acc]
    return out + t * _geom_e1(m, rng)


def discrete_laplace_pmf(k: ArrayLike, scale: RealLike) -> np.ndarray:
    """P(Z = k) of the discrete Laplace with a = exp(-1/scale) (float64, for tests)."""
    a = math.exp(-1.0 / float(scale))
    k = np.asarray(k)
    return (1 - a) / (1 + a) * np.power(a, np.abs(k).astype(np.float64))


def discrete_gaussian(sigma2: RealLike, shape: ShapeLike = (), rng: RngLike = None) -> np.ndarray:
    """Exact discrete Gaussian N_Z(0, sigma2): P(z) proportional to exp(-z^2 / (2 sigma2)).

    ``sigma2`` is the rational variance *parameter* sigma^2 (the variance of
    N_Z is slightly below it). Algorithm: CKS20 Algorithm 3 -- with
    t = floor(sigma) + 1, draw Y ~ DLap(scale t) and accept with probability
    exp(-(|Y| - sigma2/t)^2 / (2 sigma2)). Cost: expected < 2 rounds of
    discrete Laplace plus one Bernoulli(exp(-gamma)) per sample.
    Privacy (CKS20 Thm. 4): adding N_Z(0, sigma2) to an integer query of L2
    sensitivity Delta is (Delta^2 / (2 sigma2))-zCDP; see
    :func:`noise.accounting.discrete_gaussian_epsilon`.
    """
    q = as_fraction(sigma2, "sigma2")
    _check_numerator(q, "sigma2")
    shape = _shape(shape)
    rng = _rng(rng)
    t = math.isqrt(q.numerator // q.denominator) + 1
    m = _size(shape)
    out = np.empty(m, dtype=np.int64)
    todo = np.arange(m)
    s2t = q / t
    s2t_f = float(s2t)
    two_s2 = 2 * q
    two_s2_f = float(two_s2)
    while todo.size:
        k = todo.size
        y = discrete_laplace(t, (k,), rng)
        ay = np.abs(y)
        d = ay.astype(np.float64) - s2t_f
        gf = d * d / two_s2_f
        acc = _bern_exp_core(gf, lambda i, ay=ay: (int(ay[i]) - s2t) ** 2 / two_s2, rng)
        out[todo[acc]] = y[acc]
        todo = todo[~acc]
    return out.reshape(shape)


def discrete_gaussian_pmf(k: ArrayLike, sigma2: RealLike, tail: int | None = None) -> np.ndarray:
    """P(Z = k) of N_Z(0, sigma2) (float64; normalizer summed over |z| <= tail)."""
    s2 = float(sigma2)
    if tail is None:
        tail = int(40 * math.sqrt(s2)) + 40
    z = np.arange(-tail, tail + 1, dtype=np.float64)
    norm = np.exp(-z * z / (2 * s2)).sum()
    k = np.asarray(k, dtype=np.float64)
    return np.exp(-k * k / (2 * s2)) / norm


def binomial(n_trials: int, p: RealLike, shape: ShapeLike = (),
             rng: RngLike = None) -> np.ndarray:
    """Exact Binomial(n_trials, p) for rational p; ``int64``.

    p = 1/2: popcount of n_trials uniform bits (one word per 64 trials).
    Other p: sum of n_trials exact Bernoulli(p), in chunks. Cost:
    O(n_trials / 64) words per sample for p = 1/2, O(n_trials) otherwise.
    """
    if isinstance(n_trials, bool) or not isinstance(n_trials, numbers.Integral):
        raise TypeError(f"n_trials must be a non-negative integer, got {n_trials!r}")
    if n_trials < 0:
        raise ValueError(f"n_trials must be >= 0, got {n_trials}")
    n_trials = int(n_trials)
    q = _probability(p)
    shape = _shape(shape)
    rng = _rng(rng)
    m = _size(shape)
    out = np.zeros(m, dtype=np.int64)
    if q == Fraction(1, 2):
        words, rem = divmod(n_trials, 64)
        chunk = max(1, (1 << 22) // max(m, 1))
        for start in range(0, words, chunk):
            c = min(chunk, words - start)
            out += np.bitwise_count(rng.uint64((m, c))).sum(axis=1, dtype=np.int64)
        if rem:
            last = rng.uint64(m) & np.uint64((1 << rem) - 1)
            out += np.bitwise_count(last).astype(np.int64)
        return out.reshape(shape)
    chunk = max(1, (1 << 22) // max(m, 1))
    for start in range(0, n_trials, chunk):
        c = min(chunk, n_trials - start)
        out += bernoulli(q, (c, m), rng).sum(axis=0, dtype=np.int64)
    return out.reshape(shape)


# -- Polya / negative binomial ---------------------------------------------------
_lgamma = np.vectorize(math.lgamma, otypes=[np.float64])


def _polya_fraction(r: Fraction, gamma: Fraction, m: int, rng: CSPRNG) -> np.ndarray:
    """Exact NB(r, a), 0 < r < 1 rational, a = exp(-gamma): thin a geometric's cycles.

    S ~ NB(1, a) (exact :func:`geometric_exp`) is split into the cycle
    lengths of a uniform random permutation of S elements (the Chinese
    restaurant partition with theta = 1, drawn by uniform stick-breaking:
    L ~ Uniform{1..remaining}); each cycle is kept independently with
    probability r. Colouring the cycles of an NB(1, a) variable i.i.d. with
    probabilities (r, 1 - r) splits it into independent NB(r, a) and
    NB(1 - r, a) parts (the Dirichlet-multinomial / Polya-urn split of a
    negative binomial), so the kept sum is exactly NB(r, a). Every step is an
    exact integer draw. Cost: one geometric and about ln(S) + 1 rounds of two
    uniform integers per sample, vectorized over the batch.
    """
    total = geometric_exp(gamma, (m,), rng)
    out = np.zeros(m, dtype=np.int64)
    remaining = total.copy()
    idx = np.flatnonzero(remaining > 0)
    while idx.size:
        length = 1 + rng.integers(remaining[idx], (idx.size,))
        keep = rng.integers(r.denominator, (idx.size,)) < r.numerator
        out[idx] += length * keep
        remaining[idx] -= length
        idx = idx[remaining[idx] > 0]
    return out


def polya(r: RealLike, scale: RealLike, shape: ShapeLike = (),
          rng: RngLike = None) -> np.ndarray:
    """Polya (negative binomial) NB(r, a), a = exp(-1/scale).

    P(k) = Gamma(k+r) / (k! Gamma(r)) (1-a)^r a^k.

    Mean r a / (1 - a). Infinite divisibility (Balle, Bell, Gascon, Nissim,
    "Private summation in the multi-message shuffle model", CCS 2020; Goryczka
    & Xiong 2017): if X_i, Y_i are iid Polya(1/n, a), then
    sum_{i<n} (X_i - Y_i) is exactly discrete Laplace with parameter a.

    Exact for every rational shape r > 0: the integer part of r is a sum of
    exact :func:`geometric_exp` variates (gamma = 1/scale) and the fractional
    part is drawn by :func:`_polya_fraction` (cycle thinning of an exact
    geometric), with integer draws only.
    Cost: r geometrics plus O(log scale) uniform integers per sample.
    """
    rq = as_fraction(r, "r")
    q = as_fraction(scale, "scale")
    shape = _shape(shape)
    rng = _rng(rng)
    m = _size(shape)
    r_int = rq.numerator // rq.denominator
    r_frac = rq - r_int
    out = np.zeros(m, dtype=np.int64)
    if r_int:
        _check_numerator(q, "scale")
        gamma = 1 / q
        chunk = max(1, (1 << 22) // max(m, 1))
        for start in range(0, r_int, chunk):
            c = min(chunk, r_int - start)
            out += geometric_exp(gamma, (c, m), rng).sum(axis=0)
    if r_frac:
        _check_numerator(q, "scale")
        out += _polya_fraction(r_frac, 1 / q, m, rng)
    return out.reshape(shape)


def polya_pmf(k: ArrayLike, r: RealLike, scale: RealLike) -> np.ndarray:
    """P(K = k) of Polya(r, a = exp(-1/scale)) in float64 (for tests)."""
    r = float(r)
    a = math.exp(-1.0 / float(scale))
    k = np.asarray(k, dtype=np.float64)
    logp = (_lgamma(k + r) - _lgamma(k + 1) - math.lgamma(r)
            + r * math.log1p(-a) + k * math.log(a))
    return np.exp(logp)


# -- floating-point baselines (NOT for release) ------------------------------------
def laplace_float(scale: float, shape: ShapeLike = (), rng: RngLike = None) -> np.ndarray:
    """Continuous Laplace(0, scale) in float64 -- a BASELINE ONLY.

    WARNING: floating-point noise is not safe for release: the set of
    reachable doubles leaks the secret value (Mironov, "On significance of
    the least significant bits for differential privacy", CCS 2012). Use
    :func:`discrete_laplace` for anything released. Inverse CDF from
    CSPRNG uniforms.
    """
    b = float(as_fraction(scale, "scale"))
    shape = _shape(shape)
    rng = _rng(rng)
    u = rng.random(shape) - 0.5
    return -b * np.sign(u) * np.log1p(-2.0 * np.abs(u))


def gaussian_float(sigma: float, shape: ShapeLike = (), rng: RngLike = None) -> np.ndarray:
    """Continuous N(0, sigma^2) in float64 -- a BASELINE ONLY.

    WARNING: floating-point noise is not safe for release (Mironov 2012);
    use :func:`discrete_gaussian`. Box-Muller from CSPRNG uniforms.
    """
    sg = float(as_fraction(sigma, "sigma"))
    shape = _shape(shape)
    rng = _rng(rng)
    m = _size(shape)
    u1 = 1.0 - rng.random(m)
    u2 = rng.random(m)
    return (sg * np.sqrt(-2.0 * np.log(u1)) * np.cos(2 * math.pi * u2)).reshape(shape)
