"""Distributed comparison functions f(x) = beta * [x < alpha] over n-bit inputs, batched.

Construction: Boyle, Chandran, Gilboa, Gupta, Ishai, Kumar, Rathee,
"Function secret sharing for mixed-mode and fixed-point secure computation",
EUROCRYPT 2021, Figure 1 (Gen^<_n, Eval^<_n), with the fixed-key AES PRG of
:mod:`fss.prg`. Inputs are n-bit unsigned integers (1 <= n <= 64) read most
significant bit first; outputs are additive shares in Z_2^l (1 <= l <= 64):
``eval(p, 0, k0, x) + eval(p, 1, k1, x) = beta * [x < alpha] mod 2^l``.

Keys are a struct of arrays (:class:`DCFKey`), batched over instances, with
the level axis first so that evaluation reads one contiguous slice per level:

    seed        uint64 (B, 2)     the party's root seed (128 bits)
    cw_seed     uint64 (n, B, 2)  seed correction words s_CW
    cw_t_left   uint8  (n, B)     control-bit corrections t_CW^L
    cw_t_right  uint8  (n, B)     control-bit corrections t_CW^R
    cw_value    uint64 (n, B)     value corrections V_CW in Z_2^l
    cw_last     uint64 (B,)       final correction CW^(n+1) in Z_2^l

(B = prod(key.shape)). The two parties' keys share the correction-word arrays.

Key size (what the dealer sends, counted as offline communication; equal to
the bit-packed serialized payload of :func:`to_bytes` without its header):

    key_bits(n, l) = 128 + n * (128 + 2 + l) + l        per key and party

e.g. 5608 bits for n = 32, l = 40; 6798 bits for n = 39, l = 40 (the
less-than gate at l = 40); 6968 bits for n = l = 40.

PRG convention: a node's 128-bit word is its seed with the control bit t in
the low bit (seeds have that bit cleared), and the PRG of :mod:`fss.prg` is
applied to that whole word; one XOR with a correction word (s_CW with the
chosen t_CW in its low bit) corrects seed and control bit together. This is
the paper's construction with G(s || t) in place of G(s); on the two
parties' off-path nodes the words are equal, so they still cancel.

Cost: Gen does 6 AES blocks per level per instance (3 per party; the kept
and lost children are selected by per-instance tweaks, so no selection
work), Eval 2 AES blocks per level (only the branch of x is expanded).
Batching: one ``encrypt`` call per level per cache block of ``BLOCK``
(2^14) instances; the loop over blocks exists because a level's working set
for 2^20 instances (~100 MB) falls out of cache and runs 2x slower.
No communication here: the gates in :mod:`fss.gates` count the key transfer.

Security (EUROCRYPT 2021, Thm 3.2): each key alone is computationally
indistinguishable from a key for any other alpha, beta (its root seed is
uniform, and every correction word is masked by a PRG output the holder
cannot compute), assuming :mod:`fss.prg` is a PRG. Both keys together reveal
alpha and beta.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

import numpy as np

from . import _util
from ._util import check_key_arrays as _check_key_arrays
from .prg import LOW_BIT_CLEAR, TWEAK_VALUE, _hash_k, random_seeds

_U64 = np.uint64
_ONE = _U64(1)
_MAGIC = b"DCF1"
BLOCK = 1 << 14  # instances per cache block in gen/eval


@dataclass(frozen=True)
class DCFParams:
    """Parameters of a DCF family: input bits ``n_bits`` (1..64), output ring Z_2^``out_bits``."""

    n_bits: int
    out_bits: int = 64

    def __post_init__(self):
        _util.check_int(self.n_bits, "n_bits", 1, 64)
        _util.check_int(self.out_bits, "out_bits", 1, 64)

    @property
    def key_bits(self) -> int:
        """Bits of one key of one party: 128 + n (130 + l) + l."""
        return key_bits(self)


def key_bits(params: DCFParams) -> int:
    """Size in bits of one DCF key (one party, one instance): 128 + n (130 + l) + l."""
    _check_params(params)
    n, l = params.n_bits, params.out_bits
    return 128 + n * (128 + 2 + l) + l


@dataclass(frozen=True, eq=False)
class DCFKey:
    """One party's batch of DCF keys (struct of arrays, level axis first)."""

    party: int
    n_bits: int
    out_bits: int
    shape: tuple
    seed: np.ndarray
    cw_seed: np.ndarray
    cw_t_left: np.ndarray
    cw_t_right: np.ndarray
    cw_value: np.ndarray
    cw_last: np.ndarray

    def __post_init__(self):
        _check_key_arrays(self, with_value=True)

    @property
    def params(self) -> DCFParams:
        return DCFParams(self.n_bits, self.out_bits)

    @property
    def batch(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64))

    @property
    def nbits(self) -> int:
        """Total key bits of this batch (offline communication): batch * key_bits."""
        return self.batch * key_bits(self.params)

    def __eq__(self, other):
        if not isinstance(other, DCFKey):
            return NotImplemented
        return (self.party, self.n_bits, self.out_bits, tuple(self.shape)) == (
            other.party, other.n_bits, other.out_bits, tuple(other.shape)) and all(
            np.array_equal(getattr(self, f), getattr(other, f)) for f in _ARRAY_FIELDS)

    __hash__ = None


