"""Circuit structure, the compiled schedule, bit encodings and the plaintext evaluator."""

import dataclasses

import numpy as np
import pytest

from mpc.gc import (
    AND,
    EQ,
    EQW,
    EVALUATOR,
    GARBLER,
    INV,
    XOR,
    Circuit,
    CircuitBuilder,
    bits_to_bytes,
    bits_to_int,
    bytes_to_bits,
    evaluate,
    int_to_bits,
)
from mpc.gc.encoding import check_bits, group_bits
from mpc.gc.schedule import STEP_AND
from tests.mpc.gc._helpers import load


def _tiny(**kw):
    # out0 = (x & y) ^ ~x ; out1 = copy of x ; out2 = constant 1
    args = dict(n_wires=7, ops=[AND, INV, XOR, EQW, EQ], in0=[0, 0, 2, 0, 1],
                in1=[1, -1, 3, -1, -1], out=[2, 3, 4, 5, 6], inputs=[[0], [1]],
                outputs=[[4], [5], [6]], input_parties=(GARBLER, EVALUATOR))
    args.update(kw)
    return Circuit(**args)


def test_tiny_circuit_all_gate_types():
    c = _tiny()
    assert c.gate_counts == {"XOR": 1, "AND": 1, "INV": 1, "EQW": 1, "EQ": 1}
    x, y = np.array([0, 0, 1, 1]), np.array([0, 1, 0, 1])
    o = evaluate(c, [x, y])
    np.testing.assert_array_equal(o[0][:, 0], (x & y) ^ (1 - x))
    np.testing.assert_array_equal(o[1][:, 0], x)
    np.testing.assert_array_equal(o[2][:, 0], [1, 1, 1, 1])
    assert "AND 1" in repr(c) and c.party_groups(EVALUATOR) == (1,)


def test_circuit_is_immutable():
    c = _tiny()
    with pytest.raises(ValueError):
        c.ops[0] = XOR
    with pytest.raises(ValueError):
        c.inputs[0][0] = 3
    with pytest.raises(dataclasses.FrozenInstanceError):
        c.n_wires = 9
    c2 = c.with_parties((EVALUATOR, GARBLER))
    assert c.input_parties == (GARBLER, EVALUATOR) and c2.input_parties == (EVALUATOR, GARBLER)


@pytest.mark.parametrize("kw, match", [
    (dict(input_parties=(GARBLER,)), "one party per input group"),
    (dict(input_parties=(GARBLER, 5)), "GARBLER .0. or EVALUATOR .1."),
    (dict(ops=[AND, INV, XOR, EQW, 9]), "gate 4: unknown gate code 9"),
    (dict(in1=[1, 0, 3, -1, -1]), "gate 1: INV has the wrong number of inputs"),
    (dict(outputs=[[4], [5], [9]]), "output wires must be in 0..6"),
    (dict(inputs=[[0], [0]]), "wire 0 appears twice among the circuit inputs"),
    (dict(n_wires=True), "n_wires must be an integer"),
])
def test_circuit_validation(kw, match):
    with pytest.raises((ValueError, TypeError), match=match):
        _tiny(**kw)


def test_party_groups_need_parties():
    with pytest.raises(ValueError, match="no input parties"):
        _tiny(input_parties=None).party_groups(GARBLER)


def test_schedule_drops_dead_gates_and_resolves_copies():
    # out = copy(copy(x & y)); a dead AND and a dead XOR
    c = Circuit(7, [AND, AND, EQW, EQW, XOR], [0, 0, 2, 4, 0], [1, 1, -1, -1, 1],
                [2, 3, 4, 5, 6], [[0], [1]], [[5]])
    s = c.schedule
    assert c.n_and == 2 and s.n_and == 1 and s.n_xor == 0 and s.n_steps == 1
    o = evaluate(c, [np.array([0, 1, 1]), np.array([1, 0, 1])])[0]
    np.testing.assert_array_equal(o[:, 0], [0, 0, 1])


def test_builder_circuits_keep_only_live_gates():
    b = CircuitBuilder()
    x = b.input(4, party=GARBLER)
    y = b.input(4, party=EVALUATOR)
    _unused = x * y
    b.output(x + y)
    c = b.build()
    assert c.n_and == 3 and c.schedule.n_and == 3 and _unused.width == 4


