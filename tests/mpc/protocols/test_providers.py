"""Providers given to a session: comparisons and preprocessing, named by their trust model."""

import numpy as np
import pytest

from fss import FSSGates
from mpc.gc import GarbledCircuits
from mpc.protocols.providers import CircuitComparisons, OTPreprocessing, TrustedDealerPreprocessing
from mpc.session import Session
from mpc.values import SecureArray


def _rounds_of_a_comparison(**kw):
    s = Session(2, seed=1, roles=("dealer",), **kw)
    data = np.array([[1, -5, 7], [3, -6, 7]])
    x = s.input(data, by=[0, 1], bound=2**10)
    before = s.costs().online["rounds"]
    out = s.output(x[0] < x[1], to=[0, 1])
    assert np.array_equal(out, data[0] < data[1])
    return s.costs().online["rounds"] - before


def test_the_default_is_the_circuit_and_fss_gates_take_one_round():
    assert isinstance(Session(2).comparisons[0], CircuitComparisons)
    circuit = _rounds_of_a_comparison()
    fss = _rounds_of_a_comparison(comparisons=FSSGates())
    gc = _rounds_of_a_comparison(comparisons=GarbledCircuits())
    assert fss == 2 and circuit > 4 * fss, (fss, circuit)    # input + 1, against the circuit's
    assert gc == 3                                            # input + Yao's 2 online rounds


def test_the_first_provider_that_serves_the_holders_is_used():
    s = Session(3, comparisons=(FSSGates(), CircuitComparisons()))
    assert isinstance(s.comparison_for(2), FSSGates)
    assert isinstance(s.comparison_for(3), CircuitComparisons)
    with pytest.raises(ValueError, match=r"\(FSSGates\) serves 3 holders"):
        Session(3, comparisons=FSSGates()).comparison_for(3)


@pytest.mark.parametrize("bad", ["gc", [FSSGates(), "dealer"], []])
def test_providers_are_objects(bad):
    with pytest.raises(TypeError, match="comparisons must be a comparison provider"):
        Session(2, comparisons=bad)
    with pytest.raises(TypeError, match="preprocessing must be"):
        Session(2, preprocessing="ot")


def test_ot_preprocessing_refuses_what_needs_a_dealer():
    s = Session(2, seed=2, roles=("dealer",), comparisons=GarbledCircuits(),
                preprocessing=OTPreprocessing())
    x = s.input(np.array([[1, 2], [3, 4]]), by=[0, 1], bound=8)
    assert np.array_equal(s.output(x[0] < x[1], to=[0, 1]), [True, True])   # no dealer
    assert s.output(x[0] * x[1], to=[0, 1]).tolist() == [3, 8]            # OT triples
    bits = x[0] < 2                                                       # 0/1, additive
    xor = SecureArray(s, bits.shares & np.uint64(1), [0, 1], kind="xor", bound=1)
    with pytest.raises(ValueError, match=r"OTPreprocessing.*deals none"):
        xor & xor                                                         # still the dealer's
    assert TrustedDealerPreprocessing().dealer and not OTPreprocessing().dealer
    assert TrustedDealerPreprocessing().products and OTPreprocessing().products


def test_every_provider_names_whom_it_trusts():
    for p in (CircuitComparisons(), FSSGates(), GarbledCircuits(), TrustedDealerPreprocessing(),
              OTPreprocessing()):
        assert p.name and len(p.trust) > 20, p
