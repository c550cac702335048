"""Garbling and evaluation on threads: the same tables, labels and outputs for any
``workers``, correct outputs, and the default's choice of threads per circuit shape."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mpc.arith.rng import CSPRNG
from mpc.gc import EVALUATOR, GARBLER, CircuitBuilder, bits_to_int, decode, evaluate_garbled
from mpc.gc import blocks as blocks_mod
from mpc.gc.blocks import threads_for
from mpc.gc.encoding import group_bits
from mpc.gc.garble import garble
from mpc.gc.yao import yao
from mpc.machine import threads
from mpc.session import Session
from tests.mpc.gc._helpers import CASES, load


def _lt40():
    b = CircuitBuilder("lt40")
    x = b.input(40, party=GARBLER)
    y = b.input(40, party=EVALUATOR)
    b.output(x.lt(y, signed=True))
    return b.build()


def _run(c, P, workers, seed=5):
    """Garble P instances from one seed, evaluate on random inputs; every output as bytes."""
    gc, keys = garble(c, P, rng=CSPRNG(seed), workers=workers)
    bits = CSPRNG(seed + 1).bits((P, c.n_input_bits))
    groups = np.split(bits, np.cumsum(c.input_widths)[:-1], axis=1)
    out = evaluate_garbled(gc, [keys.encode(g, b) for g, b in enumerate(groups)],
                           workers=workers)
    return (gc.tables.tobytes(), keys.delta.tobytes(), keys.decode_bits.tobytes(),
            out.tobytes()), decode(out, keys.decode_bits), bits


@pytest.mark.parametrize("P", [0, 1, 2, 7, 64])
@pytest.mark.parametrize("workers", [2, 3, 5])
def test_adder_bit_identical_and_correct_for_any_workers(P, workers, monkeypatch):
    c = load("adder64")
    monkeypatch.setattr(blocks_mod, "MIN_BLOCK", 1)
    monkeypatch.setattr(blocks_mod, "BLOCK_BYTES", 16 * c.schedule.n_slots * 3)  # 3 per block
    one, _, _ = _run(c, P, 1)
    many, out, bits = _run(c, P, workers)
    assert many == one
    if P:
        x, y = bits_to_int(bits[:, :64]), bits_to_int(bits[:, 64:])
        np.testing.assert_array_equal(bits_to_int(out), x + y)


@settings(max_examples=15, deadline=None)
@given(P=st.integers(1, 40), workers=st.integers(2, 4), per_block=st.integers(1, 9))
def test_lt40_bit_identical_for_any_blocks_and_workers(P, workers, per_block):
    c = _lt40()
    old = (blocks_mod.MIN_BLOCK, blocks_mod.BLOCK_BYTES)
    blocks_mod.MIN_BLOCK, blocks_mod.BLOCK_BYTES = 1, 16 * c.schedule.n_slots * per_block
    try:
        one, _, _ = _run(c, P, 1, seed=P)
        many, out, bits = _run(c, P, workers, seed=P)
    finally:
        blocks_mod.MIN_BLOCK, blocks_mod.BLOCK_BYTES = old
    assert many == one
    sx, sy = (bits_to_int(bits[:, i:i + 40]).astype(np.int64) for i in (0, 40))
    sx, sy = (np.where(v >= 1 << 39, v - (1 << 40), v) for v in (sx, sy))
    np.testing.assert_array_equal(bits_to_int(out), (sx < sy).astype(np.uint64))


def test_aes_batch_on_threads_matches_pycryptodome(rng):
    c = load("aes_128")
    P = 6
    inputs, expected = CASES["aes_128"](rng, P)
    groups, _ = group_bits(inputs, c.input_widths)
    ref = garble(c, P, rng=CSPRNG(9), workers=1)
    gc, keys = garble(c, P, rng=CSPRNG(9), workers=2)
    np.testing.assert_array_equal(gc.tables, ref[0].tables)
    out = evaluate_garbled(gc, [keys.encode(g, b) for g, b in enumerate(groups)], workers=2)
    np.testing.assert_array_equal(decode(out, keys.decode_bits), expected[0])


def test_threads_are_used_when_asked(monkeypatch):
    seen = []
    real = blocks_mod.run_lanes

    def spy(fn, spans, w):
        seen.append((len(spans), w))
        return real(fn, spans, w)

    monkeypatch.setattr(blocks_mod, "run_lanes", spy)
    c = load("adder64")
    _run(c, 100, 2)
    assert seen and all(w == 2 and n % 2 == 0 for n, w in seen)   # equal shares per thread


def test_default_threads_follow_the_width_of_the_and_layers(monkeypatch):
    monkeypatch.setattr(blocks_mod, "cpu_count", lambda: 4)
    aes, adder, lt = load("aes_128").schedule, load("adder64").schedule, _lt40().schedule
    assert threads_for(aes, 1000) == 4           # 107 ANDs per layer: wide
    assert threads_for(aes, 8) == 1              # too few instances per thread
    assert threads_for(adder, 10 ** 6) == 1      # one AND per layer: GIL-bound on threads
    assert threads_for(lt, 10 ** 6) == 1
    assert threads_for(adder, 10, workers=3) == 3     # asked: as asked
    monkeypatch.setattr(blocks_mod, "cpu_count", lambda: 1)
    assert threads_for(aes, 10 ** 4) == 1


@pytest.mark.parametrize("bad, err", [(0, ValueError), (-1, ValueError), (2.0, TypeError),
                                      (True, TypeError)])
def test_bad_workers_refused(bad, err):
    c = load("adder64")
    with pytest.raises(err, match="workers"):
        garble(c, 2, rng=CSPRNG(1), workers=bad)
    gc, _keys = garble(c, 2, rng=CSPRNG(1))
    with pytest.raises(err, match="workers"):
        evaluate_garbled(gc, np.zeros((2, 128, 2), np.uint64), workers=bad)


def test_yao_uses_the_sessions_workers_and_gives_the_same_bits():
    c = _lt40()
    P = 300
    xs = CSPRNG(3).integers(1 << 40, (P,)) - (1 << 39)
    ys = CSPRNG(4).integers(1 << 40, (P,)) - (1 << 39)
    outs = []
    for w in (1, 2):
        s = Session(2, seed=8)
        s.workers = w
        r = yao(s, c, np.zeros(P, np.int64), np.ones(P, np.int64), [xs], [ys])
        outs.append((bits_to_int(r.evaluator[0]), s.net.report()["total_bits"]))
    assert np.array_equal(outs[0][0], outs[1][0]) and outs[0][1] == outs[1][1]
    np.testing.assert_array_equal(outs[0][0], (xs < ys).astype(np.uint64))


def test_threads_module_is_shared_with_fss():
    from fss import _pool
    assert _pool.run_blocks is threads.run_blocks and _pool.cpu_count is threads.cpu_count
