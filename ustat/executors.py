"""Executors: where a statistic's program runs. The only code that spreads a program.

Every statistic is one SPMD program (:class:`Program`): a function that each
process of a run calls with its :class:`Place` (the process's runtime, or
None in the simulator, and how it may spread chunks of work over this
machine's cores) and the rows of its own parties. An executor decides where
that happens:

- :class:`Simulator` (default): this process holds every party and role,
  on a network that counts every bit and round. ``workers``/``pool``: the
  chunks of a chunked program (U-MPC) run on a pool of worker processes or
  threads; results are bit-identical for any number of workers.
- :class:`Dask`: as the simulator, with the chunks as tasks on a Dask
  cluster (``scheduler="local"``, an address, or a ``distributed.Client``).
- :class:`LocalProcesses`: the parties and roles spread over P processes on
  this machine (:func:`mpc.comm.placement.layout`, or the groups given),
  connected by loopback sockets (:func:`mpc.run.launch.launch`, optionally
  TLS and a relay as in a deployment); each process receives only the rows
  of its own parties (the others' rows are a public filler the program
  never reads), the one process that releases returns the result, with
  every process's wire counts and wall time (``process_costs``).
- the hosts of a deployment: ``ustat.deploy.DeployedParticipant``, one
  participant's process on its own host.

A seeded program releases the same bits under every executor: every
process draws the streams it would draw in the simulator and public
randomness comes from agreed streams.

Threat model: the program's. :class:`LocalProcesses` trusts this machine's
kernel (plain TCP on loopback unless ``tls``); launched processes are
forked (``spawn`` where fork is missing), so they start with the launcher's
memory: local processes are not an isolation boundary.
"""

from __future__ import annotations

import numbers
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from mpc.comm.placement import Placement

__all__ = [
    "Dask",
    "Executor",
    "LocalProcesses",
    "Place",
    "Program",
    "Simulator",
    "check_processes",
    "describe_group",
    "is_refusal",
    "process_costs",
    "refusal",
]

POOLS = ("processes", "threads")


@dataclass(frozen=True)
class Place:
    """Where one copy of a program runs: this process's runtime (None: the simulator, every
    participant here) and how its chunks of work may spread over this machine (``workers``
    None: all cores; ``pool``; ``scheduler``: a Dask scheduler, or None)."""

    runtime: Any = None
    workers: int | None = None
    pool: str = "processes"
    scheduler: Any = None

    @property
    def simulated(self) -> bool:
        return self.runtime is None


@dataclass
class Program:
    """A statistic as one SPMD program, and what an executor needs to spread it.

    ``main(place, *args, **rows)`` runs the statistic in one process and returns its
    result, whose ``released`` is true in the one process that releases. ``rows``: the
    private inputs, ``name -> (array with one row per party, filler)``; a process of a run
    across processes gets each array with the rows of parties it does not hold replaced by
    ``filler`` (a public value that passes the program's checks, never read). ``roles``:
    the program's session roles in order (the dealer included). ``idle``: roles that take
    no part in the program and share another role's process in the default layout.
    ``warm_up``: callables loading compiled kernels while a process connects. ``chunked``:
    the program spreads chunks of work over ``place.workers`` (U-MPC). ``local_only``:
    None, or why the program cannot run across processes (evaluation reads every record in
    the clear, a session of this process was given, ...). ``finish(result, costs,
    seconds)``: called on the released result after a run across processes.
    """

    name: str
    main: Callable[..., Any]
    n: int
    roles: tuple
    args: tuple = ()
    rows: dict = field(default_factory=dict)
    idle: dict = field(default_factory=dict)
    warm_up: tuple = ()
    chunked: bool = False
    local_only: str | None = None
    finish: Callable[[Any, list, float], Any] | None = None


#: the attribute :func:`refusal` sets on an exception
_REFUSAL = "ustat_refused_before_computing"


def refusal(exc: BaseException) -> BaseException:
    """``exc`` marked as a refusal a program made *before* it drew any noise or computed on a
    private row (its public parameters, or a check of its inputs), and returned to be raised.

    Inside a program, an error is otherwise taken to come after computing started: a caller
    keeping a privacy budget (``ustat --budget-file``) charges such a run whatever happens,
    and gives back only what :func:`is_refusal` names. The exception keeps its type and
    message."""
    setattr(exc, _REFUSAL, True)
    return exc


def is_refusal(exc: BaseException) -> bool:
    """Whether ``exc`` was marked by :func:`refusal` (refused before computing)."""
    return bool(getattr(exc, _REFUSAL, False))


class Executor:
    """Where a program runs (module docstring). :meth:`run` returns the released result."""

    def run(self, program: Program) -> Any:
        raise NotImplementedError

    def describe(self) -> str:
        """A short text for results and messages."""
        return type(self).__name__


@dataclass(frozen=True)
class Simulator(Executor):
    """This process holds every participant. ``workers`` (None: all cores; 1: in this
    thread) and ``pool`` (``"processes"`` or ``"threads"``) apply to chunked programs."""

    workers: int | None = None
    pool: str = "processes"

    def __post_init__(self) -> None:
        _check_engine(self.workers, self.pool)

    def run(self, program: Program) -> Any:
        place = Place(None, self.workers, self.pool, None)
        return program.main(place, *program.args,
                            **{k: a for k, (a, _) in program.rows.items()})

    def describe(self) -> str:
        return "simulator" + ("" if self.workers is None else f", {self.workers} workers")


