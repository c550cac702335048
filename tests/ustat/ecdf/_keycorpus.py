"""A corpus of malformed ECDF key pairs (issue 39), and how a check's verdict is judged.

Every entry is what one party could upload to the two servers: the two
per-instance key records (bytes, as on the wire, of the servers' length) and
the triple shares. :func:`judge` runs the servers' check
(:func:`ustat.ecdf.keycheck.check_pairs`, after the per-record canonical check
the servers make) and classifies each entry:

* ``detected``: a record is not canonical, or the check fails (dropped);
* ``neutralized``: the check passes and the pair's values at the N thresholds,
  mod 2^l (all the release ever reads), are those of an honest key (a step of
  height 1 at some rank 0..N, or 0): whatever else the key does (off-grid
  points, bits above l) cannot reach a release;
* ``missed``: passes the check but is not an honest key on the grid (must be 0).
"""

from __future__ import annotations

import numpy as np

from fss import dcf
from mpc.arith.rng import CSPRNG
from ustat.ecdf import keycheck
from ustat.ecdf.servers import domain_bits

KINDS = ("weight", "zero_divisor", "two_steps", "beyond_domain", "bit_flip", "other_domain",
         "mismatched", "payload", "bad_triple")


def params_for(n_points: int) -> dcf.DCFParams:
    return dcf.DCFParams(domain_bits(n_points), keycheck.OUT_BITS)


def honest(n: int, n_points: int, rng: CSPRNG, beta=1):
    """(rows (2, n, rec) uint8, triples (2, n, 2, kappa), ranks) of n honest parties."""
    p = params_for(n_points)
    ranks = rng.integers(n_points + 1, (n,)).astype(np.uint64)
    return _rows(p, ranks, beta, rng), ranks


def _alpha(p, ranks):
    return (np.uint64((1 << p.n_bits) - 1) - np.asarray(ranks, np.uint64)).astype(np.uint64)


def _rows(p, ranks, beta, rng):
    k = dcf.gen(p, _alpha(p, ranks), beta, rng)
    return np.stack([dcf.instance_payloads(k[0]), dcf.instance_payloads(k[1])])