_ARRAY_FIELDS = ("seed", "cw_seed", "cw_t_left", "cw_t_right", "cw_value", "cw_last")


def _check_params(params) -> DCFParams:
    if not isinstance(params, DCFParams):
        raise TypeError(f"params must be a DCFParams, got {type(params).__name__}")
    return params


# -- generation --------------------------------------------------------------------------
def gen(params: DCFParams, alpha, beta, rng):
    """Keys (k0, k1) for f(x) = beta * [x < alpha], one instance per entry of ``alpha``.

    Parameters
    ----------
    params : DCFParams (n_bits, out_bits)
    alpha : integers in [0, 2^n) of any shape (the batch shape)
    beta : integers (any sign, reduced mod 2^l), scalar or broadcastable to alpha
    rng : mpc.rng.CSPRNG (or a seed: reproducible, insecure)

    Steps (EUROCRYPT 2021, Fig. 1), vectorized over the batch, one AES call
    per level for both parties: expand both seeds, keep the branch of alpha's
    bit, correct the lost branch's seeds to agree and its value so that the
    sum along the path accumulates beta exactly when the path leaves alpha's
    to the left (x_i < alpha_i).
    Cost: 6 n AES blocks per instance; 2 * 128 random bits per instance.
    """
    params = _check_params(params)
    n, l = params.n_bits, params.out_bits
    alpha = _util.domain_values(alpha, n, "alpha")
    beta = _util.ring_values(beta, l, "beta")
    try:
        beta = np.broadcast_to(beta, alpha.shape)
    except ValueError:
        raise ValueError(
            f"beta of shape {beta.shape} does not broadcast to alpha's shape {alpha.shape}"
        ) from None
    rng = _util.check_rng(rng)
    shape = alpha.shape
    B = alpha.size
    roots = random_seeds(rng, 2 * B).reshape(2, B, 2)
    arrays = _gen_core(n, l, alpha.reshape(B), np.ascontiguousarray(beta).reshape(B), roots)
    cw_seed, cw_tl, cw_tr, cw_v, cw_last = arrays
    k0 = DCFKey(0, n, l, tuple(shape), roots[0], cw_seed, cw_tl, cw_tr, cw_v, cw_last)
    k1 = DCFKey(1, n, l, tuple(shape), roots[1], cw_seed, cw_tl, cw_tr, cw_v, cw_last)
    return k0, k1




def _gen_core(n: int, l: int, alpha: np.ndarray, beta: np.ndarray, roots: np.ndarray,
              block: int | None = None):
    """Unchecked batched Gen^<: alpha, beta uint64 (B,), roots uint64 (2, B, 2).

    Cache blocking: instances are processed in blocks of ``block`` so that a
    level's working set stays in the L2 cache (2x faster than one pass over
    2^20 instances); each block does one AES call per level.
    """
    block = block or BLOCK
    B = alpha.shape[0]
    cw_seed = np.empty((n, B, 2), dtype=_U64)
    cw_tl = np.empty((n, B), dtype=np.uint8)
    cw_tr = np.empty((n, B), dtype=np.uint8)
    cw_v = np.empty((n, B), dtype=_U64)
    cw_last = np.empty(B, dtype=_U64)
    for c0 in range(0, B, block):
        c1 = min(B, c0 + block)
        cw_last[c0:c1] = _gen_block(n, l, alpha[c0:c1], beta[c0:c1], roots[:, c0:c1],
                                    cw_seed[:, c0:c1], cw_tl[:, c0:c1], cw_tr[:, c0:c1],
                                    cw_v[:, c0:c1])
    return cw_seed, cw_tl, cw_tr, cw_v, cw_last


