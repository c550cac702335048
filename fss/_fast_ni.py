"""Gen/Eval of DPF and DCF as one compiled pass per block, AES in registers (internal).

:func:`make_mmo` gives, for a lane count K, a numba intrinsic ``mmo(rk, S)``
that replaces each row of the C-contiguous ``uint64 (K, 2)`` array ``S`` by
``pi(S) ^ S`` (the Matyas-Meyer-Oseas step of :mod:`fss.prg`), ``pi`` being
AES-128 under the expanded key ``rk`` (``uint64 (11, 2)``,
:func:`fss._aesni.round_keys`) on the CPU's AES instructions; the K blocks
go through the rounds together, so the AES units work on K independent
blocks at a time. (It lives in this module so that numba's cache, keyed on
this file, is rebuilt whenever it changes.)

:func:`make_mmo_tuple` does the same on a tuple of words, so that the blocks
never leave the registers (used by DCF Gen, where that measured 5-8% faster;
for Eval the array form measured faster).

The tree walk of a cache block runs inside one numba function, level by
level (the key arrays are level-major): each level's AES blocks go through
the CPU's AES instructions together (8 blocks in flight: Gen of one DCF
instance has 8 per level, Eval takes 4 points with 2 blocks each, or 8 DPF
points), and the correction-word arithmetic works on the results. No
per-level arrays of the whole block, no per-level Python call. Same PRG and
arithmetic as :mod:`fss._tree`, so the outputs are bit-identical (tested).
"""

from __future__ import annotations

import numpy as np

from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic

from ._aesni import round_keys
from ._fast import _jit
from .prg import PI

_U64 = np.uint64


_V2 = ir.VectorType(ir.IntType(64), 2)
_I32 = ir.IntType(32)


