"""Fixed point on secure values (mpc.values.fixedpoint): truncated products, division by public and
secret values, reciprocal, sqrt, exp, sigmoid, abs, mean and var, each against numpy on random
inputs within its stated error."""

import math
from fractions import Fraction

import numpy as np
import pytest

from mpc.session import Session

RNG = np.random.default_rng(40)
ULP14 = 2.0 ** -14


def _s(p=3, **kw):
    return Session(p, seed=11, roles=("dealer",), **kw)


def _input(s, a, bound, frac_bits=14):
    return s.input(a, by=list(range(a.shape[0])), bound=bound, frac_bits=frac_bits)


def test_a_product_of_fixed_point_values_keeps_its_scale():
    # silent case 2: a product's scale was the sum of its factors'; chained products wrapped
    s = _s(bits=64)
    a = RNG.uniform(0, 100, size=(3, 1000))
    x = _input(s, a, 100)
    sq = x * x
    assert sq.frac_bits == 14
    want = np.sum(np.round(a * 2**14) ** 2) / 2**28
    assert abs(s.output(sq.sum()) - want) <= 3000 * ULP14
    b = RNG.uniform(-2, 2, size=(3, 50))
    y = _input(s, b, 2)
    v = np.round(b * 2**14).sum(axis=0) / 2**14
    got = s.output(y.sum(axis=0) * y.sum(axis=0) * y.sum(axis=0) * y.sum(axis=0))
    assert np.max(np.abs(got - v ** 4)) < 300 * ULP14       # 3 roundings, each < 1 ulp x 6^3


def test_the_issues_mean_over_3000_values():
    # silent case 3: 1/3000 was encoded at 14 bits (45.65 instead of 49.86); x / 3 a TypeError
    s = _s()
    a = RNG.uniform(0, 100, size=(3, 1000))
    x = _input(s, a, 100)
    enc = np.round(a * 2**14).sum() / 2**14
    for m in (x.sum() * (1 / 3000), x.sum() / 3000, x.mean()):
        assert m.frac_bits == 14
        assert abs(s.output(m) - enc / 3000) < 16 * ULP14
    third = s.output(x[0] / 3)
    from mpc.values.fixedpoint import plan_public_factor
    _, _, _, err = plan_public_factor(x.bound, Fraction(1, 3), 40)
    assert np.max(np.abs(third - np.round(a[0] * 2**14) / 2**14 / 3)) <= (err + 1) * ULP14


def test_public_floats_are_not_rounded_to_an_integer_scale():
    s = _s(2)
    n = s.input(np.array([[0, 1, 2, 3], [0, 0, 0, 0]]), by=[0, 1], bound=8)
    assert np.array_equal(s.output(n.sum(axis=0) + 0.5), [0.5, 1.5, 2.5, 3.5])
    assert np.array_equal(s.output(n.sum(axis=0) < 0.5), [1, 0, 0, 0])
    assert np.allclose(s.output(n.sum(axis=0) * 0.25), [0, 0.25, 0.5, 0.75])


def test_a_factor_the_ring_cannot_carry_raises_instead_of_losing_it():
    s = _s(2)
    x = s.input(np.array([[1.0], [2.0]]), by=[0, 1], frac_bits=14)     # default bound 2^24
    with pytest.raises(ValueError, match="wider ring"):
        x.sum() * 1e-7
    with pytest.raises(ValueError, match="wider ring"):
        x * x                                        # 2^76 before truncation in Z_2^40
    assert s.output(x.assume_bound(4).sum() * 1e-3) == pytest.approx(3e-3, abs=2 * ULP14)


