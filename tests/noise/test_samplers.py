import math
from fractions import Fraction

import numpy as np
import pytest
from scipy import stats

from mpc.arith.rng import CSPRNG
from noise import samplers as S

from ._stats import chisq_pvalue

ALPHA = 1e-4  # fixed seeds: deterministic; a failure means a real mismatch


def _dlap_check(x, scale):
    K = int(12 * float(scale)) + 6
    k = np.arange(-K, K + 1)
    return chisq_pvalue(x, k, S.discrete_laplace_pmf(k, scale))


# -- rigorous bounds -------------------------------------------------------------------
@pytest.mark.parametrize("gamma", [Fraction(0), Fraction(1, 3), Fraction(1), Fraction(7, 2),
                                   Fraction(40), Fraction(123456789, 1000), Fraction(0.1)])
def test_exp_neg_bounds_bracket(gamma):
    for prec in (10, 60, 200):
        lo, hi = S.exp_neg_bounds(gamma, prec)
        assert lo <= hi and hi - lo <= Fraction(1, 2 ** prec)
        true = math.exp(-float(gamma))
        assert float(lo) <= true * (1 + 1e-15) + 1e-300 and float(hi) >= true * (1 - 1e-15)


def test_exp_thresholds_exact():
    T = S._exp_thresholds()
    for k in (1, 2, 10, 30, 44):
        lo, _hi = S.exp_neg_bounds(k, 200)
        assert int(T[k - 1]) == (lo.numerator << 64) // lo.denominator
    assert T[44] == 0 and T[43] > 0


def test_lazy_uniform_lt_exp_and_rational(rng):
    # with an empty prefix the comparison is a fresh exact Bernoulli
    g = Fraction(1, 2)
    hits = sum(S._LazyUniform(0, 0, rng).lt_exp(g) for _ in range(4000))
    assert stats.binomtest(hits, 4000, math.exp(-0.5)).pvalue > ALPHA
    q = Fraction(1, 3)
    hits = sum(S._LazyUniform(0, 0, rng).lt_rational(q) for _ in range(4000))
    assert stats.binomtest(hits, 4000, 1 / 3).pvalue > ALPHA
    # a prefix far from the threshold decides without drawing
    u = S._LazyUniform(0, 53, rng)
    assert u.lt_exp(Fraction(1)) and u.nbits == 53


# -- Bernoulli ------------------------------------------------------------------------------
@pytest.mark.parametrize("p", [Fraction(1, 3), Fraction(1, 2), 0.1, Fraction(999, 1000)])
def test_bernoulli(rng, p):
    x = S.bernoulli(p, 200_000, rng)
    assert x.dtype == bool and x.shape == (200_000,)
    assert stats.binomtest(int(x.sum()), x.size, float(p)).pvalue > ALPHA


def test_bernoulli_edges(rng):
    assert not S.bernoulli(0, 1000, rng).any()
    assert S.bernoulli(1, (3, 4), rng).all()


@pytest.mark.parametrize("gamma", [Fraction(0), Fraction(1, 10), Fraction(1), Fraction(5, 2), 4.0])
def test_bernoulli_exp(rng, gamma):
    x = S.bernoulli_exp(gamma, 200_000, rng)
    assert stats.binomtest(int(x.sum()), x.size, math.exp(-float(gamma))).pvalue > ALPHA


# -- geometric ---------------------------------------------------------------------------------
@pytest.mark.parametrize("p", [Fraction(1, 2), Fraction(1, 7), Fraction(1, 1000), 0.9])
def test_geometric(rng, p):
    x = S.geometric(p, 200_000, rng)
    pf = float(p)
    K = int(12 / pf) + 5
    k = np.arange(0, K)
    assert x.min() >= 0
    assert chisq_pvalue(x, k, pf * (1 - pf) ** k) > ALPHA


def test_geometric_slow_path_and_extremes(rng, monkeypatch):
    x = S.geometric(Fraction(2 ** 60 - 1, 2 ** 60), 1000, rng)
    assert x.max() == 0
    y = S.geometric(Fraction(1, 10 ** 9), 20_000, rng)
    assert abs(y.mean() / 1e9 - 1) < 0.05
    monkeypatch.setattr(S, "_GEOM_MARGIN", 0.05)          # force the exact rational path
    z = S.geometric(Fraction(1, 3), 5000, rng)
    k = np.arange(0, 30)
    assert chisq_pvalue(z, k, (1 / 3) * (2 / 3) ** k) > ALPHA


@pytest.mark.parametrize("gamma", [Fraction(1), Fraction(1, 5), Fraction(7, 3)])
def test_geometric_exp(rng, gamma):
    x = S.geometric_exp(gamma, 200_000, rng)
    a = math.exp(-float(gamma))
    k = np.arange(0, int(30 / float(gamma)) + 5)
    assert chisq_pvalue(x, k, (1 - a) * a ** k) > ALPHA


