"""Moving typed frames between the processes of one run: a mesh of socket connections.

:class:`SocketMesh` connects the P processes of a run pairwise (plain TCP
on loopback here; mutually authenticated TLS across hosts, see
:mod:`mpc.wire.tls`), and runs one *exchange* at a time: this process writes its
frames for the step to each peer and reads, from each peer, exactly the
frames the step expects (:mod:`mpc.wire.frames`). The network
(:class:`mpc.comm.network.Network`) computes both sides of that from the public
routing of the step's messages, so a process never waits for a frame that
is not coming and never reads past the step's last expected byte (what a
peer already sent for a later step stays in the kernel's buffer).

An exchange is one loop over non-blocking sockets (:mod:`selectors`):
headers are read first and checked against the expectation, then each
payload is received straight into a buffer of exactly its announced size
(``recv_into``), and sent from the packed arrays without copies
(``send`` on memoryviews). Writing and reading to and from every peer go
on together, so two peers sending each other large frames never block.

Every exchange has a timeout (``timeout`` seconds, default
:data:`DEFAULT_TIMEOUT`). Any fault (a peer that disconnects, stalls past
the timeout, or sends a frame that is not the expected one) raises
:class:`TransportError` naming the peer (its rank and what it holds) and
the step, and breaks the mesh: every later exchange raises at once, so the
protocol stops with no release. The launcher (:mod:`mpc.run.launch`) stops the
other processes.

Counters (:class:`WireCounts`): frames, header (framing) bytes and payload
bytes written and read, so that what went over the sockets can be compared
with what the network counted.

TLS (``wrap=``, an :class:`mpc.wire.tls.Wrapper`): every connection is TLS 1.3
with mutual authentication; the peer's certificate must chain to the
deployment's CA and name the participant its rank must be, checked after
the handshake and the greeting, before any frame is read. A connection
that fails is refused and named in the error if its peer never comes.
The sockets stay non-blocking in the same selector loop: ``SSLWantRead``
/ ``SSLWantWrite`` mean "not now", and bytes TLS has already decrypted
(``pending()``, invisible to ``select``) are read before waiting.

Relay (``relayed=`` ranks, ``connect(..., relay=...)``): frames to those
peers go through the relay, sealed end to end (:mod:`mpc.wire.relay_client`).

Counters (:class:`WireCounts`): frames, header (framing) bytes and payload
bytes written and read, so that what went over the sockets can be compared
with what the network counted; and the bytes TCP carried (TLS records,
handshakes and envelopes included), read from the kernel (``TCP_INFO``).

Threat model: plain TCP (no ``wrap``) only between the run's own processes
on one machine (loopback); across hosts, TLS as above.
"""

from __future__ import annotations

import contextlib
import math
import os
import selectors
import signal
import socket
import ssl
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from mpc.wire import frames as fr
from mpc.wire.sockets import HELLO as _HELLO
from mpc.wire.sockets import (
    WOULD_BLOCK,
    accept_peers,
    dial,
    listen_socket,
    select_socket,
    tcp_info_bytes,
)
from mpc.wire.sockets import pending as _pending
from mpc.wire.sockets import reason as _reason
from mpc.wire.sockets import refusals as _refusals
from mpc.wire.sockets import why as _why

if TYPE_CHECKING:
    from mpc.wire.e2e import Endpoint
    from mpc.wire.relay_client import RelayClient

#: seconds one exchange may wait for a peer (a LAN deployment's order of magnitude)
DEFAULT_TIMEOUT = 60.0
#: seconds to set up the mesh (every peer connected and greeted)
CONNECT_TIMEOUT = 30.0
MAX_FRAME_BYTES = fr.MAX_FRAME_BYTES
_CHUNK = 1 << 22                # bytes per send/recv call

#: bytes of later steps' frames a host may hold from the relay before it refuses more
MAX_BUFFERED_BYTES = 1 << 32


