"""Gen, Eval and serialization of tree keys (DPF and DCF), one code path for both.

A DCF key is a DPF-shaped key with value correction words (:mod:`fss.keys`),
so generation and evaluation are one walk down the tree for both, batched
over instances, level by level; the key's parameters (:class:`~fss.keys.DCFParams`
or :class:`~fss.keys.DPFParams`) say whether the walk carries value words and
which output group it ends in. :mod:`fss.dcf` and :mod:`fss.dpf` are these
functions with their construction's checks and documentation; the gates'
dealer (:mod:`fss.dealing`) calls them with either parameters.

Steps: Gen draws both parties' root seeds (the first 2 B seeds of ``rng``,
all before any block runs, so keys do not depend on ``workers``), then walks
cache blocks of :data:`BLOCK` instances (a level's working set stays in the
L2 cache), one AES call per level per block, on ``workers`` threads
(:mod:`fss._pool`). Eval walks blocks of :data:`EVAL_BLOCK` points the same
way; a batch that fits one block is one kernel call. The kernel of each block
is the one :func:`fss.kernels.choose` picks (all give the same bits).
Cost (AES blocks): Gen 8 n per DCF instance, 4 n per DPF instance; Eval 2 n
per DCF point, n per DPF point; no communication (the gates count the key
transfer). Threat model: that of the constructions (:mod:`fss.dcf`,
:mod:`fss.dpf`): one key alone is pseudorandom given secret root seeds; keys
from an explicit seed carry ``insecure=True``.
"""

from __future__ import annotations

from typing import Any, TypeVar

import numpy as np

from . import _keyio, _pool, _util, kernels
from .keys import TreeArrays, TreeKey, TreeParams
from .prg import random_seeds

_U64 = np.uint64
#: instances per cache block in Gen
BLOCK = 1 << 13
#: points per cache block in Eval
EVAL_BLOCK = 1 << 14
#: batches of at most this many points may take the scalar kernel
SMALL = kernels.SMALL
P = TypeVar("P", bound=TreeParams)


# -- checks at the public boundary ---------------------------------------------------------------
def check_params(params: Any, family: type[P]) -> P:
    """``params`` if it is a :class:`~fss.keys.DCFParams` / :class:`~fss.keys.DPFParams` of
    ``family`` (:class:`~fss.keys.TreeParams`: either), else TypeError."""
    if not isinstance(params, family) or type(params) is TreeParams:
        want = "DCFParams or DPFParams" if family is TreeParams else family.__name__
        raise TypeError(f"params must be a {want}, got {type(params).__name__}")
    return params


def check_key(key: Any, family: type[TreeParams] = TreeParams) -> TreeKey:
    """``key`` if it is a :class:`~fss.keys.TreeKey` of ``family``, else TypeError."""
    if not isinstance(key, TreeKey) or not isinstance(key.params, family):
        got = f"a {key.params.what}" if isinstance(key, TreeKey) else type(key).__name__
        want = "DCF or DPF key" if family is TreeParams else family.what
        raise TypeError(f"key must be a {want}, got {got}")
    return key


def check_key_for(params: TreeParams, party: int, key: Any) -> TreeKey:
    """``key`` if it is party ``party``'s key of the family ``params``, else TypeError or
    ValueError naming the mismatch."""
    key = check_key(key, type(params))
    if key.params is not params and key.params != params:
        g = "" if params.values else f" ({key.group})"
        want = "" if params.values else f" ({params.group})"
        raise ValueError(
            f"key is for a domain of {key.n_bits} bits and Z_2^{key.out_bits}{g}, "
            f"but params are n_bits={params.n_bits}, out_bits={params.out_bits}{want}")
    if key.party != party:
        raise ValueError(f"key belongs to party {key.party}, not party {party}")
    return key


def _gen_inputs(params: TreeParams, alpha: Any, beta: Any, rng: Any, workers: int | None) -> tuple:
    """Checked inputs of Gen: ``(alpha (B,), beta (B,), batch shape, insecure, roots,
    workers)``, everything checked before the stream is read; ``roots``: the two parties'
    root seeds, uint64 (2, B, 2), the first 2 B seeds of ``rng`` (so :func:`gen` and
    :func:`gen_bytes` with the same stream make the same keys)."""
    alpha = _util.domain_values(alpha, params.n_bits, "alpha")
    beta = _util.ring_values(beta, params.out_bits, "beta")
    try:
        beta = np.broadcast_to(beta, alpha.shape)
    except ValueError:
        raise ValueError(
            f"beta of shape {beta.shape} does not broadcast to alpha's shape {alpha.shape}"
        ) from None
    rng, insecure = _util.check_rng(rng)
    B = alpha.size
    w = _pool.check_workers(workers, B)
    roots = random_seeds(rng, 2 * B).reshape(2, B, 2)
    return (alpha.reshape(B), np.ascontiguousarray(beta).reshape(B), tuple(alpha.shape),
            insecure, roots, w)


