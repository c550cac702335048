"""Adversarial inputs for the relay and a host's relay client, run under a memory cap.

``python -m tests.mpc.wire.adversary SCENARIO`` runs one scenario in this
process after capping its address space (``RLIMIT_AS``: what it uses at
start plus :data:`HEADROOM`), and prints one JSON line: ``error`` (the
refusal's text, or None), ``kind`` (the exception's type), ``grew_mb`` (peak
RSS growth during the attack), ``peak_rss_mb`` and ``seconds``. Everything
runs on loopback, plain TCP (the relay's and the client's parsing are the
same under TLS), and every socket is closed.

Scenarios (the issue's W3 and W4):

``relay-huge``      an authenticated host announces a DATA envelope of 2^34 bytes
``relay-empty``     300,000 zero-length DATA envelopes to a host that does not read
``relay-small``     300,000 minimal DATA envelopes to a host that does not read
``host-huge``       the relay brings a host a frame for a later step announcing 2^32 - 1 bytes
``host-empty``      300,000 zero-length DATA envelopes for later steps
``host-steps``      300,000 minimal envelopes, each for another later step
``host-segments``   minimal envelopes for the next step, segments 0..65535
``fuzz``            10^4 random and adversarial headers and envelopes fed to the relay's, the
                    relay client's and the direct mesh's frame parsing (``--cases N``)
"""

from __future__ import annotations

import json
import random
import resource
import socket
import struct
import sys
import threading
import time

HEADROOM = 768 << 20
SESSION = 0x5EED
N_SPAM = 300_000


def _vm_bytes() -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmSize:"):
                return int(line.split()[1]) * 1024
    return 0


def _rss_mb() -> float:
    """Peak RSS of this process image (VmHWM: unlike ``ru_maxrss``, not the peak of the parent
    this process was forked from)."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def cap_memory(headroom: int = HEADROOM) -> None:
    """Cap the address space at what this process maps now plus ``headroom`` bytes."""
    limit = _vm_bytes() + headroom
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))


# -- the relay --------------------------------------------------------------------------------
def _relay_attack(bodies) -> Exception | None:
    """A plain relay for hosts 0 and 1; host 0 sends ``bodies`` (an iterable of bytes) while
    host 1 reads nothing; returns the relay's error."""
    relay, socks, box, t = plain_relay(2)
    attacker = socks[0]
    attacker.settimeout(1.0)
    try:
        for b in bodies:
            attacker.sendall(b)
    except OSError:
        pass                                # the relay stopped reading, or closed
    time.sleep(0.5)
    for s in socks:
        s.close()
    t.join(10)
    relay.close()
    return box.get("error")


def plain_relay(n: int):
    """A plain relay for hosts 0..n-1 on loopback, serving in a daemon thread, each host
    connected and greeted: ``(relay, sockets, box, thread)``; ``box``: ``{"error": what the
    relay raised}`` or ``{"out": what it returned}``. The caller closes the sockets, joins
    the thread (bounded) and closes the relay."""
    from mpc.wire import frames as fr
    from mpc.wire import relay as rl
    from mpc.wire.sockets import HELLO

    relay = rl.Relay(range(n), [f"host-{r}" for r in range(n)], SESSION,
                     connect_timeout=5.0).open()
    socks = []
    for r in range(n):
        s = socket.create_connection(("127.0.0.1", relay.port), timeout=5)
        s.sendall(HELLO.pack(fr.MAGIC, fr.VERSION, fr.HELLO, SESSION, r, rl.RELAY_RANK))
        socks.append(s)
    box: dict = {}

    def serve():
        try:
            relay.accept_all()
            box["out"] = relay.serve()
        except Exception as e:
            box["error"] = e

    t = threading.Thread(target=serve, daemon=True)
    t.start()
    return relay, socks, box, t


def _spam(kind_len: int, n: int, dst: int = 1):
    from mpc.wire import relay as rl
    batch = []
    for i in range(n):
        batch.append(rl.envelope(rl.DATA, 0, dst, 2 + i, 0, kind_len) + bytes(kind_len))
        if len(batch) == 1000:
            yield b"".join(batch)
            batch = []
    if batch:
        yield b"".join(batch)