class TransportError(RuntimeError):
    """A peer disconnected, stalled, or sent a frame the step did not expect.

    ``peer`` is the peer's rank (or None), ``step`` the exchange number. ``origin``: the fault
    as first seen, naming the participant that caused it (``"host-2 (parties 400-599)
    disconnected at step 3"``): the message itself, or, for a fault reported by a peer that
    stopped because of it, what that peer reported (this process passes it on when it stops).
    """

    def __init__(self, message: str, peer=None, step=None, origin: str | None = None):
        super().__init__(message)
        self.peer = peer
        self.step = step
        self.origin = origin or message


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
    setup_bytes_sent: int = 0       # the run's start-up (the joint key), not a protocol's
    tcp_bytes_sent: int = 0         # what TCP carried since the restart (TLS records included)
    tcp_bytes_received: int = 0
    tcp_setup_bytes_sent: int = 0   # TCP bytes of the start-up: handshakes, greetings, keys
    tls: bool = False

    def restart(self, tcp_sent: int = 0) -> None:
        """Start counting the protocol: what was sent so far becomes set-up traffic."""
        setup = self.header_bytes_sent + self.payload_bytes_sent + self.setup_bytes_sent
        tls = self.tls
        WireCounts.__init__(self)
        self.setup_bytes_sent = setup
        self.tcp_setup_bytes_sent = tcp_sent
        self.tls = tls

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
    op: int = 0                 # the operation that sends it (mpc.wire.frames.op_tag)


@dataclass(frozen=True)
class Expected:
    """One frame a step must receive from a peer.

    ``into``: where the payload's bytes may land directly (a writable,
    C-contiguous uint8 view of the receiver's array of exactly the payload's
    size, for elements that travel at full width); the frame then yields
    None and the bytes are already in place. None: a new buffer.
    """

    segment: int
    dtype: np.dtype
    bits: int
    shape: tuple
    into: object = None
    op: int = 0                 # the operation this step runs here (mpc.wire.frames.op_tag)


class _Reader:
    """The state of reading one step's frames from one peer."""

    __slots__ = ("buf", "head", "i", "out", "peer", "pos", "specs", "stage")
    buf: Any                    # bytearray for the header pieces, then the payload's ndarray
    head: dict                  # the decoded fixed header, from the "shape" stage on

    def __init__(self, peer, specs):
        self.peer, self.specs, self.i = peer, specs, 0
        self.out = []
        self._start()

    def _start(self):
        self.stage = "fixed"
        self.buf = bytearray(fr.FIXED_SIZE)
        self.pos = 0

    @property
    def done(self) -> bool:
        return self.i >= len(self.specs)


