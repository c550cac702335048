"""The last round of a U-MPC run whose party hosts may vanish: threshold aggregation.

Issue 36, item 5 (SecAgg-style, Bonawitz et al. 2017). Used only when the run's
hosts may vanish (a deployment with ``max_dropouts`` > 0 and more than one party
host); the simulator and runs with no host that may vanish aggregate as step 4
always did (each party sends its sum to the aggregator), bit for bit.

**Rounds.** Let H be the party hosts (processes holding parties), host h at the
public evaluation point x_h = (its rank) + 1, and c the columns a party sends in
step 4 (its sum of f(x_e) shares, its edge sums', its aux values', noise added).

1. *Reshare* (after the noise, before the roll call that closes it; one round,
   phase ``aggregation``): host h adds its parties' step-4 rows locally (the host
   holds them all: no message) into s_h in [0, 2^l)^c, draws a polynomial q_h of
   degree t over GF(p), p = 2^127 - 1, with q_h(0) = s_h and t uniform
   coefficients, keeps q_h(x_h) and sends q_h(x_g) to every other live host g.
   Host-level messages go between each host's *first party* id (the network
   counts messages between party ids): L (L - 1) c field elements for L live hosts.
2. *Final send* (step ``aggregation``, one round): host g sends the aggregator
   S(x_g) = sum over the live hosts h of q_h(x_g), c field elements; the aggregator
   interpolates S at 0 from any t + 1 of those that arrived: S(0) = sum_h s_h as
   an integer (L 2^l < p), reduced mod 2^l, is the sum step 4 would have opened.

A field element travels as two uint64 words (128 bits counted: 127 of value and
one that says the element arrived; what a vanished host owed reads as zeros).

**Degree.** t = H - 1 - v, where v is the largest number of hosts the bound lets
vanish (the most hosts whose parties add up to at most ``max_dropouts``): the
largest t for which t + 1 evaluations remain after any loss the bound allows.
Any t hosts learn nothing of another host's sum; t < 1 is refused when
``deploy.toml`` is loaded (:func:`threshold_degree`).

**Losses.** A host lost during the reshare is a loss *before* the last round: the
roll call after the noise sees it and the survivors do as for a loss during the
noise (:func:`ustat.umpc.dropouts.noise_among_survivors`: the noise and the
reshare are discarded unopened, the host's edges leave the sums, the noise is
drawn again and shared again among the new survivors; the release says step
``noise``). A host lost during the final send: the aggregator uses the
evaluations that arrived (at least t + 1 within the bound); the release is the
full design's (the edges were summed before the loss: the lost host's parties'
edges are in it) and says step ``aggregation`` with the host's parties in
``parties_lost``. Fewer than t + 1, or more parties than ``max_dropouts``: no
release, naming the bound.

**Privacy.** The aggregator sees only evaluations of S: S(0), the noisy sum step 4
would open, and t uniform coefficients independent of everything else (L'
evaluations of a degree-t polynomial with uniform non-constant coefficients are
a function of S(0) and independent uniform values); today it sees every party's
sum. Any t hosts see t evaluations of every other host's q_h: uniform and
independent of s_h (exact: :func:`share_evaluations` with every coefficient
vector). Nothing is opened to make up for the missing host, no noise is drawn
again after the reshare's roll call: the release is the same single noisy sum,
epsilon as without dropouts, against the same coalitions. A discarded reshare
(a loss before the roll call) went only to hosts, never to the aggregator, and
the next one uses fresh coefficients. Coefficients: 192 bits from the
process's CSPRNG reduced mod p (statistical distance below 2^-64 from uniform).
Threat model: the protocol's (static semi-honest; a vanished host is a crash,
counted as corrupted).

Cost: reshare L (L - 1) c and final send L c field elements of 128 bits, two
rounds instead of one; O(n c) local work for the host sums, O(L^2 c) field work.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from .dropouts import DropoutBoundError, default_max_dropouts, lost_parties

if TYPE_CHECKING:
    from mpc.arith.rng import CSPRNG
    from mpc.run.runtime import Runtime

    from .setup import Run

__all__ = ["PRIME", "LastRound", "finish", "interpolate_at_zero", "open_sum", "plan",
           "random_field", "reshare", "share_evaluations", "step4_rows", "threshold_degree",
           "vanishing_hosts"]

#: the field of the reshare: a Mersenne prime above (hosts) 2^64 for any l <= 64
PRIME = (1 << 127) - 1
_WORD = (1 << 64) - 1
_PRESENT = np.uint64(1 << 63)


def vanishing_hosts(sizes: list, bound: int) -> int:
    """The most hosts (``sizes``: parties per host) whose parties add up to at most
    ``bound``."""
    total = np.cumsum(np.sort(np.asarray(sizes, dtype=np.int64)))
    return int(np.searchsorted(total, int(bound), side="right"))


def threshold_degree(sizes: list, bound: int) -> int:
    """t = H - 1 - v for H hosts of ``sizes`` parties of which ``bound`` parties may vanish
    (v hosts, :func:`vanishing_hosts`): t hosts learn nothing of another host's sum and t + 1
    evaluations survive any loss within the bound. :class:`DropoutBoundError` if t < 1."""
    hosts, v = len(sizes), vanishing_hosts(sizes, bound)
    t = hosts - 1 - v
    if t < 1:
        raise DropoutBoundError(
            f"max_dropouts = {bound} lets {v} of the {hosts} party hosts vanish: the last "
            f"round's threshold sharing needs t + 1 <= {hosts} - {v} hosts with t >= 1 "
            "colluding hosts learning nothing (lower max_dropouts or add hosts)")
    return t


def random_field(rng: CSPRNG, shape: tuple, p: int = PRIME) -> np.ndarray:
    """Uniform elements of GF(p) (object array of ints): 192 random bits mod p each."""
    w = rng.uint64((3, *shape)).astype(object)
    return ((w[0] << 128) | (w[1] << 64) | w[2]) % p


def share_evaluations(secrets: np.ndarray, coeffs: np.ndarray, xs: np.ndarray,
                      p: int = PRIME) -> np.ndarray:
    """q_h(x_g) for q_h(x) = secrets[h] + sum_j coeffs[h, j - 1] x^j (degree t =
    coeffs.shape[1]): secrets (L, c), coeffs (L, t, c), xs (G,) -> (L, G, c), ints mod p.
    One (G, t) x (L, t, c) product."""
    t = coeffs.shape[1]
    x = np.asarray(xs, dtype=object)
    powers = np.stack([x ** j % p for j in range(1, t + 1)], axis=1) if t else \
        np.zeros((x.size, 0), dtype=object)
    s = np.asarray(secrets, dtype=object)
    return (s[:, None, :] + np.matmul(powers, np.asarray(coeffs, dtype=object))) % p


def interpolate_at_zero(values: np.ndarray, xs: np.ndarray, p: int = PRIME) -> np.ndarray:
    """f(0) from the evaluations ``values`` (k, c) of a polynomial of degree < k at the
    distinct nonzero points ``xs`` (k,) (Lagrange). O(k^2 + k c)."""
    x = np.asarray(xs, dtype=object)
    k = x.size
    diff = (x[None, :] - x[:, None]) % p                 # x_j - x_i
    np.fill_diagonal(diff, 1)
    others = np.broadcast_to(x, (k, k)).copy()
    np.fill_diagonal(others, 1)
    num = np.prod(others, axis=1) % p
    den = np.prod(diff, axis=1) % p
    lam = np.array([int(a) * pow(int(b), -1, p) % p for a, b in zip(num, den)], dtype=object)
    return (lam @ np.asarray(values, dtype=object)) % p


def _to_words(v: np.ndarray) -> np.ndarray:
    """Field elements (< 2^127) as (..., 2) uint64 words, the top bit marking them present."""
    lo = (v & _WORD).astype(np.uint64)
    hi = (v >> 64).astype(np.uint64) | _PRESENT
    return np.stack([lo, hi], axis=-1)


def _from_words(w: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(field elements, present) from :func:`_to_words`'s words."""
    present = (w[..., 1] & _PRESENT) != 0
    hi = (w[..., 1] & ~_PRESENT).astype(object)
    return (hi << 64) | w[..., 0].astype(object), present


