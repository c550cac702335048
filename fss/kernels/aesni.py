"""Gen/Eval of DPF and DCF as one compiled pass per block, AES in registers (the "aesni" backend).

:func:`make_mmo` (array form) and :func:`make_mmo_tuple` (register form) are
numba intrinsics for ``pi(b) ^ b`` on K blocks (the MMO step of :mod:`fss.prg`,
``pi`` AES-128 under the expanded key ``rk``, :func:`fss.prg.round_keys`)
on the CPU's AES instructions, :data:`WIDTH` blocks per instruction (VAES on
512-bit registers where the CPU has it). The intrinsics live in this module so
that numba's cache, keyed on this file, is rebuilt whenever they change.

DCF Gen and Eval work on 8 instances (or points) at once, one per 64-bit lane
of 512-bit vectors (:func:`make_gen_step`, :func:`make_eval_step`): per level
Gen has 64 AES blocks in flight, Eval 16, the correction-word arithmetic runs
on the 8 lanes together, and a group's correction words (level-major arrays)
are one contiguous load or store. Measured (n = 32, one core, CPU time, share
of pycryptodome's ECB bound) on one cache block: Gen 1.4 -> 2.4, Eval 0.9 ->
2.1, against one instance (8 blocks, scalar arithmetic) and 4 points per step;
two instances per step without lanes were slower. Prefetching the correction
words 2 KB ahead (they stream from memory) took 2^20 keys from 1.50 to 1.68
(Eval) and 1.58 to 1.67 (Gen). A last partial group is padded with copies of
the last instance. DPF keeps the scalar walk. Same PRG and arithmetic as
:mod:`fss.kernels.reference`, so the outputs are bit-identical (tested).
Arrays travel in tuples (a row's node words, a key's correction words), as in
:class:`fss.keys.TreeArrays`. Only imported where :data:`fss.kernels._host.AESNI`
holds. Security: that of the constructions; the kernels are deterministic
functions of their inputs.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic

from ..keys import TreeArrays, TreeParams
from ..prg import PI, round_keys
from ._host import inner_contiguous as _inner
from ._host import jit, vector_blocks

_U64 = np.uint64
_I32 = ir.IntType(32)
_I64 = ir.IntType(64)
#: blocks per AES instruction: 4 (VAES on 512-bit registers), 2 (VAES, 256-bit) or 1 (AES-NI)
WIDTH = vector_blocks()
_V8 = ir.VectorType(_I64, 8)        # 4 blocks (lo, hi, lo, hi, ...): one 512-bit register
#: AES-width vectors that go through the rounds together when W < 4: 16 registers hold 8
#: states plus round keys (Gen's 64 blocks at W = 2 are 32 states: all at once they spilled;
#: measured, DCF Gen 2^17 keys, 2-core AMD EPYC with 256-bit VAES: 1.1-1.35 M/s -> 1.65 M/s;
#: 8 to 14 within noise). With 512-bit registers (32 of them) every state goes at once.
GROUP = 8


def _shuffle(builder, a, b, lanes):
    return builder.shuffle_vector(a, b, ir.Constant(ir.VectorType(_I32, len(lanes)), list(lanes)))


def _mmo_vectors(builder, rk_ptr, vecs, W=WIDTH):
    """IR for AES_rk(b) ^ b on the blocks of the ``<8 x i64>`` values ``vecs`` (4 blocks each).

    W blocks go to one AES instruction (the vectors are split for W < 4) and all
    blocks through each round together, so the AES units stay busy (measured in
    numba, 16 blocks in flight, relative to pycryptodome's ECB: 1.1x with W = 1,
    2.2x with W = 2, 2.6x with W = 4); for W < 4, in groups of :data:`GROUP`
    vectors, so the states stay in registers.
    """
    vt = ir.VectorType(_I64, 2 * W)
    suffix = {1: "", 2: ".256", 4: ".512"}[W]
    fnty = ir.FunctionType(vt, [vt, vt])
    enc = cgutils.get_or_insert_function(builder.module, fnty, "llvm.x86.aesni.aesenc" + suffix)
    last = cgutils.get_or_insert_function(builder.module, fnty,
                                          "llvm.x86.aesni.aesenclast" + suffix)
    kp = builder.bitcast(rk_ptr, ir.VectorType(_I64, 2).as_pointer())
    ins = [v if W == 4 else _shuffle(builder, v, v, range(j, j + 2 * W))
           for v in vecs for j in range(0, 8, 2 * W)]
    keys = []
    for r in range(11):
        kr = builder.load(builder.gep(kp, [ir.Constant(_I32, r)]), align=8)
        if W > 1:
            kr = _shuffle(builder, kr, kr, [j % 2 for j in range(2 * W)])
        keys.append(kr)
    out = []
    G = len(ins) if W == 4 else GROUP
    for g in range(0, len(ins), G):
        st = ins[g:g + G]
        for r in range(11):
            st = [builder.xor(v, keys[r]) if r == 0 else
                  builder.call(enc if r < 10 else last, [v, keys[r]]) for v in st]
        out += [builder.xor(v, u) for v, u in zip(st, ins[g:g + G])]
    while out[0].type.count < 8:                  # join the pieces back into <8 x i64>
        n = out[0].type.count
        out = [_shuffle(builder, out[j], out[j + 1], range(2 * n)) for j in range(0, len(out), 2)]
    return out


def _mmo_rounds(builder, rk_ptr, words, W=WIDTH):
    """IR for AES_rk(b) ^ b on K blocks (K a multiple of 4) given as 2K 64-bit IR values
    (lo, hi): 2K values out (:func:`_mmo_vectors`)."""
    vecs = []
    for j in range(0, len(words), 8):
        v = ir.Constant(_V8, None)
        for h in range(8):
            v = builder.insert_element(v, words[j + h], ir.Constant(_I32, h))
        vecs.append(v)
    return [builder.extract_element(v, ir.Constant(_I32, h))
            for v in _mmo_vectors(builder, rk_ptr, vecs, W) for h in range(8)]


def make_mmo(K: int, W: int = WIDTH) -> Callable[..., Any]:
    """The intrinsic ``mmo(rk, S)``: S[j] <- AES_rk(S[j]) ^ S[j] for the K rows of S, in place
    (K a multiple of 4, W blocks per AES instruction)."""
    assert K % 4 == 0
    @intrinsic
    def mmo(typingctx: Any, rk: Any, S: Any) -> Any:
        if not (isinstance(rk, types.Array) and isinstance(S, types.Array)):
            return None

        def codegen(context: Any, builder: Any, signature: Any, args: Any) -> Any:
            rk_a = context.make_array(signature.args[0])(context, builder, args[0])
            s_a = context.make_array(signature.args[1])(context, builder, args[1])
            # S is read and written as 64-bit words: the kernels write it word by word,
            # and a 128-bit load of two fresh 64-bit stores would stall store forwarding
            wp = builder.bitcast(s_a.data, _I64.as_pointer())
            words = [builder.gep(wp, [ir.Constant(_I32, k)]) for k in range(2 * K)]
            outs = _mmo_rounds(builder, rk_a.data, [builder.load(w, align=8) for w in words], W)
            for w, out in zip(words, outs):
                builder.store(out, w, align=8)
            return context.get_dummy_value()

        return types.void(rk, S), codegen

    return mmo


def make_mmo_tuple(K: int, W: int = WIDTH) -> Callable[..., Any]:
    """The intrinsic ``mmo(rk, t)`` on a tuple of 2K words (lo, hi of K blocks), in registers:
    returns the tuple of AES_rk(block) ^ block (no round trip through memory)."""
    assert K % 4 == 0
    @intrinsic
    def mmo(typingctx: Any, rk: Any, t: Any) -> Any:
        if not (isinstance(rk, types.Array) and isinstance(t, types.UniTuple)
                and t.count == 2 * K and t.dtype == types.uint64):
            return None

        def codegen(context: Any, builder: Any, signature: Any, args: Any) -> Any:
            rk_a = context.make_array(signature.args[0])(context, builder, args[0])
            outs = _mmo_rounds(builder, rk_a.data,
                               [builder.extract_value(args[1], k) for k in range(2 * K)], W)
            out = ir.Constant(context.get_value_type(signature.return_type), None)
            for k, w in enumerate(outs):
                out = builder.insert_value(out, w, k)
            return out

        return t(rk, t), codegen

    return mmo


def _prefetch(builder, ptr, ahead, write=0):
    """IR: prefetch the line ``ahead`` bytes after ``ptr`` (for reading, or writing)."""
    i8p = ir.IntType(8).as_pointer()
    fn = cgutils.get_or_insert_function(
        builder.module, ir.FunctionType(ir.VoidType(), [i8p] + [_I32] * 3), "llvm.prefetch.p0")
    addr = builder.inttoptr(builder.add(builder.ptrtoint(ptr, _I64), ir.Constant(_I64, ahead)), i8p)
    builder.call(fn, [addr] + [ir.Constant(_I32, c) for c in (write, 3, 1)])


def _flatten(builder, sig, args):
    """An intrinsic's argument types and IR values with every tuple argument spread out in
    place (a tuple of arrays arrives as one LLVM aggregate)."""
    ty, vals = [], []
    for t, a in zip(sig.args, args):
        if isinstance(t, (types.UniTuple, types.Tuple)):
            elems = [t.dtype] * t.count if isinstance(t, types.UniTuple) else list(t.types)
            ty += elems
            vals += cgutils.unpack_tuple(builder, a, len(elems))
        else:
            ty.append(t)
            vals.append(a)
    return ty, vals


def _accessors(context, builder, ty, args):
    """(the array structs of an intrinsic's array arguments, ``ptr(k, inds, vt)``: a typed
    pointer to element ``inds`` of argument k), on the arguments :func:`_flatten` spreads."""
    ary = [context.make_array(t)(context, builder, a) if isinstance(t, types.Array) else None
           for t, a in zip(ty, args)]

    def ptr(k: int, inds: list, vt: Any = _V8) -> Any:
        p = cgutils.get_item_pointer(context, builder, ty[k], ary[k], inds)
        return builder.bitcast(p, vt.as_pointer())

    return ary, ptr


def make_eval_step(W: int = WIDTH) -> Callable[..., Any]:
    """The intrinsic ``step(rk, i, sh, b, row, cw, kb)``: level i of the DCF Eval walk
    (``sh = n - 1 - i``) for the 8 points b..b+7 of one row, point b+j on key kb+j.
    ``row`` = (lo, hi, v, x): node words, value sums and inputs, 1-d arrays of the row,
    updated in place; ``cw`` = (cw_seed, cw_t_left, cw_t_right, cw_value). In 512-bit
    registers, 8 lanes at once: the 16 AES blocks (8 children, 8 value words), then the
    arithmetic of :func:`fss.kernels.passes._eval_level`. Needs the key arrays' inner axes
    contiguous (cw_seed[i, b:b+8] is 16 words)."""
    @intrinsic
    def step(typingctx: Any, rk: Any, i: Any, sh: Any, b: Any, row: Any, cw: Any,
             kb: Any) -> Any:
        def codegen(context: Any, builder: Any, sig: Any, args: Any) -> Any:
            # flat: rk 0, i 1, sh 2, b 3, lo 4, hi 5, v 6, x 7, cw_seed 8, t_L 9, t_R 10,
            # cw_value 11, kb 12
            ty, args = _flatten(builder, sig, args)
            ary, ptr = _accessors(context, builder, ty, args)

            def load(k: int, inds: list, vt: Any = _V8) -> Any:
                return builder.load(ptr(k, inds, vt), align=1)

            def splat(c: int) -> Any:
                return ir.Constant(_V8, [c] * 8)

            i_, b_, kb_ = args[1], args[3], args[12]
            kb4 = builder.add(kb_, ir.Constant(kb_.type, 4))
            row = [load(k, [b_]) for k in (4, 5, 6, 7)]                 # lo, hi, v, x
            lo, hi, v, x = row
            sh = builder.insert_element(ir.Constant(_V8, None), args[2], ir.Constant(_I32, 0))
            sh = _shuffle(builder, sh, sh, [0] * 8)
            xs = builder.lshr(x, sh)
            u = builder.xor(lo, builder.and_(xs, splat(1)))
            hd = builder.xor(hi, splat(1 << 63))
            blocks = [_shuffle(builder, u, h, [q + 8 * z for q in range(k, k + 4) for z in (0, 1)])
                      for h in (hi, hd) for k in (0, 4)]
            c0, c1, d0, d1 = _mmo_vectors(builder, ary[0].data, blocks, W)
            even, odd = range(0, 16, 2), range(1, 16, 2)
            mk = builder.sub(splat(0), builder.and_(lo, splat(1)))
            val = _shuffle(builder, d0, d1, even)
            v = builder.add(v, builder.add(val, builder.and_(load(11, [i_, kb_]), mk)))
            v8 = ir.VectorType(ir.IntType(8), 8)
            tl, tr = (builder.zext(load(k, [i_, kb_], v8), _V8) for k in (9, 10))
            t = builder.and_(builder.xor(tl, builder.and_(builder.xor(tl, tr), xs)), splat(1))
            zero = ir.Constant(i_.type, 0)
            _prefetch(builder, ptr(8, [i_, kb_, zero]), 2048)
            _prefetch(builder, ptr(11, [i_, kb_]), 1024)
            s0, s1 = load(8, [i_, kb_, zero]), load(8, [i_, kb4, zero])
            lo = builder.xor(_shuffle(builder, c0, c1, even),
                             builder.and_(builder.or_(_shuffle(builder, s0, s1, even), t), mk))
            hi = builder.xor(_shuffle(builder, c0, c1, odd),
                             builder.and_(_shuffle(builder, s0, s1, odd), mk))
            for k, val in ((4, lo), (5, hi), (6, v)):
                builder.store(val, ptr(k, [b_]), align=1)
            return context.get_dummy_value()

        return types.void(rk, i, sh, b, row, cw, kb), codegen

    return step


def _gen_lanes(builder, rk_ptr, W, st, a, beta, lmask):
    """IR of one level of DCF Gen (EUROCRYPT 2021 Fig. 1; the scalar form, same names, is
    :func:`fss.kernels.passes._gen_level`) on 8 instances in ``<8 x i64>`` lanes:
    ``st`` = (lo0, hi0, lo1, hi1, v_alpha), ``a`` alpha's bit. 64 AES blocks (per party kept,
    lost, kept ^ D, lost ^ D). Returns (cs_lo, cs_hi, t_L, t_R, v_cw, new state)."""
    def splat(c: int) -> Any:
        return ir.Constant(_V8, [c] * 8)

    lo0, hi0, lo1, hi1, va = st
    one, zero = splat(1), splat(0)
    blocks = []
    for lo, hi in ((lo0, hi0), (lo1, hi1)):
        u = builder.xor(lo, a)
        for d in (0, 1 << 63):
            h = builder.xor(hi, splat(d)) if d else hi
            for w in (u, builder.xor(u, one)):                  # kept, lost
                blocks += [_shuffle(builder, w, h, [q + 8 * z for q in range(k, k + 4)
                                                    for z in (0, 1)]) for k in (0, 4)]
    o = _mmo_vectors(builder, rk_ptr, blocks, W)
    even, odd = range(0, 16, 2), range(1, 16, 2)
    # o: party p at 8 p; kept 0-1, lost 2-3, kept ^ D 4-5, lost ^ D 6-7 (lanes 0-3, 4-7)
    lanes = [[_shuffle(builder, o[k], o[k + 1], h) for h in (even, odd)] for k in range(0, 16, 2)]
    (k0l, k0h), (l0l, l0h), (v0k, _), (v0l, _), (k1l, k1h), (l1l, l1h), (v1k, _), (v1l, _) = lanes
    csl, csh = builder.xor(l0l, l1l), builder.xor(l0h, l1h)
    tl = builder.and_(csl, one)
    tk = builder.xor(builder.and_(builder.xor(k0l, k1l), one), one)
    csl = builder.and_(csl, splat(0xFFFFFFFFFFFFFFFE))
    sel = builder.and_(builder.xor(tl, tk), a)
    m0 = builder.sub(zero, builder.and_(lo0, one))
    m1 = builder.sub(zero, builder.and_(lo1, one))
    x = builder.add(builder.sub(builder.sub(v1l, v0l), va),
                    builder.and_(builder.sub(zero, a), beta))
    va = builder.add(va, builder.add(builder.sub(v0k, v1k), x))
    vcw = builder.and_(builder.sub(builder.xor(x, m1), m1), lmask)
    tk2 = builder.or_(tk, csl)
    new = (builder.xor(k0l, builder.and_(m0, tk2)), builder.xor(k0h, builder.and_(m0, csh)),
           builder.xor(k1l, builder.and_(m1, tk2)), builder.xor(k1h, builder.and_(m1, csh)), va)
    return csl, csh, builder.xor(tk, sel), builder.xor(tl, sel), vcw, new


def make_gen_step(W: int = WIDTH) -> Callable[..., Any]:
    """The intrinsic ``step(rk, i, sh, b, st, ab, lmask, cw, kb)``: level i of DCF Gen
    (``sh = n - 1 - i``) for the 8 instances b..b+7 (:func:`_gen_lanes`), state ``st``
    (5, B) updated in place, ``ab`` = (alpha, beta), correction words of level i written
    into ``cw`` = (cw_seed, cw_t_left, cw_t_right, cw_value) at kb..kb+7. Needs the inner
    axes of the correction-word arrays contiguous."""
    @intrinsic
    def step(typingctx: Any, rk: Any, i: Any, sh: Any, b: Any, st: Any, ab: Any, lmask: Any,
             cw: Any, kb: Any) -> Any:
        def codegen(context: Any, builder: Any, sig: Any, args: Any) -> Any:
            # flat: rk 0, i 1, sh 2, b 3, st 4, alpha 5, beta 6, lmask 7, cw_seed 8, t_L 9,
            # t_R 10, cw_value 11, kb 12
            ty, args = _flatten(builder, sig, args)
            ary, ptr = _accessors(context, builder, ty, args)

            def splat(v: Any) -> Any:
                v = builder.insert_element(ir.Constant(_V8, None), v, ir.Constant(_I32, 0))
                return _shuffle(builder, v, v, [0] * 8)

            i_, b_ = args[1], args[3]
            rows = [ir.Constant(b_.type, k) for k in range(5)]
            st = [builder.load(ptr(4, [r, b_]), align=1) for r in rows]
            al, bt = (builder.load(ptr(k, [b_]), align=1) for k in (5, 6))
            a = builder.and_(builder.lshr(al, splat(args[2])), ir.Constant(_V8, [1] * 8))
            csl, csh, tl, tr, vcw, new = _gen_lanes(builder, ary[0].data, W, st, a, bt,
                                                   splat(args[7]))
            for r, v in zip(rows, new):
                builder.store(v, ptr(4, [r, b_]), align=1)
            kb_ = args[12]
            zero = ir.Constant(kb_.type, 0)
            kb4 = builder.add(kb_, ir.Constant(kb_.type, 4))
            _prefetch(builder, ptr(8, [i_, kb_, zero]), 2048, 1)
            _prefetch(builder, ptr(11, [i_, kb_]), 1024, 1)
            for k, lanes in ((0, range(4)), (1, range(4, 8))):
                w = _shuffle(builder, csl, csh, [q + 8 * z for q in lanes for z in (0, 1)])
                builder.store(w, ptr(8, [i_, (kb_, kb4)[k], zero]), align=1)
            v8 = ir.VectorType(ir.IntType(8), 8)
            for k, v in ((9, tl), (10, tr)):
                builder.store(builder.trunc(v, v8), ptr(k, [i_, kb_], v8), align=1)
            builder.store(vcw, ptr(11, [i_, kb_]), align=1)
            return context.get_dummy_value()

        return types.void(rk, i, sh, b, st, ab, lmask, cw, kb), codegen

    return step


_RK = round_keys(PI.key)
_mmo8 = make_mmo(8)
_mmo4 = make_mmo(4, 1)       # DPF Gen: 128-bit form measured 10% faster than one 512-bit
_mmo8t = make_mmo_tuple(8)          # register form (tests check it against pycryptodome)
_eval8 = make_eval_step()
_gen8 = make_gen_step()


@jit
def _gen_dcf(rk, n, lmask, ab, roots, cw, cw_last):
    """DCF Gen (EUROCRYPT 2021 Fig. 1), level by level over the block (the correction-word
    arrays ``cw`` = (cw_seed, cw_t_left, cw_t_right, cw_value) are level-major), 8 instances
    (64 AES blocks) per :func:`make_gen_step`; ``ab`` = (alpha, beta). A last partial group
    is padded with copies of instance B-1, its correction words go through small arrays and
    only the real instances' are copied out."""
    alpha, beta = ab
    cw_seed, cw_tl, cw_tr, cw_v = cw
    B = alpha.shape[0]
    B8 = B - B % 8
    Bp = B8 + 8 if B8 < B else B
    one = np.uint64(1)
    zero = np.uint64(0)
    S = np.empty((5, Bp), dtype=np.uint64)      # lo0, hi0, lo1, hi1 (t in the low bit of lo), V
    al, bt = np.empty(Bp, dtype=np.uint64), np.empty(Bp, dtype=np.uint64)
    for p in range(Bp):
        b = min(p, B - 1)
        S[0, p], S[1, p] = roots[0, b, 0], roots[0, b, 1]
        S[2, p], S[3, p] = roots[1, b, 0] | one, roots[1, b, 1]
        S[4, p], al[p], bt[p] = zero, alpha[b], beta[b]
    ts = np.empty((n, 8, 2), dtype=np.uint64)   # the padded group's correction words
    ttl, ttr = np.empty((n, 8), dtype=np.uint8), np.empty((n, 8), dtype=np.uint8)
    tv = np.empty((n, 8), dtype=np.uint64)
    for i in range(n):
        sh = np.uint64(n - 1 - i)
        for b in range(0, B8, 8):
            _gen8(rk, i, sh, b, S, (al, bt), lmask, cw, b)
        if B8 < B:
            _gen8(rk, i, sh, B8, S, (al, bt), lmask, (ts, ttl, ttr, tv), 0)
            for j in range(B - B8):
                cw_seed[i, B8 + j, 0], cw_seed[i, B8 + j, 1] = ts[i, j, 0], ts[i, j, 1]
                cw_tl[i, B8 + j], cw_tr[i, B8 + j], cw_v[i, B8 + j] = ttl[i, j], ttr[i, j], tv[i, j]
    for b in range(B):
        m1 = zero - (S[2, b] & one)
        x = S[3, b] - S[1, b] - S[4, b]
        cw_last[b] = ((x ^ m1) - m1) & lmask


