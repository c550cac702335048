"""Verified Hosmer-Lemeshow contributions: the servers check each (4, Q) vector on its shares.

What is checked
---------------
Step 3 of :mod:`ustat.ecdf.hosmer_lemeshow`: party i sends additive shares of
its contribution v = (E1, E0, O1, O0), each a Q-vector, to the m servers.
Honest: v = (P g, (2^c - P) g, y g, (1 - y) g) with g = e_q one-hot over the
Q groups, y in {0, 1} and P = round(p 2^c) in 0..2^c (c = ``frac_bits``). With
``verify`` (the family's ``verify_keys``) the party also shares the bits
x_0..x_c of P and x'_0..x'_c of 2^c - P (a witness: J = 2 (c + 1) words) and
correlated randomness; all shares are in Z_2^64 (:data:`keycheck.OUT_BITS`),
the sums read mod 2^l. The servers check, without learning v:

* linear, opened as kappa random combinations rho (zero for an honest party,
  so they reveal nothing): sum(O1 + O0) = 1; E1_q + E0_q = 2^c (O1_q + O0_q)
  for every q; sum 2^j x_j + sum 2^j x'_j = 2^c;
* O = (O1, O0) (2Q entries) one-hot: Poplar1's sketch A^2 = B of
  :mod:`ustat.ecdf.keycheck` with the party's triple (a, a^2);
* every x_j, x'_j a bit: the same sketch on the pair (x, 1 - x) (the key check
  with N = 1);
* E1_q = P (O1_q + O0_q): with a coin t, sum_q t_q E1_q = P sum_q t_q G_q, a
  product of two shared values by a Beaver triple the party supplies
  (a2, b, a2 b): the servers open u2 = A_G + a2 and v = P + b.

A vector that passes is, mod 2^l, an honest one: O one-hot at (q, y) (the keycheck
argument; the linear check gives the sum 1), P and 2^c - P integers in
[0, 2^(c+1)) summing to 2^c (no wrap: c + 2 <= l) so P in [0, 2^c], E1 = P g
and E0 = (2^c - P) g. Its influence on the sums is that of one record (L1 4
after a replacement), which is all the DP accounting uses; a party can still
choose its (p, y, group) freely (input substitution, as for any valid input).

Soundness over the ring (as :mod:`ustat.ecdf.keycheck`). The sketches' error
per check is <= 2^(2 - (sigma + 1)/2) (quadratic in the coin); the linear and
product checks are linear in the coin: a coefficient of 2-adic valuation w < l
is zero for at most 2^w of 2^64 coins, <= 2^-(sigma + 1). The party's triple
errors are constants fixed before the coin, so they cannot cancel a failing
check. With kappa = :func:`keycheck.sketches` repetitions each check errs with
probability <= 2^-40; a union over the 2 + J + 2 = 38 checks (c = 16): < 2^-34.7 per
bad vector.
The coin is the XOR of one 128-bit seed per server, exchanged in the upload
round (no extra round); parties never see it.

Privacy: an honest party's opened values are u = A + a, u2 = A_G + a2 and
v = P + b with uniform a, a2, b (uniform), and the combinations and z's, which
are 0. Honest vectors always pass (exactly), so the drop decision is a
function of the malicious parties' uploads only: DP holds for every honest party.

Cost per party and server: 64 (4Q + J + (5 + 2J) kappa) bits uploaded instead
of l 4Q (kappa = 7 at l = 48, c = 16: J = 34, 4Q + 34 + 511 words); between the
servers 2 rounds: (4 + J) kappa then (2 + J) kappa 64-bit words per party each
way; O(n (4Q + J) kappa) word operations per server, batched. Threat model:
malicious parties, semi-honest non-colluding servers (as the sums).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from mpc.arith.rng import CSPRNG

from . import keycheck

if TYPE_CHECKING:
    from mpc.session import Session

__all__ = ["HLCoin", "check_shares", "check_vectors", "coin", "decide", "layout",
           "opened_shares", "party_upload", "triple_words", "witness_words"]

_U64 = np.uint64


def witness_words(frac_bits: int) -> int:
    """J: the bits of P and of 2^c - P (2 (c + 1))."""
    return 2 * (int(frac_bits) + 1)


def triple_words(frac_bits: int) -> int:
    """Correlated words per sketch: (a, a^2), (a2, b, a2 b) and (a_j, a_j^2) per witness bit."""
    return 5 + 2 * witness_words(frac_bits)


def layout(groups: int, frac_bits: int) -> int:
    """The width of a party's shared vector w = (v (4Q), x (c + 1), x' (c + 1))."""
    return 4 * int(groups) + witness_words(frac_bits)


def party_upload(contrib: np.ndarray, P: np.ndarray, frac_bits: int, kappa: int,
                 rng: CSPRNG) -> np.ndarray:
    """The parties' side, before sharing: uint64 (n, W + T kappa), each party's w (its (4, Q)
    ``contrib`` flattened, then the bits of ``P`` and of 2^c - P) and its correlated words
    (T = :func:`triple_words`, in Z_2^64). Cost: (2 + J + 1) kappa random words per party."""
    n, c = contrib.shape[0], int(frac_bits)
    J = witness_words(c)
    j = np.arange(c + 1, dtype=np.int64)
    P = np.asarray(P, np.int64)
    bits = np.concatenate([(P[:, None] >> j) & 1, (((1 << c) - P)[:, None] >> j) & 1], axis=1)
    a = rng.uint64((n, 2 + J, kappa))
    b = rng.uint64((n, kappa))
    trip = np.concatenate([a[:, :1], (a[:, 0] * a[:, 0])[:, None], a[:, 1:2], b[:, None],
                           (a[:, 1] * b)[:, None],
                           np.stack([a[:, 2:], a[:, 2:] * a[:, 2:]], axis=2).reshape(n, 2 * J,
                                                                                     kappa)],
                          axis=1)
    w = np.concatenate([contrib.reshape(n, -1), bits], axis=1).astype(np.int64).view(_U64)
    return np.concatenate([w, trip.reshape(n, -1)], axis=1)


@dataclass(frozen=True)
class HLCoin:
    """The servers' joint coin, as the matrices each applies to its shares (all uint64)."""

    groups: int
    frac_bits: int
    kappa: int
    lin: np.ndarray         # (W, kappa): the linear combinations rho
    lin_const: np.ndarray   # (kappa,): their constant (server 0 adds it)
    onehot: np.ndarray      # (2Q, 2 kappa): (r, r^2) for A, B over O
    t: np.ndarray           # (Q, kappa): the product check's coin
    bits_w: np.ndarray      # (J, 2 kappa): keycheck's W for each bit's pair (x, 1 - x)
    bits_tail: np.ndarray   # (J, 2 kappa): and its tail


