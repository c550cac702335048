"""One entry point for every protocol: ``run_protocol(name, records, kernel, ...)``, ``PROTOCOLS``.

Names: ``umpc`` (:func:`ustat.umpc.run_umpc`, Sinh-Ramon Protocol 3.1),
``bell-ldp``, ``bell-auc``, ``ghazi``, ``ghazi-sm``, ``fedauc-rr``,
``fedauc-lap``, ``bell-2pc`` (Bell et al.'s 2PC protocol, Section 5:
subsampled pairs or all pairs, garbled circuits, :mod:`.bell_2pc`). More
protocols can be added with :func:`register`.

Every run returns a :class:`ustat.baselines.result.ProtocolResult` (U-MPC's
:class:`ustat.umpc.UMPCResult` is converted) whose ``to_dict()`` is what the
CLI prints: protocol, parameters, trust model, measured costs.

``processes=P`` runs any of them with its parties and roles (aggregator,
shuffler, dealer) spread over P processes on this machine
(:mod:`.processes`; U-MPC through ``run_umpc(processes=)``).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Callable

from ..umpc.privacy import UMPC_TRUST, umpc_trust
from . import _common as C
from .result import ProtocolResult

DEFAULT_BINS = 64


@dataclass(frozen=True)
class ProtocolInfo:
    """One row of :data:`PROTOCOLS`."""

    name: str
    runner: Callable
    description: str
    dp_model: str
    trust: str
    kernels: str            # "any" (every degree), "degree-2", or "auc"
    uses_bins: bool
    paper: str
    #: ``planned_delta(records, kernel, *, epsilon, **params) -> float``: the delta the run will
    #: report, from its public planning, before it runs (None: pure epsilon-DP, delta 0)
    planned_delta: Callable | None = None
    #: roles of the protocol's session beyond the dealer and the aggregator (e.g. a shuffler)
    roles: tuple = ()
    #: columns of the records that the protocol treats as public (every process holds them)
    public_columns: tuple = ()


PROTOCOLS: dict[str, ProtocolInfo] = {}


def register(info: ProtocolInfo, replace: bool = False) -> ProtocolInfo:
    """Add a protocol (e.g. ``bell-2pc``) to :data:`PROTOCOLS`."""
    if not isinstance(info, ProtocolInfo):
        raise TypeError(f"register needs a ProtocolInfo, got {type(info).__name__}")
    if info.name in PROTOCOLS and not replace:
        raise ValueError(f"a protocol named {info.name!r} is already registered")
    PROTOCOLS[info.name] = info
    return info


def names() -> list:
    return list(PROTOCOLS)


def get(name: str) -> ProtocolInfo:
    try:
        return PROTOCOLS[name]
    except (KeyError, TypeError):
        raise ValueError(f"unknown protocol {name!r}; available: {', '.join(PROTOCOLS)}") from None


def run_protocol(name, records, kernel, *, epsilon=1.0, bins=None, seed=None, session=None,
                 evaluate=False, processes=None, timeout=None, **params) -> ProtocolResult:
    """Run protocol ``name`` on ``records`` for ``kernel``; extra keywords go to its runner.

    ``bins`` (t per numeric column) applies to the protocols that discretize
    (default 64); for ``umpc`` and ``fedauc-*`` it is ignored with a note.
    ``processes``: spread the parties and roles over this many processes on
    this machine (``timeout``: seconds an exchange may wait); the release
    is the aggregator's, with every process's wire counts (``process_costs``).
    """
    info = get(name)
    if processes is not None and name != "umpc":
        from .processes import run_across_processes
        return run_across_processes(info, records, kernel, dict(
            epsilon=epsilon, bins=bins, seed=seed, evaluate=evaluate, **params),
            processes=processes, timeout=timeout, session=session)
    if processes is not None:
        params.update(processes=processes, timeout=timeout)
    kwargs = dict(params)
    notes = []
    if info.uses_bins:
        kwargs["bins"] = DEFAULT_BINS if bins is None else bins
    elif bins is not None:
        notes.append(f"bins={bins} ignored: protocol {name!r} does not discretize its inputs")
    res = info.runner(records, kernel, epsilon=epsilon, seed=seed, session=session,
                      evaluate=evaluate, **kwargs)
    res.notes.extend(notes)
    return res


def planned_delta(name, records, kernel, *, epsilon=1.0, bins=None, **params) -> float:
    """The delta protocol ``name`` will spend on ``records`` with these arguments (what its
    :class:`ProtocolResult` will report), computed before running it: a budget is charged
    before a release is computed."""
    info = get(name)
    if info.planned_delta is None:
        return 0.0
    kwargs = dict(params)
    if info.uses_bins:
        kwargs["bins"] = DEFAULT_BINS if bins is None else bins
    return float(info.planned_delta(records, kernel, epsilon=epsilon, **kwargs))


def _umpc_delta(records, kernel, *, epsilon=1.0, **params) -> float:
    from ..umpc.privacy import delta_spent

    return delta_spent(kernel, len(records), epsilon, **params)


# -- U-MPC through the same interface -------------------------------------------------------
def run_umpc_protocol(records, kernel, *, epsilon=1.0, seed=None, session=None, evaluate=False,
                      **params) -> ProtocolResult:
    """:func:`ustat.umpc.run_umpc` with its result converted to a :class:`ProtocolResult`
    (``params``: fields of :class:`ustat.specs.UMPCSpec` by their flat names)."""
    from .. import kernels as kernel_registry
    from ..specs import UMPCSpec
    from ..umpc import run_umpc

    from ..executors import LocalProcesses

    t_start = time.perf_counter()
    processes, timeout = params.pop("processes", None), params.pop("timeout", None)
    where = None if processes is None else LocalProcesses(processes, timeout=timeout)
    r = run_umpc(records, UMPCSpec.of(kernel, epsilon=epsilon, seed=seed, **params), where,
                 session=session, evaluate=evaluate)
    kern = kernel_registry.get(kernel)
    ev = None
    if evaluate:
        X = C.validate_records(records, kern)
        ev = C.evaluation(kern, X)
        enc = r.evaluation or {}
        ev["u_discretized"] = enc.get("u_complete")
        ev["statistic_discretized"] = enc.get("statistic_complete")
        ev["u_incomplete"] = enc.get("u_incomplete")
        ev["statistic_incomplete"] = enc.get("statistic_incomplete")
    used = {**{k: v for k, v in params.items() if isinstance(v, (int, float, str, bool))},
            "edges": r.edges, "sampler": r.sampler, "threat_model": r.threat_model,
            "max_degree": r.max_degree}
    theory = {"sensitivity": r.sensitivity, "noise_scale": r.noise_scale,
              "dp_variance": 2 * r.noise_scale ** 2 if math.isfinite(r.epsilon) else 0.0}
    names = {"committee_fail": "fail", "honest_fraction": "f_h"}
    delta = _umpc_delta(records, kern, epsilon=epsilon, threat_model=r.threat_model,
                        **{names.get(k, k): params[k] for k in (
                            "committee_size", "committee_fail", "honest_fraction",
                            "noise_method", "backend", "max_colluders") if k in params})
    return ProtocolResult(
        protocol="umpc", kernel=r.kernel, statistic=r.statistic, estimate=r.estimate,
        u_hat=r.u_hat, epsilon=r.epsilon, delta=delta, n=r.n, params=used, dp_model="central",
        trust=umpc_trust(r.threat_model, r.noise_method), online_bits=r.online_bits,
        offline_bits=r.offline_bits, rounds=r.rounds, max_party_bits=r.max_party_bits,
        mean_party_bits=r.mean_party_bits, seconds=time.perf_counter() - t_start,
        insecure_seed=r.insecure_seed, communication=r.communication, theory=theory,
        evaluation=ev, notes=list(r.notes), released=getattr(r, "released", True),
        processes=getattr(r, "processes", 1), process_costs=getattr(r, "process_costs", None),
        costs=r.costs)


def _builtin():
    from . import bell_2pc, bell_auc, bell_ldp, fedauc, ghazi, ghazi_shuffle

    rows = [
        ProtocolInfo("umpc", run_umpc_protocol,
                     "U-MPC (Sinh-Ramon Protocol 3.1): MPC over a sampled hypergraph of edges, "
                     "distributed discrete Laplace noise, central DP; any degree",
                     "central", UMPC_TRUST["dis"], "any", False,
                     "Sinh & Ramon, Federated U-statistics of higher degree, Protocol 3.1",
                     _umpc_delta),
        ProtocolInfo("bell-ldp", bell_ldp.run_bell_ldp,
                     "Bell et al. Algorithm 1: t bins per column, T-ary randomized response, "
                     "unbiased estimate from the noisy histogram; any degree-2 kernel",
                     "local", bell_ldp.TRUST, "degree-2", True,
                     "Bell, Bellet, Gascon, Kulkarni, AISTATS 2020, Algorithm 1"),
        ProtocolInfo("bell-auc", bell_auc.run_bell_auc,
                     "Bell et al. Section 4: AUC from hierarchical histograms, one-bit Hadamard "
                     "frequency oracle, recursive UAUC with threshold; labels public",
                     "local", bell_auc.TRUST, "auc", True,
                     "Bell, Bellet, Gascon, Kulkarni, AISTATS 2020, Section 4 and B.2",
                     public_columns=(1,)),
        ProtocolInfo("ghazi", ghazi.run_ghazi,
                     "Ghazi et al. 2024: kernel matrix factored A ~ L^T R (JL, dimension d), "
                     "each party sends VRand(L e_x), VRand(R e_x); any degree-2 kernel",
                     "local", ghazi.TRUST, "degree-2", True,
                     "Ghazi, Kamath, Kumar, Manurangsi, Sealfon, NeurIPS; Sinh-Ramon App. D"),
        ProtocolInfo("ghazi-sm", ghazi_shuffle.run_ghazi_sm,
                     "GhaziSM: Ghazi et al.'s factorization with the vector sums computed in the "
                     "multi-message shuffle model (Balle et al. 2020), central DP",
                     "shuffle", ghazi_shuffle.TRUST, "degree-2", True,
                     "Ghazi et al.; Balle, Bell, Gascon, Nissim CCS 2020; Sinh-Ramon Sect. 5",
                     ghazi_shuffle.planned_delta, roles=("shuffler",)),
        ProtocolInfo("fedauc-rr", fedauc.run_fedauc_rr,
                     "FedAUC_RR (Sun et al. Algorithms 1-3): labels flipped by randomized "
                     "response, AUC from ranks, debiased; scores public, label-DP",
                     "label-local", fedauc.TRUST_RR, "auc", False,
                     "Sun et al., label-DP AUC in vertical FL, Algorithms 1-3"),
        ProtocolInfo("fedauc-lap", fedauc.run_fedauc_lap,
                     "FedAUC_Lap (Sun et al. Algorithm 4, Section 5.3): discrete Laplace or "
                     "Gaussian noise on the label statistics, adaptive budget allocation",
                     "label-local", fedauc.TRUST_LAP, "auc", False,
                     "Sun et al., label-DP AUC in vertical FL, Algorithm 4 and Section 5.3",
                     fedauc.planned_delta),
        ProtocolInfo("bell-2pc", bell_2pc.run_bell_2pc,
                     "Bell et al. Section 5 / Theorem 5: P pairs per user (or all pairs), each "
                     "pair computes f(x_i, x_j) + eta by Yao garbled circuits with the noise drawn "
                     "in the circuit; kendall, gini, auc, duplicate, renyi2, rand",
                     "2pc-cdp", bell_2pc.TRUST, "degree-2", True,
                     "Bell, Bellet, Gascon, Kulkarni, AISTATS 2020, Section 5, Theorem 5",
                     bell_2pc.planned_delta),
    ]
    for info in rows:
        register(info)


_builtin()
