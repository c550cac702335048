"""Tree PRG from fixed-key AES for FSS (MMO mode, domain-separated blocks), batched.

A node of a DPF/DCF tree is a 128-bit *word* ``w``, stored as two ``uint64``
words ``(lo, hi)`` (a word array has shape ``(m, 2)``): the seed with its
control bit ``t`` in the low bit of ``lo`` (seeds have that bit cleared, so
127 bits of entropy). Expanding a node towards branch ``x`` in {0, 1} uses
the input ``u = w ^ x`` (``x`` XORed into the low bit of ``lo``) and

    child_x(w) = pi(u) ^ u                      (128 bits: child seed + control bit)
    value_x(w) = (pi(u ^ D) ^ u ^ D).lo          (64 bits: output-group word, DCF only)

where ``pi`` is AES-128 under a fixed public key (the Matyas-Meyer-Oseas
construction, Matyas, Meyer, Oseas 1985, with fixed-key AES as the
permutation) and ``D`` the domain separator 2^127 (top bit of ``hi``). For
a node ``(s, t)`` the two branch inputs are ``s|0`` and ``s|1`` and the
value inputs ``(s|0) ^ D``, ``(s|1) ^ D``: four distinct points. The value
word of branch ``x`` is computed from the same input as its child, so the
evaluator selects nothing between left and right value words, and both
blocks of a level go into one AES call (one call per level also for a
single key, which is what the small-batch path needs).

Security assumption: ``pi`` is a random permutation (random-permutation
model; the key is a public constant). For a secret node word with 127
uniform bits the inputs are points the adversary queries only with
negligible probability (another node would need the seed ``s ^ D``), so
the outputs are uniform; the feed-forward makes the map non-invertible (a party
that learns the XOR of two children, as a correction word reveals, cannot
invert ``pi`` to reach the parent). So ``w -> (child_0, child_1, value_0,
value_1)`` is a PRG, which is all the tree security proofs need (BGI CCS
2016 Thm 3.3; Boyle et al. EUROCRYPT 2021 Thm 3.2). Circular correlation
robustness (GKWY S&P 2020) is not needed here.

Cost: one AES block per child and one per value word. Batching: one
``encrypt`` call per tree level for a whole cache block of the batch. The
raw ECB entry point of pycryptodome is called directly (through cffi, which
releases the GIL) when available: it cuts the per-call overhead from about
5 us to about 1 us, which matters for small batches; otherwise the public
``encrypt`` is used (same result).
"""

from __future__ import annotations

import hashlib
import numbers
import warnings
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np
from Crypto.Cipher import AES
from numpy.typing import ArrayLike

if TYPE_CHECKING:
    from mpc.arith.rng import CSPRNG

_U64 = np.uint64
LOW_BIT_CLEAR = _U64(0xFFFFFFFFFFFFFFFE)