# -- discrete Laplace ------------------------------------------------------------------------
@pytest.mark.parametrize("scale", [1, Fraction(2, 3), 3, Fraction(21, 2), 0.3])
def test_discrete_laplace_gof(rng, scale):
    x = S.discrete_laplace(scale, 300_000, rng)
    assert x.dtype == np.int64
    assert _dlap_check(x, scale) > ALPHA


def test_discrete_laplace_tails(rng):
    # compare the tail probability P(|Z| >= k) with the exact value
    scale = 2
    x = S.discrete_laplace(scale, 1_000_000, rng)
    a = math.exp(-1 / scale)
    for k in (6, 10, 14):
        p = 2 * a ** k / (1 + a)
        assert stats.binomtest(int(np.sum(np.abs(x) >= k)), x.size, p).pvalue > ALPHA


def test_discrete_laplace_large_scale_moments(rng):
    scale = Fraction(16384 * 3, 2)
    x = S.discrete_laplace(scale, 200_000, rng)
    a = math.exp(-1 / float(scale))
    var = 2 * a / (1 - a) ** 2
    assert abs(x.mean()) < 5 * math.sqrt(var / x.size)
    assert abs(x.var() / var - 1) < 0.03
    # P(|Z| >= scale) = 2 a^scale / (1+a)
    p = 2 * a ** math.ceil(scale) / (1 + a)
    assert stats.binomtest(int(np.sum(np.abs(x) >= math.ceil(scale))), x.size, p).pvalue > ALPHA


def test_slow_path_is_exact(rng, monkeypatch):
    """Force most comparisons onto the exact rational path; the law must not change."""
    monkeypatch.setattr(S, "_REL_MARGIN", 0.25)
    x = S.discrete_laplace(Fraction(3, 2), 6000, rng)
    assert _dlap_check(x, Fraction(3, 2)) > ALPHA
    y = S.bernoulli_exp(Fraction(1, 3), 4000, rng)
    assert stats.binomtest(int(y.sum()), y.size, math.exp(-1 / 3)).pvalue > ALPHA


def test_geom_e1_tie_path(rng, monkeypatch):
    """A word equal to a threshold is refined lazily (forced by a fake word source)."""
    T = S._exp_thresholds()

    class Fake:
        def __init__(self):
            self.real = CSPRNG(5)

        def uint64(self, shape=()):
            if shape == ():
                return self.real.uint64()
            w = self.real.uint64(shape)
            w[: min(4, w.size)] = T[[0, 1, 2, 44][: min(4, w.size)]]
            return w

    v = S._geom_e1(10, Fake())
    assert v[0] in (0, 1) and v[1] in (1, 2) and v[2] in (2, 3) and v[3] >= 44


def test_reproducible_with_seed():
    a = S.discrete_laplace(5, 1000, CSPRNG(3))
    b = S.discrete_laplace(5, 1000, CSPRNG(3))
    assert np.array_equal(a, b)
    assert S.discrete_laplace(5, (2, 3), 9).shape == (2, 3)
    assert S.discrete_laplace(5, (), 9).shape == ()


# -- discrete Gaussian ---------------------------------------------------------------------------
@pytest.mark.parametrize("sigma2", [Fraction(1, 4), 1, Fraction(5, 2), 100, 0.7])
def test_discrete_gaussian_gof(rng, sigma2):
    x = S.discrete_gaussian(sigma2, 200_000, rng)
    K = int(8 * math.sqrt(float(sigma2))) + 3
    k = np.arange(-K, K + 1)
    assert chisq_pvalue(x, k, S.discrete_gaussian_pmf(k, sigma2)) > ALPHA


@pytest.mark.slow
def test_discrete_gaussian_tail_large_sigma(rng):
    s2 = 16384 ** 2
    x = S.discrete_gaussian(s2, 1_000_000, rng)
    assert abs(x.std() / 16384 - 1) < 0.005
    p = 2 * stats.norm.sf(3.0)
    assert stats.binomtest(int(np.sum(np.abs(x) > 3 * 16384)), x.size, p).pvalue > ALPHA


# -- binomial --------------------------------------------------------------------------------------
@pytest.mark.parametrize("n,p", [(1, Fraction(1, 2)), (100, Fraction(1, 2)), (130, Fraction(1, 2)),
                                 (40, Fraction(1, 3))])
def test_binomial(rng, n, p):
    x = S.binomial(n, p, 100_000, rng)
    k = np.arange(0, n + 1)
    assert chisq_pvalue(x, k, stats.binom.pmf(k, n, float(p))) > ALPHA


# -- Polya -----------------------------------------------------------------------------------------
@pytest.mark.parametrize("r,scale", [(1, 3), (3, Fraction(5, 2)), (Fraction(1, 2), 4),
                                     (Fraction(1, 10), 20), (Fraction(5, 2), 2),
                                     (Fraction(2, 3), Fraction(7, 2))])
