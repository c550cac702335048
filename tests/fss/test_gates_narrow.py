"""Comparison gates on a narrow input domain (``in_bits`` d < l): correctness on every
in-bound operand, measured costs, masked openings, argument checks."""

import numpy as np
import pytest
from scipy import stats

from fss import gates

from .gate_helpers import assert_costs, open_, session, share

U64 = np.uint64


def _session(n_parties, l, **kw):
    return session(n_parties, l, prefix="narrow", **kw)


_share, _open = share, open_


@pytest.mark.parametrize("l", [8, 10])
@pytest.mark.parametrize("p", [2, 3])
def test_exhaustive_in_bound_operands(l, p):
    """Every d in 2..l and every z with |z| < 2^(d-1): [z < 0], sign(z), |z| exact,
    the outputs in Z_2^l whatever the shares (uniform in Z_2^l) carry above bit d."""
    s = _session(4, l)
    h = np.array([2, 0, 3][:p])
    for d in range(2, l + 1):
        z = np.arange(-(1 << (d - 1)) + 1, 1 << (d - 1), dtype=np.int64)
        X = _share(s, z, p)
        zero = _share(s, np.zeros_like(z), p)
        lt = _open(s, gates.less_than(s, X, zero, h, in_bits=d))
        gt = _open(s, gates.greater_than(s, zero, X, h, in_bits=d))
        sg = _open(s, gates.sign(s, X, h, in_bits=d))
        ab = _open(s, gates.abs_value(s, X, h, in_bits=d))
        np.testing.assert_array_equal(lt, (z < 0).astype(np.int64))
        np.testing.assert_array_equal(gt, (z < 0).astype(np.int64))
        np.testing.assert_array_equal(sg, np.sign(z))
        np.testing.assert_array_equal(ab, np.abs(z))


def test_randomized_wide_ring():
    """l = 59 (the Gini ring at 10^7 edges), d = 34: random in-bound differences x - y."""
    l, d = 59, 34
    s = _session(2, l)
    rng = np.random.default_rng(3)      # test data only
    x = rng.integers(0, 1 << 32, 20_000, endpoint=True)
    y = rng.integers(0, 1 << 32, 20_000, endpoint=True)
    x[:3], y[:3] = [0, 1 << 32, 5], [1 << 32, 0, 5]
    X, Y = _share(s, x, 2), _share(s, y, 2)
    h = np.array([0, 1])
    np.testing.assert_array_equal(_open(s, gates.less_than(s, X, Y, h, in_bits=d)),
                                  (x < y).astype(np.int64))
    np.testing.assert_array_equal(_open(s, gates.abs_value(s, s.ring.sub(X, Y), h, in_bits=d)),
                                  np.abs(x - y))


def test_in_bits_equal_to_l_is_the_wide_gate():
    """in_bits = l takes the l-bit path: the same traffic and outputs as no in_bits."""
    outs, bits = [], []
    for kw in ({}, {"in_bits": 16}):
        s = _session(2, 16)
        X = _share(s, np.arange(-50, 50), 2)
        outs.append(_open(s, gates.sign(s, X, np.array([0, 1]), **kw)))
        bits.append(s.net.report()["online"]["bits"] + s.net.report()["offline"]["bits"])
    np.testing.assert_array_equal(outs[0], outs[1])
    assert bits[0] == bits[1]


@pytest.mark.parametrize("gate", ["less_than", "greater_than", "sign", "abs_value"])
@pytest.mark.parametrize("p", [2, 4])
def test_documented_costs_match_measurement(gate, p):
    l, d, B = 24, 9, 50
    s = _session(6, l)
    X = _share(s, np.arange(B) - 25, p)
    Y = _share(s, 25 - np.arange(B) // 2, p)
    h = np.array([4, 1] + [0, 2, 3, 5][: p - 2])
    call = {
        "less_than": lambda: gates.less_than(s, X, Y, h, in_bits=d),
        "greater_than": lambda: gates.greater_than(s, X, Y, h, in_bits=d),
        "sign": lambda: gates.sign(s, X, h, in_bits=d),
        "abs_value": lambda: gates.abs_value(s, X, h, in_bits=d),
    }[gate]
    with s.net.phase("computing"):
        call()
    c = gates.costs(gate, l, p, in_bits=d)
    wide = gates.costs(gate, l, p)
    assert c["key_bits"] < wide["key_bits"]
    assert c["online_sent_key_holder"] < wide["online_sent_key_holder"]
    assert_costs(s, h, B, c)


@pytest.mark.parametrize("z0", [0, -7, 100])
def test_opened_values_uniform_on_d_bits(z0):
    """What the key holders receive is below 2^d (nothing of the share's high bits leaks)
    and x^ = z + r is uniform in Z_2^d whatever z is."""
    l, d, B = 40, 8, 8000
    s = _session(2, l, record_views=True)
    X = _share(s, np.full(B, z0), 2)
    gates.sign(s, X, np.array([0, 1]), in_bits=d)
    online = [m for m in s.net.view(0) if not m.offline]
    assert len(online) == 1 and online[0].sender == 1
    got = np.asarray(online[0].payload)
    assert int(got.max()) < (1 << d)
    zhat = (got + (X[0] & U64((1 << d) - 1))) & U64((1 << d) - 1)
    assert stats.chisquare(np.bincount(zhat.astype(np.int64), minlength=1 << d)).pvalue > 1e-4


def test_bad_in_bits():
    s = _session(2, 16)
    X = _share(s, np.arange(4), 2)
    h = np.array([0, 1])
    for bad in (1, 17, 0, 2.5, True):
        with pytest.raises(ValueError, match="in_bits"):
            gates.sign(s, X, h, in_bits=bad)
    with pytest.raises(ValueError, match="in_bits"):
        gates.costs("sign", 16, in_bits=17)
    with pytest.raises(ValueError, match="comparison gates"):
        gates.costs("equal", 16, in_bits=8)
