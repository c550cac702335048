"""Verified Hosmer-Lemeshow contributions: the servers check each (4, Q) vector on its shares.

What is checked
---------------
Step 3 of :mod:`ustat.ecdf.hosmer_lemeshow`: party i sends additive shares of
its contribution v = (E1, E0, O1, O0), each a Q-vector, to the m servers.
Honest: v = (P g, (2^c - P) g, y g, (1 - y) g) with g = e_q one-hot over the
Q groups, y in {0, 1} and P = round(p 2^c) in 0..2^c (c = ``frac_bits``). With
``verify`` (the family's ``verify_keys``) the party also shares a witness: the
D = ceil((c + 1) / 4) hexadecimal digits of P and of 2^c - P, each digit as a
one-hot vector of 16 (J = 2 D blocks, 16 J words), and correlated randomness;
all shares are in Z_2^64 (:data:`keycheck.OUT_BITS`), the sums read mod 2^l.
The servers check, without learning v:

* linear, opened as kappa random combinations rho (zero for an honest party,
  so they reveal nothing): sum(O1 + O0) = 1; E1_q + E0_q = 2^c (O1_q + O0_q)
  for every q; each digit block sums to 1; P + P' = 2^c, where P and P' are the
  values the digit blocks spell (sum_d 16^d sum_k k x_{d,k});
* O = (O1, O0) (2Q entries) and every digit block one-hot: Poplar1's sketch
  A^2 = B of :mod:`ustat.ecdf.keycheck` with the party's triple (a, a^2);
* E1_q = P (O1_q + O0_q): with a coin t, sum_q t_q E1_q = P sum_q t_q G_q, a
  product of two shared values by a Beaver triple the party supplies
  (a2, b, a2 b): the servers open u2 = A_G + a2 and v = P + b.

A vector that passes is, mod 2^l, an honest one: O one-hot at (q, y) (the keycheck
argument; the linear check gives the sum 1), P and P' integers in [0, 16^D)
summing to 2^c (no wrap: 16^D < 2^(l-1)) so P in [0, 2^c], E1 = P g and
E0 = (2^c - P) g. Its influence on the sums is that of one record (L1 4 after a
replacement), which is all the DP accounting uses; a party can still choose its
(p, y, group) freely (input substitution, as for any valid input).

Soundness over the ring (as :mod:`ustat.ecdf.keycheck`). The sketches' error
per check is <= 2^(2 - (sigma + 1)/2) (quadratic in the coin); the linear and
product checks are linear in the coin: a coefficient of 2-adic valuation w < l
is zero for at most 2^w of 2^64 coins, <= 2^-(sigma + 1). The party's triple
errors are constants fixed before the coin, so they cannot cancel a failing
check. With kappa = :func:`keycheck.sketches` repetitions each check errs with
probability <= 2^-40; a union over the 3 + J = 13 checks (c = 16): < 2^-36 per
bad vector. The coin is the XOR of one 128-bit seed per server, exchanged in the
upload round (no extra round); parties never see it.

Privacy: an honest party's opened values are u = A + a, u2 = A_G + a2 and
v = P + b with uniform a, a2, b (uniform), and the combinations and z's, which
are 0. Honest vectors always pass (exactly), so the drop decision is a
function of the malicious parties' uploads only: DP holds for every honest party.

Cost per party and server: 64 (4Q + 16 J + (5 + 2J) kappa) bits uploaded
instead of l 4Q (c = 16: J = 10; kappa = 7 at l = 48: 4Q + 160 + 175 words);
between the servers 2 rounds: (4 + J) kappa then (2 + J) kappa 64-bit words
per party each way; O(n (4Q + 16 J) kappa) word operations per server,
batched (``benchmarks/ecdf.py``: ``hl_input_check_*``); in a run that may lose
party hosts, round 1 carries n bits more each way (:func:`verified_shares`).
Threat model: malicious
parties, semi-honest non-colluding servers (as the sums).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from mpc.arith.rng import CSPRNG

from . import dropouts, keycheck

if TYPE_CHECKING:
    from mpc.session import Session

__all__ = ["BASE", "HLCoin", "blocks", "check_shares", "check_vectors", "coin", "decide",
           "layout", "opened_shares", "party_upload", "triple_words"]

_U64 = np.uint64
#: the witness's digits: base 16, each a one-hot vector of BASE words
BASE = 16


def blocks(frac_bits: int) -> int:
    """J: the one-hot digit blocks of the witness, D = ceil((c + 1) / 4) for P and for 2^c - P."""
    return 2 * -(-(int(frac_bits) + 1) // 4)


def triple_words(frac_bits: int) -> int:
    """Correlated words per sketch: (a, a^2), (a2, b, a2 b) and (a_j, a_j^2) per digit block."""
    return 5 + 2 * blocks(frac_bits)


def layout(groups: int, frac_bits: int) -> int:
    """The width of a party's shared vector w = (v (4Q), P's digits, (2^c - P)'s digits)."""
    return 4 * int(groups) + BASE * blocks(frac_bits)


