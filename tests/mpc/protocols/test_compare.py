import math

import numpy as np
import pytest
from scipy import stats

from mpc.arith.sharing import additive_reconstruct, additive_share
from mpc.protocols import compare
from mpc.session import Session


def _share(s, signed_values, p):
    return additive_share(s.ring, s.ring.from_signed(np.asarray(signed_values, np.int64)), p, s.rng)


def _open(s, sh):
    return s.ring.to_signed(additive_reconstruct(s.ring, sh))


@pytest.mark.parametrize("l", [2, 3, 4, 6])
@pytest.mark.parametrize("p", [2, 3, 4])
def test_exhaustive_small_rings(l, p):
    s = Session(p, bits=l, frac_bits=0, seed=l * 10 + p)
    h = np.arange(p)
    lo, hi = -(1 << (l - 1)), (1 << (l - 1))
    v = np.arange(lo, hi)
    x = _share(s, v, p)
    assert np.array_equal(_open(s, compare.ltz(s, x, h)), (v < 0).astype(int))
    assert np.array_equal(_open(s, compare.eqz(s, x, h)), (v == 0).astype(int))
    # every pair (a, b) with |a - b| < 2^(l-1)
    a, b = np.meshgrid(v, v)
    a, b = a.ravel(), b.ravel()
    ok = np.abs(a - b) < (1 << (l - 1))
    a, b = a[ok], b[ok]
    xa, xb = _share(s, a, p), _share(s, b, p)
    assert np.array_equal(_open(s, compare.less_than(s, xa, xb, h)), (a < b).astype(int))
    assert np.array_equal(_open(s, compare.greater_than(s, xa, xb, h)), (a > b).astype(int))
    assert np.array_equal(_open(s, compare.equal(s, xa, xb, h)), (a == b).astype(int))
    w = v[v > lo]                                    # sign/abs exclude -2^(l-1)
    xw = _share(s, w, p)
    assert np.array_equal(_open(s, compare.sign(s, xw, h)), np.sign(w))
    assert np.array_equal(_open(s, compare.abs_value(s, xw, h)), np.abs(w))


@pytest.mark.parametrize("l", [40, 64])
def test_random_and_adversarial_large_rings(l):
    p = 3
    s = Session(p, bits=l, frac_bits=0, seed=l)
    lim = 1 << (l - 2)
    rnd = s.ring.to_signed(s.rng.ring_elements(s.ring, 2000)) // 2
    edge = np.array([0, 1, -1, lim - 1, -lim, 2, -2], dtype=np.int64)
    v = np.concatenate([rnd, edge])
    u = np.concatenate([s.ring.to_signed(s.rng.ring_elements(s.ring, 2000)) // 2,
                        np.array([0, 0, 0, lim - 1, -lim, -2, 2], dtype=np.int64)])
    h = np.arange(p)
    xv, xu = _share(s, v, p), _share(s, u, p)
    assert np.array_equal(_open(s, compare.less_than(s, xv, xu, h)), (v < u).astype(int))
    assert np.array_equal(_open(s, compare.equal(s, xv, xv, h)), np.ones(v.size, int))
    assert np.array_equal(_open(s, compare.equal(s, xv, xu, h)), (v == u).astype(int))
    assert np.array_equal(_open(s, compare.sign(s, xv, h)), np.sign(v))
    iv = compare.in_interval(s, xv, -5, 7, h)
    assert np.array_equal(_open(s, iv), ((v >= -5) & (v <= 7)).astype(int))


def test_per_instance_holders():
    s = Session(7, bits=40, frac_bits=0, seed=3)
    holders = np.array([[0, 1, 2], [3, 4, 5], [6, 0, 3], [1, 5, 6]]).T     # (3, 4)
    v = np.array([-3, 0, 5, -1])
    x = _share(s, v, 3)
    assert np.array_equal(_open(s, compare.sign(s, x, holders)), np.sign(v))
    assert np.array_equal(_open(s, compare.eqz(s, x, holders)), (v == 0).astype(int))


@pytest.mark.parametrize("p", [2, 3, 5])
def test_exact_online_cost(p):
    l, m = 40, 100
    s = Session(p, bits=l, frac_bits=0, seed=p)
    h = np.arange(p)
    x = _share(s, np.arange(m) - 50, p)
    with s.net.phase("ltz"):
        compare.ltz(s, x, h)
    with s.net.phase("eqz"):
        compare.eqz(s, x, h)
    rep = s.net.report()["phases"]
    ands_lt = 2 * (l - 2) - 1       # the last tree level needs only the generate
    ands_eq = l - 1
    assert rep["ltz"]["online"]["rounds"] == math.ceil(math.log2(l - 1)) + 2
    assert rep["eqz"]["online"]["rounds"] == math.ceil(math.log2(l)) + 2
    assert rep["ltz"]["online"]["bits"] == m * p * (p - 1) * (l + 2 * ands_lt + 1)
    assert rep["eqz"]["online"]["bits"] == m * p * (p - 1) * (l + 2 * ands_eq + 1)
    # offline: masks (l arithmetic + l XOR bits), 3 bits per AND triple, daBit (1 + l)
    assert rep["ltz"]["offline"]["bits"] == m * p * (2 * l + 3 * ands_lt + 1 + l)


