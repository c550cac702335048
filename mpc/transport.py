"""Moving typed frames between the processes of one run: a mesh of socket connections.

:class:`SocketMesh` connects the P processes of a run pairwise (plain TCP
on loopback here; :mod:`mpc.tls` wraps the same connections in mutually
authenticated TLS), and runs one *exchange* at a time: this process writes
its frames for the step to each peer and reads, from each peer, exactly the
frames the step expects (:mod:`mpc.frames`). The network
(:class:`mpc.network.Network`) computes both sides of that from the public
routing of the step's messages, so a process never waits for a frame that
is not coming and never reads a frame it did not expect.

Every exchange has a timeout (``timeout`` seconds, default
:data:`DEFAULT_TIMEOUT`). Any fault (a peer that disconnects, stalls past
the timeout, or sends a frame that is not the expected one) raises
:class:`TransportError` naming the peer (its rank and what it holds) and
the step, and breaks the mesh: every later exchange raises at once, so the
protocol stops with no release. The launcher (:mod:`mpc.launch`) stops the
other processes.

The sockets run on an asyncio event loop that the protocol's thread runs
only during set-up and exchanges (no background thread).
Counters: frames, header (framing) bytes and payload bytes written and
read, so that what went over the sockets can be compared with what the
network counted.

Threat model (plain TCP): peers are the run's own processes on one machine;
channels are neither encrypted nor authenticated (loopback only). Across
hosts use TLS (:mod:`mpc.tls`).
"""

from __future__ import annotations

import asyncio
import os
import socket
import struct
import time
from dataclasses import dataclass, field

import numpy as np

from . import frames as fr

#: seconds one exchange may wait for a peer (a LAN deployment's order of magnitude)
DEFAULT_TIMEOUT = 60.0
#: seconds to set up the mesh (every peer connected and greeted)
CONNECT_TIMEOUT = 30.0
#: largest payload a frame may announce before the receiver refuses it (bytes)
MAX_FRAME_BYTES = 1 << 34

_HELLO = struct.Struct("<2sBBQII")


class TransportError(RuntimeError):
    """A peer disconnected, stalled, or sent a frame the step did not expect.

    ``peer`` is the peer's rank (or None), ``step`` the exchange number.
    """

    def __init__(self, message: str, peer=None, step=None):
        super().__init__(message)
        self.peer = peer
        self.step = step


@dataclass
class WireCounts:
    """What this process wrote to and read from its sockets."""

    frames_sent: int = 0
    header_bytes_sent: int = 0
    payload_bytes_sent: int = 0
    frames_received: int = 0
    header_bytes_received: int = 0
    payload_bytes_received: int = 0
    exchanges: int = 0
    wait_seconds: float = 0.0
    per_peer_sent: dict = field(default_factory=dict)     # rank -> bytes (headers + payload)

    def to_dict(self) -> dict:
        out = dict(self.__dict__)
        out["per_peer_sent"] = {str(k): v for k, v in self.per_peer_sent.items()}
        return out


@dataclass(frozen=True)
class Outgoing:
    """One frame to write: ``payload`` (packed bytes) of an array of ``dtype``/``shape``."""

    segment: int
    dtype: np.dtype
    bits: int
    shape: tuple
    payload: np.ndarray


@dataclass(frozen=True)
class Expected:
    """One frame a step must receive from a peer."""

    segment: int
    dtype: np.dtype
    bits: int
    shape: tuple


