"""TLS meshes and the relay, in threads of this process on loopback: every fault is named.

Meshes, a relay and fake peers run in threads with short timeouts; every
test closes its sockets. Certificates come from CAs made in a temporary
directory per module.
"""

import contextlib
import os
import re
import socket
import ssl
import stat
import struct
import threading
import time

import numpy as np
import pytest

pytest.importorskip("cryptography")

from mpc.run.hosts import Plan, join, open_mesh, open_relay, run_relay
from mpc.wire import frames as fr
from mpc.wire import tls
from mpc.wire.transport import Expected, Outgoing, TransportError
from tests.mpc.wire._threads import run_all

SESSION = 0x5EED
NAMES = ["host-0", "host-1", "host-2", "dealer"]


@pytest.fixture(scope="module")
def pki(tmp_path_factory):
    d = str(tmp_path_factory.mktemp("pki"))
    creds = tls.make_deployment(d, NAMES + ["relay"], "test")
    other = str(tmp_path_factory.mktemp("other"))
    foreign = tls.make_deployment(other, NAMES, "another deployment")
    return creds, foreign


def test_keys_are_private_and_certificates_name_their_participant(pki):
    creds, _ = pki
    for c in creds.values():
        assert stat.S_IMODE(os.stat(c.key).st_mode) == 0o600
        cert = tls.load_certificate(c.cert)
        ca = tls.load_certificate(c.ca)
        with open(c.cert, "rb") as f:
            assert tls.verify_certificate(f.read(), ca, c.name).subject == cert.subject
    with open(creds["host-1"].cert, "rb") as f:
        pem = f.read()
    with pytest.raises(ValueError, match="names host-1, not host-2"):
        tls.verify_certificate(pem, ca, "host-2")


def _plan(n, relay=False, timeout=3.0):
    groups = [[range(10 * r, 10 * r + 10)] for r in range(3)] + [["dealer"]]
    return Plan(names=NAMES[:n], groups=groups[:n], addresses=[None] * n, session=SESSION,
                relay=("127.0.0.1", 0) if relay else None, relayed=[0, 1, 2] if relay else (),
                timeout=timeout, connect_timeout=3.0)


def _start(plan, creds, relay_cls=None):
    """Every rank's mesh (and the relay) connected in threads; returns (runtimes, relay)."""
    n = len(plan.names)
    meshes = [open_mesh(plan, r, creds[plan.names[r]], port=0) for r in range(n)]
    plan.addresses = [("127.0.0.1", m.port) for m in meshes]
    relay = None
    if plan.relay is not None:
        relay = open_relay(plan, creds["relay"], port=0)
        if relay_cls is not None:
            relay.__class__ = relay_cls
        plan.relay = ("127.0.0.1", relay.port)
    out, errs = [None] * n, []

    def go(r):
        try:
            out[r] = join(meshes[r], plan, creds[plan.names[r]])
        except Exception as e:
            errs.append(e)

    ts = [threading.Thread(target=go, args=(r,)) for r in range(n)]
    rt = None
    if relay is not None:
        rt = {"errors": []}

        def serve():
            try:
                rt["out"] = run_relay(relay)
            except Exception as e:
                rt["errors"].append(e)
        ts.append(threading.Thread(target=serve))
    for t in ts:
        t.start()
    for t in ts[:n]:
        t.join(20)
    assert not errs, errs
    return out, (relay, rt, ts[n:])


def _close(rts, relay=None):
    for rt in rts:
        if rt is not None:
            rt.transport.close()
    if relay is not None:
        for t in relay[2]:
            t.join(10)
        relay[0].close()


def _on_all(rts, fns):
    return run_all([lambda f=f, rt=rt: f(rt.transport) for f, rt in zip(fns, rts)])


def _out(arr, bits, seg=0):
    return Outgoing(seg, arr.dtype, bits, arr.shape, fr.pack(arr, bits))


