"""Secure values: operators against numpy, bounds and errors, input/output, processes."""

import numpy as np
import pytest

from fss import FSSGates
from mpc.protocols.providers import CircuitComparisons
from mpc.run.launch import launch
from mpc.session import Session
from mpc.values import SecureArray, received, stack, where

#: FSS gates for two holders, the p-party circuit for more
FSS = (FSSGates(), CircuitComparisons())

RNG = np.random.default_rng(20261127)


def _s(p=3, **kw):
    kw.setdefault("roles", ("dealer", "aggregator"))
    return Session(p, seed=11, comparisons=FSS, **kw)


def test_three_party_argmax_in_three_lines():
    data = RNG.integers(-1000, 1000, size=(3, 257))
    s = _s()
    x = s.input(data, by=[0, 1, 2], bound=2**20)
    got = s.output(x.argmax(axis=0), to=[0, 1, 2])
    assert np.array_equal(got, np.argmax(data, axis=0))


@pytest.mark.parametrize("p", [2, 3])
def test_arithmetic_matches_numpy(p):
    s = _s(p)
    a = RNG.integers(-500, 500, size=(p, 40))
    x = s.input(a, by=list(range(p)), bound=2**12)
    u, v = x[0], x[1]
    assert np.array_equal(s.output(u + v), a[0] + a[1])
    assert np.array_equal(s.output(u - v), a[0] - a[1])
    assert np.array_equal(s.output(-u + 7), -a[0] + 7)
    assert np.array_equal(s.output(3 - u), 3 - a[0])
    assert np.array_equal(s.output(u * 5), a[0] * 5)
    assert np.array_equal(s.output(u * v), a[0] * a[1])
    assert np.array_equal(s.output(x.sum(axis=0)), a.sum(axis=0))
    assert s.output(u.dot(v)) == int(a[0] @ a[1])
    assert np.allclose(s.output(u * 0.5), a[0] * 0.5, atol=2.0**-13)


@pytest.mark.parametrize("p", [2, 3])
def test_comparisons_and_selection_match_numpy_including_ties(p):
    s = _s(p)
    a = RNG.integers(-20, 20, size=(p, 64))
    x = s.input(a, by=list(range(p)), bound=64)
    u, v = x[0], x[1]
    assert np.array_equal(s.output(u < v), a[0] < a[1])
    assert np.array_equal(s.output(u <= v), a[0] <= a[1])
    assert np.array_equal(s.output(u > v), a[0] > a[1])
    assert np.array_equal(s.output(u >= v), a[0] >= a[1])
    assert np.array_equal(s.output(u == v), a[0] == a[1])
    assert np.array_equal(s.output(u < 3), a[0] < 3)
    assert np.array_equal(s.output(where(u < v, u, v)), np.minimum(a[0], a[1]))
    assert np.array_equal(s.output(x.max(axis=0)), a.max(axis=0))
    assert np.array_equal(s.output(x.min(axis=0)), a.min(axis=0))
    assert np.array_equal(s.output(x.argmin(axis=0)), np.argmin(a, axis=0))
    assert np.array_equal(s.output(x.argmax(axis=0)), np.argmax(a, axis=0))


def test_reductions_over_longer_axes_and_odd_lengths():
    s = _s(2)
    a = RNG.integers(-100, 100, size=(2, 7, 5))
    x = s.input(a, by=[0, 1], bound=128)
    for axis in (0, 1, 2):
        assert np.array_equal(s.output(x.argmax(axis=axis)), np.argmax(a, axis=axis)), axis
        assert np.array_equal(s.output(x.max(axis=axis)), np.max(a, axis=axis))