# -- a host's relay client --------------------------------------------------------------------
def _host_attack(bodies, step=1) -> Exception | None:
    """Host 0 (a SocketMesh whose peer 1 is relayed) joins a fake relay that then sends
    ``bodies``; host 0 runs step ``step`` expecting one 3-element frame from host 1."""
    import numpy as np

    from mpc.wire import relay as rl
    from mpc.wire.transport import Expected, SocketMesh

    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(1)
    mesh = SocketMesh.open(0, 2, SESSION, timeout=2.0, relayed=[1], connect_timeout=5.0,
                           describe=lambda r: f"host-{r}")
    box: dict = {}

    def fake_relay():
        c, _ = srv.accept()
        try:
            c.settimeout(5.0)
            c.recv(64)                                          # the greeting
            c.sendall(rl.envelope(rl.READY, rl.RELAY_RANK, 0, 0, 0, 0)
                      + rl.envelope(rl.ANNOUNCE, 1, 0, 0, 0, 0))
            time.sleep(0.2)
            for b in bodies:
                c.sendall(b)
        except OSError:
            pass
        finally:
            box["conn"] = c

    t = threading.Thread(target=fake_relay, daemon=True)
    t.start()
    err = None
    try:
        mesh.connect([("127.0.0.1", mesh.port), None], relay=("127.0.0.1",
                                                               srv.getsockname()[1]))
        mesh.exchange(step, {}, {1: [Expected(0, np.dtype(np.uint64), 64, (3,))]})
    except Exception as e:
        err = e
    finally:
        mesh.close()
        t.join(10)
        if "conn" in box:
            box["conn"].close()
        srv.close()
    return err


def _host_spam(n, length, step_of, seg_of):
    from mpc.wire import relay as rl
    batch = []
    for i in range(n):
        batch.append(rl.envelope(rl.DATA, 1, 0, step_of(i), seg_of(i), length) + bytes(length))
        if len(batch) == 1000:
            yield b"".join(batch)
            batch = []
    if batch:
        yield b"".join(batch)


# -- fuzzing ----------------------------------------------------------------------------------
_LENGTHS = [0, 1, 29, 30, 41, 42, 58, 64, 4095, 4096, 4097, 65535, 65536, 65537, 1 << 20,
            (1 << 20) + 1, (1 << 31) - 1, 1 << 32, (1 << 32) - 1, 1 << 34, (1 << 34) + 4096,
            (1 << 34) + 4097, 1 << 40, (1 << 63) - 1, (1 << 64) - 1]


def _pick(rng, choices, bits):
    return rng.choice(choices) if rng.random() < 0.7 else rng.getrandbits(bits)


def _envelope_case(rng) -> bytes:
    from mpc.wire import frames as fr
    from mpc.wire import relay as rl
    magic = rl.MAGIC if rng.random() < 0.9 else bytes(rng.getrandbits(8) for _ in range(2))
    version = rl.VERSION if rng.random() < 0.9 else rng.getrandbits(8)
    kind = rng.randrange(8)
    src = _pick(rng, [0, 0, 0, 1, 2, rl.RELAY_RANK], 32)
    dst = _pick(rng, [0, 1, 1, 2, rl.RELAY_RANK], 32)
    step = _pick(rng, [0, 1, 1, 2, 2, 3, 5, 1 << 40], 64)
    seg = _pick(rng, [0, 0, 1, 2, 65535], 16)
    length = _pick(rng, _LENGTHS, 64)
    head = struct.pack("<2sBBIIQHQ", magic, version, kind, src, dst, step, seg, length)
    if rng.random() < 0.3:                                  # a typed frame inside
        body = fr.encode_header(fr.DATA, SESSION, step & 0xFFFF, src, dst, seg, "uint64", 64,
                                (rng.choice([0, 3, 1 << 40]),), rng.choice(_LENGTHS))
    else:
        body = bytes(rng.getrandbits(8) for _ in range(rng.choice([0, 1, 16, 42, 70])))
    if rng.random() < 0.2:
        head = head[:rng.randrange(len(head))]
    return head + body


def _frame_case(rng) -> bytes:
    from mpc.wire import frames as fr
    kind = rng.choice([fr.DATA, fr.DATA, fr.ABORT, fr.BYE, fr.HELLO, 7])
    ndim = rng.choice([0, 1, 1, 2, 8, 9, 255])
    fixed = struct.pack("<2sBBQQIIHBBBBQ", fr.MAGIC if rng.random() < 0.9 else b"XX",
                        fr.VERSION, kind, SESSION if rng.random() < 0.8 else rng.getrandbits(64),
                        _pick(rng, [0, 1, 2], 64), _pick(rng, [1, 1, 0], 32),
                        _pick(rng, [0, 0, 1], 32), _pick(rng, [0, 1], 16),
                        _pick(rng, [4, 4, 1, 9, 0, 200], 8), _pick(rng, [64, 40, 1, 0, 255], 8),
                        ndim, 0, _pick(rng, _LENGTHS, 64))
    shape = b"".join(struct.pack("<Q", _pick(rng, [3, 0, 1 << 40, (1 << 64) - 1], 64))
                     for _ in range(min(ndim, 9)))
    body = bytes(rng.getrandbits(8) for _ in range(rng.choice([0, 5, 24, 40])))
    return fixed + shape + body