def _gen_block(n, l, alpha, beta, roots, cw_seed, cw_tl, cw_tr, cw_v):
    """One cache block of Gen^<, in planar form.

    Seeds are carried as two word arrays (lo, hi) of length 2B (party 0's
    block, then party 1's), and the low bit of ``lo`` is the control bit t
    (the seed proper has it cleared), so one XOR with a correction word
    fixes seed and control bit together. Arithmetic is mod 2^64 (a ring
    homomorphism onto Z_2^l); stores are masked.
    """
    B = alpha.shape[0]
    msk = _util.mask(l)
    lo = np.ascontiguousarray(roots[:, :, 0]).reshape(2 * B)
    hi = np.ascontiguousarray(roots[:, :, 1]).reshape(2 * B)
    lo[B:] |= _ONE                                     # t_1 = 1 at the root
    buf = np.empty((3, 2 * B, 2), dtype=_U64)
    out = np.empty_like(buf)
    tmp = np.empty((2, B), dtype=_U64)
    a2 = np.empty(2 * B, dtype=_U64)
    na2 = np.empty(2 * B, dtype=_U64)
    v_alpha = np.zeros(B, dtype=_U64)
    for i in range(n):
        a = (alpha >> _U64(n - 1 - i)) & _ONE          # alpha's bit, (B,)
        am = _U64(0) - a                               # all-ones where alpha_i = 1
        a2[:B] = a
        a2[B:] = a
        np.bitwise_xor(a2, _ONE, out=na2)
        # per-seed tweaks: block 0 is the kept child (tweak alpha_i), block 1
        # the lost child (tweak 1 - alpha_i), block 2 the value words
        _hash_k(lo, hi, (a2, na2, TWEAK_VALUE), buf, out)
        kl = out[0, :, 0].reshape(2, B)
        kh = out[0, :, 1].reshape(2, B)
        xl = out[1, :, 0].reshape(2, B)
        xh = out[1, :, 1].reshape(2, B)
        cwl = xl[0] ^ xl[1]                            # s_CW with t_CW^lose in the low bit
        cwh = xh[0] ^ xh[1]
        tc_lose = cwl & _ONE
        tc_keep = ((kl[0] ^ kl[1]) & _ONE) ^ _ONE
        sel = (tc_lose ^ tc_keep) & a
        cw_tl[i] = tc_keep ^ sel                       # t_CW^L = keep if alpha_i = 0
        cw_tr[i] = tc_lose ^ sel
        cwl &= LOW_BIT_CLEAR
        cw_seed[i, :, 0] = cwl
        cw_seed[i, :, 1] = cwh
        cwl |= tc_keep                                 # correction of the kept child
        vl = out[2, :, 0].reshape(2, B)
        vr = out[2, :, 1].reshape(2, B)
        np.bitwise_xor(vl, vr, out=tmp)
        tmp &= am
        vl ^= tmp                                      # kept value words
        vr ^= tmp                                      # lost value words
        t1 = lo[B:] & _ONE
        # X = (-1)^t1 V_CW, so V_CW = (X ^ -t1) + t1 and (-1)^t1 V_CW = X
        X = vr[1] - vr[0]
        X -= v_alpha
        X += beta & am
        cw_v[i] = ((X ^ (_U64(0) - t1)) + t1) & msk
        v_alpha -= vl[1]
        v_alpha += vl[0]
        v_alpha += X
        tm = (_U64(0) - (lo & _ONE)).reshape(2, B)     # previous control bits as masks
        np.bitwise_and(cwl, tm, out=tmp)
        np.bitwise_xor(kl, tmp, out=lo.reshape(2, B))
        np.bitwise_and(cwh, tm, out=tmp)
        np.bitwise_xor(kh, tmp, out=hi.reshape(2, B))
    t1 = lo[B:] & _ONE
    return (((hi[B:] - hi[:B] - v_alpha) ^ (_U64(0) - t1)) + t1) & msk


