"""Boolean GMW on bit-sliced shares (mpc.protocols.gmw).

Exact results, counted traffic, per-holder streams.
"""

import numpy as np
import pytest

from mpc.arith.rng import CSPRNG
from mpc.protocols.gmw import GMW, pack_rows, unpack_rows
from mpc.session import Session


def _xor(sh):
    return np.bitwise_xor.reduce(sh, axis=0)


@pytest.mark.parametrize("I", [1, 63, 64, 65, 200])
def test_pack_unpack_roundtrip(I):
    bits = CSPRNG(I).bits((3, I))
    words = pack_rows(bits)
    assert words.shape == (3, -(-I // 64)) and words.dtype == np.uint64
    assert np.array_equal(unpack_rows(words, I), bits)
    if I % 64:                                      # unused bits of the last word are 0
        assert not np.any(words[:, -1] >> np.uint64(I % 64))


@pytest.mark.parametrize("p", [1, 2, 3, 5])
@pytest.mark.parametrize("triples", ["dealer", "ot"])
def test_and_and_to_arith_are_exact(p, triples):
    I = 77
    s = Session(p, seed=p)
    ctx = GMW(s, np.arange(p), I, s.rng.derive("t"), triples=triples)
    x = ctx.holder_words("x", 3)
    y = ctx.holder_words("y", 3)
    z = ctx.and_(x, y)
    assert np.array_equal(_xor(z), _xor(x) & _xor(y))
    assert not np.any(z[..., -1] >> np.uint64(I % 64))          # padding stays 0
    n = ctx.not_(x)
    assert np.array_equal(_xor(n), ~_xor(x) & ctx.mask)
    a = ctx.to_arith(z)                                          # (p, 3, I) in Z_2^l
    assert a.shape == (p, 3, I)
    assert np.array_equal(s.ring.sum(a, axis=0), unpack_rows(_xor(z), I).astype(np.uint64))
    assert ctx.and_rows == 3


@pytest.mark.parametrize("p", [2, 3, 6])
def test_opening_traffic(p):
    """p = 2: one round, 2 messages; p > 2: the rows split among min(p, rows) kings, 2 rounds,
    2 (p - 1) messages per king; each row sends the ceil(I / 8) bytes that hold instances."""
    I, rows = 70, 4
    s = Session(p, seed=1)
    ctx = GMW(s, np.arange(p), I, s.rng.derive("t"))
    x = ctx.holder_words("x", rows)
    with s.net.phase("t"):
        out = ctx.open(x)
    assert all(np.array_equal(out[j], _xor(x)) for j in range(p))    # every holder's copy
    rep = s.net.report()["phases"]["t"]["online"]
    if p == 2:
        assert (rep["rounds"], rep["messages"], rep["bits"]) == (1, 2, 2 * rows * 8 * -(-I // 8))
    else:
        kings = min(p, rows)
        assert rep["rounds"] == 2 and rep["messages"] == kings * 2 * (p - 1)
        assert rep["bits"] == 2 * (p - 1) * rows * 8 * -(-I // 8)


def test_kings_spread_the_load():
    """A holder's traffic does not grow with p: kings rotate and split the rows."""
    maxes = []
    for p in (20, 80):
        s = Session(p, seed=2)
        ctx = GMW(s, np.arange(p), 64, s.rng.derive("t"))
        for _ in range(4):
            ctx.and_(ctx.holder_words(f"x{_}", 40), ctx.holder_words(f"y{_}", 40))
        maxes.append(s.net.report()["online"]["max_party_bits"])
    assert maxes[1] <= 1.5 * maxes[0]


def test_dealer_triples_are_offline_and_counted():
    p, I, rows = 3, 10, 5
    s = Session(p, seed=3)
    ctx = GMW(s, np.arange(p), I, s.rng.derive("t"))
    with s.net.phase("t"):
        ctx.reserve(rows)
    off = s.net.report()["phases"]["t"]["offline"]
    assert off["bits"] == 3 * rows * 8 * -(-I // 8) * p and off["rounds"] == 1


def test_holder_rows_depend_on_the_holder_only():
    """Holder j's random row is the same whoever else holds (a process computes its own)."""
    s = Session(8, seed=4)
    rng = s.rng.derive("t")
    a = GMW(s, np.array([1, 5, 6]), 100, rng).holder_words("lab", 2)
    b = GMW(s, np.array([5]), 100, rng).holder_words("lab", 2)
    assert np.array_equal(a[1], b[0]) and not np.array_equal(a[0], a[1])


def test_derived_keys_are_the_derive_keys():
    g = CSPRNG(7)
    keys = g.derived_keys("lab", np.array([0, 3, 10**9]))
    for row, i in zip(keys, [0, 3, 10**9]):
        assert row.tobytes() == g.derive("lab", i)._key


def test_errors():
    s = Session(3, seed=1)
    with pytest.raises(ValueError, match="triples must be"):
        GMW(s, np.arange(3), 5, s.rng, triples="magic")
    with pytest.raises(ValueError, match="distinct"):
        GMW(s, np.array([0, 0]), 5, s.rng)
    with pytest.raises(ValueError, match="n_instances"):
        GMW(s, np.arange(3), 0, s.rng)
    with pytest.raises(TypeError, match="ids must be integers"):
        s.rng.derived_keys("x", np.array([0.5]))
