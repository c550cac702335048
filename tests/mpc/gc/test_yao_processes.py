"""Yao and OT with their parties in separate processes: the simulator's bits, real bytes.

One program runs Yao in every output mode (instances between different
pairs, a party garbling some and evaluating others), AES-128 from the
Bristol file, and correlated / random / chosen OT (direct base OTs, IKNP,
groups of several sizes, a pair whose M is not a multiple of 8). It runs in
the simulator and in 2 and 3 processes with one debug seed (the same outputs,
report and views), then without a seed with every party in its own process
(correct outputs; bytes on the sockets = counted bits / 8).
"""

import numpy as np
import pytest

from mpc.arith.rng import CSPRNG
from mpc.gc import bits_to_int
from mpc.gc.yao import OUTPUT_MODES, yao
from mpc.ot import chosen_ot, correlated_ot, random_ot
from mpc.run.launch import launch
from mpc.session import Session
from tests.mpc.gc._helpers import CASES, load
from tests.mpc.gc.test_yao import _lt_sub
from tests.process_helpers import (
    assert_same_as_simulator,
    assert_socket_bytes,
    local_rows,
    result,
    wire_mark,
)

GROUPS_2 = [[0, 2], [1, "dealer", "aggregator"]]
GROUPS_3 = [[0], [1], [2, "dealer", "aggregator"]]
G = np.array([0, 1, 0, 2, 1, 2, 0])              # garbler / OT sender of each instance
E = np.array([1, 0, 2, 0, 2, 1, 1])
SND = np.array([0, 2, 1, 0, 1, 0, 0, 1])          # OT pairs: groups of 1 to 3 instances
RCV = np.array([1, 0, 0, 2, 0, 1, 2, 0])
OT_CASES = ((5, "auto", 12), (3, "base", 128), (45, "iknp", 128), (43, "auto", 100))
OT_KINDS = {5: ("correlated", "random"), 3: ("correlated", "chosen"),
            45: ("correlated", "random"), 43: ("correlated", "chosen")}


def _inputs():
    rng = CSPRNG(77)
    x = (rng.integers(256, (G.size,)) - 128).astype(np.int64)
    y = (rng.integers(256, (G.size,)) - 128).astype(np.int64)
    y[::3] = x[::3]
    ots = {}
    for m, _, _ in OT_CASES:
        P = SND.size
        delta = rng.bytes_array(16 * P).reshape(P, 16)
        delta[:, 0] |= 1
        delta[[0, 5]] = delta[6]                      # pair (0, 1): one shared, one distinct
        ots[m] = (rng.bits((P, m)), delta, rng.bytes_array(P * m * 3).reshape(P, m, 3),
                  rng.bytes_array(P * m * 3).reshape(P, m, 3))
    return x, y, ots


def program(rt, seed, aes, aes_inputs, x, y, ots, views=True):
    s = Session(3, seed=seed, runtime=rt, record_views=views)
    mark = wire_mark(s)
    c = _lt_sub()
    out = {}
    for mode in OUTPUT_MODES:
        r = yao(s, c, G, E, [x], [y], output=mode)
        for side, ids in (("garbler", G), ("evaluator", E)):
            got = getattr(r, side)
            if got is not None:
                for j, v in enumerate(got):
                    out[(mode, side, j)] = local_rows(s, ids, v)
    if aes is not None:
        r = yao(s, aes, [0, 0], [1, 1], [aes_inputs[0]], [aes_inputs[1]])
        out["aes"] = local_rows(s, [1, 1], r.evaluator[0])
    for m, method, cross in OT_CASES:
        ch, delta, x0, x1 = ots[m]
        kw = dict(method=method, crossover=cross)
        for kind in OT_KINDS[m]:
            rs, rr = s.rng.derive("ot-s", kind, m), s.rng.derive("ot-r", kind, m)
            if kind == "correlated":
                q, t = correlated_ot(s, SND, RCV, ch, delta, rng_sender=rs, rng_receiver=rr, **kw)
                out[(kind, m, "q")], out[(kind, m, "t")] = local_rows(s, SND, q), \
                    local_rows(s, RCV, t)
            elif kind == "random":
                m0, m1, mc = random_ot(s, SND, RCV, ch, rng_sender=rs, rng_receiver=rr,
                                       length=20, **kw)
                out[(kind, m, "m")] = local_rows(s, SND, np.stack([m0, m1], axis=1))
                out[(kind, m, "mc")] = local_rows(s, RCV, mc)
            else:
                got = chosen_ot(s, SND, RCV, ch, x0, x1, rng_sender=rs, rng_receiver=rr, **kw)
                out[(kind, m)] = local_rows(s, RCV, got)
    return result(s, out, mark)