def step4_rows(z: np.ndarray, z_edge: np.ndarray, aux_z: np.ndarray) -> np.ndarray:
    """What each party sends in step 4, (len(z), c) uint64: its sum, its edge sums, its aux
    values (``aux_z`` has a row per party of ``z``, or no column)."""
    if aux_z.shape[0] != z.size:
        aux_z = np.zeros((z.size, aux_z.shape[1]), dtype=np.uint64)
    return np.concatenate([z[:, None], z_edge.T, aux_z], axis=1)


@dataclass
class LastRound:
    """The last round's plan (public) and, after :func:`reshare`, each host's S(x_g)."""

    t: int                          # degree: t colluding hosts learn nothing
    ranks: np.ndarray               # the party hosts' ranks (x = rank + 1)
    sizes: np.ndarray               # parties per host (at the start)
    live: np.ndarray | None = None  # the hosts in the reshare (indices into ranks)
    first: np.ndarray | None = None  # each live host's first party id (its messages' id)
    sums: np.ndarray | None = None  # (L, c) S(x_g) at each live host g (local ones real)


def plan(runtime: Runtime | None, n: int) -> LastRound | None:
    """The last round's plan for a run across processes whose party hosts may vanish and
    that has more than one party host (else None: step 4 as always). Call before the
    groups are renumbered (:func:`ustat.umpc.dropouts.start_survivors`)."""
    if runtime is None or not getattr(runtime.transport, "may_vanish", ()):
        return None
    groups = runtime.groups
    ranks, sizes = [], []
    for r in range(len(groups)):
        held = lost_parties(groups, {r}, n).size
        if held:
            ranks.append(r)
            sizes.append(held)
    if len(ranks) < 2:
        return None
    bound = default_max_dropouts(n) if runtime.max_lost is None else runtime.max_lost
    return LastRound(threshold_degree(sizes, bound), np.asarray(ranks, dtype=np.int64),
                     np.asarray(sizes, dtype=np.int64))


