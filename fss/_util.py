"""Shared helpers of the fss package: argument checks and bit packing (internal)."""

from __future__ import annotations

import numbers
import struct

import numpy as np

from mpc.rng import CSPRNG, as_rng

_U64 = np.uint64


def check_int(v, name: str, lo: int, hi: int) -> int:
    """An int in [lo, hi], else TypeError/ValueError naming ``name``."""
    if isinstance(v, (bool, np.bool_)) or not isinstance(v, numbers.Integral):
        raise TypeError(f"{name} must be an integer in {lo}..{hi}, got {v!r}")
    v = int(v)
    if not lo <= v <= hi:
        raise ValueError(f"{name} must be in {lo}..{hi}, got {v}")
    return v


def check_party(party) -> int:
    if isinstance(party, (bool, np.bool_)) or not isinstance(party, numbers.Integral):
        raise TypeError(f"party must be 0 or 1, got {party!r}")
    if int(party) not in (0, 1):
        raise ValueError(f"party must be 0 or 1, got {party}")
    return int(party)


def check_rng(rng) -> CSPRNG:
    """A CSPRNG, or a seed (int/str/bytes: reproducible, insecure)."""
    if rng is None:
        raise TypeError("rng must be an mpc.rng.CSPRNG or a seed, got None")
    try:
        return as_rng(rng)
    except TypeError:
        raise TypeError(f"rng must be an mpc.rng.CSPRNG or a seed, got {type(rng).__name__}") from None


def domain_values(x, n_bits: int, name: str) -> np.ndarray:
    """Integers in [0, 2^n_bits) as a ``uint64`` array (any shape); ValueError otherwise."""
    if isinstance(x, (bool, np.bool_)):
        raise TypeError(f"{name} must be integers, got bool")
    if isinstance(x, numbers.Integral):
        v = int(x)
        if not 0 <= v < (1 << n_bits):
            raise ValueError(f"{name} must be in [0, 2^{n_bits}), got {v}")
        return np.asarray(v, dtype=_U64)
    arr = np.asarray(x)
    if arr.dtype == object:
        flat = arr.ravel()
        for v in flat:
            if isinstance(v, (bool, np.bool_)) or not isinstance(v, numbers.Integral):
                raise TypeError(f"{name} must be integers, got {type(v).__name__}")
            if not 0 <= int(v) < (1 << n_bits):
                raise ValueError(f"{name} must be in [0, 2^{n_bits}), got {int(v)}")
        return np.array([int(v) for v in flat], dtype=_U64).reshape(arr.shape)
    if arr.dtype.kind not in "iu":
        raise TypeError(f"{name} must be integers, got dtype {arr.dtype}")
    if arr.size:
        if arr.dtype.kind == "i" and int(arr.min()) < 0:
            raise ValueError(f"{name} must be in [0, 2^{n_bits}), got a negative value {int(arr.min())}")
        if n_bits < 64 and int(arr.max()) >= (1 << n_bits):
            raise ValueError(f"{name} must be in [0, 2^{n_bits}), got {int(arr.max())}")
    return arr.astype(_U64, copy=False)


def ring_values(x, bits: int, name: str) -> np.ndarray:
    """Integers (any sign) reduced into Z_2^bits as ``uint64``."""
    if isinstance(x, (bool, np.bool_)):
        raise TypeError(f"{name} must be integers, got bool")
    if isinstance(x, numbers.Integral):
        return np.asarray(int(x) % (1 << bits), dtype=_U64)
    arr = np.asarray(x)
    if arr.dtype == object:
        flat = arr.ravel()
        for v in flat:
            if isinstance(v, (bool, np.bool_)) or not isinstance(v, numbers.Integral):
                raise TypeError(f"{name} must be integers, got {type(v).__name__}")
        return np.array([int(v) % (1 << bits) for v in flat], dtype=_U64).reshape(arr.shape)
    if arr.dtype.kind not in "iu":
        raise TypeError(f"{name} must be integers, got dtype {arr.dtype}")
    return arr.astype(_U64) & _U64((1 << bits) - 1) if bits < 64 else arr.astype(_U64)


def mask(bits: int) -> np.uint64:
    return _U64((1 << bits) - 1)


