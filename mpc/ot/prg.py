"""Fixed-key AES for OT extension: the seed PRG and the correlation-robust hash.

Both are the tweaked Matyas-Meyer-Oseas mode with the linear orthomorphism
``sigma`` of Guo, Katz, Wang, Yu (S&P 2020, section 7), as in :mod:`fss.prg`
(whose conventions these follow; ``mpc`` may not import ``fss``, so the few
lines live here, with their own fixed key for domain separation):

    F(x, w) = pi(sigma(x) ^ w) ^ sigma(x) ^ w,     sigma(lo, hi) = (lo ^ hi, lo)

``pi`` is AES-128 under a fixed public key, ``x`` a 128-bit input stored as
two ``uint64`` words ``(lo, hi)`` (little-endian: the same 16 bytes as the
``uint8 (..., 16)`` strings of the OT API), ``w = (w_lo, w_hi)`` a public tweak.

* **PRG** (IKNP's ``G``): ``G(k)_c = F(k, (c, 0))`` for counters c = 0, 1, ...;
  a 128-bit seed gives ``128 * C`` pseudorandom bits with C blocks.
* **Hash** (IKNP's ``H``): ``H(j, x) = F(x, (j, 1))`` for OT number j; messages
  longer than 16 bytes are blocks ``F(key, (j, 2^32 + b))`` of the key.

Security assumption: fixed-key AES is modelled as a random permutation
(the key is public and constant). The PRG then follows as in
:mod:`fss.prg`. For the hash, OT extension needs *tweakable correlation
robustness* for the correlation ``x ^ s`` with a secret uniform ``s``: the
outputs ``H(j, x_j ^ s)`` must look uniform to one who knows every ``x_j``.
The inputs to pi are ``sigma(s) ^ (sigma(x_j) ^ w_j)``: a secret uniform
offset plus public values that are distinct because the tweaks ``w_j`` are
distinct (one per OT) and ``sigma`` is linear, so they are points nobody
queries except with probability about ``q / 2^128`` for q queries. This
is the semi-honest setting: a malicious receiver who picks ``x_j`` could
cancel the tweak, for which GKWY's ``TMMO`` (two AES calls) is needed.

Cost: one AES block per 16 output bytes; every function makes exactly one
``encrypt`` call for its whole batch (ECB on one contiguous buffer).
"""

from __future__ import annotations

import hashlib

import numpy as np
from Crypto.Cipher import AES

_U64 = np.uint64
# the domain names the module's first path (mpc.gc.ot): a new string would change every
# seeded release
_FIXED_KEY = hashlib.sha256(b"ustat-toolkit mpc.gc.ot fixed-key AES v1").digest()[:16]
_CIPHER = AES.new(_FIXED_KEY, AES.MODE_ECB)
EXPAND_DOMAIN = 1 << 32


def _encrypt_into(buf: np.ndarray, out: np.ndarray) -> np.ndarray:
    _CIPHER.encrypt(buf.data.cast("B"), output=out.data.cast("B"))
    return out


def sigma_into(x: np.ndarray, out: np.ndarray) -> np.ndarray:
    """``sigma(lo, hi) = (lo ^ hi, lo)`` of ``x`` (``uint64 (..., 2)``) written into ``out``."""
    np.bitwise_xor(x[..., 0], x[..., 1], out=out[..., 0])
    out[..., 1] = x[..., 0]
    return out


def mmo(buf: np.ndarray) -> np.ndarray:
    """``pi(buf) ^ buf`` for a C-contiguous ``uint64 (..., 2)`` buffer already holding
    ``sigma(x) ^ w``; returns a new array of the same shape (one AES call)."""
    out = np.empty_like(buf)
    _encrypt_into(buf, out)
    out ^= buf
    return out


def prg_blocks(seeds: np.ndarray, seed_index: np.ndarray, counters: np.ndarray) -> np.ndarray:
    """``G(seeds[seed_index[e]])_{counters[e]}`` for every block e.

    ``seeds``: ``uint64 (S, 2)``; ``seed_index``, ``counters``: integer arrays
    of one shape ``B``. Returns ``uint64 (*B, 2)``. One AES call.
    """
    sig = sigma_into(seeds, np.empty_like(seeds))
    buf = sig[seed_index]
    buf[..., 0] ^= counters.astype(_U64, copy=False)
    return mmo(buf)


def hash_rows(x: np.ndarray, index: np.ndarray, blocks: int = 1,
              offset: np.ndarray | None = None, domain: int = 1) -> np.ndarray:
    """The CR hash ``H(j, x_j ^ offset_j)`` of ``N`` 128-bit rows, ``blocks`` 16-byte blocks each.

    ``x``: ``uint64 (N, 2)``; ``index``: the OT numbers j ``(N,)``, distinct
    within a batch; row j's block b gets the tweak ``(j, domain + b)``
    (``domain`` 1: OT keys; ``EXPAND_DOMAIN``: message expansion).
    ``offset`` (``uint64 (N, 2)``) is XORed into the rows first (the
    ``q_j ^ s`` of OT extension). Returns ``uint64 (N, blocks, 2)``.
    One AES call for all ``N * blocks`` blocks.
    """
    n = x.shape[0]
    sig = np.empty((n, 2), dtype=_U64)
    sigma_into(x if offset is None else x ^ offset, sig)
    idx = np.asarray(index).astype(_U64, copy=False)
    buf = np.empty((n, blocks, 2), dtype=_U64)
    for b in range(blocks):
        np.bitwise_xor(sig[:, 0], idx, out=buf[:, b, 0])
        np.bitwise_xor(sig[:, 1], _U64(domain + b), out=buf[:, b, 1])
    return mmo(buf)


def expand_keys(keys: np.ndarray, length: int, index: np.ndarray) -> np.ndarray:
    """Messages of ``length`` bytes from 128-bit OT keys ``uint8 (N, 16)``.

    ``length <= 16``: the key's first bytes (no AES). Longer: the blocks
    ``F(key_j, (j, 2^32 + b))`` for the OT numbers ``index`` (one AES call).
    Returns ``uint8 (N, length)``.
    """
    n = keys.shape[0]
    if length <= 16:
        return np.ascontiguousarray(keys[:, :length])
    blocks = -(-length // 16)
    words = np.ascontiguousarray(keys).view(_U64).reshape(n, 2)
    out = hash_rows(words, index, blocks, domain=EXPAND_DOMAIN)
    return out.view(np.uint8).reshape(n, blocks * 16)[:, :length]
