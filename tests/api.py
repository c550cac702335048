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


# -- the ECDF family (ustat.ecdf) -----------------------------------------------------------------
# ``release(values, ECDFSpec.of(thresholds=tau, epsilon=1.0, ...), executor)`` and its kin; the
# flat forms below take the old positional arguments (the thresholds, epsilon; the levels, the
# groups) and sort every keyword into the spec (by its flat field name), the executor
# (``processes``, ``groups``, ``timeout``) and the call's own options.
ECDF_OPTIONS = ("weights", "evaluate", "session", "record_views")


def _ecdf_parts(kw: dict) -> tuple:
    """(executor, options) popped from ``kw``; what remains are spec fields."""
    executor = executor_of(kw)
    return executor, {k: kw.pop(k) for k in ECDF_OPTIONS if k in kw}


def flat_release(values, thresholds, epsilon, **kw):
    """``ustat.ecdf.release`` with flat keywords."""
    from ustat.ecdf import release
    from ustat.specs import ECDFSpec

    executor, options = _ecdf_parts(kw)
    return release(values, ECDFSpec.of(thresholds=thresholds, epsilon=epsilon, **kw), executor,
                   **options)


def flat_deploy(values, thresholds, epsilon, **kw):
    """``ustat.ecdf.deploy`` (a live deployment in this process) with flat keywords."""
    from ustat.ecdf import deploy
    from ustat.specs import ECDFSpec

    options = {k: kw.pop(k) for k in ("weights", "session", "record_views") if k in kw}
    return deploy(values, ECDFSpec.of(thresholds=thresholds, epsilon=epsilon, **kw), **options)


def flat_quantiles(values, thresholds, q, epsilon, **kw):
    """``ustat.ecdf.private_quantiles`` with flat keywords; as the old entry point, it never
    refuses for noise unless ``max_halfwidth`` is given."""
    from ustat.ecdf import private_quantiles
    from ustat.specs import QuantileSpec

    executor, options = _ecdf_parts(kw)
    kw.setdefault("max_halfwidth", None)
    spec = QuantileSpec.of(tuple(q), thresholds=thresholds, epsilon=epsilon, **kw)
    return private_quantiles(values, spec, executor, **options)


def flat_roc(scores, labels, thresholds, epsilon, **kw):
    """``ustat.ecdf.private_roc`` with flat keywords."""
    from ustat.ecdf import private_roc
    from ustat.specs import ROCSpec

    executor, options = _ecdf_parts(kw)
    spec = ROCSpec.of(thresholds=thresholds, epsilon=epsilon, **kw)
    return private_roc(scores, labels, spec, executor, **options)


def flat_hl(probs, labels, groups=10, epsilon=1.0, **kw):
    """``ustat.ecdf.private_hosmer_lemeshow`` with flat keywords."""
    from ustat.ecdf import private_hosmer_lemeshow
    from ustat.specs import HLSpec

    executor, options = _ecdf_parts(kw)
    options.pop("weights", None)
    spec = HLSpec.of(groups=groups, epsilon=epsilon, **kw)
    return private_hosmer_lemeshow(probs, labels, spec, executor, **options)