def coin(seeds: np.ndarray, groups: int, frac_bits: int, kappa: int) -> HLCoin:
    """The coin from the m servers' 128-bit seeds (uint64 (m, 2), XORed): see the module."""
    Q, c = int(groups), int(frac_bits)
    J, W = witness_words(c), layout(Q, c)
    seeds = np.asarray(seeds, _U64)
    xor = np.bitwise_xor.reduce(seeds[:-1], axis=0) if seeds.shape[0] > 1 else np.zeros(2, _U64)
    raw = keycheck.coin(xor, seeds[-1], kappa, (Q + 2) + 2 * Q + Q + 2 * J - 1)  # (kappa, K)
    rho, r, t, rb = np.split(raw, np.cumsum([Q + 2, 2 * Q, Q]), axis=1)
    lin = np.zeros((W, kappa), _U64)
    pow2 = (_U64(1) << np.arange(c + 1, dtype=_U64))
    for sl in (slice(0, Q), slice(Q, 2 * Q)):          # E1, E0: rho_q
        lin[sl] += rho[:, 1:Q + 1].T
    for sl in (slice(2 * Q, 3 * Q), slice(3 * Q, 4 * Q)):             # O1, O0: rho_0 - 2^c rho_q
        lin[sl] += rho[:, :1].T - (_U64(1) << _U64(c)) * rho[:, 1:Q + 1].T
    lin[4 * Q:] += np.concatenate([pow2, pow2])[:, None] * rho[:, Q + 1][None, :]
    lin_const = _U64(0) - rho[:, 0] - (_U64(1) << _U64(c)) * rho[:, Q + 1]
    onehot = np.concatenate([r, r * r]).T.copy()
    pairs = rb.reshape(kappa, J, 2)
    ws, tails = zip(*(keycheck.sketch_weights(pairs[:, j, :]) for j in range(J)))  # J setups
    return HLCoin(Q, c, kappa, lin, lin_const, onehot, t.T.copy(),
                  np.concatenate(ws), np.stack(tails))


