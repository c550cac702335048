"""Array operations on secure values (mpc.values.arrays): constants, concatenate/stack, item
assignment, secret indexing, Batcher's sort and argsort, shuffle, numpy's protocols."""

import itertools

import numpy as np
import pytest

from fss import FSSGates
from mpc.session import Session
from mpc.values import SecureArray, constant, where

RNG = np.random.default_rng(41)


def _s(p=2, **kw):
    return Session(p, seed=5, roles=("dealer",), **kw)


def _vec(s, v, bound, frac_bits=0):
    rows = np.zeros((s.n_parties,) + np.shape(v), dtype=np.asarray(v).dtype)
    rows[0] = v
    return s.input(rows, by=list(range(s.n_parties)), bound=bound,
                   frac_bits=frac_bits).sum(axis=0).assume_bound(bound)


def test_the_network_sorts_every_zero_one_input_and_random_permutations():
    from mpc.values.arrays import batcher_layers
    for n in range(1, 11):                              # the 0-1 principle: exhaustive
        bits = np.array(list(itertools.product([0, 1], repeat=n)), dtype=np.int64).T
        for lo, hi in batcher_layers(n):
            a, b = bits[lo].copy(), bits[hi].copy()
            bits[lo], bits[hi] = np.minimum(a, b), np.maximum(a, b)
        assert np.all(np.diff(bits, axis=0) >= 0), n
    for n in (33, 100, 257):
        v = RNG.permutation(n)
        layers = batcher_layers(n)
        for lo, hi in layers:
            a, b = v[lo].copy(), v[hi].copy()
            v[lo], v[hi] = np.minimum(a, b), np.maximum(a, b)
        assert np.array_equal(v, np.arange(n))
        k = (n - 1).bit_length()
        assert len(layers) <= k * (k + 1) // 2


@pytest.mark.parametrize("p", [2, 3])
def test_sort_and_argsort_match_numpy_with_ties_and_fixed_point(p):
    s = _s(p)
    v = RNG.integers(-20, 20, size=37)                 # ties certain
    x = _vec(s, v, 20)
    y = x.sort()
    assert np.array_equal(s.output(y), np.sort(v)) and y.bound == x.bound
    idx = s.output(x.argsort())
    assert np.array_equal(v[idx], np.sort(v)) and sorted(idx.tolist()) == list(range(37))
    f = RNG.uniform(-3, 3, size=(5, 4))
    z = _vec(s, f, 3, 14)
    got = s.output(z.sort(axis=0))
    assert np.array_equal(got, np.sort(np.round(f * 2**14) / 2**14, axis=0))


def test_a_sort_counts_one_comparison_and_one_product_round_per_layer():
    from mpc.values.arrays import batcher_layers
    s = _s(2, comparisons=FSSGates())
    x = _vec(s, RNG.integers(0, 100, size=20), 100)
    r0 = s.costs().online["rounds"]
    _ = x[:1] < x[1:2]                                   # one comparison alone
    one = s.costs().online["rounds"] - r0
    r1 = s.costs().online["rounds"]
    x.sort()
    assert s.costs().online["rounds"] - r1 == len(batcher_layers(20)) * (one + 1)


def test_bounds_do_not_grow_in_a_sort_or_a_hand_written_compare_exchange():
    s = _s(2)
    big = 2 ** 37                                        # |a - b| < 2^39 still comparable
    v = RNG.integers(-big, big, size=16)
    x = _vec(s, v, big)
    assert np.array_equal(s.output(x.sort()), np.sort(v))
    a, b = x[:8], x[8:]
    for _ in range(6):                                    # the hand-written layers
        c = a < b
        a, b = where(c, a, b), where(c, b, a)
        assert a.bound == big and b.bound == big
    assert np.array_equal(s.output(a), np.minimum(v[:8], v[8:]))


def test_shuffle_is_a_uniform_secret_permutation():
    s = _s(2)
    n, m = 3, 1200
    x = _vec(s, np.broadcast_to(np.arange(n)[:, None], (n, m)).copy(), 4)
    got = s.output(x.shuffle(axis=0))
    assert np.array_equal(np.sort(got, axis=0), np.broadcast_to(np.arange(n)[:, None], (n, m)))
    codes = got[0] * 3 + got[1]
    counts = np.array([np.sum(codes == c) for c in np.unique(codes)])
    assert counts.size == 6
    chi2 = np.sum((counts - m / 6) ** 2 / (m / 6))
    assert chi2 < 20.5                                    # df 5, p = 0.001


def test_secret_indexing_concatenate_stack_and_item_assignment():
    s = _s(3)
    v = RNG.integers(-50, 50, size=12)
    x = _vec(s, v, 50)
    i = _vec(s, np.array([[0, 11], [5, 12]]), 16)
    assert np.array_equal(s.output(x.take(i)), [[v[0], v[11]], [v[5], 0]])
    f = _vec(s, np.array([0.5, -1.25]), 2, 8)
    cat = np.concatenate([x[:2], f])                     # numpy's function, secure result
    assert isinstance(cat, SecureArray) and cat.frac_bits == 8
    assert np.array_equal(s.output(cat), [v[0], v[1], 0.5, -1.25])
    st = np.stack([x[:2], x[2:4]], axis=1)
    assert st.shape == (2, 2) and np.array_equal(s.output(st), np.stack([v[:2], v[2:4]], 1))
    y = x[:4]
    y[1] = 7
    y[2:4] = x[10:12]
    y[0] = 0.5                                           # a float widens the integer value
    assert y.frac_bits == s.fp.frac_bits
    assert np.array_equal(s.output(y), [0.5, 7, v[10], v[11]])
    assert np.array_equal(s.output(x[:4]), v[:4])        # the source is untouched
    c = constant(s, [1.5, 2.0], holders=[0, 1, 2])
    assert c.frac_bits == s.fp.frac_bits and np.array_equal(s.output(c + f), [2.0, 0.75])


def test_numpy_functions_work_or_raise_never_an_object_array():
    s = _s(2)
    v = RNG.integers(-9, 9, size=6)
    x = _vec(s, v, 9)
    assert s.output(np.sum(x)) == v.sum()
    assert np.array_equal(s.output(np.where(x > 0, x, 0)), np.where(v > 0, v, 0))
    assert np.array_equal(s.output(np.abs(x)), np.abs(v))
    assert np.array_equal(s.output(np.add(1, x)), v + 1)
    assert np.array_equal(s.output(np.array(2) < x), v > 2)
    assert np.array_equal(s.output(np.sort(x)), np.sort(v))
    with pytest.raises(TypeError, match=r"mpc\.values\.arrays\.sort"):
        np.median(x)
    with pytest.raises(TypeError, match=r"x\.max"):
        np.max(x)
    with pytest.raises(TypeError, match=r"numpy\.log"):
        np.log(x)
    with pytest.raises(TypeError, match=r"session\.output"):
        np.asarray([x, x])


def test_a_comparison_out_of_range_advises_assume_bound():
    s = _s(2)
    x = _vec(s, np.arange(4), 2**30)
    y = x * 2**9                                          # tracked 2^39: no longer comparable
    with pytest.raises(ValueError, match="assume_bound"):
        _ = y < 0
    assert np.array_equal(s.output(y.assume_bound(2**12) < 1000), [1, 1, 0, 0])