class SocketMesh:
    """Pairwise socket connections between the P processes of one run.

    Make it with :meth:`open` (bind a listening socket and learn its port),
    then :meth:`connect` with every rank's address. ``describe(rank)`` names
    what a peer holds, for error messages. ``delay``: seconds slept before
    every exchange (a stand-in for one-way latency: this machine's kernel
    has no ``netem``).
    """

    def __init__(self, rank: int, n_procs: int, session: int, *, timeout=DEFAULT_TIMEOUT,
                 describe=None, delay: float = 0.0, wrap=None, relayed=(),
                 connect_timeout: float | None = None, may_vanish=()):
        self.rank = int(rank)
        self.n_procs = int(n_procs)
        self.session = int(session)
        self.timeout = float(timeout)
        self.delay = float(delay)
        self.describe = describe or (lambda r: f"process {r}")
        self.counts = WireCounts()
        self._wrap = wrap            # (sock, server_side, peer) -> socket: TLS in mpc.wire.tls
        self.counts.tls = wrap is not None
        self.connect_timeout = CONNECT_TIMEOUT if connect_timeout is None \
            else float(connect_timeout)
        self.relayed = frozenset(int(r) for r in relayed)   # peers reached through the relay
        self.relay: RelayClient | None = None   # once connected
        #: peers whose absence at start-up is a dropout, not a fault (party hosts of a run
        #: that tolerates dropouts, :mod:`ustat.umpc.dropouts`); ``gone``: those absent
        self.may_vanish = frozenset(int(r) for r in may_vanish) - {self.rank}
        self.gone: set = set()
        #: called with the name of each protocol step this process starts
        #: (:func:`ustat.umpc.progress.at_step`): a progress line, or a test's fault injection
        self.on_step: Callable[[str], None] | None = None
        self.refused: list = []      # connections refused while waiting for peers (why)
        self._tcp_base = (0, 0)
        self._peers: dict[int, socket.socket] = {}
        self._broken: TransportError | None = None
        self._last_step = 0
        self._op = 0                    # the operation of the current step (frames.op_tag)
        self._unsent: dict = {}       # peer -> what an exchange that failed left unwritten
        self._readers: dict = {}      # peer -> its reader, in the exchange under way
        self._listener: socket.socket | None = None
        self._sel = selectors.DefaultSelector()
        self.port: int | None = None
        #: progress lines (``"step 12"``, ``"step 23: waiting 10 s for host-0 (...)"``) go to
        #: this callable, at most one every :attr:`progress_every` seconds (None: none)
        self.progress: Callable[[str], None] | None = None
        self.progress_every = 5.0
        #: tests only (``USTAT_TEST_VANISH``, :mod:`ustat.deploy.participant`): (peer rank,
        #: ``before`` / ``between`` / ``after``), see :meth:`_test_vanish`; None: never
        self.vanish_at: tuple | None = None
        self._said = -math.inf

    # -- set-up -------------------------------------------------------------------------------
    @classmethod
    def open(cls, rank: int, n_procs: int, session: int, *, host: str = "127.0.0.1",
             port: int = 0, **kw: Any) -> SocketMesh:
        """A mesh end listening on ``host:port`` (port 0: any free port; see :attr:`port`)."""
        mesh = cls(rank, n_procs, session, **kw)
        lst = listen_socket(host, port, mesh.describe(rank))
        lst.listen(max(8, n_procs))
        mesh._listener = lst
        mesh.port = lst.getsockname()[1]
        return mesh

    def connect(self, addresses: Sequence[tuple[str, int]], relay: tuple[str, int] | None = None,
                endpoint: Endpoint | None = None) -> None:
        """Connect to every lower rank and accept every higher one (``addresses[r]`` = (host,
        port)), except the ``relayed`` ranks: those are reached through the relay at ``relay``
        (host, port), sealed by ``endpoint`` (:class:`mpc.wire.e2e.Endpoint`). A peer that never
        connects is named (with the connections refused meanwhile) before any step."""
        # a peer that may vanish is absent after connect_timeout; the others then get as long
        # again (they may have waited for it themselves: the relay, a role dialing it)
        vanish_by = time.monotonic() + self.connect_timeout
        deadline = vanish_by + (self.connect_timeout if self.may_vanish else 0.0)
        if self.relayed and self.may_vanish:    # the relay first: it waits for no role
            self._join_relay(relay, endpoint, deadline)
        for r in range(self.rank):
            if r not in self.relayed and r not in self.may_vanish:
                self._peers[r] = self._dial(r, addresses[r], deadline)
        self._dial_vanishable(addresses, vanish_by, deadline)
        waiting = set(range(self.rank + 1, self.n_procs)) - self.relayed
        listener = self._listener
        assert listener is not None, "open() made the listener"
        self._peers.update(accept_peers(listener, deadline, self.session, self.rank,
                                        self._wrap, waiting, self.refused))
        self.gone |= waiting & self.may_vanish
        waiting -= self.may_vanish
        if waiting:
            raise TransportError("never connected: " + ", ".join(
                self.describe(r) for r in sorted(waiting)) + _refusals(self.refused),
                min(waiting), None)
        listener.close()
        self._listener = None
        for sock in self._peers.values():
            sock.setblocking(False)
        if self.relayed and self.relay is None:
            self._join_relay(relay, endpoint, deadline)
        self._tcp_base = self.tcp_bytes()

    def _join_relay(self, relay: tuple[str, int] | None, endpoint: Endpoint | None,
                    deadline: float) -> None:
        if relay is None:
            raise ValueError("relayed peers need the relay's address")
        from mpc.wire.relay_client import RelayClient
        self.relay = RelayClient.join(
            relay, rank=self.rank, session=self.session, wrap=self._wrap,
            endpoint=endpoint, describe=self.describe, hosts=self.relayed | {self.rank},
            error=TransportError, counts=self.counts, deadline=deadline,
            max_buffered=MAX_BUFFERED_BYTES, may_vanish=self.may_vanish)
        self.gone |= self.relay.gone

    def _dial_vanishable(self, addresses, vanish_by: float, deadline: float) -> None:
        """Dial the lower ranks that may vanish, in turn, until each answers or ``vanish_by``
        has passed (those are :attr:`gone`: a dropout before the first step)."""
        pending = [r for r in range(self.rank) if r in self.may_vanish and r not in self.relayed]
        while pending:
            for r in list(pending):
                host, port = addresses[r]
                sock = dial(host, port, min(time.monotonic() + 0.2, vanish_by))
                if sock is not None:
                    self._peers[r] = self._dial(r, addresses[r], deadline, sock)
                    pending.remove(r)
            if time.monotonic() > vanish_by:
                break
        self.gone |= set(pending)

    def _dial(self, r: int, addr: tuple[str, int], deadline: float,
              sock: socket.socket | None = None) -> socket.socket:
        host, port = addr
        sock = dial(host, port, deadline) if sock is None else sock
        if sock is None:
            raise TransportError(f"could not connect to {self.describe(r)} at {host}:{port}",
                                 r, None)
        sock.settimeout(max(0.1, deadline - time.monotonic()))
        try:
            if self._wrap is not None:
                sock = self._wrap(sock, False, r)
            sock.sendall(_HELLO.pack(fr.MAGIC, fr.VERSION, fr.HELLO, self.session, self.rank,
                                     r))
        except (OSError, ssl.SSLError) as e:
            sock.close()
            raise TransportError(f"{self.describe(r)} at {host}:{port} refused the connection "
                                 f"or is not who it should be: {_reason(e)}", r, None) from None
        return sock

    def tcp_bytes(self) -> tuple:
        """(sent, received) bytes TCP carried on every connection of this process (TLS
        records, handshakes and relay envelopes included), from the kernel's ``TCP_INFO``."""
        socks = list(self._peers.values()) + ([self.relay.sock] if self.relay else [])
        sent = received = 0
        for sock in socks:
            a, b = tcp_info_bytes(sock)
            sent, received = sent + a, received + b
        return sent, received

    def restart_counts(self) -> None:
        """Start counting the protocol (what was sent so far is the run's start-up)."""
        now = self.tcp_bytes()
        self.counts.restart(now[0])
        self._tcp_base = now

    def sample_tcp(self) -> None:
        """Update the counters' TCP bytes (since :meth:`restart_counts`) from the kernel."""
        now = self.tcp_bytes()
        self.counts.tcp_bytes_sent = now[0] - self._tcp_base[0]
        self.counts.tcp_bytes_received = now[1] - self._tcp_base[1]

    # -- exchanges ----------------------------------------------------------------------------
    def exchange(self, step: int, out: dict, expect: dict) -> dict:
        """Write ``out[peer]`` (lists of :class:`Outgoing`), read ``expect[peer]`` (lists of
        :class:`Expected`); returns ``{peer: [array, ...]}`` in the expected order."""
        if self._broken is not None:
            raise self._broken
        t0 = time.perf_counter()
        self._say(f"step {int(step)}", first=self.counts.exchanges == 0)
        self._last_step = int(step)
        self._op = next((f.op for fs in (*out.values(), *expect.values()) for f in fs), 0)
        try:
            if self.delay:
                time.sleep(self.delay)
            if self.vanish_at is not None:
                self._test_vanish(int(step), out, "before")
            got = self._exchange(int(step), out, expect)
            if self.vanish_at is not None:
                self._test_vanish(int(step), out, "after")
            return got
        except TransportError as e:
            self._broken = e
            raise
        finally:
            self.counts.wait_seconds += time.perf_counter() - t0
            self.counts.exchanges += 1

    def _test_vanish(self, step, out, when: str) -> None:
        """The test hook :attr:`vanish_at` = (peer, mode): at the first exchange sending to
        ``peer`` (a direct peer), this process kills itself (SIGKILL: no BYE, no ABORT) ``before``
        anything is sent, ``between`` (``peer``'s frames written in full, nobody else's) or
        ``after`` the exchange."""
        peer, mode = self.vanish_at or (None, "")
        if not out.get(peer) or (mode == "after") != (when == "after"):
            return
        if mode == "between":
            sock = self._peers[peer]
            sock.setblocking(True)
            for part in self._queue(step, peer, out[peer]):
                sock.sendall(part)
        os.kill(os.getpid(), signal.SIGKILL)

    def _exchange(self, step, out, expect):
        filled = {}
        if self.gone:       # vanished peers: nothing sent to them, zeros for what they owed
            out = {p: f for p, f in out.items() if p not in self.gone}
            filled = {p: [fr.zeros_of(x) for x in e] for p, e in expect.items() if p in self.gone}
            expect = {p: e for p, e in expect.items() if p not in self.gone}
        got = self._exchange_live(step, out, expect)
        got.update(filled)
        return got

    def _exchange_live(self, step, out, expect):
        rel: Any = self.relay          # typed loosely: checked once, used in the loop
        if rel is not None:
            rel.begin(step, {p: f for p, f in out.items() if p in self.relayed and f},
                      {p: e for p, e in expect.items() if p in self.relayed and e})
        sends = {}
        for peer, frames in out.items():
            if frames and peer not in self.relayed:
                sends[peer] = self._queue(step, peer, frames)
        readers = {peer: _Reader(peer, specs) for peer, specs in expect.items()
                   if specs and peer not in self.relayed}
        for peer in set(sends) | set(readers):
            self._watch(peer, peer in sends, peer in readers)
        for peer in set(self._peers) - set(sends) - set(readers):
            select_socket(self._sel, self._peers[peer], selectors.EVENT_READ, ("idle", peer))
        deadline = time.monotonic() + self.timeout
        self._unsent = sends
        self._readers = readers
        try:
            while sends or any(not r.done for r in readers.values()) or \
                    (rel is not None and not rel.done):
                left = deadline - time.monotonic()
                if left <= 0:
                    self._timed_out(step, sends, readers)
                if self.progress is not None:
                    self._say_waiting(step, sends, readers, self.timeout - left)
                if rel is not None:
                    select_socket(self._sel, rel.sock, selectors.EVENT_READ |
                                 (selectors.EVENT_WRITE if rel.queue else 0), "relay")
                events = self._sel.select(0 if self._has_pending(readers) else
                                          min(left, 1.0, self.progress_every))
                for key, mask in events:
                    peer = key.data
                    if isinstance(peer, tuple):
                        self._idle(step, peer[1])
                        continue
                    if peer == "relay":
                        if mask & selectors.EVENT_WRITE:
                            rel.write(step)
                        if mask & selectors.EVENT_READ:
                            rel.read(step)
                        continue
                    # nested: the inner condition is the write itself, not a test
                    if mask & selectors.EVENT_WRITE and peer in sends:  # noqa: SIM102
                        if self._write(step, peer, sends[peer]) and peer in sends:
                            del sends[peer]
                            self._watch(peer, False, peer in readers and
                                        not readers[peer].done)
                    if mask & selectors.EVENT_READ and peer in readers \
                            and not readers[peer].done:
                        self._read(step, readers[peer])
                        if readers[peer].done:
                            self._watch(peer, peer in sends, False)
                self._read_pending(step, readers, sends)
        finally:
            for peer in self._peers:
                self._watch(peer, False, False)
            if rel is not None:
                select_socket(self._sel, rel.sock, 0, "relay")
        got = {peer: r.out for peer, r in readers.items()}
        if rel is not None:
            got.update(rel.take())
            self.gone |= rel.gone
        return got

    def _has_pending(self, readers) -> bool:
        if self.relay is not None and self.relay.pending():
            return True
        return any(not r.done and _pending(self._peers[p]) for p, r in readers.items()
                   if p in self._peers)

    def _read_pending(self, step, readers, sends) -> None:
        """Bytes TLS already decrypted: ``select`` does not report them, so read them now."""
        if self.relay is not None and self.relay.pending():
            self.relay.read(step)
        for peer, r in readers.items():
            if not r.done and peer in self._peers and _pending(self._peers[peer]):
                self._read(step, r)
                if r.done:
                    self._watch(peer, peer in sends, False)

    def _queue(self, step, peer, frames):
        parts = []
        sent = 0
        for f in frames:
            head = fr.encode_header(fr.DATA, self.session, step, self.rank, peer, f.segment,
                                    f.dtype, f.bits, f.shape, f.payload.size, f.op)
            parts.append(memoryview(head))
            if f.payload.size:
                parts.append(np.ascontiguousarray(f.payload).data.cast("B"))
            self.counts.frames_sent += 1
            self.counts.header_bytes_sent += len(head)
            self.counts.payload_bytes_sent += f.payload.size
            sent += len(head) + f.payload.size
        self.counts.per_peer_sent[peer] = self.counts.per_peer_sent.get(peer, 0) + sent
        return parts

    def _watch(self, peer, write: bool, read: bool):
        """Select ``peer``'s socket for writing and/or reading, or not at all (a peer with
        nothing for this step is not read: what it sent for later steps waits in the kernel)."""
        ev = (selectors.EVENT_WRITE if write else 0) | (selectors.EVENT_READ if read else 0)
        if peer in self._peers:
            select_socket(self._sel, self._peers[peer], ev, peer)

    def _write(self, step, peer, parts) -> bool:
        """Send as much of ``parts`` as the socket takes; True when all is sent."""
        sock = self._peers[peer]
        while parts:
            mv = parts[0]
            try:
                n = sock.send(mv[:_CHUNK])
            except WOULD_BLOCK:
                return False
            except OSError as e:
                if peer in self.may_vanish:
                    self._vanished(peer)
                    return True
                said = self._salvage(peer, step)
                if said is not None:
                    raise said from None
                raise TransportError(f"{self.describe(peer)} disconnected at step {step}"
                                     f"{_why(e)}", peer, step) from None
            if n < len(mv):
                parts[0] = mv[n:]
                if n == 0:
                    return False
            else:
                parts.pop(0)
        return True

    def _read(self, step, rd: _Reader) -> None:
        """Receive what the socket has for the reader's current piece, piece after piece."""
        sock = self._peers[rd.peer]
        who = self.describe(rd.peer)
        while not rd.done:
            view = memoryview(rd.buf)[rd.pos:]
            if len(view):
                try:
                    n = sock.recv_into(view, min(len(view), _CHUNK))
                except WOULD_BLOCK:
                    return
                except OSError as e:
                    if rd.peer in self.may_vanish:
                        return self._vanished(rd.peer)
                    raise TransportError(f"{who} disconnected at step {step}{_why(e)}",
                                         rd.peer, step) from None
                if n == 0 and rd.peer in self.may_vanish:
                    return self._vanished(rd.peer)
                if n == 0:
                    raise TransportError(f"{who} disconnected at step {step}"
                                         + (" (truncated frame)" if rd.pos or rd.stage
                                            != "fixed" else ""), rd.peer, step)
                rd.pos += n
                if rd.pos < len(rd.buf):
                    continue
            self._advance(step, rd, who)

    def _advance(self, step, rd: _Reader, who) -> None:
        try:
            if rd.stage == "fixed":
                rd.head = fr.decode_fixed(bytes(rd.buf))
                if rd.head["kind"] == fr.BYE and rd.head["sender"] == rd.peer:
                    raise self._ended(step, rd.peer, rd.head)
                if rd.head["kind"] == fr.ABORT:
                    self._check_abort(step, rd.peer, rd.head, who)
                    rd.stage, rd.buf, rd.pos = "abort", bytearray(rd.head["nbytes"]), 0
                    return
                rd.stage, rd.buf, rd.pos = "shape", bytearray(8 * rd.head["ndim"]), 0
            elif rd.stage == "abort":
                raise self._aborted(step, rd.peer, rd.head, bytes(rd.buf), who)
            elif rd.stage == "shape":
                h = rd.head
                h["shape"] = fr.decode_shape(bytes(rd.buf), h["ndim"])
                if h["nbytes"] > MAX_FRAME_BYTES:
                    raise fr.FrameError(f"frame from {who} at step {step} announces "
                                        f"{h['nbytes']} bytes (at most {MAX_FRAME_BYTES})")
                spec = rd.specs[rd.i]
                fr.check_header(h, spec.shape, session=self.session, step=step, sender=rd.peer,
                                receiver=self.rank, segment=spec.segment, dtype=spec.dtype,
                                bits=spec.bits, who=who, op=spec.op)
                self.counts.header_bytes_received += fr.header_size(h["ndim"])
                into = spec.into
                buf = into if into is not None and into.size == h["nbytes"] else \
                    np.empty(h["nbytes"], np.uint8)
                rd.stage, rd.buf, rd.pos = "payload", buf, 0
            else:
                spec = rd.specs[rd.i]
                rd.out.append(None if rd.buf is spec.into else
                              fr.unpack(rd.buf, spec.dtype, spec.bits, spec.shape))
                self.counts.frames_received += 1
                self.counts.payload_bytes_received += rd.buf.size
                rd.i += 1
                if not rd.done:
                    rd._start()
        except fr.FrameError as e:
            raise TransportError(str(e), rd.peer, step) from None

    def _say(self, text: str, first: bool = False) -> None:
        if self.progress is not None and (first or
                                          time.monotonic() - self._said >= self.progress_every):
            self._said = time.monotonic()
            self.progress(text)

    def _say_waiting(self, step, sends, readers, waited: float) -> None:
        if waited < self.progress_every or \
                time.monotonic() - self._said < self.progress_every:
            return
        names = [self.describe(p) for p, r in readers.items() if not r.done]
        if self.relay is not None:
            names += [f"{self.describe(p)} through the relay" for p in self.relay.waiting_for()]
        names += [f"{self.describe(p)} to read" for p in sends]
        self._say(f"step {step}: waiting {waited:.0f} s for {', '.join(names) or 'the relay'}")

    def _idle(self, step, peer) -> None:
        """A peer this step neither writes to nor reads from has something to read: if it is
        the end of its connection with nothing before it (no BYE, no ABORT: killed or
        crashed), that is a fault now, not at the next step that needs it; anything else (its
        frames for a later step, a BYE, an ABORT) waits for that step."""
        sock = self._peers[peer]
        select_socket(self._sel, sock, 0, None)
        if _pending(sock):
            return
        try:
            data = socket.socket.recv(sock, 1, socket.MSG_PEEK | socket.MSG_DONTWAIT)
        except WOULD_BLOCK:
            return
        except OSError as e:
            if peer not in self.may_vanish:
                raise TransportError(f"{self.describe(peer)} disconnected at step {step}"
                                     f"{_why(e)}", peer, step) from None
            data = b""
        if not data and peer in self.may_vanish:
            self._vanished(peer)
            return
        if not data:
            raise TransportError(f"{self.describe(peer)} disconnected at step {step}", peer,
                                 step)

    def _vanished(self, peer) -> None:
        """A peer that may vanish has (its connection ended with no BYE): it is :attr:`gone`;
        what it still owed this step reads as zeros, nothing more is sent to it."""
        self.gone.add(peer)
        sock = self._peers.pop(peer)
        select_socket(self._sel, sock, 0, None)
        with contextlib.suppress(OSError):
            sock.close()
        self._unsent.pop(peer, None)
        rd = self._readers.get(peer)
        if rd is not None:
            rd.out = rd.out[:rd.i] + [fr.zeros_of(x) for x in rd.specs[rd.i:]]
            rd.i = len(rd.specs)

    def _check_abort(self, step, peer, h, who) -> None:
        if h["session"] != self.session or h["sender"] != peer or h["receiver"] != self.rank \
                or h["nbytes"] > fr.MAX_ABORT_BYTES:
            raise fr.FrameError(f"bad frame from {who} at step {step}: a malformed ABORT")

    def _aborted(self, step, peer, h, body: bytes, who) -> TransportError:
        """The error of an ABORT frame from ``peer``: what stopped it, and that it reported it."""
        text = body.decode("utf-8", "replace").strip() or f"{who} stopped"
        message = f"{text} (at step {step})" if h["segment"] == 1 else \
            f"{text} (reported by {who} at step {step})"
        return TransportError(message, peer, step, origin=text)

    def _ended(self, step, peer, h) -> TransportError:
        """A BYE where this step expects frames: the peer's program ended early (it diverged)."""
        return TransportError(fr.diverged(
            self.describe(peer), step, self._op, "the end of its program (it ended its part of "
            f"the run after its step {h['step']} and disconnected at step {step})"), peer, step)

    def _salvage(self, peer, step) -> TransportError | None:
        """After a write to ``peer`` failed: the ABORT it sent before closing, if the next bytes
        from it are one (it stopped because of another participant, whom it names), else None.
        Only when nothing of ``peer``'s frames is half read (the stream is at a frame)."""
        sock = self._peers.get(peer)
        if sock is None:
            return None
        try:
            sock.settimeout(0.2)
            head = bytearray()
            while len(head) < fr.FIXED_SIZE:
                got = sock.recv(fr.FIXED_SIZE - len(head))
                if not got:
                    return None
                head += got
            h = fr.decode_fixed(bytes(head))
            if h["kind"] == fr.BYE and h["sender"] == peer:
                return self._ended(step, peer, h)
            if h["kind"] != fr.ABORT:
                return None
            self._check_abort(step, peer, h, self.describe(peer))
            body = bytearray()
            while len(body) < h["nbytes"]:
                got = sock.recv(h["nbytes"] - len(body))
                if not got:
                    return None
                body += got
        except (OSError, ValueError):
            return None
        return self._aborted(step, peer, h, bytes(body), self.describe(peer))

    def _timed_out(self, step, sends, readers):
        waiting = [p for p, r in readers.items() if not r.done]
        relayed = self.relay.waiting_for() if self.relay is not None else []
        names = [self.describe(p) for p in waiting] + \
            [f"{self.describe(p)} through the relay" for p in relayed]
        if not names:
            names = [self.describe(p) for p in sends] or (
                ["the relay"] if self.relay is not None else [])
        what = "for" if waiting or relayed else "to write to"
        first = (waiting + relayed + list(sends) + [None])[0]
        raise TransportError(f"timed out after {self.timeout:g} s at step {step} waiting "
                             f"{what} {', '.join(names) or 'a peer'}", first, step)

    # -- plumbing -----------------------------------------------------------------------------
    def close(self, error: BaseException | None = None) -> None:
        """Close every connection (idempotent). After a clean run: BYE to every direct peer
        (:meth:`_idle`: a peer closing without one was killed) and to the relay. After a
        broken one (an exchange failed, or ``error``: this process stops because of it), every
        peer is told why first: an ABORT frame to each direct peer and an ABORT to the relay
        (which tells the other hosts), carrying the fault as first seen (its ``origin``, naming
        the participant that caused it), so each peer's error names that participant rather
        than this process, which only passed it on."""
        fault = self._broken or error
        origin = None if fault is None else self.origin(fault)
        if fault is not None and self._peers:
            self._abort_peers(origin or "", not isinstance(fault, TransportError))
        elif self._peers:
            self._say_bye()
        if self.relay is not None:
            self.relay.close(fault is None, origin or "")
            self.relay = None
        for sock in self._peers.values():
            with contextlib.suppress(KeyError, ValueError):
                self._sel.unregister(sock)
            with contextlib.suppress(OSError):
                sock.close()
        self._peers.clear()
        if self._listener is not None:
            self._listener.close()
            self._listener = None
        self._sel.close()


    def origin(self, fault: BaseException) -> str:
        """The fault that stops this process as its peers should read it: a transport fault's
        origin (naming who caused it), else this process and its own error."""
        if isinstance(fault, TransportError):
            return fault.origin
        text = str(fault).strip().splitlines()[0] if str(fault).strip() else \
            type(fault).__name__
        if isinstance(fault, KeyboardInterrupt):
            text = "interrupted"
        return f"{self.describe(self.rank)} stopped: {text}"

    def _say_bye(self) -> None:
        """A BYE frame to every direct peer (best effort): this process ended well, so its
        closing connection is not a fault to a peer still running."""
        for peer, sock in self._peers.items():
            try:
                sock.setblocking(True)
                sock.settimeout(0.5)
                sock.sendall(fr.bye_frame(self.session, self.rank, peer, self._last_step))
            except (OSError, ValueError):
                continue

    def _abort_peers(self, why: str, first_hand: bool) -> None:
        """Best effort, at most about a second in all: finish the frame each peer was being
        sent (a half-sent frame would make the ABORT unreadable), then send it the ABORT."""
        until = time.monotonic() + 1.0
        step = self._broken.step if self._broken is not None and self._broken.step else 0
        for peer, sock in self._peers.items():
            left = until - time.monotonic()
            if left <= 0:
                break
            try:
                sock.setblocking(True)
                sock.settimeout(min(left, 0.5))
                for part in self._unsent.get(peer, ()):
                    sock.sendall(part)
                sock.sendall(fr.abort_frame(self.session, int(step), self.rank, peer, why,
                                            first_hand))
            except (OSError, ValueError):
                continue
        self._unsent = {}


def new_session_id() -> int:
    """A random 64-bit tag for a run (frames of another run are refused)."""
    return int.from_bytes(os.urandom(8), "little")
