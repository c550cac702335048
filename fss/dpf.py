"""Distributed point functions f(x) = beta * [x == alpha] over n-bit inputs, batched.

Construction: Boyle, Gilboa, Ishai, "Function secret sharing: improvements
and extensions", CCS 2016, Figure 1 (tree construction with control bits,
one seed correction word and two control-bit corrections per level, and a
final output correction), with the fixed-key AES PRG of :mod:`fss.prg`.
Inputs are n-bit unsigned integers (1 <= n <= 64), MSB first. Outputs are
shares in the group of :class:`DPFParams`:

- ``group="arith"``: additive shares in Z_2^l, y0 + y1 = beta [x == alpha];
- ``group="xor"``: XOR shares of l-bit strings, y0 ^ y1 = beta [x == alpha].

Keys (:class:`fss.keys.TreeKey` with :class:`DPFParams`, struct of arrays,
level axis first; ``cw_value`` is None, a DCF key has it):

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
threads (results do not depend on it), in the kernels
:func:`fss.kernels.choose` picks; Gen and Eval are those of :mod:`fss.tree`,
shared with the DCF.
Security (CCS 2016, Thm 3.3): one key alone is pseudorandom and independent
of (alpha, beta) assuming a PRG and secret root seeds; keys made from an
explicit seed are flagged ``insecure`` as in :mod:`fss.dcf`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from . import _keyio, _util, kernels, tree
from .keys import DPFParams, TreeKey

__all__ = ["BLOCK", "EVAL_ALL_MAX", "SMALL", "DPFParams", "eval", "eval_all", "from_bytes",
           "gen", "gen_bytes", "instance_payloads", "key_bits", "to_bytes", "wire_bits"]

_U64 = np.uint64
BLOCK = tree.BLOCK
SMALL = tree.SMALL
EVAL_ALL_MAX = 1 << 26  # max points (batch * 2^n) for eval_all


def _params(params: Any) -> DPFParams:
    return tree.check_params(params, DPFParams)


def key_bits(params: DPFParams) -> int:
    """Size in bits of one DPF key (one party, one instance): 128 + 130 n + l."""
    return _params(params).key_bits


def wire_bits(params: DPFParams) -> int:
    """Serialized payload bits of one key (what the dealer sends per instance)."""
    return _params(params).wire_bits


def gen(params: DPFParams, alpha: Any, beta: Any, rng: Any, *,
        workers: int | None = None) -> tuple[TreeKey, TreeKey]:
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
    return tree.gen(_params(params), alpha, beta, rng, workers=workers)


def gen_bytes(params: DPFParams, alpha: Any, beta: Any, rng: Any, *,
              workers: int | None = None) -> tuple[bytes, bytes]:
    """``(to_bytes(k0), to_bytes(k1))`` for the keys :func:`gen` makes, without making them.

    Same arguments, checks and keys as :func:`gen` (the same stream gives the
    same bytes), written block by block into both parties' byte objects
    (:func:`fss.tree.gen_bytes`). Cost: Gen's 4 n AES blocks per instance plus one
    write of each payload.
    """
    return tree.gen_bytes(_params(params), alpha, beta, rng, workers=workers)


def eval(params: DPFParams, party: int, key: TreeKey, x: Any, *,
         workers: int | None = None) -> np.ndarray:
    """Party ``party``'s share of beta * [x == alpha] at ``x`` (key's batch shape, or (m, *shape)).

    Steps: walk x's path, 1 AES block per level (the chosen child only),
    correct with the key when the control bit is set; output
    Convert(s) + t CW^(n+1), negated for party 1 (arith) / XOR (xor).
    Cost: n AES blocks per point; no communication.
    """
    return tree._eval(_params(params), party, key, x, workers)


def eval_all(params: DPFParams, party: int, key: TreeKey) -> np.ndarray:
    """Full-domain evaluation: shares at every x in [0, 2^n), shape (*key.shape, 2^n).

    Expands the whole tree level by level, breadth first (one AES call per level
    for the whole batch; 2 blocks per inner node; the ``expand`` kernel of
    :mod:`fss.kernels`), equal to :func:`eval` at every point. Only for small
    domains: ``batch * 2^n`` must be at most 2^26 (ValueError otherwise).
    Cost: 2^(n+1) AES blocks per key.
    """
    params = _params(params)
    party = _util.check_party(party)
    key = tree.check_key_for(params, party, key)
    n, B = params.n_bits, key.batch
    if n > 26 or B * (1 << n) > EVAL_ALL_MAX:
        raise ValueError(
            f"eval_all needs batch * 2^n_bits <= 2^26, got batch {B} and n_bits {n}"
        )
    y = kernels.expand_kernel()(params, party, key.arrays)
    return y.reshape(tuple(key.shape) + (1 << n,))


def to_bytes(key: TreeKey) -> bytes:
    """Serialize: versioned header (see :mod:`fss._keyio`) + fields; payload = batch * wire_bits."""
    return tree.to_bytes(tree.check_key(key, DPFParams))


def from_bytes(data: Any) -> TreeKey:
    """Parse :func:`to_bytes` output; ``ValueError`` naming the bad field (as
    :func:`fss.dcf.from_bytes`)."""
    return _keyio.from_bytes(data, DPFParams)


def instance_payloads(key: TreeKey) -> np.ndarray:
    """uint8 (batch, wire_bits / 8): the payload of each instance alone (per-instance messages)."""
    return tree.instance_payloads(tree.check_key(key, DPFParams))
