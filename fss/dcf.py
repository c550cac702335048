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
    insecure    bool              made from an explicit seed (see below)

(B = prod(key.shape)). The two parties' keys share the correction-word arrays.

Key size: the information in one key is ``key_bits = 128 + n (130 + l) + l``
(5608 bits for n = 32, l = 40); what is sent is its serialized payload,
``wire_bits = 128 (n + 1) + 16 ceil(n/8) + 8 ceil(l/8) (n + 1)`` per
instance (:func:`wire_bits`; 6800 bits for the less-than gate at l = 40,
whose n = 39), which the gates count as offline traffic. :func:`to_bytes` writes it;
:func:`gen_bytes` makes both parties' serialized keys directly (what a
dealer that sends its keys needs), without the key arrays.

PRG convention: a node's 128-bit word is its seed with the control bit t
in the low bit; branch x of a node is expanded from ``w ^ x`` (child) and
``w ^ x ^ D`` (value word), see :mod:`fss.prg`. One XOR with a correction
word (s_CW with the chosen t_CW in its low bit) corrects seed and control
bit together; on the two parties' off-path nodes the words are equal, so
they still cancel (the paper's construction with G(s || t) for G(s)).

Cost: Gen 8 AES blocks per level per instance (kept and lost child and
value word for each party), Eval 2 per level (x's child and value word);
one ``encrypt`` call per level per cache block of ``BLOCK`` instances, on
``workers`` threads (:mod:`fss._pool`; results do not depend on it); with
numba installed, compiled kernels with AES in registers (:mod:`fss._fast`,
same results; ``benchmarks/fss.py`` reports ``fss_kernels``).
Batches of at most ``SMALL`` points take a scalar path (:mod:`fss._small`)
that avoids numpy's per-call overhead. No communication here: the gates in
:mod:`fss.gates` count the key transfer.

Security (EUROCRYPT 2021, Thm 3.2): each key alone is computationally
indistinguishable from a key for any other alpha, beta (its root seed is
uniform, and every correction word is masked by a PRG output the holder
cannot compute), assuming :mod:`fss.prg` is a PRG and the root seeds come
from a secret CSPRNG. Keys generated from an explicit seed (an int, str or
bytes ``rng``, or a seeded :class:`~mpc.arith.rng.CSPRNG`) are reproducible by
anyone who knows the seed: they carry ``insecure=True`` (kept by
serialization), and a raw seed also raises
:class:`fss._util.InsecureSeedWarning`. Both keys together reveal alpha
and beta.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from . import _keyio, _pool, _small, _tree, _util, _wire_gen

_U64 = np.uint64
BLOCK = _tree.BLOCK        # instances per cache block in gen (points in eval: EVAL_BLOCK)
SMALL = _small.SMALL


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
        """Bits of information in one key of one party: 128 + n (130 + l) + l."""
        return key_bits(self)


def key_bits(params: DCFParams) -> int:
    """Information bits of one DCF key (one party, one instance): 128 + n (130 + l) + l."""
    _check_params(params)
    n, l = params.n_bits, params.out_bits
    return 128 + n * (128 + 2 + l) + l


def wire_bits(params: DCFParams) -> int:
    """Serialized payload bits of one key (what the dealer sends per instance)."""
    _check_params(params)
    return 8 * _keyio.record_bytes(True, params.n_bits, params.out_bits)


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
    insecure: bool = False

    def __post_init__(self):
        _keyio.check_key_arrays(self, with_value=True)

    @property
    def params(self) -> DCFParams:
        return DCFParams(self.n_bits, self.out_bits)

    @property
    def batch(self) -> int:
        b = 1
        for d in self.shape:
            b *= int(d)
        return b

    @property
    def nbits(self) -> int:
        """Serialized payload bits of this batch (what sending it costs): batch * wire_bits."""
        return 8 * self.batch * _keyio.record_bytes(True, self.n_bits, self.out_bits)

    def __eq__(self, other):
        if not isinstance(other, DCFKey):
            return NotImplemented
        return (self.party, self.n_bits, self.out_bits, tuple(self.shape), bool(self.insecure)) == (
            other.party, other.n_bits, other.out_bits, tuple(other.shape), bool(other.insecure)) and all(
            np.array_equal(getattr(self, f), getattr(other, f)) for f in _ARRAY_FIELDS)

    __hash__ = None


_ARRAY_FIELDS = ("seed", "cw_seed", "cw_t_left", "cw_t_right", "cw_value", "cw_last")


def _check_params(params) -> DCFParams:
    if not isinstance(params, DCFParams):
        raise TypeError(f"params must be a DCFParams, got {type(params).__name__}")
    return params


# -- generation --------------------------------------------------------------------------
def gen(params: DCFParams, alpha, beta, rng, *, workers=None, only=None):
    """Keys (k0, k1) for f(x) = beta * [x < alpha], one instance per entry of ``alpha``.

    Parameters
    ----------
    params : DCFParams (n_bits, out_bits)
    alpha : integers in [0, 2^n) of any shape (the batch shape)
    beta : integers (any sign, reduced mod 2^l), scalar or broadcastable to alpha
    rng : mpc.arith.rng.CSPRNG; a seed (int/str/bytes) or a seeded CSPRNG gives
        keys flagged ``insecure`` (a raw seed also warns)
    workers : threads for the block loop (None: all cores for large batches)
    only : None, or a boolean mask of the batch: the keys of those instances
        only (a batch of their count, in order), made from the root seeds the
        whole batch draws, so they are exactly the keys ``gen`` without
        ``only`` makes for them (a process that runs some of the key owners
        of a batch draws the same stream and does only their work)

    Steps (EUROCRYPT 2021, Fig. 1), vectorized over the batch, one AES call
    per level for both parties: expand both words towards both branches,
    keep the branch of alpha's bit, correct the lost branch's seeds to agree
    and its value so that the sum along the path accumulates beta exactly
    when the path leaves alpha's to the left (x_i < alpha_i).
    All root seeds are drawn before the blocks run, so the keys do not
    depend on ``workers``. Cost: 8 n AES blocks and 256 random bits per instance.
    """
    params = _check_params(params)
    n, l = params.n_bits, params.out_bits
    alpha, beta, shape, insecure, roots, w = _util.gen_inputs(n, l, alpha, beta, rng, workers)
    if only is not None:
        sel = np.flatnonzero(np.broadcast_to(np.asarray(only, dtype=bool), shape).reshape(-1))
        alpha, beta, roots, shape = alpha[sel], beta[sel], roots[:, sel], (sel.size,)
    cw_seed, cw_tl, cw_tr, cw_v, cw_last = _tree.gen_batch(n, l, "dcf", alpha, beta, roots, w)
    k0 = DCFKey(0, n, l, shape, roots[0], cw_seed, cw_tl, cw_tr, cw_v, cw_last, insecure)
    k1 = DCFKey(1, n, l, shape, roots[1], cw_seed, cw_tl, cw_tr, cw_v, cw_last, insecure)
    return k0, k1


def gen_bytes(params: DCFParams, alpha, beta, rng, *, workers=None) -> tuple:
    """``(to_bytes(k0), to_bytes(k1))`` for the keys :func:`gen` makes, without making them.

    Same arguments, checks and keys as :func:`gen` (the same stream gives the
    same bytes; :func:`from_bytes` reads them back into gen's keys), for a
    dealer that sends its keys: each cache block is generated into scratch
    arrays and written into both parties' byte objects, so nothing but the two
    outputs (``wire_bits / 8`` bytes per instance each) is allocated
    (:mod:`fss._wire_gen`). Cost: Gen's 8 n AES blocks per instance plus one
    write of each payload.
    """
    params = _check_params(params)
    n, l = params.n_bits, params.out_bits
    alpha, beta, shape, insecure, roots, w = _util.gen_inputs(n, l, alpha, beta, rng, workers)
    return _wire_gen.gen_bytes("dcf", n, l, alpha, beta, roots, shape, insecure, w)


# -- evaluation -------------------------------------------------------------------------
def eval(params: DCFParams, party: int, key: DCFKey, x, *, workers=None) -> np.ndarray:  # noqa: A001
    """Party ``party``'s additive share (uint64, Z_2^l) of beta * [x < alpha].

    ``x`` has the key's batch shape (one point per key), or ``(m, *key.shape)``
    (m points per key, e.g. the two evaluations of an interval gate).
    Steps (EUROCRYPT 2021, Fig. 1): walk the tree along x's bits, expanding
    only the chosen child and its value word (2 AES blocks per level, one
    ``encrypt`` per level for a block of points), correct with the key's
    correction words when the control bit is set, accumulate the value
    words; negate for party 1.
    Cost: 2 n AES blocks per point; no communication.
    """
    params = _check_params(params)
    party = _util.check_party(party)
    key = _check_key(params, party, key)
    x = _util.domain_values(x, params.n_bits, "x")
    m = _util.points_per_key(x, tuple(key.shape))
    B = key.batch
    xr = x.reshape(m, B)
    if m * B <= SMALL:
        out = _small.eval_small("dcf", params.n_bits, params.out_bits, party, key, xr)
    else:
        out = _tree.eval_batch("dcf", params.n_bits, params.out_bits, party, key, xr,
                               _pool.check_workers(workers, m * B))
    return out.reshape(x.shape)


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
    """Serialize a batch of keys: versioned header, then the fields (see :mod:`fss._keyio`).

    Payload bytes = batch * wire_bits / 8; the header (16 + 8 ndim bytes)
    holds only public parameters (party, n, l, shape, the insecure flag).
    """
    if not isinstance(key, DCFKey):
        raise TypeError(f"key must be a DCFKey, got {type(key).__name__}")
    return _keyio.to_bytes(key, True)


def from_bytes(data) -> DCFKey:
    """Parse :func:`to_bytes` output; ``ValueError`` naming the bad field if malformed.

    Every header field is checked (magic, version, party, n, l, flags,
    reserved bytes, shape: batch at most 2^40, length exactly header plus
    payload), and the payload must be canonical (seed control-bit positions
    0, padding bits 0, values below 2^l), so that every byte string either
    is rejected or parses to the unique key that serializes to it.
    """
    party, n, l, _, insecure, shape, B, off = _keyio.parse_header(data, True)
    a = _keyio.parse_arrays(data, True, n, l, B, off)
    return DCFKey(party, n, l, shape, a["seed"], a["cw_seed"], a["cw_t_left"], a["cw_t_right"],
                  a["cw_value"], a["cw_last"], insecure)


def instance_payloads(key: DCFKey) -> np.ndarray:
    """uint8 (batch, wire_bits / 8): the payload of each instance alone (per-instance messages)."""
    return _keyio.instance_records(key, True)


def from_instance_payloads(rows, party: int, params: DCFParams, *,
                           insecure: bool = False) -> DCFKey:
    """Party ``party``'s batch key from B per-instance payloads (the rows of
    :func:`instance_payloads`: what B key owners send, one message each).

    ``rows``: uint8 ``(B, wire_bits / 8)``. Every field is validated as by
    :func:`from_bytes` (``ValueError`` naming it); the key's arrays are
    read-only. ``insecure``: the flag of the keys (not carried per instance).
    Cost: one pass over the bytes.
    """
    params = _check_params(params)
    party = _util.check_party(party)
    rows = np.asarray(rows)
    if rows.dtype != np.uint8 or rows.ndim != 2:
        raise TypeError(f"rows must be a 2-d uint8 array, got {rows.dtype} of shape {rows.shape}")
    n, l, B = params.n_bits, params.out_bits, rows.shape[0]
    payload = _keyio.records_payload(rows, True, n, l)
    payload.flags.writeable = False          # the key's arrays are views of it from here on
    a = _keyio.parse_arrays(payload, True, n, l, B, 0)
    return DCFKey(party, n, l, (B,), a["seed"], a["cw_seed"], a["cw_t_left"], a["cw_t_right"],
                  a["cw_value"], a["cw_last"], bool(insecure))


def serialized_payload_bits(key: DCFKey) -> int:
    """Bits of the payload of :func:`to_bytes` (without the header)."""
    return key.nbits


def eval_plain(alpha, beta, x, out_bits: int) -> np.ndarray:
    """The plaintext function beta * [x < alpha] mod 2^l (reference for tests)."""
    lt = np.asarray(x, dtype=_U64) < np.asarray(alpha, dtype=_U64)
    return (np.asarray(beta, dtype=_U64) * lt.astype(_U64)) & _util.mask(out_bits)
