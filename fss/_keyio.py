"""The wire format of DPF/DCF keys (internal; :mod:`fss.tree`, :mod:`fss.dcf`, :mod:`fss.dpf`).

Everything here follows from the key's parameters (:class:`fss.keys.DCFParams`
or :class:`fss.keys.DPFParams`): their magic, and whether the payload has the
value correction words. Wire format, version 2 (little endian):

    header (16 bytes + 8 per axis)
        magic     4 bytes   b"DCF1" or b"DPF1" (``params.magic``)
        version   1 byte    2
        party     1 byte    0 or 1
        n         1 byte    1..64 input bits
        l         1 byte    1..64 output bits
        group     1 byte    0 (Z_2^l; always for DCF) or 1 (XOR, DPF only)
        flags     1 byte    bit 0: insecure (made from an explicit seed); other bits 0
        ndim      1 byte    0..32
        reserved  5 bytes   zero
        shape     8 bytes per axis (uint64); the batch B = prod(shape) <= 2^40
    payload, field by field (struct of arrays), B instances each:
        seed        16 B bytes            root seeds, low bit of each lo word 0
        cw_seed     16 n B bytes          (n, B, 2) words, low bit of each lo word 0
        cw_t_left   ceil(n/8) B bytes     bits packed along the levels, padding 0
        cw_t_right  ceil(n/8) B bytes
        cw_value    ceil(l/8) n B bytes   DCF only; each word < 2^l
        cw_last     ceil(l/8) B bytes     each word < 2^l

So every instance takes exactly ``params.record_bytes`` bytes of payload
(6800 bits for the less-than gate at l = 40: n = 39, 850 bytes), whatever
the batch; the header carries only public parameters. Parsing validates
every field and raises ``ValueError`` naming it; a field is never silently
reduced. The seed and correction-word arrays of a key parsed from a
``bytes`` object are read-only views of it (no copy). Packing and unpacking
of words and bits run on the codec :func:`fss.kernels.choose` picks.
"""

from __future__ import annotations

import ctypes
import platform
import struct
from typing import Any

import numpy as np

from . import kernels
from .keys import DPFParams, TreeKey, TreeParams

_U64 = np.uint64
VERSION = 2
MAX_NDIM = 32
MAX_BATCH = 1 << 40
FLAG_INSECURE = 1
_HEAD = struct.Struct("<4sBBBBBBB5s")
_GROUP_CODES = {"arith": 0, "xor": 1}


def header_len(ndim: int) -> int:
    return _HEAD.size + 8 * ndim


# -- writing ------------------------------------------------------------------------------------
def put_words(dst: np.ndarray, words: np.ndarray, lb: int) -> None:
    """Words (any shape, uint64) into ``dst`` (count * lb bytes), lb low bytes each."""
    w = np.ascontiguousarray(words, dtype="<u8").reshape(-1)
    if lb == 8:
        dst[:] = w.view(np.uint8)
    else:
        kernels.codec().put_words(dst, w, lb)


def put_bits(dst: np.ndarray, bits: np.ndarray) -> None:
    """Control bits (n, B) uint8 packed along the levels into ``dst`` (ceil(n/8), B)."""
    if bits.size:
        kernels.codec().pack_levels(np.ascontiguousarray(bits), dst)


def field_sizes(params: TreeParams, B: int) -> list:
    """``(field, payload bytes)`` in wire order for a batch of B keys."""
    n, lb, nb = params.n_bits, (params.out_bits + 7) // 8, (params.n_bits + 7) // 8
    return [("seed", 16 * B), ("cw_seed", 16 * n * B), ("cw_t_left", nb * B),
            ("cw_t_right", nb * B)] + ([("cw_value", lb * n * B)] if params.values else []) + [
            ("cw_last", lb * B)]


