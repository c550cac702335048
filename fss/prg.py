"""Length-doubling PRG from fixed-key AES for FSS trees, batched over seeds.

A seed is 128 bits, stored as two ``uint64`` words ``(lo, hi)``: a seed array
has shape ``(m, 2)``. The tree PRG used by :mod:`fss.dpf` and :mod:`fss.dcf`
maps one seed to *blocks* ``H_j(s)`` (128 bits each), one per tweak ``j``:

    H_j(s) = pi(sigma(s) ^ j) ^ sigma(s) ^ j,     sigma(lo, hi) = (lo ^ hi, lo)

where ``pi`` is AES-128 under a fixed public key and ``sigma`` is the linear
orthomorphism of Guo, Katz, Wang, Yu (S&P 2020, "Efficient and secure
multiparty computation from fixed-key block ciphers", section 7); the
tweak ``j`` (a small integer XORed into the low word) separates the outputs.
This is the Matyas-Meyer-Oseas mode made circular-correlation-robust by
``sigma``. The blocks are laid out as:

    tweak 0 -> left child:  seed s_L (low bit cleared), control bit t_L (that low bit)
    tweak 1 -> right child: seed s_R, control bit t_R
    tweak 2 -> output-group words: v_L = low word, v_R = high word (DCF only)

Child seeds therefore have 127 bits of entropy (their low bit is 0); the
output ``convert`` of a final seed uses its *high* word, which is uniform.

Batching: every call hashes the whole batch with exactly one ``encrypt``
call on one contiguous buffer (ECB over ``m * k`` blocks), which is how the
tree evaluations in :mod:`fss.dcf` / :mod:`fss.dpf` reach AES-NI speed: one
call per tree level for a whole cache block (2^14 instances) of the batch.

Security assumption: fixed-key AES is modelled as a random permutation
pi (random-permutation model; the key is public and constant). For a
secret seed with 127 uniform bits, the k inputs sigma(s) ^ j are distinct
points the adversary queries to pi only with negligible probability, so
the blocks H_j(s) are indistinguishable from uniform: H is a PRG. The
feed-forward ^ sigma(s) ^ j and the orthomorphism sigma make H circular
correlation robust as well (GKWY20, section 7), which covers the XOR-
correlated words the tree evaluation produces (a node's word and the same
word XOR a correction word). Tree security (DPF/DCF) needs only the PRG
property.

Cost: ``k`` AES blocks (16 k bytes of ECB) per seed for ``k`` tweaks.
"""

from __future__ import annotations

import hashlib
import numbers

import numpy as np
from Crypto.Cipher import AES

_U64 = np.uint64
_FIXED_KEY = hashlib.sha256(b"ustat-toolkit fss fixed-key AES PRG v1").digest()[:16]
_CIPHER = AES.new(_FIXED_KEY, AES.MODE_ECB)

TWEAK_LEFT = 0
TWEAK_RIGHT = 1
TWEAK_VALUE = 2
LOW_BIT_CLEAR = _U64(0xFFFFFFFFFFFFFFFE)


def aes_ecb_inplace(buf: np.ndarray, out: np.ndarray) -> np.ndarray:
    """Encrypt the C-contiguous ``buf`` (any dtype, size multiple of 16 bytes) into ``out``."""
    _CIPHER.encrypt(memoryview(buf).cast("B"), output=memoryview(out).cast("B"))
    return out


def hash_blocks(seeds: np.ndarray, tweaks) -> np.ndarray:
    """``H_j(s)`` for every seed and tweak: one AES call for the whole batch.

    Parameters
    ----------
    seeds : uint64 array ``(m, 2)``
        128-bit seeds as (lo, hi) words.
    tweaks : int, sequence of ints ``(k,)`` or uint64 array ``(m, k)``
        Tweak per output block; a per-seed array lets tree evaluation pick
        the branch of each seed with a single block.

    Returns ``uint64 (m, k, 2)`` (``k = 1`` for a scalar tweak).
    """
    seeds = _check_seeds(seeds)
    tw = np.asarray(tweaks)
    if tw.dtype.kind not in "iu":
        raise TypeError(f"tweaks must be integers, got dtype {tw.dtype}")
    tw = tw.astype(_U64, copy=False)
    if tw.ndim == 0:
        tw = tw.reshape(1)
    if tw.ndim == 1:
        tw = tw[None, :]
    elif tw.ndim != 2 or tw.shape[0] != seeds.shape[0]:
        raise ValueError(
            f"tweaks must be a scalar, a (k,) list or an (m, k) array with m = {seeds.shape[0]}, "
            f"got shape {tw.shape}"
        )
    return _hash(seeds[:, 0], seeds[:, 1], tw)