def test_schedule_of_aes_uses_and_layers_and_few_slots():
    c = load("aes_128")
    s = c.schedule
    ands = [st for st in s.steps if st.kind == STEP_AND]
    assert s.and_depth == len(ands) == 60 and s.n_and == 6400
    # table rows are contiguous and in step order
    assert [st.t0 for st in ands] == list(np.cumsum([0] + [st.size for st in ands])[:-1])
    assert s.n_slots < c.n_wires // 20
    for st in s.steps:   # a step never writes the same slot twice
        assert np.unique(st.o).size == st.size


def test_schedule_prefers_full_depth_layering_for_multipliers():
    c = load("mult64")
    # AND-depth layering would need about 4000 steps (long XOR chains beside the
    # critical path); layering by full depth needs about 600
    assert c.schedule.n_steps < 700


@pytest.mark.parametrize("width", [1, 7, 63, 64])
def test_int_bits_round_trip(width, rng):
    v = rng.uint64(50) & np.uint64((1 << width) - 1 if width < 64 else (1 << 64) - 1)
    bits = int_to_bits(v, width)
    assert bits.shape == (50, width) and bits.dtype == np.uint8
    np.testing.assert_array_equal(bits_to_int(bits), v)
    signed = bits_to_int(bits, signed=True)
    expect = [int(a) - (1 << width) if int(a) >> (width - 1) else int(a) for a in v]
    np.testing.assert_array_equal(signed, expect)


def test_wide_ints_and_negative_python_ints():
    vals = [0, 1, (1 << 100) - 1, -1, -(1 << 99)]
    bits = int_to_bits(vals, 100)
    assert bits_to_int(bits) == [v % (1 << 100) for v in vals]
    assert bits_to_int(bits, signed=True) == [0, 1, -1, -1, -(1 << 99)]
    np.testing.assert_array_equal(int_to_bits(np.array([-1, 2]), 3), [[1, 1, 1], [0, 1, 0]])


def test_bytes_bit_order():
    data = bytes.fromhex("0102")
    np.testing.assert_array_equal(bytes_to_bits(data)[0, :10], [0, 1, 0, 0, 0, 0, 0, 0, 1, 0])
    np.testing.assert_array_equal(bytes_to_bits(data, "little")[0, :10],
                                  [1, 0, 0, 0, 0, 0, 0, 0, 0, 1])
    assert bits_to_bytes(bytes_to_bits(data)).tobytes() == data
    assert bits_to_bytes(bytes_to_bits(data, "little"), "little").tobytes() == data
    with pytest.raises(ValueError, match="byteorder must be"):
        bytes_to_bits(data, "middle")


@pytest.mark.parametrize("value, match", [
    (np.zeros((2, 3, 1)), "must be a .P, width. bit array"),
    (np.array([[2, 0]]), "only 0/1"),
    (np.array([[0.5, 0]]), "integer bits"),
])
def test_check_bits_errors(value, match):
    with pytest.raises((ValueError, TypeError), match=match):
        check_bits(value, "bits")


@pytest.mark.parametrize("values, match", [
    ([np.zeros((3, 4), np.uint8)], r"must give 2 group"),
    ([np.zeros((3, 5), np.uint8), np.zeros(3, np.uint64)], r"inputs\[0\] must have width 4"),
    ([np.zeros((3, 4), np.uint8), np.zeros(2, np.uint64)], r"inputs\[1\] has 2 instances, "
                                                            r"expected 3"),
    ([np.zeros(3), np.zeros(3, np.uint64)], r"inputs\[0\] must be a \(P, 4\) bit array"),
])
def test_group_bits_errors(values, match):
    with pytest.raises(ValueError, match=match):
        group_bits(values, (4, 6))


def test_group_bits_wide_needs_bits():
    with pytest.raises(ValueError, match="is 70 bits wide"):
        group_bits([np.zeros(3, np.uint64)], (70,))


@pytest.mark.parametrize("P", [0, 1, 63, 64, 65, 130])
def test_plain_awkward_batch_sizes(P, rng):
    c = load("adder64")
    x, y = rng.uint64(P), rng.uint64(P)
    out = evaluate(c, [x, y])[0]
    assert out.shape == (P, 64)
    np.testing.assert_array_equal(bits_to_int(out), x + y)


def test_plain_accepts_bool_bits_and_rejects_non_circuits():
    c = _tiny()
    out = evaluate(c, [np.array([[True]]), np.array([[True]])])
    assert out[0][0, 0] == 1
    with pytest.raises(TypeError, match="circuit must be a Circuit"):
        evaluate("adder64", [])
