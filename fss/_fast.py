"""Fused Gen/Eval level kernels for DPF and DCF, compiled with numba when installed (internal).

The numpy kernels of :mod:`fss._tree` make about 25 passes over a block's
arrays per tree level around the one AES call; here all the work of a level
between two AES calls (feed-forward, correction words, control bits, value
words, and the next level's AES inputs) is one compiled loop over the
block, so a level is one AES call plus one pass. The outputs are
bit-identical to :mod:`fss._tree` (same PRG, same arithmetic mod 2^64; the
tests run both paths and compare).

When the CPU has AES instructions (:data:`AESNI`), :func:`gen_block` and
:func:`eval_block` go further and hand the whole block to :mod:`fss._fast_ni`
(AES inside the compiled walk); the passes here are for CPUs without them.

Optional: install the ``fast`` extra (``numba``). Without numba, or with the
environment variable ``USTAT_FSS_NUMBA=0``, :data:`ENABLED` is False and
:mod:`fss._tree` uses numpy. Compiled code is cached next to this module
(numba's ``cache=True``), and it releases the GIL (``nogil``), so the
worker threads of :mod:`fss._pool` still run blocks in parallel.
"""

from __future__ import annotations

import os

import numpy as np

from . import _aesni
from . import _tree
from .prg import PI

try:  # pragma: no cover - depends on the environment
    if os.environ.get("USTAT_FSS_NUMBA", "1") == "0":
        raise ImportError("disabled by USTAT_FSS_NUMBA=0")
    import numba
    AVAILABLE = True
except ImportError:  # pragma: no cover
    numba = None
    AVAILABLE = False

#: use the compiled kernels (tests switch it off to compare with numpy)
ENABLED = AVAILABLE
#: inside them, AES on the CPU's AES instructions (else pycryptodome between compiled passes)
AESNI = AVAILABLE and _aesni.AVAILABLE

_U64 = np.uint64


def _jit(fn):
    return numba.njit(cache=True, nogil=True, boundscheck=False)(fn) if AVAILABLE else fn


def inner_contiguous(a):
    """``a`` itself if its axes after the first are contiguous (slices of the key arrays along
    the batch axis are), else a C-contiguous copy (the lane kernels of :mod:`fss._fast_ni`
    read and write whole rows)."""
    step = a.itemsize
    for k in range(a.ndim - 1, 0, -1):
        if a.shape[k] > 1 and a.strides[k] != step:
            return np.ascontiguousarray(a)
        step *= a.shape[k]
    return a


@_jit
def _put_gen_inputs(IN, p, lo, hi, dcf):
    """Node p's AES inputs: kept ``w`` (lo already has alpha's bit), lost ``w ^ 1`` (, both ^ D)."""
    D = np.uint64(1 << 63)
    IN[p, 0, 0] = lo
    IN[p, 0, 1] = hi
    IN[p, 1, 0] = lo ^ np.uint64(1)
    IN[p, 1, 1] = hi
    if dcf:
        IN[p, 2, 0] = lo
        IN[p, 2, 1] = hi ^ D
        IN[p, 3, 0] = lo ^ np.uint64(1)
        IN[p, 3, 1] = hi ^ D


@_jit
def _gen_first(IN, roots, alpha, n, dcf):
    """Level 0's inputs from the two parties' roots (t = 1 for party 1)."""
    B = alpha.shape[0]
    sh = np.uint64(n - 1)
    for b in range(B):
        a = (alpha[b] >> sh) & np.uint64(1)
        _put_gen_inputs(IN, b, roots[0, b, 0] ^ a, roots[0, b, 1], dcf)
        _put_gen_inputs(IN, B + b, roots[1, b, 0] ^ a ^ np.uint64(1), roots[1, b, 1], dcf)


