"""Flags to specs and executors: what a command computes, and where it runs.

Every subcommand turns its flags into a spec of :mod:`ustat.specs` (validated
there once; a mistake is reported under its flag's name) and an executor of
:mod:`ustat.executors`: ``--processes P`` runs the program in P local
processes, ``--scheduler`` its chunks on Dask, ``--workers``/``--pool`` its
chunks on this machine's cores, else the simulator. A deployment stores the
spec the same flags build (:mod:`ustat.deploy`).
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from ..executors import Dask, Executor, LocalProcesses, Simulator
from ..specs import UMPCSpec
from .common import UsageError, cli_words, flagged

if TYPE_CHECKING:
    from ..kernels import Kernel

__all__ = ["UMPC_FLAGS", "engine_options", "executor", "field_flags", "spec_error", "umpc_spec"]

#: (flag, args attribute, spec field) of the U-MPC options (None on the parser: the spec's
#: default applies)
UMPC_FLAGS = (
    ("--epsilon", "epsilon", "epsilon"), ("--threat-model", "threat_model", "threat_model"),
    ("--noise-method", "noise_method", "noise_method"),
    ("--max-colluders", "max_colluders", "max_colluders"),
    ("--committee-size", "committee_size", "committee_size"),
    ("--honest-fraction", "honest_fraction", "honest_fraction"),
    ("--committee-fail", "fail", "committee_fail"),
    ("--aux-epsilon-fraction", "aux_epsilon_fraction", "aux_epsilon_fraction"),
    ("--bits", "bits", "bits"), ("--frac-bits", "frac_bits", "frac_bits"),
    ("--resolution", "resolution", "resolution"),
    ("--edges", "edges", "edges"), ("--sampler", "sampler", "sampler"),
    ("--backend", "backend", "backend"), ("--seed", "seed", "seed"),
    ("--confidence", "confidence", "confidence"), ("--ties", "ties", "tie_aware"),
    ("--check-inputs", "check_inputs", "check_inputs"),
)


def field_flags(flags: tuple) -> dict:
    """spec field -> flag, from ``(flag, args attribute, field)`` rows."""
    return {field: flag for flag, _, field in flags}


def spec_error(exc: Exception, flags: tuple) -> UsageError:
    """A spec's ValueError/TypeError about one of its fields as a UsageError under its flag."""
    return flagged(exc, field_flags(flags)) or UsageError(cli_words(str(exc)))


def umpc_spec(args: argparse.Namespace, kern: Kernel, *, edges: str | int, sampler: str,
              bounds: list | None = None, resolution: float | None = None) -> UMPCSpec:
    """The :class:`UMPCSpec` of ``ustat estimate``'s flags (``edges``/``sampler`` as resolved
    for the data's size, ``bounds`` of raw records, ``resolution`` in the records' units)."""
    given = {field: getattr(args, key) for _, key, field in UMPC_FLAGS
             if getattr(args, key, None) is not None}
    if given.get("max_colluders") == "half":        # the noise's default
        del given["max_colluders"]
    given.update(edges=edges, sampler=sampler)
    if resolution is not None:
        given["resolution"] = resolution
    if bounds is not None:
        given["bounds"] = tuple(bounds)
    try:
        return UMPCSpec.of(kern, **given)
    except (TypeError, ValueError) as exc:
        raise spec_error(exc, UMPC_FLAGS) from None


def engine_options(args: argparse.Namespace) -> dict:
    """The executor flags the user gave (``workers``, ``pool``, ``scheduler``), for reports."""
    return {key: getattr(args, key) for key in ("workers", "pool", "scheduler")
            if getattr(args, key, None) is not None}


def executor(args: argparse.Namespace) -> Executor:
    """The executor of ``--processes``, ``--scheduler``, ``--workers`` and ``--pool``, watched
    by the run's budget charge (:meth:`ustat.cli.budget.Charge.watch`) when it has one."""
    processes = getattr(args, "processes", None)
    workers, pool = getattr(args, "workers", None), getattr(args, "pool", None)
    scheduler = getattr(args, "scheduler", None)
    try:
        if processes is not None:
            where: Executor = LocalProcesses(processes)
        elif scheduler is not None:
            where = Dask(scheduler, workers)
        else:
            where = Simulator(workers, pool or "processes")
    except ValueError as exc:
        raise UsageError("--" + str(exc).replace("_", "-")) from None
    charge = getattr(args, "charge", None)      # --budget-file: learns when computing starts
    return where if charge is None else charge.watch(where)


