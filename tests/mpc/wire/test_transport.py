"""The socket mesh: exchanges deliver what each step expects; faults end with a named error.

Meshes run in threads of this process on loopback; every test closes its
sockets (fixtures) and bounds every wait with short timeouts.
"""

import socket
import struct
import threading
import time

import numpy as np
import pytest

from mpc.wire import frames as fr
from mpc.wire.transport import Expected, Outgoing, SocketMesh, TransportError
from tests.mpc.wire._threads import run_all

SESSION = 0xABCDEF


def _mesh(n, timeout=5.0):
    meshes = [SocketMesh.open(r, n, SESSION, timeout=timeout,
                              describe=lambda q: f"process {q} (party {q})") for r in range(n)]
    addrs = [("127.0.0.1", m.port) for m in meshes]
    errs = []

    def go(m):
        try:
            m.connect(addrs)
        except Exception as e:
            errs.append(e)

    ts = [threading.Thread(target=go, args=(m,)) for m in meshes]
    for t in ts:
        t.start()
    for t in ts:
        t.join(20)
    assert not errs
    return meshes


@pytest.fixture
def pair():
    ms = _mesh(2)
    yield ms
    for m in ms:
        m.close()


def _out(arr, bits, seg=0):
    return Outgoing(seg, arr.dtype, bits, arr.shape, fr.pack(arr, bits))


def _exp(arr, bits, seg=0):
    return Expected(seg, arr.dtype, bits, arr.shape)


def _both(meshes, fns):
    return run_all(fns[:len(meshes)])


def test_an_exchange_delivers_large_frames_both_ways_and_counts_bytes(pair):
    a, b = pair
    x = np.arange(3 * 10**6, dtype=np.uint64) & np.uint64((1 << 40) - 1)     # 15 MB each way
    y = np.arange(1000, dtype=np.uint8) % 2
    res, errs = _both(pair, [
        lambda: a.exchange(1, {1: [_out(x, 40), _out(y, 1, 1)]}, {1: [_exp(x, 40)]}),
        lambda: b.exchange(1, {0: [_out(x, 40)]}, {0: [_exp(x, 40), _exp(y, 1, 1)]})])
    assert errs == [None, None]
    assert np.array_equal(res[0][1][0], x)
    assert np.array_equal(res[1][0][0], x) and np.array_equal(res[1][0][1], y)
    assert a.counts.payload_bytes_sent == 5 * x.size + 125
    assert a.counts.header_bytes_sent == 2 * fr.FIXED_SIZE + 2 * 8
    assert b.counts.payload_bytes_received == a.counts.payload_bytes_sent


def test_frames_of_a_later_step_wait_in_the_kernel(pair):
    """A peer that runs ahead: its next step's frame stays unread until that step."""
    a, b = pair
    v1, v2 = np.array([1, 2, 3], np.uint64), np.array([9, 8], np.uint64)
    b.exchange(1, {0: [_out(v1, 64)]}, {})
    b.exchange(2, {0: [_out(v2, 64)]}, {})
    got1 = a.exchange(1, {}, {1: [_exp(v1, 64)]})
    got2 = a.exchange(2, {}, {1: [_exp(v2, 64)]})
    assert np.array_equal(got1[1][0], v1) and np.array_equal(got2[1][0], v2)


def test_a_frame_for_the_wrong_step_names_the_sender_and_breaks_the_mesh(pair):
    a, b = pair
    v = np.arange(4, dtype=np.uint64)
    b.exchange(5, {0: [_out(v, 64)]}, {})
    with pytest.raises(TransportError, match=r"process 1 \(party 1\) diverged at step 4: .*it is "
                                             r"for step 5"):
        a.exchange(4, {}, {1: [_exp(v, 64)]})
    with pytest.raises(TransportError):             # broken: every later exchange fails at once
        a.exchange(5, {}, {})


def test_a_stalled_peer_times_out_with_its_name():
    ms = _mesh(2, timeout=0.5)
    try:
        with pytest.raises(TransportError, match=r"timed out after 0.5 s at step 1 waiting for "
                                                 r"process 1"):
            ms[0].exchange(1, {}, {1: [_exp(np.zeros(3, np.uint64), 64)]})
    finally:
        for m in ms:
            m.close()


def test_a_peer_that_disconnects_is_named(pair):
    a, b = pair
    b.close()
    with pytest.raises(TransportError, match=r"process 1 .* disconnected at step 1"):
        a.exchange(1, {}, {1: [_exp(np.zeros(3, np.uint64), 64)]})


class _Fake:
    """A raw peer of rank 1 that greets rank 0, then writes whatever a test gives it."""

    def __init__(self, mesh):
        self.sock = socket.create_connection(("127.0.0.1", mesh.port), timeout=5)
        self.sock.sendall(struct.pack("<2sBBQII", fr.MAGIC, fr.VERSION, fr.HELLO, SESSION, 1, 0))

    def close(self):
        self.sock.close()


@pytest.fixture
def lone():
    """Rank 0 of a 2-process mesh whose rank 1 is a raw socket under the test's control."""
    m = SocketMesh.open(0, 2, SESSION, timeout=2.0, describe=lambda q: f"process {q} (party {q})")
    fake = {}
    t = threading.Thread(target=lambda: m.connect([("127.0.0.1", m.port), None]))
    # rank 0 accepts rank 1: connect the fake first, then let the mesh accept it
    t.start()
    fake["f"] = _Fake(m)
    t.join(10)
    yield m, fake["f"]
    fake["f"].close()
    m.close()