@jit
def _gen_dpf(rk, n, lmask, xor, ab, roots, cw, cw_last):
    """DPF Gen (CCS 2016 Fig. 1) per instance; rows of S: party 0's kept, lost, party 1's;
    ``ab`` = (alpha, beta), ``cw`` = (cw_seed, cw_t_left, cw_t_right) written."""
    alpha, beta = ab
    cw_seed, cw_tl, cw_tr = cw
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


def gen_block(params: TreeParams, alpha: np.ndarray, beta: np.ndarray, out: TreeArrays) -> None:
    """Same contract as :func:`fss.kernels.reference.gen_block` (one compiled call)."""
    lmask = _U64((1 << params.out_bits) - 1)
    ab = (np.ascontiguousarray(alpha), np.ascontiguousarray(beta))
    if out.cw_value is not None:
        cw = (out.cw_seed, out.cw_t_left, out.cw_t_right, out.cw_value)
        for a in cw:
            assert _inner(a) is a, "correction-word arrays need contiguous inner axes"
        _gen_dcf(_RK, params.n_bits, lmask, ab, out.seed, cw, out.cw_last)
    else:
        _gen_dpf(_RK, params.n_bits, lmask, params.mode == "xor", ab, out.seed,
                 (out.cw_seed, out.cw_t_left, out.cw_t_right), out.cw_last)


