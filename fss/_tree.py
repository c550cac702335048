"""Batched tree kernels shared by DPF and DCF: Gen and Eval on one cache block (internal).

Unchecked: the public functions of :mod:`fss.dcf` / :mod:`fss.dpf` validate.
A node word carries the control bit in the low bit of ``lo`` and the PRG is
that of :mod:`fss.prg` (branch ``x`` expanded from ``u = w ^ x``; the value
word from ``u ^ D``; all blocks of a level in one AES call). Working arrays are
preallocated per block and every step writes into them (``out=``): fresh
multi-MB temporaries per level cost more page faults than the AES calls.

``mode`` is ``"dcf"`` (value words and V_CW per level, EUROCRYPT 2021
Fig. 1), ``"arith"`` or ``"xor"`` (DPF, CCS 2016 Fig. 1, output group Z_2^l
or XOR of l-bit strings).

Costs per instance and level (AES blocks): DCF Gen 8 (4 per party: kept and
lost child, kept and lost value word), DCF Eval 2; DPF Gen 4, DPF Eval 1.
One AES call per level per block in every case.

When numba is installed (the optional ``fast`` extra), :func:`gen_block` and
:func:`eval_block` hand the block to the compiled kernels of :mod:`fss._fast`
(one fused pass per level, or the whole walk with AES on the CPU's AES
instructions, :mod:`fss._fast_ni`); the numpy code below is the reference and
the fallback, and the results are bit-identical (``tests/fss/test_fast.py``).
"""

from __future__ import annotations

import numpy as np

from . import _fast, _pool
from .prg import DELTA_HI, LOW_BIT_CLEAR, PI

_U64 = np.uint64
_ONE = _U64(1)
BLOCK = 1 << 13        # instances per cache block in Gen
EVAL_BLOCK = 1 << 14   # points per cache block in Eval


def _mask(l: int) -> np.uint64:
    return _U64((1 << l) - 1)


def gen_block(n, l, mode, alpha, beta, roots, cw_seed, cw_tl, cw_tr, cw_v):
    """Gen for B instances; fills the correction-word slices, returns cw_last (B,).

    ``alpha``, ``beta``: uint64 (B,); ``roots``: uint64 (2, B, 2) root seeds
    (low bits clear); ``cw_seed`` (n, B, 2), ``cw_tl``/``cw_tr`` uint8 (n, B),
    ``cw_v`` (n, B) or None (DPF). Both parties' nodes are processed in one
    array of 2B words (party 0 first), one AES call per permutation per level.
    """
    if _fast.ENABLED:
        return _fast.gen_block(n, l, mode, alpha, beta, roots, cw_seed, cw_tl, cw_tr, cw_v)
    B = alpha.shape[0]
    B2 = 2 * B
    dcf = mode == "dcf"
    nb = 4 if dcf else 2
    IN = np.empty((nb, B2, 2), dtype=_U64)         # kept, lost (, kept ^ D, lost ^ D)
    OC = np.empty_like(IN)
    IN[0, :B] = roots[0]
    IN[0, B:] = roots[1]
    IN[0, B:, 0] |= _ONE                            # t_1 = 1 at the root
    tm = np.zeros(B2, dtype=_U64)                   # control bits as masks (all-ones if t = 1)
    tm[B:] = _U64(0xFFFFFFFFFFFFFFFF)
    alpha2 = np.concatenate([alpha, alpha])
    a2 = np.empty(B2, dtype=_U64)
    one_lo = np.zeros((B2, 2), dtype=_U64)
    one_lo[:, 0] = _ONE
    t1 = np.empty(B2, dtype=_U64)
    t2 = np.empty(B2, dtype=_U64)
    if dcf:
        delta = np.zeros((2, B2, 2), dtype=_U64)
        delta[:, :, 1] = DELTA_HI
        val = np.empty((2, B2), dtype=_U64)
        v_alpha = np.zeros(B, dtype=_U64)
        X = np.empty(B, dtype=_U64)
    for i in range(n):
        np.right_shift(alpha2, _U64(n - 1 - i), out=a2)
        a2 &= _ONE
        a = a2[:B]
        IN[0, :, 0] ^= a2                           # kept branch: w ^ alpha_i
        np.bitwise_xor(IN[0], one_lo, out=IN[1])    # lost branch: w ^ (1 - alpha_i)
        if dcf:
            np.bitwise_xor(IN[:2], delta, out=IN[2:])
        PI.encrypt(IN, OC)
        if dcf:
            np.bitwise_xor(OC[2:, :, 0], IN[:2, :, 0], out=val)
        OC[:2] ^= IN[:2]                            # feed-forward: children
        K, L = OC[0], OC[1]
        cs = cw_seed[i]
        np.bitwise_xor(L[:B], L[B:], out=cs)        # s_CW (t_CW^lose still in the low bit)
        tl_, tk = t1[:B], t2[:B]
        np.bitwise_and(cs[:, 0], _ONE, out=tl_)
        np.bitwise_xor(K[:B, 0], K[B:, 0], out=tk)
        tk &= _ONE
        tk ^= _ONE                                  # t_CW^keep
        cs[:, 0] &= LOW_BIT_CLEAR
        sel = t1[B:]
        np.bitwise_xor(tl_, tk, out=sel)
        sel &= a
        np.bitwise_xor(tk, sel, out=cw_tl[i], casting="unsafe")   # t_CW^L = keep if alpha_i = 0
        np.bitwise_xor(tl_, sel, out=cw_tr[i], casting="unsafe")
        if dcf:
            _gen_values(l, i, a, beta, val, tm[B:], v_alpha, X, cw_v)
        # next words: kept child, corrected by (s_CW | t_CW^keep) where t = 1
        tk |= cs[:, 0]
        corr = t1.reshape(2, B)
        np.bitwise_and(tm.reshape(2, B), tk, out=corr)
        np.bitwise_xor(K[:, 0], t1, out=IN[0, :, 0])
        np.bitwise_and(tm.reshape(2, B), cs[:, 1], out=corr)
        np.bitwise_xor(K[:, 1], t1, out=IN[0, :, 1])
        np.bitwise_and(IN[0, :, 0], _ONE, out=tm)
        np.negative(tm, out=tm)
    lo_hi = IN[0, :, 1]
    if dcf:
        np.subtract(lo_hi[B:], lo_hi[:B], out=X)
        X -= v_alpha
        return _signed_by(X, tm[B:]) & _mask(l)
    if mode == "xor":
        return (beta ^ lo_hi[:B] ^ lo_hi[B:]) & _mask(l)
    return _signed_by(beta - lo_hi[:B] + lo_hi[B:], tm[B:]) & _mask(l)


