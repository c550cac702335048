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
   divided by |E|.

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
import time
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field, replace
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import ArrayLike

import fss
from mpc.comm.costs import Costs
from mpc.session import Session

from ..executors import Executor, Place, Program, Simulator, refusal
from ..specs.umpc import DEFAULT_CHUNK, DEFAULT_THREAT_MODEL, THREAT_MODELS, UMPCSpec
from .chunk import get_backend
from .dropouts import check_no_new_loss, noise_among_survivors, start_survivors
from .engines import run_chunks
from .evaluation import evaluate_run
from .input_check import check_inputs, partners
from .merge import merge_chunk
from .privacy import committee_note, noise_guarantee, resolve_noise_method
from .progress import Progress, StageClock, at_step
from .release import Split, release_fields
from .sampling_error import Design
from .setup import PIDLAP_MAX_PARTIES, Run, prepare_run
from .tasks import ChunkInputs, default_workers

if TYPE_CHECKING:
    from ..sampling import Hypergraph

__all__ = ["DEFAULT_CHUNK", "DEFAULT_THREAT_MODEL", "PIDLAP_MAX_PARTIES", "THREAT_MODELS",
           "UMPCResult", "run_umpc", "umpc_program"]


@dataclass
class UMPCResult:
    """What one run of the protocol releases and what it cost."""

    kernel: str
    statistic: str
    estimate: float                 # the released statistic, clamped into its valid range
    u_hat: float                    # the noisy incomplete U-statistic
    epsilon: float
    n: int
    edges: int
    degree: int
    max_degree: int
    sampler: str
    threat_model: str
    sensitivity: float              # delta_max * Delta f (of the sum)
    noise_scale: float              # Laplace-like scale of eta in U units (noise_std: statistic's)
    aux: dict
    online_bits: int
    offline_bits: int
    rounds: int
    max_party_bits: int
    mean_party_bits: float
    seconds: float                  # the whole call, the communication report included
    insecure_seed: bool
    communication: dict
    evaluation: dict | None = None
    notes: list = field(default_factory=list)
    backend: str = "dealer"         # how f(x_e) was computed (ustat.umpc.chunk.BACKENDS)
    backend_trust: str = ""         # whom that backend trusts
    workers: int = 1                # local workers (or the Dask workers asked for)
    scheduler: str | None = None  # Dask scheduler ("local", an address) or None
    chunks: int = 1                 # chunks of edges the computing phase ran in
    estimate_raw: float = math.nan  # the released statistic before the range clamp
    noise_std: float = 0.0          # sd of the DP noise in the statistic's units (delta method)
    confidence: float = 0.95        # level of ci
    ci: list = field(default_factory=list)        # [lo, hi] (ustat.umpc.release)
    ci_method: str = ""
    epsilon_split: dict = field(default_factory=dict)   # name -> epsilon ({} when eps = inf)
    precision: dict = field(default_factory=dict)       # bits, frac_bits, input_frac_bits, ...
    warnings: list = field(default_factory=list)
    uncertainty: dict = field(default_factory=dict)     # the noise and sampling sds apart
    stage_seconds: dict = field(default_factory=dict)   # where ``seconds`` went (run_umpc)
    noise_method: str = ""          # "mpc" or "polya" ("" when epsilon = inf: no noise)
    delta: float = 0.0              # the release's delta (the in-MPC sampler's; 0 for Polya)
    noise_guarantee: dict = field(default_factory=dict)  # method, epsilon, delta, coalition
    noise_seconds: float = 0.0      # step 3 alone (inside ``computing``, beside the chunks)
    costs: Costs | None = None   # mpc.comm.costs.Costs: the same figures as ``communication``
    processes: int = 1              # processes the run's participants were spread over
    process_costs: list = field(default_factory=list)   # per process: holds, wire bytes, seconds
    released: bool = True           # False in a process without the aggregator (no release)
    aux_epsilon_fraction: float = 0.0   # class counts' share of epsilon (0 without counts)
    edge_aux: dict = field(default_factory=dict)   # names, noisy_means, epsilon, noise
    edge_aux_epsilon_fraction: float = 0.0  # the edge sums' share of epsilon (0 without)
    spec: dict = field(default_factory=dict)    # the UMPCSpec it ran (UMPCSpec.from_dict)
    dropouts: dict | None = None    # parties_lost, edges_lost, step (ustat.umpc.dropouts)

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass
class _Noise:
    """What step 3 leaves for aggregation and the result."""

    aux_values: np.ndarray          # (n, a) per-record aux values (class counts)
    aux_z: np.ndarray               # (n, a) each party's masked, noisy aux shares
    info: dict                      # accounting of every noise draw
    eps_u: float                    # epsilon spent on the U-statistic
    eps_aux: float                  # epsilon spent on each aux sum
    guarantee: dict = field(default_factory=dict)   # _noise_guarantee ({} without noise)
    seconds: float = 0.0                            # the noise draws' wall time
    notes: list = field(default_factory=list)       # why the default method was not "mpc"
    eps_edge: float = 0.0                           # epsilon spent on each edge sum


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
    if runtime is not None and runtime.gone:    # hosts that never joined: their parties' edges
        records, hyper, dropouts = start_survivors(runtime, records, spec, options["hypergraph"])
        options = dict(options, hypergraph=hyper)
    clock = StageClock()
    workers = default_workers() if workers is None else workers
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
            partner = None
            if pr.check_inputs:     # issue 39: every input range-checked on its shares
                run.enc = check_inputs(run.session, run.enc, run.kern,
                                       run.precision.input_frac_bits, ex.backend,
                                       run.rng.derive("input-check"))
                partner = partners(run.session, run.rng.derive("input-check"), run.n)
            clock.lap("setup")
            bar.total = run.m
            bar.stage("computing")
            z = np.zeros(run.n, dtype=np.uint64)   # each party's running sum of its shares
            z_edge = np.zeros((len(run.kern.edge_aux_names), run.n), dtype=np.uint64)
            noise = []                             # step 3 runs while the workers compute
            # across hosts that may vanish: per-edge shares kept, the noise after a roll call
            vanish = runtime is not None and bool(getattr(runtime.transport, "may_vanish", ()))
            kept: list | None = [] if vanish else None
            _share_and_compute(run, z, ex.chunk_size, bar, **where, z_edge=z_edge, kept=kept,
                               meanwhile=None if kept is not None else lambda: noise.append(
                                   _noise(run, z, run.aux_fraction, noise_kw, z_edge)))
            senders = None
            if kept is not None:
                run, senders, dropouts = _survivors_noise(run, runtime, kept, (z, z_edge),
                                                          noise, noise_kw, dropouts, partner)
        finally:
            if run.prefetch is not None:
                run.prefetch.close()
        if method_note and math.isfinite(run.eps):
            noise[0].notes.append(method_note)
        clock.lap("computing")
        bar.stage("aggregation")
        at_step(runtime and runtime.transport, "aggregation")
        u_hat, aux_sums, edge_means = _aggregate(run, z, noise[0].aux_z, z_edge, senders)
        if kept is not None and run.session.is_local("aggregator"):
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