# -- bit packing for serialization ---------------------------------------------------
def pack_words(v: np.ndarray, bits: int) -> bytes:
    """Pack uint64 words to exactly ``bits`` bits each (little-endian bit order)."""
    v = np.ascontiguousarray(v, dtype=_U64).reshape(-1)
    if bits % 8 == 0:
        return v.view(np.uint8).reshape(-1, 8)[:, : bits // 8].tobytes()
    b = np.unpackbits(v.view(np.uint8).reshape(-1, 8), axis=1, bitorder="little")[:, :bits]
    return np.packbits(b.reshape(-1), bitorder="little").tobytes()


def packed_len(count: int, bits: int) -> int:
    return (count * bits + 7) // 8


def unpack_words(data: bytes, count: int, bits: int) -> np.ndarray:
    buf = np.frombuffer(data, dtype=np.uint8)
    if bits % 8 == 0:
        full = np.zeros((count, 8), dtype=np.uint8)
        full[:, : bits // 8] = buf.reshape(count, bits // 8)
        return full.view(_U64).reshape(count)
    b = np.unpackbits(buf, count=count * bits, bitorder="little").reshape(count, bits)
    full = np.zeros((count, 64), dtype=np.uint8)
    full[:, :bits] = b
    return np.packbits(full, axis=1, bitorder="little").view(_U64).reshape(count)


class Reader:
    """Sequential reader that raises ValueError naming ``data`` on truncation."""

    def __init__(self, data, what: str):
        if not isinstance(data, (bytes, bytearray, memoryview)):
            raise TypeError(f"data must be bytes, got {type(data).__name__}")
        self.data = bytes(data)
        self.pos = 0
        self.what = what

    def take(self, n: int) -> bytes:
        if self.pos + n > len(self.data):
            raise ValueError(
                f"data is truncated: {self.what} needs at least {self.pos + n} bytes, "
                f"got {len(self.data)}"
            )
        out = self.data[self.pos:self.pos + n]
        self.pos += n
        return out

    def unpack(self, fmt: str):
        return struct.unpack(fmt, self.take(struct.calcsize(fmt)))

    def finish(self):
        if self.pos != len(self.data):
            raise ValueError(
                f"data has {len(self.data) - self.pos} trailing bytes after the {self.what}"
            )


def check_key_arrays(key, with_value: bool):
    """Validate the array fields of a DCF/DPF key against its n, l, shape; make them read-only."""
    check_party(key.party)
    n = check_int(key.n_bits, "n_bits", 1, 64)
    check_int(key.out_bits, "out_bits", 1, 64)
    try:
        shape = tuple(int(d) for d in key.shape)
    except TypeError:
        raise TypeError(f"key shape must be a tuple of ints, got {key.shape!r}") from None
    B = int(np.prod(shape, dtype=np.int64))
    want = {"seed": ((B, 2), _U64), "cw_seed": ((n, B, 2), _U64),
            "cw_t_left": ((n, B), np.uint8), "cw_t_right": ((n, B), np.uint8),
            "cw_last": ((B,), _U64)}
    if with_value:
        want["cw_value"] = ((n, B), _U64)
    for name, (shp, dt) in want.items():
        arr = getattr(key, name)
        if not isinstance(arr, np.ndarray) or arr.dtype != dt or arr.shape != shp:
            got = f"{arr.dtype} {arr.shape}" if isinstance(arr, np.ndarray) else type(arr).__name__
            raise ValueError(f"key field {name} must be {np.dtype(dt)} {shp} for n={n}, "
                             f"batch {shape}; got {got}")
        arr.flags.writeable = False


def points_per_key(x: np.ndarray, key_shape: tuple) -> int:
    """How many evaluation points per key ``x`` holds: shape ``key_shape`` (1) or
    ``(m, *key_shape)`` (m); ``ValueError`` otherwise."""
    if x.shape == key_shape:
        return 1
    if x.ndim == len(key_shape) + 1 and x.shape[1:] == key_shape:
        return x.shape[0]
    raise ValueError(
        f"x of shape {x.shape} does not match the key batch shape {key_shape} "
        f"(expected {key_shape} or (m, *{key_shape}))"
    )