def _exp(arr, bits, seg=0):
    return Expected(seg, arr.dtype, bits, arr.shape)


def test_tls_mesh_agrees_a_key_and_moves_large_frames_with_counted_tcp_bytes(pki):
    creds, _ = pki
    rts, _ = _start(_plan(2), creds)
    try:
        assert rts[0].joint_key == rts[1].joint_key and len(rts[0].joint_key) == 16
        x = np.arange(2 * 10**6, dtype=np.uint64) & np.uint64((1 << 40) - 1)
        res, errs = _on_all(rts, [
            lambda m: m.exchange(9, {1: [_out(x, 40)]}, {1: [_exp(x, 40)]}),
            lambda m: m.exchange(9, {0: [_out(x, 40)]}, {0: [_exp(x, 40)]})])
        assert errs == [None, None]
        assert np.array_equal(res[0][1][0], x) and np.array_equal(res[1][0][0], x)
        m = rts[0].transport
        m.sample_tcp()
        sent = m.counts.header_bytes_sent + m.counts.payload_bytes_sent
        assert m.counts.tls and sent <= m.counts.tcp_bytes_sent <= sent * 1.01
    finally:
        _close(rts)


def _lone_server(creds, timeout=1.5):
    """Rank 0 of a 2-rank TLS plan, waiting for rank 1 in a thread; returns (mesh, result)."""
    plan = _plan(2)
    plan.connect_timeout = timeout
    mesh = open_mesh(plan, 0, creds["host-0"], port=0)
    box = {}

    def run():
        try:
            mesh.connect([("127.0.0.1", mesh.port), None])
        except TransportError as e:
            box["error"] = e
    t = threading.Thread(target=run)
    t.start()
    return mesh, box, t


def _dial(port, creds_of, claim=1, to=0, trust=None):
    """A client with ``creds_of``'s key and certificate, trusting ``trust``'s CA (default: its
    own)."""
    from dataclasses import replace
    ctx = tls.client_context(creds_of if trust is None else replace(creds_of, ca=trust.ca))
    s = socket.create_connection(("127.0.0.1", port), timeout=3)
    try:
        s = ctx.wrap_socket(s)
        s.sendall(struct.pack("<2sBBQII", fr.MAGIC, fr.VERSION, fr.HELLO, SESSION, claim, to))
        s.settimeout(2)
        return s.recv(1)                # b"" once the server refused us
    except (OSError, ssl.SSLError) as e:
        return e
    finally:
        s.close()


def test_a_certificate_from_another_ca_is_refused_before_any_frame(pki):
    creds, foreign = pki
    mesh, box, t = _lone_server(creds)
    try:
        got = _dial(mesh.port, foreign["host-1"], trust=creds["host-0"])
        t.join(10)
        assert got == b"" or isinstance(got, Exception)
        msg = str(box["error"])
        assert "never connected: host-1" in msg and "not from this deployment's CA" in msg
    finally:
        mesh.close()


def test_a_valid_certificate_for_another_participant_is_refused(pki):
    creds, _ = pki
    mesh, box, t = _lone_server(creds)
    try:
        got = _dial(mesh.port, creds["host-2"], claim=1)     # host-2's certificate, claims rank 1
        t.join(10)
        assert got == b"" or isinstance(got, Exception)
        assert "certificate names host-2, not host-1" in str(box["error"])
    finally:
        mesh.close()


def test_a_client_refuses_a_server_whose_certificate_names_another_participant(pki):
    creds, _ = pki
    plan = _plan(2)
    plan.connect_timeout = 1.5
    # rank 1 dials rank 0's address, where host-2's credentials answer
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(1)
    ctx = tls.server_context(creds["host-2"])

    def answer():
        c, _ = srv.accept()
        with contextlib.suppress(OSError, ssl.SSLError):
            ctx.wrap_socket(c, server_side=True).recv(1)
        c.close()
    t = threading.Thread(target=answer)
    t.start()
    mesh = open_mesh(plan, 1, creds["host-1"], port=0)
    try:
        with pytest.raises(TransportError, match="names host-2, not host-0"):
            mesh.connect([("127.0.0.1", srv.getsockname()[1]), None])
    finally:
        mesh.close()
        t.join(5)
        srv.close()


