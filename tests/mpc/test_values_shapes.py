"""Issue 40, silent cases 1 and 2: secure values broadcast as numpy arrays of their data shape
(never against the share axis), and output refuses a value whose tracked bound leaves the ring."""

import itertools
import re

import numpy as np
import pytest

from mpc.session import Session
from mpc.values import where

SHAPES = [(), (1,), (1, 1), (4,), (1, 4), (3, 1), (3, 4), (2, 3, 4)]

def _broadcastable(a, b):
    try:
        np.broadcast_shapes(a, b)
        return True
    except ValueError:
        return False


GRID = [(a, b) for a, b in itertools.product(SHAPES, SHAPES) if _broadcastable(a, b)]
BAD = [((4,), (3,)), ((3, 4), (4, 3)), ((2, 3, 4), (3, 1, 1))]


def _inp(s, rng, shape, p):
    """A secret of data shape ``shape`` input by party 0, held by all ``p`` parties."""
    v = rng.integers(-50, 50, size=shape)
    return s.input(v[None], by=[0], holders=list(range(p)), bound=100)[0], v


@pytest.mark.parametrize("p", [2, 3])
def test_secure_secure_ops_broadcast_as_numpy(p):
    """+, -, *, comparisons and where on every broadcastable pair of a grid of shapes."""
    rng = np.random.default_rng(p)
    s = Session(p, seed=p)
    for sa, sb in GRID:
        x, xv = _inp(s, rng, sa, p)
        y, yv = _inp(s, rng, sb, p)
        want = np.broadcast_shapes(sa, sb)
        results = [x + y, x - y, x * y, x < y, x >= y, x == y, where(x < y, x, y)]
        expect = [xv + yv, xv - yv, xv * yv, xv < yv, xv >= yv, xv == yv,
                  np.where(xv < yv, xv, yv)]
        for r, e in zip(results, expect):
            assert r.shape == want, (sa, sb)
            assert r.shares.shape == (p,) + want
            np.testing.assert_array_equal(s.output(r), e.astype(np.int64))


def test_secure_and_public_operands_broadcast_as_numpy():
    rng = np.random.default_rng(7)
    s = Session(2, seed=3)
    for sa, sb in GRID:
        x, xv = _inp(s, rng, sa, 2)
        c = rng.integers(-50, 50, size=sb)
        want = np.broadcast_shapes(sa, sb)
        for r, e in [(x + c, xv + c), (c - x, c - xv), (x * c, xv * c), (x < c, xv < c),
                     (c <= x, c <= xv), (where(x > c, x, c), np.where(xv > c, xv, c))]:
            assert r.shape == want, (sa, sb)
            np.testing.assert_array_equal(s.output(r), e.astype(np.int64))


def test_the_issues_two_cases():
    """A (100,) value against a (1, 1) threshold counts as numpy does; scalar + (2,) vector."""
    s = Session(2, seed=5)
    data = np.random.default_rng(0).normal(0.2, 1.0, size=100)
    x = s.input(data[None], by=[0], holders=[0, 1], bound=10, frac_bits=10)[0]
    t = s.input(np.zeros((1, 1, 1)), by=[1], holders=[0, 1], bound=10, frac_bits=10)[0]
    c = x > t
    assert c.shape == (1, 100)
    assert s.output(c.sum()) == int(np.sum(data.reshape(1, 100) > np.zeros((1, 1))))
    a = s.input(np.array([5]), by=[0], holders=[0, 1], bound=100)[0]          # a scalar
    v = s.input(np.array([10, 20]), by=[0, 1], bound=100)                      # (2,)
    np.testing.assert_array_equal(s.output(a + v), [15, 25])
    np.testing.assert_array_equal(s.output(v + a), [15, 25])


def test_a_shape_mismatch_names_the_data_shapes():
    rng = np.random.default_rng(1)
    s = Session(2, seed=1)
    for sa, sb in BAD:
        x, _ = _inp(s, rng, sa, 2)
        y, _ = _inp(s, rng, sb, 2)
        for op in (lambda: x + y, lambda: x * y, lambda: x < y, lambda: x + np.zeros(sb)):
            with pytest.raises(ValueError, match=rf"data shapes {re.escape(str(sa))} and "
                                                 rf"{re.escape(str(sb))}"):
                op()


def test_output_refuses_a_value_that_may_have_wrapped():
    """(x * x).sum() of integers and a scaled fixed-point sum in the 40-bit ring: the tracked
    bound needs more bits than the ring has, so output raises instead of printing a wrap."""
    s = Session(2, seed=2)
    ints = np.random.default_rng(2).integers(20000, 30000, size=(2, 1000))
    x = s.input(ints, by=[0, 1], bound=30000)                             # data shape (2, 1000)
    vals = np.random.default_rng(3).uniform(0, 100, size=(2, 1000))
    f = s.input(vals, by=[0, 1], bound=100, frac_bits=14)
    for y in ((x * x).sum(), f.sum() * 2 ** 16):
        with pytest.raises(ValueError, match=r"bound needs \d+ bits.*Z_2\^40") as e:
            s.output(y)
        assert "\n" not in str(e.value)
    ok = s.output(f.sum())                               # in range: opens as before
    assert abs(ok[()] - vals.sum()) < 2000 * 2 ** -14
