"""Issue 40, silent case 8: products of secure values in a garbled-circuit session take no
dealer bit (Gilboa's OT triples), in the simulator and across processes."""

import numpy as np
import pytest

from mpc.gc import GarbledCircuits
from mpc.protocols.ot_triples import ot_beaver_triples
from mpc.protocols.providers import OTPreprocessing, TrustedDealerPreprocessing
from mpc.run.launch import launch
from mpc.session import Session
from mpc.values import where


@pytest.mark.parametrize("p, bits", [(2, 40), (3, 16), (2, 64)])
def test_ot_triples_multiply(p, bits):
    s = Session(p, bits=bits, seed=p)
    a, b, c = ot_beaver_triples(s, np.arange(p), (5, 3))
    r = s.ring
    assert a.shape == b.shape == c.shape == (p, 5, 3)
    np.testing.assert_array_equal(r.mul(r.sum(a, axis=0), r.sum(b, axis=0)), r.sum(c, axis=0))
    dealer = s.net.role("dealer")
    assert s.net.party_bits(offline=True)[0][dealer] == 0
    assert s.net.party_bits(offline=True)[0][:p].sum() > 0


def _gc_products(rt, data):
    s = Session(2, seed=3, runtime=rt, roles=("dealer",), comparisons=GarbledCircuits())
    x = s.input(data, by=[0, 1], bound=1000)
    prod = s.output(x[0] * x[1], to=[0, 1])
    low = s.output(where(x[0] < x[1], x[0], x[1]), to=[0, 1])
    sent = s.net.party_bits(offline=True)[0] + s.net.party_bits(offline=False)[0]
    return prod, low, int(sent[s.net.role("dealer")]), type(s.preprocessing).__name__


def test_a_gc_session_multiplies_without_the_dealer():
    data = np.random.default_rng(1).integers(-1000, 1000, size=(2, 4))
    prod, low, dealer_bits, pre = _gc_products(None, data)
    assert pre == "OTPreprocessing" and dealer_bits == 0
    np.testing.assert_array_equal(prod, data[0] * data[1])
    np.testing.assert_array_equal(low, np.minimum(data[0], data[1]))
    res = launch(_gc_products, data, groups=[[0], [1], ["dealer"]])
    for r in res[:2]:
        np.testing.assert_array_equal(r.value[0], prod)
        np.testing.assert_array_equal(r.value[1], low)
    assert res[2].wire["payload_bytes_sent"] == 0 and res[2].value[2] == 0


def test_the_dealer_stays_where_it_is_asked_for():
    s = Session(2, seed=1, comparisons=GarbledCircuits(),
                preprocessing=TrustedDealerPreprocessing())
    x = s.input(np.array([[2], [3]]), by=[0, 1], bound=8)
    assert s.output(x[0] * x[1]) == 6
    assert s.net.party_bits(offline=True)[0][s.net.role("dealer")] > 0
    assert isinstance(Session(2).preprocessing, TrustedDealerPreprocessing)
    assert isinstance(Session(2, comparisons=GarbledCircuits()).preprocessing, OTPreprocessing)
