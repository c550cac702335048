"""The baseline protocols with their clients and aggregator (and shuffler) in separate processes.

:func:`run_across_processes` is what ``run_protocol(name, ..., processes=P)``
(and ``ustat estimate --protocol NAME --processes P``) calls for every
baseline. The non-interactive ones (bell-ldp, bell-auc, ghazi, ghazi-sm,
fedauc-rr, fedauc-lap) need only the split into clients and aggregator:
each client computes its report from its own record (and public coins)
only, in its own process, the shuffler only from what it received, and the
aggregator releases from what it received; bell-2pc runs its pairs'
garbled circuits between the users' processes. The parties and roles are
laid out over P processes (:func:`ustat.processes.spread`; the dealer, which
no baseline uses, shares the aggregator's process); each process receives
only its own parties' records (the others' rows are zeros), except the
columns a protocol treats as public (bell-auc's labels); every process
runs the same runner on a session made with its runtime (SPMD).

A seeded run releases the same bits, with the same per-party traffic, for
any number of processes: every party's randomness sits at its own
positions of the run's streams (:func:`ustat.baselines._common.k_rr`), and
public coins come from agreed streams. What a run across processes cannot
do is refused before it starts: ``evaluate`` (it reads every record),
categorical columns without public ``levels``, FedAUC with ``clients``
(the assignment of records to clients is drawn inside the run),
FedAUC_Lap's ``"fixed"`` allocation (its noise scales depend on every
client's ranks, so a client's draws would not sit at its own positions),
and GhaziSM above ``materialize_limit`` (its shortcut sums every record).
The aggregator's result has no ``theory`` entries that are computed from
every record (FedAUC's variances use every client's true labels, which no
process holds): the result's notes name them.

Threat model: the protocol's; the processes trust this machine's kernel
(plain TCP on loopback).
"""

from __future__ import annotations

import inspect
import time

import numpy as np

from mpc.comm.network import DEFAULT_ROLES

from ustat.processes import spread

__all__ = ["run_across_processes"]

#: theory entries a protocol computes from every record (left out across processes)
FROM_RECORDS = {"fedauc-rr": ("variance_paper_eq7", "variance_delta_method"),
                "fedauc-lap": ("variance_delta_method", "variance_paper_eq8_global",
                               "variance_paper_eq9_one_record")}


def run_across_processes(info, records, kernel, params: dict, *, processes, timeout=None,
                         session=None, groups=None):
    """Run the baseline ``info`` (a :class:`~ustat.baselines.registry.ProtocolInfo`) over
    ``processes`` local processes; the aggregator's :class:`ProtocolResult`."""
    if session is not None:
        raise ValueError("processes= makes its own sessions, one per process: do not pass "
                         "session=")
    t_start = time.perf_counter()
    _refuse(info.name, records, kernel, params)
    if info.uses_bins and info.kernels == "degree-2":     # checked here, before any process
        from ._common import check_public_levels, prepare_degree2   # starts; forked processes
        from .registry import DEFAULT_BINS                  # inherit the kernel matrix's cache
        pre = prepare_degree2(records, kernel, info.name, params["epsilon"],
                              params.get("bins") or DEFAULT_BINS, params.get("levels"))
        check_public_levels(pre.kern, params.get("levels"))
    X = np.asarray(records, dtype=np.float64)
    if X.ndim == 1:
        X = X[:, None]
    cols = list(info.public_columns)
    private = X.copy()
    private[:, cols] = 0.0
    res, costs = spread(_program, info.name, kernel, params, X[:, cols], n=X.shape[0],
                        roles=_roles(info), processes=processes, groups=groups,
                        private={"records": (private, 0.0)}, timeout=timeout,
                        idle={"dealer": "aggregator"})
    res.process_costs = costs
    res.seconds = time.perf_counter() - t_start
    missing = [k for k in FROM_RECORDS.get(info.name, ()) if k not in res.theory]
    if missing:
        res.notes.append(f"theory {', '.join(missing)} left out: computed from every record's "
                         "true label, which no process of a run across processes holds")
    return res


def _roles(info) -> tuple:
    """The session's roles, in the order the runner's own session would have them."""
    return tuple(DEFAULT_ROLES) + tuple(r for r in info.roles if r not in DEFAULT_ROLES)


def _refuse(name: str, records, kernel, params: dict) -> None:
    if params.get("evaluate"):
        raise ValueError("evaluate reads every record in the clear: not with processes=")
    if name.startswith("fedauc") and params.get("clients") is not None:
        raise ValueError("clients= assigns records to clients inside the run, which the "
                         "launcher cannot hand out ahead of it: across processes every record "
                         "is its own client (leave clients=None)")
    if name == "ghazi-sm":
        from .ghazi_shuffle import MATERIALIZE_LIMIT, public_plan, too_many_values
        limit = params.get("materialize_limit", MATERIALIZE_LIMIT)
        values = public_plan(records, kernel, **params)["values"]
        if values > limit:
            raise ValueError(too_many_values(values, limit))
    if name == "fedauc-lap" and params.get("allocation") == "fixed":
        raise ValueError("allocation='fixed' scales each client's noise by its largest rank: "
                         "a client's draws would depend on the others' ranks; across processes "
                         "use allocation='adaptive'")


def _program(rt, name, kernel, params, public, records):
    """One process: a session with this process's runtime, then the protocol's runner."""
    from mpc.session import Session

    from .registry import get, run_protocol

    info = get(name)
    X = np.array(records, dtype=np.float64)
    X[:, list(info.public_columns)] = public
    defaults = inspect.signature(info.runner).parameters
    kw = {k: params.get(k, defaults[k].default if k in defaults else v)
          for k, v in (("bits", 40), ("frac_bits", 14))}
    s = Session(X.shape[0], bits=kw["bits"] or 40, frac_bits=kw["frac_bits"],
                seed=params.get("seed"), roles=_roles(info), runtime=rt)
    return run_protocol(name, X, kernel, session=s, **params)
