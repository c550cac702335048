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
post-processing of the noisy sums.

Before step 1 the encoding is chosen per kernel from public parameters
(:mod:`ustat.umpc.precision`: comparison kernels get as many input
fractional bits as the ring allows, arithmetic kernels a ring whose
accumulator cannot wrap); after step 4 the release is post-processed
(:mod:`ustat.umpc.release`: range clamp, noise in the statistic's units,
confidence interval, warnings, epsilon split). docs/release.md explains both.

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
from dataclasses import asdict, dataclass, field, replace
from typing import Optional

import numpy as np

from mpc.comm.costs import Costs
from mpc.session import Session

from .chunk import get_backend
from .engines import POOLS, ChunkInputs, default_workers, run_chunks
from .evaluation import evaluate_run
from .inputs import check_positive_int
from .merge import merge_chunk
from .progress import Progress, StageClock
from .release import check_confidence, release_fields
from .privacy import noise_guarantee, resolve_noise_method
from .sampling_error import Design
from .setup import DEFAULT_THREAT_MODEL, PIDLAP_MAX_PARTIES, THREAT_MODELS, Run, prepare_run

DEFAULT_CHUNK = 1 << 17
__all__ = ["DEFAULT_CHUNK", "DEFAULT_THREAT_MODEL", "PIDLAP_MAX_PARTIES", "THREAT_MODELS",
           "UMPCResult", "run_umpc"]


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
    evaluation: Optional[dict] = None
    notes: list = field(default_factory=list)
    backend: str = "dealer"         # how f(x_e) was computed (ustat.umpc.chunk.BACKENDS)
    backend_trust: str = ""         # whom that backend trusts
    workers: int = 1                # local workers (or the Dask workers asked for)
    scheduler: Optional[str] = None  # Dask scheduler ("local", an address) or None
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
    costs: Optional[Costs] = None   # mpc.comm.costs.Costs: the same figures as ``communication``
    processes: int = 1              # processes the run's participants were spread over
    process_costs: list = field(default_factory=list)   # per process: holds, wire bytes, seconds
    released: bool = True           # False in a process without the aggregator (no release)
    aux_epsilon_fraction: float = 0.0   # class counts' share of epsilon (0 without counts)

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