def _mmo_rounds(builder, rk_ptr, words):
    """IR for AES_rk(v) ^ v on K blocks given as 2K 64-bit IR values (lo, hi): K vectors out.

    The K blocks go through each round together, so the AES-NI pipeline stays full.
    """
    fnty = ir.FunctionType(_V2, [_V2, _V2])
    enc = cgutils.get_or_insert_function(builder.module, fnty, "llvm.x86.aesni.aesenc")
    last = cgutils.get_or_insert_function(builder.module, fnty, "llvm.x86.aesni.aesenclast")
    kp = builder.bitcast(rk_ptr, _V2.as_pointer())
    ins = []
    for j in range(len(words) // 2):
        v = ir.Constant(_V2, None)
        for h in range(2):
            v = builder.insert_element(v, words[2 * j + h], ir.Constant(_I32, h))
        ins.append(v)
    k0 = builder.load(kp, align=8)
    st = [builder.xor(v, k0) for v in ins]
    for r in range(1, 11):
        kr = builder.load(builder.gep(kp, [ir.Constant(_I32, r)]), align=8)
        f = enc if r < 10 else last
        st = [builder.call(f, [v, kr]) for v in st]
    return [builder.xor(v, u) for v, u in zip(st, ins)]


def make_mmo(K: int):
    """The intrinsic ``mmo(rk, S)``: S[j] <- AES_rk(S[j]) ^ S[j] for the K rows of S, in place."""
    @intrinsic
    def mmo(typingctx, rk, S):
        if not (isinstance(rk, types.Array) and isinstance(S, types.Array)):
            return None

        def codegen(context, builder, signature, args):
            rk_a = context.make_array(signature.args[0])(context, builder, args[0])
            s_a = context.make_array(signature.args[1])(context, builder, args[1])
            # S is read and written as 64-bit words: the kernels write it word by word,
            # and a 128-bit load of two fresh 64-bit stores would stall store forwarding
            wp = builder.bitcast(s_a.data, ir.IntType(64).as_pointer())
            words = [builder.gep(wp, [ir.Constant(_I32, k)]) for k in range(2 * K)]
            outs = _mmo_rounds(builder, rk_a.data, [builder.load(w, align=8) for w in words])
            for j, out in enumerate(outs):
                for h in range(2):
                    builder.store(builder.extract_element(out, ir.Constant(_I32, h)),
                                  words[2 * j + h], align=8)
            return context.get_dummy_value()

        return types.void(rk, S), codegen

    return mmo


def make_mmo_tuple(K: int):
    """The intrinsic ``mmo(rk, t)`` on a tuple of 2K words (lo, hi of K blocks), in registers:
    returns the tuple of AES_rk(block) ^ block (no round trip through memory)."""
    @intrinsic
    def mmo(typingctx, rk, t):
        if not (isinstance(rk, types.Array) and isinstance(t, types.UniTuple)
                and t.count == 2 * K and t.dtype == types.uint64):
            return None

        def codegen(context, builder, signature, args):
            rk_a = context.make_array(signature.args[0])(context, builder, args[0])
            outs = _mmo_rounds(builder, rk_a.data,
                               [builder.extract_value(args[1], k) for k in range(2 * K)])
            out = ir.Constant(context.get_value_type(signature.return_type), None)
            for j, w in enumerate(outs):
                for h in range(2):
                    out = builder.insert_value(out, builder.extract_element(w, ir.Constant(_I32, h)),
                                               2 * j + h)
            return out

        return t(rk, t), codegen

    return mmo


_RK = round_keys(PI.key)
_mmo8 = make_mmo(8)
_mmo4 = make_mmo(4)
_mmo8t = make_mmo_tuple(8)


@_jit
def _gen_dcf(rk, n, lmask, alpha, beta, roots, cw_seed, cw_tl, cw_tr, cw_v, cw_last):
    """DCF Gen (EUROCRYPT 2021 Fig. 1), level by level over the block (the correction-word
    arrays are level-major); per instance and level 8 AES blocks, in registers (a tuple of
    words): party 0's kept, lost, kept ^ D, lost ^ D, then party 1's."""
    B = alpha.shape[0]
    one = np.uint64(1)
    zero = np.uint64(0)
    clear = np.uint64(0xFFFFFFFFFFFFFFFE)
    D = np.uint64(1 << 63)
    W = np.empty((B, 4), dtype=np.uint64)       # lo0, hi0, lo1, hi1 (t in the low bit of lo)
    va = np.zeros(B, dtype=np.uint64)
    for b in range(B):
        W[b, 0], W[b, 1] = roots[0, b, 0], roots[0, b, 1]
        W[b, 2], W[b, 3] = roots[1, b, 0] | one, roots[1, b, 1]
    for i in range(n):
        sh = np.uint64(n - 1 - i)
        for b in range(B):
            lo0, hi0, lo1, hi1 = W[b, 0], W[b, 1], W[b, 2], W[b, 3]
            m0, m1 = zero - (lo0 & one), zero - (lo1 & one)
            a = (alpha[b] >> sh) & one
            u0, u1 = lo0 ^ a, lo1 ^ a
            o = _mmo8t(rk, (u0, hi0, u0 ^ one, hi0, u0, hi0 ^ D, u0 ^ one, hi0 ^ D,
                            u1, hi1, u1 ^ one, hi1, u1, hi1 ^ D, u1 ^ one, hi1 ^ D))
            csl = o[2] ^ o[10]
            csh = o[3] ^ o[11]
            tl = csl & one
            tk = ((o[0] ^ o[8]) & one) ^ one
            csl &= clear
            cw_seed[i, b, 0] = csl
            cw_seed[i, b, 1] = csh
            sel = (tl ^ tk) & a
            cw_tl[i, b] = np.uint8(tk ^ sel)
            cw_tr[i, b] = np.uint8(tl ^ sel)
            x = o[14] - o[6] - va[b] + ((zero - a) & beta[b])
            va[b] += o[4] - o[12] + x
            cw_v[i, b] = ((x ^ m1) - m1) & lmask
            tk |= csl
            W[b, 0], W[b, 1] = o[0] ^ (m0 & tk), o[1] ^ (m0 & csh)
            W[b, 2], W[b, 3] = o[8] ^ (m1 & tk), o[9] ^ (m1 & csh)
    for b in range(B):
        m1 = zero - (W[b, 2] & one)
        x = W[b, 3] - W[b, 1] - va[b]
        cw_last[b] = ((x ^ m1) - m1) & lmask


@_jit
def _gen_dpf(rk, n, lmask, xor, alpha, beta, roots, cw_seed, cw_tl, cw_tr, cw_last):
    """DPF Gen (CCS 2016 Fig. 1) per instance; rows of S: party 0's kept, lost, party 1's."""
    B = alpha.shape[0]
    S = np.empty((4, 2), dtype=np.uint64)
    one = np.uint64(1)
    zero = np.uint64(0)
    clear = np.uint64(0xFFFFFFFFFFFFFFFE)
    for b in range(B):
        lo0, hi0 = roots[0, b, 0], roots[0, b, 1]
        lo1, hi1 = roots[1, b, 0] | one, roots[1, b, 1]
        m0, m1 = zero, zero - one
        al = alpha[b]
        for i in range(n):
            a = (al >> np.uint64(n - 1 - i)) & one
            u0, u1 = lo0 ^ a, lo1 ^ a
            S[0, 0], S[0, 1], S[1, 0], S[1, 1] = u0, hi0, u0 ^ one, hi0
            S[2, 0], S[2, 1], S[3, 0], S[3, 1] = u1, hi1, u1 ^ one, hi1
            _mmo4(rk, S)
            csl = S[1, 0] ^ S[3, 0]
            csh = S[1, 1] ^ S[3, 1]
            tl = csl & one
            tk = ((S[0, 0] ^ S[2, 0]) & one) ^ one
            csl &= clear
            cw_seed[i, b, 0] = csl
            cw_seed[i, b, 1] = csh
            sel = (tl ^ tk) & a
            cw_tl[i, b] = np.uint8(tk ^ sel)
            cw_tr[i, b] = np.uint8(tl ^ sel)
            tk |= csl
            lo0, hi0 = S[0, 0] ^ (m0 & tk), S[0, 1] ^ (m0 & csh)
            lo1, hi1 = S[2, 0] ^ (m1 & tk), S[2, 1] ^ (m1 & csh)
            m0, m1 = zero - (lo0 & one), zero - (lo1 & one)
        if xor:
            cw_last[b] = (beta[b] ^ hi0 ^ hi1) & lmask
        else:
            x = beta[b] - hi0 + hi1
            cw_last[b] = ((x ^ m1) - m1) & lmask


def gen_block(n, l, mode, alpha, beta, roots, cw_seed, cw_tl, cw_tr, cw_v):
    """Same contract as :func:`fss._tree.gen_block`."""
    B = alpha.shape[0]
    lmask = _U64((1 << l) - 1)
    alpha = np.ascontiguousarray(alpha)
    beta = np.ascontiguousarray(beta)
    last = np.empty(B, dtype=_U64)
    if mode == "dcf":
        _gen_dcf(_RK, n, lmask, alpha, beta, roots, cw_seed, cw_tl, cw_tr, cw_v, last)
    else:
        _gen_dpf(_RK, n, lmask, mode == "xor", alpha, beta, roots, cw_seed, cw_tl, cw_tr, last)
    return last


@_jit
def _eval_dcf(rk, n, B, cw_seed, cw_tl, cw_tr, cw_v, x, W):
    """DCF Eval walk, level by level over the block (the key arrays are level-major), 4 points
    (8 AES blocks: child and value word each) at a time. x (m, Bp) and W (m, Bp, 3): row r
    holds the points of the B keys, padded to Bp (a multiple of 8; pad lanes repeat key
    B-1 and are ignored); W[r, p] = (lo, hi, v): the node word (t in the low bit of lo) and
    the value sum, the root's on entry, the final ones on exit."""
    m, Bp = x.shape
    S = np.empty((8, 2), dtype=np.uint64)
    one = np.uint64(1)
    zero = np.uint64(0)
    D = np.uint64(1 << 63)
    for i in range(n):
        sh = np.uint64(n - 1 - i)
        for r in range(m):
            for b0 in range(0, Bp, 4):
                for j in range(4):
                    p = b0 + j
                    u = W[r, p, 0] ^ ((x[r, p] >> sh) & one)
                    S[2 * j, 0] = u
                    S[2 * j, 1] = W[r, p, 1]
                    S[2 * j + 1, 0] = u
                    S[2 * j + 1, 1] = W[r, p, 1] ^ D
                _mmo8(rk, S)
                for j in range(4):
                    p = b0 + j
                    b = min(p, B - 1)
                    mk = zero - (W[r, p, 0] & one)
                    W[r, p, 2] += S[2 * j + 1, 0] + (cw_v[i, b] & mk)
                    tl = np.uint64(cw_tl[i, b])
                    t = (tl ^ ((tl ^ np.uint64(cw_tr[i, b])) & (x[r, p] >> sh))) & one
                    W[r, p, 0] = S[2 * j, 0] ^ ((cw_seed[i, b, 0] | t) & mk)
                    W[r, p, 1] = S[2 * j, 1] ^ (cw_seed[i, b, 1] & mk)


@_jit
def _eval_dpf(rk, n, B, cw_seed, cw_tl, cw_tr, x, W):
    """DPF Eval walk as :func:`_eval_dcf`, 8 points (one child block each) at a time."""
    m, Bp = x.shape
    S = np.empty((8, 2), dtype=np.uint64)
    one = np.uint64(1)
    zero = np.uint64(0)
    for i in range(n):
        sh = np.uint64(n - 1 - i)
        for r in range(m):
            for b0 in range(0, Bp, 8):
                for j in range(8):
                    p = b0 + j
                    S[j, 0] = W[r, p, 0] ^ ((x[r, p] >> sh) & one)
                    S[j, 1] = W[r, p, 1]
                _mmo8(rk, S)
                for j in range(8):
                    p = b0 + j
                    b = min(p, B - 1)
                    mk = zero - (W[r, p, 0] & one)
                    tl = np.uint64(cw_tl[i, b])
                    t = (tl ^ ((tl ^ np.uint64(cw_tr[i, b])) & (x[r, p] >> sh))) & one
                    W[r, p, 0] = S[j, 0] ^ ((cw_seed[i, b, 0] | t) & mk)
                    W[r, p, 1] = S[j, 1] ^ (cw_seed[i, b, 1] & mk)


@_jit
def _eval_all(rk, n, lmask, party, mode, seed, cw_seed, cw_tl, cw_tr, cw_v, cw_last, x):
    """Eval of x (m, B) on B keys, all in compiled code (mode 0 DCF, 1 arith DPF, 2 XOR DPF):
    lanes padded to whole groups, the walk, then the output word of each point."""
    m, B = x.shape
    Bp = ((B + 7) // 8) * 8
    xr = np.empty((m, Bp), dtype=np.uint64)
    W = np.empty((m, Bp, 3), dtype=np.uint64)
    pb = np.uint64(party)
    for r in range(m):
        for p in range(Bp):
            b = min(p, B - 1)                   # pad lanes repeat key B-1, ignored
            xr[r, p] = x[r, b]
            W[r, p, 0] = seed[b, 0] | pb
            W[r, p, 1] = seed[b, 1]
            W[r, p, 2] = np.uint64(0)
    if mode == 0:
        _eval_dcf(rk, n, B, cw_seed, cw_tl, cw_tr, cw_v, xr, W)
    else:
        _eval_dpf(rk, n, B, cw_seed, cw_tl, cw_tr, xr, W)
    out = np.empty((m, B), dtype=np.uint64)
    zero = np.uint64(0)
    for r in range(m):
        for b in range(B):
            last = cw_last[b] & (zero - (W[r, b, 0] & np.uint64(1)))
            if mode == 2:
                y = W[r, b, 1] ^ last
            else:
                y = W[r, b, 2] + W[r, b, 1] + last       # W[., ., 2] stays 0 for DPF
                if party:
                    y = zero - y
            out[r, b] = y & lmask
    return out


_MODES = {"dcf": 0, "arith": 1, "xor": 2}


def eval_block(n, l, mode, party, seed, cw_seed, cw_tl, cw_tr, cw_v, cw_last, x):
    """Same contract as :func:`fss._tree.eval_block` (one compiled call)."""
    cv = cw_v if mode == "dcf" else _NO_VALUES[:n]
    return _eval_all(_RK, n, _U64((1 << l) - 1), party, _MODES[mode], seed, cw_seed, cw_tl,
                     cw_tr, cv, cw_last, x)


_NO_VALUES = np.zeros((64, 1), dtype=_U64)
