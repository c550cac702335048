"""Verifiable DCF keys: the two ECDF servers check that each party's key pair is one step.

What is checked
---------------
Party i's key pair defines s_i(k) = y0(k) + y1(k) at the N thresholds
k = 0..N-1 (the points :class:`~ustat.ecdf.servers.FSSServers` evaluates).
Honest: s_i(k) = beta_i [alpha_i <= k] with beta_i in {0, 1} (1 for an ECDF,
a quantile and Hosmer-Lemeshow's probabilities, the 0/1 label for a ROC
class ECDF) and alpha_i in 0..N (N: above the grid). Its derivative with both
boundaries,

    d_0 = s(0),  d_k = s(k) - s(k-1) (0 < k < N),  d_N = 1 - s(N-1),

sums to 1 by construction, and is one-hot (value 1) exactly when s is a step
of height 1 at some alpha in 0..N or (payload 0: a label-0 key) identically 0
(then d = e_N, the same as a step above the grid). So one check covers the
weight (0, 2, 1000, negative: d_N != 0, 1), two steps, a non-monotone s, a
label other than 0/1 and, for Hosmer-Lemeshow, a probability that is not a
step on the public grid. Points outside the grid are never evaluated: what a
key does there cannot reach a release ("neutralized").

The sketch (Poplar1's, draft-irtf-cfrg-vdaf): with a coin r in Z_2^L^(N+1)
that no party knew when it made its keys, A = sum r_k d_k and
B = sum r_k^2 d_k are linear in the keys' outputs, so each server computes
its share of both locally (one matrix product over the evaluations). For a
one-hot d, A^2 = B. To test A^2 = B without opening A (= r_alpha: it would
give alpha away) the party uploads, with its keys, shares of a uniform a and
of c = a^2: the servers open u = A + a (uniform: hides A), then open
z = u^2 - 2 u a + c - B = A^2 - B + (c - a^2) and keep the key iff z = 0.
Honest keys always pass (z = 0 exactly), so the drop decision is a function
of the malicious parties' keys only and reveals nothing about an honest
party's value: DP holds for every honest party whatever the others send.

Soundness over a ring. The keys' outputs live in Z_2^L with L = 64
(:data:`OUT_BITS`), the counts in Z_2^l (l = the session's ring bits,
sigma = L - l >= :data:`MIN_SIGMA`): the release reads every sum mod 2^l, so a
key whose derivative is one-hot mod 2^l (whatever the bits above) is
neutralized. If d mod 2^l is not one-hot, then (all d sum to 1) some d_j mod
2^l is not in {0, 1}, so e_j = d_j^2 - d_j has 2-adic valuation below l (one
of d_j, d_j - 1 is odd). Fixing the other coins, z is a quadratic in r_j with
coefficient e_j; dividing by the lowest power of 2 among its coefficients
leaves a quadratic with a unit coefficient modulo 2^k, k >= sigma + 1, which
has at most 4 * 2^(k/2) roots (t^2 = Delta mod 2^k has at most that many; a
unit linear coefficient gives at most 2 by Hensel; a unit constant none). So
one sketch passes a bad key with probability <= 2^(2 - (sigma + 1)/2)
whatever the party's triple error c - a^2 (fixed before r); the servers run
:func:`sketches` independent sketches (3 at l = 32, 7 at l = 48), for at most
2^-40 per bad key. (Over Z_2^l alone a zero divisor such as d_j = 2^(l-1)
would pass one sketch with probability 1/2: hence the 64-bit outputs.)

The coin: each server draws a 128-bit seed from its own stream and sends it
to the other in the round that carries the keys (no extra round); r expands
the XOR of the two seeds. A party never sees either seed (private channels)
and its keys are fixed when it sends them, so it cannot aim its keys at r.
Robustness assumes, like VDAF's, that the servers do not help parties (a
server that gives its seed to a party before the upload lets that party
forge); privacy does not depend on it.

Cost (measured by ``benchmarks/ecdf.py``: ``verify_*``): per key and server
one evaluation at each of the N thresholds (what a full-curve query costs;
the sums at all N thresholds come out of the same pass and answer later
queries, :class:`~ustat.ecdf.servers.FSSServers`), 2 kappa multiply-adds per
evaluation, and a re-evaluation of the dropped keys only. Traffic: the upload
grows by 2 kappa 64-bit words per party and server (the triple) and the
keys' values by 64 - l bits per level; between the servers 2 rounds of
n kappa 64-bit words each way (u, then z), plus one 64-bit message to the
analyst (the count of dropped keys). Threat model: malicious parties,
semi-honest non-colluding servers (as :mod:`ustat.ecdf.servers`).
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Any

import numpy as np

from fss import dcf
from mpc.arith.rng import CSPRNG

__all__ = ["MIN_SIGMA", "OUT_BITS", "check_pairs", "check_shares", "chunked_evals", "coin",
           "decide", "open_shares", "server_pass", "sketch_weights", "sketches", "triples"]

_U64 = np.uint64
#: the bits of the keys' outputs when they are verified (Z_2^64)
OUT_BITS = 64
#: at least this many bits above the ring's l (bounds one sketch's error)
MIN_SIGMA = 16
#: the target error per bad key: 2^-SECURITY
SECURITY = 40


def sketches(ring_bits: int) -> int:
    """kappa: independent sketches for an error <= 2^-40 per bad key with counts in
    Z_2^ring_bits (one sketch errs with probability <= 2^(2 - (sigma + 1)/2),
    sigma = 64 - ring_bits); ``ValueError`` when sigma < :data:`MIN_SIGMA`."""
    sigma = OUT_BITS - int(ring_bits)
    if sigma < MIN_SIGMA:
        raise ValueError(f"verify_keys needs bits <= {OUT_BITS - MIN_SIGMA} (the check runs in "
                         f"Z_2^{OUT_BITS} with {MIN_SIGMA} bits to spare), got bits = {ring_bits}")
    return math.ceil(SECURITY / ((sigma + 1) / 2 - 2))


def triples(n: int, kappa: int, rng: CSPRNG) -> np.ndarray:
    """The parties' side: uint64 (2, n, 2, kappa), server b's shares [b] of (a, a^2) per
    party and sketch, a uniform in Z_2^64. Cost: 6 n kappa random words."""
    a = rng.uint64((n, kappa))
    c = a * a
    s0 = rng.uint64((n, 2, kappa))
    s1 = np.stack([a, c], axis=1) - s0
    return np.stack([s0, s1])


def coin(seed0: np.ndarray, seed1: np.ndarray, kappa: int, n_points: int) -> np.ndarray:
    """The joint coin r: uint64 (kappa, N + 1) from the XOR of the two servers' 128-bit
    seeds (uint64 (2,) each)."""
    key = (np.asarray(seed0, _U64) ^ np.asarray(seed1, _U64)).tobytes()
    return CSPRNG(key).derive("ecdf key check coin").uint64((kappa, int(n_points) + 1))


def sketch_weights(r: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(W, tail): A = sum_k s(k) W[k, :kappa] + tail[:kappa] and B likewise with columns
    kappa..2 kappa: W[k] = (r_k - r_{k+1}, r_k^2 - r_{k+1}^2), tail = (r_N, r_N^2)
    (summation by parts of sum_k r_k d_k with d's boundaries). uint64 (N, 2 kappa), (2 kappa,)."""
    r2 = r * r
    both = np.concatenate([r, r2])                      # (2 kappa, N + 1)
    W = (both[:, :-1] - both[:, 1:]).T.copy()
    return W, both[:, -1].copy()


