"""Half-gates garbling: every shared circuit garbled and evaluated, the scheme against a
scalar reference, batching (per-instance Delta, instance blocks), pre-set input labels."""

import numpy as np
import pytest
from Crypto.Cipher import AES

from mpc.gc import (
    AND,
    EVALUATOR,
    GARBLER,
    Circuit,
    CircuitBuilder,
    bits_to_int,
    decode,
    evaluate,
    evaluate_garbled,
    random_delta,
)
from mpc.gc import blocks as blocks_mod
from mpc.gc import garble as garble_mod
from mpc.gc.encoding import group_bits
from mpc.gc.garble import _FIXED_KEY, as_labels, garble, label_bytes, lsb, tccr_hash
from tests.mpc.gc._helpers import CASES, load


def _garbled_run(c, inputs, rng, **kw):
    groups, P = group_bits(inputs, c.input_widths)
    gc, keys = garble(c, P, rng=rng, **kw)
    labels = [keys.encode(g, bits) for g, bits in enumerate(groups)]
    out = evaluate_garbled(gc, labels)
    return np.split(decode(out, keys.decode_bits), np.cumsum(c.output_widths)[:-1], axis=1)


@pytest.mark.parametrize("name", sorted(CASES))
def test_shared_circuit_garbled(name, rng):
    c = load(name)
    P = {"sha256": 2, "aes_128": 5}.get(name, 19)
    inputs, expected = CASES[name](rng, P)
    got = _garbled_run(c, inputs, rng)
    for g, e in zip(got, expected):
        np.testing.assert_array_equal(g, e)


def test_tccr_hash_matches_pycryptodome(rng):
    x = rng.uint64((5, 2))
    tw = rng.uint64((5, 2))
    cipher = AES.new(_FIXED_KEY, AES.MODE_ECB)
    for i in range(5):
        px = cipher.encrypt(x[i].astype("<u8").tobytes())
        inner = bytes(a ^ b for a, b in zip(px, tw[i].astype("<u8").tobytes()))
        ref = bytes(a ^ b for a, b in zip(cipher.encrypt(inner), px))
        assert tccr_hash(x[i:i + 1], tw[i:i + 1]).astype("<u8").tobytes() == ref


def _one_and():
    return Circuit(3, [AND], [0], [1], [2], [[0], [1]], [[2]], (GARBLER, EVALUATOR))


def test_half_gates_against_scalar_reference(rng):
    """Tables, output label and tweak format of one AND gate, recomputed per instance."""
    c = _one_and()
    P = 4
    D = random_delta(rng, P)
    A0, B0 = rng.uint64((P, 1, 2)), rng.uint64((P, 1, 2))
    tweaks = np.array([7, 8, 9, 1 << 40], np.uint64)
    gc, keys = garble(c, D, input_zero={0: A0, 1: B0}, tweaks=tweaks)
    for p in range(P):
        a0, b0, d = A0[p, 0], B0[p, 0], D[p]
        a1, b1 = a0 ^ d, b0 ^ d
        ta = np.array([[0, 0 ^ int(tweaks[p])]], np.uint64)      # tweak (g, g ^ t_p), g = 0
        tb = np.array([[1, 1 ^ int(tweaks[p])]], np.uint64)      # g = 1
        h = {k: tccr_hash(v[None], t)[0] for k, v, t in
             (("a0", a0, ta), ("a1", a1, ta), ("b0", b0, tb), ("b1", b1, tb))}
        pa, pb = int(a0[0] & 1), int(b0[0] & 1)
        tg = h["a0"] ^ h["a1"] ^ (d if pb else 0)
        te = h["b0"] ^ h["b1"] ^ a0
        c0 = (h["a0"] ^ (tg if pa else 0)) ^ (h["b0"] ^ ((te ^ a0) if pb else 0))
        np.testing.assert_array_equal(gc.tables[0, 0, p], tg)
        np.testing.assert_array_equal(gc.tables[0, 1, p], te)
        assert keys.decode_bits[p, 0] == int(c0[0] & 1)
        for x in (0, 1):
            for y in (0, 1):
                out = evaluate_garbled(
                    _slice(gc, p), [(a1 if x else a0)[None, None], (b1 if y else b0)[None, None]])
                np.testing.assert_array_equal(out[0, 0], c0 ^ (d if x & y else 0))


def _slice(gc, p):
    return garble_mod.GarbledCircuit(gc.circuit, gc.tables[:, :, p:p + 1], gc.tweaks[p:p + 1])


def test_batch_equals_instance_by_instance(rng, monkeypatch):
    """Batched garbling (several instance blocks) = garbling each instance alone."""
    c = load("adder64")
    P = 9
    D = random_delta(rng, P)
    zero = {0: rng.uint64((P, 64, 2)), 1: rng.uint64((P, 64, 2))}
    monkeypatch.setattr(blocks_mod, "BLOCK_BYTES", 16 * c.schedule.n_slots * 2)
    monkeypatch.setattr(blocks_mod, "MIN_BLOCK", 2)          # blocks of 2 instances
    gc, keys = garble(c, D, input_zero=zero)
    for p in range(P):
        g1, k1 = garble(c, D[p:p + 1], input_zero={g: z[p:p + 1] for g, z in zero.items()},
                        tweaks=[p])
        np.testing.assert_array_equal(g1.tables[:, :, 0], gc.tables[:, :, p])
        np.testing.assert_array_equal(k1.decode_bits[0], keys.decode_bits[p])
    x, y = rng.uint64(P), rng.uint64(P)
    xb, yb = group_bits([x, y], (64, 64))[0]
    out = evaluate_garbled(gc, [keys.encode(0, xb), keys.encode(1, yb)])
    np.testing.assert_array_equal(bits_to_int(decode(out, keys.decode_bits)), x + y)