def _parts(co: HLCoin, share: np.ndarray):
    """A server's share split: w (n, W) and its triples (n, T, kappa)."""
    W = layout(co.groups, co.frac_bits)
    return share[:, :W], share[:, W:].reshape(share.shape[0], -1, co.kappa)


def _sketch_sums(co: HLCoin, w: np.ndarray):
    Q, c = co.groups, co.frac_bits
    ab_o = w[:, 2 * Q:4 * Q] @ co.onehot                                  # (n, 2 kappa)
    x = w[:, 4 * Q:]
    ab_bits = x[:, :, None] * co.bits_w[None]                             # (n, J, 2 kappa)
    a_g = (w[:, 2 * Q:3 * Q] + w[:, 3 * Q:4 * Q]) @ co.t                  # (n, kappa)
    pow2 = _U64(1) << np.arange(c + 1, dtype=_U64)
    P = x[:, :c + 1] @ pow2                                               # (n,)
    return ab_o, ab_bits, a_g, P


def opened_shares(party: int, co: HLCoin, share: np.ndarray) -> np.ndarray:
    """Round 1, server ``party``'s message: uint64 (n, (4 + J) kappa), its shares of the
    linear combinations, u = A + a (O), u2 = A_G + a2, v = P + b, and u per witness bit.
    ``share``: its (n, W + T kappa) upload shares."""
    w, trip = _parts(co, share)
    n, J = w.shape[0], witness_words(co.frac_bits)
    ab_o, ab_bits, a_g, P = _sketch_sums(co, w)
    lin = w @ co.lin + (co.lin_const if party == 0 else _U64(0))
    zero = np.zeros(2 * co.kappa, _U64)
    u_o = keycheck.open_shares(party, ab_o, zero, trip[:, 0:2])
    u_g = a_g + trip[:, 2]
    v = P[:, None] + trip[:, 3]
    u_bits = keycheck.open_shares(party, ab_bits, co.bits_tail,
                                  trip[:, 5:].reshape(n, J, 2, co.kappa))
    return np.concatenate([lin, u_o, u_g, v, u_bits.reshape(n, -1)], axis=1)


def check_shares(party: int, co: HLCoin, share: np.ndarray, opened: np.ndarray) -> np.ndarray:
    """Round 2, server ``party``'s message: uint64 (n, (2 + J) kappa), its shares of
    z = A^2 - B (O and each bit) and of P A_G - sum_q t_q E1_q; ``opened``: round 1 summed
    over the servers."""
    w, trip = _parts(co, share)
    n, J, k, Q = w.shape[0], witness_words(co.frac_bits), co.kappa, co.groups
    ab_o, ab_bits, _, _ = _sketch_sums(co, w)
    u_o, u_g, v = opened[:, k:2 * k], opened[:, 2 * k:3 * k], opened[:, 3 * k:4 * k]
    u_bits = opened[:, 4 * k:].reshape(n, J, k)
    z_o = keycheck.check_shares(party, ab_o, np.zeros(2 * k, _U64), trip[:, 0:2], u_o)
    z_bits = keycheck.check_shares(party, ab_bits, co.bits_tail,
                                   trip[:, 5:].reshape(n, J, 2, k), u_bits)
    prod = trip[:, 4] - u_g * trip[:, 3] - v * trip[:, 2] + (u_g * v if party == 0 else _U64(0))
    z_g = prod - w[:, :Q] @ co.t
    return np.concatenate([z_o, z_g, z_bits.reshape(n, -1)], axis=1)


def decide(opened: np.ndarray, z: np.ndarray, kappa: int) -> np.ndarray:
    """bool (n,): the vectors that pass (the linear combinations and every z are 0);
    ``opened``, ``z``: the two rounds summed over the servers."""
    return np.all(opened[:, :kappa] == 0, axis=1) & np.all(z == 0, axis=1)