def run_umpc(records, kernel, *, epsilon=1.0, edges="2n", sampler="balanced",
             threat_model: str = DEFAULT_THREAT_MODEL, session: Optional[Session] = None,
             seed=None, bits: Optional[int] = None, frac_bits: Optional[int] = None,
             chunk_size: int = DEFAULT_CHUNK,
             evaluate=False, progress: bool = False, hypergraph=None,
             fail: float = 2.0**-40, f_h: float = 0.5,
             aux_epsilon_fraction: Optional[float] = None,
             record_views: bool = False, workers: Optional[int] = None,
             pool: str = "processes", scheduler=None, backend: str = "dealer",
             max_colluders=None, committee_size=None, resolution: Optional[float] = None,
             input_frac_bits: Optional[int] = None, bounds=None,
             confidence: float = 0.95, noise_method: Optional[str] = None,
             processes: Optional[int] = None, runtime=None,
             timeout: Optional[float] = None) -> UMPCResult:
    """Run Protocol 3.1 and return the release with its measured costs.

    Parameters
    ----------
    records : (n, d) array, numeric columns normalized to [0, 1] (public
        bounds), categorical columns as integer codes; with ``bounds``, numeric
        columns in raw units within their bounds.
    kernel : a registered kernel name or a :class:`ustat.kernels.Kernel`.
    epsilon : the DP budget (> 0); ``math.inf`` releases without noise
        (evaluation only: not private).
    edges : ``"2n"`` (default), ``"<c>n"``, an integer, or ``"all"``.
    sampler : ``"balanced"`` (BalancedSamp, default), ``"uniform"``,
        ``"bernoulli"``, or ``"all"``.
    threat_model : ``"dis"`` (M_Dis, Pi_DLap, default) or ``"hf"`` (M_HF,
        committee noise with parameters ``fail`` and ``f_h``).
    session : an existing :class:`mpc.session.Session` with n parties (else
        one is made from ``seed`` and the chosen precision; a session fixes
        bits and frac_bits). Every run takes a fresh stream from it: two runs
        never reuse masks or keys.
    bits, frac_bits, input_frac_bits : ring width, output and input
        fixed-point bits; None (default) chooses them per kernel
        (:mod:`ustat.umpc.precision`: order kernels l = 40 with c_in = l - 2
        - log2(gain), arithmetic kernels the narrowest l in 40..64 whose
        aggregate cannot wrap with c = 32); ints are used as given.
    resolution : smallest input difference (records' units; raw units with
        ``bounds``) that comparisons must resolve; ValueError if the ring
        cannot.
    bounds : public (lo, hi) per column when ``records`` are raw values (None
        for categorical columns): the run scales them itself (by a power of
        two for order kernels, so integer-like values encode exactly).
    confidence : level of the released interval ``ci`` (default 0.95).
    chunk_size : at most this many edges per chunk (the unit of work; memory
        per chunk grows with it); the ceil(|E| / chunk_size) chunks have equal
        sizes. Results do not depend on ``workers`` for a given chunk size.
    evaluate : also compute the exact incomplete and complete statistics on
        the raw values given (``exact_raw``) and on the encoded ones
        (``exact_encoded``; tests and experiments only: it reads every record
        in the clear); ``"incomplete"`` skips the complete ones.
    progress : a progress line on stderr if it is a terminal and the run
        takes more than a second.
    hypergraph : a precomputed :class:`ustat.sampling.Hypergraph`.
    workers : chunks computed in parallel (default: all cores); ``1`` runs
        in the calling thread. Results are bit-identical for any value.
    pool : ``"processes"`` (default) or ``"threads"`` for ``workers > 1``.
    scheduler : run the chunks on Dask: ``"local"`` (a LocalCluster with
        ``workers`` processes), a scheduler address such as
        ``"tcp://10.0.0.1:8786"``, or a ``distributed.Client``.
    backend : how a chunk computes f(x_e): ``"dealer"`` (default; FSS gates
        and p-party circuits with trusted-dealer preprocessing) or ``"gc"``
        (k = 2 kernels only: garbled circuits between the two members of
        each edge, oblivious transfer instead of a dealer, computational
        security; slower, see docs/gc.md).
    aux_epsilon_fraction : the class counts' share of epsilon (AUC, VUS); None
        (default) chooses it from public parameters to minimise the released
        statistic's noise (:func:`ustat.umpc.release.choose_aux_fraction`:
        0.27 for AUC with BalancedSamp); ``aux_epsilon_fraction`` in the result.
    max_colluders, committee_size : the noise split against colluding
        parties, passed to :func:`noise.distributed.shared_dlap_noise` when
        given (its defaults otherwise); max_colluders is a Polya parameter.
    noise_method : ``"mpc"`` (one discrete Laplace sampled inside MPC from the
        contributors' coins: the central model's variance, epsilon against
        all but one contributor, delta <= 2^-40 per noise), ``"polya"``
        (Polya shares: cheaper, variance x n / (n - t) or the committee's
        factor, epsilon only against the tolerated coalition), or None
        (default): ``"mpc"`` where it serves, else ``"polya"``
        (:func:`ustat.umpc.privacy.resolve_noise_method`: backend "gc",
        ``max_colluders`` given, epsilon > 12). ``noise_method``, ``delta``
        and ``noise_guarantee`` in the result state what was used.
    processes : spread the parties and roles over this many processes on
        this machine, connected by loopback sockets (:mod:`ustat.umpc.processes`;
        default None: the simulator, everyone in this process). Each process
        receives only its own parties' records; the release comes from the
        aggregator's process. A seeded run releases the same bits for any
        number of processes. ``timeout``: seconds an exchange may wait.
    runtime : this process's :class:`mpc.run.runtime.Runtime` when the caller
        already runs in one process of several (SPMD); rows of ``records``
        of parties held elsewhere are ignored (any valid values).

    Cost: see the module docstring; every figure in the result is measured.
    ``seconds`` is the whole call; ``stage_seconds`` splits it: ``setup``
    (checks, drawing E, precision, encoding), ``computing`` (steps 1 to 3:
    the chunks, their merge, and the noise), ``aggregation`` (step 4),
    ``evaluation`` (only with ``evaluate``) and ``report`` (the communication
    report and the release's post-processing). Only ``computing`` runs on the
    workers, so the others bound what more workers can gain.
    """
    if processes is not None and runtime is None:
        from .processes import run_across_processes
        return run_across_processes(records, kernel, processes, timeout, dict(
            epsilon=epsilon, edges=edges, sampler=sampler, threat_model=threat_model,
            seed=seed, bits=bits, frac_bits=frac_bits, chunk_size=chunk_size,
            evaluate=evaluate, hypergraph=hypergraph, fail=fail, f_h=f_h,
            aux_epsilon_fraction=aux_epsilon_fraction, record_views=record_views,
            backend=backend, max_colluders=max_colluders, committee_size=committee_size,
            resolution=resolution, input_frac_bits=input_frac_bits, bounds=bounds,
            confidence=confidence, noise_method=noise_method), session=session, workers=workers,
            scheduler=scheduler)
    if runtime is not None:
        if evaluate:
            raise ValueError("evaluate reads every record in the clear: not in a run across "
                             "processes")
        workers, scheduler, progress = 1, None, False
    clock = StageClock()
    workers = _check_engine(workers, pool, scheduler, backend)
    method, method_note = resolve_noise_method(noise_method, backend, max_colluders, epsilon)
    noise_kw = {"threat_model": threat_model, "fail": fail, "f_h": f_h, "method": method,
                "triples": "ot" if backend == "gc" else "dealer"}
    noise_kw.update({key: v for key, v in (("max_colluders", max_colluders),
                                           ("committee_size", committee_size)) if v is not None})
    where = {"workers": workers, "pool": pool, "scheduler": scheduler}   # the chunks' engine
    with Progress(0, progress) as bar:
        bar.stage("sampling")
        confidence = check_confidence(confidence)
        run = prepare_run(records, kernel, epsilon, edges, sampler, threat_model, session, seed,
                          dict(bits=bits, frac_bits=frac_bits, input_frac_bits=input_frac_bits,
                               resolution=resolution, bounds=bounds),
                          chunk_size, hypergraph, aux_epsilon_fraction,
                          dict(where, backend=backend, record_views=record_views,
                               noise_method=noise_kw["method"], runtime=runtime))
        try:
            clock.lap("setup")
            bar.total = run.m
            bar.stage("computing")
            z = np.zeros(run.n, dtype=np.uint64)   # each party's running sum of its shares
            noise = []                             # step 3 runs while the workers compute
            _share_and_compute(run, z, chunk_size, bar, **where,
                               meanwhile=lambda: noise.append(
                                   _noise(run, z, run.aux_fraction, noise_kw)))
        finally:
            if run.prefetch is not None:
                run.prefetch.close()
        if method_note and math.isfinite(run.eps):
            noise[0].notes.append(method_note)
        clock.lap("computing")
        bar.stage("aggregation")
        u_hat, aux_sums = _aggregate(run, z, noise[0].aux_z)
        clock.lap("aggregation")
    evaluation = None
    if evaluate:
        evaluation = evaluate_run(run, noise[0].aux_values, evaluate, chunk_size)
        clock.lap("evaluation")
    engine = {"backend": backend, "backend_trust": get_backend(backend).trust,
              "workers": workers, "chunks": -(-run.m // chunk_size),
              "scheduler": None if scheduler is None else
              scheduler if isinstance(scheduler, str) else type(scheduler).__name__}
    result = _result(run, threat_model, u_hat, aux_sums, noise[0], evaluation, engine,
                     confidence)
    clock.lap("report")
    result.seconds, result.stage_seconds = clock.total(), clock.laps
    return result


def _result(run, threat_model, u_hat, aux_sums, noise, evaluation, engine, confidence):
    kern, session = run.kern, run.session
    costs = session.costs()
    rep = session.net.report()
    sens_sum = run.delta_max * kern.sensitivity
    released = bool(session.is_local("aggregator"))
    if released:
        rel = release_fields(kern, u=u_hat, aux=aux_sums, n=run.n, m=run.m, eps=run.eps,
                             eps_u=noise.eps_u, eps_aux=noise.eps_aux, info=noise.info,
                             frac_bits=session.fp.frac_bits, confidence=confidence,
                             design=Design.of_edges(run.E, run.n, run.hypergraph.name))
    else:                       # a process without the aggregator releases nothing
        u_hat, aux_sums = math.nan, [math.nan] * len(aux_sums)
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
        aux_epsilon_fraction=run.aux_fraction if kern.aux_names else 0.0, **engine)


