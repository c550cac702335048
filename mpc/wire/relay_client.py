"""A party host's end of the relay: sealed frames out, frames of each step in, faults named.

:class:`RelayClient` is the part of :class:`mpc.wire.transport.SocketMesh` that
reaches the other party hosts through the relay (:mod:`mpc.wire.relay`). At
start-up it greets the relay, waits for READY (a host that never connected
is named by the relay before any step), exchanges X25519 keys and fresh
nonces with every other host, then key confirmations (signatures over the
run's transcript, :mod:`mpc.wire.e2e`): two rounds through the relay, and
no frame before both. In an exchange it seals this
step's frames to other hosts into envelopes, and reads envelopes as they
come: frames of the current step are checked against what the step
expects (their sealed length before anything is allocated, then, once
opened, their typed header, :func:`mpc.wire.frames.check_header`); frames of a
later step wait in memory (a host may run ahead), within limits checked on
the envelope's header: from each peer, frames of any later steps (a peer that
sends without waiting, as in a one-way exchange, may be several steps ahead),
at most :data:`MAX_AHEAD_FRAMES` of them and :data:`MAX_AHEAD_BYTES` in all (counting
:data:`ENTRY_COST` per frame), and their bodies are read in chunks as they
come, so nothing is allocated from an announced length. A DATA envelope
shorter than a frame (an empty one included), a frame of an earlier step, a
second copy, one the step does not expect, or one that fails to open is an
error naming its sender and the step. GONE from the relay (another host left, or never
came) ends the run with that host's name.
"""

from __future__ import annotations

import contextlib
import selectors
import ssl
import time
from collections import deque
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

import numpy as np

from mpc.wire import frames as fr
from mpc.wire import relay as rl
from mpc.wire.e2e import TAG_BYTES, E2EError
from mpc.wire.sockets import HELLO as _HELLO
from mpc.wire.sockets import WOULD_BLOCK, dial, select_socket, send_queue, why

if TYPE_CHECKING:
    from mpc.wire.e2e import Endpoint
    from mpc.wire.tls import Wrapper
    from mpc.wire.transport import Expected, TransportError, WireCounts


#: frames one peer may have waiting for a later step
MAX_AHEAD_FRAMES = 1024
#: bytes (bodies, plus :data:`ENTRY_COST` per frame) one peer may have waiting for a later step
MAX_AHEAD_BYTES = 1 << 30
#: bytes a waiting frame costs beyond its body (the objects that hold it)
ENTRY_COST = 256