def _result(run, threat_model, u_hat, aux_sums, noise, evaluation, engine, confidence,
            edge_means):
    kern, session = run.kern, run.session
    costs = session.costs()
    rep = session.net.report()
    sens_sum = run.delta_max * kern.sensitivity
    released = bool(session.is_local("aggregator"))
    if released:
        rel = release_fields(kern, u=u_hat, aux=aux_sums, n=run.n, m=run.m,
                             split=Split(run.eps, noise.eps_u, noise.eps_aux, noise.eps_edge),
                             info=noise.info, frac_bits=session.fp.frac_bits,
                             confidence=confidence,
                             design=Design.of_edges(run.E, run.n, run.hypergraph.name),
                             edge_aux=edge_means)
    else:                       # a process without the aggregator releases nothing
        u_hat, aux_sums = math.nan, [math.nan] * len(aux_sums)
        edge_means = [math.nan] * len(edge_means)
        rel = {"estimate": math.nan, "estimate_raw": math.nan, "noise_std": math.nan,
               "confidence": confidence, "ci": [], "ci_method": "", "epsilon_split": {},
               "warnings": [], "uncertainty": {}}
    precision = run.precision.to_dict()
    precision["units"] = "raw (bounds)" if run.bounds is not None else "records as given"
    return UMPCResult(
        kernel=kern.name, statistic=kern.statistic, u_hat=u_hat, precision=precision, **rel,
        epsilon=run.eps, n=run.n, edges=run.m, degree=kern.degree, max_degree=run.delta_max,
        sampler=run.hypergraph.name, threat_model=threat_model, sensitivity=sens_sum,
        noise_scale=(sens_sum / noise.eps_u / run.m) if math.isfinite(run.eps) else 0.0,
        aux={"names": list(kern.aux_names), "noisy_sums": aux_sums, "epsilon": noise.eps_aux,
             "noise": noise.info},
        online_bits=rep["online"]["bits"], offline_bits=rep["offline"]["bits"],
        rounds=rep["online"]["rounds"], max_party_bits=rep["online"]["max_party_bits"],
        mean_party_bits=rep["online"]["mean_party_bits"], seconds=math.nan,
        insecure_seed=run.session.insecure, communication=rep, evaluation=evaluation,
        notes=_notes(run, noise.info) + noise.notes, noise_method=noise.guarantee.get("method", ""),
        delta=noise.guarantee.get("delta", 0.0), noise_guarantee=noise.guarantee,
        noise_seconds=noise.seconds, costs=costs, released=released,
        processes=session.placement.n_procs,
        aux_epsilon_fraction=run.aux_fraction if kern.aux_names else 0.0,
        edge_aux={"names": list(kern.edge_aux_names), "noisy_means": list(edge_means),
                  "epsilon": noise.eps_edge,
                  "noise": {name: noise.info[name] for name in kern.edge_aux_names
                            if name in noise.info}} if kern.edge_aux_names else {},
        edge_aux_epsilon_fraction=run.edge_fraction, **engine)


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
                kept.append((Ec, res.shares))
            bar.advance(Ec.shape[0])
    z &= run.session.ring.mask
    if z_edge is not None:
        z_edge &= run.session.ring.mask


