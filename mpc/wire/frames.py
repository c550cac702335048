"""Typed frames: how arrays travel between processes (never pickle).

A frame is a fixed little-endian header followed by the raw payload:

====================  =====  ==================================================
field                 bytes  meaning
====================  =====  ==================================================
magic                 2      ``b"UF"``
version               1      :data:`VERSION`
kind                  1      :data:`DATA` (an array), :data:`HELLO` (handshake),
                             :data:`ABORT` (the sender stopped; the payload says why),
                             :data:`BYE` (the sender ended its part well; no payload)
session               8      the session's tag: which run and sub-session
step                  8      the exchange's number within the run
sender, receiver      4 + 4  the sending and receiving process ranks
segment               2      index of the frame among the step's frames to one peer
dtype                 1      element type code (:data:`DTYPES`)
bits                  1      element width on the wire, 1..64
ndim                  1      number of dimensions (at most :data:`MAX_NDIM`)
(reserved)            1
nbytes                8      payload length
op                    4      the operation that sent it: :func:`op_tag` of the name
                             of the protocol function that opened the round
shape                 8 each one unsigned 64-bit extent per dimension
====================  =====  ==================================================

The payload holds the array's elements in C order, each cut to its low
``bits`` bits and packed little-endian bit by bit: a 40-bit ring element
takes 5 bytes, a bit 1/8 byte, so the payload is exactly the bits the
network counts, rounded up to a byte per frame (:func:`payload_nbytes`).

A receiver knows what each step must bring (sender, dtype, bits, shape:
every process computes the same routing from public data), so it checks
the whole header against that expectation with :func:`check_header`
*before* it allocates or reads the payload: a frame for another session or
step, from another sender, of another type or shape, or longer than the
expected payload raises :class:`FrameError`, which names the sender. A
frame of another operation, or of a later step, means the sender's program
took another path than the receiver's (SPMD divergence): the error says
"diverged at step s: expected <op>, got <op>". A BYE frame carries the
sender's last step, so a peer that ended its program early is named the
same way.
"""

from __future__ import annotations

import struct
import sys
import zlib
from typing import Any

import numpy as np
from numpy.typing import DTypeLike

MAGIC = b"UF"
VERSION = 2
DATA, HELLO, ABORT, BYE = 0, 1, 2, 3
#: longest reason an ABORT frame may carry (bytes of UTF-8)
MAX_ABORT_BYTES = 4096
MAX_NDIM = 8
#: largest payload a frame may announce before the receiver refuses it (bytes)
MAX_FRAME_BYTES = 1 << 34
_FIXED = struct.Struct("<2sBBQQIIHBBBBQI")
FIXED_SIZE = _FIXED.size           # 46 bytes
#: names of the operations this process has tagged (tag -> name), for messages
_OP_NAMES: dict[int, str] = {0: "(no operation)"}

#: wire codes of the element types a frame may carry
DTYPES = {1: np.dtype(np.uint8), 2: np.dtype(np.uint16), 3: np.dtype(np.uint32),
          4: np.dtype(np.uint64), 5: np.dtype(np.int8), 6: np.dtype(np.int16),
          7: np.dtype(np.int32), 8: np.dtype(np.int64), 9: np.dtype(np.bool_)}
_CODES = {dt: code for code, dt in DTYPES.items()}

if sys.byteorder != "little":       # the byte cuts below assume little-endian words
    raise ImportError("mpc.wire.frames needs a little-endian machine")


class FrameError(ValueError):
    """A frame that is malformed, oversized, or not the one the step expects."""


def op_tag(name: str) -> int:
    """A 4-byte tag of an operation's name (CRC-32; remembered for :func:`op_name`)."""
    tag = zlib.crc32(name.encode("utf-8"))
    _OP_NAMES.setdefault(tag, name)
    return tag


def op_name(tag: int) -> str:
    """The name of a tag: one this process made, else the function of a loaded module of this
    toolkit whose qualified name has that tag (looked up on this error path only), else the tag
    in hex."""
    name = _OP_NAMES.get(int(tag))
    if name is None:
        _learn_names()
        name = _OP_NAMES.get(int(tag))
    return repr(name) if name is not None else f"an operation this process never ran " \
        f"(tag {int(tag):#010x})"


def _learn_names() -> None:
    """Tag the qualified names of the functions and methods of the loaded mpc, fss, noise and
    ustat modules (what :func:`mpc.comm.network.caller_op` can name)."""
    for mod_name, mod in list(sys.modules.items()):
        if mod is None or mod_name.split(".")[0] not in ("mpc", "fss", "noise", "ustat"):
            continue
        for obj in list(vars(mod).values()):
            members = [obj] + (list(vars(obj).values()) if isinstance(obj, type) else [])
            for f in members:
                code = getattr(f, "__code__", None)
                if code is not None and getattr(f, "__module__", None) == mod_name:
                    op_tag(getattr(code, "co_qualname", code.co_name))


