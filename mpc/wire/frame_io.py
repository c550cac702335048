"""Writing and reading one step's frames on a mesh's sockets, without copies.

:class:`Outgoing` is a frame to write, :class:`Expected` a frame a step must
read. Writing: the header (:func:`mpc.wire.frames.encode_header`) and the packed
payload go as memoryviews, as much as each non-blocking ``send`` takes
(:meth:`_FrameIO._queue`, :meth:`_FrameIO._write`). Reading (:class:`_Reader`, one
per peer and step): the fixed header first, checked against the expectation
before anything is allocated (a frame announcing more than
:data:`MAX_FRAME_BYTES` is refused), then the shape, then the payload straight
into a buffer of exactly its announced size (``recv_into``; the receiver's own
array when the elements travel at full width). Bytes TLS already decrypted
(``pending()``, invisible to ``select``) are read before waiting.

Cost: no copy of a payload on either side; the counters add each frame's header
and payload bytes. Threat model: a peer may send anything; nothing is allocated
before its header matched the step's expectation.
"""

from __future__ import annotations

import selectors
from dataclasses import dataclass
from typing import Any

import numpy as np

from mpc.wire import frames as fr
from mpc.wire.dropouts import _Dropouts
from mpc.wire.faults import TransportError, _Faults
from mpc.wire.mesh_state import _CHUNK, MAX_FRAME_BYTES
from mpc.wire.sockets import (
    WOULD_BLOCK,
    select_socket,
)
from mpc.wire.sockets import pending as _pending
from mpc.wire.sockets import why as _why


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


class _FrameIO(_Dropouts, _Faults):
    """Queueing, writing and reading frames, and selecting sockets for them."""

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