def test_reciprocal_division_and_sqrt_within_a_few_units_of_the_last_place():
    s = _s(bits=64, frac_bits=16)
    a = RNG.uniform(0.5, 100, size=(3, 60))
    x = _input(s, a, 100, 16).sum(axis=0)            # in [1.5, 300]
    t = np.round(a * 2**16).sum(axis=0) / 2**16
    ulp = 2.0 ** -16
    from mpc.values.fixedpoint import divide
    assert np.max(np.abs(s.output(x.reciprocal(lower=1.5)) - 1 / t)) < 4 * ulp
    assert np.max(np.abs(s.output(x.sqrt()) - np.sqrt(t))) < 4 * ulp
    assert np.max(np.abs(s.output(divide(1, x, lower=1.5)) - 1 / t)) < 4 * ulp
    counts = s.input(np.array([[3, 70, -9]] + [[0, 0, 0]] * 2), by=[0, 1, 2],
                     bound=100).sum(axis=0)
    q = s.output(x[:3] / counts)                    # integer divisors: lower = 1 by default
    assert np.max(np.abs(q - t[:3] / np.array([3, 70, -9]))) < 300 * 4 * ulp
    with pytest.raises(TypeError, match="lower="):
        x / x
    assert s.output(_input(s, np.zeros((3, 2)), 100, 16).sum(axis=0).sqrt()).tolist() == [0, 0]
    s40 = _s()                                           # 40 bits: the domain must be narrower
    y = _input(s40, a[:, :4], 100).sum(axis=0)
    with pytest.raises(ValueError, match="give a larger lower="):
        y.sqrt()
    assert np.max(np.abs(s40.output(y.sqrt(lower=16)) - np.sqrt(t[:4]))) < 8 * ULP14


def test_exp_sigmoid_and_abs_within_their_stated_errors():
    s = _s(bits=64, frac_bits=16)
    a = np.zeros((3, 200))
    a[0] = RNG.uniform(-6, 6, size=200)
    x = _input(s, a, 6, 16).sum(axis=0).assume_bound(6)      # parties 1, 2 gave zeros
    v = np.round(a[0] * 2**16) / 2**16
    ulp = 2.0 ** -16
    k = math.ceil(math.log2(6)) + 1
    ws = math.floor(61 / 2 - 6 * math.log2(math.e))
    rel = 2.0 ** (k - ws) * (8 + 2 + k)              # the docstring's bound
    assert np.max(np.abs(s.output(x.exp()) - np.exp(v)) - rel * np.exp(v)) < 2 * ulp
    assert np.max(np.abs(s.output(x.sigmoid()) - 1 / (1 + np.exp(-v)))) < 8 * ulp
    assert np.array_equal(s.output(abs(x)), np.abs(v))


def test_mean_and_variance_to_one_in_a_million_at_64_bits():
    s = _s(bits=64, frac_bits=20)
    a = RNG.normal(50, 10, size=(3, 1000))
    x = _input(s, a, 200, 20)
    assert abs(s.output(x.mean()) / a.mean() - 1) < 1e-6
    assert abs(s.output(x.var()) / a.var() - 1) < 1e-6
    assert abs(s.output(x.var(ddof=1)) / a.var(ddof=1) - 1) < 1e-6
    cols = s.output(x.var(axis=1))
    assert np.max(np.abs(cols / a.var(axis=1) - 1)) < 1e-6


def test_assume_bound_is_the_callers_proof_and_checked_against_the_ring():
    s = _s(2)
    x = s.input(np.array([[1, 2], [3, 4]]), by=[0, 1])
    assert x.assume_bound(10).bound == 10
    assert x.assume_bound(0.5).bound == 1                # rounded up, never down
    with pytest.raises(ValueError, match="below 2"):
        x.assume_bound(2.0 ** 40)


def test_truncation_masks_come_from_the_preprocessing_provider():
    from mpc.protocols.providers import OTPreprocessing
    s = Session(2, seed=1, preprocessing=OTPreprocessing())
    x = s.input(np.array([[1.5], [2.0]]), by=[0, 1], bound=4, frac_bits=14)
    with pytest.raises(ValueError, match="truncation needs the dealer's masks"):
        x.truncate(4)
