"""Dropouts: a U-MPC release that completes without the party hosts that vanish.

Design (issue 36, item 5). Deployments run party hosts that each hold
thousands of parties; a host that vanishes mid-run is the normal case.

**Bound.** A deployment states how many parties may be lost:
``max_dropouts`` in ``deploy.toml`` (``[deployment]``; default
:func:`default_max_dropouts`, floor((n - 1) / 3) of the n parties). A host
holds a range of parties, so one host lost costs its whole range. A loss
beyond the bound ends the run with no release, as a fault does today.

**Detection.** The transport already names a vanished host (its connection
closes: the relay's BYE/ABORT frames, "killed by SIGKILL" in the
supervisor). Within the bound that event becomes a *dropout*: the survivors
note the host's ranks and the step at which it was seen, and before the
last round every process confirms the set of survivors S (a roll call: one
bit from each process, one round), so every process leaves out the same
parties. Steps: ``start`` (joined, nothing sent), ``sharing`` (step 1),
``computing`` (step 2), ``noise`` (step 3), ``roll-call``.

**What is left out.** Every edge with a vanished endpoint: each survivor
keeps its share of f(x_e) per edge until the roll call (8 bytes per edge
membership, as E itself) and adds only the shares of edges inside S, so
the survivors compute nothing again and open nothing: the shares of the
dropped edges, the vanished parties' inputs and the shares they sent are
discarded unopened. The release is the incomplete U-statistic of the
surviving design E_S = {e in E : e subset of S}: m_S edges, largest degree
delta_S <= delta_max, over the survivors' records.

**Noise at the central law against the same coalitions.** The noise shares
drawn before the roll call are discarded unopened (nothing the aggregator
receives depends on them), and the noise is drawn again among the
survivors, from their own coins: under ``dis`` the in-MPC sampler runs
among S (epsilon against all but one survivor: the same coalitions as
without dropouts, a vanished party counting as corrupted); with Polya
noise each survivor's share is sized for |S| contributors with the same
``max_colluders`` (negative-binomial divisibility: |S| - t honest shares
still add up to the whole DLap); under ``hf`` the committee is drawn among
S after the roll call, so a committee member cannot vanish before it
samples (a member that vanishes within the noise step is a dropout at
``noise``: the committee is drawn again among the new S; its failure
probability, ``committee_fail``, is charged as delta as without
dropouts). The scale follows the surviving design: delta_S * Delta f /
epsilon. The release is epsilon-DP for every party, the vanished included:
a vanished party's record enters no edge of E_S, and the aggregator sees
one noisy sum.

**The last round.** A host's additive share of (sum + noise) cannot be made up
for (a new noise would hand the aggregator a second noisy release of nearly
the same sum: twice the epsilon), so when the run's hosts may vanish (more
than one party host) the last round uses threshold sharing, as SecAgg
(Bonawitz et al. 2017) does (:mod:`ustat.umpc.last_round`): after the noise,
each host adds its parties' step-4 sums locally and Shamir-shares that host
sum over GF(2^127 - 1) with every other host (degree t = hosts - 1 - the hosts
the bound lets vanish, refused at config time below 1: any t hosts learn
nothing of another host's sum), inside the roll call that closes the noise;
then each host sends the aggregator the sum of the evaluations it received,
and the aggregator interpolates the sum at 0 from any t + 1 of them and
releases as before. A host lost during the reshare is a loss during the noise
(step ``noise``: discarded unopened, drawn and shared again among the new
survivors); a host lost during the final send costs nothing: the release is
the full design's (its parties' edges were summed before it vanished) and says
step ``aggregation``. Nothing is opened to make up for the missing host and
the release is the same single noisy sum, epsilon as without dropouts.

**ECDF family.** It runs, deployed, for ``ecdf``, ``quantile``, ``roc``
and ``hl`` on the FSS and the pointwise servers (:mod:`ustat.ecdf.dropouts`
says how): a party whose keys (FSS), first answers (pointwise) or HL sums
did not reach every server is left out, its uploads discarded unopened by
the servers that have them, the servers agreeing whose they hold within
the key or input check's exchanges (or one round of their own); the node
and sums noise is drawn once, independent of n, so the release is the one
on the kept parties' data. A pointwise host lost after answers counting it
were opened, a server or the analyst that vanishes ends the run
(two-server model).

**What exists today.** :func:`ustat.umpc.survivors.run_with_dropouts` is the
survivors' computation as the protocol defines it, run on any executor:
the same public E as the full run (the seed's stream), the surviving
design relabelled onto S, noise among S, and ``dropouts`` in the release
(``parties_lost``, ``edges_lost``, ``step``). Deployed (dealer backend with
``dis`` or ``hf``; garbled circuits, whose base OTs with a vanished peer are
skipped, :meth:`mpc.comm.network.Network.vanished`), at each step:

- ``start``: a host that never joins is left out after ``connect_timeout``;
  :meth:`mpc.run.runtime.Runtime.roll_call` agrees the absent ranks and
  :func:`start_survivors` turns the program into the survivors' run;
- ``sharing`` and ``computing``: what the vanished host still owed reads as
  zeros (only its edges' shares are garbage); after the chunks
  :func:`survivors_after_compute` agrees who is gone and leaves its edges
  out; the release says ``computing`` for both (the survivors act on either
  at that one roll call), and the noise then runs after the chunks;
- ``noise``: :func:`noise_among_survivors` draws the noise among the
  survivors, then a roll call; a host lost within the draw: the draw is
  discarded (every process restores its sums), the host's edges leave the
  sums, and the noise is drawn again among the new survivors (a new
  committee under ``hf``), once per loss, within ``max_dropouts``;
- ``reshare`` (the hosts' Shamir reshare, :func:`ustat.umpc.last_round.reshare`,
  run inside each draw): as a loss during the noise;
- the last round (``aggregation``): :func:`ustat.umpc.last_round.finish`
  interpolates from the evaluations that arrived (a loss beyond
  ``max_dropouts``, or fewer than t + 1 evaluations: no release, naming the
  bound); a host lost after sending its last message leaves a complete
  release with every party and no ``dropouts``. With a single party host
  (nothing to reshare with) :func:`check_no_new_loss` still ends the run.

Each process names the step it starts to its transport
(:func:`ustat.umpc.progress.at_step`), which tests use to make a host vanish
at an exact step. The simulator chooses the fixed-point encoding from the
surviving design (a deployed run losing a host mid-run keeps the full run's
ring, which is at least as wide, checked not to wrap).

**Class counts and edge sums** (AUC, VUS; tie-aware Kendall), mid-run: the edge
sums are per-edge shares like f(x_e), kept per edge until the roll call (8 a
bytes more per edge membership) and left out exactly as f's shares (nothing
opened). The class counts are per party: when hosts may vanish their step 3
(:func:`ustat.umpc.noise_step._mask_aux`, then their noise) runs after the roll
call, among the survivors only (not rows dropped afterwards: a vanished party's
count is never masked nor sent, the cycle of masks runs through S, and no
survivor's share is opened); their noise is drawn among S at the kernel's
``aux_sensitivity`` (one record moves the counts by at most that, with or
without the loss), so at its central law for the survivors; a draw discarded
by a loss during the noise is redone with fresh masks. The epsilon split is the
one a run on E_S chooses from its public parameters
(:func:`ustat.umpc.setup.surviving_run`), so the release has
:func:`~ustat.umpc.survivors.run_with_dropouts`' design, split and noise scales
(bit for bit at epsilon = inf); the edge sums, already computed, keep a positive
share (the full run's if E_S's would be 0: summed, they must be noised). The ECDF
family: :mod:`ustat.ecdf.dropouts`.

Cost: O(n + k |E|) to find E_S, then a run on |S| parties and m_S edges.
Threat model: the protocol's (static semi-honest); vanished parties count
as corrupted in every coalition bound.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import ArrayLike

from ..sampling import Hypergraph
from .merge import add_shares
from .progress import at_step
from .setup import public_hypergraph, surviving_run

if TYPE_CHECKING:
    from mpc.run.runtime import Runtime

    from ..specs.umpc import UMPCSpec
    from .setup import Run

__all__ = [
    "STEPS",
    "DropoutBoundError",
    "Dropouts",
    "check_bound",
    "check_no_new_loss",
    "default_max_dropouts",
    "lost_parties",
    "noise_among_survivors",
    "start_survivors",
    "surviving_design",
    "survivors_after_compute",
]

#: the steps at which a vanished host is a dropout (see the module docstring)
STEPS = ("start", "sharing", "computing", "noise", "roll-call")


class DropoutBoundError(ValueError):
    """More parties lost than the configuration allows, or lost where none may be."""


def default_max_dropouts(parties: int) -> int:
    """The default bound on the parties a run may lose: floor((parties - 1) / 3)."""
    return max(0, (int(parties) - 1) // 3)


def check_bound(lost: int, parties: int, max_dropouts: int | None = None) -> int:
    """The bound in force (``max_dropouts``, default :func:`default_max_dropouts`);
    :class:`DropoutBoundError` if ``lost`` parties exceed it or leave fewer than 2."""
    bound = default_max_dropouts(parties) if max_dropouts is None else int(max_dropouts)
    if bound < 0:
        raise DropoutBoundError(f"max_dropouts must be >= 0, got {max_dropouts!r}")
    if lost > bound:
        raise DropoutBoundError(f"{lost} of {parties} parties vanished, more than "
                                f"max_dropouts = {bound}: no release")
    if parties - lost < 2:
        raise DropoutBoundError(f"{parties - lost} parties left: a U-statistic needs 2")
    return bound


@dataclass(frozen=True)
class Dropouts:
    """Parties ``lost`` (ids, those of the vanished hosts) and the ``step`` they vanished at."""

    lost: tuple
    step: str = "computing"

    def __post_init__(self) -> None:
        if self.step == "aggregation":
            raise DropoutBoundError("a party host lost in the last round leaves the full "
                                    "design's release (ustat.umpc.last_round): run it "
                                    "without dropouts")
        if self.step not in STEPS:
            raise ValueError(f"step must be one of {STEPS}, got {self.step!r}")
        ids = np.unique(np.asarray(self.lost, dtype=np.int64))
        object.__setattr__(self, "lost", tuple(int(i) for i in ids))


def surviving_design(hypergraph: Hypergraph, lost: ArrayLike) -> tuple:
    """The design of the survivors: ``(E_S relabelled onto 0..|S|-1, S, edges_lost)``.

    E_S keeps the edges of ``hypergraph`` with no endpoint in ``lost``; a
    survivor's new label is its rank among S (an increasing map, so rows stay
    increasing and in lexicographic order). O(n + k |E|), vectorized.
    """
    n = hypergraph.n
    gone = np.zeros(n, dtype=bool)
    ids = np.asarray(lost, dtype=np.int64)
    if ids.size and (ids.min() < 0 or ids.max() >= n):
        raise ValueError(f"lost party ids must be in 0..{n - 1}")
    gone[ids] = True
    E = hypergraph.edges
    keep = ~gone[E].any(axis=1)
    survivors = np.flatnonzero(~gone)
    label = np.cumsum(~gone) - 1
    H = Hypergraph(label[E[keep]], int(survivors.size), hypergraph.k, hypergraph.name)
    return H, survivors, int(E.shape[0] - keep.sum())


def lost_parties(groups: list, gone: frozenset | set, n: int) -> np.ndarray:
    """The party ids held by the ranks ``gone`` (``groups[r]``: what rank r holds)."""
    out = np.zeros(n, dtype=bool)
    for r in gone:
        for item in groups[r]:
            if not isinstance(item, str):
                out[np.asarray(list(item) if isinstance(item, range) else item,
                               dtype=np.int64)] = True
    return np.flatnonzero(out)


def _renumber(groups: list, gone: frozenset | set, n: int, lost: np.ndarray) -> list:
    """``groups`` with the survivors' new labels (their rank among the survivors) and
    nothing for the ranks ``gone``."""
    kept = np.ones(n, dtype=bool)
    kept[lost] = False
    label = np.cumsum(kept) - 1
    out: list[list[Any]] = []
    for r, group in enumerate(groups):
        new: list[Any] = []
        for item in [] if r in gone else group:
            if isinstance(item, str):
                new.append(item)
            elif isinstance(item, range):
                new.append(range(int(label[item.start]), int(label[item.stop - 1]) + 1)
                           if len(item) else item)
            else:
                new.append([int(i) for i in label[np.atleast_1d(np.asarray(item))]])
        out.append(new)
    return out


def start_survivors(runtime: Runtime, records: ArrayLike, spec: UMPCSpec,
                    hypergraph: Hypergraph | None = None) -> tuple:
    """A run across processes whose ranks ``runtime.gone`` never joined (a dropout at
    ``start``): ``(the survivors' records, E_S, the release's dropouts)``; the runtime's groups
    are renumbered onto the survivors (every process computes the same: the groups and E are
    public). E is the one the full run would draw (the agreed stream). O(n + k |E|)."""
    X = np.asarray(records)
    n = X.shape[0]
    lost = lost_parties(runtime.groups, runtime.gone, n)
    if hypergraph is None:
        hypergraph = public_hypergraph(spec, n, runtime)
    H, survivors, edges_lost = surviving_design(hypergraph, lost)
    if H.edges.shape[0] == 0:
        raise DropoutBoundError("no edge of the design survives the hosts that never joined: "
                                "no release")
    runtime.groups = _renumber(runtime.groups, runtime.gone, n, lost)
    return X[survivors], H, {"parties_lost": int(lost.size), "edges_lost": edges_lost,
                             "step": "start"}


def survivors_after_compute(run: Run, runtime: Runtime, kept: list, z: np.ndarray,
                            before: dict | None, *, partner: np.ndarray | None = None,
                            gone: frozenset | None = None, step: str = "computing",
                            z_edge: np.ndarray | None = None) -> tuple:
    """The roll call after steps 1 and 2 of a run across processes that tolerates dropouts.

    ``kept``: ``(edges, shares, edge sums' shares or None)`` of every chunk merged into
    ``z`` (this process's parties' running sums, uint64 (n,)) and the rows of ``z_edge``
    (their edge sums', uint64 (a, n)). Every process agrees the absent ranks
    (:meth:`~mpc.run.runtime.Runtime.roll_call`; ``gone``: those a roll call just agreed);
    with parties lost, each survivor removes its shares of the edges with a lost member
    from ``z`` and from each row of ``z_edge`` alike (in place, nothing is opened) and the
    run becomes the surviving design's (:func:`ustat.umpc.setup.surviving_run`: its epsilon
    split chosen from E_S's public parameters, as a run on E_S would). Class counts need
    nothing here: step 3 shares them after this roll call, among the survivors only.
    Returns ``(run, senders, dropouts)``: the run (``run`` itself, or E_S relabelled onto
    the survivors with their records and delta_S), the survivors' ids in ``z`` (None: every
    party) and the release's ``dropouts`` (``before``: those at start, merged; ``step``: where
    the losses were seen). ``partner``: with the input check
    (:func:`ustat.umpc.input_check.partners`), a party whose checking partner was lost is
    left out too (its check's result never came: its edges used an unchecked value). O(n +
    k |E|).
    """
    if gone is None:
        gone = runtime.roll_call(runtime.transport.gone)
    n = run.n
    lost = lost_parties(runtime.groups, gone, n)
    if partner is not None and lost.size:
        lost = np.union1d(lost, np.flatnonzero(np.isin(partner, lost)))
    if lost.size == 0:
        return run, None, before
    earlier = before or {}
    total = int(lost.size) + earlier.get("parties_lost", 0)
    if runtime.max_lost is not None and total > runtime.max_lost:
        raise DropoutBoundError(f"{total} parties vanished, more than max_dropouts = "
                                f"{runtime.max_lost}: no release")
    gone_mask = np.zeros(n, dtype=bool)
    gone_mask[lost] = True
    _leave_out(run, kept, gone_mask, z, z_edge)
    H, survivors, edges_lost = surviving_design(run.hypergraph, lost)
    if H.edges.shape[0] == 0:
        raise DropoutBoundError("no edge of the design survives: no release")
    return surviving_run(run, H, survivors), survivors, {"parties_lost": total,
                            "edges_lost": edges_lost + earlier.get("edges_lost", 0),
                            "step": f"start, {step}" if before else step}


def _leave_out(run: Run, kept: list, gone: np.ndarray, z: np.ndarray,
               z_edge: np.ndarray | None) -> None:
    """Subtract from ``z`` and the rows of ``z_edge`` (in place) this process's shares of the
    kept edges with a member in ``gone`` (bool (n,)): of f(x_e) and of each edge sum."""
    ring = run.session.ring
    rows = 0 if z_edge is None else z_edge.shape[0]
    drop = np.zeros((1 + rows, z.size), dtype=np.uint64)
    for edges, shares, aux in kept:
        out = gone[edges].any(axis=1)
        parts = [shares] + ([] if aux is None or not rows else list(aux))
        for row, part in zip(drop, parts):
            add_shares(row, edges[out], np.ascontiguousarray(part[:, out]))
    z[:] = ring.sub(z, drop[0] & ring.mask)
    if z_edge is not None and rows:
        z_edge[:] = ring.sub(z_edge, drop[1:] & ring.mask)


def noise_among_survivors(run: Run, runtime: Runtime, kept: list, z: np.ndarray,
                          draw: Callable, before: dict | None, *,
                          keep: tuple = (), partner: np.ndarray | None = None) -> tuple:
    """Steps 2-3 of a run across processes whose hosts may vanish: the roll call after the
    chunks (:func:`survivors_after_compute`), then the noise among the survivors, a roll
    call after it, and, if a host vanished *during the noise step*, the noise drawn again.

    ``draw(run, senders)``: step 3 on the survivors' run, adding each survivor's noise
    shares to ``z`` and the arrays of ``keep`` (``(z_edge,)``: the edge sums, whose lost
    edges' shares leave them as from ``z``) in place, and sharing the survivors' class
    counts among them; returns what the aggregation needs. A loss seen by the roll call
    after the noise: every process puts ``z`` and ``keep`` back as they were before the
    noise (local copies made here), leaves the new losses' edges out and draws the noise
    again among the new survivors S' (under ``hf`` the committee is drawn again among S',
    from new public coins; the class counts masked again, with fresh masks). Returns
    ``(run, senders, dropouts, draw's value, draws)``.

    Privacy of the discarded draw: the noise shares drawn before the loss are never added
    to anything that leaves a process (``z`` is sent once, in the last round, and is
    restored before the new draw), the new draw takes fresh coins from every contributor's
    stream and fresh public coins for a committee, and step 3 reads no record and no
    share of f(x_e). So what the aggregator receives, sum over S' of z_i plus fresh noise,
    has the distribution of a run on S' with no loss: independent of the discarded shares
    and of the messages of the aborted draw. Under ``hf`` the committee that counts is the
    last one, drawn after its predecessor's loss with new coins: its failure probability is
    ``committee_fail``, as without dropouts, for hosts that crash independently of the
    committee drawn (the model here: a vanished host is a crash, counted as corrupted; a
    host that could choose to vanish on seeing a committee could make up to r + 1 draws
    with r losses, failure probability at most (r + 1) ``committee_fail``). Cost: per
    draw, step 3 and one roll call (n_procs bytes to each peer); at most one draw per lost
    host. Threat model: the protocol's.
    """
    full, z0, keep0 = run, z.copy(), [a.copy() for a in keep]
    z_edge = keep[0] if keep else None
    run, senders, dropouts = survivors_after_compute(full, runtime, kept, z, before,
                                                     partner=partner, z_edge=z_edge)
    seen = "computing" if senders is not None else ""
    draws = 0
    while True:
        gone = runtime.gone
        at_step(runtime.transport, "noise")
        value = draw(run, senders)
        draws += 1
        now = runtime.roll_call(runtime.transport.gone)
        if not now - gone:
            return run, senders, dropouts, value, draws
        z[:] = z0                               # the draw's shares are discarded, unopened
        for a, a0 in zip(keep, keep0):
            a[:] = a0
        seen = f"{seen}, noise" if seen else "noise"
        run, senders, dropouts = survivors_after_compute(full, runtime, kept, z, before,
                                                         partner=partner, gone=now, step=seen,
                                                         z_edge=z_edge)


def check_no_new_loss(runtime: Runtime, gone: frozenset, step: str) -> None:
    """At the aggregator, after a last round without threshold sharing (a single party host:
    :mod:`ustat.umpc.last_round` otherwise): a host lost since the last roll call cannot
    be made up for (its noise share is missing, and a new noise would be a second noisy
    release of nearly the same sum): :class:`DropoutBoundError` naming the hosts and the
    step."""
    new = (frozenset(runtime.transport.gone) | runtime.gone) - gone
    if new:
        describe = getattr(runtime.transport, "describe", lambda r: f"process {r}")
        names = ", ".join(describe(r) for r in sorted(new))
        raise DropoutBoundError(f"{names} vanished during the {step} step, after the roll "
                                "call: no release (its noise share is missing; the budget "
                                "stays charged)")