# -- generation -----------------------------------------------------------------------------------
def gen(params: TreeParams, alpha: Any, beta: Any, rng: Any, *, workers: int | None = None,
        only: Any = None) -> tuple[TreeKey, TreeKey]:
    """Keys (k0, k1) of the family ``params``, one instance per entry of ``alpha``, beta the
    output at (DPF) or below (DCF) alpha; ``only``: None, or a boolean mask of the batch:
    the keys of those instances only (a batch of their count, in order), made from the root
    seeds the whole batch draws. Arguments as :func:`fss.dcf.gen`."""
    params = check_params(params, TreeParams)
    alpha, beta, shape, insecure, roots, w = _gen_inputs(params, alpha, beta, rng, workers)
    if only is not None:
        sel = np.flatnonzero(np.broadcast_to(np.asarray(only, dtype=bool), shape).reshape(-1))
        alpha, beta, roots, shape = alpha[sel], beta[sel], roots[:, sel], (sel.size,)
    a = gen_batch(params, alpha, beta, roots, workers=w)
    k0, k1 = (TreeKey(party=p, params=params, shape=shape, seed=roots[p], cw_seed=a.cw_seed,
                      cw_t_left=a.cw_t_left, cw_t_right=a.cw_t_right, cw_value=a.cw_value,
                      cw_last=a.cw_last, insecure=insecure) for p in (0, 1))
    return k0, k1


def gen_batch(params: TreeParams, alpha: np.ndarray, beta: np.ndarray, roots: np.ndarray, *,
              workers: int = 1, block: int = 0) -> TreeArrays:
    """Unchecked batched Gen: the arrays of B instances from ``roots`` (2, B, 2), cache
    blocks of ``block`` (default :data:`BLOCK`) instances on ``workers`` threads."""
    block = block or BLOCK
    out = TreeArrays.empty(params, roots)
    kernel = kernels.gen_kernel(alpha.shape[0])

    def one(c0: int) -> None:
        c1 = min(alpha.shape[0], c0 + block)
        kernel(params, alpha[c0:c1], beta[c0:c1], out.block(c0, c1))

    _pool.run_blocks(one, range(0, alpha.shape[0], block), workers)
    return out


def gen_bytes(params: TreeParams, alpha: Any, beta: Any, rng: Any, *,
              workers: int | None = None) -> tuple[bytes, bytes]:
    """``(to_bytes(k0), to_bytes(k1))`` for the keys :func:`gen` makes, without making them.

    Same arguments, checks and keys as :func:`gen` (the same stream gives the
    same bytes; :func:`fss._keyio.from_bytes` reads them back into gen's keys), for
    a dealer that sends its keys: each cache block is generated into scratch
    arrays and copied from the cache into both parties' byte objects, so the
    correction words are written once per party and nothing of size batch x
    key bits exists besides the two outputs (``to_bytes(gen(...))`` writes every
    word three times and holds the arrays, 872 MB for 2^20 DCF keys at n = 32,
    next to the bytes, 735 MB per party). Cost: Gen's AES blocks plus one
    write of each payload; blocks on ``workers`` threads, each writing its own
    byte ranges.
    """
    params = check_params(params, TreeParams)
    alpha, beta, shape, insecure, roots, w = _gen_inputs(params, alpha, beta, rng, workers)
    n, B, block = params.n_bits, alpha.shape[0], BLOCK
    lb, nb = (params.out_bits + 7) // 8, (n + 7) // 8
    heads = [_keyio.header(params, p, insecure, shape) for p in (0, 1)]
    size = len(heads[0]) + B * params.record_bytes
    outs = [_keyio.new_bytes(size) for _ in (0, 1)]
    regions = []                                    # per party: the payload fields' views
    for p, (_, buf) in enumerate(outs):
        buf[:len(heads[p])] = np.frombuffer(heads[p], dtype=np.uint8)
        fields, pos = {}, len(heads[p])
        for name, nbytes in _keyio.field_sizes(params, B):
            rows = {"cw_seed": n, "cw_value": n, "cw_t_left": nb, "cw_t_right": nb}.get(name, 1)
            fields[name] = buf[pos:pos + nbytes].reshape(rows, -1)
            pos += nbytes
        fields["seed"][0] = np.ascontiguousarray(roots[p], dtype="<u8").reshape(-1).view(np.uint8)
        regions.append(fields)
    kernel = kernels.gen_kernel(B)

    def one(c0: int) -> None:
        c1 = min(B, c0 + block)
        b = c1 - c0
        a = TreeArrays.empty(params, roots[:, c0:c1])
        kernel(params, alpha[c0:c1], beta[c0:c1], a)
        seeds = np.ascontiguousarray(a.cw_seed, dtype="<u8").view(np.uint8).reshape(n, 16 * b)
        parts = {"cw_seed": (seeds, 16), "cw_t_left": (_packed_bits(a.cw_t_left, nb), 1),
                 "cw_t_right": (_packed_bits(a.cw_t_right, nb), 1),
                 "cw_last": (_packed_words(a.cw_last.reshape(1, b), lb), lb)}
        if a.cw_value is not None:
            parts["cw_value"] = (_packed_words(a.cw_value, lb), lb)
        for fields in regions:
            for name, (data, per) in parts.items():
                fields[name][:, per * c0:per * c1] = data

    _pool.run_blocks(one, range(0, B, block), w)
    b0, b1 = (obj if obj is not None else buf.tobytes() for obj, buf in outs)
    return b0, b1


