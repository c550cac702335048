"""Bits <-> integers and bytes for circuit inputs and outputs, batched over instances.

Circuit values are bit arrays ``uint8 (P, width)`` with instances on axis 0
and bit ``i`` of the integer in column ``i`` (least significant bit first,
the Bristol convention). Integers up to 64 bits travel as numpy arrays
(two's complement mod 2^width); wider ones (AES blocks, SHA-256 states) as
bytes: :func:`bytes_to_bits` with ``byteorder="big"`` reads each row of
bytes as a big-endian integer (the convention of the Bristol AES-128 and
SHA-256 circuits: the FIPS-197 key ``000102..0f`` is the integer
``0x000102..0f`` and wire ``i`` its bit ``i``).
"""

from __future__ import annotations

import numbers
from collections.abc import Sequence

import numpy as np
from numpy.typing import ArrayLike


def _width(width, name="width") -> int:
    if isinstance(width, bool) or not isinstance(width, numbers.Integral) or width < 1:
        raise ValueError(f"{name} must be a positive integer, got {width!r}")
    return int(width)


def int_to_bits(values: np.ndarray | Sequence[int], width: int) -> np.ndarray:
    """Bits ``uint8 (P, width)`` of integers taken mod 2^width (two's complement).

    ``values``: a 1-d numpy integer array (``width <= 64``) or a sequence of
    Python ints (any width, negative allowed).
    """
    width = _width(width)
    arr = np.asarray(values) if not isinstance(values, (list, tuple)) else None
    if arr is not None and arr.dtype.kind in "iu":
        if arr.ndim != 1:
            raise ValueError(f"values must be a 1-d array of integers, got shape {arr.shape}")
        if width > 64:
            arr = arr.astype(object)
        else:
            v = arr.astype(np.uint64)  # two's complement for negative int64
            shifts = np.arange(width, dtype=np.uint64)
            return ((v[:, None] >> shifts) & np.uint64(1)).astype(np.uint8)
    ints = list(values)
    for x in ints:
        if isinstance(x, bool) or not isinstance(x, numbers.Integral):
            raise TypeError(f"values must be integers, got {x!r}")
    nbytes = (width + 7) // 8
    mask = (1 << width) - 1
    raw = b"".join((int(x) & mask).to_bytes(nbytes, "little") for x in ints)
    data = np.frombuffer(raw, dtype=np.uint8).reshape(len(ints), nbytes)
    return np.unpackbits(data, axis=1, bitorder="little")[:, :width].copy()


def bits_to_int(bits: ArrayLike, *, signed: bool = False) -> np.ndarray | list[int]:
    """Integers from bits ``(P, width)``: uint64 (or int64 if ``signed``) for width <= 64,
    else a list of Python ints."""
    b = check_bits(bits, "bits")
    width = b.shape[1]
    if width <= 64:
        padded = np.zeros((b.shape[0], 64), dtype=np.uint8)
        padded[:, :width] = b
        v = np.packbits(padded, axis=1, bitorder="little").view("<u8")[:, 0].astype(np.uint64)
        if signed:
            if width < 64:
                sign = np.uint64(1) << np.uint64(width - 1)
                v = (v ^ sign) - sign
            return v.view(np.int64)
        return v
    data = np.packbits(b, axis=1, bitorder="little")
    out = [int.from_bytes(row.tobytes(), "little") for row in data]
    if signed:
        out = [x - (1 << width) if x >> (width - 1) else x for x in out]
    return out


def bytes_to_bits(data: ArrayLike, byteorder: str = "big") -> np.ndarray:
    """Bits ``uint8 (P, 8n)`` of byte rows ``uint8 (P, n)``, each row one integer."""
    arr = np.asarray(data, dtype=np.uint8) if not isinstance(data, (bytes, bytearray)) \
        else np.frombuffer(bytes(data), dtype=np.uint8)[None, :]
    if arr.ndim != 2:
        raise ValueError(f"data must be bytes or a (P, n) uint8 array, got shape {arr.shape}")
    if byteorder == "big":
        arr = arr[:, ::-1]
    elif byteorder != "little":
        raise ValueError(f"byteorder must be 'big' or 'little', got {byteorder!r}")
    return np.unpackbits(arr, axis=1, bitorder="little")


def bits_to_bytes(bits: ArrayLike, byteorder: str = "big") -> np.ndarray:
    """Inverse of :func:`bytes_to_bits`: ``uint8 (P, ceil(width/8))``."""
    b = check_bits(bits, "bits")
    data = np.packbits(b, axis=1, bitorder="little")
    if byteorder == "big":
        return np.ascontiguousarray(data[:, ::-1])
    if byteorder != "little":
        raise ValueError(f"byteorder must be 'big' or 'little', got {byteorder!r}")
    return data


def check_bits(bits: ArrayLike, name: str) -> np.ndarray:
    """A ``(P, width)`` array of 0/1 values as uint8 (no copy when already uint8)."""
    b = np.asarray(bits)
    if b.ndim != 2:
        raise ValueError(f"{name} must be a (P, width) bit array, got shape {b.shape}")
    if b.dtype == bool:
        return b.astype(np.uint8)
    if b.dtype.kind not in "iu":
        raise TypeError(f"{name} must hold integer bits, got dtype {b.dtype}")
    if b.size and (b.min() < 0 or b.max() > 1):
        raise ValueError(f"{name} must hold only 0/1 values")
    return b.astype(np.uint8, copy=False)


def group_bits(values: ArrayLike | Sequence[ArrayLike], widths: Sequence[int],
               name: str = "inputs",
               n_instances: int | None = None) -> tuple[list[np.ndarray], int]:
    """Normalize one value per group to bits; returns (list of uint8 (P, w), P).

    Each value is a bit array ``(P, w)`` or, for ``w <= 64``, a 1-d integer
    array ``(P,)`` (two's complement mod 2^w). All groups must have the same
    number of instances P (``n_instances`` when given).
    """
    groups = list(values) if isinstance(values, (list, tuple)) else [values]
    if len(groups) != len(widths):
        raise ValueError(f"{name} must give {len(widths)} group(s), got {len(groups)}")
    out, P = [], n_instances
    for i, (v, w) in enumerate(zip(groups, widths)):
        arr = np.asarray(v) if not isinstance(v, (list, tuple)) else None
        if arr is not None and arr.ndim == 2:
            bits = check_bits(arr, f"{name}[{i}]")
            if bits.shape[1] != w:
                raise ValueError(f"{name}[{i}] must have width {w}, got {bits.shape[1]} columns")
        elif arr is not None and arr.ndim == 1 and arr.dtype.kind in "iu":
            if w > 64:
                raise ValueError(f"{name}[{i}] is {w} bits wide: give a (P, {w}) bit array")
            bits = int_to_bits(arr, w)
        else:
            raise ValueError(f"{name}[{i}] must be a (P, {w}) bit array or a (P,) integer array")
        if P is None:
            P = bits.shape[0]
        elif bits.shape[0] != P:
            raise ValueError(f"{name}[{i}] has {bits.shape[0]} instances, expected {P}")
        out.append(bits)
    return out, (0 if P is None else P)