def open_shares(party: int, ab: np.ndarray, tail: np.ndarray, trip: np.ndarray) -> np.ndarray:
    """Server ``party``'s share of u = A + a (uint64 (n, kappa)); ``ab``: its (n, 2 kappa)
    sums s(k) W[k] over its evaluations, ``trip``: its (n, 2, kappa) triple shares (any
    leading axes: (..., 2 kappa), (..., 2 kappa) tail, (..., 2, kappa); any number of
    servers, additive shares: only server 0 adds the tail)."""
    kappa = trip.shape[-1]
    A = ab[..., :kappa] + (tail[..., :kappa] if party == 0 else _U64(0))
    return A + trip[..., 0, :]


def check_shares(party: int, ab: np.ndarray, tail: np.ndarray, trip: np.ndarray,
                 u: np.ndarray) -> np.ndarray:
    """Server ``party``'s share of z = u^2 - 2 u a + c - B (uint64 (n, kappa)); ``u``: the
    opened u (both servers' shares summed)."""
    kappa = trip.shape[-1]
    B = ab[..., kappa:] + (tail[..., kappa:] if party == 0 else _U64(0))
    z = trip[..., 1, :] - B - _U64(2) * u * trip[..., 0, :]
    return z + u * u if party == 0 else z


def decide(z0: np.ndarray, z1: np.ndarray) -> np.ndarray:
    """bool (n,): the keys that pass (z = 0 in every sketch)."""
    return np.all(z0 + z1 == 0, axis=1)