def _raw_frame(step=1, shape=(3,), nbytes=None, payload=None, dtype=np.uint64, bits=64):
    n = int(np.prod(shape)) * bits // 8 if nbytes is None else nbytes
    head = fr.encode_header(fr.DATA, SESSION, step, 1, 0, 0, dtype, bits, shape, n)
    return head + (payload if payload is not None else bytes(n))


def test_a_truncated_frame_is_named_when_the_peer_leaves(lone):
    m, fake = lone
    fake.sock.sendall(_raw_frame()[:-5])
    fake.close()
    with pytest.raises(TransportError, match=r"process 1 \(party 1\) disconnected at step 1 "
                                             r"\(truncated frame\)"):
        m.exchange(1, {}, {1: [Expected(0, np.dtype(np.uint64), 64, (3,))]})


def test_a_frame_claiming_2_to_the_40_elements_is_refused_before_allocation(lone):
    m, fake = lone
    fake.sock.sendall(_raw_frame(shape=(1 << 40,), nbytes=24, payload=b""))
    with pytest.raises(TransportError, match=r"shape \(1099511627776,\), expected \(3,\)"):
        m.exchange(1, {}, {1: [Expected(0, np.dtype(np.uint64), 64, (3,))]})


def test_an_oversized_announcement_is_refused(lone):
    m, fake = lone
    fake.sock.sendall(_raw_frame(nbytes=1 << 35, payload=b""))
    with pytest.raises(TransportError, match="announces"):
        m.exchange(1, {}, {1: [Expected(0, np.dtype(np.uint64), 64, (3,))]})


def test_a_stranger_is_not_accepted_as_a_peer():
    m = SocketMesh.open(0, 2, SESSION, timeout=1.0, connect_timeout=1.0)
    try:
        s = socket.create_connection(("127.0.0.1", m.port), timeout=5)
        s.sendall(struct.pack("<2sBBQII", fr.MAGIC, fr.VERSION, fr.HELLO, SESSION + 1, 1, 0))
        with pytest.raises(TransportError, match="never connected: process 1"):
            m.connect([("127.0.0.1", m.port), None])
        s.close()
    finally:
        m.close()


def test_a_peer_that_stops_because_of_another_names_that_other(pair):
    """Issue 37 (13): a process that stops because of a third participant tells its peers who
    (an ABORT frame with the fault as first seen), so they name that participant, not it."""
    a, b = pair
    b.close(TransportError("host-2 (parties 400-599) disconnected at step 3", 2, 3))
    with pytest.raises(TransportError) as e:
        a.exchange(4, {}, {1: [_exp(np.zeros(3, np.uint64), 64)]})
    assert str(e.value).startswith("host-2 (parties 400-599) disconnected at step 3 (reported "
                                   "by process 1")
    assert e.value.origin == "host-2 (parties 400-599) disconnected at step 3"


def test_a_peer_that_fails_on_its_own_says_so(pair):
    a, b = pair
    b.close(ValueError("no data rows"))
    with pytest.raises(TransportError, match=r"^process 1 \(party 1\) stopped: no data rows "
                                             r"\(at step 1\)$"):
        a.exchange(1, {}, {1: [_exp(np.zeros(3, np.uint64), 64)]})


def test_a_peer_killed_while_idle_is_named_at_the_next_exchange():
    """A peer that closes with no BYE (killed) while this step neither reads nor writes it is a
    fault at once; one that ended well (BYE) is not."""
    ms = _mesh(4, timeout=2.0)
    try:
        ms[3].close()                       # ended well: BYE, then closed
        ms[1]._peers[0].close()             # rank 1 "killed": its connection to 0 just closes
        v = np.zeros(3, np.uint64)          # rank 0 waits for rank 2, which is slow
        with pytest.raises(TransportError, match=r"^process 1 .* disconnected at step 1$"):
            ms[0].exchange(1, {}, {2: [_exp(v, 64)]})
    finally:
        for m in ms:
            m.close()


def test_connection_errors_carry_no_raw_tls_library_text():
    import ssl

    from mpc.wire.sockets import reason, why

    eof = ssl.SSLEOFError(8, "EOF occurred in violation of protocol (_ssl.c:2427)")
    assert reason(eof) == "connection closed" and why(eof) == ""
    assert why(ConnectionResetError(104, "Connection reset by peer")) == " (connection reset)"
    other = ssl.SSLError(1, "[SSL: WRONG_VERSION_NUMBER] wrong version number (_ssl.c:1000)")
    assert "_ssl.c" not in reason(other) and "[SSL" not in reason(other)


def test_progress_names_the_step_and_whom_a_long_wait_is_for(pair):
    """Issue 37 (16): a process waiting on a step says so (rate-limited), naming the peers."""
    a, b = pair
    lines: list = []
    a.progress, a.progress_every = lines.append, 0.3
    v = np.arange(3, dtype=np.uint64)
    t = threading.Timer(1.5, lambda: b.exchange(1, {0: [_out(v, 64)]}, {}))
    t.start()
    t0 = time.monotonic()
    try:
        got = a.exchange(1, {}, {1: [_exp(v, 64)]})
    finally:
        t.join()
    waited = time.monotonic() - t0                       # 1.5 s, more on a loaded machine
    assert np.array_equal(got[1][0], v)
    assert lines[0] == "step 1"
    assert any(ln.startswith("step 1: waiting ") and ln.endswith(" for process 1 (party 1)")
               for ln in lines[1:]), lines
    assert 2 <= len(lines) <= 2 + waited / 0.3          # at most one every 0.3 s