def _signed_by(X, m):
    """(-1)^t X mod 2^64 for the mask m = -t: (X ^ m) - m."""
    X ^= m
    X -= m
    return X


def _gen_values(l, i, a, beta, val, t1m, v_alpha, X, cw_v):
    """V_CW of level i and the running V_alpha (EUROCRYPT 2021 Fig. 1, lines 10-12)."""
    B = a.shape[0]
    np.subtract(val[1, B:], val[1, :B], out=X)      # lost value words, party 1 - party 0
    X -= v_alpha
    am = np.negative(a)
    am &= beta
    X += am                                          # + beta if the lost branch is the left one
    v_alpha += val[0, :B]
    v_alpha -= val[0, B:]
    v_alpha += X                                     # (-1)^t1 V_CW = X
    np.bitwise_xor(X, t1m, out=am)
    am -= t1m
    np.bitwise_and(am, _mask(l), out=cw_v[i])


def eval_block(n, l, mode, party, seed, cw_seed, cw_tl, cw_tr, cw_v, cw_last, x):
    """Eval at ``x`` (uint64 (m, B): m points per key) for B keys; returns uint64 (m, B).

    Walks x's path: per level one AES call over the whole block (the child
    block, and the value block for DCF), feed-forward, correction where t = 1.
    """
    if _fast.ENABLED:
        return _fast.eval_block(n, l, mode, party, seed, cw_seed, cw_tl, cw_tr, cw_v, cw_last, x)
    m, B = x.shape
    M = m * B
    xr = x.reshape(M)

    def rep(a):
        return a if m == 1 else np.broadcast_to(a[None], (m,) + a.shape).reshape((M,) + a.shape[1:])

    def rep2(a):                                    # (n, B) -> (n, M), points-major like x
        return a if m == 1 else np.broadcast_to(a[:, None], (a.shape[0], m, B)).reshape(a.shape[0], M)

    dcf = mode == "dcf"
    nb = 2 if dcf else 1
    INb = np.empty((nb, M, 2), dtype=_U64)
    OCb = np.empty_like(INb)
    IN, OC = INb[0], OCb[0]
    IN[:] = rep(seed)
    tm = np.full(M, (1 << 64) - 1 if party else 0, dtype=_U64)
    IN[:, 0] |= _U64(party)
    tmp = np.empty(M, dtype=_U64)
    tc = np.empty(M, dtype=_U64)
    # x's bits, level-major (n, M) uint8, and t_CW of x's branch for every level
    bits = np.unpackbits(xr.astype("<u8").view(np.uint8).reshape(M, 8), axis=1, bitorder="little")
    XB = np.ascontiguousarray(bits[:, :n][:, ::-1].T)
    TC = rep2(cw_tl) ^ ((rep2(cw_tl) ^ rep2(cw_tr)) & XB)
    IN[:, 0] ^= XB[0]
    if dcf:
        delta = np.zeros((M, 2), dtype=_U64)
        delta[:, 1] = DELTA_HI
        v = np.zeros(M, dtype=_U64)
    for i in range(n):
        if dcf:
            np.bitwise_xor(IN, delta, out=INb[1])
        PI.encrypt(INb, OCb)
        if dcf:
            np.bitwise_xor(OCb[1, :, 0], IN[:, 0], out=tmp)
            v += tmp
            np.bitwise_and(rep(cw_v[i]), tm, out=tmp)
            v += tmp
        OC ^= IN
        cs = rep(cw_seed[i])
        np.bitwise_or(cs[:, 0], TC[i], out=tc)      # s_CW | t_CW of x's branch
        tc &= tm
        np.bitwise_and(cs[:, 1], tm, out=tmp)
        np.bitwise_xor(OC[:, 1], tmp, out=IN[:, 1])
        np.bitwise_xor(OC[:, 0], tc, out=tc)        # corrected low word (t in bit 0)
        np.bitwise_and(tc, _ONE, out=tm)
        np.negative(tm, out=tm)
        if i + 1 < n:
            np.bitwise_xor(tc, XB[i + 1], out=IN[:, 0])
        else:
            IN[:, 0] = tc
    return finish_eval(IN[:, 1], rep(cw_last) & tm, v if dcf else None, mode, party, l).reshape(m, B)


