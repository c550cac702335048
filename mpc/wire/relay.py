"""The relay: party hosts reach each other through one process, which sees only sizes and timing.

Data parties do not open connections to each other. Each party host
connects (TLS, :mod:`mpc.wire.tls`) to the relay and to the role processes;
a frame from one host to another is sealed end to end (:mod:`mpc.wire.e2e`)
and sent to the relay in an *envelope*, which the relay forwards to the
receiving host's connection.

Envelope (its format and parser: :mod:`mpc.wire.envelopes`, re-exported here): a fixed
little-endian header, then ``length`` bytes:

====================  =====  ==================================================
field                 bytes  meaning
====================  =====  ==================================================
magic                 2      ``b"UR"``
version               1      :data:`VERSION`
kind                  1      DATA, ANNOUNCE (an X25519 key), READY, GONE, BYE, ABORT
source, destination   4 + 4  process ranks (the relay checks the source against
                             the certificate of the connection it came on)
step                  8      the exchange the frame belongs to
segment               2      its index among the step's frames to that host
length                8      bytes that follow (a DATA body: the sealed frame)
====================  =====  ==================================================

The relay forwards DATA and ANNOUNCE envelopes as they are, after checking
the source (the connection's authenticated participant), the destination
(another host of the run) and the length (at most
:data:`mpc.wire.frames.MAX_FRAME_BYTES` plus the frame's overhead; a DATA
envelope shorter than a frame header, an empty one included, is refused).
Nothing is allocated from an announced length: a body of at most
:data:`STREAM_ABOVE` bytes is read whole (it is at most that), a longer one
is streamed, its header forwarded with its first chunk and its bytes in
chunks as they come; until its last chunk is queued, the relay reads nothing
more from other senders to that host, so envelopes reach a host whole, in
the order they were queued, never interleaved. What waits to go to a host is
capped (:data:`MAX_QUEUED_BYTES`, counting :data:`ENTRY_COST` per piece, and
:data:`MAX_QUEUED_ENTRIES`): while a host's queue is full, the relay reads
no further body bytes for it from the sender (TCP holds the sender back), so
a host that does not read, or one that floods another, costs the relay at
most that much memory. It sends READY to every host once all have connected
(or GONE naming those that never did, before any step), and when a host
disconnects without saying BYE, or sends something malformed, it tells every
other host (GONE, with the host and the reason) and stops: no host waits on
a run that cannot finish.

What the relay can learn or do: see docs/guides/deploy.md ("What the relay can
learn or do"). In short: it sees which host sends how many bytes to which,
and when; it can drop, delay or reorder envelopes, each of which ends the
run with an error naming the step; it cannot read a frame, alter one
(authentication fails), forge one, or redirect one (the receiver's key and
the associated data differ), and it cannot substitute X25519 keys or replay
an earlier run's (every host signs the run's transcript, :mod:`mpc.wire.e2e`).
ANNOUNCE envelopes carry a host's announcement (segment 0) and its key
confirmation (segment 1).
"""

from __future__ import annotations

import contextlib
import selectors
import socket
import ssl
import struct
import time
from collections import deque
from typing import Any

from mpc.wire import frames as fr
from mpc.wire.envelopes import (  # the envelope's names, re-exported
    ABORT,
    ANNOUNCE,
    BYE,
    DATA,
    ENVELOPE,
    ENVELOPE_SIZE,
    GONE,
    KINDS,
    MAGIC,
    MAX_CONTROL_BYTES,
    READY,
    RELAY_RANK,
    VERSION,
    RelayError,
    envelope,
    pack_frame,
    parse,
)
from mpc.wire.sockets import (
    WOULD_BLOCK,
    accept_peers,
    listen_socket,
    select_socket,
    send_queue,
    tcp_info_bytes,
    why,
)

__all__ = [
    "ABORT", "ANNOUNCE", "BYE", "DATA", "ENVELOPE", "ENVELOPE_SIZE", "GONE", "KINDS", "MAGIC",
    "MAX_CONTROL_BYTES", "MAX_QUEUED_BYTES", "MAX_QUEUED_ENTRIES", "READY", "RELAY_RANK",
    "STREAM_ABOVE", "VERSION", "Relay", "RelayError", "envelope", "pack_frame", "parse",
]

