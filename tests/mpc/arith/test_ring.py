import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mpc.arith.ring import FixedPoint, fixed_point, ring

bits_st = st.integers(1, 64)


@given(bits_st, st.lists(st.integers(-(2**70), 2**70), min_size=1, max_size=20),
       st.lists(st.integers(-(2**70), 2**70), min_size=1, max_size=20))
def test_arithmetic_matches_python_ints(bits, xs, ys):
    r = ring(bits)
    m = 1 << bits
    k = min(len(xs), len(ys))
    xs, ys = xs[:k], ys[:k]
    a = r.element(np.array(xs, dtype=object))
    b = r.element(np.array(ys, dtype=object))
    assert [int(v) for v in r.add(a, b)] == [(x + y) % m for x, y in zip(xs, ys)]
    assert [int(v) for v in r.sub(a, b)] == [(x - y) % m for x, y in zip(xs, ys)]
    assert [int(v) for v in r.mul(a, b)] == [(x * y) % m for x, y in zip(xs, ys)]
    assert [int(v) for v in r.neg(a)] == [(-x) % m for x in xs]
    assert int(r.sum(a)) == sum(xs) % m
    assert [int(v) for v in r.smul(-3, a)] == [(-3 * x) % m for x in xs]
    assert list(r.lt(a, b)) == [x % m < y % m for x, y in zip(xs, ys)]


@given(bits_st, st.data())
def test_signed_view_round_trip(bits, data):
    r = ring(bits)
    lo, hi = -(1 << (bits - 1)), (1 << (bits - 1)) - 1
    vals = data.draw(st.lists(st.integers(lo, hi), min_size=1, max_size=20))
    enc = r.from_signed(np.array(vals, dtype=np.int64))
    assert list(r.to_signed(enc)) == vals
    assert list(r.signed_lt(enc[:-1], enc[1:])) == [a < b for a, b in itertools.pairwise(vals)]


@pytest.mark.parametrize("bits", [1, 8, 40, 63, 64])
def test_signed_range_errors(bits):
    r = ring(bits)
    with pytest.raises(ValueError, match="out of range"):
        r.from_signed(np.array([1 << (bits - 1)], dtype=object))
    with pytest.raises(ValueError, match="out of range"):
        r.from_signed(np.array([-(1 << (bits - 1)) - 1], dtype=object))


@settings(max_examples=200)
@given(st.integers(2, 64), st.data())
def test_fixed_point_round_trip(bits, data):
    c = data.draw(st.integers(0, bits - 1))
    fp = FixedPoint(ring(bits), c)
    v = data.draw(st.floats(fp.min_value, min(fp.max_value, 2.0**52 / fp.scale),
                            allow_nan=False, allow_infinity=False))
    out = fp.decode(fp.encode(v))
    assert abs(float(out) - v) <= 0.5 / fp.scale + abs(v) * 2**-52


def test_fixed_point_defaults_and_exact_values():
    fp = fixed_point()
    assert fp.ring.bits == 40 and fp.frac_bits == 14
    vals = np.array([0.0, 1.0, -1.0, 0.5, -2.25, 1 / 16384])
    assert np.array_equal(fp.decode(fp.encode(vals)), vals)


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_fixed_point_rejects_non_finite(bad):
    with pytest.raises(ValueError, match="finite"):
        fixed_point().encode([1.0, bad])


@given(st.integers(2, 64), st.data())
def test_fixed_point_range_error_states_range(bits, data):
    c = data.draw(st.integers(0, bits - 1))
    fp = FixedPoint(ring(bits), c)
    too_big = (1 << (bits - 1)) / fp.scale * 1.01 + 1
    with pytest.raises(ValueError, match=r"out of fixed-point range \["):
        fp.encode(too_big)
    with pytest.raises(ValueError, match="out of fixed-point range"):
        fp.encode(-too_big)


def test_fixed_point_extremes_exact():
    fp = FixedPoint(ring(64), 0)
    enc = fp.encode([-(2.0**63)])
    assert int(ring(64).to_signed(enc)[0]) == -(2**63)
    with pytest.raises(ValueError):
        fp.encode([2.0**63])


@pytest.mark.parametrize("bad", [0, 65, -1])
def test_bad_bits(bad):
    with pytest.raises(ValueError, match=r"bits must be in 1..64"):
        ring(bad)


def test_bad_types():
    with pytest.raises(TypeError, match="bits"):
        ring(8.0)
    with pytest.raises(TypeError, match="integers"):
        ring(8).element(np.array([1.5]))
    with pytest.raises(ValueError, match="frac_bits"):
        FixedPoint(ring(8), 8)
    with pytest.raises(TypeError, match="scalar"):
        ring(8).smul(1.5, np.zeros(1, np.uint64))


def test_ring_cached():
    assert ring(17) is ring(17)
    assert ring(64).mask == np.uint64(2**64 - 1)
