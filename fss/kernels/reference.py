"""The numpy reference kernels of DPF and DCF: Gen and Eval on one cache block, and the codec.

Unchecked: :mod:`fss.tree` validates. A node word carries the control bit
in the low bit of ``lo`` and the PRG is that of :mod:`fss.prg` (branch ``x``
expanded from ``u = w ^ x``; the value word from ``u ^ D``; all blocks of a
level in one AES call). Working arrays are preallocated per block and every
step writes into them (``out=``): fresh multi-MB temporaries per level cost
more page faults than the AES calls.

``params.mode`` is ``"dcf"`` (value words and V_CW per level, EUROCRYPT 2021
Fig. 1), ``"arith"`` or ``"xor"`` (DPF, CCS 2016 Fig. 1, output group Z_2^l
or XOR of l-bit strings).

Costs per instance and level (AES blocks): DCF Gen 8 (4 per party: kept and
lost child, kept and lost value word), DCF Eval 2; DPF Gen 4, DPF Eval 1.
One AES call per level per block in every case, about 25 numpy passes over
the block around it. Every other backend of :mod:`fss.kernels` must give
these keys and shares bit for bit (``tests/fss/test_kernels.py``).
Security: that of the constructions (:mod:`fss.dcf`, :mod:`fss.dpf`); the
kernels are deterministic functions of the root seeds they are given.
"""

from __future__ import annotations

import numpy as np

from ..keys import TreeArrays, TreeParams
from ..prg import DELTA_HI, LOW_BIT_CLEAR, PI

_U64 = np.uint64
_ONE = _U64(1)


def _mask(l: int) -> np.uint64:
    return _U64((1 << l) - 1)


def gen_block(params: TreeParams, alpha: np.ndarray, beta: np.ndarray, out: TreeArrays) -> None:
    """Gen for B instances: fills ``out``'s correction words and ``cw_last``.

    ``alpha``, ``beta``: uint64 (B,); ``out.seed``: uint64 (2, B, 2), both parties'
    root seeds (low bits clear). Both parties' nodes are processed in one array of
    2B words (party 0 first), one AES call per level.
    """
    n, l, mode = params.n_bits, params.out_bits, params.mode
    roots, cw_seed, cw_tl, cw_tr, cw_v, _ = out
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
        if cw_v is not None:
            _gen_values(l, i, a, beta, val, tm[B:], (v_alpha, X), cw_v)
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
        out.cw_last[:] = _signed_by(X, tm[B:]) & _mask(l)
    elif mode == "xor":
        out.cw_last[:] = (beta ^ lo_hi[:B] ^ lo_hi[B:]) & _mask(l)
    else:
        out.cw_last[:] = _signed_by(beta - lo_hi[:B] + lo_hi[B:], tm[B:]) & _mask(l)


def _signed_by(X: np.ndarray, m: np.ndarray) -> np.ndarray:
    """(-1)^t X mod 2^64 for the mask m = -t: (X ^ m) - m."""
    X ^= m
    X -= m
    return X


def _gen_values(l: int, i: int, a: np.ndarray, beta: np.ndarray, val: np.ndarray,
                t1m: np.ndarray, acc: tuple, cw_v: np.ndarray) -> None:
    """V_CW of level i and the running V_alpha (EUROCRYPT 2021 Fig. 1, lines 10-12);
    ``acc`` = (V_alpha, scratch), both (B,)."""
    v_alpha, X = acc
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


def eval_block(params: TreeParams, party: int, key: TreeArrays, x: np.ndarray) -> np.ndarray:
    """Eval at ``x`` (uint64 (m, B): m points per key) for the B keys ``key``; uint64 (m, B).

    Walks x's path: per level one AES call over the whole block (the child
    block, and the value block for DCF), feed-forward, correction where t = 1.
    """
    n, mode = params.n_bits, params.mode
    seed, cw_seed, cw_tl, cw_tr, cw_v, cw_last = key
    m, B = x.shape
    M = m * B
    xr = x.reshape(M)

    def rep(a: np.ndarray) -> np.ndarray:
        return a if m == 1 else np.broadcast_to(a[None], (m,) + a.shape).reshape((M,) + a.shape[1:])

    def rep2(a: np.ndarray) -> np.ndarray:          # (n, B) -> (n, M), points-major like x
        if m == 1:
            return a
        return np.broadcast_to(a[:, None], (a.shape[0], m, B)).reshape(a.shape[0], M)

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
    if cw_v is not None:
        delta = np.zeros((M, 2), dtype=_U64)
        delta[:, 1] = DELTA_HI
        v = np.zeros(M, dtype=_U64)
    for i in range(n):
        if cw_v is not None:
            np.bitwise_xor(IN, delta, out=INb[1])
        PI.encrypt(INb, OCb)
        if cw_v is not None:
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
    return finish_eval(params, party, IN[:, 1], rep(cw_last) & tm,
                       v if cw_v is not None else None).reshape(m, B)