#: seconds the relay keeps flushing its last messages after a fault (a host busy computing
#: reads its GONE only at its next step)
LINGER = 5.0
_CHUNK = 1 << 20
#: bodies longer than this are streamed in chunks of at most this, not read whole first
STREAM_ABOVE = _CHUNK
#: most bytes (bodies, headers and :data:`ENTRY_COST` per piece) waiting to go to one host
MAX_QUEUED_BYTES = 64 << 20
#: most pieces (headers, bodies, chunks) waiting to go to one host
MAX_QUEUED_ENTRIES = 1 << 14
#: bytes a queued piece costs beyond its own (the objects that hold it)
ENTRY_COST = 256
_ZEROS = memoryview(bytes(_CHUNK))


class _Conn:
    """One host's connection at the relay: what is being read from it, what waits to go to it."""

    __slots__ = ("body", "bye", "forwarded", "head", "left", "owner", "pos", "queue", "rank",
                 "sock", "streamed")

    def __init__(self, rank, sock):
        self.rank, self.sock = rank, sock
        self.queue: deque = deque()
        self.bye = False
        self.forwarded = 0
        self.streamed = False       # the queue holds chunks of a streamed body
        self.owner: int | None = None   # the sender whose streamed body to it is under way
        self._reset()

    def _reset(self):
        self.head, self.body, self.pos = None, bytearray(ENVELOPE_SIZE), 0
        self.left = 0               # bytes of a streamed body still to read (0: not streaming)

    def full(self) -> bool:
        """Its queue is at the cap: read nothing more for it (see the module docstring)."""
        q = self.queue
        return len(q) >= MAX_QUEUED_ENTRIES or \
            sum(len(mv) for mv in q) + ENTRY_COST * len(q) >= MAX_QUEUED_BYTES


