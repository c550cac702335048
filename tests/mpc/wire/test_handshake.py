"""No denial of service before authentication (issue 36, W2): a connection that never completes
its TLS handshake and greeting, held open to the relay or to a mesh listener, delays no one.

Meshes and the relay run in threads of this process on loopback with short timeouts; every
test closes its sockets.
"""

import socket
import threading
import time

import pytest

from mpc.run.hosts import Plan, join, open_mesh, open_relay, run_relay
from mpc.wire import sockets
from mpc.wire.transport import TransportError

SESSION = 0x5EED
NAMES = ["host-0", "host-1", "host-2", "dealer"]


@pytest.fixture(scope="module")
def pki(tmp_path_factory):
    tls = pytest.importorskip("mpc.wire.tls")
    pytest.importorskip("cryptography")
    return tls.make_deployment(str(tmp_path_factory.mktemp("pki")), NAMES + ["relay"], "test")


def _plan():
    groups = [[range(10 * r, 10 * r + 10)] for r in range(3)] + [["dealer"]]
    return Plan(names=list(NAMES), groups=groups, addresses=[None] * 4, session=SESSION,
                relay=("127.0.0.1", 0), relayed=[0, 1, 2], timeout=5.0, connect_timeout=6.0)


def _start_up(creds, silent_to=()):
    """Seconds until every rank has joined (the relay included), with one idle TCP connection
    opened beforehand to each of ``silent_to`` ("relay", or a rank's mesh listener); raises
    what a rank or the relay raised."""
    plan = _plan()
    cred = (lambda name: creds[name]) if creds else (lambda name: None)
    meshes = [open_mesh(plan, r, cred(NAMES[r]), port=0) for r in range(4)]
    relay = open_relay(plan, cred("relay"), port=0)
    plan.addresses = [("127.0.0.1", m.port) for m in meshes]
    plan.relay = ("127.0.0.1", relay.port)
    idle = [socket.create_connection(("127.0.0.1", relay.port if t == "relay"
                                      else meshes[t].port)) for t in silent_to]
    rts, errs = [None] * 4, []

    def go(r):
        try:
            rts[r] = join(meshes[r], plan, cred(NAMES[r]))
        except Exception as e:
            errs.append(e)

    def serve():
        try:
            run_relay(relay)
        except Exception as e:
            errs.append(e)

    ts = [threading.Thread(target=go, args=(r,)) for r in range(4)]
    server = threading.Thread(target=serve)
    t0 = time.monotonic()
    try:
        server.start()
        for t in ts:
            t.start()
        for t in ts:
            t.join(30)
        seconds = time.monotonic() - t0
    finally:
        for s in idle:
            s.close()
        for rt, m in zip(rts, meshes):
            (rt.transport if rt is not None else m).close()
        server.join(15)
        relay.close()
    if errs:
        raise errs[0]
    return seconds


@pytest.mark.parametrize("tls", [True, False], ids=["tls", "plain"])
@pytest.mark.parametrize("target", ["relay", 0], ids=["relay", "mesh"])
def test_one_silent_connection_does_not_delay_start_up(pki, tls, target):
    """An idle TCP connection held open (no handshake, no greeting) to the relay or to the
    listener of host-0 (which the dealer dials): start-up completes, well inside the connect
    deadline (6 s here; one connection at a time, it waited out the whole deadline)."""
    seconds = _start_up(pki if tls else None, silent_to=[target])
    assert seconds < 2.5, seconds


def test_silent_and_trickling_connections_are_dropped_at_the_limit_and_named(monkeypatch):
    """Each connection has HANDSHAKE_SECONDS in all for its handshake and greeting: one that
    says nothing and one that sends a byte every 0.1 s are both dropped at the limit (a
    per-read timeout would keep the trickle alive) and named; more connections in handshake
    than MAX_HANDSHAKES at once evict the oldest; the real peer gets in meanwhile."""
    from mpc.wire.transport import SocketMesh
    monkeypatch.setattr(sockets, "HANDSHAKE_SECONDS", 0.6)
    monkeypatch.setattr(sockets, "MAX_HANDSHAKES", 8)
    m = SocketMesh.open(0, 2, SESSION, timeout=2.0, connect_timeout=4.0)
    peer = SocketMesh.open(1, 2, SESSION, timeout=2.0, connect_timeout=4.0)
    box: dict = {}
    t = threading.Thread(target=lambda: box.setdefault("t", m.connect(
        [("127.0.0.1", m.port), None])))
    silent = socket.create_connection(("127.0.0.1", m.port))
    trickle = socket.create_connection(("127.0.0.1", m.port))
    flood = []
    t0 = time.monotonic()
    t.start()
    try:
        while time.monotonic() - t0 < 1.5:     # a byte of a greeting every 0.1 s: never done
            try:
                trickle.send(b"U")
            except OSError:
                break
            time.sleep(0.1)
        assert t.is_alive()                     # still waiting for rank 1
        flood = [socket.create_connection(("127.0.0.1", m.port)) for _ in range(10)]
        time.sleep(0.2)
        peer.connect([("127.0.0.1", m.port), None])
        t.join(5)
        assert not t.is_alive() and "t" in box  # connected, no error
        assert time.monotonic() - t0 < 3.0
        text = "; ".join(m.refused)
        assert text.count("no TLS handshake and greeting within 0.6 s") >= 2, text
        assert "more than 8 connections in handshake" in text, text
    finally:
        for s in [silent, trickle, *flood]:
            s.close()
        t.join(5)
        m.close()
        peer.close()


def test_a_silent_connection_alone_still_ends_in_never_connected():
    """The deadline still holds: with only a silent connection, the wait ends at the connect
    deadline naming the rank that never came."""
    from mpc.wire.transport import SocketMesh
    m = SocketMesh.open(0, 2, SESSION, timeout=1.0, connect_timeout=1.0)
    s = socket.create_connection(("127.0.0.1", m.port))
    try:
        t0 = time.monotonic()
        with pytest.raises(TransportError, match="never connected: process 1"):
            m.connect([("127.0.0.1", m.port), None])
        assert time.monotonic() - t0 < 3.0
    finally:
        s.close()
        m.close()
