"""Party hosts absent at start-up (issue 36 item 5): a dropout where the run allows one.

A host of ``may_vanish`` that never connects is left out (``gone``) by the
relay, by the hosts that meet through it and by a role that dials it; the
others still exchange. A host outside ``may_vanish`` is a fault, as before.
Threads of this process on loopback, short timeouts, every socket closed.
"""

import socket

import numpy as np
import pytest

from mpc.wire import frames as fr
from mpc.wire.relay import Relay, RelayError
from mpc.wire.transport import Expected, Outgoing, SocketMesh, TransportError
from tests.mpc.wire._threads import run_all

SESSION = 0x5EED
NAMES = ["host-0", "host-1", "host-2", "host-3"]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _serve(relay):
    try:
        relay.accept_all()
        return relay.serve()
    finally:
        relay.close()


def test_absent_hosts_are_left_out_and_the_others_exchange_through_the_relay():
    hosts = {0, 1, 2, 3}
    relay = Relay(sorted(hosts), NAMES, SESSION, connect_timeout=1.5, may_vanish=hosts).open()
    meshes = [SocketMesh.open(r, 4, SESSION, timeout=5.0, connect_timeout=1.5,
                              relayed=hosts - {r}, may_vanish=hosts) for r in (0, 1)]
    addrs = [("127.0.0.1", 1)] * 4           # never dialled: party hosts meet through the relay
    data = np.arange(5, dtype=np.uint64)

    def host(m):
        try:
            m.connect(addrs, relay=("127.0.0.1", relay.port))
            peer = 1 - m.rank
            got = m.exchange(1, {peer: [Outgoing(0, data.dtype, 64, data.shape,
                                                 fr.pack(data + m.rank, 64))]},
                             {peer: [Expected(0, data.dtype, 64, data.shape)]})
            return m.gone, m.relay.hosts, got[peer][0]
        finally:
            m.close()

    res, errs = run_all([lambda: host(meshes[0]), lambda: host(meshes[1]), lambda: _serve(relay)])
    assert errs == [None, None, None], errs
    for r in (0, 1):
        gone, others, got = res[r]
        assert gone == {2, 3} and others == {1 - r}          # both absent hosts, not one
        assert np.array_equal(got, data + (1 - r))


def test_an_absent_host_that_may_not_vanish_ends_the_run():
    relay = Relay([0, 1, 2], NAMES[:3], SESSION, connect_timeout=1.0, may_vanish={0}).open()
    meshes = [SocketMesh.open(r, 3, SESSION, timeout=2.0, connect_timeout=1.0,
                              relayed={0, 1, 2} - {r}, may_vanish={0}) for r in (0, 1)]

    def host(m):
        try:
            m.connect([("127.0.0.1", 1)] * 3, relay=("127.0.0.1", relay.port))
        finally:
            m.close()

    def accept():
        try:
            relay.accept_all()
        finally:
            relay.close()

    _, errs = run_all([lambda: host(meshes[0]), lambda: host(meshes[1]), accept])
    assert isinstance(errs[2], RelayError) and "never connected to the relay: host-2" in str(
        errs[2])
    assert all(isinstance(e, TransportError) for e in errs[:2])


@pytest.mark.parametrize("may_vanish", [True, False])
def test_a_role_dialing_an_absent_host_leaves_it_out_only_if_it_may_vanish(may_vanish):
    m = SocketMesh.open(1, 2, SESSION, timeout=1.0, connect_timeout=0.6,
                        may_vanish={0} if may_vanish else ())
    try:
        if may_vanish:
            m.connect([("127.0.0.1", _free_port()), ("127.0.0.1", m.port)])
            assert m.gone == {0}
        else:
            with pytest.raises(TransportError, match="could not connect to process 0"):
                m.connect([("127.0.0.1", _free_port()), ("127.0.0.1", m.port)])
    finally:
        m.close()


def test_a_host_that_vanishes_mid_run_reads_as_zeros_and_the_others_go_on():
    """Host 2 joins, then its connection ends with no BYE (killed): the relay tells the others
    (GONE) and keeps serving them; what host 2 owed the step reads as zeros, nothing more is
    sent to it, and the next step no longer involves it."""
    hosts = {0, 1, 2}
    relay = Relay(sorted(hosts), NAMES[:3], SESSION, connect_timeout=3.0, may_vanish=hosts).open()
    meshes = [SocketMesh.open(r, 3, SESSION, timeout=5.0, connect_timeout=3.0,
                              relayed=hosts - {r}, may_vanish=hosts) for r in range(3)]
    addrs = [("127.0.0.1", 1)] * 3
    data = np.arange(4, dtype=np.uint64) + 1

    def frames(m, peers):
        return ({p: [Outgoing(0, data.dtype, 64, data.shape, fr.pack(data * (m.rank + 1), 64))]
                 for p in peers}, {p: [Expected(0, data.dtype, 64, data.shape)] for p in peers})

    def host(m):
        try:
            m.connect(addrs, relay=("127.0.0.1", relay.port))
            if m.rank == 2:
                m.relay.sock.close()                # killed: no BYE
                return None
            got = [m.exchange(1, *frames(m, hosts - {m.rank}))]
            got.append(m.exchange(2, *frames(m, hosts - {m.rank})))
            return m.gone, got
        finally:
            if m.rank != 2:
                m.close()

    res, errs = run_all([lambda: host(meshes[0]), lambda: host(meshes[1]),
                         lambda: host(meshes[2]), lambda: _serve(relay)])
    assert errs == [None] * 4, errs
    assert relay.gone == {2}
    for r in (0, 1):
        gone, got = res[r]
        assert gone == {2}
        for step in got:
            assert np.array_equal(step[1 - r][0], data * (2 - r))
            assert np.array_equal(step[2][0], np.zeros(4, dtype=np.uint64))