def chunked_evals(params: dcf.DCFParams, party: int, key: Any, idx: np.ndarray, chunk: int,
                  workers: int | None = None) -> Iterator[tuple[int, int, np.ndarray]]:
    """Server ``party``'s DCF shares of ``key``'s instances at threshold indices ``idx``
    (x = D - 2 - k), by chunks of about ``chunk`` evaluations: (q0, q1, uint64 (q1 - q0,
    batch)). Cost: one DCF eval per (index, instance)."""
    Q, n = idx.size, key.batch
    x_all = (np.uint64((1 << params.n_bits) - 2) - idx.astype(np.uint64))
    step = max(1, chunk // max(n, 1))
    for q0 in range(0, Q, step):                    # chunks of queries (memory bound)
        q1 = min(Q, q0 + step)
        x = np.ascontiguousarray(np.broadcast_to(x_all[q0:q1, None], (q1 - q0, n)))
        yield q0, q1, dcf.eval(params, party, key, x, workers=workers)


def server_pass(params: dcf.DCFParams, party: int, key: Any, W: np.ndarray, chunk: int,
                workers: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """One server's pass over all N thresholds: (its (n, 2 kappa) sketch sums s(k) W[k] per
    key, its (N,) sums over the keys at every threshold), both in Z_2^64."""
    N = W.shape[0]
    ab = np.zeros((key.batch, W.shape[1]), np.uint64)
    sums = np.empty(N, np.uint64)
    for q0, q1, y in chunked_evals(params, party, key, np.arange(N), chunk, workers):
        sums[q0:q1] = y.sum(axis=1, dtype=np.uint64)
        ab += y.T @ W[q0:q1]
    return ab, sums


def check_pairs(params: dcf.DCFParams, keys: tuple, trip: np.ndarray, n_points: int,
                seeds: np.ndarray, chunk: int = 1 << 22, workers: int | None = None) -> np.ndarray:
    """bool (B,): the check of B key pairs with their triples (uint64 (2, B, 2, kappa)),
    both servers in one place and nothing counted (tests, benchmarks; the servers run
    the same steps with the rounds between them, :class:`~ustat.ecdf.servers.FSSServers`).
    ``seeds``: uint64 (2, 2), the servers' coin seeds; ``workers``: threads of each eval."""
    kappa = trip.shape[-1]
    W, tail = sketch_weights(coin(seeds[0], seeds[1], kappa, n_points))
    ab = [server_pass(params, b, keys[b], W, chunk, workers)[0] for b in (0, 1)]
    u = open_shares(0, ab[0], tail, trip[0]) + open_shares(1, ab[1], tail, trip[1])
    return decide(check_shares(0, ab[0], tail, trip[0], u),
                  check_shares(1, ab[1], tail, trip[1], u))