def _check_engine(workers, pool, scheduler, backend) -> int:
    workers = check_positive_int(workers, "workers", allow_none=True)
    if pool not in POOLS:
        raise ValueError(f"pool must be one of {POOLS}, got {pool!r}")
    if scheduler is not None and isinstance(scheduler, str) and not scheduler.strip():
        raise ValueError("scheduler must be 'local', a scheduler address or a "
                         "distributed.Client, got an empty string")
    get_backend(backend)
    return default_workers() if workers is None else workers


def _share_and_compute(run: Run, z: np.ndarray, chunk_size: int, bar, **engine) -> None:
    """Steps 1 and 2 over all chunks: adds each party's shares of f(x_e) to z (in place).

    The chunks' traffic is merged into the session's network in chunk order
    as parallel lanes (rounds counted once); per chunk O(m_c k) work here.
    ``engine`` goes to :func:`ustat.umpc.engines.run_chunks`.
    """
    net = run.session.net
    tasks = ChunkInputs.of_run(run.enc, run.E, chunk_size)
    if net.link is not None:                # across processes: each chunk's members' processes
        roles = np.array([net.role(r) for r in run.spec.roles], dtype=np.int64)
        run.spec = replace(run.spec, locate=lambda i: net.link.sub(
            np.concatenate([tasks.edges_of(i).ravel(), roles])))
        engine = dict(engine, workers=1, scheduler=None)
    todo, first = tasks, 0
    if run.prefetch is not None:            # the first chunks wait in their workers
        run.prefetch.post(tasks)
        first = len(run.prefetch)
        todo = ((i, tasks.values(i)) for i in range(first, len(tasks)))
    with net.parallel():
        for res in run_chunks(run.spec, todo, len(tasks) - first, prefetch=run.prefetch,
                              **engine):
            Ec = tasks.edges_of(res.index)
            merge_chunk(net, z, Ec, res)
            bar.advance(Ec.shape[0])
    z &= run.session.ring.mask