def finish_eval(hi, last, v, mode: str, party: int, l: int) -> np.ndarray:
    """A party's output words from the last level: XOR shares, or signed additive shares.

    ``hi``: the high words of the leaf seeds; ``last``: the last correction
    word where t = 1 (else 0); ``v``: the DCF's running value (ignored for a DPF).
    """
    if mode == "xor":
        y = hi ^ last
    else:
        y = (v + hi + last) if mode == "dcf" else (hi + last)
        if party:
            y = np.negative(y)
    return y & _mask(l)


def gen_batch(n: int, l: int, mode: str, alpha, beta, roots, workers: int = 1, block: int = 0):
    """Unchecked batched Gen (DCF or DPF ``mode``): correction-word arrays for B instances.

    Cache blocking: instances go in blocks of ``block`` so that a level's
    working set stays in the L2 cache; each block does one AES call per level.
    """
    block = block or BLOCK
    B = alpha.shape[0]
    cw_seed = np.empty((n, B, 2), dtype=_U64)
    cw_tl = np.empty((n, B), dtype=np.uint8)
    cw_tr = np.empty((n, B), dtype=np.uint8)
    cw_v = np.empty((n, B), dtype=_U64) if mode == "dcf" else None
    cw_last = np.empty(B, dtype=_U64)

    def one(c0):
        c1 = min(B, c0 + block)
        cw_last[c0:c1] = gen_block(
            n, l, mode, alpha[c0:c1], beta[c0:c1], roots[:, c0:c1], cw_seed[:, c0:c1],
            cw_tl[:, c0:c1], cw_tr[:, c0:c1], None if cw_v is None else cw_v[:, c0:c1])

    _pool.run_blocks(one, range(0, B, block), workers)
    return cw_seed, cw_tl, cw_tr, cw_v, cw_last


def eval_batch(mode, n: int, l: int, party: int, key, x: np.ndarray, workers: int = 1,
              block: int = 0) -> np.ndarray:
    """Unchecked batched Eval (DCF or DPF ``mode``): x uint64 (m, B); returns uint64 (m, B).

    Processes blocks of ``block // m`` keys (cache blocking, see _gen_core).
    """
    block = block or EVAL_BLOCK
    m, B = x.shape
    out = np.empty((m, B), dtype=_U64)
    step = max(1, block // m)
    cw_v = getattr(key, "cw_value", None)

    def one(c0):
        c1 = min(B, c0 + step)
        out[:, c0:c1] = eval_block(
            n, l, mode, party, key.seed[c0:c1], key.cw_seed[:, c0:c1], key.cw_t_left[:, c0:c1],
            key.cw_t_right[:, c0:c1], None if cw_v is None else cw_v[:, c0:c1],
            key.cw_last[c0:c1], x[:, c0:c1])

    _pool.run_blocks(one, range(0, B, step), workers)
    return out