# -- evaluation -------------------------------------------------------------------------
def eval(params: DCFParams, party: int, key: DCFKey, x) -> np.ndarray:  # noqa: A001
    """Party ``party``'s additive share (uint64, Z_2^l) of beta * [x < alpha].

    ``x`` has the key's batch shape (one point per key), or ``(m, *key.shape)``
    (m points per key, e.g. the two evaluations of an interval gate).
    Steps (EUROCRYPT 2021, Fig. 1): walk the tree along x's bits, expanding
    only the chosen child (2 AES blocks per level, one ``encrypt`` per level
    for the whole batch), correct with the key's correction words when the
    control bit is set, accumulate the value words; negate for party 1.
    Cost: 2 n AES blocks per point; no communication.
    """
    params = _check_params(params)
    party = _util.check_party(party)
    key = _check_key(params, party, key)
    x = _util.domain_values(x, params.n_bits, "x")
    m = _util.points_per_key(x, tuple(key.shape))
    B = key.batch
    out = _eval_core(params.n_bits, params.out_bits, party, key, x.reshape(m, B))
    return out.reshape(x.shape)


def _eval_core(n: int, l: int, party: int, key: DCFKey, x: np.ndarray,
               block: int = BLOCK) -> np.ndarray:
    """Unchecked batched Eval^<: x uint64 (m, B); returns uint64 (m, B).

    Processes blocks of ``block // m`` keys (cache blocking, see _gen_core).
    """
    block = block or BLOCK
    m, B = x.shape
    out = np.empty((m, B), dtype=_U64)
    step = max(1, block // m)
    for c0 in range(0, B, step):
        c1 = min(B, c0 + step)
        out[:, c0:c1] = _eval_block(n, l, party, key.seed[c0:c1], key.cw_seed[:, c0:c1],
                                    key.cw_t_left[:, c0:c1], key.cw_t_right[:, c0:c1],
                                    key.cw_value[:, c0:c1], key.cw_last[c0:c1], x[:, c0:c1])
    return out


def _eval_block(n, l, party, seed, cw_seed, cw_t_left, cw_t_right, cw_value, cw_last, x):
    """One cache block of Eval^< in planar form (see _gen_block)."""
    m, B = x.shape
    M = m * B
    x = x.reshape(M)
    lo = np.empty(M, dtype=_U64)
    hi = np.empty(M, dtype=_U64)
    lo.reshape(m, B)[:] = seed[None, :, 0]
    hi.reshape(m, B)[:] = seed[None, :, 1]
    lo |= _U64(party)                                  # control bit t = party at the root
    v = np.zeros(M, dtype=_U64)
    buf = np.empty((2, M, 2), dtype=_U64)
    out = np.empty_like(buf)
    tmp = np.empty(M, dtype=_U64)

    def rep(a):
        return a if m == 1 else np.broadcast_to(a[None], (m,) + a.shape).reshape((M,) + a.shape[1:])

    for i in range(n):
        xb = (x >> _U64(n - 1 - i)) & _ONE
        _hash_k(lo, hi, (xb, TWEAK_VALUE), buf, out)   # chosen child; both value words
        tm = _U64(0) - (lo & _ONE)
        xm = _U64(0) - xb
        vw = out[1, :, 0]
        np.bitwise_xor(vw, out[1, :, 1], out=tmp)
        tmp &= xm
        tmp ^= vw                                      # v_L or v_R by x's bit
        v += tmp
        tl = rep(cw_t_left[i]).astype(_U64)
        tc = tl ^ ((tl ^ rep(cw_t_right[i])) & xb)
        tc |= rep(cw_seed[i, :, 0])
        tc &= tm
        np.bitwise_xor(out[0, :, 0], tc, out=lo)
        np.bitwise_and(rep(cw_seed[i, :, 1]), tm, out=tmp)
        np.bitwise_xor(out[0, :, 1], tmp, out=hi)
        v += rep(cw_value[i]) & tm
    v += hi
    v += rep(cw_last) & (_U64(0) - (lo & _ONE))
    if party:
        v = _U64(0) - v
    return (v & _util.mask(l)).reshape(m, B)


def _check_key(params: DCFParams, party: int, key) -> DCFKey:
    if not isinstance(key, DCFKey):
        raise TypeError(f"key must be a DCFKey, got {type(key).__name__}")
    if key.n_bits != params.n_bits or key.out_bits != params.out_bits:
        raise ValueError(
            f"key is for a domain of {key.n_bits} bits and Z_2^{key.out_bits}, "
            f"but params are n_bits={params.n_bits}, out_bits={params.out_bits}"
        )
    if key.party != party:
        raise ValueError(f"key belongs to party {key.party}, not party {party}")
    return key


# -- serialization -------------------------------------------------------------------------
def to_bytes(key: DCFKey) -> bytes:
    """Serialize a batch of keys: a header, then the fields bit-packed in order.

    Header: ``b"DCF1"``, party, n, l, ndim (one byte each), the batch shape
    (8 bytes per axis, little endian). Payload: seed (128 B bits), cw_seed
    (128 n B), cw_t_left (n B), cw_t_right (n B), cw_value (l n B), cw_last
    (l B), each rounded up to whole bytes; payload bits = B * key_bits(n, l)
    up to that padding.
    """
    if not isinstance(key, DCFKey):
        raise TypeError(f"key must be a DCFKey, got {type(key).__name__}")
    l = key.out_bits
    head = _MAGIC + struct.pack("<BBBB", key.party, key.n_bits, l, len(key.shape))
    head += struct.pack(f"<{len(key.shape)}Q", *key.shape)
    parts = [
        np.ascontiguousarray(key.seed).tobytes(),
        np.ascontiguousarray(key.cw_seed).tobytes(),
        np.packbits(key.cw_t_left.reshape(-1), bitorder="little").tobytes(),
        np.packbits(key.cw_t_right.reshape(-1), bitorder="little").tobytes(),
        _util.pack_words(key.cw_value, l),
        _util.pack_words(key.cw_last, l),
    ]
    return head + b"".join(parts)


def from_bytes(data) -> DCFKey:
    """Parse :func:`to_bytes` output; ``ValueError`` naming ``data`` if malformed or truncated."""
    r = _util.Reader(data, "DCF key")
    if r.take(4) != _MAGIC:
        raise ValueError("data is not a serialized DCF key (bad magic)")
    party, n, l, nd = r.unpack("<BBBB")
    if party not in (0, 1) or not 1 <= n <= 64 or not 1 <= l <= 64:
        raise ValueError(f"data has an invalid header: party={party}, n={n}, l={l}")
    shape = tuple(r.unpack(f"<{nd}Q")) if nd else ()
    B = int(np.prod(shape, dtype=np.int64))
    seed = np.frombuffer(r.take(16 * B), dtype=_U64).reshape(B, 2).copy()
    cw_seed = np.frombuffer(r.take(16 * n * B), dtype=_U64).reshape(n, B, 2).copy()
    nb = _util.packed_len(n * B, 1)
    tl = np.unpackbits(np.frombuffer(r.take(nb), np.uint8), count=n * B,
                       bitorder="little").reshape(n, B)
    tr = np.unpackbits(np.frombuffer(r.take(nb), np.uint8), count=n * B,
                       bitorder="little").reshape(n, B)
    cwv = _util.unpack_words(r.take(_util.packed_len(n * B, l)), n * B, l).reshape(n, B)
    last = _util.unpack_words(r.take(_util.packed_len(B, l)), B, l)
    r.finish()
    return DCFKey(party, n, l, shape, seed, cw_seed, tl, tr, cwv, last)


def serialized_payload_bits(key: DCFKey) -> int:
    """Bits of the payload of :func:`to_bytes` (without header, with byte padding)."""
    n, l, B = key.n_bits, key.out_bits, key.batch
    return 8 * (16 * B * (n + 1) + 2 * _util.packed_len(n * B, 1)
                + _util.packed_len(n * B, l) + _util.packed_len(B, l))


def eval_plain(alpha, beta, x, out_bits: int) -> np.ndarray:
    """The plaintext function beta * [x < alpha] mod 2^l (reference for tests)."""
    lt = np.asarray(x, dtype=_U64) < np.asarray(alpha, dtype=_U64)
    return (np.asarray(beta, dtype=_U64) * lt.astype(_U64)) & _util.mask(out_bits)
