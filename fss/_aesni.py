"""AES-128 key expansion and the host check for the compiled AES rounds of :mod:`fss._fast_ni` (internal).

:mod:`fss._fast_ni` runs the fixed-key AES of :mod:`fss.prg` on the CPU's
AES instructions inside its compiled kernels; it needs the expanded key
(:func:`round_keys`, FIPS-197 key expansion: the same round keys
pycryptodome uses, so the blocks are bit-identical, tested) and a CPU with
those instructions (:data:`AVAILABLE`: numba installed and LLVM's host
feature list has ``aes``; the code is compiled for the host CPU).
"""

from __future__ import annotations

import numpy as np


def _sbox() -> list:
    """The AES S-box (FIPS-197 Sec. 5.1.1): inverse in GF(2^8), then the affine map."""
    def mul(a, b):
        r = 0
        while b:
            if b & 1:
                r ^= a
            a = ((a << 1) ^ 0x11B) if a & 0x80 else a << 1
            b >>= 1
        return r

    box = []
    for x in range(256):
        inv = next((y for y in range(1, 256) if mul(x, y) == 1), 0) if x else 0
        s = inv
        for k in range(1, 5):
            s ^= ((inv << k) | (inv >> (8 - k))) & 0xFF
        box.append(s ^ 0x63)
    return box


def round_keys(key: bytes) -> np.ndarray:
    """AES-128 key expansion (FIPS-197 Sec. 5.2): ``uint64 (11, 2)``, round r = (lo, hi) little endian."""
    if len(key) != 16:
        raise ValueError(f"key must be 16 bytes, got {len(key)}")
    sb = _sbox()
    w = [list(key[4 * i:4 * i + 4]) for i in range(4)]
    rcon = 1
    for i in range(4, 44):
        t = list(w[i - 1])
        if i % 4 == 0:
            t = [sb[b] for b in t[1:] + t[:1]]
            t[0] ^= rcon
            rcon = ((rcon << 1) ^ 0x11B) if rcon & 0x80 else rcon << 1
        w.append([a ^ b for a, b in zip(w[i - 4], t)])
    raw = bytes(b for word in w for b in word)
    return np.frombuffer(raw, dtype="<u8").astype(np.uint64).reshape(11, 2)


def _host_has_aes() -> bool:
    try:
        import llvmlite.binding as llvm

        return bool(llvm.get_host_cpu_features().get("aes"))
    except Exception:  # pragma: no cover - no llvmlite or an unknown host
        return False


try:  # pragma: no cover - depends on the environment
    import numba  # noqa: F401

    AVAILABLE = _host_has_aes()
except ImportError:  # pragma: no cover
    AVAILABLE = False