@_jit
def _gen_level(IN, OC, alpha, beta, tm, v_alpha, cw_seed, cw_tl, cw_tr, cw_v, n, i, lmask, dcf):
    """Level i after AES: its correction words (EUROCRYPT 2021 Fig. 1) and level i+1's inputs.

    IN/OC are (2B, 4, 2): node p's kept, lost, kept ^ D, lost ^ D blocks in
    one cache line; party 0's nodes first. The final node words stay in IN[:, 0].
    """
    B = alpha.shape[0]
    sh = np.uint64(n - 1 - i)
    more = i + 1 < n
    sh2 = np.uint64(n - 2 - i if more else 0)
    one = np.uint64(1)
    clear = np.uint64(0xFFFFFFFFFFFFFFFE)
    for b in range(B):
        q = B + b
        a = (alpha[b] >> sh) & one
        k0l = OC[b, 0, 0] ^ IN[b, 0, 0]
        k0h = OC[b, 0, 1] ^ IN[b, 0, 1]
        k1l = OC[q, 0, 0] ^ IN[q, 0, 0]
        k1h = OC[q, 0, 1] ^ IN[q, 0, 1]
        csl = OC[b, 1, 0] ^ IN[b, 1, 0] ^ OC[q, 1, 0] ^ IN[q, 1, 0]
        csh = OC[b, 1, 1] ^ IN[b, 1, 1] ^ OC[q, 1, 1] ^ IN[q, 1, 1]
        tl = csl & one
        tk = ((k0l ^ k1l) & one) ^ one
        csl &= clear
        cw_seed[i, b, 0] = csl
        cw_seed[i, b, 1] = csh
        sel = (tl ^ tk) & a
        cw_tl[i, b] = np.uint8(tk ^ sel)
        cw_tr[i, b] = np.uint8(tl ^ sel)
        m0 = tm[b]
        m1 = tm[q]
        if dcf:
            x = (OC[q, 3, 0] ^ IN[q, 1, 0]) - (OC[b, 3, 0] ^ IN[b, 1, 0]) - v_alpha[b]
            x += (np.uint64(0) - a) & beta[b]
            v_alpha[b] += (OC[b, 2, 0] ^ IN[b, 0, 0]) - (OC[q, 2, 0] ^ IN[q, 0, 0]) + x
            cw_v[i, b] = ((x ^ m1) - m1) & lmask
        tk |= csl
        lo0 = k0l ^ (m0 & tk)
        lo1 = k1l ^ (m1 & tk)
        hi0 = k0h ^ (m0 & csh)
        hi1 = k1h ^ (m1 & csh)
        tm[b] = np.uint64(0) - (lo0 & one)
        tm[q] = np.uint64(0) - (lo1 & one)
        if more:
            a2 = (alpha[b] >> sh2) & one
            _put_gen_inputs(IN, b, lo0 ^ a2, hi0, dcf)
            _put_gen_inputs(IN, q, lo1 ^ a2, hi1, dcf)
        else:
            IN[b, 0, 0] = lo0
            IN[b, 0, 1] = hi0
            IN[q, 0, 0] = lo1
            IN[q, 0, 1] = hi1


def eval_key(mode, n, l, party, key, x):
    """Eval of a whole (small) key batch at x (m, B) in one compiled call (needs :data:`AESNI`)."""
    return _ni.eval_block(n, l, mode, party, key.seed, key.cw_seed, key.cw_t_left,
                          key.cw_t_right, getattr(key, "cw_value", None), key.cw_last, x)


@_jit
def put_words(dst, words, lb):
    """Little-endian low ``lb`` bytes of each word into ``dst`` (serialization, one pass)."""
    for i in range(words.shape[0]):
        w = words[i]
        for k in range(lb):
            dst[i * lb + k] = np.uint8((w >> np.uint64(8 * k)) & np.uint64(0xFF))


@_jit
def get_words(src, count, lb, top_bits):
    """Words from ``count`` little-endian ``lb``-byte fields; -1 if a field's last byte has a
    bit at or above ``top_bits`` set (a value of l bits or more), else the number of words."""
    out = np.empty(count, dtype=np.uint64)
    for i in range(count):
        w = np.uint64(0)
        for k in range(lb):
            w |= np.uint64(src[i * lb + k]) << np.uint64(8 * k)
        out[i] = w
        if top_bits and src[i * lb + lb - 1] >> top_bits:
            return out, -1
    return out, count


@_jit
def pack_levels(t, dst):
    """Control bits ``t`` (n, B) uint8 0/1 into ``dst`` (ceil(n/8), B): bit i of byte j of
    instance b is t[8 j + i, b] (``np.packbits(t, axis=0, bitorder="little")``, one pass)."""
    n, B = t.shape
    for j in range(dst.shape[0]):
        row = dst[j]
        for b in range(B):
            row[b] = 0
        for i in range(min(8, n - 8 * j)):
            src = t[8 * j + i]
            for b in range(B):
                row[b] |= np.uint8(src[b] << i)


@_jit
def unpack_levels(src, n):
    """Inverse of :func:`pack_levels`: (n, B) uint8 from (ceil(n/8), B); -1 as the second
    result if a padding bit (level >= n) is set, else 0."""
    nb, B = src.shape
    out = np.empty((n, B), dtype=np.uint8)
    for j in range(nb):
        row = src[j]
        for i in range(min(8, n - 8 * j)):
            dst = out[8 * j + i]
            for b in range(B):
                dst[b] = (row[b] >> i) & np.uint8(1)
    if n % 8:
        last = src[nb - 1]
        for b in range(B):
            if last[b] >> (n % 8):
                return out, -1
    return out, 0


@_jit
def any_low_bit(words):
    """Whether any even-indexed word (the low word of a seed) of the flat uint64 array
    ``words`` has bit 0 set (one pass, no temporary)."""
    acc = np.uint64(0)
    for i in range(0, words.shape[0], 2):
        acc |= words[i]
    return (acc & np.uint64(1)) != 0


