"""Protocol 3.1 with its parties and roles spread over processes on this machine.

:func:`run_across_processes` is what ``run_umpc(..., processes=P)`` (and
``ustat estimate --processes P``) calls: it lays the n parties, the dealer
and the aggregator out over P processes (:func:`mpc.comm.placement.layout`:
with P > 2 the dealer and the aggregator get processes of their own and
the parties are split into contiguous blocks over the others), starts them
(:func:`mpc.run.launch.launch`, loopback TCP), and has every process run the
same :func:`ustat.umpc.protocol.run_umpc` with its own
:class:`mpc.run.runtime.Runtime` (SPMD). Each process receives only the records
of its own parties (the others' rows are a public filler: the lower bound,
or 0); the edges and any other public randomness come from agreed streams;
every message between processes is a typed frame. The aggregator's process
releases; the result carries every process's wire counts and wall time
(``process_costs``).

A seeded run releases the same bits, with the same per-party traffic, for
any number of processes (one included): every process draws the streams it
would draw in the simulator, and the rows it lacks are overwritten by what
it receives. Cost: the protocol's messages, plus ~42 bytes of frame header
per (round, pair of processes) with traffic, and process start-up (about
0.3 s per process from the forkserver).

Threat model: the protocol's; the processes of one machine trust its
kernel (plain TCP on loopback, no TLS).
"""

from __future__ import annotations

import numpy as np

import fss

from mpc.run.launch import groups_for, launch
from mpc.comm.placement import Placement
from mpc.wire.transport import DEFAULT_TIMEOUT

from ..processes import check_processes, costs_of

ROLES = ("dealer", "aggregator")


def run_across_processes(records, kernel, processes, timeout, kwargs, *, session=None,
                         workers=None, scheduler=None, groups=None):
    """Run ``run_umpc(records, kernel, **kwargs)`` over ``processes`` local processes."""
    if session is not None:
        raise ValueError("processes= makes its own sessions, one per process: do not pass "
                         "session=")
    if scheduler is not None:
        raise ValueError("processes= and scheduler= cannot be combined (each process runs "
                         "its own part of every chunk)")
    if kwargs.get("evaluate"):
        raise ValueError("evaluate reads every record in the clear: not with processes=")
    if groups is None:
        check_processes(processes)
    X = np.asarray(records)
    if X.ndim == 1:
        X = X[:, None]
    n = X.shape[0]
    groups = groups_for(n, ROLES, None if processes is None else int(processes), groups)
    owner = Placement.from_groups(n, ROLES, groups).owner[:n]
    filler = _filler(X, kwargs.get("bounds"))

    def records_of(rank):
        mine = X.copy()
        mine[owner != rank] = filler
        return {"records": mine}

    results = launch(_program, kernel, kwargs, groups=groups, kwargs_for=records_of,
                     timeout=DEFAULT_TIMEOUT if timeout is None else timeout,
                     warm_up=(fss.warm_up,))
    main = next(r.value for r in results if r.value.released)
    main.process_costs = costs_of(results)
    return main


def _program(rt, kernel, kwargs, records):
    from .protocol import run_umpc
    return run_umpc(records, kernel, runtime=rt, **kwargs)


def _filler(X: np.ndarray, bounds):
    """A public value per column for the rows a process does not hold (valid for the checks)."""
    if X.dtype.kind not in "f":
        return np.zeros(X.shape[1], dtype=X.dtype)
    if bounds is None:
        return np.zeros(X.shape[1])
    return np.array([0.0 if b is None else float(b[0]) for b in bounds])