def test_polya_gof(rng, r, scale):
    x = S.polya(r, scale, 200_000, rng)
    a = math.exp(-1 / float(scale))
    k = np.arange(0, int(40 * float(scale)) + 10)
    pmf = stats.nbinom.pmf(k, float(r), 1 - a)
    assert np.allclose(pmf, S.polya_pmf(k, r, scale), rtol=1e-9, atol=1e-300)
    assert chisq_pvalue(x, k, pmf) > ALPHA


@pytest.mark.parametrize("n", [1, 7, 100])
def test_polya_differences_sum_to_discrete_laplace(rng, n):
    scale = 3
    m = 40_000 if n < 100 else 15_000
    x = S.polya(Fraction(1, n), scale, (2, n, m), rng)
    z = (x[0] - x[1]).sum(axis=0)
    assert _dlap_check(z, scale) > ALPHA


@pytest.mark.slow
def test_polya_large_scale_sum(rng):
    # scale in fixed-point units (2^14 / epsilon) with n = 1000 parties
    scale, n, m = 16384, 1000, 400
    x = S.polya(Fraction(1, n), scale, (2, n, m), rng)
    z = (x[0] - x[1]).sum(axis=0)
    a = math.exp(-1 / scale)
    var = 2 * a / (1 - a) ** 2
    assert abs(z.var() / var - 1) < 0.25
    # P(|Z| >= scale) = 2 a^scale/(1+a) ~ 0.368
    p = 2 * a ** scale / (1 + a)
    assert stats.binomtest(int(np.sum(np.abs(z) >= scale)), m, p).pvalue > ALPHA
    big = S.polya(Fraction(1, 3), 50, 200_000, rng)    # long stick-breaking chains
    k = np.arange(0, 2500)
    assert chisq_pvalue(big, k, stats.nbinom.pmf(k, 1 / 3, 1 - math.exp(-1 / 50))) > ALPHA


# -- helpers, baselines, errors --------------------------------------------------------------------
def test_round_scale_up():
    q = Fraction(16384) / Fraction(0.3)
    r = S.round_scale_up(q)
    assert r >= q and r.numerator.bit_length() < 48 and (r - q) / q < Fraction(1, 2 ** 40)
    assert S.round_scale_up(Fraction(7, 3)) == Fraction(7, 3)
    x = S.discrete_laplace(r, 10, CSPRNG(1))
    assert x.shape == (10,)


def test_float_baselines_warn_in_docstring(rng):
    for f in (S.laplace_float, S.gaussian_float):
        assert "not safe for release" in f.__doc__
    assert S.laplace_float(2.0, 10, rng).dtype == np.float64
    assert abs(S.gaussian_float(1.0, 100_000, rng).std() - 1) < 0.02


@pytest.mark.parametrize("call,exc,msg", [
    (lambda: S.discrete_laplace(0, 3, 1), ValueError, "scale must be > 0"),
    (lambda: S.discrete_laplace(-1.5, 3, 1), ValueError, "scale must be > 0"),
    (lambda: S.discrete_laplace(float("nan"), 3, 1), ValueError, "scale must be finite"),
    (lambda: S.discrete_laplace(float("inf"), 3, 1), ValueError, "scale must be finite"),
    (lambda: S.discrete_laplace(True, 3, 1), TypeError, "scale must be a number"),
    (lambda: S.discrete_laplace("2", 3, 1), TypeError, "scale must be a real number"),
    (lambda: S.discrete_laplace(Fraction(2 ** 70, 3), 3, 1), ValueError, "round_scale_up"),
    (lambda: S.discrete_laplace(2, -1, 1), ValueError, "shape"),
    (lambda: S.discrete_laplace(2, 3, 1.5), TypeError, "rng"),
    (lambda: S.discrete_gaussian(0, 3, 1), ValueError, "sigma2 must be > 0"),
    (lambda: S.bernoulli(Fraction(3, 2), 3, 1), ValueError, "p must be in [0, 1]"),
    (lambda: S.bernoulli_exp(-1, 3, 1), ValueError, "gamma must be >= 0"),
    (lambda: S.geometric(0, 3, 1), ValueError, "p must be > 0"),
    (lambda: S.binomial(-1, Fraction(1, 2), 3, 1), ValueError, "n_trials must be >= 0"),
    (lambda: S.binomial(2.5, Fraction(1, 2), 3, 1), TypeError, "n_trials"),
    (lambda: S.polya(0, 2, 3, 1), ValueError, "r must be > 0"),
    (lambda: S.polya(1, -2, 3, 1), ValueError, "scale must be > 0"),
])
def test_errors(call, exc, msg):
    with pytest.raises(exc, match=msg.replace("[", r"\[").replace("]", r"\]")):
        call()