def _noise(run: Run, z, aux_fraction, noise_kw):
    """Step 3: shares of the DP noise added to z in place (and the masked, noisy aux values).

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
    eps_u, eps_aux = eps, 0.0
    if n_aux and math.isfinite(eps):
        eps_aux = eps * aux_fraction
        eps_u = eps - eps_aux
    aux_z = np.zeros((run.n, n_aux), dtype=np.uint64)
    if n_aux:
        aux_z[:] = _mask_aux(session, session.fp.encode(aux_values), run.rng)
    info, guarantee, seconds = {}, {}, 0.0
    if math.isfinite(eps):
        specs = ([(eps_u, run.delta_max * kern.sensitivity)]
                 + [(eps_aux, kern.aux_sensitivity)] * n_aux)
        t0 = time.perf_counter()
        with net.phase("noise"):
            noises = shared_dlap_noises(session, specs, **noise_kw)
        seconds = time.perf_counter() - t0
        z[noises[0].parties] = ring.add(z[noises[0].parties], noises[0].shares)
        info["u"] = _noise_summary(noises[0])
        for a, nz in enumerate(noises[1:]):
            aux_z[nz.parties, a] = ring.add(aux_z[nz.parties, a], nz.shares)
            info[kern.aux_names[a]] = _noise_summary(nz)
        guarantee = noise_guarantee(noises)
    return _Noise(aux_values, aux_z, info, eps_u, eps_aux, guarantee, seconds)


def _aggregate(run: Run, z, aux_z):
    """Step 4: every party sends z_i (and its aux shares) to the aggregator (1 round, n l bits)."""
    session = run.session
    net, ring = session.net, session.ring
    with net.phase("aggregation"):
        payload = np.concatenate([z[:, None], aux_z], axis=1)
        net.send(net.parties, net.role("aggregator"), payload, ring.bits)
        totals = ring.sum(payload, axis=0)
    u_hat = float(session.fp.decode(totals[0])) / run.m
    return u_hat, [float(session.fp.decode(t)) for t in totals[1:]]


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