def _packed_bits(t: np.ndarray, nb: int) -> np.ndarray:
    dst = np.empty((nb, t.shape[1]), dtype=np.uint8)
    _keyio.put_bits(dst, t)
    return dst


def _packed_words(w: np.ndarray, lb: int) -> np.ndarray:
    """(rows, b) uint64 -> (rows, b lb) uint8: the low lb bytes of each word, little endian."""
    rows, b = w.shape
    dst = np.empty(rows * b * lb, dtype=np.uint8)
    _keyio.put_words(dst, w, lb)
    return dst.reshape(rows, b * lb)


# -- evaluation -----------------------------------------------------------------------------------
def eval(params: TreeParams, party: int, key: TreeKey, x: Any, *,
         workers: int | None = None) -> np.ndarray:
    """Party ``party``'s shares at ``x`` (the key's batch shape, or ``(m, *key.shape)``: m
    points per key), uint64 of x's shape. Arguments and steps as :func:`fss.dcf.eval`."""
    return _eval(check_params(params, TreeParams), party, key, x, workers)


def _eval(params: TreeParams, party: int, key: TreeKey, x: Any, workers: int | None) -> np.ndarray:
    """:func:`eval` for checked ``params`` (:mod:`fss.dcf` and :mod:`fss.dpf` checked them)."""
    party = _util.check_party(party)
    key = check_key_for(params, party, key)
    x = _util.domain_values(x, params.n_bits, "x")
    m = _util.points_per_key(x, tuple(key.shape))
    w = _pool.check_workers(workers, m * key.batch)
    return eval_batch(params, party, key.arrays, x.reshape(m, key.batch), workers=w) \
        .reshape(x.shape)


def eval_batch(params: TreeParams, party: int, key: TreeArrays, x: np.ndarray, *,
               workers: int = 1, block: int = 0) -> np.ndarray:
    """Unchecked batched Eval: shares at x uint64 (m, B) of the B keys ``key``, uint64 (m, B);
    blocks of ``block // m`` keys (default :data:`EVAL_BLOCK` points) on ``workers`` threads,
    one kernel call when the batch fits one block."""
    block = block or EVAL_BLOCK
    m, B = x.shape
    kernel = kernels.eval_kernel(m * B)
    if m * B <= block:
        return kernel(params, party, key, x)
    out = np.empty((m, B), dtype=_U64)
    step = max(1, block // m)

    def one(c0: int) -> None:
        c1 = min(B, c0 + step)
        out[:, c0:c1] = kernel(params, party, key.block(c0, c1), x[:, c0:c1])

    _pool.run_blocks(one, range(0, B, step), workers)
    return out


# -- serialization --------------------------------------------------------------------------------
def to_bytes(key: TreeKey) -> bytes:
    """Serialize a batch of keys: versioned header, then the fields (:mod:`fss._keyio`)."""
    return _keyio.to_bytes(check_key(key))


def instance_payloads(key: TreeKey) -> np.ndarray:
    """uint8 (batch, wire_bits / 8): the payload of each instance alone (per-instance messages)."""
    return _keyio.instance_records(check_key(key))


def from_payload(payload: np.ndarray, params: TreeParams, party: int, shape: tuple, *,
                 insecure: bool = False, per_instance: bool = False) -> TreeKey:
    """Party ``party``'s key of batch ``shape`` from its payload bytes (uint8, what a key
    holder receives: the batch payload of :func:`to_bytes` without its header, or with
    ``per_instance`` the (B, record) rows of :func:`instance_payloads`). Every field is
    validated as by ``from_bytes`` (``ValueError`` naming it); the key's arrays are
    read-only views of the payload. Cost: one pass over the bytes."""
    params = check_params(params, TreeParams)
    party = _util.check_party(party)
    if per_instance:
        payload = _keyio.records_payload(payload, params)
    payload.flags.writeable = False          # the key's arrays are views of it from here on
    return _keyio.key_from_payload(payload, params, party, tuple(shape), bool(insecure))
