"""Secure values compared by garbled circuits (``Session(comparisons=GarbledCircuits())``).

In one process and in processes too.
"""

import operator

import numpy as np
import pytest

from mpc.arith.rng import CSPRNG
from mpc.arith.sharing import additive_share
from mpc.gc.provider import GarbledCircuits, comparison_circuit, gc_comparison
from mpc.gc.yao import additive_circuit
from mpc.run.launch import launch
from mpc.session import Session
from mpc.values import received
from tests.process_helpers import (
    assert_same_as_simulator,
    assert_socket_bytes,
    local_rows,
    result,
    wire_mark,
)

OPS = {"<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge,
       "==": operator.eq}


def _compare_all(s, a, b, bound):
    x = s.input(np.stack([a, b]), by=[0, 1], bound=bound)
    return {op: s.output(f(x[0], x[1])) for op, f in OPS.items()}


@pytest.mark.parametrize("bits", [8, 12])      # 8: the full ring (d = l); 12: in_bits d = 8
def test_exhaustive_on_a_small_ring(bits):
    s = Session(2, bits=bits, frac_bits=0, seed=1, comparisons=GarbledCircuits())
    v = np.arange(-31, 32)
    a, b = (m.ravel() for m in np.meshgrid(v, v, indexing="ij"))
    for op, got in _compare_all(s, a, b, 32).items():
        np.testing.assert_array_equal(got, OPS[op](a, b), err_msg=op)


@pytest.mark.parametrize("bound", [2 ** 37, 2 ** 36])     # d = l = 40, and d = 39
def test_randomized_on_40_bits(bound):
    s = Session(2, seed=2, comparisons=GarbledCircuits())
    rng = np.random.default_rng(bound)
    a = rng.integers(-bound + 1, bound, 1000)
    b = rng.integers(-bound + 1, bound, 1000)
    b[::5] = a[::5]
    b[1::7] = a[1::7] + 1
    for op, got in _compare_all(s, a, b, bound).items():
        np.testing.assert_array_equal(got, OPS[op](a, b), err_msg=op)
    x = s.input(np.stack([a, b]), by=[0, 1], bound=bound)
    np.testing.assert_array_equal(s.output(x[0] < 5), a < 5)             # a public operand


def test_per_instance_holders_and_the_cost():
    """Each instance between its own two parties; shares held by them sum to the bit."""
    s = Session(4, bits=16, frac_bits=0, seed=3, comparisons=GarbledCircuits())
    m, d, l = 40, 10, 16
    h = np.stack([np.arange(m) % 4, (np.arange(m) + 1 + np.arange(m) // 4 % 3) % 4])
    z = np.random.default_rng(0).integers(-(1 << (d - 1)) + 1, 1 << (d - 1), m)
    z[::6] = 0
    shares = additive_share(s.ring, z.astype(np.uint64) & s.ring.mask, 2, CSPRNG(9))
    for op, want in (("ltz", z < 0), ("eqz", z == 0)):
        before = s.net.report()
        out = gc_comparison(s, shares, h, op, d)
        np.testing.assert_array_equal((out[0] + out[1]) & s.ring.mask, want)
        after = s.net.report()
        n_and = additive_circuit(comparison_circuit(op, d, l)).schedule.n_and
        online = after["online"]["bits"] - before["online"]["bits"]
        assert online == m * (128 * (d + l) + 129 * d)
        assert after["online"]["rounds"] - before["online"]["rounds"] == 2
        tables = m * (256 * n_and + l)
        assert after["offline"]["bits"] - before["offline"]["bits"] > tables
    assert comparison_circuit("ltz", d, l).schedule.n_and <= d - 1


def test_gc_backend_needs_two_holders():
    s = Session(3, bits=16, frac_bits=0, seed=1, comparisons=GarbledCircuits())
    x = s.input(np.zeros((3, 4), np.int64), by=[0, 1, 2], bound=8)
    with pytest.raises(ValueError, match=r"GarbledCircuits.* serves 3 holders"):
        _ = x[0] < x[1]
    with pytest.raises(ValueError, match="op must be one of"):
        comparison_circuit("gtz", 4, 8)


# -- in processes ---------------------------------------------------------------------------------

def program(rt, seed, a, b, views=True):
    s = Session(2, bits=16, frac_bits=0, seed=seed, runtime=rt, comparisons=GarbledCircuits(),
                record_views=views)
    mark = wire_mark(s)
    x = s.input(np.stack([a, b]), by=[0, 1], bound=1 << 10)
    out = {}
    for name, c in (("lt", x[0] < x[1]), ("eq", x[0] == x[1]), ("ge", x[0] >= x[1])):
        out[name + "-shares"] = local_rows(s, [0, 1], c.shares)
        opened = s.output(c, to=[0, 1])
        out[name] = local_rows(s, [0, 1], np.stack([opened, opened]) if received(opened)
                               else np.zeros((2, a.size), np.int64))
    return result(s, out, mark)


@pytest.fixture(scope="module")
def runs():
    rng = np.random.default_rng(4)
    a, b = rng.integers(-1000, 1000, (2, 300))
    b[::4] = a[::4]
    return {"inputs": (a, b), "sim": program(None, 5, a, b),
            2: launch(program, 5, a, b, groups=[[0, "dealer"], [1, "aggregator"]]),
            3: launch(program, 5, a, b, groups=[[0], [1], ["dealer", "aggregator"]]),
            "secure": launch(program, None, a, b, False,
                             groups=[[0], [1], ["dealer", "aggregator"]])}


@pytest.mark.parametrize("procs", [2, 3])
def test_processes_give_the_simulators_bits(runs, procs):
    assert_same_as_simulator(runs["sim"], runs[procs])


def test_secure_processes_are_correct_and_send_the_counted_bytes(runs):
    a, b = runs["inputs"]
    sec = runs["secure"]
    for name, f in (("lt", np.less), ("eq", np.equal), ("ge", np.greater_equal)):
        for r in sec[:2]:                                   # parties 0 and 1 both get it
            idx, rows = r.value["outputs"][name]
            assert idx.tolist() == [r.rank]
            np.testing.assert_array_equal(rows[0], f(a, b))
    assert_socket_bytes(sec, sec[0].value["report"]["total_bits"])
    assert sec[0].value["report"] == runs["sim"]["report"]