def header_size(ndim: int) -> int:
    return FIXED_SIZE + 8 * ndim


def payload_nbytes(count: int, bits: int) -> int:
    """Payload bytes of ``count`` elements of ``bits`` bits: ceil(count bits / 8)."""
    return (count * bits + 7) // 8


def dtype_code(dtype: DTypeLike) -> int:
    try:
        return _CODES[np.dtype(dtype)]
    except KeyError:
        raise TypeError(f"frames carry integer or bool arrays, got dtype {np.dtype(dtype)}") \
            from None


def encode_header(kind: int, session: int, step: int, sender: int, receiver: int,
                  segment: int, dtype: DTypeLike, bits: int, shape: tuple[int, ...],
                  nbytes: int, op: int = 0) -> bytes:
    shape = tuple(int(s) for s in shape)
    if len(shape) > MAX_NDIM:
        raise ValueError(f"frames carry at most {MAX_NDIM} dimensions, got shape {shape}")
    return (_FIXED.pack(MAGIC, VERSION, kind, session, step, sender, receiver, segment,
                        dtype_code(dtype), bits, len(shape), 0, nbytes, op)
            + struct.pack(f"<{len(shape)}Q", *shape))


def abort_frame(session: int, step: int, sender: int, receiver: int, why: str,
                first_hand: bool) -> bytes:
    """An ABORT frame: the sender stops the run, ``why`` (the fault that stopped it, naming the
    participant that caused it). ``first_hand``: the sender itself failed (segment 1), not a
    peer it heard from (segment 0). A 0-dimensional header, then the reason's UTF-8 bytes."""
    body = why.encode("utf-8", "replace")[:MAX_ABORT_BYTES]
    return _FIXED.pack(MAGIC, VERSION, ABORT, session, step, sender, receiver, int(first_hand),
                       dtype_code(np.uint8), 8, 0, 0, len(body), 0) + body


def bye_frame(session: int, sender: int, receiver: int, step: int = 0) -> bytes:
    """A BYE frame: the sender ended its part of the run well and closes (a peer that closes
    without one, or an ABORT, was killed or crashed); ``step``: its last step."""
    return _FIXED.pack(MAGIC, VERSION, BYE, session, step, sender, receiver, 0,
                       dtype_code(np.uint8), 8, 0, 0, 0, 0)


def decode_fixed(buf: bytes | bytearray | memoryview) -> dict:
    """The fixed part of a header (:data:`FIXED_SIZE` bytes) as a dict; FrameError if not one."""
    if len(buf) != FIXED_SIZE:
        raise FrameError(f"truncated header: {len(buf)} of {FIXED_SIZE} bytes")
    (magic, version, kind, session, step, sender, receiver, segment, code, bits, ndim, _,
     nbytes, op) = _FIXED.unpack(buf)
    if magic != MAGIC:
        raise FrameError(f"not a frame (magic {magic!r})")
    if version != VERSION:
        raise FrameError(f"frame version {version}, expected {VERSION}")
    if ndim > MAX_NDIM:
        raise FrameError(f"frame claims {ndim} dimensions (at most {MAX_NDIM})")
    return {"kind": kind, "session": session, "step": step, "sender": sender,
            "receiver": receiver, "segment": segment, "code": code, "bits": bits,
            "ndim": ndim, "nbytes": nbytes, "op": op}


def decode_shape(buf: bytes | bytearray | memoryview, ndim: int) -> tuple:
    return struct.unpack(f"<{ndim}Q", buf)


def check_header(h: dict, shape: tuple, *, session: int, step: int, sender: int,
                 receiver: int, segment: int, dtype: DTypeLike, bits: int, who: str,
                 op: int = 0) -> None:
    """Raise :class:`FrameError` (naming ``who``, the sender) unless ``h`` is the expected frame
    (``op``: the tag of the operation this step runs here; a frame of another one, or of a
    later step, is named as the sender's divergence)."""
    def bad(what):
        raise FrameError(f"bad frame from {who} at step {step}: {what}")

    if h["kind"] != DATA:
        bad(f"kind {h['kind']}, expected a data frame")
    if h["session"] != session:
        bad(f"session {h['session']:#x}, expected {session:#x}")
    if h["step"] > step:
        raise FrameError(diverged(who, step, op, f"{op_name(h['op'])}: it is for step "
                                                 f"{h['step']} (it skipped the rounds between)"))
    if h["step"] != step:
        bad(f"it is for step {h['step']}")
    if h["op"] != op:
        raise FrameError(diverged(who, step, op, op_name(h["op"])))
    if h["sender"] != sender or h["receiver"] != receiver:
        bad(f"it claims sender {h['sender']} -> receiver {h['receiver']}, "
            f"expected {sender} -> {receiver}")
    if h["segment"] != segment:
        bad(f"segment {h['segment']}, expected {segment}")
    if DTYPES.get(h["code"]) != np.dtype(dtype) or h["bits"] != bits:
        bad(f"type code {h['code']} of {h['bits']} bits, expected {np.dtype(dtype)} of "
            f"{bits} bits")
    if tuple(shape) != tuple(h["shape"]):
        bad(f"shape {tuple(h['shape'])}, expected {tuple(shape)}")
    count = int(np.prod(shape, dtype=np.int64)) if shape else 1
    if h["nbytes"] != payload_nbytes(count, bits):
        bad(f"payload of {h['nbytes']} bytes, expected {payload_nbytes(count, bits)}")