def finish_eval(params: TreeParams, party: int, hi: np.ndarray, last: np.ndarray,
                v: np.ndarray | None) -> np.ndarray:
    """A party's output words from the last level: XOR shares, or signed additive shares.

    ``hi``: the high words of the leaf seeds; ``last``: the last correction
    word where t = 1 (else 0); ``v``: the DCF's running value (None for a DPF).
    """
    mode = params.mode
    if mode == "xor":
        y = hi ^ last
    else:
        y = (v + hi + last) if v is not None else (hi + last)
        if party:
            y = np.negative(y)
    return y & _mask(params.out_bits)


def expand_block(params: TreeParams, party: int, key: TreeArrays) -> np.ndarray:
    """Full-domain Eval of B DPF keys: the shares at every x in [0, 2^n), uint64 (B, 2^n).

    Expands the whole tree level by level, breadth first (one AES call per level
    for the block; both children of every node, 2^(n+1) blocks per key), cheaper
    than the n blocks per point of a walk over the whole domain (measured 3x to
    15x faster for n = 12 to 20 than the numpy and the compiled walks).
    """
    n = params.n_bits
    B = key.seed.shape[0]
    lo = key.seed[:, 0].reshape(B, 1) | _U64(party)          # words carry t in the low bit
    hi = key.seed[:, 1].reshape(B, 1).copy()
    for i in range(n):
        w = lo.shape[1]
        u = np.empty((B, w, 2, 2), dtype=_U64)                 # (key, node, child, word)
        u[:, :, 0, 0] = lo
        u[:, :, 1, 0] = lo ^ _ONE
        u[:, :, :, 1] = hi[:, :, None]
        out = PI.encrypt(u, np.empty_like(u))
        out ^= u                                                 # children, in order
        tm = (_U64(0) - (lo & _ONE))[:, :, None]                 # parent t, (B, w, 1)
        tcw = np.stack([key.cw_t_left[i], key.cw_t_right[i]], axis=-1).astype(_U64)  # (B, 2)
        corr_lo = (key.cw_seed[i, :, 0][:, None] | tcw)[:, None, :] & tm
        lo = (out[..., 0] ^ corr_lo).reshape(B, 2 * w)
        hi = (out[..., 1] ^ (key.cw_seed[i, :, 1][:, None, None] & tm)).reshape(B, 2 * w)
    tm = _U64(0) - (lo & _ONE)
    return finish_eval(params, party, hi, key.cw_last[:, None] & tm, None)


# -- codec: the packing of the wire format (fss._keyio) -----------------------------------------
def put_words(dst: np.ndarray, words: np.ndarray, lb: int) -> None:
    """The low ``lb`` bytes of each word of the flat little-endian ``words`` into ``dst``."""
    dst.reshape(-1, lb)[:] = words.view(np.uint8).reshape(-1, 8)[:, :lb]


def get_words(src: np.ndarray, count: int, lb: int, top_bits: int) -> tuple[np.ndarray, int]:
    """Words from ``count`` little-endian ``lb``-byte fields; -1 as the second result if a
    field's last byte has a bit at or above ``top_bits`` set, else ``count``."""
    full = np.zeros((count, 8), dtype=np.uint8)
    full[:, :lb] = src.reshape(count, lb)
    out = full.view("<u8").reshape(count).astype(_U64, copy=False)
    if top_bits and count and np.any(src.reshape(count, lb)[:, lb - 1] >> np.uint8(top_bits)):
        return out, -1
    return out, count


def pack_levels(t: np.ndarray, dst: np.ndarray) -> None:
    """Control bits ``t`` (n, B) uint8 0/1 into ``dst`` (ceil(n/8), B), little bit order."""
    dst[:] = np.packbits(t, axis=0, bitorder="little")


def unpack_levels(src: np.ndarray, n: int) -> tuple[np.ndarray, int]:
    """Inverse of :func:`pack_levels`; -1 as the second result if a padding bit is set."""
    B = src.shape[1]
    if n % 8 and B and np.any(src[-1] >> np.uint8(n % 8)):
        return np.empty((n, B), dtype=np.uint8), -1
    return np.unpackbits(src, axis=0, count=n, bitorder="little"), 0


def any_low_bit(seeds: np.ndarray) -> bool:
    """Whether a seed array (..., 2) has bit 0 of a low word set (not canonical)."""
    return bool(np.any(seeds[..., 0] & _ONE))