@dataclass(frozen=True)
class Dask(Executor):
    """The simulator with a chunked program's chunks as tasks on Dask: ``scheduler`` is
    ``"local"`` (a LocalCluster of ``workers`` processes), an address such as
    ``"tcp://10.0.0.1:8786"``, or a ``distributed.Client``."""

    scheduler: Any = "local"
    workers: int | None = None

    def __post_init__(self) -> None:
        s = self.scheduler
        if s is None or (isinstance(s, str) and not s.strip()):
            raise ValueError("scheduler must be 'local', a scheduler address or a "
                             "distributed.Client, got " + repr(s))
        _check_engine(self.workers, "processes")

    def run(self, program: Program) -> Any:
        if not program.chunked:
            raise ValueError(f"{program.name} has no chunks of work to run on Dask; run it "
                             "with Simulator() or LocalProcesses(P)")
        place = Place(None, self.workers, "processes", self.scheduler)
        return program.main(place, *program.args,
                            **{k: a for k, (a, _) in program.rows.items()})

    def describe(self) -> str:
        s = self.scheduler
        return f"dask ({s if isinstance(s, str) else type(s).__name__})"


@dataclass(frozen=True)
class LocalProcesses(Executor):
    """The program's parties and roles spread over ``processes`` processes on this machine
    (or the explicit ``groups``: what each process holds, party ids or ranges and role
    names), connected by loopback sockets; ``timeout``: seconds an exchange may wait for a
    peer; ``tls``/``relay``: as a deployment (:func:`mpc.run.launch.launch`)."""

    processes: int | None = None
    groups: tuple | None = None
    timeout: float | None = None
    tls: bool = False
    relay: bool = False

    def __post_init__(self) -> None:
        if self.groups is None:
            check_processes(self.processes)
        if self.timeout is not None and not (isinstance(self.timeout, numbers.Real)
                                             and self.timeout > 0):
            raise ValueError(f"timeout must be a positive number of seconds, got "
                             f"{self.timeout!r}")

    def run(self, program: Program) -> Any:
        from mpc.run.launch import groups_for, launch  # socket code: only where it runs
        from mpc.wire.transport import DEFAULT_TIMEOUT

        if program.local_only:
            raise ValueError(f"{program.local_only}: not with processes=")
        t0 = time.perf_counter()
        roles = tuple(program.roles)
        n = program.n
        if self.groups is None:
            active = tuple(r for r in roles if r not in program.idle)
            groups = groups_for(n, active, self.processes)
            for role, host in program.idle.items():
                next(g for g in groups if host in g).append(role)
        else:
            groups = groups_for(n, roles, None, self.groups)
        owner = Placement.from_groups(n, roles, groups).owner[:n]
        rows = dict(program.rows)

        def rows_of(rank: int) -> dict:
            mine = owner == rank
            out = {}
            for name, (arr, filler) in rows.items():
                a = np.asarray(arr)
                fill = np.asarray(filler, dtype=a.dtype)
                out[name] = np.where(mine.reshape((-1,) + (1,) * (a.ndim - 1)), a, fill)
            return out

        results = launch(_process_main, program.main, program.args, groups=groups,
                         kwargs_for=rows_of, warm_up=program.warm_up, tls=self.tls,
                         relay=self.relay,
                         timeout=DEFAULT_TIMEOUT if self.timeout is None else self.timeout)
        released = [r.value for r in results if getattr(r.value, "released", False)]
        if len(released) != 1:
            raise RuntimeError(f"{len(released)} processes released a result (expected one)")
        value = released[0]
        costs = process_costs(results)
        if program.finish is not None:
            return program.finish(value, costs, time.perf_counter() - t0)
        if hasattr(value, "process_costs"):
            value.process_costs = costs
        return value

    def describe(self) -> str:
        n = self.processes if self.groups is None else len(self.groups)
        return f"{n} local processes"


def _process_main(runtime: Any, main: Callable[..., Any], args: tuple, **rows: Any) -> Any:
    """One launched process: the program with this process's place."""
    return main(Place(runtime, 1, "processes", None), *args, **rows)


def check_processes(processes: Any) -> int:
    """``processes`` as a positive int, else ValueError naming it."""
    if isinstance(processes, bool) or not isinstance(processes, numbers.Integral) \
            or processes < 1:
        raise ValueError(f"processes must be a positive integer, got {processes!r}")
    return int(processes)


def process_costs(results: list) -> list:
    """What every process of a launched run wrote to its sockets, and its wall time."""
    return [{"rank": r.rank, "holds": describe_group(r.holds), "wire": r.wire,
             "seconds": r.seconds} for r in results]


def describe_group(group: list) -> list:
    """A group's items for a report: ``"parties 0-9"`` for a range, the rest as they are."""
    return [f"parties {g.start}-{g.stop - 1}" if isinstance(g, range) else g for g in group]


def _check_engine(workers: Any, pool: str) -> None:
    if workers is not None and (isinstance(workers, bool) or not isinstance(
            workers, numbers.Integral) or workers < 1):
        raise ValueError(f"workers must be a positive integer, got {workers!r}")
    if pool not in POOLS:
        raise ValueError(f"pool must be one of {POOLS}, got {pool!r}")