@jit
def _eval_dcf(rk, n, B, cw, x, W):
    """DCF Eval walk, level by level over the block (the key arrays ``cw`` = (cw_seed,
    cw_t_left, cw_t_right, cw_value) are level-major), 8 points (16 AES blocks) per
    :func:`make_eval_step`. x (m, Bp) and W (3, m, Bp): row r holds the
    points of the B keys, padded to Bp (a multiple of 8; pad lanes repeat key B-1, whose
    correction words the last group reads from small padded copies, and are ignored);
    W[:, r, p] = (lo, hi, v), the node word (t in the low bit of lo) and the value sum, the
    root's on entry, the final ones on exit."""
    cw_seed, cw_tl, cw_tr, cw_v = cw
    m = x.shape[0]
    B8 = B - B % 8
    ts = np.empty((n, 8, 2), dtype=np.uint64)
    ttl, ttr = np.empty((n, 8), dtype=np.uint8), np.empty((n, 8), dtype=np.uint8)
    tv = np.empty((n, 8), dtype=np.uint64)
    for i in range(n if B8 < B else 0):
        for j in range(8):
            b = min(B8 + j, B - 1)
            ts[i, j, 0], ts[i, j, 1], tv[i, j] = cw_seed[i, b, 0], cw_seed[i, b, 1], cw_v[i, b]
            ttl[i, j], ttr[i, j] = cw_tl[i, b], cw_tr[i, b]
    for i in range(n):
        sh = np.uint64(n - 1 - i)
        for r in range(m):
            row = (W[0, r], W[1, r], W[2, r], x[r])
            for b0 in range(0, B8, 8):
                _eval8(rk, i, sh, b0, row, cw, b0)
            if B8 < B:
                _eval8(rk, i, sh, B8, row, (ts, ttl, ttr, tv), 0)


