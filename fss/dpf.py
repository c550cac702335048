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

    insecure    bool              made from an explicit seed (see :mod:`fss.dcf`)

Key size: ``key_bits = 128 + n * (128 + 2) + l`` bits of information per
key and party; the serialized payload, which the gates count, is
``wire_bits = 128 (n + 1) + 16 ceil(n/8) + 8 ceil(l/8)`` (equal for n, l
multiples of 8: 5368 bits at n = l = 40). Wire format: :mod:`fss._keyio`.
PRG convention as in :mod:`fss.dcf`: a node's word is its seed with the
control bit in the low bit; branch x is expanded from ``w ^ x``.
Cost: Gen 4 AES blocks per level per instance (2 per party), Eval 1 block
per level, :func:`eval_all` 2 blocks per tree node (2^(n+1) per key); one
``encrypt`` call per level per cache block of instances, on ``workers``
threads (results do not depend on it); batches of at most ``SMALL``
points take the scalar path of :mod:`fss._small`.
Security (CCS 2016, Thm 3.3): one key alone is pseudorandom and independent
of (alpha, beta) assuming a PRG and secret root seeds; keys made from an
explicit seed are flagged ``insecure`` as in :mod:`fss.dcf`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from . import _keyio, _pool, _small, _tree, _util, _wire_gen
from .prg import PI

_U64 = np.uint64
_ONE = _U64(1)
BLOCK = _tree.BLOCK
SMALL = _small.SMALL
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


def wire_bits(params: DPFParams) -> int:
    """Serialized payload bits of one key (what the dealer sends per instance)."""
    _check_params(params)
    return 8 * _keyio.record_bytes(False, params.n_bits, params.out_bits)


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
    insecure: bool = False

    def __post_init__(self):
        _keyio.check_key_arrays(self, with_value=False)

    @property
    def params(self) -> DPFParams:
        return DPFParams(self.n_bits, self.out_bits, self.group)

    @property
    def batch(self) -> int:
        b = 1
        for d in self.shape:
            b *= int(d)
        return b

    @property
    def nbits(self) -> int:
        """Serialized payload bits of this batch: batch * wire_bits."""
        return 8 * self.batch * _keyio.record_bytes(False, self.n_bits, self.out_bits)

    def __eq__(self, other):
        if not isinstance(other, DPFKey):
            return NotImplemented
        return (self.party, self.n_bits, self.out_bits, self.group, tuple(self.shape),
                bool(self.insecure)) == (other.party, other.n_bits, other.out_bits, other.group,
                                         tuple(other.shape), bool(other.insecure)) and all(
            np.array_equal(getattr(self, f), getattr(other, f))
            for f in ("seed", "cw_seed", "cw_t_left", "cw_t_right", "cw_last"))

    __hash__ = None


def _check_params(params) -> DPFParams:
    if not isinstance(params, DPFParams):
        raise TypeError(f"params must be a DPFParams, got {type(params).__name__}")
    return params


def gen(params: DPFParams, alpha, beta, rng, *, workers=None):
    """Keys (k0, k1) for f(x) = beta * [x == alpha], one instance per entry of ``alpha``.

    ``alpha``: integers in [0, 2^n) (batch shape); ``beta``: integers reduced
    mod 2^l (any sign; for ``group="xor"`` the l-bit string), broadcastable;
    ``rng``: CSPRNG (a seed or seeded CSPRNG flags the keys insecure);
    ``workers``: threads (None: all cores for large batches).
    Steps (CCS 2016, Fig. 1): expand both parties' words towards both
    branches, the lost branch's seeds are corrected to be equal (so off-path
    subtrees cancel), the kept branch's control bits to differ; the last
    correction converts the final seeds to beta. Root seeds are drawn before
    the blocks run: keys do not depend on ``workers``.
    Cost: 4 n AES blocks per instance.
    """
    params = _check_params(params)
    n, l = params.n_bits, params.out_bits
    alpha, beta, shape, insecure, roots, w = _util.gen_inputs(n, l, alpha, beta, rng, workers)
    cw_seed, cw_tl, cw_tr, _, cw_last = _tree.gen_batch(n, l, params.group, alpha, beta, roots, w)
    k0 = DPFKey(0, n, l, params.group, shape, roots[0], cw_seed, cw_tl, cw_tr, cw_last, insecure)
    k1 = DPFKey(1, n, l, params.group, shape, roots[1], cw_seed, cw_tl, cw_tr, cw_last, insecure)
    return k0, k1



def gen_bytes(params: DPFParams, alpha, beta, rng, *, workers=None) -> tuple:
    """``(to_bytes(k0), to_bytes(k1))`` for the keys :func:`gen` makes, without making them.

    Same arguments, checks and keys as :func:`gen` (the same stream gives the
    same bytes), written block by block into both parties' byte objects
    (:mod:`fss._wire_gen`). Cost: Gen's 4 n AES blocks per instance plus one
    write of each payload.
    """
    params = _check_params(params)
    n, l = params.n_bits, params.out_bits
    alpha, beta, shape, insecure, roots, w = _util.gen_inputs(n, l, alpha, beta, rng, workers)
    return _wire_gen.gen_bytes(params.group, n, l, alpha, beta, roots, shape, insecure, w)


def eval(params: DPFParams, party: int, key: DPFKey, x, *, workers=None) -> np.ndarray:  # noqa: A001
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
    if m * B <= SMALL:
        out = _small.eval_small(params.group, params.n_bits, params.out_bits, party, key, xr)
    else:
        out = _tree.eval_batch(params.group, params.n_bits, params.out_bits, party, key, xr,
                               _pool.check_workers(workers, m * B))
    return out.reshape(x.shape)


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
    """Serialize: versioned header (see :mod:`fss._keyio`) + fields; payload = batch * wire_bits."""
    if not isinstance(key, DPFKey):
        raise TypeError(f"key must be a DPFKey, got {type(key).__name__}")
    return _keyio.to_bytes(key, False)


def from_bytes(data) -> DPFKey:
    """Parse :func:`to_bytes` output; ``ValueError`` naming the bad field (as :func:`fss.dcf.from_bytes`)."""
    party, n, l, g, insecure, shape, B, off = _keyio.parse_header(data, False)
    a = _keyio.parse_arrays(data, False, n, l, B, off)
    return DPFKey(party, n, l, _GROUPS[g], shape, a["seed"], a["cw_seed"], a["cw_t_left"],
                  a["cw_t_right"], a["cw_last"], insecure)


def instance_payloads(key: DPFKey) -> np.ndarray:
    """uint8 (batch, wire_bits / 8): the payload of each instance alone (per-instance messages)."""
    return _keyio.instance_records(key, False)