def _hash(lo: np.ndarray, hi: np.ndarray, tw) -> np.ndarray:
    """Unchecked :func:`hash_blocks` core returning an (m, k, 2) view (see _hash_k)."""
    m = lo.shape[0]
    if isinstance(tw, np.ndarray):
        cols = [tw[:, j] if tw.shape[0] == m and m != 1 else tw[0, j] for j in range(tw.shape[1])]
    else:
        cols = list(tw)
    return _hash_k(lo, hi, cols).transpose(1, 0, 2)


def _hash_k(lo: np.ndarray, hi: np.ndarray, cols, buf=None, out=None) -> np.ndarray:
    """Blocks H_j for k tweak columns, tweak-major: returns uint64 (k, m, 2).

    ``lo``, ``hi``: 1-d uint64 word arrays (m,); ``cols``: k tweaks, each an
    int or an (m,) uint64 array (per-seed tweaks select a branch per seed).
    ``buf``/``out``: optional preallocated (k, m, 2) scratch and result
    (tree loops reuse them: fresh multi-MB allocations per level cost page
    faults that exceed the AES time). Works column by column on 1-d strided
    views (numpy is slow on a trailing axis of length 2 or 3).
    One ``encrypt`` call for all k * m blocks.
    """
    m = lo.shape[0]
    k = len(cols)
    if buf is None:
        buf = np.empty((k, m, 2), dtype=_U64)
    if out is None:
        out = np.empty_like(buf)
    sig = lo ^ hi
    for j, c in enumerate(cols):
        if np.ndim(c) == 0 and int(c) == 0:
            buf[j, :, 0] = sig
        else:
            np.bitwise_xor(sig, c, out=buf[j, :, 0])
        buf[j, :, 1] = lo
    aes_ecb_inplace(buf, out)
    flat_o = out.reshape(-1)
    flat_o ^= buf.reshape(-1)
    return out


def expand(seeds: np.ndarray, values: bool = True):
    """Length-doubling expansion of a batch of seeds (one AES call).

    Returns ``(s_left, t_left, s_right, t_right, v_left, v_right)``: child
    seeds ``uint64 (m, 2)`` (low bit cleared), control bits ``uint64 (m,)``
    in {0, 1}, and 64-bit output words ``uint64 (m,)`` (use :func:`convert`
    to map them into Z_2^l). With ``values=False`` the value block is not
    computed (DPF levels) and ``v_left``/``v_right`` are ``None``.
    Cost: 3 AES blocks per seed (2 with ``values=False``).
    """
    seeds = _check_seeds(seeds)
    tw = (TWEAK_LEFT, TWEAK_RIGHT, TWEAK_VALUE) if values else (TWEAK_LEFT, TWEAK_RIGHT)
    out = _hash(np.ascontiguousarray(seeds[:, 0]), np.ascontiguousarray(seeds[:, 1]), tw)
    t_left = out[:, 0, 0] & _U64(1)
    t_right = out[:, 1, 0] & _U64(1)
    out[:, 0, 0] &= LOW_BIT_CLEAR
    out[:, 1, 0] &= LOW_BIT_CLEAR
    s_left = out[:, 0, :]
    s_right = out[:, 1, :]
    if not values:
        return s_left, t_left, s_right, t_right, None, None
    return s_left, t_left, s_right, t_right, out[:, 2, 0], out[:, 2, 1]


def convert(words, bits: int) -> np.ndarray:
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
    """The word of a (low-bit-cleared) seed that :func:`convert` uses: the high word."""
    return seeds[..., 1]


def random_seeds(rng, m: int) -> np.ndarray:
    """``m`` uniform seeds (low bit cleared) from a CSPRNG: ``uint64 (m, 2)``."""
    s = rng.uint64((m, 2))
    s[:, 0] &= LOW_BIT_CLEAR
    return s


def _check_seeds(seeds) -> np.ndarray:
    s = np.asarray(seeds)
    if s.dtype != _U64:
        raise TypeError(f"seeds must be uint64 (m, 2) arrays, got dtype {s.dtype}")
    if s.ndim != 2 or s.shape[1] != 2:
        raise ValueError(f"seeds must have shape (m, 2), got {s.shape}")
    return s
