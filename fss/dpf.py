"""Distributed point functions f(x) = beta * [x == alpha] over n-bit inputs, batched.

Construction: Boyle, Gilboa, Ishai, "Function secret sharing: improvements
and extensions", CCS 2016, Figure 1 (tree construction with control bits,
one seed correction word and two control-bit corrections per level, and a
final output correction), with the fixed-key AES PRG of :mod:`fss.prg`.
Inputs are n-bit unsigned integers (1 <= n <= 64), MSB first. Outputs are
shares in the group of :class:`DPFParams`:

- ``group="arith"``: additive shares in Z_2^l, y0 + y1 = beta [x == alpha];
- ``group="xor"``: XOR shares of l-bit strings, y0 ^ y1 = beta [x == alpha].

Keys (:class:`DPFKey`, struct of arrays, level axis first):

    seed        uint64 (B, 2)     root seed
    cw_seed     uint64 (n, B, 2)  seed corrections
    cw_t_left   uint8  (n, B)     control-bit corrections, left
    cw_t_right  uint8  (n, B)     control-bit corrections, right
    cw_last     uint64 (B,)       output correction CW^(n+1)

Key size: ``key_bits = 128 + n * (128 + 2) + l`` per key and party.
PRG convention as in :mod:`fss.dcf`: a node's word is its seed with the
control bit in the low bit, and the PRG is applied to the whole word.
Cost: Gen 4 AES blocks per level per instance (2 per party), Eval 1 block
per level, :func:`eval_all` 2 blocks per tree node (2^(n+1) per key); one
``encrypt`` call per level per cache block of instances.
Security (CCS 2016, Thm 3.3): one key alone is pseudorandom and independent
of (alpha, beta) assuming a PRG.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

import numpy as np

from . import _util
from ._util import check_key_arrays as _check_key_arrays
from .prg import LOW_BIT_CLEAR, _hash_k, random_seeds

_U64 = np.uint64
_ONE = _U64(1)
_MAGIC = b"DPF1"
BLOCK = 1 << 14
EVAL_ALL_MAX = 1 << 26  # max points (batch * 2^n) for eval_all
_GROUPS = ("arith", "xor")


@dataclass(frozen=True)
class DPFParams:
    """DPF family: input bits ``n_bits`` (1..64), outputs in Z_2^``out_bits`` or XOR of l bits."""

    n_bits: int
    out_bits: int = 64
    group: str = "arith"

    def __post_init__(self):
        _util.check_int(self.n_bits, "n_bits", 1, 64)
        _util.check_int(self.out_bits, "out_bits", 1, 64)
        if self.group not in _GROUPS:
            raise ValueError(f"group must be one of {_GROUPS}, got {self.group!r}")

    @property
    def key_bits(self) -> int:
        return key_bits(self)


def key_bits(params: DPFParams) -> int:
    """Size in bits of one DPF key (one party, one instance): 128 + 130 n + l."""
    _check_params(params)
    return 128 + params.n_bits * 130 + params.out_bits


@dataclass(frozen=True, eq=False)
class DPFKey:
    """One party's batch of DPF keys (struct of arrays, level axis first)."""

    party: int
    n_bits: int
    out_bits: int
    group: str
    shape: tuple
    seed: np.ndarray
    cw_seed: np.ndarray
    cw_t_left: np.ndarray
    cw_t_right: np.ndarray
    cw_last: np.ndarray

    def __post_init__(self):
        _check_key_arrays(self, with_value=False)

    @property
    def params(self) -> DPFParams:
        return DPFParams(self.n_bits, self.out_bits, self.group)

    @property
    def batch(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64))

    @property
    def nbits(self) -> int:
        return self.batch * key_bits(self.params)

    def __eq__(self, other):
        if not isinstance(other, DPFKey):
            return NotImplemented
        return (self.party, self.n_bits, self.out_bits, self.group, tuple(self.shape)) == (
            other.party, other.n_bits, other.out_bits, other.group, tuple(other.shape)) and all(
            np.array_equal(getattr(self, f), getattr(other, f))
            for f in ("seed", "cw_seed", "cw_t_left", "cw_t_right", "cw_last"))

    __hash__ = None


def _check_params(params) -> DPFParams:
    if not isinstance(params, DPFParams):
        raise TypeError(f"params must be a DPFParams, got {type(params).__name__}")
    return params


