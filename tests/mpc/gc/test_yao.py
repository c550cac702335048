"""Yao's protocol on the simulated network: outputs in every mode, per-instance pairs,
measured bits and rounds against the formulas, and two-world view independence."""

import numpy as np
import pytest

from mpc.gc import (
    EVALUATOR,
    GARBLER,
    CircuitBuilder,
    additive_circuit,
    bits_to_int,
    bytes_to_bits,
    evaluate,
)
from mpc.gc import yao as yao_mod
from mpc.gc.yao import OUTPUT_MODES, yao
from mpc.ot import correlated_ot, ot_cost
from mpc.session import Session
from tests.mpc.gc._helpers import CASES, load, standin_bits, standin_correlated_ot


def _lt_sub(w=8):
    b = CircuitBuilder("lt-sub")
    x = b.input(w, party=GARBLER)
    y = b.input(w, party=EVALUATOR)
    b.output(x.lt(y, signed=True))
    b.output(x - y)
    return b.build()


def _signed(v, w):
    v = np.asarray(v, dtype=np.int64) % (1 << w)
    return np.where(v >= 1 << (w - 1), v - (1 << w), v)


@pytest.mark.parametrize("mode", OUTPUT_MODES)
def test_modes_with_many_pairs(mode):
    """Instances between different (garbler, evaluator) pairs; a party plays both roles."""
    s = Session(5, seed=11)
    c = _lt_sub()
    P = 90
    g = np.arange(P) % 5
    e = (g + 1 + np.arange(P) // 5 % 4) % 5
    rng = s.rng.derive("inputs")
    x = _signed(rng.uint64(P) >> np.uint64(56), 8)
    y = _signed(rng.uint64(P) >> np.uint64(56), 8)
    y[::7] = x[::7]
    r = yao(s, c, g, e, [x], [y], output=mode)
    np.testing.assert_array_equal(r.value(0), x < y)
    np.testing.assert_array_equal(r.value(1, signed=True), _signed(x - y, 8))
    if mode in ("evaluator", "both"):
        assert r.evaluator[0].shape == (P, 1)
    if mode in ("garbler", "both"):
        assert r.garbler[1].shape == (P, 8)
    if mode == "evaluator":
        assert r.garbler is None
    if mode == "additive":   # shares in Z_2^w, each alone uniform-looking, sum = f
        assert r.garbler[1].dtype == np.uint64 and r.garbler[1].max() < 256
        np.testing.assert_array_equal((r.garbler[1] + r.evaluator[1]) % 256, (x - y) % 256)
    if mode == "xor":
        assert r.garbler[0].shape == r.evaluator[0].shape == (P, 1)


def test_aes_128_two_party_with_real_ot():
    c = load("aes_128")
    s = Session(2, seed=3)
    inputs, expected = CASES["aes_128"](s.rng.derive("inputs"), 2)
    r = yao(s, c, [0, 0], [1, 1], [inputs[0]], [inputs[1]], output="both")
    np.testing.assert_array_equal(r.evaluator[0], expected[0])
    np.testing.assert_array_equal(r.garbler[0], expected[0])
    rep = s.net.report()
    assert rep["phases"]["yao"]["offline"]["bits"] >= 2 * 256 * 6400


@pytest.mark.parametrize("mode", OUTPUT_MODES)
@pytest.mark.parametrize("ot", ["real", "standin"])
def test_measured_bits_equal_the_formula(mode, ot):
    """Per AND 256 bits, per garbler label 128, per evaluator input 1 + 128 online,
    decoding/output bits; the OT's traffic is what the OT sends (its own formula)."""
    s = Session(6, seed=5)
    w, P = 12, 40
    c = _lt_sub(w)
    g = np.arange(P) % 3
    e = 3 + np.arange(P) % 3
    x = np.arange(P) - 20
    y = 20 - 2 * np.arange(P)
    fn = correlated_ot if ot == "real" else standin_correlated_ot
    r = yao(s, c, g, e, [x], [y], output=mode, ot=fn)
    run_c = additive_circuit(c) if mode == "additive" else c
    n_and, n_out = run_c.schedule.n_and, c.n_output_bits
    g_bits = w + (c.n_output_bits if mode == "additive" else 0)
    decoded_by_e = mode in ("evaluator", "both", "additive")
    sent_out = mode in ("garbler", "both")
    online = P * (128 * g_bits + 129 * w + (n_out if sent_out else 0))
    offline = P * (256 * n_and + (n_out if decoded_by_e else 0))
    if ot == "real":
        fake_deltas = np.arange(P)[:, None]                 # every instance its own Delta
        ot_formula = ot_cost(g, e, w, "correlated", delta=fake_deltas)
    else:
        ot_formula = {"bits": standin_bits(P, w), "rounds": 2}
    m = r.costs["measured"]
    assert m["ot"] == {"bits": ot_formula["bits"], "rounds": ot_formula["rounds"]}
    assert m["online"] == {"bits": online, "rounds": 3 if sent_out else 2}
    assert m["offline"] == {"bits": offline + ot_formula["bits"],
                            "rounds": ot_formula["rounds"] + 1}
    f = r.costs["formula"]
    assert f["online_bits"] == online and f["offline_bits_without_ot"] == offline
    assert f["online_rounds"] == m["online"]["rounds"]
    assert r.costs["per_instance"]["tables"] == 256 * n_and
    rep = s.net.report()["phases"]["yao"]
    assert rep["online"]["bits"] == online and rep["offline"]["bits"] == offline + \
        ot_formula["bits"]


def test_additive_circuit_cost():
    c = _lt_sub(10)
    a = additive_circuit(c)
    assert a.n_and == c.n_and + (1 - 1) + (10 - 1)
    assert a.input_parties == (GARBLER, EVALUATOR, GARBLER, GARBLER)
    assert additive_circuit(c) is a                     # cached


def test_one_sided_inputs():
    """No evaluator input: no OT at all; no garbler input: only OT-delivered labels."""
    s = Session(2, seed=8)
    neg = load("neg64")
    x = np.array([5, 0, 1 << 63], dtype=np.uint64)
    r = yao(s, neg.with_parties((GARBLER,)), [0, 0, 0], [1, 1, 1], [x], [])
    np.testing.assert_array_equal(r.value(), -x)
    assert r.costs["measured"]["ot"]["bits"] == 0 and r.costs["measured"]["online"]["rounds"] == 1
    r = yao(s, neg.with_parties((EVALUATOR,)), [1, 1, 1], [0, 0, 0], [], [x], output="garbler")
    np.testing.assert_array_equal(r.value(), -x)


def test_reproducible_with_a_seed():
    c = _lt_sub()
    outs = []
    for _ in range(2):
        s = Session(2, seed=99, record_views=True)
        r = yao(s, c, [0, 0], [1, 1], [np.array([3, -4])], [np.array([1, 2])], output="xor")
        outs.append((r.evaluator[1], _view_bits(s.net.view(1))))
    np.testing.assert_array_equal(outs[0][0], outs[1][0])
    np.testing.assert_array_equal(outs[0][1], outs[1][1])


# -- two-world view independence -------------------------------------------------------

def _payload_bytes(p):
    if p is None:
        return np.zeros(0, np.uint8)
    if isinstance(p, (bytes, bytearray)):
        return np.frombuffer(bytes(p), np.uint8)
    a = np.asarray(p)
    if a.dtype == object:
        return np.concatenate([_payload_bytes(v) for v in a.ravel()] or [np.zeros(0, np.uint8)])
    return np.ascontiguousarray(a).reshape(-1).view(np.uint8)


def _view_bits(view):
    return np.unpackbits(np.concatenate([_payload_bytes(rec.payload) for rec in view]))


def _views(x_value, n, seed, garble_fn=None, monkeypatch=None):
    """Every evaluator's view (one instance per pair): rows of bits, one row per evaluator."""
    if garble_fn is not None:
        monkeypatch.setattr(yao_mod, "garble", garble_fn)
    s = Session(2 * n, seed=seed, record_views=True)
    c = _lt_sub(6)
    rng = s.rng.derive("inputs")
    y = _signed(rng.uint64(n) >> np.uint64(58), 6)
    x = np.full(n, x_value)
    yao(s, c, np.arange(n), n + np.arange(n), [x], [y], output="garbler")
    return np.stack([_view_bits(s.net.view(n + i)) for i in range(n)])


def _two_world_stats(a, b):
    """Per-feature two-proportion z statistics between worlds (rows = independent runs)."""
    pa, pb = a.mean(axis=0), b.mean(axis=0)
    pool = (pa + pb) / 2
    se = np.sqrt(pool * (1 - pool) * (2 / a.shape[0]))
    z = np.divide(pa - pb, se, out=np.zeros_like(pa), where=se > 0)
    return z


def _independent(a, b):
    """Two-world test at level about 1e-3.

    Bonferroni over F features: |z| < Phi^-1(1 - 1e-3 / (2F)) (about 5.3 for
    F = 10^4); and the sum of z^2 over the non-constant features, chi^2 with
    F' degrees of freedom under independence, within 6 standard deviations
    (sqrt(2F')) of F'.
    """
    from scipy.stats import norm

    z = _two_world_stats(a, b)
    F = z.size
    live = np.count_nonzero(z)
    bound = norm.isf(1e-3 / (2 * F))
    chi = float(np.sum(z ** 2))
    return np.abs(z).max() < bound and abs(chi - live) < 6 * np.sqrt(2 * max(live, 1)), z


@pytest.mark.slow
def test_evaluator_view_independent_of_garbler_input(monkeypatch):
    """Tables, garbler labels, label corrections and OT messages the evaluator receives:
    the same distribution whether the garbler's input is 0 or -1 (all ones)."""
    n = 400
    a = _views(0, n, seed=1)
    b = _views(-1, n, seed=2)
    assert a.shape == b.shape and a.shape[1] > 4000
    ok, z = _independent(a, b)
    assert ok, f"max |z| = {np.abs(z).max():.2f}"
    # negative control: a garbler whose input zero-labels have permute bit 0 leaks x
    real = yao_mod.garble

    def leaky(circuit, delta, *, rng=None, **kw):
        P = delta.shape[0]
        zero = rng.uint64((P, circuit.input_widths[0], 2))
        zero[..., 0] &= ~np.uint64(1)
        return real(circuit, delta, rng=rng, input_zero={0: zero}, **kw)

    a2 = _views(0, n, seed=1, garble_fn=leaky, monkeypatch=monkeypatch)
    b2 = _views(-1, n, seed=2, garble_fn=leaky, monkeypatch=monkeypatch)
    ok2, z2 = _independent(a2, b2)
    assert not ok2 and np.abs(z2).max() > 15


@pytest.mark.slow
def test_garbler_view_independent_of_evaluator_input():
    """The garbler sees the OT's receiver messages and d = y ^ b: independent of y."""
    n = 300

    def views(y_value, seed):
        s = Session(2 * n, seed=seed, record_views=True)
        c = _lt_sub(6)
        yao(s, c, np.arange(n), n + np.arange(n), [np.full(n, 3)], [np.full(n, y_value)])
        return np.stack([_view_bits(s.net.view(i)) for i in range(n)])

    ok, z = _independent(views(0, 5), views(-1, 6))
    assert ok, f"max |z| = {np.abs(z).max():.2f}"


# -- bad input -----------------------------------------------------------------------

@pytest.mark.parametrize("kw, match", [
    (dict(output="alice"), "output must be one of"),
    (dict(garblers=[0, 1]), "same length"),
    (dict(garblers=[1, 1, 1]), r"garblers\[p\] and evaluators\[p\] must differ"),
    (dict(garblers=[0, 0, 9]), "garblers contains an id outside"),
    (dict(garblers=np.array([0.0, 0.0, 0.0])), "1-d integer array"),
    (dict(garbler_inputs=[np.zeros((3, 7), np.uint8)]), r"garbler_inputs\[0\] must have width 8"),
    (dict(garbler_inputs=[np.zeros(4, np.int64)]), r"garbler_inputs\[0\] has 4 instances"),
    (dict(evaluator_inputs=[]), "evaluator_inputs must give 1 group"),
    (dict(ot=lambda *a, **k: (np.zeros((3, 8, 16), np.uint8),) * 2 if False else
          (np.zeros((3, 7, 16), np.uint8), np.zeros((3, 7, 16), np.uint8))),
     r"OT output q must have shape \(3, 8, 16\)"),
])
def test_yao_errors(kw, match):
    s = Session(3, seed=1)
    args = dict(garblers=[0, 0, 0], evaluators=[1, 1, 2], garbler_inputs=[np.zeros(3, np.int64)],
                evaluator_inputs=[np.zeros(3, np.int64)], output="evaluator", ot=correlated_ot)
    args.update(kw)
    with pytest.raises(ValueError, match=match):
        yao(s, _lt_sub(), **args)


def test_yao_needs_parties_and_narrow_additive_outputs():
    s = Session(2, seed=1)
    with pytest.raises(ValueError, match="no input parties"):
        yao(s, load("neg64"), [0], [1], [], [np.zeros(1, np.uint64)])
    aes = load("aes_128")
    with pytest.raises(ValueError, match="at most 64 bits"):
        yao(s, aes, [0], [1], [np.zeros((1, 128), np.uint8)], [np.zeros((1, 128), np.uint8)],
            output="additive")
    with pytest.raises(TypeError, match="circuit must be a Circuit"):
        yao(s, "aes", [0], [1])


def test_builder_kernel_gives_additive_shares_in_the_ring():
    """|x - y| of 40-bit inputs as additive shares in Z_2^40 (the U-MPC use)."""
    l = 40
    b = CircuitBuilder("gini")
    x = b.input(l, party=GARBLER)
    y = b.input(l, party=EVALUATOR)
    b.output(b.abs(x.sext(l + 1) - y.sext(l + 1))[:l])
    c = b.build()
    s = Session(2, seed=4)
    P = 64
    rng = s.rng.derive("in")
    xs = _signed(rng.uint64(P) >> np.uint64(24), l)
    ys = _signed(rng.uint64(P) >> np.uint64(24), l)
    r = yao(s, c, np.zeros(P, np.int64), np.ones(P, np.int64), [xs], [ys], output="additive")
    total = (r.garbler[0] + r.evaluator[0]) & np.uint64((1 << l) - 1)
    np.testing.assert_array_equal(total, np.abs(xs - ys).astype(np.uint64))
    np.testing.assert_array_equal(bits_to_int(evaluate(c, [xs, ys])[0]), total)
    assert bytes_to_bits(b"\x01").shape == (1, 8)


@pytest.mark.parametrize("mode", OUTPUT_MODES)
def test_empty_batch_sends_nothing(mode):
    s = Session(2, seed=1)
    none = np.zeros(0, np.int64)
    r = yao(s, _lt_sub(), none, none, [none], [none], output=mode)
    assert r.value(0).shape == (0,)
    assert r.costs["measured"]["online"] == {"bits": 0, "rounds": 0}
    assert r.costs["measured"]["offline"] == {"bits": 0, "rounds": 0}