class FixedKeyAES:
    """AES-128-ECB under a fixed public key, encrypting numpy buffers in place.

    Thread-safe: ECB keeps no state besides the expanded key, which is only
    read (workers share one object).

    Fast path: pycryptodome's raw ECB function (a private entry point,
    ``Crypto.Cipher._mode_ecb.raw_ecb_lib``, called through cffi with the
    cipher's state) is used only after a known-answer check against the
    public ``encrypt``; ``fast_path`` says which path is in use and why.
    If a pycryptodome release moves or changes that entry point, every call
    takes the public API (same results, about 4 us more per call) and a
    ``RuntimeWarning`` says so once; ``tests/fss/test_prg.py`` fails loudly
    on such a release so that the fast path is restored.
    """

    def __init__(self, label: bytes, *, fast: bool = True) -> None:
        self.key = hashlib.sha256(b"ustat-toolkit fss fixed-key AES PRG v2 " + label).digest()[:16]
        self.cipher = AES.new(self.key, AES.MODE_ECB)
        self._raw = None
        self.fast_path = "public encrypt (fast path not requested)"
        if fast:
            try:
                self._raw, self.fast_path = _raw_ecb(self.cipher)
            except Exception as exc:  # pragma: no cover - a pycryptodome that moved its internals
                self.fast_path = f"public encrypt (raw ECB unavailable: {exc!r})"
                warnings.warn(f"fss.prg: pycryptodome's raw ECB entry point is unavailable "
                              f"({exc!r}); AES goes through the public API (slower for small "
                              f"batches)", RuntimeWarning, stacklevel=2)

    def encrypt(self, buf: np.ndarray, out: np.ndarray) -> np.ndarray:
        """ECB-encrypt the C-contiguous ``buf`` (bytes a multiple of 16) into ``out``."""
        if self._raw is not None:
            fn, state, fb = self._raw
            if fn(state, fb(buf), fb(out), buf.nbytes):
                raise ValueError("AES-ECB failed (buffer not a multiple of 16 bytes?)")
            return out
        self.cipher.encrypt(buf.data.cast("B"), output=out.data.cast("B"))
        return out

    def bytes_encryptor(self, size: int) -> tuple[bytearray, bytearray, Callable[[], Any]]:
        """``(inb, outb, run)``: two bytearrays of ``size`` bytes and a function that
        encrypts ``inb`` into ``outb`` with the buffer pointers resolved once (small batches)."""
        inb, outb = bytearray(size), bytearray(size)
        if self._raw is not None:
            fn, state, fb = self._raw
            pin, pout = fb(inb), fb(outb)
            return inb, outb, lambda: fn(state, pin, pout, size)
        return inb, outb, lambda: self.cipher.encrypt(inb, output=outb)

    def encrypt_bytes(self, buf: bytearray, out: bytearray) -> bytearray:
        """ECB-encrypt the bytearray ``buf`` into ``out`` (same length, multiple of 16)."""
        if self._raw is not None:
            fn, state, fb = self._raw
            if fn(state, fb(buf), fb(out), len(buf)):
                raise ValueError("AES-ECB failed (buffer not a multiple of 16 bytes?)")
            return out
        self.cipher.encrypt(buf, output=out)
        return out


def _raw_ecb(cipher):
    """``((ECB_encrypt, state, from_buffer), description)`` for pycryptodome's cffi backend, or
    ``(None, description)`` on its ctypes backend; raises if the private entry point moved or
    gives another answer than the public ``encrypt``."""
    from Crypto.Util import _raw_api

    if _raw_api.backend != "cffi":
        return None, f"public encrypt (pycryptodome backend {_raw_api.backend}, not cffi)"
    from Crypto.Cipher._mode_ecb import raw_ecb_lib

    state = cipher._state.get()
    ffi = _raw_api.ffi
    probe = np.arange(4, dtype=_U64)
    got = np.empty_like(probe)
    raw_ecb_lib.ECB_encrypt(state, ffi.from_buffer(probe), ffi.from_buffer(got), 32)
    if got.tobytes() != cipher.encrypt(probe.tobytes()):
        raise RuntimeError("the raw ECB entry point disagrees with the public encrypt")
    return (raw_ecb_lib.ECB_encrypt, state, ffi.from_buffer), "raw ECB (cffi)"


def _sbox() -> list[int]:
    """The AES S-box (FIPS-197 Sec. 5.1.1): inverse in GF(2^8), then the affine map."""
    def mul(a: int, b: int) -> int:
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
    """AES-128 key expansion (FIPS-197 Sec. 5.2): ``uint64 (11, 2)``, round r = (lo, hi) little
    endian; the round keys pycryptodome uses, which the compiled AES rounds of
    :mod:`fss.kernels.aesni` take (so their blocks are bit-identical, tested)."""
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


PI = FixedKeyAES(b"tree")
DELTA_HI = _U64(1 << 63)            # value-block domain separator D, in the high word


def aes_ecb_inplace(buf: np.ndarray, out: np.ndarray) -> np.ndarray:
    """``pi`` on a contiguous buffer (kept for callers of the v1 API)."""
    return PI.encrypt(buf, out)


