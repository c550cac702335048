"""Every protocol of the registry as one SPMD program: :func:`run_protocol`, :func:`planned_delta`.

``run_protocol(records, spec, executor)`` runs the protocol ``spec.protocol`` (a
:class:`ustat.specs.BaselineSpec`) on ``records`` where ``executor`` says
(:mod:`ustat.executors`: the simulator by default, ``LocalProcesses(P)``, ...). The
program (:func:`protocol_program`) calls the protocol's runner in every process with
a session of that process's runtime: each client computes its report from its own
record and public coins (agreed streams), the shuffler permutes what it received,
bell-2pc's pairs garble and evaluate between their users' processes, and the
aggregator releases from what it received. The records are the parties' private
rows: a process of a run across processes holds its own parties' (the others' rows
are zeros), except the columns the protocol treats as public (bell-auc's labels),
which every process holds. ``umpc`` runs U-MPC's own chunked program
(:mod:`.umpc_protocol`).

A seeded run releases the same bits, with the same per-party traffic, under every
executor: every party's randomness sits at its own positions of the run's streams
(:func:`ustat.baselines._common.k_rr`), and public coins come from agreed streams.
What a run across processes cannot do is refused before it starts (the program's
``local_only``): ``evaluate`` (it reads every record), a ``session`` of this process,
categorical columns without public ``levels``, and each protocol's own refusals
(:class:`~.registry.AcrossProcesses`: FedAUC with ``clients`` or FedAUC_Lap's
``fixed`` allocation, GhaziSM above ``materialize_limit``, bell-2pc's ``plain``
engine). The aggregator's result has no ``theory`` entries computed from every
record (FedAUC's variances use every client's true label, which no process holds):
its notes name them.

Threat model: the protocol's; :class:`~ustat.executors.LocalProcesses` trusts this
machine's kernel (plain TCP on loopback unless ``tls``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from mpc.comm.network import DEFAULT_ROLES
from mpc.session import Session

from ..executors import Executor, Place, Program, Simulator
from ._common import levels_arg, missing_levels, prepare_degree2, validate_records
from .registry import ProtocolInfo, get
from .result import ProtocolResult
from .spec import BaselineSpec

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

__all__ = ["planned_delta", "protocol_program", "run_protocol"]


def run_protocol(records: ArrayLike, spec: BaselineSpec, executor: Executor | None = None, *,
                 session: Session | None = None, evaluate: bool = False) -> ProtocolResult:
    """Run protocol ``spec.protocol`` on ``records`` as ``spec`` says, where ``executor``
    says; the release, its costs and its trust model.

    Parameters
    ----------
    records : (n, d) array: numeric columns normalized to [0, 1] with public bounds
        (:func:`ustat.data.normalize`), categorical columns as integer codes, labels 0/1.
    spec : a :class:`ustat.specs.BaselineSpec`, e.g.
        ``BaselineSpec.of("ghazi", "kendall", epsilon=1.0, bins=64)``.
    executor : :class:`~ustat.executors.Simulator` (default; every participant in this
        process), :class:`~ustat.executors.LocalProcesses` (each process holds only its own
        parties' records; the aggregator's process releases, with every process's wire
        counts in ``process_costs``), or :class:`~ustat.executors.Dask` for ``umpc``.
    session : an existing :class:`mpc.session.Session` with n parties (and the protocol's
        roles); every run takes a fresh stream from it. In this process only.
    evaluate : also compute the exact statistics on the raw and the discretized values and
        the protocol's variance formula at these data (reads every record in the clear;
        tests and experiments only). In this process only.

    Cost: the protocol's (:mod:`ustat.baselines`); every figure of the result is measured.
    """
    program = protocol_program(records, spec, session=session, evaluate=evaluate)
    return (Simulator() if executor is None else executor).run(program)


def protocol_program(records: ArrayLike, spec: BaselineSpec, *, session: Session | None = None,
                     evaluate: bool = False) -> Program:
    """Protocol ``spec.protocol`` on ``records`` as one SPMD program
    (:class:`ustat.executors.Program`; module docstring). The records are checked here,
    before any process starts (and a degree-2 protocol's kernel matrix is built here, so
    that forked processes inherit it)."""
    if not isinstance(spec, BaselineSpec):
        raise TypeError(f"spec must be a ustat.specs.BaselineSpec, got {type(spec).__name__} "
                        "(e.g. BaselineSpec.of('ghazi', 'kendall', epsilon=1.0))")
    info = get(spec.protocol)
    if info.program is not None:
        return info.program(records, spec, session=session, evaluate=evaluate)
    X = validate_records(records, spec.kern)
    if info.uses_bins and info.kernels == "degree-2":
        prepare_degree2(X, spec)
    cols = list(info.processes.public_columns)
    private = X
    if cols:
        private = X.copy()
        private[:, cols] = 0.0
    return Program(name=spec.protocol, main=_main, n=X.shape[0], roles=roles(info),
                   args=(spec, {"session": session, "evaluate": evaluate}, X[:, cols]),
                   rows={"records": (private, 0.0)}, idle={"dealer": "aggregator"},
                   local_only=_local_only(info, X, spec, session, evaluate), finish=_finish)


def planned_delta(records: ArrayLike, spec: BaselineSpec) -> float:
    """The delta protocol ``spec.protocol`` will spend on ``records`` (what its
    :class:`ProtocolResult` will report), computed before running it: a budget is charged
    before a release is computed."""
    info = get(spec.protocol)
    if info.planned_delta is None:
        return 0.0
    return float(info.planned_delta(records, spec))


def roles(info: ProtocolInfo) -> tuple:
    """The session's roles of protocol ``info``, in the order its runner's session has them."""
    extra = tuple(r for r in info.processes.roles if r not in DEFAULT_ROLES)
    return tuple(DEFAULT_ROLES) + extra


def _local_only(info: ProtocolInfo, X, spec: BaselineSpec, session, evaluate) -> str | None:
    """Why the program cannot run across processes (None: it can)."""
    if session is not None:
        return ("processes= makes its own sessions, one per process: do not pass "
                "session=")
    if evaluate:
        return "evaluate reads every record in the clear"
    if info.uses_bins and info.kernels == "degree-2":
        why = missing_levels(spec.kern, levels_arg(spec.encoding.levels))
        if why is not None:
            return why
    refuse = info.processes.refuse
    return None if refuse is None else refuse(X, spec)


def _main(place: Place, spec: BaselineSpec, options: dict, public, records) -> ProtocolResult:
    """One process: the records with the public columns, then the protocol's runner (a
    session of this process's runtime; :func:`run_protocol`)."""
    info = get(spec.protocol)
    cols = list(info.processes.public_columns)
    if cols:
        records = np.array(records, dtype=np.float64)
        records[:, cols] = public
    return info.runner(records, spec, session=options["session"],
                       evaluate=options["evaluate"], runtime=place.runtime)


def _finish(res: ProtocolResult, costs: list, seconds: float) -> ProtocolResult:
    """The released result of a run across processes: every process's costs, the whole run's
    wall time, and a note on the theory entries no process could compute."""
    res.process_costs = costs
    res.seconds = seconds
    missing = [k for k in get(res.protocol).processes.from_records if k not in res.theory]
    if missing:
        res.notes.append(f"theory {', '.join(missing)} left out: computed from every record's "
                         "true label, which no process of a run across processes holds")
    return res
