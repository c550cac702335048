"""The relay's envelope: the 30-byte header every message through the relay carries.

A host talks to the relay (:mod:`mpc.wire.relay`) in envelopes: ``kind``
(:data:`KINDS`: data, announce, ready, gone, bye, abort), sender and receiver
ranks (:data:`RELAY_RANK` names the relay itself), the step, the segment and
the body's length, little-endian (:data:`ENVELOPE`). A data body is one
frame (:func:`pack_frame`: the typed header of :mod:`mpc.wire.frames` and the
packed payload, end-to-end encrypted by the hosts on top of TLS); a control
body is at most :data:`MAX_CONTROL_BYTES`. :func:`parse` refuses anything
else (wrong magic, version or kind) with a ValueError before a length is
used. Threat model: the relay reads envelopes, never frame contents; a
malformed envelope ends the run, naming its sender (:class:`RelayError`).
"""

from __future__ import annotations

import struct
from typing import TYPE_CHECKING

from mpc.wire import frames as fr

if TYPE_CHECKING:
    from mpc.wire.transport import Outgoing

__all__ = [
    "ABORT", "ANNOUNCE", "BYE", "DATA", "ENVELOPE", "ENVELOPE_SIZE", "GONE", "KINDS", "MAGIC",
    "MAX_CONTROL_BYTES", "READY", "RELAY_RANK", "VERSION", "RelayError", "envelope",
    "pack_frame", "parse",
]

MAGIC = b"UR"
VERSION = 1
DATA, ANNOUNCE, READY, GONE, BYE, ABORT = range(6)
KINDS = {DATA: "data", ANNOUNCE: "announce", READY: "ready", GONE: "gone", BYE: "bye",
         ABORT: "abort"}
ENVELOPE = struct.Struct("<2sBBIIQHQ")
ENVELOPE_SIZE = ENVELOPE.size               # 30 bytes
#: the receiver a host names in its greeting to the relay
RELAY_RANK = 0xFFFFFFFF
#: most bytes of an ANNOUNCE, READY, GONE, BYE or ABORT body
MAX_CONTROL_BYTES = 1 << 16


class RelayError(RuntimeError):
    """The relay stopped: a host never connected, disconnected, or sent something malformed.

    ``args``: (message, the rank of the host at fault or that reported it); ``origin``: the
    fault as first seen, naming who caused it (what the relay tells the other hosts)."""

    def __init__(self, message: str, *args: object, origin: str | None = None):
        super().__init__(message, *args)
        self.origin = origin or message


def envelope(kind: int, src: int, dst: int, step: int, segment: int, length: int) -> bytes:
    return ENVELOPE.pack(MAGIC, VERSION, kind, src, dst, step, segment, length)


def parse(buf: bytes | bytearray | memoryview) -> dict:
    """The fields of an envelope header; ValueError if it is not one."""
    magic, version, kind, src, dst, step, segment, length = ENVELOPE.unpack(buf)
    if magic != MAGIC or version != VERSION:
        raise ValueError(f"not a relay envelope (magic {magic!r}, version {version})")
    if kind not in KINDS:
        raise ValueError(f"unknown envelope kind {kind}")
    return {"kind": kind, "src": src, "dst": dst, "step": step, "segment": segment,
            "length": length}


def pack_frame(session: int, step: int, sender: int, receiver: int, f: Outgoing) -> bytes:
    """The plaintext of one frame through the relay: its typed header and packed payload."""
    head = fr.encode_header(fr.DATA, session, step, sender, receiver, f.segment, f.dtype,
                            f.bits, f.shape, f.payload.size, f.op)
    return head + f.payload.data.cast("B").tobytes() if f.payload.size else head