def gen_block(n, l, mode, alpha, beta, roots, cw_seed, cw_tl, cw_tr, cw_v):
    """Same contract as :func:`fss._tree.gen_block` (compiled level loop)."""
    if AESNI:
        return _ni.gen_block(n, l, mode, alpha, beta, roots, cw_seed, cw_tl, cw_tr, cw_v)
    B = alpha.shape[0]
    dcf = mode == "dcf"
    IN = np.empty((2 * B, 4 if dcf else 2, 2), dtype=_U64)
    OC = np.empty_like(IN)
    tm = np.zeros(2 * B, dtype=_U64)
    tm[B:] = _U64(0xFFFFFFFFFFFFFFFF)
    alpha = np.ascontiguousarray(alpha)
    beta = np.ascontiguousarray(beta)
    v_alpha = np.zeros(B, dtype=_U64)
    cv = cw_v if dcf else np.empty((n, 0), dtype=_U64)
    lmask = _U64((1 << l) - 1)
    _gen_first(IN, roots, alpha, n, dcf)
    for i in range(n):
        PI.encrypt(IN, OC)
        _gen_level(IN, OC, alpha, beta, tm, v_alpha, cw_seed, cw_tl, cw_tr, cv, n, i, lmask, dcf)
    hi = IN[:, 0, 1]
    m1 = tm[B:]
    if dcf:
        X = hi[B:] - hi[:B] - v_alpha
    elif mode == "xor":
        return (beta ^ hi[:B] ^ hi[B:]) & lmask
    else:
        X = beta - hi[:B] + hi[B:]
    return ((X ^ m1) - m1) & lmask


@_jit
def _eval_first(IN, seed, x, n, party, dcf):
    """Level 0's inputs: the root word (t = party) with x's first bit (and ^ D for the value)."""
    M = IN.shape[0]
    B = seed.shape[0]
    sh = np.uint64(n - 1)
    D = np.uint64(1 << 63)
    for p in range(M):
        b = p % B
        lo = seed[b, 0] ^ np.uint64(party) ^ ((x[p] >> sh) & np.uint64(1))
        IN[p, 0, 0] = lo
        IN[p, 0, 1] = seed[b, 1]
        if dcf:
            IN[p, 1, 0] = lo
            IN[p, 1, 1] = seed[b, 1] ^ D


@_jit
def _eval_level(IN, OC, tm, v, x, cw_seed, cw_tl, cw_tr, cw_v, n, i, dcf):
    """Level i after AES: value word, feed-forward, correction; writes level i+1's inputs.

    IN/OC are (M, 2, 2) for DCF (x's child block, then its value block), (M, 1, 2) for DPF.
    """
    M = IN.shape[0]
    B = cw_seed.shape[1]
    sh = np.uint64(n - 1 - i)
    one = np.uint64(1)
    more = i + 1 < n
    sh2 = np.uint64(n - 2 - i if more else 0)
    D = np.uint64(1 << 63)
    for p in range(M):
        b = p - (p // B) * B if p >= B else p
        lo = IN[p, 0, 0]
        hi = IN[p, 0, 1]
        m = tm[p]
        if dcf:
            v[p] += (OC[p, 1, 0] ^ lo) + (cw_v[i, b] & m)
        tl = np.uint64(cw_tl[i, b])
        t = tl ^ ((tl ^ np.uint64(cw_tr[i, b])) & (x[p] >> sh))     # t_CW of x's branch (bit 0)
        nlo = OC[p, 0, 0] ^ lo ^ ((cw_seed[i, b, 0] | (t & one)) & m)
        nhi = OC[p, 0, 1] ^ hi ^ (cw_seed[i, b, 1] & m)
        tm[p] = np.uint64(0) - (nlo & one)
        if more:
            nlo ^= (x[p] >> sh2) & one
            if dcf:
                IN[p, 1, 0] = nlo
                IN[p, 1, 1] = nhi ^ D
        IN[p, 0, 0] = nlo
        IN[p, 0, 1] = nhi


def eval_block(n, l, mode, party, seed, cw_seed, cw_tl, cw_tr, cw_v, cw_last, x):
    """Same contract as :func:`fss._tree.eval_block` (compiled level loop)."""
    if AESNI:
        return _ni.eval_block(n, l, mode, party, seed, cw_seed, cw_tl, cw_tr, cw_v, cw_last, x)
    m, B = x.shape
    M = m * B
    dcf = mode == "dcf"
    IN = np.empty((M, 2 if dcf else 1, 2), dtype=_U64)
    OC = np.empty_like(IN)
    tm = np.full(M, (1 << 64) - 1 if party else 0, dtype=_U64)
    v = np.zeros(M if dcf else 0, dtype=_U64)
    xr = np.ascontiguousarray(x).reshape(M)
    cv = cw_v if dcf else np.empty((n, 0), dtype=_U64)
    _eval_first(IN, seed, xr, n, party, dcf)
    for i in range(n):
        PI.encrypt(IN, OC)
        _eval_level(IN, OC, tm, v, xr, cw_seed, cw_tl, cw_tr, cv, n, i, dcf)
    last = np.broadcast_to(cw_last, (m, B)).reshape(M) & tm
    return _tree.finish_eval(IN[:, 0, 1], last, v, mode, party, l).reshape(m, B)


if AESNI:  # pragma: no branch
    from . import _fast_ni as _ni  # noqa: E402