def test_fixed_point_scales_combine_exactly():
    s = _s(2)
    a = np.array([[0.25, -1.5, 3.0], [2.0, 0.5, -0.75]])
    x = s.input(a, by=[0, 1], frac_bits=8, bound=16)
    n = s.input(np.array([[1, 2, 3], [4, 5, 6]]), by=[0, 1], bound=16)
    assert x.frac_bits == 8 and n.frac_bits == 0
    assert np.array_equal(s.output(x[0] + n[1]), a[0] + [4, 5, 6])      # rescaled, exact
    prod = x[0] * x[1]                  # truncated back to 8 bits: exact on these multiples
    assert prod.frac_bits == 8 and np.array_equal(s.output(prod), a[0] * a[1])
    assert np.array_equal(s.output(x[0] < n[0]), a[0] < [1, 2, 3])


def test_input_checks_name_the_party_and_public_values_the_ring():
    s = _s(2)
    with pytest.raises(ValueError, match="party 1 exceed the input bound"):
        s.input(np.array([[1, 2], [3, 1 << 30]]), by=[0, 1], bound=2**20)
    with pytest.raises(ValueError, match="party 0 are not finite"):
        s.input(np.array([[np.nan, 2.0], [3.0, 4.0]]), by=[0, 1], frac_bits=4, bound=8)
    with pytest.raises(ValueError, match="one row per party"):
        s.input(np.zeros((3, 2)), by=[0, 1])
    with pytest.raises(ValueError, match="at least two holders"):
        s.input(np.zeros((1, 2)), by=[0])
    x = s.input(np.zeros((2, 2), dtype=np.int64), by=[0, 1], bound=8)
    with pytest.raises(ValueError, match=r"public operand 1099511627776 is outside the range "
                                         r"of Z_2\^40"):
        x[0] + (1 << 40)
    with pytest.raises(ValueError, match="compared public value"):
        _ = x[0] < 2**45


def test_a_comparison_that_could_leave_its_domain_raises_before_any_message():
    s = _s(2)
    x = s.input(np.zeros((2, 4), dtype=np.int64), by=[0, 1])        # default bound 2^38
    before = s.net.report()["total_bits"]
    with pytest.raises(ValueError, match=r"out of the gate's domain: the difference of the "
                                         r"operands may reach 2\^39"):
        _ = x[0] < x[1] + x[1]
    assert s.net.report()["total_bits"] == before
    # within the bound it runs, on a narrow gate
    y = s.input(np.array([[5, -3, 0, 7], [1, 1, 1, 1]]), by=[0, 1], bound=2**10)
    assert np.array_equal(s.output(y[0] < y[1]), [False, True, True, False])


def test_holders_and_shares_are_checked():
    s = _s(2)
    x = s.input(np.array([[1, 2], [3, 4]]), by=[0, 1], bound=8)
    assert x.share(0).shape == (2, 2)
    with pytest.raises(ValueError, match="holds no share"):
        x.share(2)
    with pytest.raises(TypeError, match="no truth value"):
        bool(x[0] < x[1])
    with pytest.raises(ValueError, match="holders names 3"):
        SecureArray(_s(3), np.zeros((2, 4), np.uint64), [0, 1, 2])
    with pytest.raises(ValueError, match="names the dealer"):
        SecureArray(s, np.zeros((2, 4), np.uint64), [0, s.net.role("dealer")])
    with pytest.raises(ValueError, match="outside"):
        SecureArray(s, np.zeros((2, 4), np.uint64), [0, 9])
    t = _s(2)
    y = t.input(np.array([[1, 2], [3, 4]]), by=[0, 1], bound=8)
    with pytest.raises(ValueError, match="different sessions"):
        x[0] + y[0]


def test_inputs_can_be_held_by_roles_and_opened_to_a_role():
    s = Session(4, seed=3, roles=("dealer", "server-0", "server-1", "analyst"), comparisons=FSS)
    a = RNG.integers(0, 100, size=(4, 6))
    x = s.input(a, by=[0, 1, 2, 3], holders=["server-0", "server-1"], bound=128)
    assert x.holders.tolist() == [s.net.role("server-0"), s.net.role("server-1")]
    total = x.sum(axis=0)
    assert np.array_equal(s.output(total, to="analyst"), a.sum(axis=0))
    rep = s.net.report()["online"]["roles"]
    assert rep["analyst"]["received_bits"] == 2 * 6 * 40