class SocketMesh:
    """Pairwise socket connections between the P processes of one run.

    Make it with :meth:`open` (bind a listening socket and learn its port),
    then :meth:`connect` with every rank's address. ``describe(rank)`` names
    what a peer holds, for error messages.
    """

    def __init__(self, rank: int, n_procs: int, session: int, *, timeout=DEFAULT_TIMEOUT,
                 describe=None, ssl_server=None, ssl_client=None, delay: float = 0.0):
        self.rank = int(rank)
        self.n_procs = int(n_procs)
        self.session = int(session)
        self.timeout = float(timeout)
        self.delay = float(delay)
        self.describe = describe or (lambda r: f"process {r}")
        self.counts = WireCounts()
        self._ssl_server, self._ssl_client = ssl_server, ssl_client
        self._peers: dict[int, tuple] = {}
        self._broken: TransportError | None = None
        self._loop = asyncio.new_event_loop()
        self._server = None
        self._accepted: dict[int, tuple] = {}
        self._accept_event = None
        self.port = None

    # -- set-up -------------------------------------------------------------------------------
    @classmethod
    def open(cls, rank, n_procs, session, *, host="127.0.0.1", port=0, **kw) -> "SocketMesh":
        """A mesh end listening on ``host:port`` (port 0: any free port; see :attr:`port`)."""
        mesh = cls(rank, n_procs, session, **kw)
        mesh._run(mesh._listen(host, port), CONNECT_TIMEOUT)
        return mesh

    async def _listen(self, host, port):
        self._accept_event = asyncio.Event()
        self._server = await asyncio.start_server(self._on_accept, host, port,
                                                  ssl=self._ssl_server)
        self.port = self._server.sockets[0].getsockname()[1]

    async def _on_accept(self, reader, writer):
        try:
            data = await asyncio.wait_for(reader.readexactly(_HELLO.size), CONNECT_TIMEOUT)
            magic, version, kind, session, sender, receiver = _HELLO.unpack(data)
            if (magic, version, kind) != (fr.MAGIC, fr.VERSION, fr.HELLO) \
                    or session != self.session or receiver != self.rank \
                    or not self.rank < sender < self.n_procs or sender in self._accepted:
                writer.close()
                return
            _tune(writer)
            self._accepted[sender] = (reader, writer)
            if len(self._accepted) == self.n_procs - 1 - self.rank:
                self._accept_event.set()
        except (asyncio.IncompleteReadError, asyncio.TimeoutError, ConnectionError, OSError):
            writer.close()

    def connect(self, addresses) -> None:
        """Connect to every lower rank and wait for every higher one (``addresses[r]`` = (host, port))."""
        self._run(self._connect(list(addresses)), CONNECT_TIMEOUT + 5)

    async def _connect(self, addresses):
        async def dial(r):
            host, port = addresses[r]
            deadline = time.monotonic() + CONNECT_TIMEOUT
            while True:
                try:
                    reader, writer = await asyncio.open_connection(
                        host, port, ssl=self._ssl_client,
                        server_hostname=None if self._ssl_client is None else f"rank-{r}")
                    break
                except (ConnectionError, OSError):
                    if time.monotonic() > deadline:
                        raise TransportError(f"could not connect to {self.describe(r)} at "
                                             f"{host}:{port}", r, None) from None
                    await asyncio.sleep(0.05)
            _tune(writer)
            writer.write(_HELLO.pack(fr.MAGIC, fr.VERSION, fr.HELLO, self.session, self.rank, r))
            await writer.drain()
            self._peers[r] = (reader, writer)

        await asyncio.gather(*(dial(r) for r in range(self.rank)))
        if self.rank < self.n_procs - 1:
            try:
                await asyncio.wait_for(self._accept_event.wait(), CONNECT_TIMEOUT)
            except asyncio.TimeoutError:
                missing = [r for r in range(self.rank + 1, self.n_procs)
                           if r not in self._accepted]
                raise TransportError(
                    "never connected: " + ", ".join(self.describe(r) for r in missing),
                    missing[0], None) from None
        self._peers.update(self._accepted)
        if self._server is not None:
            self._server.close()

    # -- exchanges ----------------------------------------------------------------------------
    def exchange(self, step: int, out: dict, expect: dict) -> dict:
        """Write ``out[peer]`` (lists of :class:`Outgoing`), read ``expect[peer]`` (lists of
        :class:`Expected`); returns ``{peer: [array, ...]}`` in the expected order."""
        if self._broken is not None:
            raise self._broken
        t0 = time.perf_counter()
        try:
            got = self._run(self._exchange(int(step), out, expect), None)
        except TransportError as e:
            self._broken = e
            raise
        finally:
            self.counts.wait_seconds += time.perf_counter() - t0
            self.counts.exchanges += 1
        return got

    async def _exchange(self, step, out, expect):
        if self.delay:
            await asyncio.sleep(self.delay)
        tasks = [self._write(step, peer, frames) for peer, frames in out.items() if frames]
        readers = [(peer, specs) for peer, specs in expect.items() if specs]
        tasks += [self._read(step, peer, specs) for peer, specs in readers]
        coro = asyncio.gather(*tasks)
        try:
            results = await asyncio.wait_for(coro, self.timeout)
        except asyncio.TimeoutError:
            waiting = [p for p, _ in readers]
            who = ", ".join(self.describe(p) for p in waiting) or "a peer"
            raise TransportError(f"timed out after {self.timeout:g} s at step {step} waiting "
                                 f"for {who}", waiting[0] if waiting else None, step) from None
        return dict(zip((p for p, _ in readers), results[len(tasks) - len(readers):]))

    async def _write(self, step, peer, frames):
        _, writer = self._conn(peer, step)
        sent = 0
        for f in frames:
            head = fr.encode_header(fr.DATA, self.session, step, self.rank, peer, f.segment,
                                    f.dtype, f.bits, f.shape, f.payload.size)
            writer.write(head)
            if f.payload.size:
                writer.write(memoryview(f.payload))
            self.counts.frames_sent += 1
            self.counts.header_bytes_sent += len(head)
            self.counts.payload_bytes_sent += f.payload.size
            sent += len(head) + f.payload.size
        self.counts.per_peer_sent[peer] = self.counts.per_peer_sent.get(peer, 0) + sent
        try:
            await writer.drain()
        except (ConnectionError, OSError) as e:
            raise TransportError(f"{self.describe(peer)} disconnected at step {step} ({e})",
                                 peer, step) from None

    async def _read(self, step, peer, specs):
        reader, _ = self._conn(peer, step)
        who = self.describe(peer)
        out = []
        try:
            for spec in specs:
                h = fr.decode_fixed(await reader.readexactly(fr.FIXED_SIZE))
                h["shape"] = fr.decode_shape(await reader.readexactly(8 * h["ndim"]), h["ndim"])
                if h["nbytes"] > MAX_FRAME_BYTES:
                    raise fr.FrameError(f"frame from {who} at step {step} announces "
                                        f"{h['nbytes']} bytes (at most {MAX_FRAME_BYTES})")
                fr.check_header(h, spec.shape, session=self.session, step=step, sender=peer,
                                receiver=self.rank, segment=spec.segment, dtype=spec.dtype,
                                bits=spec.bits, who=who)
                buf = await reader.readexactly(h["nbytes"]) if h["nbytes"] else b""
                out.append(fr.unpack(buf, spec.dtype, spec.bits, spec.shape))
                self.counts.frames_received += 1
                self.counts.header_bytes_received += fr.header_size(h["ndim"])
                self.counts.payload_bytes_received += h["nbytes"]
        except asyncio.IncompleteReadError:
            raise TransportError(f"{who} disconnected at step {step} (truncated frame)",
                                 peer, step) from None
        except (ConnectionError, OSError) as e:
            raise TransportError(f"{who} disconnected at step {step} ({e})", peer, step) \
                from None
        except fr.FrameError as e:
            raise TransportError(str(e), peer, step) from None
        return out

    def _conn(self, peer, step):
        try:
            return self._peers[peer]
        except KeyError:
            raise TransportError(f"no connection to {self.describe(peer)}", peer, step) \
                from None

    # -- plumbing -----------------------------------------------------------------------------
    def _run(self, coro, timeout):
        """Run ``coro`` on this mesh's event loop, in the calling thread (the loop runs only
        during set-up and exchanges: no thread, no GIL hand-offs; the kernel buffers what
        peers send in between)."""
        if timeout is not None:
            coro = asyncio.wait_for(coro, timeout)
        try:
            return self._loop.run_until_complete(coro)
        except asyncio.TimeoutError:
            raise TransportError("transport set-up timed out") from None

    def close(self) -> None:
        """Close every connection and the event loop (idempotent)."""
        if self._loop.is_closed():
            return

        async def shut():
            for _, writer in self._peers.values():
                writer.close()
            if self._server is not None:
                self._server.close()
            await asyncio.sleep(0)

        try:
            self._loop.run_until_complete(asyncio.wait_for(shut(), 5))
        except Exception:       # closing after a fault: nothing more to report
            pass
        self._loop.close()


def _tune(writer) -> None:
    sock = writer.get_extra_info("socket")
    if sock is not None:
        try:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        except OSError:
            pass


def new_session_id() -> int:
    """A random 64-bit tag for a run (frames of another run are refused)."""
    return int.from_bytes(os.urandom(8), "little")