def check_vectors(shares: np.ndarray, seeds: np.ndarray, groups: int, frac_bits: int,
                  kappa: int) -> np.ndarray:
    """bool (n,): the check of n uploads (uint64 (m, n, W + T kappa), additive in Z_2^64),
    all servers in one place and nothing counted (tests, benchmarks; the servers run the
    same steps with the rounds between them, :mod:`ustat.ecdf.hosmer_lemeshow`)."""
    co = coin(seeds, groups, frac_bits, kappa)
    m = shares.shape[0]
    opened = _total([opened_shares(b, co, shares[b]) for b in range(m)])
    z = _total([check_shares(b, co, shares[b], opened) for b in range(m)])
    return decide(opened, z, kappa)


#: parties per batch of the servers' check (bounds memory: ~ 8 (4 + 3 J) kappa bytes each)
CHUNK = 4096


def _by_chunks(fn, *arrays) -> np.ndarray:
    """``fn`` over row chunks of ``arrays`` (memory bound), rows concatenated."""
    n = arrays[0].shape[0]
    return np.concatenate([fn(*(a[i:i + CHUNK] for a in arrays)) for i in range(0, max(n, 1),
                                                                                  CHUNK)])


def verified_shares(session: Session, contrib: np.ndarray, P: np.ndarray, frac_bits: int,
                    rng: CSPRNG) -> tuple[np.ndarray, np.ndarray, int]:
    """Step 3 with the check, in a session (phase ``hl input check``): the parties upload
    their shares in Z_2^64 (1 round, with the servers' coin seeds), the servers open the
    round-1 values, then the z's (2 rounds between the servers), drop the vectors that fail
    and server 0 tells the analyst how many (1 round). Returns (each server's shares of
    the (n, 4Q) contributions mod 2^l, uint64 (m, n, 4Q); keep, bool (n,); the count of
    dropped vectors, as the analyst received it)."""
    from mpc.arith.ring import ring as ring_of
    from mpc.arith.sharing import additive_share

    from .servers import server_ids

    net, sid = session.net, server_ids(session)
    m, n, Q = sid.size, contrib.shape[0], contrib.shape[2]
    kappa = keycheck.sketches(session.ring.bits)
    if frac_bits + 2 > session.ring.bits:
        raise ValueError(f"the HL input check needs bits >= {frac_bits + 2}")
    up = party_upload(contrib, P, frac_bits, kappa, rng.derive("hl-check-triples"))
    sh = additive_share(ring_of(keycheck.OUT_BITS), up, m, rng.derive("hl-check-shares"))
    seeds = np.zeros((m, 2), _U64)
    local = [bool(net.is_local(int(s))) for s in sid]
    with net.phase("hl input check"):
        with net.round():                           # the upload, and the coin's seeds
            for j in range(m):                      # loop over the m servers
                net.send(net.parties, int(sid[j]), sh[j], keycheck.OUT_BITS)
                if local[j]:
                    seeds[j] = rng.derive("hl-check-coin", j).uint64(2)
                for o in range(m):
                    if o != j:
                        net.send(int(sid[j]), int(sid[o]), seeds[j], 64)
        co = coin(seeds, Q, frac_bits, kappa)
        J = witness_words(frac_bits)
        first = _exchange(net, sid, local, (n, (4 + J) * kappa), lambda b: _by_chunks(
            lambda s: opened_shares(b, co, s), sh[b]))
        second = _exchange(net, sid, local, (n, (2 + J) * kappa), lambda b: _by_chunks(
            lambda s, o: check_shares(b, co, s, o), sh[b], first))
        keep = decide(first, second, kappa)
    count = np.array([n - int(keep.sum())], np.int64)
    with net.phase("hl input check report"), net.round():
        net.send(int(sid[0]), net.role("analyst"), count, 64)
    return sh[:, :, :4 * Q] & _U64(session.ring.mask), keep, int(count[0])


def _exchange(net, sid: np.ndarray, local: list, shape: tuple, message) -> np.ndarray:
    """One round: every server sends ``message(b)`` (its share, computed where it runs;
    uint64 ``shape``) to every other; returns the sum over the servers."""
    msgs = [message(b) if local[b] else np.zeros(shape, _U64) for b in range(sid.size)]
    with net.round():
        for b in range(sid.size):                   # loop over the m servers
            for o in range(sid.size):
                if o != b:
                    net.send(int(sid[b]), int(sid[o]), msgs[b], 64)
    return _total(msgs)


def _total(parts: list) -> np.ndarray:
    """The sum of the servers' uint64 shares (Z_2^64)."""
    out = np.array(parts[0], _U64)
    for x in parts[1:]:                             # loop over the m servers
        out += x
    return out