def reshare(run: Run, runtime: Runtime, lr: LastRound, rows: np.ndarray,
            senders: np.ndarray | None, rng: CSPRNG) -> LastRound:
    """Round 1: each live host Shamir-shares the sum of its parties' step-4 ``rows`` ((n, c)
    uint64; ``senders``: the survivors' ids, None: all) with every other live host. Returns
    the plan with each live host's S(x_g) (those of other processes' hosts are not real)."""
    net, ring = run.session.net, run.session.ring
    n, c = rows.shape
    live = np.array([i for i, r in enumerate(lr.ranks) if int(r) not in runtime.gone],
                    dtype=np.int64)
    host = np.full(n, -1, dtype=np.int64)
    first = np.zeros(live.size, dtype=np.int64)
    for j, i in enumerate(live):        # a loop over hosts (processes), not parties
        mine = lost_parties(runtime.groups, {int(lr.ranks[i])}, n)
        host[mine], first[j] = j, mine[0]
    if senders is not None:
        keep = np.zeros(n, dtype=bool)
        keep[senders] = True
        host[~keep] = -1
    sums = np.zeros((live.size, c), dtype=np.uint64)
    np.add.at(sums, host[host >= 0], rows[host >= 0])
    secrets = (sums & ring.mask).astype(object)
    xs = lr.ranks[live] + 1
    evals = share_evaluations(secrets, random_field(rng, (live.size, lr.t, c)), xs)
    words = _to_words(evals)                              # (L, L, c, 2)
    h, g = np.nonzero(~np.eye(live.size, dtype=bool))
    with net.phase("aggregation"):
        got = net.send(first[h], first[g], np.ascontiguousarray(words[h, g]), 64)
    words[h, g] = got
    values, _ = _from_words(words)
    return LastRound(lr.t, lr.ranks, lr.sizes, live, first, values.sum(axis=0) % PRIME)


def finish(run: Run, runtime: Runtime, lr: LastRound, dropouts: dict | None) -> tuple:
    """Round 2: each live host sends S(x_g) to the aggregator, who interpolates S(0) from
    t + 1 that arrived. ``(totals, dropouts)``: the c sums mod 2^l (uint64; real at the
    aggregator) and the release's dropouts with the hosts lost in this round (step
    ``aggregation``). :class:`DropoutBoundError` at the aggregator when more parties than
    ``max_dropouts`` are lost or fewer than t + 1 evaluations arrived."""
    assert lr.sums is not None and lr.live is not None and lr.first is not None
    net, ring = run.session.net, run.session.ring
    with net.phase("aggregation"):
        got = net.send(lr.first, net.role("aggregator"), _to_words(lr.sums), 64)
    if not run.session.is_local("aggregator"):
        return np.zeros(lr.sums.shape[1], dtype=np.uint64), dropouts
    values, present = _from_words(np.asarray(got))
    bound = default_max_dropouts(int(lr.sizes.sum())) if runtime.max_lost is None \
        else runtime.max_lost
    return open_sum(lr, values, np.asarray(present.all(axis=1)), bound, dropouts, int(ring.mask))


def open_sum(lr: LastRound, values: np.ndarray, here: np.ndarray, bound: int,
             dropouts: dict | None, mask: int) -> tuple:
    """The aggregator's part of :func:`finish`: S(0) mod 2^l (``mask`` = 2^l - 1) from the
    evaluations ``values`` (L, c) of the live hosts, ``here`` saying which arrived.
    ``(totals uint64 (c,), dropouts)``; :class:`DropoutBoundError` naming the bound when
    more parties than ``bound`` are lost (with the earlier ``dropouts``) or fewer than
    t + 1 evaluations arrived."""
    assert lr.live is not None
    lost = int(lr.sizes[lr.live[~here]].sum())
    before = dropouts or {}
    total = lost + before.get("parties_lost", 0)
    if total > bound or here.sum() < lr.t + 1:
        said = f"more than max_dropouts = {bound}" if total > bound else \
            f"within max_dropouts = {bound}"
        raise DropoutBoundError(
            f"{total} parties vanished, {said}, and the last round needs {lr.t + 1} of the "
            f"party hosts' evaluations, {int(here.sum())} arrived: no release")
    use = np.flatnonzero(here)[:lr.t + 1]
    s0 = interpolate_at_zero(values[use], lr.ranks[lr.live[use]] + 1)
    totals = (s0 & mask).astype(np.uint64)
    if lost:
        step = before.get("step")
        dropouts = {"parties_lost": total, "edges_lost": before.get("edges_lost", 0),
                    "step": f"{step}, aggregation" if step else "aggregation"}
    return totals, dropouts
