"""Fused Gen/Eval level passes for DPF and DCF, compiled with numba, and the compiled codec.

The numpy kernels of :mod:`fss.kernels.reference` make about 25 passes over
a block's arrays per tree level around the one AES call; here all the work
of a level between two AES calls (feed-forward, correction words, control
bits, value words, and the next level's AES inputs) is one compiled loop
over the block, so a level is one pycryptodome AES-ECB call plus one pass
(node blocks interleaved so that a node's blocks share a cache line). The
outputs are bit-identical to the reference (same PRG, same arithmetic mod
2^64; ``tests/fss/test_kernels.py``). This is the backend of a CPU without
AES instructions (:mod:`fss.kernels.aesni` otherwise); the codec below (the
packing of the wire format, :mod:`fss._keyio`) serves both.
Cost: the AES blocks of the reference (DCF Gen 8 n per instance, Eval 2 n
per point; DPF half), one pass per level. Security: that of the
constructions; the kernels are deterministic functions of their inputs.
"""

from __future__ import annotations

import numpy as np

from ..keys import TreeArrays, TreeParams
from ..prg import PI
from ._host import jit
from .reference import finish_eval

_U64 = np.uint64


@jit
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


@jit
def _gen_first(IN, roots, alpha, n, dcf):
    """Level 0's inputs from the two parties' roots (t = 1 for party 1)."""
    B = alpha.shape[0]
    sh = np.uint64(n - 1)
    for b in range(B):
        a = (alpha[b] >> sh) & np.uint64(1)
        _put_gen_inputs(IN, b, roots[0, b, 0] ^ a, roots[0, b, 1], dcf)
        _put_gen_inputs(IN, B + b, roots[1, b, 0] ^ a ^ np.uint64(1), roots[1, b, 1], dcf)


@jit
def _gen_level(io, ab, st, cw, n, i, lmask, dcf):
    """Level i after AES: its correction words (EUROCRYPT 2021 Fig. 1) and level i+1's inputs.

    ``io`` = (IN, OC), (2B, 4, 2): node p's kept, lost, kept ^ D, lost ^ D blocks in
    one cache line, party 0's nodes first; the final node words stay in IN[:, 0].
    ``ab`` = (alpha, beta), ``st`` = (t masks (2B,), V_alpha (B,)), ``cw`` = the
    correction-word arrays (cw_seed, cw_t_left, cw_t_right, cw_value) written at level i.
    """
    IN, OC = io
    alpha, beta = ab
    tm, v_alpha = st
    cw_seed, cw_tl, cw_tr, cw_v = cw
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


def gen_block(params: TreeParams, alpha: np.ndarray, beta: np.ndarray, out: TreeArrays) -> None:
    """Same contract as :func:`fss.kernels.reference.gen_block` (compiled level passes)."""
    n, l, mode = params.n_bits, params.out_bits, params.mode
    B = alpha.shape[0]
    dcf = mode == "dcf"
    IN = np.empty((2 * B, 4 if dcf else 2, 2), dtype=_U64)
    OC = np.empty_like(IN)
    tm = np.zeros(2 * B, dtype=_U64)
    tm[B:] = _U64(0xFFFFFFFFFFFFFFFF)
    alpha = np.ascontiguousarray(alpha)
    beta = np.ascontiguousarray(beta)
    v_alpha = np.zeros(B, dtype=_U64)
    cv = out.cw_value if out.cw_value is not None else np.empty((n, 0), dtype=_U64)
    cw = (out.cw_seed, out.cw_t_left, out.cw_t_right, cv)
    lmask = _U64((1 << l) - 1)
    _gen_first(IN, out.seed, alpha, n, dcf)
    for i in range(n):
        PI.encrypt(IN, OC)
        _gen_level((IN, OC), (alpha, beta), (tm, v_alpha), cw, n, i, lmask, dcf)
    hi = IN[:, 0, 1]
    m1 = tm[B:]
    if dcf:
        X = hi[B:] - hi[:B] - v_alpha
    elif mode == "xor":
        out.cw_last[:] = (beta ^ hi[:B] ^ hi[B:]) & lmask
        return
    else:
        X = beta - hi[:B] + hi[B:]
    out.cw_last[:] = ((X ^ m1) - m1) & lmask


@jit
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


@jit
def _eval_level(io, st, x, cw, n, i, dcf):
    """Level i after AES: value word, feed-forward, correction; writes level i+1's inputs.

    ``io`` = (IN, OC), (M, 2, 2) for DCF (x's child block, then its value block), (M, 1, 2)
    for DPF; ``st`` = (t masks, value sums), (M,) each; ``cw`` = (cw_seed, cw_t_left,
    cw_t_right, cw_value).
    """
    IN, OC = io
    tm, v = st
    cw_seed, cw_tl, cw_tr, cw_v = cw
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


def eval_block(params: TreeParams, party: int, key: TreeArrays, x: np.ndarray) -> np.ndarray:
    """Same contract as :func:`fss.kernels.reference.eval_block` (compiled level passes)."""
    n = params.n_bits
    m, B = x.shape
    M = m * B
    dcf = key.cw_value is not None
    IN = np.empty((M, 2 if dcf else 1, 2), dtype=_U64)
    OC = np.empty_like(IN)
    tm = np.full(M, (1 << 64) - 1 if party else 0, dtype=_U64)
    v = np.zeros(M if dcf else 0, dtype=_U64)
    xr = np.ascontiguousarray(x).reshape(M)
    cv = key.cw_value if key.cw_value is not None else np.empty((n, 0), dtype=_U64)
    cw = (key.cw_seed, key.cw_t_left, key.cw_t_right, cv)
    _eval_first(IN, key.seed, xr, n, party, dcf)
    for i in range(n):
        PI.encrypt(IN, OC)
        _eval_level((IN, OC), (tm, v), xr, cw, n, i, dcf)
    last = np.broadcast_to(key.cw_last, (m, B)).reshape(M) & tm
    return finish_eval(params, party, IN[:, 0, 1], last, v if dcf else None).reshape(m, B)


# -- codec: the packing of the wire format (fss._keyio), one compiled pass each ------------------
@jit
def put_words(dst: np.ndarray, words: np.ndarray, lb: int) -> None:
    """Little-endian low ``lb`` bytes of each word into ``dst`` (serialization, one pass)."""
    for i in range(words.shape[0]):
        w = words[i]
        for k in range(lb):
            dst[i * lb + k] = np.uint8((w >> np.uint64(8 * k)) & np.uint64(0xFF))


@jit
def get_words(src: np.ndarray, count: int, lb: int, top_bits: int) -> tuple[np.ndarray, int]:
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


@jit
def pack_levels(t: np.ndarray, dst: np.ndarray) -> None:
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


@jit
def unpack_levels(src: np.ndarray, n: int) -> tuple[np.ndarray, int]:
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


@jit
def _any_low_bit(words):
    """Whether any even-indexed word (the low word of a seed) of the flat uint64 array
    ``words`` has bit 0 set (one pass, no temporary)."""
    acc = np.uint64(0)
    for i in range(0, words.shape[0], 2):
        acc |= words[i]
    return (acc & np.uint64(1)) != 0


def any_low_bit(seeds: np.ndarray) -> bool:
    """Whether a seed array (..., 2) has bit 0 of a low word set (not canonical)."""
    if seeds.flags.c_contiguous:
        return bool(_any_low_bit(seeds.reshape(-1)))
    return bool(np.any(seeds[..., 0] & np.uint64(1)))