def _digit_values(frac_bits: int) -> np.ndarray:
    """uint64 (J / 2 * BASE,): what each word of one number's digit blocks is worth (16^d k)."""
    D = blocks(frac_bits) // 2
    return (np.arange(BASE, dtype=_U64)[None, :] << (4 * np.arange(D, dtype=_U64))[:, None]).ravel()


def party_upload(contrib: np.ndarray, P: np.ndarray, frac_bits: int, kappa: int,
                 rng: CSPRNG) -> np.ndarray:
    """The parties' side, before sharing: uint64 (n, W + T kappa), each party's w (its (4, Q)
    ``contrib`` flattened, then the one-hot digits of ``P`` and of 2^c - P) and its correlated
    words (T = :func:`triple_words`, in Z_2^64). Cost: (3 + J) kappa random words per party."""
    n, c = contrib.shape[0], int(frac_bits)
    J = blocks(c)
    P = np.asarray(P, np.int64)
    shifts = 4 * np.arange(J // 2)
    digits = np.concatenate([(P[:, None] >> shifts) & 15, (((1 << c) - P)[:, None] >> shifts) & 15],
                            axis=1)                                          # (n, J)
    onehot = (digits[:, :, None] == np.arange(BASE)).astype(np.int64).reshape(n, J * BASE)
    a = rng.uint64((n, 2 + J, kappa))
    b = rng.uint64((n, kappa))
    trip = np.concatenate([a[:, :1], (a[:, 0] * a[:, 0])[:, None], a[:, 1:2], b[:, None],
                           (a[:, 1] * b)[:, None],
                           np.stack([a[:, 2:], a[:, 2:] * a[:, 2:]], axis=2).reshape(n, 2 * J,
                                                                                     kappa)],
                          axis=1)
    w = np.concatenate([contrib.reshape(n, -1), onehot], axis=1).astype(np.int64).view(_U64)
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
    digits: np.ndarray      # (J, BASE, 2 kappa): (r, r^2) for each digit block


def coin(seeds: np.ndarray, groups: int, frac_bits: int, kappa: int) -> HLCoin:
    """The coin from the m servers' 128-bit seeds (uint64 (m, 2), XORed): see the module."""
    Q, c = int(groups), int(frac_bits)
    J, W = blocks(c), layout(Q, c)
    seeds = np.asarray(seeds, _U64)
    xor = np.bitwise_xor.reduce(seeds[:-1], axis=0) if seeds.shape[0] > 1 else np.zeros(2, _U64)
    n_rho = Q + J + 2                               # sum O, Q pairs, J blocks, P + P'
    raw = keycheck.coin(xor, seeds[-1], kappa, n_rho + 3 * Q + BASE * J - 1)   # (kappa, K)
    rho, r, t, rd = np.split(raw, np.cumsum([n_rho, 2 * Q, Q]), axis=1)
    one = _U64(1) << _U64(c)
    lin = np.zeros((W, kappa), _U64)
    for sl in (slice(0, Q), slice(Q, 2 * Q)):                       # E1, E0: rho_q
        lin[sl] += rho[:, 1:Q + 1].T
    for sl in (slice(2 * Q, 3 * Q), slice(3 * Q, 4 * Q)):           # O1, O0: rho_0 - 2^c rho_q
        lin[sl] += rho[:, :1].T - one * rho[:, 1:Q + 1].T
    blk = np.repeat(rho[:, Q + 1:Q + 1 + J].T, BASE, axis=0)        # each block's sum: rho_j
    val = np.tile(_digit_values(c), 2)[:, None] * rho[:, -1][None, :]   # P + P': rho_last
    lin[4 * Q:] += blk + val
    lin_const = _U64(0) - rho[:, 0] - rho[:, Q + 1:Q + 1 + J].sum(axis=1, dtype=_U64) \
        - one * rho[:, -1]
    rd = rd.reshape(kappa, J, BASE).transpose(1, 2, 0)              # (J, BASE, kappa)
    return HLCoin(Q, c, kappa, lin, lin_const, np.concatenate([r, r * r]).T.copy(),
                  t.T.copy(), np.concatenate([rd, rd * rd], axis=2))


def _parts(co: HLCoin, share: np.ndarray):
    """A server's share split: w (n, W) and its triples (n, T, kappa)."""
    W = layout(co.groups, co.frac_bits)
    return share[:, :W], share[:, W:].reshape(share.shape[0], -1, co.kappa)


def _sketch_sums(co: HLCoin, w: np.ndarray):
    """A server's shares of (A, B) over O (n, 2 kappa), of (A, B) per digit block (n, J,
    2 kappa), of A_G (n, kappa) and of P (n,)."""
    Q, n, J = co.groups, w.shape[0], blocks(co.frac_bits)
    ab_o = w[:, 2 * Q:4 * Q] @ co.onehot
    x = w[:, 4 * Q:].reshape(n, J, 1, BASE)
    ab_dig = np.matmul(x, co.digits[None])[:, :, 0]
    a_g = (w[:, 2 * Q:3 * Q] + w[:, 3 * Q:4 * Q]) @ co.t
    P = w[:, 4 * Q:4 * Q + BASE * J // 2] @ _digit_values(co.frac_bits)
    return ab_o, ab_dig, a_g, P


def opened_shares(party: int, co: HLCoin, share: np.ndarray) -> np.ndarray:
    """Round 1, server ``party``'s message: uint64 (n, (4 + J) kappa), its shares of the
    linear combinations, u = A + a (O), u2 = A_G + a2, v = P + b, and u per digit block.
    ``share``: its (n, W + T kappa) upload shares."""
    w, trip = _parts(co, share)
    n, J, k = w.shape[0], blocks(co.frac_bits), co.kappa
    ab_o, ab_dig, a_g, P = _sketch_sums(co, w)
    lin = w @ co.lin + (co.lin_const if party == 0 else _U64(0))
    zero = np.zeros(2 * k, _U64)
    u_o = keycheck.open_shares(party, ab_o, zero, trip[:, 0:2])
    u_g = a_g + trip[:, 2]
    v = P[:, None] + trip[:, 3]
    u_dig = keycheck.open_shares(party, ab_dig, zero, trip[:, 5:].reshape(n, J, 2, k))
    return np.concatenate([lin, u_o, u_g, v, u_dig.reshape(n, -1)], axis=1)


def check_shares(party: int, co: HLCoin, share: np.ndarray, opened: np.ndarray) -> np.ndarray:
    """Round 2, server ``party``'s message: uint64 (n, (2 + J) kappa), its shares of
    z = A^2 - B (O and each digit block) and of P A_G - sum_q t_q E1_q; ``opened``: round 1
    summed over the servers."""
    w, trip = _parts(co, share)
    n, J, k, Q = w.shape[0], blocks(co.frac_bits), co.kappa, co.groups
    ab_o, ab_dig, _, _ = _sketch_sums(co, w)
    u_o, u_g, v = opened[:, k:2 * k], opened[:, 2 * k:3 * k], opened[:, 3 * k:4 * k]
    zero = np.zeros(2 * k, _U64)
    z_o = keycheck.check_shares(party, ab_o, zero, trip[:, 0:2], u_o)
    z_dig = keycheck.check_shares(party, ab_dig, zero, trip[:, 5:].reshape(n, J, 2, k),
                                  opened[:, 4 * k:].reshape(n, J, k))
    prod = trip[:, 4] - u_g * trip[:, 3] - v * trip[:, 2] + (u_g * v if party == 0 else _U64(0))
    z_g = prod - w[:, :Q] @ co.t
    return np.concatenate([z_o, z_g, z_dig.reshape(n, -1)], axis=1)


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


#: parties per batch of the servers' check (bounds memory)
CHUNK = 4096


def _by_chunks(fn, *arrays) -> np.ndarray:
    """``fn`` over row chunks of ``arrays`` (memory bound), rows concatenated."""
    n = arrays[0].shape[0]
    return np.concatenate([fn(*(a[i:i + CHUNK] for a in arrays)) for i in range(0, max(n, 1),
                                                                                  CHUNK)])


def verified_shares(session: Session, contrib: np.ndarray, P: np.ndarray, frac_bits: int,
                    rng: CSPRNG, may_vanish: bool = False) -> tuple:
    """Step 3 with the check, in a session (phase ``hl input check``): the parties upload
    their shares in Z_2^64 (1 round, with the servers' coin seeds), the servers open the
    round-1 values, then the z's (2 rounds between the servers), drop the vectors that fail
    and server 0 tells the analyst how many (1 round). ``may_vanish``: a run that may lose
    party hosts (:mod:`ustat.ecdf.dropouts`): after the upload each server notes the parties
    whose upload it did not receive (its transport lost their host), round 1 also carries
    that set (one bit per party), their vectors are left out unopened (not counted as
    failing) and the report carries their count above bit 32. Returns (each server's
    shares of the (n, 4Q) contributions mod 2^l, uint64 (m, n, 4Q); keep, bool (n,); the
    count of dropped vectors and the count of parties lost, as the analyst received them)."""
    from mpc.arith.ring import ring as ring_of
    from mpc.arith.sharing import additive_share

    from .servers import server_ids

    net, sid = session.net, server_ids(session)
    m, n, Q = sid.size, contrib.shape[0], contrib.shape[2]
    kappa = keycheck.sketches(session.ring.bits)
    if 2 * blocks(frac_bits) + 1 >= session.ring.bits:     # P + P' < 2^(4D + 1): no wrap
        raise ValueError(f"the HL input check needs bits > {2 * blocks(frac_bits) + 1}")
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
        J = blocks(frac_bits)
        lost = np.zeros(n, dtype=bool)
        missing = np.stack([~dropouts.reached(session)] * m) if may_vanish else None
        first = _exchange(net, sid, local, (n, (4 + J) * kappa), lambda b: _by_chunks(
            lambda s: opened_shares(b, co, s), sh[b]), missing, lost)
        second = _exchange(net, sid, local, (n, (2 + J) * kappa), lambda b: _by_chunks(
            lambda s, o: check_shares(b, co, s, o), sh[b], first))
        keep = decide(first, second, kappa) & ~lost
    count = np.array([int((~keep & ~lost).sum()) | int(lost.sum()) << 32], np.int64)
    with net.phase("hl input check report"), net.round():
        net.send(int(sid[0]), net.role("analyst"), count, 64)
    return (sh[:, :, :4 * Q] & _U64(session.ring.mask), keep, int(count[0]) & 0xFFFFFFFF,
            int(count[0]) >> 32)


def _exchange(net, sid: np.ndarray, local: list, shape: tuple, message,
              missing: np.ndarray | None = None, lost: np.ndarray | None = None) -> np.ndarray:
    """One round: every server sends ``message(b)`` (its share, computed where it runs;
    uint64 ``shape``) to every other; returns the sum over the servers. With ``missing``
    (bool (m, n)) each server also sends its row (1 bit per party), and ``lost`` (bool (n,))
    becomes their OR: the parties some server lacks."""
    msgs = [message(b) if local[b] else np.zeros(shape, _U64) for b in range(sid.size)]
    flags = None if missing is None else [np.asarray(f, dtype=bool).copy() for f in missing]
    with net.round():
        for b in range(sid.size):                   # loop over the m servers
            for o in range(sid.size):
                if o != b:
                    net.send(int(sid[b]), int(sid[o]), msgs[b], 64)
                    if flags is not None:
                        net.send(int(sid[b]), int(sid[o]), flags[b], 1)
    if flags is not None and lost is not None:
        lost[:] = np.logical_or.reduce(flags)
    return _total(msgs)


def _total(parts: list) -> np.ndarray:
    """The sum of the servers' uint64 shares (Z_2^64)."""
    out = np.array(parts[0], _U64)
    for x in parts[1:]:                             # loop over the m servers
        out += x
    return out