def test_xor_values_and_their_conversion():
    s = _s(2)
    bits = RNG.integers(0, 2, size=(2, 32))
    from mpc.arith.ring import ring
    r1 = ring(1)
    sh = np.stack([bits[0] ^ 1, np.ones(32, dtype=np.int64)]).astype(np.uint64)   # XOR of rows
    x = SecureArray(s, sh, [0, 1], kind="xor", ring=r1, bound=1)
    y = SecureArray(s, np.stack([bits[1], np.zeros(32, np.int64)]).astype(np.uint64), [0, 1],
                    kind="xor", ring=r1, bound=1)
    assert np.array_equal(s.output(x ^ y), bits[0] ^ bits[1])
    assert np.array_equal(s.output(x & y), bits[0] & bits[1])
    assert np.array_equal(s.output((x & y).to_additive()), bits[0] & bits[1])
    with pytest.raises(TypeError, match="needs additive values"):
        x + y


def test_stack_and_indexing_keep_the_family():
    s = _s(2)
    x = s.input(np.array([[1, 2, 3], [4, 5, 6]]), by=[0, 1], bound=8)
    st = stack([x[0], x[1]])
    assert st.shape == (2, 3)
    assert np.array_equal(s.output(st[:, 1:]), [[2, 3], [5, 6]])


def _argmax_program(rt, data, seed):
    s = Session(3, seed=seed, runtime=rt, roles=("dealer",), record_views=True,
                comparisons=FSS)
    x = s.input(data, by=[0, 1, 2], bound=2**20)
    i = x.argmax(axis=0)
    out = s.output(i, to=[0, 1, 2])
    views = {p: [(r.phase, r.round, r.offline, r.sender, np.asarray(r.payload).tolist())
                 for r in s.net.view(p)] for p in range(4) if s.is_local(p)}
    return (out.tolist() if received(out) else None), s.net.report(), views


@pytest.mark.parametrize("groups", [[[0], [1], [2], ["dealer"]], [[0, 1], [2, "dealer"]]])
def test_argmax_across_processes_equals_the_simulator(groups):
    data = RNG.integers(0, 50, size=(3, 33))
    sim = _argmax_program(None, data, 5)
    assert sim[0] == np.argmax(data, axis=0).tolist()
    res = launch(_argmax_program, data, 5, groups=groups)
    for r in res:
        if r.value[0] is not None:
            assert r.value[0] == sim[0]
        assert r.value[1] == sim[1]
        for party, view in r.value[2].items():
            assert view == sim[2][party]
    if len(groups) == 4:                # every participant in its own process: all crosses
        counted = sim[1]["total_bits"]
        sent = sum(r.wire["payload_bytes_sent"] for r in res)
        frames = sum(r.wire["frames_sent"] for r in res)
        assert counted / 8 <= sent < counted / 8 + frames


def test_argmax_across_processes_with_secure_randomness():
    data = RNG.integers(0, 50, size=(3, 33))
    res = launch(_argmax_program, data, None, groups=[[0], [1], [2], ["dealer"]])
    for r in res[:3]:
        assert r.value[0] == np.argmax(data, axis=0).tolist()


def _read_remote(rt):
    s = Session(2, seed=1, runtime=rt, roles=("dealer",), comparisons=FSS)
    x = s.input(np.array([[1, 2], [3, 4]]), by=[0, 1], bound=8)
    mine = next(p for p in (0, 1) if s.is_local(p))
    other = 1 - mine
    x.share(mine)
    try:
        x.share(other)
    except PermissionError as e:
        return str(e)
    return "read"


def test_a_share_that_is_not_local_cannot_be_read():
    res = launch(_read_remote, groups=[[0], [1, "dealer"]])
    assert all("does not run in this process" in r.value for r in res)
