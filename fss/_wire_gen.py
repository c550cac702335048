"""Key generation straight into the wire format (internal; :func:`fss.dcf.gen_bytes`,
:func:`fss.dpf.gen_bytes`).

A dealer that sends its keys needs the serialized bytes, not the key arrays.
``to_bytes(k) for k in gen(...)`` writes every correction word three times
(the key arrays, then each party's bytes) and holds the arrays (872 MB for
2^20 DCF keys at n = 32) next to the bytes (735 MB per party). Here each
cache block of instances is generated into small scratch arrays by the same
:func:`fss._tree.gen_block` and copied from the cache into both parties'
byte objects, so the correction words are written once per party and
nothing of size batch x key bits exists besides the two outputs. The bytes
are those of :func:`fss._keyio.to_bytes` on the keys of ``gen`` with the
same root seeds (tested), so ``from_bytes`` reads them back into those keys.

Cost: that of Gen (8 n AES blocks per DCF instance, 4 n per DPF instance)
plus writing the two payloads; blocks run on ``workers`` threads
(:mod:`fss._pool`), each writing its own byte ranges.
"""

from __future__ import annotations

import numpy as np

from . import _keyio, _pool, _tree

_U64 = np.uint64


def gen_bytes(mode: str, n: int, l: int, alpha, beta, roots, shape: tuple, insecure: bool,
              workers: int = 1, block: int = 0) -> tuple:
    """``(bytes of party 0, bytes of party 1)``: ``_keyio.to_bytes`` of the keys that
    ``_tree.gen_batch(n, l, mode, alpha, beta, roots)`` makes (unchecked arguments:
    ``alpha``, ``beta`` uint64 (B,), ``roots`` uint64 (2, B, 2), ``shape`` the batch shape)."""
    dcf = mode == "dcf"
    group = "arith" if dcf else mode
    block = block or _tree.BLOCK
    B = alpha.shape[0]
    lb, nb = (l + 7) // 8, (n + 7) // 8
    heads = [_keyio.header(dcf, p, n, l, group, insecure, shape) for p in (0, 1)]
    size = len(heads[0]) + B * _keyio.record_bytes(dcf, n, l)
    outs = [_keyio.new_bytes(size) for _ in (0, 1)]
    regions = []                                    # per party: the payload fields' views
    for p, (_, buf) in enumerate(outs):
        buf[:len(heads[p])] = np.frombuffer(heads[p], dtype=np.uint8)
        fields, pos = {}, len(heads[p])
        for name, nbytes in _keyio.field_sizes(dcf, n, l, B):
            rows = {"cw_seed": n, "cw_value": n, "cw_t_left": nb, "cw_t_right": nb}.get(name, 1)
            fields[name] = buf[pos:pos + nbytes].reshape(rows, -1)
            pos += nbytes
        fields["seed"][0] = np.ascontiguousarray(roots[p], dtype="<u8").reshape(-1).view(np.uint8)
        regions.append(fields)

    def one(c0):
        c1 = min(B, c0 + block)
        b = c1 - c0
        cw_seed = np.empty((n, b, 2), dtype=_U64)
        cw_tl = np.empty((n, b), dtype=np.uint8)
        cw_tr = np.empty((n, b), dtype=np.uint8)
        cw_v = np.empty((n, b), dtype=_U64) if dcf else None
        last = _tree.gen_block(n, l, mode, alpha[c0:c1], beta[c0:c1], roots[:, c0:c1],
                               cw_seed, cw_tl, cw_tr, cw_v)
        seeds = np.ascontiguousarray(cw_seed, dtype="<u8").view(np.uint8).reshape(n, 16 * b)
        parts = {"cw_seed": (seeds, 16),
                 "cw_t_left": (_packed_bits(cw_tl, nb, b), 1),
                 "cw_t_right": (_packed_bits(cw_tr, nb, b), 1),
                 "cw_last": (_packed_words(last.reshape(1, b), lb), lb)}
        if dcf:
            parts["cw_value"] = (_packed_words(cw_v, lb), lb)
        for fields in regions:
            for name, (data, per) in parts.items():
                fields[name][:, per * c0:per * c1] = data

    _pool.run_blocks(one, range(0, B, block), workers)
    return tuple(obj if obj is not None else buf.tobytes() for obj, buf in outs)


def _packed_bits(t: np.ndarray, nb: int, b: int) -> np.ndarray:
    dst = np.empty((nb, b), dtype=np.uint8)
    _keyio.put_bits(dst, t)
    return dst


def _packed_words(w: np.ndarray, lb: int) -> np.ndarray:
    """(rows, b) uint64 -> (rows, b lb) uint8: the low lb bytes of each word, little endian."""
    rows, b = w.shape
    dst = np.empty(rows * b * lb, dtype=np.uint8)
    _keyio.put_words(dst, w, lb)
    return dst.reshape(rows, b * lb)