def fuzz(cases: int, seed: int = 36) -> dict:
    """Feed ``cases`` random inputs to each of the three parsers (relay, relay client, direct
    mesh) over socket pairs. Returns counts per outcome; raises on anything but a refusal."""
    import numpy as np

    from mpc.wire import relay as rl
    from mpc.wire.relay_client import RelayClient
    from mpc.wire.transport import Expected, SocketMesh, TransportError, WireCounts, _Reader

    rng = random.Random(seed)
    spec = [Expected(0, np.dtype(np.uint64), 64, (3,))]
    out = {"relay": 0, "client": 0, "mesh": 0, "refused": 0, "accepted": 0}

    def feed(data, a, b, parse):
        b.setblocking(False)
        try:
            a.sendall(data)
            a.shutdown(socket.SHUT_WR)
            parse(b)
            out["accepted"] += 1
        except (rl.RelayError, TransportError):
            out["refused"] += 1
        finally:
            a.close()
            b.close()

    relay = rl.Relay([0, 1, 2], ["host-0", "host-1", "host-2"], SESSION)
    for _ in range(cases):
        a, b = socket.socketpair()
        relay.conns = {r: rl._Conn(r, socket.socket()) for r in (1, 2)}
        for c in relay.conns.values():
            c.sock.close()
        conn = rl._Conn(0, b)
        relay.conns[0] = conn
        feed(b"".join(_envelope_case(rng) for _ in range(rng.choice([1, 1, 3, 20]))), a, b,
             lambda s, conn=conn: relay._read(conn))
        out["relay"] += 1
    for _ in range(cases):
        a, b = socket.socketpair()
        client = RelayClient(b, 1, SESSION, None, lambda r: f"host-{r}", [0, 1, 2],
                             TransportError, WireCounts(), 1 << 30)
        client.begin(1, {}, {0: spec, 2: spec})
        feed(b"".join(_envelope_case(rng) for _ in range(rng.choice([1, 1, 3, 20]))), a, b,
             lambda s, client=client: client.read(1))
        out["client"] += 1
    mesh = SocketMesh(0, 2, SESSION, describe=lambda r: f"host-{r}")
    for _ in range(cases):
        a, b = socket.socketpair()
        mesh._peers = {1: b}
        feed(b"".join(_frame_case(rng) for _ in range(rng.choice([1, 1, 2, 5]))), a, b,
             lambda s: mesh._read(1, _Reader(1, spec)))
        out["mesh"] += 1
    mesh._peers = {}
    mesh.close()
    return out


SCENARIOS = {
    "relay-huge": lambda: _relay_attack([_envelope_head(1 << 34)]),
    "relay-empty": lambda: _relay_attack(_spam(0, N_SPAM)),
    "relay-small": lambda: _relay_attack(_spam(58, N_SPAM)),
    "host-huge": lambda: _host_attack([_host_head((1 << 32) - 1)]),
    "host-empty": lambda: _host_attack(_host_spam(N_SPAM, 0, lambda i: 2 + i, lambda i: 0)),
    "host-steps": lambda: _host_attack(_host_spam(N_SPAM, 58, lambda i: 2 + i, lambda i: 0)),
    "host-segments": lambda: _host_attack(_host_spam(65536, 58, lambda i: 2, lambda i: i)),
}


def _host_head(length: int) -> bytes:
    from mpc.wire import relay as rl
    return rl.envelope(rl.DATA, 1, 0, 2, 0, length)


def _envelope_head(length: int) -> bytes:
    from mpc.wire import relay as rl
    return rl.envelope(rl.DATA, 0, 1, 1, 0, length)


def main(argv=None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    name = argv[0]
    import numpy  # noqa: F401  (mapped before the cap: the cap is for what the attack maps)

    import mpc.wire.relay_client
    import mpc.wire.transport  # noqa: F401
    cap_memory()
    base = _rss_mb()
    t0 = time.perf_counter()
    if name == "fuzz":
        cases = int(argv[argv.index("--cases") + 1]) if "--cases" in argv else 10_000
        res: dict = {"outcomes": fuzz(cases), "error": None, "kind": None}
    else:
        err = SCENARIOS[name]()
        res = {"error": None if err is None else str(err),
               "kind": None if err is None else type(err).__name__}
    res.update(seconds=time.perf_counter() - t0, peak_rss_mb=_rss_mb(),
               grew_mb=_rss_mb() - base)
    print(json.dumps(res))
    return 0


if __name__ == "__main__":
    sys.exit(main())