def _noise(run: Run, z, aux_fraction, noise_kw, z_edge=None):
    """Step 3: shares of the DP noise added to z and the rows of ``z_edge`` (the edge sums)
    in place (and the masked, noisy aux values).

    Independent of the kernel's shares, so it runs while the chunks compute
    (the paper's "possibly in parallel"); its randomness comes from the
    session's stream, not the chunks'.

    Returns a :class:`_Noise` (aux values and shares, accounting, epsilons).
    """
    from noise.distributed import shared_dlap_noises

    kern, session, eps = run.kern, run.session, run.eps
    ring, net = session.ring, session.net
    aux_values = kern.aux(run.X) if kern.aux is not None else np.zeros((run.n, 0))
    n_aux = aux_values.shape[1]
    eps_u, eps_aux, eps_edge = eps, 0.0, 0.0
    n_edge = len(kern.edge_aux_names)
    if n_aux and math.isfinite(eps):
        eps_aux = eps * aux_fraction
        eps_u = eps - eps_aux
    if n_edge and math.isfinite(eps) and run.edge_fraction > 0:
        eps_edge = eps * run.edge_fraction / n_edge
        eps_u -= eps * run.edge_fraction
    aux_z = np.zeros((run.n, n_aux), dtype=np.uint64)
    if n_aux:
        aux_z[:] = _mask_aux(session, session.fp.encode(aux_values), run.rng)
    info, guarantee, seconds = {}, {}, 0.0
    if math.isfinite(eps):
        specs = ([(eps_u, run.delta_max * kern.sensitivity)]
                 + [(eps_aux, kern.aux_sensitivity)] * n_aux
                 + ([(eps_edge, float(run.delta_max))] * n_edge if eps_edge > 0 else []))
        t0 = time.perf_counter()
        with net.phase("noise"):
            noises = shared_dlap_noises(session, specs, **noise_kw)
        seconds = time.perf_counter() - t0
        z[noises[0].parties] = ring.add(z[noises[0].parties], noises[0].shares)
        info["u"] = _noise_summary(noises[0])
        for a, nz in enumerate(noises[1:1 + n_aux]):
            aux_z[nz.parties, a] = ring.add(aux_z[nz.parties, a], nz.shares)
            info[kern.aux_names[a]] = _noise_summary(nz)
        for a, nz in enumerate(noises[1 + n_aux:]):      # edge sums: values in [0, 1]
            assert z_edge is not None
            z_edge[a, nz.parties] = ring.add(z_edge[a, nz.parties], nz.shares)
            info[kern.edge_aux_names[a]] = _noise_summary(nz)
        guarantee = noise_guarantee(noises)
    return _Noise(aux_values, aux_z, info, eps_u, eps_aux, guarantee, seconds, eps_edge=eps_edge)