def _aes():
    try:
        aes = load("aes_128")
    except pytest.skip.Exception:
        return None, None, None
    inputs, expected = CASES["aes_128"](CSPRNG(5), 2)
    return aes, inputs, expected[0]


@pytest.fixture(scope="module")
def runs():
    aes, aes_in, aes_out = _aes()
    x, y, ots = _inputs()
    args = (aes, aes_in, x, y, ots)
    return {"sim": program(None, 3, *args),
            2: launch(program, 3, *args, groups=GROUPS_2),
            3: launch(program, 3, *args, groups=GROUPS_3),
            "secure": launch(program, None, *args, False, groups=GROUPS_3),
            "expected": (x, y, ots, aes_out)}


@pytest.mark.parametrize("procs", [2, 3])
def test_processes_give_the_simulators_bits(runs, procs):
    assert_same_as_simulator(runs["sim"], runs[procs])


def _merged(runs, name):
    """The rows of output ``name`` gathered from every process (each row from its owner)."""
    parts = [r.value["outputs"][name] for r in runs]
    n = max((int(idx.max()) + 1 for idx, _ in parts if idx.size), default=0)
    full = None
    for idx, rows in parts:
        if full is None:
            full = np.zeros((n,) + rows.shape[1:], rows.dtype)
        full[idx] = rows
    return full


def test_secure_run_is_correct(runs):
    sec = runs["secure"]
    x, y, ots, aes_out = runs["expected"]
    for mode in OUTPUT_MODES:
        if mode == "additive":
            lt = (_merged(sec, (mode, "garbler", 0)) + _merged(sec, (mode, "evaluator", 0))) % 2
            diff = (_merged(sec, (mode, "garbler", 1)) + _merged(sec, (mode, "evaluator", 1)))
            diff = (diff % 256).astype(np.int64)
            diff = np.where(diff >= 128, diff - 256, diff)
        elif mode == "xor":
            lt = bits_to_int(_merged(sec, (mode, "garbler", 0)) ^ _merged(sec, (mode, "evaluator",
                                                                                  0)))
            diff = bits_to_int(_merged(sec, (mode, "garbler", 1))
                               ^ _merged(sec, (mode, "evaluator", 1)), signed=True)
        else:
            side = "garbler" if mode == "garbler" else "evaluator"
            lt = bits_to_int(_merged(sec, (mode, side, 0)))
            diff = bits_to_int(_merged(sec, (mode, side, 1)), signed=True)
        np.testing.assert_array_equal(lt, x < y)
        np.testing.assert_array_equal(diff, ((x - y + 128) % 256) - 128)
    if aes_out is not None:
        np.testing.assert_array_equal(_merged(sec, "aes"), aes_out)      # pycryptodome's AES
    for m, _, _ in OT_CASES:
        ch, delta, x0, x1 = ots[m]
        q, t = _merged(sec, ("correlated", m, "q")), _merged(sec, ("correlated", m, "t"))
        np.testing.assert_array_equal(t, q ^ (ch[..., None] * delta[:, None, :]))
        if "random" in OT_KINDS[m]:
            pair, mc = _merged(sec, ("random", m, "m")), _merged(sec, ("random", m, "mc"))
            np.testing.assert_array_equal(mc, np.where(ch[..., None] == 1, pair[:, 1],
                                                       pair[:, 0]))
            assert not np.array_equal(pair[:, 0], pair[:, 1])
        else:
            np.testing.assert_array_equal(_merged(sec, ("chosen", m)),
                                          np.where(ch[..., None] == 1, x1, x0))


def test_socket_bytes_are_the_counted_bits(runs):
    sec = runs["secure"]
    assert_socket_bytes(sec, sec[0].value["report"]["total_bits"])
    assert sec[0].value["report"] == runs["sim"]["report"]     # counts do not depend on the seed
