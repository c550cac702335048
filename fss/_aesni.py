"""AES-128 key expansion and the host check for the compiled AES rounds of :mod:`fss._fast_ni` (internal).

:mod:`fss._fast_ni` runs the fixed-key AES of :mod:`fss.prg` on the CPU's
AES instructions inside its compiled kernels; it needs the expanded key
(:func:`round_keys`, FIPS-197 key expansion: the same round keys
pycryptodome uses, so the blocks are bit-identical, tested) and a CPU with
those instructions (:data:`AVAILABLE`: numba installed and the features numba
compiles for, the host's unless ``NUMBA_CPU_FEATURES`` says otherwise, include
``aes``), and :func:`vector_blocks` says how many blocks one AES instruction
takes (VAES on 256- or 512-bit registers).
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


def _target_features() -> set:
    """CPU features numba compiles for: ``NUMBA_CPU_FEATURES`` if set, else the host's."""
    try:
        from numba.core import config
        import llvmlite.binding as llvm

        if config.CPU_FEATURES is not None:
            flags = config.CPU_FEATURES.split(",")
            return {f[1:] for f in flags if f.startswith("+")}
        return {k for k, v in llvm.get_host_cpu_features().items() if v}
    except Exception:  # pragma: no cover - no llvmlite or an unknown host
        return set()


def vector_blocks() -> int:
    """AES blocks per instruction the compiled kernels use: 4 with VAES and AVX-512
    (512-bit registers), 2 with VAES and AVX2, else 1 (128-bit AES-NI)."""
    f = _target_features()
    if "vaes" in f and "avx512f" in f:
        return 4
    return 2 if "vaes" in f and "avx2" in f else 1


try:  # pragma: no cover - depends on the environment
    import numba  # noqa: F401

    AVAILABLE = "aes" in _target_features()
except ImportError:  # pragma: no cover
    AVAILABLE = False