def new_bytes(size: int) -> tuple[bytes | None, np.ndarray]:
    """``(bytes object, writable uint8 view of it)`` for a bytes object of ``size`` bytes
    that nobody else has seen yet.

    CPython: ``PyBytes_FromStringAndSize(NULL, size)``, which the C API documents for
    exactly this (an uninitialized object that the caller fills before sharing it), so
    the payload is written once, in place, instead of into a numpy buffer that
    ``tobytes`` then copies. Elsewhere: a numpy buffer and one copy at the end.

    No transparent-huge-page advice (``madvise(MADV_HUGEPAGE)``) on the buffer: it was
    measured (2^20 DCF keys, 735 MB, this repository's 2-core machine, THP defrag
    "madvise") at 0.44 s when huge pages were free but 2.0 s whenever the kernel had to
    compact memory first (most calls in a long run), against a steady 0.64 s without it.
    """
    if _NEW_BYTES is not None and size > 0:
        obj = _NEW_BYTES(None, size)
        addr = _BYTES_ADDR(obj)
        return obj, np.ctypeslib.as_array((ctypes.c_uint8 * size).from_address(addr))
    return None, np.empty(size, dtype=np.uint8)


def _bytes_api() -> tuple[Any, Any]:
    if platform.python_implementation() != "CPython":  # pragma: no cover
        return None, None
    new = ctypes.pythonapi.PyBytes_FromStringAndSize
    new.restype, new.argtypes = ctypes.py_object, (ctypes.c_char_p, ctypes.c_ssize_t)
    addr = ctypes.pythonapi.PyBytes_AsString
    addr.restype, addr.argtypes = ctypes.c_void_p, (ctypes.py_object,)
    return new, addr


_NEW_BYTES, _BYTES_ADDR = _bytes_api()


def header(params: TreeParams, party: int, insecure: bool, shape: tuple) -> bytes:
    """The header of a key batch (public parameters only; see the module docstring)."""
    shape = tuple(int(d) for d in shape)
    head = _HEAD.pack(params.magic, VERSION, party, params.n_bits, params.out_bits,
                      _GROUP_CODES[params.group], FLAG_INSECURE if insecure else 0,
                      len(shape), bytes(5))
    return head + struct.pack(f"<{len(shape)}Q", *shape)