@jit
def _eval_dpf(rk, n, B, cw, x, W):
    """DPF Eval walk as :func:`_eval_dcf`, 8 points (one child block each) at a time."""
    cw_seed, cw_tl, cw_tr, _ = cw
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
                    S[j, 0] = W[0, r, p] ^ ((x[r, p] >> sh) & one)
                    S[j, 1] = W[1, r, p]
                _mmo8(rk, S)
                for j in range(8):
                    p = b0 + j
                    b = min(p, B - 1)
                    mk = zero - (W[0, r, p] & one)
                    tl = np.uint64(cw_tl[i, b])
                    t = (tl ^ ((tl ^ np.uint64(cw_tr[i, b])) & (x[r, p] >> sh))) & one
                    W[0, r, p] = S[j, 0] ^ ((cw_seed[i, b, 0] | t) & mk)
                    W[1, r, p] = S[j, 1] ^ (cw_seed[i, b, 1] & mk)


@jit
def _eval_all(rk, n, lmask, party, mode, key, x):
    """Eval of x (m, B) on B keys, all in compiled code (mode 0 DCF, 1 arith DPF, 2 XOR DPF):
    lanes padded to whole groups, the walk, then the output word of each point. ``key`` =
    (seed, cw_seed, cw_t_left, cw_t_right, cw_value, cw_last), as :class:`fss.keys.TreeArrays`."""
    seed, cw_seed, cw_tl, cw_tr, cw_v, cw_last = key
    cw = (cw_seed, cw_tl, cw_tr, cw_v)
    m, B = x.shape
    Bp = ((B + 7) // 8) * 8
    xr = np.empty((m, Bp), dtype=np.uint64)
    W = np.empty((3, m, Bp), dtype=np.uint64)
    pb = np.uint64(party)
    for r in range(m):
        for p in range(Bp):
            b = min(p, B - 1)                   # pad lanes repeat key B-1, ignored
            xr[r, p] = x[r, b]
            W[0, r, p] = seed[b, 0] | pb
            W[1, r, p] = seed[b, 1]
            W[2, r, p] = np.uint64(0)
    if mode == 0:
        _eval_dcf(rk, n, B, cw, xr, W)
    else:
        _eval_dpf(rk, n, B, cw, xr, W)
    out = np.empty((m, B), dtype=np.uint64)
    zero = np.uint64(0)
    for r in range(m):
        for b in range(B):
            last = cw_last[b] & (zero - (W[0, r, b] & np.uint64(1)))
            if mode == 2:
                y = W[1, r, b] ^ last
            else:
                y = W[2, r, b] + W[1, r, b] + last       # W[2] stays 0 for DPF
                if party:
                    y = zero - y
            out[r, b] = y & lmask
    return out


_MODES = {"dcf": 0, "arith": 1, "xor": 2}


def eval_block(params: TreeParams, party: int, key: TreeArrays, x: np.ndarray) -> np.ndarray:
    """Same contract as :func:`fss.kernels.reference.eval_block` (one compiled call)."""
    n = params.n_bits
    cv = _inner(key.cw_value) if key.cw_value is not None else _NO_VALUES[:n]
    arrays = (key.seed, _inner(key.cw_seed), _inner(key.cw_t_left), _inner(key.cw_t_right), cv,
              key.cw_last)
    return _eval_all(_RK, n, _U64((1 << params.out_bits) - 1), party, _MODES[params.mode],
                     arrays, x)


_NO_VALUES = np.zeros((64, 1), dtype=_U64)
