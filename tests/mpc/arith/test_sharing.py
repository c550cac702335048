import itertools

import numpy as np
import pytest
from scipy import stats

from mpc.arith.field import prime_field
from mpc.arith.ring import ring
from mpc.arith.rng import CSPRNG
from mpc.arith.sharing import (
    additive_reconstruct,
    additive_share,
    rerandomize,
    shamir_reconstruct,
    shamir_share,
    xor_reconstruct,
    xor_share,
    zero_sharing,
)


@pytest.mark.parametrize("bits", [1, 7, 40, 64])
@pytest.mark.parametrize("n", [1, 2, 3, 5, 16])
def test_additive_every_subset_size(rng, bits, n):
    r = ring(bits)
    secrets = rng.ring_elements(r, (7, 3))
    sh = additive_share(r, secrets, n, rng)
    assert sh.shape == (n, 7, 3) and sh.dtype == np.uint64
    assert np.array_equal(additive_reconstruct(r, sh), secrets)
    assert np.all(sh <= r.mask)
    assert np.array_equal(additive_reconstruct(r, rerandomize(r, sh, rng)), secrets)
    assert np.all(additive_reconstruct(r, zero_sharing(r, n, (4,), rng)) == 0)


def test_additive_subset_sharings_coexist(rng):
    # the same secret shared over two party subsets; mixing shares of different
    # sharings adds secrets (U-MPC aggregation relies on this)
    r = ring(40)
    a = additive_share(r, np.uint64(5), 2, rng)   # parties {0, 1}
    b = additive_share(r, np.uint64(9), 3, rng)   # parties {1, 2, 3}
    per_party = np.zeros(4, np.uint64)
    per_party[[0, 1]] = r.add(per_party[[0, 1]], a)
    per_party[[1, 2, 3]] = r.add(per_party[[1, 2, 3]], b)
    assert int(r.sum(per_party)) == 14


def test_additive_shares_indistinguishable(rng):
    # party 0's share of secret 0 and of secret 2^39 have the same (uniform) law
    r = ring(40)
    s0 = additive_share(r, np.zeros(20_000, np.uint64), 2, rng)[0]
    s1 = additive_share(r, np.full(20_000, 1 << 39, np.uint64), 2, rng)[0]
    bins = np.uint64(36)
    c0 = np.bincount(s0 >> bins, minlength=16)
    c1 = np.bincount(s1 >> bins, minlength=16)
    assert stats.chi2_contingency(np.stack([c0, c1]))[1] > 1e-3
    assert stats.chisquare(c0).pvalue > 1e-3 and stats.chisquare(c1).pvalue > 1e-3


def test_xor_sharing(rng):
    bits = rng.bits((100,))
    for n in (1, 2, 5):
        sh = xor_share(bits, n, rng)
        assert np.array_equal(xor_reconstruct(sh), bits)
    with pytest.raises(ValueError, match="0/1"):
        xor_share(np.array([2]), 2, rng)


@pytest.mark.parametrize("t,n", [(1, 1), (1, 3), (2, 3), (3, 5), (5, 5), (4, 7)])
def test_shamir_any_t_shares_reconstruct(rng, t, n):
    GF = prime_field()
    secrets = rng.integers(GF.characteristic, (6,))
    sh = shamir_share(GF, secrets, t, n, rng)
    xs = np.arange(1, n + 1)
    for subset in itertools.combinations(range(n), t):
        idx = list(subset)
        assert np.array_equal(np.asarray(shamir_reconstruct(GF, sh[idx], xs[idx], t)), secrets)


def test_shamir_custom_points_and_small_prime(rng):
    GF = prime_field(101)
    sh = shamir_share(GF, np.array([3, 100]), 2, 3, rng, xs=[5, 9, 77])
    assert np.array_equal(np.asarray(shamir_reconstruct(GF, sh[[2, 0]], [77, 5], 2)), [3, 100])


def test_shamir_t_minus_one_shares_uniform():
    # t-1 = 2 shares of a fixed secret: their joint law is uniform on GF(11)^2
    GF = prime_field(11)
    rng = CSPRNG(99)
    sh = shamir_share(GF, np.full(22_000, 7), 3, 5, rng)
    pair = np.asarray(sh[1]).astype(int) * 11 + np.asarray(sh[3]).astype(int)
    counts = np.bincount(pair, minlength=121)
    assert stats.chisquare(counts).pvalue > 1e-3


def test_shamir_errors(rng):
    GF = prime_field(101)
    with pytest.raises(ValueError, match="t must be <= n_shares"):
        shamir_share(GF, np.array([1]), 4, 3, rng)
    sh = shamir_share(GF, np.array([1]), 3, 4, rng)
    with pytest.raises(ValueError, match="at least t=3 shares"):
        shamir_reconstruct(GF, sh[:2], [1, 2], 3)
    with pytest.raises(ValueError, match="field elements"):
        shamir_share(GF, np.array([101]), 2, 3, rng)
    with pytest.raises(ValueError, match="xs must be distinct"):
        shamir_share(GF, np.array([1]), 2, 3, rng, xs=[1, 1, 2])
    with pytest.raises(ValueError, match="prime"):
        prime_field(100)


def test_additive_errors(rng):
    r = ring(8)
    with pytest.raises(ValueError, match="n_shares must be >= 1"):
        additive_share(r, np.uint64(1), 0, rng)
    with pytest.raises(TypeError, match="n_shares"):
        additive_share(r, np.uint64(1), 2.0, rng)
    with pytest.raises(TypeError, match="rng"):
        additive_share(r, np.uint64(1), 2, np.random.default_rng())
    with pytest.raises(TypeError, match="uint64"):
        additive_reconstruct(r, np.zeros((2, 3), np.int64))
    with pytest.raises(TypeError, match="ring elements must be integers"):
        additive_share(r, np.array([1.5]), 2, rng)