def diverged(who: str, step: int, op: int, got: str) -> str:
    """The message of a peer whose program took another path (SPMD divergence)."""
    return f"{who} diverged at step {step}: expected {op_name(op)}, got {got}"


# -- packing ----------------------------------------------------------------------------------
def pack(arr: np.ndarray, bits: int) -> np.ndarray:
    """The payload of ``arr``: every element cut to ``bits`` bits, packed (uint8 array).

    Raises ValueError if an element does not fit in ``bits`` bits (a protocol
    that declares a width must send values of that width).
    """
    a = np.ascontiguousarray(arr)
    item = a.dtype.itemsize * 8
    if a.dtype == np.bool_:
        return np.packbits(a.reshape(-1), bitorder="little")
    if not 1 <= bits <= item:
        raise ValueError(f"{bits}-bit elements cannot be sent from a {a.dtype} array")
    flat = a.reshape(-1)
    if bits < item and flat.size:
        u = flat.view(np.dtype(f"u{a.dtype.itemsize}"))
        if np.any(u >> np.array(bits, dtype=u.dtype)):
            raise ValueError(f"a value does not fit in the declared {bits} bits")
    raw = flat.view(np.uint8)
    if bits == item:
        return raw
    if item == 8 and bits == 1:
        return np.packbits(raw, bitorder="little")
    if bits % 8 == 0:
        return raw.reshape(-1, a.dtype.itemsize)[:, :bits // 8].reshape(-1)
    cut = np.unpackbits(raw.reshape(-1, a.dtype.itemsize), axis=1,
                        bitorder="little")[:, :bits]
    return np.packbits(cut.reshape(-1), bitorder="little")


def unpack(buf: bytes | bytearray | memoryview | np.ndarray, dtype: DTypeLike, bits: int,
           shape: tuple[int, ...]) -> np.ndarray:
    """Inverse of :func:`pack`: an array of ``dtype`` and ``shape`` from a payload buffer.

    A writable uint8 ndarray ``buf`` (a receive buffer the caller owns) is
    viewed in place when the elements travel at full width; anything else is
    copied into a new array.
    """
    dtype = np.dtype(dtype)
    count = int(np.prod(shape, dtype=np.int64)) if len(shape) else 1
    owned = isinstance(buf, np.ndarray) and buf.dtype == np.uint8 and buf.flags.writeable \
        and buf.flags.c_contiguous
    raw: Any = buf if owned else np.frombuffer(buf, dtype=np.uint8)   # a uint8 ndarray
    if dtype == np.bool_:
        return np.unpackbits(raw, count=count, bitorder="little").astype(np.bool_).reshape(shape)
    size = dtype.itemsize
    if bits == size * 8:
        out = raw.view(dtype).reshape(shape)
        return out if owned else out.copy()
    if size == 1 and bits == 1:
        return np.unpackbits(raw, count=count, bitorder="little").view(dtype).reshape(shape)
    out = np.zeros((count, size), dtype=np.uint8)
    if bits % 8 == 0:
        out[:, :bits // 8] = raw.reshape(count, bits // 8)
    else:
        cut = np.unpackbits(raw, count=count * bits, bitorder="little").reshape(count, bits)
        full = np.zeros((count, size * 8), dtype=np.uint8)
        full[:, :bits] = cut
        out = np.packbits(full, axis=1, bitorder="little")
    return out.view(dtype).reshape(shape)


def zeros_of(spec: Any) -> np.ndarray | None:
    """What a vanished peer's frame reads as (``spec``: an expected frame with ``shape``,
    ``dtype`` and ``into``): zeros of its shape, or, when the receiver gave a buffer
    (``into``), zeros written there and None, as for a frame read into it."""
    if spec.into is not None:
        np.asarray(spec.into)[...] = 0      # a view: the receiver's bytes
        return None
    return np.zeros(spec.shape, dtype=spec.dtype)
