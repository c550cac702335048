"""Distributed comparison functions f(x) = beta * [x < alpha] over n-bit inputs, batched.

Construction: Boyle, Chandran, Gilboa, Gupta, Ishai, Kumar, Rathee,
"Function secret sharing for mixed-mode and fixed-point secure computation",
EUROCRYPT 2021, Figure 1 (Gen^<_n, Eval^<_n), with the fixed-key AES PRG of
:mod:`fss.prg`. Inputs are n-bit unsigned integers (1 <= n <= 64) read most
significant bit first; outputs are additive shares in Z_2^l (1 <= l <= 64):
``eval(p, 0, k0, x) + eval(p, 1, k1, x) = beta * [x < alpha] mod 2^l``.

Keys are :class:`fss.keys.TreeKey` with :class:`DCFParams`: the DPF's
struct of arrays (a DCF key is a DPF-shaped key) plus the value corrections,
batched over instances, with the level axis first so that evaluation reads
one contiguous slice per level:

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
dealer that sends its keys needs), without the key arrays (wire format:
:mod:`fss._keyio`).

PRG convention: a node's 128-bit word is its seed with the control bit t
in the low bit; branch x of a node is expanded from ``w ^ x`` (child) and
``w ^ x ^ D`` (value word), see :mod:`fss.prg`. One XOR with a correction
word (s_CW with the chosen t_CW in its low bit) corrects seed and control
bit together; on the two parties' off-path nodes the words are equal, so
they still cancel (the paper's construction with G(s || t) for G(s)).

Cost: Gen 8 AES blocks per level per instance (kept and lost child and
value word for each party), Eval 2 per level (x's child and value word);
one ``encrypt`` call per level per cache block of ``BLOCK`` instances, on
``workers`` threads (:mod:`fss._pool`; results do not depend on it), in the
kernels :func:`fss.kernels.choose` picks (numpy, compiled passes, AES in
registers, or the scalar walk of a few points: the same results;
``benchmarks/fss.py`` reports ``fss_kernels``). Gen and Eval are those of
:mod:`fss.tree`, shared with the DPF. No communication here: the gates in
:mod:`fss.gates` count the key transfer.

Security (EUROCRYPT 2021, Thm 3.2): each key alone is computationally
indistinguishable from a key for any other alpha, beta (its root seed is
uniform, and every correction word is masked by a PRG output the holder
cannot compute), assuming :mod:`fss.prg` is a PRG and the root seeds come
from a secret CSPRNG. Keys generated from an explicit seed (an int, str or
bytes ``rng``, or a seeded :class:`~mpc.arith.rng.CSPRNG`) are reproducible by
anyone who knows the seed: they carry ``insecure=True`` (kept by
serialization), and a raw seed also raises
:class:`fss.InsecureSeedWarning`. Both keys together reveal alpha
and beta.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from . import _keyio, _util, tree
from .keys import DCFParams, TreeKey

__all__ = ["BLOCK", "SMALL", "DCFParams", "canonical_payloads", "eval", "eval_plain", "from_bytes",
           "from_instance_payloads", "gen", "gen_bytes", "instance_payloads", "key_bits",
           "serialized_payload_bits", "to_bytes", "wire_bits"]

_U64 = np.uint64
BLOCK = tree.BLOCK         # instances per cache block in gen (points in eval: tree.EVAL_BLOCK)
SMALL = tree.SMALL


def _params(params: Any) -> DCFParams:
    return tree.check_params(params, DCFParams)


def key_bits(params: DCFParams) -> int:
    """Information bits of one DCF key (one party, one instance): 128 + n (130 + l) + l."""
    return _params(params).key_bits


def wire_bits(params: DCFParams) -> int:
    """Serialized payload bits of one key (what the dealer sends per instance)."""
    return _params(params).wire_bits


# -- generation --------------------------------------------------------------------------
def gen(params: DCFParams, alpha: Any, beta: Any, rng: Any, *, workers: int | None = None,
        only: Any = None) -> tuple[TreeKey, TreeKey]:
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
    return tree.gen(_params(params), alpha, beta, rng, workers=workers, only=only)


def gen_bytes(params: DCFParams, alpha: Any, beta: Any, rng: Any, *,
              workers: int | None = None) -> tuple[bytes, bytes]:
    """``(to_bytes(k0), to_bytes(k1))`` for the keys :func:`gen` makes, without making them.

    Same arguments, checks and keys as :func:`gen` (the same stream gives the
    same bytes; :func:`from_bytes` reads them back into gen's keys), for a
    dealer that sends its keys: each cache block is generated into scratch
    arrays and written into both parties' byte objects, so nothing but the two
    outputs (``wire_bits / 8`` bytes per instance each) is allocated
    (:func:`fss.tree.gen_bytes`). Cost: Gen's 8 n AES blocks per instance plus one
    write of each payload.
    """
    return tree.gen_bytes(_params(params), alpha, beta, rng, workers=workers)


# -- evaluation -------------------------------------------------------------------------
def eval(params: DCFParams, party: int, key: TreeKey, x: Any, *,
         workers: int | None = None) -> np.ndarray:
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
    return tree._eval(_params(params), party, key, x, workers)


# -- serialization -------------------------------------------------------------------------
def to_bytes(key: TreeKey) -> bytes:
    """Serialize a batch of keys: versioned header, then the fields (see :mod:`fss._keyio`).

    Payload bytes = batch * wire_bits / 8; the header (16 + 8 ndim bytes)
    holds only public parameters (party, n, l, shape, the insecure flag).
    """
    return tree.to_bytes(tree.check_key(key, DCFParams))


def from_bytes(data: Any) -> TreeKey:
    """Parse :func:`to_bytes` output; ``ValueError`` naming the bad field if malformed.

    Every header field is checked (magic, version, party, n, l, flags,
    reserved bytes, shape: batch at most 2^40, length exactly header plus
    payload), and the payload must be canonical (seed control-bit positions
    0, padding bits 0, values below 2^l), so that every byte string either
    is rejected or parses to the unique key that serializes to it.
    """
    return _keyio.from_bytes(data, DCFParams)


def instance_payloads(key: TreeKey) -> np.ndarray:
    """uint8 (batch, wire_bits / 8): the payload of each instance alone (per-instance messages)."""
    return tree.instance_payloads(tree.check_key(key, DCFParams))


def from_instance_payloads(rows: Any, party: int, params: DCFParams, *,
                           insecure: bool = False) -> TreeKey:
    """Party ``party``'s batch key from B per-instance payloads (the rows of
    :func:`instance_payloads`: what B key owners send, one message each).

    ``rows``: uint8 ``(B, wire_bits / 8)``. Every field is validated as by
    :func:`from_bytes` (``ValueError`` naming it); the key's arrays are
    read-only. ``insecure``: the flag of the keys (not carried per instance).
    Cost: one pass over the bytes.
    """
    params = _params(params)
    rows = np.asarray(rows)
    if rows.dtype != np.uint8 or rows.ndim != 2:
        raise TypeError(f"rows must be a 2-d uint8 array, got {rows.dtype} of shape {rows.shape}")
    return tree.from_payload(rows, params, party, (rows.shape[0],), insecure=insecure,
                             per_instance=True)


def canonical_payloads(rows: Any, params: DCFParams) -> np.ndarray:
    """bool (B,): which per-instance payloads (rows of :func:`instance_payloads`) pass the
    checks :func:`from_instance_payloads` makes on the whole batch (canonical seeds, padding
    bits, values below 2^l), so that a receiver of B owners' messages can set aside one
    owner's malformed record instead of refusing them all. Cost: one pass over a few bytes
    per field."""
    params = _params(params)
    rows = np.asarray(rows)
    if rows.dtype != np.uint8 or rows.ndim != 2 or rows.shape[1] != params.record_bytes:
        raise TypeError(f"rows must be uint8 (B, {params.record_bytes}), got {rows.dtype} of "
                        f"shape {rows.shape}")
    return _keyio.canonical_records(rows, params)


def serialized_payload_bits(key: TreeKey) -> int:
    """Bits of the payload of :func:`to_bytes` (without the header)."""
    return tree.check_key(key, DCFParams).nbits


def eval_plain(alpha: Any, beta: Any, x: Any, out_bits: int) -> np.ndarray:
    """The plaintext function beta * [x < alpha] mod 2^l (reference for tests)."""
    lt = np.asarray(x, dtype=_U64) < np.asarray(alpha, dtype=_U64)
    return (np.asarray(beta, dtype=_U64) * lt.astype(_U64)) & _util.mask(out_bits)
