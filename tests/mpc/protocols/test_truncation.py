"""Probabilistic truncation (mpc.protocols.truncation): exhaustive on a small ring, unbiased in
distribution, one online round."""

import numpy as np
import pytest

from mpc.arith.sharing import additive_share
from mpc.protocols.truncation import truncate
from mpc.session import Session


@pytest.mark.parametrize("p", [2, 3])
def test_every_value_of_a_small_ring_truncates_to_floor_or_floor_plus_one(p):
    s = Session(p, bits=10, frac_bits=0, seed=p)
    x = np.arange(-(1 << 8) + 1, 1 << 8)                    # every |x| < 2^(l-2)
    for m in range(1, 8):
        sh = additive_share(s.ring, s.ring.from_signed(x), p, s.rng)
        got = s.ring.to_signed(s.ring.sum(truncate(s, sh, np.arange(p), m), axis=0))
        assert set(np.unique(got - (x >> m)).tolist()) <= {0, 1}, m
        exact = x % (1 << m) == 0
        assert np.array_equal(got[exact], x[exact] >> m)     # multiples are exact


def test_rounding_is_unbiased():
    s = Session(3, bits=40, seed=7)
    n = 20000
    x = np.full(n, 5 * 16 + 5)                               # 5 + 5/16 at m = 4
    sh = additive_share(s.ring, s.ring.from_signed(x), 3, s.rng)
    got = s.ring.to_signed(s.ring.sum(truncate(s, sh, np.arange(3), 4), axis=0))
    up = np.mean(got == 6)
    assert set(np.unique(got).tolist()) <= {5, 6}
    assert abs(up - 5 / 16) < 4 * np.sqrt(5 / 16 * 11 / 16 / n)


def test_one_online_round_and_checked_arguments():
    s = Session(2, bits=32, seed=1)
    sh = additive_share(s.ring, s.ring.from_signed(np.arange(6)), 2, s.rng)
    before = s.costs().online["rounds"]
    truncate(s, sh, np.arange(2), 3)
    assert s.costs().online["rounds"] - before == 1
    with pytest.raises(ValueError, match="m must be in"):
        truncate(s, sh, np.arange(2), 31)