def gen(params: DPFParams, alpha, beta, rng):
    """Keys (k0, k1) for f(x) = beta * [x == alpha], one instance per entry of ``alpha``.

    ``alpha``: integers in [0, 2^n) (batch shape); ``beta``: integers reduced
    mod 2^l (any sign; for ``group="xor"`` the l-bit string), broadcastable;
    ``rng``: CSPRNG or seed. Steps (CCS 2016, Fig. 1): expand both parties'
    seeds, the lost branch's seeds are corrected to be equal (so off-path
    subtrees cancel), the kept branch's control bits to differ; the last
    correction converts the final seeds to beta. Cost: 4 n AES blocks/instance.
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
    B = alpha.size
    shape = tuple(alpha.shape)
    roots = random_seeds(rng, 2 * B).reshape(2, B, 2)
    alpha = alpha.reshape(B)
    beta = np.ascontiguousarray(beta).reshape(B)
    cw_seed = np.empty((n, B, 2), dtype=_U64)
    cw_tl = np.empty((n, B), dtype=np.uint8)
    cw_tr = np.empty((n, B), dtype=np.uint8)
    cw_last = np.empty(B, dtype=_U64)
    for c0 in range(0, B, BLOCK):
        c1 = min(B, c0 + BLOCK)
        cw_last[c0:c1] = _gen_block(n, l, params.group == "xor", alpha[c0:c1], beta[c0:c1],
                                    roots[:, c0:c1], cw_seed[:, c0:c1], cw_tl[:, c0:c1],
                                    cw_tr[:, c0:c1])
    k0 = DPFKey(0, n, l, params.group, shape, roots[0], cw_seed, cw_tl, cw_tr, cw_last)
    k1 = DPFKey(1, n, l, params.group, shape, roots[1], cw_seed, cw_tl, cw_tr, cw_last)
    return k0, k1




def _gen_block(n, l, xor, alpha, beta, roots, cw_seed, cw_tl, cw_tr):
    """One cache block of Gen, planar (see fss.dcf._gen_block): words carry t in the low bit."""
    B = alpha.shape[0]
    msk = _util.mask(l)
    lo = np.ascontiguousarray(roots[:, :, 0]).reshape(2 * B)
    hi = np.ascontiguousarray(roots[:, :, 1]).reshape(2 * B)
    lo[B:] |= _ONE
    buf = np.empty((2, 2 * B, 2), dtype=_U64)
    out = np.empty_like(buf)
    tmp = np.empty((2, B), dtype=_U64)
    a2 = np.empty(2 * B, dtype=_U64)
    na2 = np.empty(2 * B, dtype=_U64)
    for i in range(n):
        a = (alpha >> _U64(n - 1 - i)) & _ONE
        a2[:B] = a
        a2[B:] = a
        np.bitwise_xor(a2, _ONE, out=na2)
        _hash_k(lo, hi, (a2, na2), buf, out)          # kept child, lost child
        kl = out[0, :, 0].reshape(2, B)
        kh = out[0, :, 1].reshape(2, B)
        xl = out[1, :, 0].reshape(2, B)
        xh = out[1, :, 1].reshape(2, B)
        cwl = xl[0] ^ xl[1]
        cwh = xh[0] ^ xh[1]
        tc_lose = cwl & _ONE
        tc_keep = ((kl[0] ^ kl[1]) & _ONE) ^ _ONE
        sel = (tc_lose ^ tc_keep) & a
        cw_tl[i] = tc_keep ^ sel
        cw_tr[i] = tc_lose ^ sel
        cwl &= LOW_BIT_CLEAR
        cw_seed[i, :, 0] = cwl
        cw_seed[i, :, 1] = cwh
        cwl |= tc_keep
        tm = (_U64(0) - (lo & _ONE)).reshape(2, B)
        np.bitwise_and(cwl, tm, out=tmp)
        np.bitwise_xor(kl, tmp, out=lo.reshape(2, B))
        np.bitwise_and(cwh, tm, out=tmp)
        np.bitwise_xor(kh, tmp, out=hi.reshape(2, B))
    if xor:
        return (beta ^ hi[:B] ^ hi[B:]) & msk
    t1 = lo[B:] & _ONE
    return (((beta - hi[:B] + hi[B:]) ^ (_U64(0) - t1)) + t1) & msk


def eval(params: DPFParams, party: int, key: DPFKey, x) -> np.ndarray:  # noqa: A001
    """Party ``party``'s share of beta * [x == alpha] at ``x`` (key's batch shape, or (m, *shape)).

    Steps: walk x's path, 1 AES block per level (the chosen child only),
    correct with the key when the control bit is set; output
    Convert(s) + t CW^(n+1), negated for party 1 (arith) / XOR (xor).
    Cost: n AES blocks per point; no communication.
    """
    params = _check_params(params)
    party = _util.check_party(party)
    key = _check_key(params, party, key)
    x = _util.domain_values(x, params.n_bits, "x")
    m = _util.points_per_key(x, tuple(key.shape))
    B = key.batch
    xr = x.reshape(m, B)
    out = np.empty((m, B), dtype=_U64)
    step = max(1, BLOCK // m)
    for c0 in range(0, B, step):
        c1 = min(B, c0 + step)
        out[:, c0:c1] = _eval_block(params, party, key.seed[c0:c1], key.cw_seed[:, c0:c1],
                                    key.cw_t_left[:, c0:c1], key.cw_t_right[:, c0:c1],
                                    key.cw_last[c0:c1], xr[:, c0:c1])
    return out.reshape(x.shape)


def _eval_block(params, party, seed, cw_seed, cw_tl, cw_tr, cw_last, x):
    """One cache block of Eval, planar: 1 AES block per level (the chosen child)."""
    n, l = params.n_bits, params.out_bits
    m, B = x.shape
    M = m * B
    x = x.reshape(M)
    lo = np.empty(M, dtype=_U64)
    hi = np.empty(M, dtype=_U64)
    lo.reshape(m, B)[:] = seed[None, :, 0]
    hi.reshape(m, B)[:] = seed[None, :, 1]
    lo |= _U64(party)
    buf = np.empty((1, M, 2), dtype=_U64)
    out = np.empty_like(buf)
    tmp = np.empty(M, dtype=_U64)

    def rep(a):
        return a if m == 1 else np.broadcast_to(a[None], (m,) + a.shape).reshape((M,) + a.shape[1:])

    for i in range(n):
        xb = (x >> _U64(n - 1 - i)) & _ONE
        _hash_k(lo, hi, (xb,), buf, out)
        tm = _U64(0) - (lo & _ONE)
        tl = rep(cw_tl[i]).astype(_U64)
        tc = tl ^ ((tl ^ rep(cw_tr[i])) & xb)
        tc |= rep(cw_seed[i, :, 0])
        tc &= tm
        np.bitwise_xor(out[0, :, 0], tc, out=lo)
        np.bitwise_and(rep(cw_seed[i, :, 1]), tm, out=tmp)
        np.bitwise_xor(out[0, :, 1], tmp, out=hi)
    tm = _U64(0) - (lo & _ONE)
    last = rep(cw_last)
    if params.group == "xor":
        y = hi ^ (last & tm)
    else:
        y = hi + (last & tm)
        if party:
            y = _U64(0) - y
    return (y & _util.mask(l)).reshape(m, B)


def eval_all(params: DPFParams, party: int, key: DPFKey) -> np.ndarray:
    """Full-domain evaluation: shares at every x in [0, 2^n), shape (*key.shape, 2^n).

    Expands the whole tree level by level (one AES call per level for the
    whole batch; 2 blocks per inner node), breadth first. Only for small domains:
    ``batch * 2^n`` must be at most 2^26 (ValueError otherwise).
    Cost: 2^(n+1) AES blocks per key.
    """
    params = _check_params(params)
    party = _util.check_party(party)
    key = _check_key(params, party, key)
    n, l = params.n_bits, params.out_bits
    B = key.batch
    if n > 26 or B * (1 << n) > EVAL_ALL_MAX:
        raise ValueError(
            f"eval_all needs batch * 2^n_bits <= 2^26, got batch {B} and n_bits {n}"
        )
    lo = key.seed[:, 0].reshape(B, 1) | _U64(party)          # words carry t in the low bit
    hi = key.seed[:, 1].reshape(B, 1).copy()
    for i in range(n):
        w = lo.shape[1]
        out = _hash_k(lo.reshape(-1), hi.reshape(-1), (0, 1))           # (2, B*w, 2)
        tm = (_U64(0) - (lo & _ONE))                                    # (B, w) parent t
        cwl = key.cw_seed[i, :, 0]
        cwh = key.cw_seed[i, :, 1]
        nlo = np.empty((B, w, 2), dtype=_U64)
        nhi = np.empty((B, w, 2), dtype=_U64)
        for side, tcw in ((0, key.cw_t_left[i]), (1, key.cw_t_right[i])):
            corr_lo = (cwl | tcw.astype(_U64))[:, None] & tm
            nlo[:, :, side] = out[side, :, 0].reshape(B, w) ^ corr_lo
            nhi[:, :, side] = out[side, :, 1].reshape(B, w) ^ (cwh[:, None] & tm)
        lo = nlo.reshape(B, 2 * w)                                      # children in order
        hi = nhi.reshape(B, 2 * w)
    tm = _U64(0) - (lo & _ONE)
    last = key.cw_last[:, None]
    if params.group == "xor":
        y = hi ^ (last & tm)
    else:
        y = hi + (last & tm)
        if party:
            y = _U64(0) - y
    return (y & _util.mask(l)).reshape(tuple(key.shape) + (1 << n,))


def _check_key(params: DPFParams, party: int, key) -> DPFKey:
    if not isinstance(key, DPFKey):
        raise TypeError(f"key must be a DPFKey, got {type(key).__name__}")
    if (key.n_bits, key.out_bits, key.group) != (params.n_bits, params.out_bits, params.group):
        raise ValueError(
            f"key is for a domain of {key.n_bits} bits, Z_2^{key.out_bits} ({key.group}), "
            f"but params are n_bits={params.n_bits}, out_bits={params.out_bits} ({params.group})"
        )
    if key.party != party:
        raise ValueError(f"key belongs to party {key.party}, not party {party}")
    return key


def to_bytes(key: DPFKey) -> bytes:
    """Serialize: header (b"DPF1", party, n, l, group, ndim, shape) + bit-packed fields."""
    if not isinstance(key, DPFKey):
        raise TypeError(f"key must be a DPFKey, got {type(key).__name__}")
    head = _MAGIC + struct.pack("<BBBBB", key.party, key.n_bits, key.out_bits,
                                _GROUPS.index(key.group), len(key.shape))
    head += struct.pack(f"<{len(key.shape)}Q", *key.shape)
    return head + b"".join([
        np.ascontiguousarray(key.seed).tobytes(),
        np.ascontiguousarray(key.cw_seed).tobytes(),
        np.packbits(key.cw_t_left.reshape(-1), bitorder="little").tobytes(),
        np.packbits(key.cw_t_right.reshape(-1), bitorder="little").tobytes(),
        _util.pack_words(key.cw_last, key.out_bits),
    ])


def from_bytes(data) -> DPFKey:
    """Parse :func:`to_bytes` output; ``ValueError`` naming ``data`` if malformed or truncated."""
    r = _util.Reader(data, "DPF key")
    if r.take(4) != _MAGIC:
        raise ValueError("data is not a serialized DPF key (bad magic)")
    party, n, l, g, nd = r.unpack("<BBBBB")
    if party not in (0, 1) or not 1 <= n <= 64 or not 1 <= l <= 64 or g >= len(_GROUPS):
        raise ValueError(f"data has an invalid header: party={party}, n={n}, l={l}, group={g}")
    shape = tuple(r.unpack(f"<{nd}Q")) if nd else ()
    B = int(np.prod(shape, dtype=np.int64))
    seed = np.frombuffer(r.take(16 * B), dtype=_U64).reshape(B, 2).copy()
    cw_seed = np.frombuffer(r.take(16 * n * B), dtype=_U64).reshape(n, B, 2).copy()
    nb = _util.packed_len(n * B, 1)
    tl = np.unpackbits(np.frombuffer(r.take(nb), np.uint8), count=n * B,
                       bitorder="little").reshape(n, B)
    tr = np.unpackbits(np.frombuffer(r.take(nb), np.uint8), count=n * B,
                       bitorder="little").reshape(n, B)
    last = _util.unpack_words(r.take(_util.packed_len(B, l)), B, l)
    r.finish()
    return DPFKey(party, n, l, _GROUPS[g], shape, seed, cw_seed, tl, tr, last)
