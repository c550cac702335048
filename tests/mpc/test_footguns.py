"""The footguns a protocol author met (issue 26): each one raises a clear error, or is gone."""

import numpy as np
import pytest

from fss import gates
from mpc.arith.ring import ring
from mpc.arith.rng import CSPRNG
from mpc.arith.sharing import additive_share
from mpc.protocols import compare
from mpc.protocols.beaver import multiply
from mpc.session import Session


def test_party_streams_never_restart():
    """`s.rng.party(i)` restarted party i's stream at every call (masks repeated)."""
    s = Session(3, seed=1)
    with pytest.raises(TypeError, match=r"session.party_rng"):
        s.rng.party(0)
    a = s.party_rng(0).uint64(5)
    b = s.party_rng(0).uint64(5)
    assert not np.array_equal(a, b) and s.party_rng(0) is s.party_rng(0)


def test_sharing_a_secret_outside_the_ring_raises():
    """`additive_share` of 2^50 in a 40-bit ring wrapped to 0 with no error."""
    r = ring(40)
    with pytest.raises(ValueError, match="outside the range of Z_2"):
        additive_share(r, 1 << 50, 2, CSPRNG(1))
    with pytest.raises(ValueError, match="outside Z_2"):
        additive_share(r, np.array([1 << 50], np.uint64), 2, CSPRNG(1))
    # the whole signed and unsigned range is accepted
    for v in (-(1 << 39), (1 << 40) - 1, 0):
        assert int(additive_share(r, v, 3, CSPRNG(2)).sum() % (1 << 40)) == v % (1 << 40)


def _open(s, sh):
    return s.ring.to_signed(s.ring.sum(sh, axis=0))


def test_compare_less_than_is_exact_without_a_bound_and_checks_a_given_bound():
    """`compare.less_than` on operands whose difference wraps returned a wrong answer."""
    s = Session(3, seed=4, bits=16)
    lim = 1 << 15
    a = np.array([-lim, lim - 1, -5, 7, 0, lim - 1, -lim])
    b = np.array([lim - 1, -lim, 6, -8, 0, lim - 1, -lim])
    sa = additive_share(s.ring, a, 3, CSPRNG(5))
    sb = additive_share(s.ring, b, 3, CSPRNG(6))
    h = np.arange(3)
    assert np.array_equal(_open(s, compare.less_than(s, sa, sb, h)), (a < b).astype(int))
    assert np.array_equal(_open(s, compare.greater_than(s, sa, sb, h)), (a > b).astype(int))
    with pytest.raises(ValueError, match="could wrap"):
        compare.less_than(s, sa, sb, h, bound=lim)
    ok = compare.less_than(s, sa[:, 2:5], sb[:, 2:5], h, bound=100)
    assert np.array_equal(_open(s, ok), (a[2:5] < b[2:5]).astype(int))


def test_a_fixed_point_constant_names_its_scale_when_inputs_and_outputs_differ():
    """`ops.const(1.0)` in an order kernel was encoded at the output scale."""
    from mpc.arith.ring import fixed_point
    from ustat.secure import SecureOps
    s = Session(2, seed=1)
    ops = SecureOps(s, np.array([[0], [1]]), input_fp=fixed_point(40, 38))
    with pytest.raises(ValueError, match=r"ambiguous.*scale='input'"):
        ops.const(1.0)
    assert ops.const(1.0, scale="input")[0, 0] == 1 << 38
    assert ops.const(1.0, scale="output")[0, 0] == 1 << s.fp.frac_bits
    same = SecureOps(s, np.array([[0], [1]]))          # arithmetic kernels: one scale
    assert same.const(1.0)[0, 0] == 1 << s.fp.frac_bits


@pytest.mark.parametrize("role", ["dealer", "aggregator"])
def test_a_holder_may_not_be_the_dealer_or_the_aggregator(role):
    s = Session(2, seed=1)
    x = np.zeros((2, 3), np.uint64)
    h = np.array([0, s.net.role(role)])
    for call in (lambda: multiply(s, x, x, h), lambda: compare.ltz(s, x, h),
                 lambda: gates.less_than(s, x, x, h)):
        with pytest.raises(ValueError, match=f"names the {role}"):
            call()


def test_a_wrong_holder_count_is_named_not_a_broadcast_error():
    s = Session(4, seed=1)
    x = np.zeros((3, 5), np.uint64)
    for call in (lambda h: multiply(s, x, x, h), lambda h: compare.ltz(s, x, h),
                 lambda h: compare.less_than(s, x, x, h), lambda h: gates.less_than(s, x, x, h)):
        for h in ([0, 1], [0, 1, 2, 3]):
            with pytest.raises(ValueError, match=r"holders names \d parties|\d share rows"):
                call(np.array(h))


def test_forgetting_a_send_or_a_round_is_not_possible_with_secure_values():
    """`input`/`output` and every operator send and count by themselves: one round each."""
    s = Session(3, seed=2, roles=("dealer",))
    x = s.input(np.arange(6).reshape(3, 2), by=[0, 1, 2], bound=16)
    rep = s.net.report()["online"]
    assert rep["rounds"] == 1 and rep["bits"] == 3 * 2 * 2 * 40         # (p - 1) shares each
    s.output(x.sum(axis=0), to=0)
    assert s.net.report()["online"]["rounds"] == 2
