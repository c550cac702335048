import math
from fractions import Fraction

import pytest

from noise import accounting as A


def test_laplace_and_discrete_scale():
    assert A.laplace_scale(2.0, 0.5) == 4.0
    t = A.discrete_laplace_scale(1.0, 0.3)
    assert isinstance(t, Fraction) and t >= Fraction(1) / Fraction(0.3)
    assert A.discrete_laplace_epsilon(1.0, t) <= 0.3
    assert A.discrete_laplace_scale(3, 2) == Fraction(3, 2)


def test_gaussian_sigma_classic_and_analytic():
    s = A.gaussian_sigma(1.0, 0.5, 1e-5, method="classic")
    assert s == pytest.approx(math.sqrt(2 * math.log(1.25e5)) / 0.5)
    sa = A.gaussian_sigma(1.0, 0.5, 1e-5)
    assert sa < s                       # analytic is tighter
    assert A.gaussian_delta(1.0, sa, 0.5) <= 1e-5
    assert A.gaussian_delta(1.0, sa * (1 - 1e-6), 0.5) > 1e-5
    # analytic works for epsilon >= 1
    assert A.gaussian_delta(2.0, A.gaussian_sigma(2.0, 3.0, 1e-6), 3.0) <= 1e-6


def test_zcdp_and_discrete_gaussian():
    assert A.zcdp_to_dp(0.5, 1e-6) == pytest.approx(0.5 + 2 * math.sqrt(0.5 * math.log(1e6)))
    assert A.discrete_gaussian_epsilon(1, 100, 1e-6) == pytest.approx(A.zcdp_to_dp(0.005, 1e-6))
    # the distributed bound is never worse than one party's noise and approaches rho of the total
    rho = A.distributed_discrete_gaussian_rho(1.0, 25.0, 4)
    assert rho <= 1 / 50
    assert rho == pytest.approx(1 / (2 * 100), rel=1e-6)   # tau negligible at sigma2 = 25
    assert A.distributed_discrete_gaussian_rho(1.0, 0.01, 10) == pytest.approx(1 / 0.02)


def test_binomial_delta_decreases_with_coins():
    d1 = A.binomial_mechanism_delta(100, 1, 1.0)
    d2 = A.binomial_mechanism_delta(10_000, 1, 1.0)
    assert 0 <= d2 < d1 < 1
    assert A.binomial_mechanism_delta(3, 5, 1.0) == 1.0


def test_composition():
    assert A.basic_composition([(0.5, 1e-6), (0.25, 0)]) == (0.75, 1e-6)
    e, d = A.advanced_composition(0.1, 1e-7, 100, 1e-6)
    assert e == pytest.approx(math.sqrt(200 * math.log(1e6)) * 0.1 + 100 * 0.1 * math.expm1(0.1))
    assert d == pytest.approx(100 * 1e-7 + 1e-6)
    assert e < 100 * 0.1


def test_budget_spends_and_refuses_overspend():
    b = A.PrivacyBudget(1.0, 1e-6)
    for _ in range(10):
        b.spend(0.1, label="q")        # 10 x 0.1 must fit exactly despite float rounding
    assert b.remaining[0] == pytest.approx(0.0, abs=1e-15)
    with pytest.raises(ValueError, match="overspend"):
        b.spend(1e-9)
    assert len(b.ledger) == 10
    b2 = A.PrivacyBudget(1.0, 1e-6)
    b2.spend(A.MechanismAccount("discrete_laplace", 4.0, 1.0, 0.5))
    with pytest.raises(ValueError, match="overspend"):
        b2.spend(0.25, 2e-6)
    assert b2.spent == (0.5, 0.0) and b2.can_spend(0.5) and not b2.can_spend(0.6)


@pytest.mark.parametrize("call,exc,msg", [
    (lambda: A.laplace_scale(1, 0), ValueError, "epsilon must be finite and > 0"),
    (lambda: A.laplace_scale(1, -1), ValueError, "epsilon must be finite and > 0"),
    (lambda: A.laplace_scale(1, math.inf), ValueError, "epsilon must be finite"),
    (lambda: A.laplace_scale(1, math.nan), ValueError, "epsilon must be finite"),
    (lambda: A.laplace_scale(0, 1), ValueError, "sensitivity must be finite and > 0"),
    (lambda: A.laplace_scale(-2, 1), ValueError, "sensitivity"),
    (lambda: A.laplace_scale("1", 1), TypeError, "sensitivity must be a real number"),
    (lambda: A.gaussian_sigma(1, 1, 0), ValueError, r"delta must be in \(0, 1\)"),
    (lambda: A.gaussian_sigma(1, 1, 1), ValueError, r"delta must be in \(0, 1\)"),
    (lambda: A.gaussian_sigma(1, 1, 1e-5, method="classic"), ValueError, "epsilon must be < 1"),
    (lambda: A.gaussian_sigma(1, 0.5, 1e-5, method="x"), ValueError, "method"),
    (lambda: A.advanced_composition(0.1, 0, 0, 1e-6), ValueError, "k must be >= 1"),
    (lambda: A.check_n(0), ValueError, "n must be >= 1"),
    (lambda: A.check_n(2.0), TypeError, "n must be an integer"),
    (lambda: A.basic_composition([]), ValueError, "at least one"),
    (lambda: A.PrivacyBudget(0), ValueError, "epsilon"),
    (lambda: A.PrivacyBudget(1, 1.5), ValueError, "delta"),
    (lambda: A.PrivacyBudget(1).spend(-0.1), ValueError, "epsilon"),
])
def test_errors(call, exc, msg):
    with pytest.raises(exc, match=msg):
        call()