def test_preset_labels_from_correlated_ot(rng):
    """Evaluator labels as a correlated OT gives them: zero-label q, active q ^ y Delta."""
    c = load("old-format/comparator_32bit_signed_lt")
    P = 40
    D = random_delta(rng, P)
    q = rng.bytes_array(P * 32 * 16).reshape(P, 32, 16)          # byte-form labels
    x, y = rng.uint64(P) >> np.uint64(32), rng.uint64(P) >> np.uint64(32)
    xb, yb = group_bits([x, y], (32, 32))[0]
    gc, keys = garble(c, label_bytes(D), rng=rng, input_zero={1: q})
    np.testing.assert_array_equal(keys.group_zero(1), as_labels(q))
    t = label_bytes(as_labels(q) ^ (yb[..., None].astype(np.uint64) * D[:, None, :]))
    out = evaluate_garbled(gc, [keys.encode(0, xb), t])
    expect = x.astype(np.uint32).view(np.int32) < y.astype(np.uint32).view(np.int32)
    np.testing.assert_array_equal(decode(out, keys.decode_bits)[:, 0], expect)


def test_each_instance_has_its_own_delta_and_no_free_gate_tables(rng):
    c = load("aes_128")
    gc, keys = garble(c, 6, rng=rng)
    assert np.unique(keys.delta, axis=0).shape[0] == 6 and np.all(keys.delta[:, 0] & 1)
    assert gc.tables.shape == (6400, 2, 6, 2) and gc.table_bits == 256 * 6400
    assert gc.per_instance().shape == (6, 6400, 2, 2)
    # point-and-permute: zero-label and one-label of every input differ in the permute bit
    assert np.all(lsb(keys.input_zero) != lsb(keys.input_zero ^ keys.delta[:, None, :]))


def test_builder_circuit_garbled_with_constants_and_not(rng):
    b = CircuitBuilder()
    x = b.input(6, party=GARBLER)
    y = b.input(6, party=EVALUATOR)
    b.output(b.mux(x.lt(y, signed=True), ~x + 5, y))
    b.output(b.const(9, 4))
    c = b.build()
    xs, ys = np.repeat(np.arange(64), 64), np.tile(np.arange(64), 64)
    got = _garbled_run(c, [xs, ys], rng)
    for g, e in zip(got, evaluate(c, [xs, ys])):
        np.testing.assert_array_equal(g, e)


def test_zero_instances(rng):
    c = load("adder64")
    gc, keys = garble(c, 0, rng=rng)
    out = evaluate_garbled(gc, np.zeros((0, 128, 16), np.uint8))
    assert out.shape == (0, 64, 2) and decode(out, keys.decode_bits).shape == (0, 64)


@pytest.mark.parametrize("call, match", [
    (lambda c, r: garble(c, np.zeros((2, 2), np.uint64)), "least significant bit set"),
    (lambda c, r: garble(c, np.ones((2, 3), np.uint64)), r"uint64 \(\.\.\., 2\)"),
    (lambda c, r: garble(c, 2), "rng is required"),
    (lambda c, r: garble(c, 2, rng=r, tweaks=[1, 2, 3]), r"tweaks must be an integer array"),
    (lambda c, r: garble(c, 2, rng=r, input_zero={5: None}), "input group indices 0..1"),
    (lambda c, r: garble(c, 2, rng=r, input_zero={1: np.zeros((2, 3, 16), np.uint8)}),
     r"input_zero\[1\] must have shape \(2, 1, 16\|2\)"),
    (lambda c, r: garble("c", 2, rng=r), "circuit must be a Circuit"),
])
def test_garble_errors(call, match, rng):
    with pytest.raises((ValueError, TypeError), match=match):
        call(_one_and(), rng)


def test_evaluate_and_decode_errors(rng):
    gc, keys = garble(_one_and(), 2, rng=rng)
    with pytest.raises(ValueError, match=r"input_labels must have shape \(2, 2, 16\|2\)"):
        evaluate_garbled(gc, np.zeros((2, 3, 2), np.uint64))
    with pytest.raises(ValueError, match=r"input_labels\[1\] must have shape \(2, 1, 16\|2\)"):
        evaluate_garbled(gc, [np.zeros((2, 1, 2), np.uint64), np.zeros((3, 1, 2), np.uint64)])
    with pytest.raises(ValueError, match="must give 2 groups"):
        evaluate_garbled(gc, [np.zeros((2, 1, 2), np.uint64)])
    with pytest.raises(ValueError, match=r"uint8 \(\.\.\., 16\) or uint64"):
        evaluate_garbled(gc, np.zeros((2, 2, 4), np.uint32))
    with pytest.raises(TypeError, match="garbled must be a GarbledCircuit"):
        evaluate_garbled(keys, np.zeros((2, 2, 2), np.uint64))
    with pytest.raises(ValueError, match=r"decode_bits must have shape \(2, 1\)"):
        decode(np.zeros((2, 1, 2), np.uint64), np.zeros((2, 2), np.uint8))
    with pytest.raises(ValueError, match=r"bits for input group 0 must have shape \(2, 1\)"):
        keys.encode(0, np.zeros((2, 2), np.uint8))