def _check_seeds(seeds) -> np.ndarray:
    s = np.asarray(seeds)
    if s.dtype != _U64:
        raise TypeError(f"seeds must be uint64 (m, 2) arrays, got dtype {s.dtype}")
    if s.ndim != 2 or s.shape[1] != 2:
        raise ValueError(f"seeds must have shape (m, 2), got {s.shape}")
    return np.ascontiguousarray(s)


def _branch_inputs(words: np.ndarray, x) -> np.ndarray:
    xb = np.asarray(x)
    if xb.dtype.kind not in "iub":
        raise TypeError(f"x must be 0/1 integers, got dtype {xb.dtype}")
    xb = xb.astype(_U64)
    if xb.size and int(xb.max()) > 1:
        raise ValueError("x must be 0 or 1")
    u = words.copy()
    u[:, 0] ^= np.broadcast_to(xb, (words.shape[0],))
    return u


def child_blocks(words: ArrayLike, x: ArrayLike) -> np.ndarray:
    """``child_x(w) = pi(w ^ x) ^ (w ^ x)`` for every word (``x`` scalar or per word)."""
    u = _branch_inputs(_check_seeds(words), x)
    out = PI.encrypt(u, np.empty_like(u))
    out ^= u
    return out


def value_words(words: ArrayLike, x: ArrayLike) -> np.ndarray:
    """``value_x(w) = (pi(w ^ x ^ D) ^ (w ^ x ^ D)).lo`` for every word: ``uint64 (m,)``."""
    u = _branch_inputs(_check_seeds(words), x)
    u[:, 1] ^= DELTA_HI
    out = PI.encrypt(u, np.empty_like(u))
    return out[:, 0] ^ u[:, 0]


def expand(seeds: np.ndarray, values: bool = True) -> tuple:
    """Both children of a batch of nodes with control bit 0 (words = seeds).

    Returns ``(s_left, t_left, s_right, t_right, v_left, v_right)``: child
    seeds ``uint64 (m, 2)`` (low bit cleared), control bits ``uint64 (m,)``,
    value words ``uint64 (m,)`` (``None`` with ``values=False``).
    Cost: 2 AES blocks per seed, 4 with values.
    """
    seeds = _check_seeds(seeds)
    cl, cr = child_blocks(seeds, 0), child_blocks(seeds, 1)
    tl, tr = cl[:, 0] & _U64(1), cr[:, 0] & _U64(1)
    cl[:, 0] &= LOW_BIT_CLEAR
    cr[:, 0] &= LOW_BIT_CLEAR
    if not values:
        return cl, tl, cr, tr, None, None
    return cl, tl, cr, tr, value_words(seeds, 0), value_words(seeds, 1)


def convert(words: ArrayLike, bits: int) -> np.ndarray:
    """Map uniform 64-bit words into Z_2^bits (keep the low ``bits`` bits).

    Exact: a uniform word in [0, 2^64) reduces to a uniform element of
    Z_2^l for every l in 1..64 (2^l divides 2^64), so no rejection is needed
    (BGI CCS 2016, ``Convert_G`` for G = Z_2^l).
    """
    if isinstance(bits, bool) or not isinstance(bits, numbers.Integral):
        raise TypeError(f"bits must be an integer in 1..64, got {bits!r}")
    if not 1 <= bits <= 64:
        raise ValueError(f"bits must be in 1..64, got {bits}")
    w = np.asarray(words)
    if w.dtype != _U64:
        raise TypeError(f"words must be uint64, got dtype {w.dtype}")
    return w & _U64((1 << bits) - 1)


def seed_word_for_convert(seeds: np.ndarray) -> np.ndarray:
    """The word of a final node that :func:`convert` uses: the high word (uniform)."""
    return seeds[..., 1]


def random_seeds(rng: CSPRNG, m: int) -> np.ndarray:
    """``m`` uniform seeds (low bit cleared) from a CSPRNG: ``uint64 (m, 2)``."""
    s = rng.uint64((m, 2))
    s[:, 0] &= LOW_BIT_CLEAR
    return s