def test_coalition_view_independent_of_input():
    """Holders 1 and 2 collude against holder 0: their view is the same for x = 0 and x = 2^38."""
    m, p = 3000, 3
    views = []
    for secret in (0, 1 << 38):
        s = Session(p, bits=40, frac_bits=0, seed=secret % 89 + 1, record_views=True)
        x = _share(s, np.full(m, secret), p)
        compare.ltz(s, x, np.arange(p))
        got = [np.asarray(r.payload).ravel() for q in (1, 2) for r in s.net.view(q)
               if r.sender == 0 and not r.offline and np.asarray(r.payload).dtype == np.uint64]
        views.append(np.concatenate(got))
    top = np.uint64(36)
    c0 = np.bincount((views[0] >> top).astype(np.int64), minlength=16)
    c1 = np.bincount((views[1] >> top).astype(np.int64), minlength=16)
    assert stats.chi2_contingency(np.stack([c0, c1]))[1] > 1e-3


def test_errors():
    s = Session(3, bits=40, seed=1)
    with pytest.raises(TypeError, match="uint64"):
        compare.ltz(s, np.zeros((3, 2)), np.arange(3))
    with pytest.raises(ValueError, match="lo <= hi"):
        compare.in_interval(s, np.zeros((3, 2), np.uint64), 5, 1, np.arange(3))
    with pytest.raises(ValueError, match="at least 2 bits"):
        t = Session(2, bits=1, frac_bits=0, seed=1)
        compare.ltz(t, np.zeros((2, 2), np.uint64), np.arange(2))


def _all_intervals(l):
    v = np.arange(-(1 << (l - 1)), 1 << (l - 1))
    lo, hi = np.meshgrid(v, v, indexing="ij")
    keep = lo <= hi
    return v, lo[keep], hi[keep]


@pytest.mark.parametrize("l,p", [(3, 2), (4, 3), (5, 3), (5, 2)])
def test_in_interval_exhaustive_against_fss_gate(l, p):
    """Every x and every public lo <= hi of the signed range (16,896 cases at l = 5)."""
    from fss import gates

    s = Session(p, bits=l, frac_bits=0, seed=100 * l + p)
    v, lo, hi = _all_intervals(l)
    x = np.tile(v, lo.size)
    LO, HI = np.repeat(lo, v.size), np.repeat(hi, v.size)
    xs = _share(s, x, p)
    h = np.arange(p)
    got = _open(s, compare.in_interval(s, xs, LO, HI, h))
    fss_gate = _open(s, gates.in_interval(s, xs, LO, HI, h))
    want = ((x >= LO) & (x <= HI)).astype(int)
    assert np.array_equal(fss_gate, want)
    assert np.array_equal(got, want)


def test_in_interval_review_case_and_scalar_bounds():
    """[-2^39 <= a <= 0.5] on a = 0, 0.25, ..., 1 (fixed point, l = 40) is 1, 1, 1, 0, 0."""
    s = Session(3, bits=40, frac_bits=14, seed=9)
    a = s.fp.encode(np.array([0.0, 0.25, 0.5, 0.75, 1.0]))
    x = additive_share(s.ring, a, 3, s.rng)
    out = _open(s, compare.in_interval(s, x, -(1 << 39), int(s.fp.encode(0.5)), np.arange(3)))
    assert out.tolist() == [1, 1, 1, 0, 0]
    full = _open(s, compare.in_interval(s, x, -(1 << 39), (1 << 39) - 1, np.arange(3)))
    assert full.tolist() == [1] * 5


def test_sign_and_abs_domain_is_documented():
    """sign(-2^(l-1)) is 0 and |-2^(l-1)| wraps: the documented domain excludes it."""
    s = Session(3, bits=6, frac_bits=0, seed=2)
    x = _share(s, [-32], 3)
    assert _open(s, compare.sign(s, x, np.arange(3))).tolist() == [0]
    assert _open(s, compare.abs_value(s, x, np.arange(3))).tolist() == [-32]
    for f in (compare.sign, compare.abs_value):
        assert "-2^(l-1)" in f.__doc__


@pytest.mark.parametrize("p", [2, 3])
def test_in_interval_online_cost(p):
    l, m = 40, 50
    s = Session(p, bits=l, frac_bits=0, seed=p)
    x = _share(s, np.arange(m) - 25, p)
    with s.net.phase("iv"):
        compare.in_interval(s, x, -3, 7, np.arange(p))
    rep = s.net.report()["phases"]["iv"]["online"]
    ands = 2 * (2 * (l - 1) - 1)
    assert rep["rounds"] == math.ceil(math.log2(l)) + 2
    assert rep["bits"] == m * p * (p - 1) * (l + 2 * ands + 2)


def test_in_interval_bound_errors():
    s = Session(3, bits=8, frac_bits=0, seed=1)
    x = np.zeros((3, 4), np.uint64)
    with pytest.raises(ValueError, match=r"lo must be a signed value in \[-128, 127\]"):
        compare.in_interval(s, x, -129, 1, np.arange(3))
    with pytest.raises(TypeError, match="hi must be an integer"):
        compare.in_interval(s, x, 0, 1.5, np.arange(3))
    with pytest.raises(ValueError, match="does not broadcast"):
        compare.in_interval(s, x, np.zeros(3, int), 1, np.arange(3))
