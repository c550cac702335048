"""Protocol 3.1 (Pi_U-MPC) of Sinh and Ramon: a DP U-statistic of any degree k >= 2.

n parties hold one record each. For a hypergraph E of k-subsets of the
parties (:mod:`ustat.sampling`), the protocol releases

    U_hat = (sum over e in E of f(x_e) + eta) / |E|

where eta is discrete Laplace noise of scale delta_max * Delta f / epsilon
(delta_max: the largest number of edges a party belongs to; Delta f: the
kernel's range), so that U_hat is epsilon-DP with respect to replacing one
party's record.

:func:`run_umpc` runs the four steps of the paper's online phase, all on the
simulated network (:class:`mpc.session.Session`), which counts every bit:

1. *Sharing* (online, 1 round): for every edge e and member j, party e_j
   splits each of its d input columns into k additive shares in Z_2^l and
   sends one to every other member: |E| k (k-1) d l bits.
2. *Computing* (online; the kernel's gate and Beaver rounds): the backend's
   secure evaluation of the kernel (:mod:`ustat.secure`); each member ends
   with a share of f(x_e); for k > 2 nothing about f(x_e) is revealed unless
   all k members collude. Preprocessing from the trusted dealer (offline
   traffic, counted apart).
   Steps 1 and 2 run per chunk of edges (:func:`ustat.umpc.chunk.run_chunk`),
   in process, on a pool of workers or on Dask (:mod:`ustat.umpc.engines`);
   chunks travel together, so their rounds count once. With BalancedSamp the
   kept workers deal the first chunks' preprocessing while E is drawn
   (:mod:`ustat.umpc.setup`, :mod:`ustat.umpc.prefetch`).
3. *Noise* (threat model dependent, see :mod:`noise.distributed`), by the
   chosen ``noise_method``: ``"mpc"`` (default with the dealer backend) samples
   one discrete Laplace inside a secure computation among all parties
   (``"dis"``) or a random committee of about 40 (``"hf"``), from coins each
   contributor draws alone (:mod:`noise.mpc_noise`): the central model's
   variance, epsilon against all but one contributor, a delta <= 2^-40 for
   the sampler; ``"polya"`` has every contributor add Polya shares sized for a
   tolerated coalition: ``"dis"`` (M_Dis: up to n-1 corrupted parties) runs
   Pi_DLap, n^2 l bits; ``"hf"`` (M_HF: at most a 1 - f_H fraction
   corrupted) has a random committee draw the noise, O(n l) bits. It does not
   depend on the kernel's shares, so it runs in the calling process while the
   workers compute the chunks (the paper's "possibly in parallel").
4. *Aggregation* (online, 1 round): every party sends the sum of its shares
   plus its noise share to the aggregator (n l bits), who releases the sum
   divided by |E|. In a deployment whose party hosts may vanish, 2 rounds:
   the hosts' sums are Shamir-shared among the hosts, then interpolated by
   the aggregator from the evaluations that arrive (:mod:`ustat.umpc.last_round`).

Kernels with auxiliary sums (the class counts of the AUC and VUS) aggregate
them in the same round with their own discrete Laplace noise and a share of
epsilon (``aux_epsilon_fraction``); the released statistic is the kernel's
post-processing of the noisy sums. Kernels with edge sums
(:attr:`ustat.kernels.Kernel.edge_aux_names`: Kendall's fraction of untied
pairs, h^2 summed over E) get them from the same secure evaluation, added to
each member's running sums like f(x_e), and aggregate them in the same round
with their own discrete Laplace noise (sensitivity delta_max) and share of
epsilon (``edge_aux_epsilon_fraction``, chosen from public parameters by
:func:`ustat.umpc.release.choose_edge_fraction`); only the interval uses them.

With ``privacy.check_inputs`` every party's encoded input is range-checked
on its shares before step 1, once per party and column (:mod:`ustat.umpc.input_check`:
3 rounds, a comparison gate per input), so that a party that skips its local
check cannot push a kernel beyond its sensitivity.

Before step 1 the encoding is chosen per kernel from public parameters
(:mod:`ustat.umpc.precision`: comparison kernels get as many input
fractional bits as the ring allows, arithmetic kernels a ring whose
accumulator cannot wrap); after step 4 the release is post-processed
(:mod:`ustat.umpc.release`: range clamp, noise in the statistic's units,
confidence interval, warnings, epsilon split). docs/guides/release.md explains both.

Cost in time and memory is linear in n and |E|: the calling process holds
the records, their encoding, each party's running sum and the network's
per-party counters (O(n)), the edge list (8 k bytes per edge), and at most
2 chunks per worker in flight (see :mod:`ustat.umpc.chunk` for a chunk's
memory).

Where the steps live: this module holds the program (:func:`umpc_program`,
the input check, steps 1 and 2 over the chunks); step 3 is
:mod:`ustat.umpc.noise_step`; step 4 and the result are :mod:`ustat.umpc.result`.

Threat model: static semi-honest adversary, private authenticated channels,
trusted dealer for preprocessing (none with backend "gc"). Inputs stay hidden from any coalition
allowed by the threat model; the release is DP against the aggregator. With
Polya noise a coalition that colludes with the aggregator can subtract its
members' own noise contributions, so its DP guarantee rests on the honest
parties' share of the noise (see :mod:`noise.distributed`); noise sampled
inside MPC is hidden from every coalition that lacks one contributor.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import replace
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import ArrayLike

import fss
from mpc.session import Session

from ..executors import Executor, Place, Program, Simulator, refusal
from ..specs.umpc import DEFAULT_CHUNK, DEFAULT_THREAT_MODEL, THREAT_MODELS, UMPCSpec
from .chunk import get_backend
from .dropouts import check_no_new_loss, start_survivors
from .engines import run_chunks
from .evaluation import evaluate_run
from .input_check import check_inputs, partners
from .last_round import finish, plan
from .merge import merge_chunk
from .noise_step import _noise, _survivors_noise
from .privacy import committee_note, resolve_noise_method
from .progress import Progress, StageClock, at_step
from .result import UMPCResult, _aggregate, _result
from .setup import PIDLAP_MAX_PARTIES, Run, prepare_run
from .tasks import ChunkInputs, default_workers

if TYPE_CHECKING:
    from ..sampling import Hypergraph

__all__ = ["DEFAULT_CHUNK", "DEFAULT_THREAT_MODEL", "PIDLAP_MAX_PARTIES", "THREAT_MODELS",
           "UMPCResult", "run_umpc", "umpc_program"]


def run_umpc(records: ArrayLike, spec: UMPCSpec, executor: Executor | None = None, *,
             session: Session | None = None, hypergraph: Hypergraph | None = None,
             evaluate: bool | str = False,
             progress: bool = False, record_views: bool = False) -> UMPCResult:
    """Run Protocol 3.1 as ``spec`` says, where ``executor`` says; the release and its costs.

    Parameters
    ----------
    records : (n, d) array: with ``spec.precision.bounds``, raw values within
        their public bounds (numeric columns) and integer codes (categorical
        columns); without, numeric columns normalized to [0, 1].
    spec : a :class:`ustat.specs.UMPCSpec` (kernel, privacy and threat model,
        precision, sampling design, execution options, confidence level),
        e.g. ``UMPCSpec.of("kendall", epsilon=1.0, threat_model="hf")``.
    executor : where the program runs (:mod:`ustat.executors`): the simulator
        (default; ``Simulator(workers=4)`` spreads the chunks over 4 worker
        processes, results bit-identical for any number), ``Dask(scheduler)``,
        ``LocalProcesses(P)`` (each process receives only its own parties'
        records; the aggregator's process releases) or a deployment's
        participant. A seeded spec releases the same bits under every executor.
    session : an existing :class:`mpc.session.Session` with n parties (it fixes
        bits and frac_bits; every run takes a fresh stream from it: two runs
        never reuse masks or keys). In this process only.
    hypergraph : a precomputed :class:`ustat.sampling.Hypergraph` (else drawn as
        ``spec.design`` says).
    evaluate : also compute the exact incomplete and complete statistics on
        the raw values given (``exact_raw``) and on the encoded ones
        (``exact_encoded``; tests and experiments only: it reads every record in
        the clear); ``"incomplete"`` skips the complete ones. In this process only.
    progress : a progress line on stderr if it is a terminal and the run
        takes more than a second.
    record_views : record what each party receives (tests, small n).

    Cost: see the module docstring; every figure in the result is measured.
    ``seconds`` is the whole call; ``stage_seconds`` splits it: ``setup``
    (checks, drawing E, precision, encoding), ``computing`` (steps 1 to 3:
    the chunks, their merge, and the noise), ``aggregation`` (step 4),
    ``evaluation`` (only with ``evaluate``) and ``report`` (the communication
    report and the release's post-processing). Only ``computing`` runs on the
    workers, so the others bound what more workers can gain.
    """
    program = umpc_program(records, spec, session=session, hypergraph=hypergraph,
                           evaluate=evaluate, progress=progress, record_views=record_views)
    return (Simulator() if executor is None else executor).run(program)


#: the roles of a U-MPC session besides its parties
ROLES = ("dealer", "aggregator")


def umpc_program(records: ArrayLike, spec: UMPCSpec, *, session: Session | None = None,
                 hypergraph: Hypergraph | None = None, evaluate: bool | str = False,
                 progress: bool = False,
                 record_views: bool = False) -> Program:
    """Protocol 3.1 on ``records`` as one SPMD program (:class:`ustat.executors.Program`):
    the records are the parties' private rows (a process of a run across processes holds
    its own, the others' are the lower bound, or 0)."""
    if not isinstance(spec, UMPCSpec):
        raise TypeError(f"spec must be a ustat.specs.UMPCSpec, got {type(spec).__name__} "
                        "(e.g. UMPCSpec.of('kendall', epsilon=1.0))")
    X = np.asarray(records)
    n = X.shape[0] if X.ndim else 0
    local_only = None
    if session is not None:
        local_only = ("processes= makes its own sessions, one per process: do not pass "
                      "session=")
    elif evaluate:
        local_only = "evaluate reads every record in the clear: not with processes="
    options = dict(session=session, hypergraph=hypergraph, evaluate=evaluate,
                   progress=progress, record_views=record_views)
    return Program(name=f"U-MPC ({spec.kern.name})", main=_main, n=n, roles=ROLES,
                   args=(spec, options), rows={"records": (records, _filler(X, spec))},
                   warm_up=(fss.warm_up,) if spec.execution.backend == "dealer" else (),
                   chunked=True, local_only=local_only)


def _filler(X: np.ndarray, spec: UMPCSpec):
    """A public value per column for the rows a process does not hold (valid for the checks)."""
    d = X.shape[1] if X.ndim > 1 else 1
    if X.dtype.kind not in "f":
        return np.zeros(d, dtype=X.dtype)
    bounds = spec.precision.bounds
    if bounds is None:
        return np.zeros(d)
    return np.array([0.0 if b is None else float(b[0]) for b in bounds])


def _main(place: Place, spec: UMPCSpec, options: dict, records) -> UMPCResult:
    """The protocol in one process (:func:`run_umpc`; ``place``: this process's runtime and
    chunk engine)."""
    pr, ex = spec.privacy, spec.execution
    runtime = place.runtime
    evaluate, progress = options["evaluate"], options["progress"]
    workers, pool, scheduler = place.workers, place.pool, place.scheduler
    if runtime is not None:
        if evaluate:
            raise ValueError("evaluate reads every record in the clear: not in a run across "
                             "processes")
        workers, scheduler, progress = 1, None, False
    dropouts = None
    # hosts that may vanish: the last round by threshold sharing (its plan from the groups)
    last = plan(runtime, np.asarray(records).shape[0]) if runtime is not None else None
    if runtime is not None and runtime.gone:    # hosts that never joined: their parties' edges
        records, hyper, dropouts = start_survivors(runtime, records, spec, options["hypergraph"])
        options = dict(options, hypergraph=hyper)
    clock = StageClock()
    workers = default_workers() if workers is None else workers
    noise_kw, method_note = _noise_options(spec)
    # across hosts that may vanish: per-edge shares kept, the noise after a roll call
    vanish = runtime is not None and bool(getattr(runtime.transport, "may_vanish", ()))
    where = {"workers": workers, "pool": pool, "scheduler": scheduler}   # the chunks' engine
    with Progress(0, progress) as bar:
        bar.stage("sampling")
        try:        # checks, E (public randomness), precision, encoding: no noise yet
            run = prepare_run(records, spec, options["session"], options["hypergraph"],
                              dict(where, record_views=options["record_views"],
                                   noise_method=noise_kw["method"], runtime=runtime))
        except (ValueError, TypeError) as exc:
            refusal(exc)
            raise
        try:
            run, sums, noise, senders, dropouts = _steps_1_to_3(
                run, spec, runtime, vanish, where, noise_kw, bar, clock, dropouts, last)
        finally:
            if run.prefetch is not None:
                run.prefetch.close()
        if method_note and math.isfinite(run.eps):
            noise[0].notes.append(method_note)
        clock.lap("computing")
        bar.stage("aggregation")
        at_step(runtime and runtime.transport, "aggregation")
        totals = None
        if noise[0].last_round is not None:     # threshold: survives a host lost now
            totals, dropouts = finish(run, runtime, noise[0].last_round, dropouts)
        u_hat, aux_sums, edge_means = _aggregate(run, sums[0], noise[0].aux_z, sums[1], senders,
                                                 totals)
        if vanish and totals is None and run.session.is_local("aggregator"):
            check_no_new_loss(runtime, runtime.gone, "aggregation")
        at_step(runtime and runtime.transport, "released")
        clock.lap("aggregation")
    evaluation = None
    if evaluate:
        evaluation = evaluate_run(run, noise[0].aux_values, evaluate, ex.chunk_size)
        clock.lap("evaluation")
    engine = {"backend": ex.backend, "backend_trust": get_backend(ex.backend).trust,
              "workers": workers, "chunks": -(-run.m // ex.chunk_size),
              "scheduler": None if scheduler is None else
              scheduler if isinstance(scheduler, str) else type(scheduler).__name__}
    result = _result(run, pr.threat_model, u_hat, aux_sums, noise[0], evaluation, engine,
                     spec.confidence, edge_means)
    result.spec = spec.to_dict()
    capped = committee_note(spec, run.n)
    if capped and math.isfinite(run.eps):
        result.notes.append(capped)
    clock.lap("report")
    result.seconds, result.stage_seconds = clock.total(), clock.laps
    result.dropouts = dropouts
    return result


def _noise_options(spec: UMPCSpec) -> tuple[dict, str | None]:
    """Step 3's keywords (:func:`noise.distributed.shared_dlap_noises`) from public
    parameters, and why the method is not the default one (or None); a bad combination is
    refused before anything is computed."""
    pr, ex = spec.privacy, spec.execution
    try:
        method, method_note = resolve_noise_method(pr.noise_method, ex.backend,
                                                   pr.max_colluders, pr.epsilon)
    except (ValueError, TypeError) as exc:      # public parameters: nothing computed yet
        refusal(exc)
        raise
    noise_kw = {"threat_model": pr.threat_model, "fail": pr.committee_fail,
                "f_h": pr.honest_fraction, "method": method,
                "triples": "ot" if ex.backend == "gc" else "dealer"}
    noise_kw.update({key: v for key, v in (("max_colluders", pr.max_colluders),
                                           ("committee_size", pr.committee_size))
                     if v is not None})
    return noise_kw, method_note


def _steps_1_to_3(run: Run, spec: UMPCSpec, runtime, vanish: bool, where: dict,
                  noise_kw: dict, bar, clock: StageClock, dropouts, last=None):
    """The optional input check, then steps 1 and 2 over the chunks with step 3 beside them
    (after a roll call when hosts may vanish). (run, the running sums (z, z_edge), the noise
    drawn (one :class:`ustat.umpc.noise_step._Noise`), the senders of step 4 or None, the
    release's dropouts). ``vanish``: hosts may vanish (the shares are kept per edge);
    ``last``: the last round's plan (:mod:`ustat.umpc.last_round`), reshared after the noise."""
    ex = spec.execution
    partner = None
    if spec.privacy.check_inputs:     # issue 39: every input range-checked on its shares
        run.enc = check_inputs(run.session, run.enc, run.kern,
                               run.precision.input_frac_bits, ex.backend,
                               run.rng.derive("input-check"))
        partner = partners(run.session, run.rng.derive("input-check"), run.n)
    clock.lap("setup")
    bar.total = run.m
    bar.stage("computing")
    z = np.zeros(run.n, dtype=np.uint64)   # each party's running sum of its shares
    z_edge = np.zeros((len(run.kern.edge_aux_names), run.n), dtype=np.uint64)
    noise: list = []                       # step 3 runs while the workers compute
    kept: list | None = [] if vanish else None
    _share_and_compute(run, z, ex.chunk_size, bar, **where, z_edge=z_edge, kept=kept,
                       meanwhile=None if kept is not None else lambda: noise.append(
                           _noise(run, z, run.aux_fraction, noise_kw, z_edge)))
    senders = None
    if kept is not None:
        run, senders, dropouts = _survivors_noise(run, runtime, kept, (z, z_edge),
                                                  noise, noise_kw, dropouts, partner, last)
    return run, (z, z_edge), noise, senders, dropouts


def _share_and_compute(run: Run, z: np.ndarray, chunk_size: int, bar,
                       z_edge: np.ndarray | None = None, kept: list | None = None,
                       **engine) -> None:
    """Steps 1 and 2 over all chunks: adds each party's shares of f(x_e) to z (in place),
    and of the kernel's edge sums to the rows of ``z_edge`` ((a, n)).

    The chunks' traffic is merged into the session's network in chunk order
    as parallel lanes (rounds counted once); per chunk O(m_c k) work here.
    ``engine`` goes to :func:`ustat.umpc.engines.run_chunks`.
    """
    net = run.session.net
    tasks = ChunkInputs.of_run(run.enc, run.E, chunk_size)
    assert run.spec is not None             # prepare_run made it
    link = net.link
    if link is not None:                    # across processes: each chunk's members' processes
        roles = np.array([net.role(r) for r in run.spec.roles], dtype=np.int64)
        run.spec = replace(run.spec, locate=lambda i: link.sub(
            np.concatenate([tasks.edges_of(i).ravel(), roles])))
        engine = dict(engine, workers=1, scheduler=None)
    todo: Iterable[tuple[int, np.ndarray]] = tasks
    first = 0
    if run.prefetch is not None:            # the first chunks wait in their workers
        run.prefetch.post(tasks)
        first = len(run.prefetch)
        todo = ((i, tasks.values(i)) for i in range(first, len(tasks)))
    with net.parallel():
        for res in run_chunks(run.spec, todo, len(tasks) - first, prefetch=run.prefetch,
                              **engine):
            Ec = tasks.edges_of(res.index)
            merge_chunk(net, z, Ec, res, z_edge)
            if kept is not None:            # a dropout's edges leave the sums later
                kept.append((Ec, res.shares, res.aux_shares))
            bar.advance(Ec.shape[0])
    z &= run.session.ring.mask
    if z_edge is not None:
        z_edge &= run.session.ring.mask