class Relay:
    """The relay process's loop (see the module docstring).

    ``hosts``: the ranks of the party hosts; ``names[rank]``: participant
    names (for certificates and messages); ``wrap``: an :class:`mpc.wire.tls.Wrapper`
    (server side) or None (plain TCP, tests of this machine only).
    """

    def __init__(self, hosts, names, session: int, *, wrap=None, connect_timeout=30.0,
                 max_frame_bytes=None, may_vanish=()):
        self.hosts = sorted(int(h) for h in hosts)
        self.may_vanish = frozenset(int(h) for h in may_vanish)    # absent or lost: dropouts
        self.gone: set = set()          # hosts that vanished mid-run (the others go on)
        self.names = list(names)
        self.session = int(session)
        self.wrap = wrap
        self.connect_timeout = float(connect_timeout)
        self.max_body = (fr.MAX_FRAME_BYTES if max_frame_bytes is None else max_frame_bytes) + 4096
        self.conns: dict[int, _Conn] = {}
        self.refused: list = []
        self._listener: socket.socket | None = None
        self.port: int | None = None
        self.bytes_forwarded = 0
        self.tcp_bytes = (0, 0)         # (sent, received) by TCP, TLS records included

    def open(self, host: str = "127.0.0.1", port: int = 0) -> Relay:
        lst = listen_socket(host, port, "the relay")
        lst.listen(max(8, len(self.hosts)))
        self._listener, self.port = lst, lst.getsockname()[1]
        return self

    def name(self, rank: int) -> str:
        return self.names[rank] if 0 <= rank < len(self.names) else f"rank {rank}"

    # -- set-up ---------------------------------------------------------------------------------
    def accept_all(self) -> None:
        """Accept every host (greeting and certificate checked), then send READY to each; on a
        host that never connects, GONE naming it to those that did, and RelayError."""
        deadline = time.monotonic() + self.connect_timeout
        waiting = set(self.hosts)
        listener = self._listener
        assert listener is not None, "open() made the listener"
        got = accept_peers(listener, deadline, self.session, RELAY_RANK, self.wrap, waiting,
                           self.refused)
        self.conns.update((rank, _Conn(rank, sock)) for rank, sock in got.items())
        if waiting and waiting <= self.may_vanish and len(self.conns) >= 2:
            for r in sorted(waiting):       # dropouts before the first step: the others go on
                body = f"never connected to the relay: {self.name(r)}".encode()
                for dst, c in self.conns.items():
                    c.queue.extend((memoryview(envelope(GONE, r, dst, 0, 0, len(body))),
                                    memoryview(body)))
            self.hosts = sorted(self.conns)
            waiting = set()
        if waiting:
            missing = ", ".join(self.name(r) for r in sorted(waiting))
            why = f"never connected to the relay: {missing}" + self._refusals()
            self._broadcast(GONE, min(waiting), 0, why)
            self._flush_and_close(time.monotonic() + LINGER)
            raise RelayError(why)
        listener.close()
        self._listener = None
        for c in self.conns.values():
            c.sock.setblocking(False)
        self._broadcast(READY, RELAY_RANK, 0, b"")

    def _refusals(self) -> str:
        return ("; refused: " + "; ".join(self.refused[-4:])) if self.refused else ""

    # -- forwarding -----------------------------------------------------------------------------
    def serve(self) -> dict:
        """Forward until every host said BYE and its frames are delivered. Returns what was
        forwarded per host; RelayError (after telling every host) on a fault."""
        sel = selectors.DefaultSelector()
        for c in self.conns.values():
            sel.register(c.sock, selectors.EVENT_READ, c)
        open_ = set(self.conns)
        try:
            while open_:
                for key, mask in sel.select(1.0):
                    c = key.data
                    if mask & selectors.EVENT_WRITE:
                        self._write(c)
                    # nested: the inner condition is the read itself, not a test
                    if mask & selectors.EVENT_READ and c.rank in open_:  # noqa: SIM102
                        if not self._read(c):
                            open_.discard(c.rank)
                for c in self.conns.values():
                    self._pending(c, open_)
                    ev = (selectors.EVENT_READ if c.rank in open_ and not self._held(c)
                          else 0) | (selectors.EVENT_WRITE if c.queue else 0)
                    select_socket(sel, c.sock, ev, c)
        except RelayError as e:
            self._broadcast(GONE, e.args[1] if len(e.args) > 1 else RELAY_RANK, 0, e.origin)
            self._flush_and_close(time.monotonic() + LINGER)
            raise RelayError(e.args[0], origin=e.origin) from None
        finally:
            sel.close()
        self._flush_and_close(time.monotonic() + LINGER)
        return {"forwarded": {self.names[r]: c.forwarded for r, c in self.conns.items()},
                "tcp_bytes_sent": self.tcp_bytes[0], "tcp_bytes_received": self.tcp_bytes[1]}

    def _pending(self, c, open_):
        """TLS bytes already decrypted in the socket object (select does not see them)."""
        while c.rank in open_ and isinstance(c.sock, ssl.SSLSocket) and c.sock.pending() \
                and not self._held(c):
            if not self._read(c):
                open_.discard(c.rank)

    def _held(self, c: _Conn) -> bool:
        """``c``'s next bytes are a body for a host whose queue is full (wait until it reads),
        or for a host another sender is streaming a body to (wait until that body is queued
        whole: an envelope reaches its host in one piece, never interleaved with another's)."""
        h = c.head
        if h is None or h["kind"] not in (DATA, ANNOUNCE):
            return False
        dst = self.conns[h["dst"]]
        return dst.full() or dst.owner not in (None, c.rank)

    def _read(self, c: _Conn) -> bool:
        """Read what the socket has; False once the host has left after BYE."""
        while True:
            if self._held(c):
                return True
            view = memoryview(c.body)[c.pos:]
            if len(view):
                try:
                    n = c.sock.recv_into(view, min(len(view), _CHUNK))
                except WOULD_BLOCK:
                    return True
                except OSError as e:
                    if c.bye or self._vanish(c):
                        return False
                    raise RelayError(f"{self.name(c.rank)} disconnected{why(e)}",
                                     c.rank) from None
                if n == 0:
                    if c.bye or self._vanish(c):
                        return False
                    raise RelayError(f"{self.name(c.rank)} disconnected", c.rank)
                c.pos += n
                if c.pos < len(c.body):
                    continue
            if c.head is None:
                self._head(c)
                continue                    # held? then the body (an empty one: dispatched)
            if c.left:
                self._stream_chunk(c)
                continue
            self._dispatch(c, c.head, bytes(c.body) if c.head["length"] <= 4096 else c.body)
            c._reset()

    def _head(self, c: _Conn) -> None:
        """An envelope header is in: check it, then read its body whole (at most
        :data:`STREAM_ABOVE` bytes) or in chunks (a longer one: nothing queued yet)."""
        try:
            h = parse(bytes(c.body))
        except ValueError as e:
            raise RelayError(f"{self.name(c.rank)} sent a malformed envelope: {e}",
                             c.rank) from None
        self._check(c, h)
        c.head, c.pos = h, 0
        if h["length"] > STREAM_ABOVE:
            c.left = h["length"]
            c.body = bytearray(_CHUNK)
        else:
            c.body = bytearray(h["length"])

    def _stream_chunk(self, c: _Conn) -> None:
        """A chunk of a streamed body is in: queue it to its host (after the envelope's header,
        with the first chunk; the host is then ``c``'s until the last), start the next."""
        h = c.head
        assert h is not None, "_head() set it"
        dst = self.conns[h["dst"]]
        if c.left == h["length"]:
            head = envelope(h["kind"], h["src"], h["dst"], h["step"], h["segment"], h["length"])
            dst.queue.append(memoryview(head))
            dst.owner = c.rank
            c.forwarded += len(head)
            self.bytes_forwarded += len(head)
        dst.queue.append(memoryview(c.body))
        dst.streamed = True
        c.forwarded += len(c.body)
        self.bytes_forwarded += len(c.body)
        c.left -= len(c.body)
        if c.left:
            c.body, c.pos = bytearray(min(c.left, _CHUNK)), 0
        else:
            dst.owner = None
            c._reset()

    def _check(self, c, h) -> None:
        who = self.name(c.rank)
        if h["src"] != c.rank:
            raise RelayError(f"{who} sent an envelope claiming to be from "
                             f"{self.name(h['src'])}", c.rank)
        limit = self.max_body if h["kind"] == DATA else MAX_CONTROL_BYTES
        if h["kind"] == DATA and h["length"] < fr.FIXED_SIZE:
            raise RelayError(f"{who} sent an empty data envelope at step {h['step']}"
                             if not h["length"] else f"{who} sent a data envelope of "
                             f"{h['length']} bytes at step {h['step']}, shorter than a frame",
                             c.rank)
        if h["length"] > limit:
            raise RelayError(f"{who} announced an envelope of {h['length']} bytes at step "
                             f"{h['step']} (at most {limit})", c.rank)
        if h["kind"] in (DATA, ANNOUNCE) and (h["dst"] not in self.conns or h["dst"] == c.rank):
            raise RelayError(f"{who} addressed an envelope to rank {h['dst']}, not another "
                             "host of this run", c.rank)
        if h["kind"] in (READY, GONE):
            raise RelayError(f"{who} sent a {KINDS[h['kind']]} envelope (only the relay may)",
                             c.rank)

    def _dispatch(self, c, h, body) -> None:
        if h["kind"] == BYE:
            c.bye = True
            return
        if h["kind"] == ABORT:
            who = self.name(c.rank)
            text = bytes(body[:fr.MAX_ABORT_BYTES]).decode("utf-8", "replace").strip() \
                or f"{who} stopped"
            raise RelayError(text if text.startswith(who) else
                             f"{text} (reported by {who} at step {h['step']})", c.rank,
                             origin=text)
        out = self.forward(h, body)
        if out is None:
            return
        head, body = out
        if h["dst"] in self.gone:           # vanished: nothing more reaches it
            return
        dst = self.conns[h["dst"]]
        dst.queue.append(memoryview(head))
        if len(body):
            dst.queue.append(memoryview(body))
        c.forwarded += len(head) + len(body)
        self.bytes_forwarded += len(head) + len(body)

    def _vanish(self, c: _Conn) -> bool:
        """Host ``c`` left without BYE: if it may vanish and two hosts stay, it is :attr:`gone`
        (GONE to the others, its envelopes no longer forwarded) and the run goes on."""
        if c.rank not in self.may_vanish or len(self.conns) - len(self.gone) <= 2:
            return False
        self.gone.add(c.rank)
        c.queue.clear()
        for other in self.conns.values():
            if other.owner == c.rank:                   # its streamed body: padded, released
                self._end_streams(other)
        body = f"{self.name(c.rank)} vanished".encode()
        for r, other in self.conns.items():
            if r not in self.gone:
                other.queue.extend((memoryview(envelope(GONE, c.rank, r, 0, 0, len(body))),
                                    memoryview(body)))
        return True

    def forward(self, h: dict, body: bytes | bytearray) -> tuple[bytes, Any] | None:
        """(header, body) to pass on for envelope ``h`` (None drops it). The relay passes every
        envelope unchanged; tests override this to play a relay that alters or drops (bodies
        of at most :data:`STREAM_ABOVE` bytes: longer ones are streamed past it unchanged)."""
        return envelope(h["kind"], h["src"], h["dst"], h["step"], h["segment"],
                        h["length"]), body

    def _write(self, c: _Conn) -> None:
        try:
            send_queue(c.sock, c.queue, _CHUNK)
        except OSError:
            c.queue.clear()                         # it left; the read side reports it
        if not c.queue:
            c.streamed = False

    # -- stopping -------------------------------------------------------------------------------
    def _broadcast(self, kind, src, step, text) -> None:
        body = text.encode() if isinstance(text, str) else text
        for r, c in self.conns.items():
            if r != src:
                if kind == GONE:
                    self._end_streams(c)
                c.queue.append(memoryview(envelope(kind, src, r, step, 0, len(body))))
                if body:
                    c.queue.append(memoryview(body))

    def _flush_and_close(self, until: float) -> None:
        conns = [c for c in self.conns.values() if c.queue]
        for c in conns:
            try:
                c.sock.setblocking(True)
                c.sock.settimeout(max(0.05, until - time.monotonic()))
                while c.queue:
                    c.sock.sendall(c.queue.popleft())
            except OSError:
                c.queue.clear()
        self._drain(until)
        self.close()

    def _drain(self, until: float) -> None:
        """Half-close every connection and read what its host still sends until it closes
        (or ``until``): closing a socket with unread bytes resets the connection, and a reset
        can discard the GONE or BYE just sent before the host has read it."""
        live = []
        for c in self.conns.values():
            with contextlib.suppress(OSError):
                c.sock.shutdown(socket.SHUT_WR)
                c.sock.setblocking(False)
                live.append(c.sock)
        while live and time.monotonic() < until:
            ready = selectors.DefaultSelector()
            try:
                for sock in live:
                    ready.register(sock, selectors.EVENT_READ)
                for key, _ in ready.select(min(0.2, max(0.0, until - time.monotonic()))):
                    try:
                        if not key.fileobj.recv(1 << 16):           # type: ignore[union-attr]
                            live.remove(key.fileobj)
                    except (BlockingIOError, ssl.SSLWantReadError):
                        pass
                    except OSError:
                        live.remove(key.fileobj)
            finally:
                ready.close()

    def close(self) -> None:
        sent = received = 0
        for c in self.conns.values():
            a, b = tcp_info_bytes(c.sock)
            sent, received = sent + a, received + b
        if self.conns and (sent or received):
            self.tcp_bytes = (sent, received)
        for c in self.conns.values():
            with contextlib.suppress(OSError):
                c.sock.close()
        if self._listener is not None:
            self._listener.close()
            self._listener = None


    def _end_streams(self, c: _Conn) -> None:
        """Before a GONE to ``c``: the envelopes it needs to read the GONE. A streamed body
        queued to it stays whole and one still coming is padded with zeros (it then fails to
        open, and the GONE that follows says why); else the envelopes not started go."""
        coming = [s for s in self.conns.values() if s.rank == c.owner and s.left]
        if not coming and not c.streamed:
            _drop_unsent(c)
            return
        for s in coming:
            c.queue.append(memoryview(s.body)[:s.pos])
            left = s.left - s.pos
            while left:
                c.queue.append(_ZEROS[:min(left, _CHUNK)])
                left -= min(left, _CHUNK)
            s._reset()
        c.owner = None


def _drop_unsent(c: _Conn) -> None:
    """Forget the envelopes queued to a host but not started (the run is over: only the GONE
    that follows matters), keeping the rest of one partly sent, so that the GONE is next."""
    keep = []
    if c.queue:
        front = c.queue[0]
        if len(front) < memoryview(front.obj).nbytes:      # partly sent: finish its envelope
            keep.append(front)
            whole = bytes(memoryview(front.obj))
            if len(whole) == ENVELOPE_SIZE and len(c.queue) > 1:
                with contextlib.suppress(ValueError, struct.error):
                    if parse(whole)["length"]:
                        keep.append(c.queue[1])               # its body
    c.queue.clear()
    c.queue.extend(keep)
