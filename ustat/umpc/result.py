"""Step 4 of Protocol 3.1 (aggregation) and what a run returns: :class:`UMPCResult`.

:func:`_aggregate`: every party (or every survivor of a run with dropouts) sends
the sum of its shares of f(x_e), of its edge sums and of its aux values, its
noise shares added in, to the aggregator in one round (n l bits per sum); the
aggregator opens the sums and divides by |E| (or, when party hosts may vanish, the
sums come opened from the threshold last round, :mod:`ustat.umpc.last_round`).
:func:`_result` builds the release (:mod:`ustat.umpc.release`: clamp, units,
interval, warnings) and the measured costs into a :class:`UMPCResult`; a process
without the aggregator releases NaNs.

Threat model: as :mod:`ustat.umpc.protocol` (semi-honest, private
authenticated channels); the aggregator sees only noisy sums. The function
names stay those of the protocol module they came from: a round's frames carry
the name of the function that opened it (:func:`mpc.comm.rounds.caller_op`).
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field

import numpy as np

from mpc.comm.costs import Costs

from .release import Split, release_fields
from .sampling_error import Design
from .setup import Run


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


def _aggregate(run: Run, z, aux_z, z_edge, senders=None, totals=None):
    """Step 4: every party (``senders``: the survivors' ids; ``aux_z`` has a row per party of
    ``z``) sends z_i (its edge sums' and aux shares too) to the aggregator (1 round, n l
    bits per sum); ``totals``: the sums already opened by the threshold last round
    (:func:`ustat.umpc.last_round.finish`), nothing sent. (U, aux sums, edge sums' means)."""
    session = run.session
    net, ring = session.net, session.ring
    a = z_edge.shape[0]
    if senders is not None:
        z, z_edge, aux_z = z[senders], z_edge[:, senders], aux_z[senders]
    if totals is None:
        with net.phase("aggregation"):
            payload = np.concatenate([z[:, None], z_edge.T, aux_z], axis=1)
            net.send(net.parties if senders is None else senders, net.role("aggregator"),
                     payload, ring.bits)
            totals = ring.sum(payload, axis=0)
    decoded = [float(session.fp.decode(t)) for t in totals]
    return decoded[0] / run.m, decoded[1 + a:], [v / run.m for v in decoded[1:1 + a]]


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