@pytest.mark.parametrize("raw, match", [
    ("truncated", "host-1 \\(parties 10-19\\) disconnected at step 1"),
    ("huge", "shape \\(1099511627776,\\), expected \\(3,\\)"),
    ("wrong-step", "it is for step 2"),
])
def test_bad_frames_over_tls_name_the_sender_and_the_step(pki, raw, match):
    creds, _ = pki
    mesh, _box, t = _lone_server(creds, timeout=3)
    s = socket.create_connection(("127.0.0.1", mesh.port), timeout=3)
    s = tls.client_context(creds["host-1"]).wrap_socket(s)
    s.sendall(struct.pack("<2sBBQII", fr.MAGIC, fr.VERSION, fr.HELLO, SESSION, 1, 0))
    t.join(10)
    try:
        shape, step = ((1 << 40,), 1) if raw == "huge" else ((3,), 2 if raw == "wrong-step" else 1)
        head = fr.encode_header(fr.DATA, SESSION, step, 1, 0, 0, np.uint64, 64, shape, 24)
        s.sendall(head + (bytes(19) if raw == "truncated" else bytes(24)))
        if raw == "truncated":
            s.close()
        with pytest.raises(TransportError, match=match):
            mesh.exchange(1, {}, {1: [Expected(0, np.dtype(np.uint64), 64, (3,))]})
    finally:
        s.close()
        mesh.close()


# -- the relay --------------------------------------------------------------------------------
def test_hosts_exchange_through_the_relay_sealed_end_to_end(pki):
    creds, _ = pki
    rts, relay = _start(_plan(4, relay=True), creds)
    try:
        v = [np.arange(5, dtype=np.uint64) + 10 * r for r in range(4)]

        def step(r):
            peers = [q for q in range(4) if q != r]
            return lambda m: (m.exchange(3, {q: [_out(v[r], 64)] for q in peers},
                                         {q: [_exp(v[q], 64)] for q in peers}),
                              m.exchange(5, {q: [_out(v[r] + 1, 64)] for q in peers},
                                         {q: [_exp(v[q], 64)] for q in peers}))
        res, errs = _on_all(rts, [step(r) for r in range(4)])
        assert errs == [None] * 4
        for r in range(4):
            for q in range(4):
                if q != r:
                    assert np.array_equal(res[r][0][q][0], v[q])
                    assert np.array_equal(res[r][1][q][0], v[q] + 1)
        assert rts[0].transport.relay is not None and 1 in rts[0].transport.relayed
        assert rts[3].transport.relay is None           # the dealer connects directly
    finally:
        _close(rts, relay)
    assert not relay[1]["errors"] and sum(relay[1]["out"]["forwarded"].values()) > 0