def _survivors_noise(run: Run, runtime, kept, sums, noise, noise_kw, dropouts, partner):
    """After steps 1-2 of a run whose hosts may vanish: the roll call, the lost edges out of
    the running ``sums`` (z, z_edge), then step 3 among the survivors, drawn again if a host
    vanishes within it (:func:`ustat.umpc.dropouts.noise_among_survivors`). (the survivors'
    run, their ids or None, the release's dropouts)."""
    z, z_edge = sums

    def draw(survivors: Run, senders):
        kw = dict(noise_kw) if senders is None else dict(noise_kw, parties=senders)
        return _noise(survivors, z, survivors.aux_fraction, kw, z_edge)

    run, senders, dropouts, drawn, draws = noise_among_survivors(
        run, runtime, kept, z, draw, dropouts, keep=(z_edge,), partner=partner)
    if draws > 1:
        drawn.notes.append(f"a party host vanished during the noise step: the noise drawn "
                           f"then was discarded unopened and drawn again among the "
                           f"survivors ({draws} draws"
                           + ("; the committee drawn again each time)" if
                              noise_kw["threat_model"] == "hf" else ")"))
    noise.append(drawn)
    return run, senders, dropouts


def _aggregate(run: Run, z, aux_z, z_edge, senders=None):
    """Step 4: every party (``senders``: the survivors' ids) sends z_i (its edge sums' and aux
    shares too) to the aggregator (1 round, n l bits per sum). (U, aux sums, edge sums'
    means)."""
    session = run.session
    net, ring = session.net, session.ring
    a = z_edge.shape[0]
    if senders is not None:
        z, z_edge = z[senders], z_edge[:, senders]
    with net.phase("aggregation"):
        payload = np.concatenate([z[:, None], z_edge.T, aux_z], axis=1)
        net.send(net.parties if senders is None else senders, net.role("aggregator"),
                 payload, ring.bits)
        totals = ring.sum(payload, axis=0)
    decoded = [float(session.fp.decode(t)) for t in totals]
    return decoded[0] / run.m, decoded[1 + a:], [v / run.m for v in decoded[1:1 + a]]


def _notes(run: Run, noise_info) -> list:
    notes = []
    if not math.isfinite(run.eps):
        notes.append("epsilon = inf: no noise was added; the release is NOT differentially private")
    if run.session.insecure:
        notes.append("seeded run: randomness is reproducible and NOT secure")
    if any(not info["exact"] for info in noise_info.values()):
        notes.append("noise: a component was not drawn by an exact integer sampler, so "
                     "its distribution is approximate")
    return notes


def _mask_aux(session: Session, values: np.ndarray, rng) -> np.ndarray:
    """2-of-2 share each party's aux values with its successor on a random cycle.

    Party i keeps v_i - r_i and sends r_i to its successor (one round in the
    sharing phase, n * a * l bits), so the value each party sends to the
    aggregator is uniform unless it colludes with its predecessor. The cycle
    is public (drawn from the run's randomness).
    """
    n = values.shape[0]
    ring, net = session.ring, session.net
    order = session.agreed(rng.derive("aux-cycle")).permutation(n)     # public: every process
    succ = np.empty(n, dtype=np.int64)
    succ[order] = np.roll(order, -1)
    r = rng.derive("aux-masks").ring_elements(ring, values.shape)
    with net.phase("sharing"):
        net.send(np.arange(n), succ, r, ring.bits)
    out = ring.sub(values, r)
    np.add.at(out, succ, r)
    return out & ring.mask


def _noise_summary(noise) -> dict:
    """The accounting of one noise draw, as JSON-friendly values."""
    out = {"distribution": noise.distribution, "scale_ring_units": float(noise.scale),
           "epsilon": float(noise.epsilon), "sensitivity": float(noise.sensitivity),
           "threat_model": noise.threat_model, "exact": bool(noise.exact),
           "variance_factor": float(getattr(noise, "variance_factor", 1.0)),
           "method": noise.method, "delta": float(noise.delta)}
    if noise.sampler is not None:
        out["sampler"] = dict(noise.sampler)
    if noise.committee is not None:
        out["committee_size"] = int(np.size(noise.committee))
    return out