def to_bytes(key: TreeKey) -> bytes:
    """Header + payload (see the module docstring): written once, field by field, into the
    returned bytes object (:func:`new_bytes`)."""
    params = key.params
    head = header(params, key.party, key.insecure, key.shape)
    lb = (params.out_bits + 7) // 8
    total = len(head) + key.batch * params.record_bytes
    obj, buf = new_bytes(total)
    buf[:len(head)] = np.frombuffer(head, dtype=np.uint8)
    pos = len(head)
    for name, size in field_sizes(params, key.batch):
        dst, arr = buf[pos:pos + size], getattr(key, name)
        if name in ("seed", "cw_seed"):
            dst[:] = np.ascontiguousarray(arr, dtype="<u8").reshape(-1).view(np.uint8)
        elif name.startswith("cw_t"):
            put_bits(dst.reshape((params.n_bits + 7) // 8, key.batch), arr)
        else:
            put_words(dst, arr, lb)
        pos += size
    if pos != total:  # pragma: no cover - the layout above is the format
        raise AssertionError("serialized size does not match the wire format")
    return obj if obj is not None else buf.tobytes()


def instance_records(key: TreeKey) -> np.ndarray:
    """uint8 (B, record_bytes): row j is the payload of instance j alone (what a
    per-instance message carries; equal to the payload of ``to_bytes`` of that key)."""
    n, B = key.n_bits, key.batch
    lb = (key.out_bits + 7) // 8

    def words(a: np.ndarray, k: int) -> np.ndarray:
        raw = np.ascontiguousarray(a, dtype="<u8").view(np.uint8).reshape(B, k, 8)
        return raw[:, :, :lb].reshape(B, k * lb)

    parts = [np.ascontiguousarray(key.seed, dtype="<u8").view(np.uint8).reshape(B, 16),
             np.ascontiguousarray(key.cw_seed.transpose(1, 0, 2), dtype="<u8").view(np.uint8)
             .reshape(B, 16 * n),
             np.packbits(key.cw_t_left, axis=0, bitorder="little").T,
             np.packbits(key.cw_t_right, axis=0, bitorder="little").T]
    if key.cw_value is not None:
        parts.append(words(key.cw_value.T, n))
    parts.append(words(key.cw_last.reshape(B, 1), 1))
    return np.concatenate(parts, axis=1)


def records_payload(rows: np.ndarray, params: TreeParams) -> np.ndarray:
    """The batch payload (struct of arrays, as after :func:`to_bytes`'s header) of B instance
    records (:func:`instance_records` rows): the inverse layout change, so that a key sent as
    per-instance messages is parsed (and validated) by :func:`parse_arrays` like any other."""
    rows = np.ascontiguousarray(rows, dtype=np.uint8)
    B, n = rows.shape[0], params.n_bits
    lb, nb = (params.out_bits + 7) // 8, (n + 7) // 8
    if rows.ndim != 2 or rows.shape[1] != params.record_bytes:
        raise ValueError(f"instance records must be (B, {params.record_bytes}) bytes, got "
                         f"{rows.shape}")
    parts, pos = [rows[:, :16].reshape(-1)], 16
    parts.append(rows[:, pos:pos + 16 * n].reshape(B, n, 16).transpose(1, 0, 2).reshape(-1))
    pos += 16 * n
    for _ in range(2):
        parts.append(rows[:, pos:pos + nb].T.reshape(-1))
        pos += nb
    if params.values:
        parts.append(rows[:, pos:pos + lb * n].reshape(B, n, lb).transpose(1, 0, 2).reshape(-1))
        pos += lb * n
    parts.append(rows[:, pos:pos + lb].reshape(-1))
    return np.concatenate(parts)


def canonical_records(rows: np.ndarray, params: TreeParams) -> np.ndarray:
    """bool (B,): which instance records (rows of :func:`instance_records`, uint8
    (B, record_bytes)) are canonical, the checks of :func:`parse_arrays` per row (seed
    control-bit positions 0, padding bits 0, values below 2^l), so that a server can drop
    one party's malformed record instead of refusing the batch. Cost: one pass over a few
    bytes per field."""
    rows = np.asarray(rows, dtype=np.uint8)
    n, l = params.n_bits, params.out_bits
    lb, nb = (l + 7) // 8, (n + 7) // 8
    ok = (rows[:, 0:16 * (n + 1):16] & np.uint8(1) == 0).all(axis=1)   # seed and n cw_seed
    pos = 16 * (n + 1)
    if n % 8:
        pad = np.uint8((0xFF << (n % 8)) & 0xFF)
        for t in range(2):                                 # cw_t_left, cw_t_right
            ok &= rows[:, pos + t * nb + nb - 1] & pad == 0
    pos += 2 * nb
    if l % 8:
        words = (n + 1) if params.values else 1
        top = rows[:, pos + lb - 1:pos + lb * words:lb]
        ok &= (top >> np.uint8(l % 8) == 0).all(axis=1)
    return ok


# -- parsing ------------------------------------------------------------------------------------
def from_bytes(data: Any, family: type[TreeParams]) -> TreeKey:
    """The key serialized in ``data`` (bytes, a bytes-like object or a 1-d uint8 array),
    which must be of ``family`` (:class:`~fss.keys.DCFParams` or :class:`~fss.keys.DPFParams`);
    ``ValueError`` naming the bad field."""
    party, params, insecure, shape, _B, off = parse_header(data, family)
    return key_from_payload(data, params, party, shape, insecure, off)


def key_from_payload(data: Any, params: TreeParams, party: int, shape: tuple, insecure: bool,
                     off: int = 0) -> TreeKey:
    """The key of ``party`` whose payload starts at byte ``off`` of ``data`` (validated as
    :func:`parse_arrays`)."""
    B = 1
    for d in shape:
        B *= int(d)
    a = parse_arrays(data, params, B, off)
    return TreeKey(party=party, params=params, shape=tuple(shape), insecure=bool(insecure), **a)


def parse_header(data: Any, family: type[TreeParams]) -> tuple:
    """Validated header fields: (party, params, insecure, shape, batch, offset)."""
    if isinstance(data, np.ndarray):
        if data.dtype != np.uint8 or data.ndim != 1:
            raise TypeError(f"data must be bytes or a 1-d uint8 array, got {data.dtype} "
                            f"{data.shape}")
        data = data.tobytes()
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise TypeError(f"data must be bytes, got {type(data).__name__}")
    what = family.what
    if len(data) < _HEAD.size:
        raise ValueError(f"data is truncated: a {what} header needs {_HEAD.size} bytes, "
                         f"got {len(data)}")
    magic, ver, party, n, l, group, flags, ndim, res = _HEAD.unpack_from(data, 0)
    if magic != family.magic:
        raise ValueError(f"data is not a serialized {what} (bad magic {magic!r})")
    if ver != VERSION:
        raise ValueError(f"version: unsupported {what} format version {ver} (expected {VERSION})")
    if party > 1:
        raise ValueError(f"party must be 0 or 1, got {party}")
    if not 1 <= n <= 64:
        raise ValueError(f"n_bits must be in 1..64, got {n}")
    if not 1 <= l <= 64:
        raise ValueError(f"out_bits must be in 1..64, got {l}")
    if group >= len(family.groups):
        raise ValueError(f"group: invalid code {group} for a {what}")
    if flags & ~FLAG_INSECURE:
        raise ValueError(f"flags: unknown bits set ({flags:#04x})")
    if ndim > MAX_NDIM:
        raise ValueError(f"ndim must be at most {MAX_NDIM}, got {ndim}")
    if res != bytes(5):
        raise ValueError("reserved header bytes must be zero")
    off = header_len(ndim)
    if len(data) < off:
        raise ValueError(f"data is truncated: the shape of {ndim} axes needs {off} bytes, "
                         f"got {len(data)}")
    shape = struct.unpack_from(f"<{ndim}Q", data, _HEAD.size)
    B = 1
    for d in shape:
        B *= d                      # Python ints: no overflow
    if B > MAX_BATCH:
        raise ValueError(f"shape {shape} gives a batch of {B} keys, more than the bound 2^40")
    if any(d > MAX_BATCH for d in shape):
        raise ValueError(f"shape {shape} has an axis longer than the bound 2^40")
    params = family(n, l) if group == 0 else DPFParams(n, l, "xor")   # only a DPF has code 1
    need = off + B * params.record_bytes
    if len(data) < need:
        raise ValueError(f"data is truncated: a {what} of shape {shape} needs {need} bytes, "
                         f"got {len(data)}")
    if len(data) > need:
        raise ValueError(f"data has {len(data) - need} trailing bytes after the {what}")
    return party, params, bool(flags & FLAG_INSECURE), tuple(int(d) for d in shape), B, off


def _get_words(src: np.ndarray, count: int, l: int, name: str) -> np.ndarray:
    lb = (l + 7) // 8
    if lb == 8:                     # whole words: a view, and the top byte checked here
        out = src.view("<u8").astype(_U64, copy=False)
        ok = -1 if l % 8 and count and np.any(src.reshape(count, lb)[:, lb - 1] >>
                                              np.uint8(l % 8)) else count
    else:
        out, ok = kernels.codec().get_words(src, count, lb, l % 8)
    if ok < 0:
        raise ValueError(f"{name} holds a value of {l} or more bits (must be < 2^{l})")
    return out


def _get_bits(src: np.ndarray, n: int, B: int, name: str) -> np.ndarray:
    packed = src.reshape((n + 7) // 8, B)
    out, bad = kernels.codec().unpack_levels(packed, n)
    if bad:
        raise ValueError(f"{name} has nonzero padding bits")
    return out


def parse_arrays(data: Any, params: TreeParams, B: int, off: int) -> dict:
    """The key arrays of a payload (validated: canonical seeds, bits and values)."""
    if isinstance(data, np.ndarray) and data.dtype == np.uint8 and not data.flags.writeable:
        pass                            # a read-only buffer: the key's arrays may view it
    elif isinstance(data, np.ndarray):
        data = data.tobytes()
    elif not isinstance(data, bytes):
        data = bytes(data)              # a mutable buffer could change under a view
    n, l = params.n_bits, params.out_bits
    raw = np.frombuffer(data, dtype=np.uint8)
    codec = kernels.codec()
    out, pos = {}, off
    for name, size in field_sizes(params, B):
        src = raw[pos:pos + size]
        pos += size
        if name in ("seed", "cw_seed"):
            arr = src.view("<u8").astype(_U64, copy=False)
            arr = arr.reshape((B, 2) if name == "seed" else (n, B, 2))
            if arr.size and codec.any_low_bit(arr):
                raise ValueError(f"{name} has a nonzero control-bit position (bit 0 of the low "
                                 f"word must be 0 in a canonical key)")
        elif name.startswith("cw_t"):
            arr = _get_bits(src, n, B, name)
        else:
            arr = _get_words(src, n * B if name == "cw_value" else B, l, name)
            if name == "cw_value":
                arr = arr.reshape(n, B)
        out[name] = arr
    return out