class RelayClient:
    """One host's connection to the relay (see the module docstring)."""

    head: Any                   # the envelope being read: its parsed header, or None

    def __init__(self, sock, rank, session, endpoint, describe, hosts, error, counts,
                 max_buffered, may_vanish=frozenset()):
        self.sock, self.rank, self.session = sock, int(rank), int(session)
        self.endpoint, self.describe, self.error = endpoint, describe, error
        self.hosts = {int(h) for h in hosts} - {self.rank}
        self.counts = counts
        self.max_buffered = int(max_buffered)
        self.may_vanish = frozenset(may_vanish)     # hosts whose absence at start is a dropout
        self.gone: set = set()                      # those the relay said never connected
        self.inbox: dict = {}
        self.buffered = 0
        self.ahead: dict = {}       # peer -> {later step: (frames, bytes)} waiting from it
        self.parts: list = []       # chunks read of a waiting frame's body
        self.left = 0               # bytes of that body still to read
        self.announced: dict = {}
        self.confirmed: dict = {}
        self.ready = False
        self.queue: deque = deque()
        self.step = 0
        self.expect: dict = {}
        self.got: dict = {}
        self._reset()

    def _reset(self):
        self.head, self.body, self.pos = None, bytearray(rl.ENVELOPE_SIZE), 0

    # -- set-up ---------------------------------------------------------------------------------
    @classmethod
    def join(cls, address: tuple[str, int], *, rank: int, session: int, wrap: Wrapper | None,
             endpoint: Endpoint | None, describe: Callable[[int], str], hosts: Iterable[int],
             error: type[TransportError],
             counts: WireCounts, deadline: float, max_buffered: int,
             may_vanish: Iterable[int] = ()) -> RelayClient:
        """Connect to the relay, wait for READY and every other host's key announcement.
        Hosts of ``may_vanish`` that the relay says never connected are left out (``gone``)."""
        host, port = address
        sock = dial(host, port, deadline)
        if sock is None:
            raise error(f"could not connect to the relay at {host}:{port}", None, None)
        try:
            sock.settimeout(max(0.1, deadline - time.monotonic()))
            if wrap is not None:
                sock = wrap(sock, False, rl.RELAY_RANK)
            sock.sendall(_HELLO.pack(fr.MAGIC, fr.VERSION, fr.HELLO, session, rank,
                                     rl.RELAY_RANK))
        except (OSError, ssl.SSLError) as e:
            sock.close()
            raise error(f"the relay at {host}:{port} refused or failed the handshake"
                        f"{why(e) or ' (connection closed)'}", None, None) from None
        sock.setblocking(False)
        self = cls(sock, rank, session, endpoint, describe, hosts, error, counts, max_buffered,
                   frozenset(may_vanish))
        try:
            self._pump(deadline, lambda: self.ready, "waiting for the relay to say every host "
                                                     "is connected")
            self._handshake(endpoint, deadline)
        except BaseException as e:         # the relay is told, and tells the other hosts
            self.close(False, str(e))
            raise
        return self

    def _handshake(self, endpoint: Endpoint | None, deadline: float) -> None:
        """Announcements (segment 0 of ANNOUNCE envelopes), then, with end-to-end encryption,
        key confirmations (segment 1): every other host's, checked (:mod:`mpc.wire.e2e`)."""
        blob = endpoint.announcement() if endpoint is not None else b""
        for h in sorted(self.hosts):
            self._send_control(rl.ANNOUNCE, h, blob)
        self._pump(deadline, lambda: not self.queue and self.hosts <= set(self.announced),
                   "waiting for the other hosts' keys")     # a host gone meanwhile: not waited
        if endpoint is None:
            return
        for h in sorted(set(self.announced) & self.hosts):
            try:
                endpoint.accept(h, self.announced[h])
            except E2EError as e:
                raise self.error(str(e), h, 0) from None
        for h in sorted(self.hosts):
            self._send_control(rl.ANNOUNCE, h, endpoint.confirmation(h), segment=1)
        self._pump(deadline, lambda: not self.queue and self.hosts <= set(self.confirmed),
                   "waiting for the other hosts' key confirmations")
        for h in sorted(set(self.confirmed) & self.hosts):
            try:
                endpoint.confirm(h, self.confirmed[h])
            except E2EError as e:
                raise self.error(str(e), h, 0) from None

    def _pump(self, deadline, until, what) -> None:
        sel = selectors.DefaultSelector()
        try:
            while not until():
                left = deadline - time.monotonic()
                if left <= 0:
                    raise self.error(f"timed out {what} (through the relay)", None, 0)
                ev = selectors.EVENT_READ | (selectors.EVENT_WRITE if self.queue else 0)
                select_socket(sel, self.sock, ev, None)
                if self.pending() or sel.select(min(left, 0.5)):
                    self.write(0)
                    self.read(0)
        finally:
            sel.close()

    def _send_control(self, kind, dst, body: bytes, step=0, segment=0):
        self.queue.append(memoryview(rl.envelope(kind, self.rank, dst, step, segment,
                                                 len(body))))
        if body:
            self.queue.append(memoryview(body))

    # -- exchanges ------------------------------------------------------------------------------
    def begin(self, step: int, out: dict, expect: dict) -> None:
        """Seal and queue this step's frames to other hosts; note what the step expects."""
        stale = [k for k in self.inbox if k[1] < step]
        if stale:
            src, st, _ = stale[0]
            raise self.error(f"{self.describe(src)} sent a frame for step {st}, which "
                             f"expected none from it (through the relay)", src, step)
        self.step, self.expect, self.got = step, expect, {p: {} for p in expect}
        for p in self.gone & set(expect):
            self.got[p] = {x.segment: None for x in expect[p]}
        for peer, frames in out.items():
            if peer in self.gone:
                continue
            sent = 0
            for f in frames:
                plain = rl.pack_frame(self.session, step, self.rank, peer, f)
                sealed = self.endpoint.seal(peer, step, f.segment, plain) \
                    if self.endpoint is not None else plain
                head = rl.envelope(rl.DATA, self.rank, peer, step, f.segment, len(sealed))
                self.queue.append(memoryview(head))
                self.queue.append(memoryview(sealed))
                extra = len(head) + len(sealed) - f.payload.size
                self.counts.frames_sent += 1
                self.counts.header_bytes_sent += extra
                self.counts.payload_bytes_sent += f.payload.size
                sent += len(head) + len(sealed)
            self.counts.per_peer_sent[peer] = self.counts.per_peer_sent.get(peer, 0) + sent
        for src, waiting in list(self.ahead.items()):
            for st in [st for st in waiting if st <= step]:
                del waiting[st]
            if not waiting:
                del self.ahead[src]
        for (src, st, seg) in [k for k in self.inbox if k[1] == step]:
            body = self.inbox.pop((src, st, seg))
            self.buffered -= len(body) + ENTRY_COST
            if src not in expect:
                raise self.error(f"{self.describe(src)} sent a frame for step {step}, which "
                                 "expects none from it (through the relay)", src, step)
            self._accept_current(src, seg, body)

    @property
    def done(self) -> bool:
        return not self.queue and all(len(self.got[p]) == len(s) for p, s in self.expect.items())

    def waiting_for(self) -> list:
        return [p for p, s in self.expect.items() if len(self.got[p]) < len(s)]

    def pending(self) -> bool:
        return isinstance(self.sock, ssl.SSLSocket) and self.sock.pending() > 0

    def write(self, step: int) -> None:
        try:
            send_queue(self.sock, self.queue, rl._CHUNK)
        except OSError as e:
            raise self.error(f"the relay disconnected at step {step}{why(e)}", None,
                             step) from None

    def read(self, step: int) -> None:
        """Read every envelope the socket has (frames of this step, later ones, control)."""
        while True:
            view = memoryview(self.body)[self.pos:]
            if len(view):
                try:
                    n = self.sock.recv_into(view, min(len(view), rl._CHUNK))
                except WOULD_BLOCK:
                    return
                except OSError as e:
                    raise self.error(f"the relay disconnected at step {step}{why(e)}", None,
                                     step) from None
                if n == 0:
                    raise self.error(f"the relay disconnected at step {step}", None, step)
                self.pos += n
                if self.pos < len(self.body):
                    continue
            if self.head is None:
                self._header(step)
                if self.head["length"]:     # type: ignore[index]  # _header() set it
                    continue
            if self.left:                   # a chunk of a waiting frame's body
                self.parts.append(self.body)
                self.left -= len(self.body)
                if self.left:
                    self.body, self.pos = bytearray(min(self.left, rl._CHUNK)), 0
                    continue
                self.body = self.parts[0] if len(self.parts) == 1 else \
                    bytearray().join(self.parts)
                self.parts = []
                if self.head["step"] <= self.step:  # its step began while it came: release
                    self.buffered -= self.head["length"] + ENTRY_COST
            h, body = self.head, self.body
            self._reset()
            self._envelope(h, body, step)

    def _header(self, step) -> None:
        try:
            h = rl.parse(bytes(self.body))
        except ValueError as e:
            raise self.error(f"the relay sent a malformed envelope at step {step}: {e}", None,
                             step) from None
        src, kind = h["src"], h["kind"]
        if kind in (rl.DATA, rl.ANNOUNCE) and src not in self.hosts:
            raise self.error(f"the relay forwarded an envelope from rank {src}, not a host of "
                             f"this run, at step {step}", None, step)
        if kind != rl.DATA:
            limit = rl.MAX_CONTROL_BYTES
        elif h["length"] < fr.FIXED_SIZE + (TAG_BYTES if self.endpoint is not None else 0):
            raise self.error(f"{self.describe(src)} sent an empty frame for step {h['step']}"
                             if not h["length"] else f"{self.describe(src)} sent a frame of "
                             f"{h['length']} bytes for step {h['step']}, shorter than a frame",
                             src, step)
        elif h["step"] == self.step and h["segment"] < len(self.expect.get(src, ())):
            limit = sealed_size(self.expect[src][h["segment"]], self.endpoint is not None)
            if h["length"] != limit:
                raise self.error(f"a frame from {self.describe(src)} at step {step} announces "
                                 f"{h['length']} bytes, expected {limit}", src, step)
        elif h["step"] <= self.step:
            self._envelope(h, b"", step)        # refused: earlier, a copy, or not expected
            raise AssertionError("unreachable: _envelope refuses it")
        else:
            self._wait(src, h, step)
            self.head, self.pos = h, 0
            self.left = h["length"]
            self.body = bytearray(min(self.left, rl._CHUNK))
            return
        if h["length"] > limit:
            raise self.error(f"a frame from {self.describe(src)} for step {h['step']} announces "
                             f"{h['length']} bytes (at most {limit} may wait), at step {step}",
                             src, step)
        self.head, self.body, self.pos = h, bytearray(h["length"]), 0

    def _wait(self, src: int, h: dict, step: int) -> None:
        """Reserve room for a frame of a later step from ``src`` (before reading its body), or
        refuse it: at most MAX_AHEAD_FRAMES frames and MAX_AHEAD_BYTES from each peer, over
        all its later steps, and at most max_buffered from all peers."""
        who = self.describe(src)
        waiting = self.ahead.setdefault(src, {})
        frames = sum(f for f, _ in waiting.values())
        held = sum(b for _, b in waiting.values())
        if frames >= MAX_AHEAD_FRAMES:
            raise self.error(f"{who} has {frames} frames waiting for later steps (at most "
                             f"{MAX_AHEAD_FRAMES}), at step {step} (through the relay)", src,
                             step)
        cost = h["length"] + ENTRY_COST
        limit = min(MAX_AHEAD_BYTES - held, self.max_buffered - self.buffered)
        if cost > limit:
            raise self.error(f"a frame from {who} for step {h['step']} announces "
                             f"{h['length']} bytes (at most {max(0, limit - ENTRY_COST)} more "
                             f"may wait), at step {step}", src, step)
        f, b = waiting.get(h["step"], (0, 0))
        waiting[h["step"]] = (f + 1, b + cost)
        self.buffered += cost

    def _envelope(self, h, body, step) -> None:
        kind, src = h["kind"], h["src"]
        if kind == rl.READY:
            self.ready = True
        elif kind == rl.GONE and src in self.may_vanish & self.hosts:
            self.gone.add(src)                      # never connected, or vanished: a dropout
            self.hosts.discard(src)
            if src in self.expect:                  # what it owed this step reads as zeros
                self.got[src] = {x.segment: None for x in self.expect[src]}
        elif kind == rl.GONE:
            text = bytes(body).decode("utf-8", "replace")
            who = None if src == rl.RELAY_RANK or src not in self.hosts | {self.rank} \
                else src
            raise self.error(f"{text} (reported by the relay at step {step})", who, step,
                             origin=text)
        elif kind == rl.ANNOUNCE:
            got = self.confirmed if h["segment"] == 1 else self.announced
            if src in got or h["segment"] > 1:
                raise self.error(f"{self.describe(src)} announced its key or confirmation "
                                 "twice", src, step)
            got[src] = bytes(body)
        elif kind == rl.DATA:
            key = (src, h["step"], h["segment"])
            if h["step"] < self.step or key in self.inbox or (
                    h["step"] == self.step and h["segment"] in self.got.get(src, {})):
                raise self.error(f"{self.describe(src)} sent a frame for step {h['step']} "
                                 f"segment {h['segment']} again or out of order, at step "
                                 f"{step} (through the relay)", src, step)
            if h["step"] == self.step and src in self.expect:
                self._accept_current(src, h["segment"], body)
            elif h["step"] == self.step:
                raise self.error(f"{self.describe(src)} sent a frame at step {step}, which "
                                 f"expects none from it (through the relay)", src, step)
            else:
                self.inbox[key] = body          # its room was reserved by _wait

        else:
            raise self.error(f"the relay sent a {rl.KINDS[kind]} envelope at step {step}",
                             None, step)

    def _accept_current(self, src, seg, body) -> None:
        specs = self.expect[src]
        if seg >= len(specs):
            raise self.error(f"{self.describe(src)} sent segment {seg} at step {self.step}, "
                             f"which expects {len(specs)} from it", src, self.step)
        self.got[src][seg] = body

    def take(self) -> dict:
        """This step's frames, opened and checked: ``{peer: [array, ...]}``."""
        out = {}
        for src, specs in self.expect.items():
            arrays = []
            for spec in specs:
                body = self.got[src][spec.segment]
                arrays.append(fr.zeros_of(spec) if src in self.gone else
                              self._open(src, spec, body))
            out[src] = arrays
        return out

    def _open(self, src, spec, body):
        step, who = self.step, self.describe(src)
        try:
            plain = self.endpoint.open(src, step, spec.segment, body) \
                if self.endpoint is not None else bytes(body)
            h = fr.decode_fixed(plain[:fr.FIXED_SIZE])
            hs = fr.header_size(h["ndim"])
            if len(plain) < hs:
                raise fr.FrameError(f"truncated frame from {who} at step {step}")
            h["shape"] = fr.decode_shape(plain[fr.FIXED_SIZE:hs], h["ndim"])
            fr.check_header(h, spec.shape, session=self.session, step=step, sender=src,
                            receiver=self.rank, segment=spec.segment, dtype=spec.dtype,
                            bits=spec.bits, who=who, op=spec.op)
            if len(plain) != hs + h["nbytes"]:
                raise fr.FrameError(f"bad frame from {who} at step {step}: {len(plain) - hs} "
                                    f"payload bytes, header says {h['nbytes']}")
        except E2EError:
            raise self.error(f"a frame from {who} at step {step} fails authentication (altered, "
                             "replayed, reordered or not from it; through the relay)", src,
                             step) from None
        except fr.FrameError as e:
            raise self.error(f"{e} (through the relay)", src, step) from None
        self.counts.frames_received += 1
        self.counts.header_bytes_received += len(body) - h["nbytes"] + rl.ENVELOPE_SIZE
        self.counts.payload_bytes_received += h["nbytes"]
        return fr.unpack(np.frombuffer(plain, np.uint8, offset=hs), spec.dtype, spec.bits,
                         spec.shape)

    # -- closing --------------------------------------------------------------------------------
    def close(self, clean: bool, reason: str = "") -> None:
        """Say BYE (a clean end) or ABORT with the reason, then close."""
        try:
            self.sock.setblocking(True)
            self.sock.settimeout(2.0)
            body = b"" if clean else reason.encode("utf-8", "replace")[:fr.MAX_ABORT_BYTES]
            self.sock.sendall(rl.envelope(rl.BYE if clean else rl.ABORT, self.rank,
                                          rl.RELAY_RANK, self.step, 0, len(body)) + body)
        except (OSError, ValueError):
            pass
        with contextlib.suppress(OSError):
            self.sock.close()


def sealed_size(spec: Expected, sealed: bool) -> int:
    """Bytes of one sealed frame of ``spec``: typed header, packed payload, AEAD tag."""
    count = int(np.prod(spec.shape, dtype=np.int64)) if spec.shape else 1
    return (fr.header_size(len(spec.shape)) + fr.payload_nbytes(count, spec.bits)
            + (TAG_BYTES if sealed else 0))