def corpus(per_kind: int, n_points: int, ring_bits: int, rng: CSPRNG) -> dict:
    """kind -> (rows (2, m, rec), triples (2, m, 2, kappa)) of malformed entries."""
    p = params_for(n_points)
    kappa = keycheck.sketches(ring_bits)
    m = per_kind
    out = {}

    def trip(count):
        return keycheck.triples(count, kappa, rng)

    ranks = rng.integers(n_points + 1, (m,)).astype(np.uint64)
    w = np.array([0, 2, 1000, -1, -1000, 3, 1 << 20], np.int64)
    out["weight"] = (_rows(p, ranks, w[np.arange(m) % w.size], rng), trip(m))
    z = np.array([1 << (ring_bits - 1), (1 << (ring_bits - 1)) + 1, 1 << (ring_bits // 2),
                  3 << (ring_bits - 2), (1 << 63) + 2], np.uint64)
    out["zero_divisor"] = (_rows(p, ranks, z[np.arange(m) % z.size], rng), trip(m))
    rows = _rows(p, ranks, 1, rng)                   # one value correction moved by +-1, +-2
    out["two_steps"] = (_perturb_values(p, rows, rng), trip(m))
    far = rng.integers(1 << p.n_bits, (m,)).astype(np.uint64)   # any alpha, any weight
    out["beyond_domain"] = (np.stack([dcf.instance_payloads(k) for k in dcf.gen(
        p, far, w[np.arange(m) % w.size], rng)]), trip(m))
    out["bit_flip"] = (_flip(_rows(p, ranks, 1, rng), rng), trip(m))
    out["other_domain"] = (_other_domain(p, ranks, rng, m), trip(m))
    a, b = _rows(p, ranks, 1, rng), _rows(p, rng.integers(n_points + 1, (m,)), 1, rng)
    out["mismatched"] = (np.stack([a[0], b[1]]), trip(m))
    fixed = np.array([2, -1, 6062, 16384 // 3, 7], np.int64)  # label 2, -1, off-grid fractions
    out["payload"] = (_rows(p, ranks, fixed[np.arange(m) % fixed.size], rng), trip(m))
    t = trip(m)                                      # honest keys, c != a^2 (by +-1, 2^31, ...)
    t[1, :, 1] += np.array([1, 2, 1 << 31, 1 << 63], np.uint64)[np.arange(m) % 4, None]
    out["bad_triple"] = (_rows(p, ranks, 1, rng), t)
    return out


def _perturb_values(p, rows, rng):
    """Add +-1 or +-2 to one value correction word (both parties' copies: it is shared) at a
    random level: the pair then adds that amount on a whole subtree (a second step)."""
    m = rows.shape[1]
    lb = (p.out_bits + 7) // 8
    level = rng.integers(p.n_bits + 1, (m,))         # n value words, then cw_last
    off = 16 * (p.n_bits + 1) + 2 * ((p.n_bits + 7) // 8) + lb * level
    delta = np.array([1, 2, -1, -2], np.int64)[np.arange(m) % 4].astype(np.uint64)
    out = rows.copy()
    r = np.arange(m)
    for party in (0, 1):                             # the words sit at the same offset
        w = out[party].view(np.uint8)
        word = np.zeros(m, np.uint64)
        for j in range(8):
            word |= w[r, off + j].astype(np.uint64) << np.uint64(8 * j)
        word += delta
        for j in range(8):
            w[r, off + j] = ((word >> np.uint64(8 * j)) & np.uint64(0xFF)).astype(np.uint8)
    return out


def _flip(rows, rng):
    """1 to 8 random bit flips anywhere in one or both records of each pair."""
    out = rows.copy()
    m, rec = out.shape[1], out.shape[2]
    for i in range(8):                               # up to 8 rounds of flips
        hit = rng.integers(2, (m,)).astype(bool) | (i == 0)
        party = rng.integers(2, (m,))
        pos = rng.integers(rec * 8, (m,))
        r = np.flatnonzero(hit)
        out[party[r], r, pos[r] // 8] ^= (np.uint8(1) << (pos[r] % 8).astype(np.uint8))
    return out


def _other_domain(p, ranks, rng, m):
    """Keys made for a domain of n_bits -3..+3 (or 32-bit outputs), cut or zero-padded to the
    servers' record length (what a fixed-length upload of them delivers)."""
    rec = p.record_bytes
    rows = np.zeros((2, m, rec), np.uint8)
    shifts = np.array([-3, -2, -1, 1, 2, 3, 0])
    for i, sh in enumerate(shifts):                  # a loop over 7 variants, not over keys
        sel = np.flatnonzero(np.arange(m) % shifts.size == i)
        n_bits = max(1, p.n_bits + int(sh))
        q = dcf.DCFParams(n_bits, 32 if sh == 0 else p.out_bits)
        r = np.minimum(ranks[sel], np.uint64((1 << n_bits) - 1))
        k = dcf.gen(q, (np.uint64((1 << n_bits) - 1) - r).astype(np.uint64), 1, rng)
        for party in (0, 1):
            data = dcf.instance_payloads(k[party])[:, :rec]
            rows[party, sel, :data.shape[1]] = data
    return rows


def judge(rows: np.ndarray, trip: np.ndarray, n_points: int, ring_bits: int,
          rng: CSPRNG) -> dict:
    """{"detected", "neutralized", "missed"}: bool (m,) each (module docstring)."""
    p = params_for(n_points)
    ok = dcf.canonical_payloads(rows[0], p) & dcf.canonical_payloads(rows[1], p)
    fill = rows.copy()
    fill[:, ~ok] = 0
    keys = tuple(dcf.from_instance_payloads(fill[b], b, p) for b in (0, 1))
    seeds = rng.uint64((2, 2))
    passed = ok & keycheck.check_pairs(p, keys, trip, n_points, seeds)
    honest_like = valid_on_grid(p, keys, n_points, ring_bits)
    return {"detected": ~passed, "neutralized": passed & honest_like,
            "missed": passed & ~honest_like}


def valid_on_grid(p, keys, n_points: int, ring_bits: int) -> np.ndarray:
    """bool (m,): the pair's values at the N thresholds, mod 2^l, are an honest key's (the
    derivative with both boundaries is one-hot with value 1)."""
    x = (np.uint64((1 << p.n_bits) - 2) - np.arange(n_points, dtype=np.uint64))
    X = np.ascontiguousarray(np.broadcast_to(x[:, None], (n_points, keys[0].batch)))
    s = (dcf.eval(p, 0, keys[0], X) + dcf.eval(p, 1, keys[1], X)) & np.uint64((1 << ring_bits)
                                                                             - 1)
    s = s.astype(np.int64)
    d = np.diff(np.vstack([np.zeros((1, s.shape[1]), np.int64), s,
                           np.ones((1, s.shape[1]), np.int64)]), axis=0)
    return ((d == 0) | (d == 1)).all(axis=0) & ((d == 1).sum(axis=0) == 1)