class _FlippingRelay(__import__("mpc.wire.relay", fromlist=["Relay"]).Relay):
    def forward(self, h, body):
        head, body = super().forward(h, body)
        if h["kind"] == 0 and h["step"] == 3:           # a DATA frame of step 3
            body = bytearray(body)
            body[len(body) // 2] ^= 1
        return head, body


class _ReplayingRelay(__import__("mpc.wire.relay", fromlist=["Relay"]).Relay):
    """Sends host-0's step-3 frame to host-1 again as its step-5 frame."""

    kept = None

    def forward(self, h, body):
        head, body = super().forward(h, body)
        if h["kind"] == 0 and h["src"] == 0 and h["dst"] == 1:
            if h["step"] == 3:
                type(self).kept = bytes(body)
            elif h["step"] == 5:
                from mpc.wire.relay import envelope
                return envelope(0, 0, 1, 5, 0, len(self.kept)), self.kept
        return head, body


@pytest.mark.parametrize("cls, match", [
    (_FlippingRelay, "host-0 \\(parties 0-9\\) at step 3 fails authentication"),
    (_ReplayingRelay, "at step 5 fails authentication"),
])
def test_a_relay_that_alters_or_replays_a_frame_ends_the_run_with_a_named_error(pki, cls,
                                                                                  match):
    creds, _ = pki
    rts, relay = _start(_plan(3, relay=True, timeout=3.0), creds, relay_cls=cls)
    v = np.arange(4, dtype=np.uint64)
    t0 = time.monotonic()
    try:
        def prog(r):
            def f(m):
                for step in (3, 5):
                    if r == 0:
                        m.exchange(step, {1: [_out(v, 64)]}, {})
                    elif r == 1:
                        m.exchange(step, {}, {0: [_exp(v, 64)]})
                    m.exchange(step + 1, {q: [_out(v, 64)] for q in range(3) if q != r},
                               {q: [_exp(v, 64)] for q in range(3) if q != r})
            return f
        _, errs = _on_all(rts, [prog(r) for r in range(3)])
    finally:
        _close(rts, relay)
    assert time.monotonic() - t0 < 10
    assert isinstance(errs[1], TransportError) and errs[1].step in (3, 5)
    assert re.search(match, str(errs[1])), str(errs[1])
    for e in (errs[0], errs[2]):                    # the others stop too, told by the relay
        assert isinstance(e, TransportError)
    assert any("host-1" in str(e) for e in relay[1]["errors"])


def test_frames_longer_than_a_chunk_are_streamed_through_the_relay_intact(pki):
    """A 3 MB frame per host and step (above the relay's STREAM_ABOVE), two steps in a row: the
    relay forwards it in chunks, a host that runs ahead holds the next step's in chunks."""
    creds, _ = pki
    rts, relay = _start(_plan(3, relay=True, timeout=10.0), creds)
    try:
        v = [np.arange(3 << 17, dtype=np.uint64) * (r + 1) for r in range(3)]

        def prog(r):
            peers = [q for q in range(3) if q != r]
            return lambda m: [m.exchange(s, {q: [_out(v[r] + s, 64)] for q in peers},
                                         {q: [_exp(v[q], 64)] for q in peers}) for s in (1, 2)]
        res, errs = _on_all(rts, [prog(r) for r in range(3)])
        assert errs == [None] * 3
        for r in range(3):
            for i, s in enumerate((1, 2)):
                for q in range(3):
                    if q != r:
                        assert np.array_equal(res[r][i][q][0], v[q] + s)
    finally:
        _close(rts, relay)
    assert not relay[1]["errors"]


def test_a_host_several_steps_ahead_through_one_way_exchanges_is_not_an_error(pki):
    """A host that only sends (one-way exchanges) runs several steps ahead of its receiver:
    the relayed frames of every later step wait (within the per-peer caps), none is refused."""
    creds, _ = pki
    rts, relay = _start(_plan(3, relay=True, timeout=5.0), creds)
    v = np.arange(4, dtype=np.uint64)
    try:
        def prog(r):
            def f(m):
                if r == 1:
                    time.sleep(0.5)                 # host-0 is at step 6 before host-1 reads
                got = []
                for step in (3, 4, 5, 6):
                    if r == 0:
                        m.exchange(step, {1: [_out(v + step, 64)]}, {})
                    elif r == 1:
                        got.append(m.exchange(step, {}, {0: [_exp(v, 64)]})[0][0])
                return got
            return f
        res, errs = _on_all(rts, [prog(r) for r in range(3)])
    finally:
        _close(rts, relay)
    assert not any(errs), errs
    assert [list(g) for g in res[1]] == [list(v + s) for s in (3, 4, 5, 6)]
