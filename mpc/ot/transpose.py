"""Vectorized bit-matrix transpose for OT extension (128 x m bits -> m x 128 bits).

Bit layout (little-endian bit order throughout the OT package): a bit row of
``m`` bits is ``m / 8`` bytes, bit ``j`` in byte ``j // 8`` at position
``j % 8`` (``np.unpackbits(..., bitorder="little")``). A 128-bit string is 16
bytes with bit ``i`` in byte ``i // 8`` at position ``i % 8``.

Algorithm: the matrix is cut into 8 x 8 bit tiles. One byte-granular numpy
transpose gathers the 8 bytes of every tile into a ``uint64`` (byte r = row
r of the tile); three delta swaps transpose all tiles at once inside their
words (the a1-h8 diagonal flip of Hacker's Delight 7-3 / chess bitboards:
bit ``8 r + c`` goes to ``8 c + r``); a second byte transpose puts the tiles
in output order. Cost: two strided byte copies of the matrix and about 15
word operations per 64 bits; no Python loop over rows, columns or tiles.
"""

from __future__ import annotations

import numpy as np

_U64 = np.uint64
_K1 = _U64(0x5500550055005500)
_K2 = _U64(0x3333000033330000)
_K4 = _U64(0x0F0F0F0F00000000)


def _flip_tiles(w: np.ndarray) -> None:
    """Transpose every 8 x 8 bit tile held in the uint64 array ``w``, in place."""
    tmp = np.empty_like(w)
    for k, s in ((_K4, _U64(28)), (_K2, _U64(14)), (_K1, _U64(7))):
        np.left_shift(w, s, out=tmp)          # t = k & (x ^ (x << s))
        tmp ^= w
        tmp &= k
        w ^= tmp                              # x ^= t ^ (t >> s)
        tmp >>= s
        w ^= tmp


def transpose_bits(mat: np.ndarray) -> np.ndarray:
    """Transpose a bit matrix of ``8 R`` rows and ``8 C`` columns.

    ``mat``: ``uint8 (8 R, C)`` (each row ``8 C`` bits). Returns
    ``uint8 (8 C, R)``: row ``j`` of the result holds column ``j`` of ``mat``
    (bit ``i`` of the result row = bit ``j`` of input row ``i``). For OT
    extension ``R = 16``: a 128 x m matrix becomes m strings of 128 bits.
    """
    mat = np.asarray(mat)
    if mat.dtype != np.uint8 or mat.ndim != 2 or mat.shape[0] % 8:
        raise ValueError(f"mat must be a uint8 (8 R, C) bit matrix, got {mat.dtype} {mat.shape}")
    rows, cols = mat.shape
    r8 = rows // 8
    # tiles[c, R, r] = mat[8 R + r, c]: the 8 bytes of tile (R, c) in one word.
    tiles = mat.reshape(r8, 8, cols).transpose(2, 0, 1).copy(order="C")
    words = tiles.view(_U64).reshape(cols, r8)
    _flip_tiles(words)
    # After the flip, byte k of word (c, R) is output row 8 c + k, byte R.
    out = tiles.reshape(cols, r8, 8).transpose(0, 2, 1)
    return np.ascontiguousarray(out).reshape(cols * 8, r8)


def transpose_bits_reference(mat: np.ndarray) -> np.ndarray:
    """Naive reference for :func:`transpose_bits` (unpack, transpose, repack)."""
    bits = np.unpackbits(np.asarray(mat, dtype=np.uint8), axis=1, bitorder="little")
    return np.packbits(np.ascontiguousarray(bits.T), axis=1, bitorder="little")
