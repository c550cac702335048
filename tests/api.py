"""The flat keyword form of the statistics' entry points, for tests of their behaviour.

The public API takes a spec and an executor (``run_umpc(records, UMPCSpec.of(kernel,
...), LocalProcesses(2))``). Many tests vary one option of a run at a time; they call
:func:`flat_umpc` with flat keywords, which sorts them into the spec (every field of
:class:`ustat.specs.UMPCSpec`, by its flat name, plus the old names ``f_h`` and ``fail``),
the executor (``workers``, ``pool``, ``scheduler``, ``processes``, ``groups``,
``timeout``; ``runtime``: this process's runtime of a run already launched) and the call's
own options (``session``, ``hypergraph``, ``evaluate``, ``progress``, ``record_views``).
"""

from __future__ import annotations

from ustat.executors import Dask, LocalProcesses, Place, Simulator
from ustat.specs import UMPCSpec
from ustat.umpc import run_umpc, umpc_program

#: old keyword -> spec field
RENAMED = {"f_h": "honest_fraction", "fail": "committee_fail"}
OPTIONS = ("session", "hypergraph", "evaluate", "progress", "record_views")


def executor_of(kw: dict):
    """Pop the executor keywords of ``kw``; the executor they describe (None: the default)."""
    processes, groups = kw.pop("processes", None), kw.pop("groups", None)
    timeout = kw.pop("timeout", None)
    workers, pool = kw.pop("workers", None), kw.pop("pool", None)
    scheduler = kw.pop("scheduler", None)
    if processes is not None or groups is not None:
        if scheduler is not None:           # each process runs its part of every chunk
            raise ValueError("processes= and scheduler= cannot be combined")
        return LocalProcesses(processes, None if groups is None else tuple(groups), timeout)
    if scheduler is not None:
        return Dask(scheduler, workers)
    if workers is not None or pool is not None:
        return Simulator(workers, pool or "processes")
    return None


def flat_umpc(records, kernel, **kw):
    """``run_umpc`` with flat keywords (module docstring)."""
    runtime = kw.pop("runtime", None)
    executor = executor_of(kw)
    options = {k: kw.pop(k) for k in OPTIONS if k in kw}
    spec = UMPCSpec.of(kernel, **{RENAMED.get(k, k): v for k, v in kw.items()})
    if runtime is not None:
        program = umpc_program(records, spec, **options)
        return program.main(Place(runtime, 1), *program.args,
                            **{k: a for k, (a, _) in program.rows.items()})
    return run_umpc(records, spec, executor, **options)


# -- the protocols of the registry (ustat.baselines) -------------------------------------------
#: the call's own options of run_protocol (not spec fields, not the executor)
PROTOCOL_OPTIONS = ("session", "evaluate")


def flat_protocol(name, records, kernel, **kw):
    """``run_protocol`` with flat keywords: the fields of :class:`ustat.specs.BaselineSpec`
    by their flat names, the executor's (``processes``, ``groups``, ``timeout``: local
    processes) and the call's own (``session``, ``evaluate``)."""
    from ustat.baselines import BaselineSpec, run_protocol

    executor = executor_of(kw)
    options = {k: kw.pop(k) for k in PROTOCOL_OPTIONS if k in kw}
    return run_protocol(records, BaselineSpec.of(name, kernel, **kw), executor, **options)


def flat_planned_delta(name, records, kernel, **kw):
    """``planned_delta`` of the spec of these flat keywords (as :func:`flat_protocol`)."""
    from ustat.baselines import BaselineSpec, planned_delta

    return planned_delta(records, BaselineSpec.of(name, kernel, **kw))
