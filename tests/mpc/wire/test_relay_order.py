"""The relay keeps each envelope whole on the way to a host: while one host's long body is
streamed to a host in chunks, nothing from another sender is put between its chunks.

Plain TCP on loopback (the relay's forwarding is the same under TLS); the relay runs in a
thread joined with a bounded timeout, every socket is closed."""

import os
import socket
import time

from mpc.wire import frames as fr
from mpc.wire import relay as rl
from tests.mpc.wire.adversary import SESSION, plain_relay


def _recv(s: socket.socket, n: int) -> bytes:
    buf = bytearray()
    while len(buf) < n:
        got = s.recv(min(1 << 20, n - len(buf)))
        if not got:
            break
        buf += got
    return bytes(buf)


def test_a_streamed_body_reaches_its_host_whole_while_another_host_sends_to_it():
    """Host 0 streams a 3 MiB frame to host 2 in two halves; between them host 1 sends host 2
    a short one (and a second long one). Host 2 reads host 0's envelope whole, then host 1's."""
    relay, socks, box, t = plain_relay(3)
    try:
        long0 = os.urandom(3 << 20)
        short1, long1 = os.urandom(fr.FIXED_SIZE + 16), os.urandom(rl.STREAM_ABOVE + 5)
        env0 = rl.envelope(rl.DATA, 0, 2, 1, 0, len(long0)) + long0
        env1 = (rl.envelope(rl.DATA, 1, 2, 1, 0, len(short1)) + short1
                + rl.envelope(rl.DATA, 1, 2, 1, 1, len(long1)) + long1)
        half = rl.ENVELOPE_SIZE + (3 << 19)
        socks[0].sendall(env0[:half])
        time.sleep(0.4)                     # the relay has queued host 0's first chunks
        socks[1].sendall(env1)
        time.sleep(0.4)
        socks[0].sendall(env0[half:])
        got = _recv(socks[2], rl.ENVELOPE_SIZE + len(env0) + len(env1))
        assert got[:rl.ENVELOPE_SIZE] == rl.envelope(rl.READY, rl.RELAY_RANK, 2, 0, 0, 0)
        got = got[rl.ENVELOPE_SIZE:]
        assert got[:len(env0)] == env0, "host 0's envelope reached host 2 interleaved"
        assert got[len(env0):] == env1
        for r, s in enumerate(socks):
            s.sendall(rl.envelope(rl.BYE, r, rl.RELAY_RANK, 1, 0, 0))
            s.shutdown(socket.SHUT_WR)
        t.join(10)
        assert not t.is_alive() and "error" not in box, box
    finally:
        for s in socks:
            s.close()
        t.join(10)
        relay.close()


def test_a_frame_read_across_a_step_boundary_releases_the_room_it_reserved():
    """A frame of the next step starts arriving while the host is at this step (room is reserved
    for it) and ends after the host moved on: once taken, nothing stays reserved."""
    import numpy as np

    from mpc.wire.relay_client import RelayClient
    from mpc.wire.transport import Expected, Outgoing, TransportError, WireCounts

    ours, relay_end = socket.socketpair()
    try:
        ours.setblocking(False)
        cl = RelayClient(ours, 0, SESSION, None, lambda r: f"host-{r}", [0, 1], TransportError,
                         WireCounts(), 1 << 30)
        x = np.arange(3, dtype=np.uint64) + 7
        plain = rl.pack_frame(SESSION, 2, 1, 0, Outgoing(0, x.dtype, 64, x.shape, fr.pack(x, 64)))
        env = rl.envelope(rl.DATA, 1, 0, 2, 0, len(plain)) + plain
        cl.begin(1, {}, {})
        relay_end.sendall(env[:rl.ENVELOPE_SIZE + 10])
        time.sleep(0.05)
        cl.read(1)
        assert cl.buffered > 0                      # room reserved for step 2's frame
        cl.begin(2, {}, {1: [Expected(0, x.dtype, 64, x.shape)]})
        relay_end.sendall(env[rl.ENVELOPE_SIZE + 10:])
        time.sleep(0.05)
        cl.read(2)
        assert cl.done
        assert np.array_equal(cl.take()[1][0], x)
        assert cl.buffered == 0
    finally:
        ours.close()
        relay_end.close()
