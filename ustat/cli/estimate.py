"""``ustat estimate KERNEL``: load the records, charge the budget, run the chosen protocol.

``--protocol umpc`` (default) builds a :class:`ustat.specs.UMPCSpec` from the
flags (:func:`ustat.cli.specs.umpc_spec`) and runs :func:`ustat.umpc.run_umpc`
on the executor the flags name (:func:`ustat.cli.specs.executor`); every other
protocol builds a :class:`ustat.specs.BaselineSpec` (:func:`.protocols.baseline_spec`)
and runs :func:`ustat.baselines.run_protocol` on the same executor. The reports are
:func:`ustat.reports.umpc.estimate_output`'s and
:func:`ustat.reports.baselines.protocol_output`'s.
"""

from __future__ import annotations

import argparse
import math
from typing import TYPE_CHECKING

import numpy as np

from ..data.records import RecordSource
from ..data.records import load_records as read_records
from .budget import check_options
from .common import (
    UsageError,
    check_epsilon_option,
    cli_words,
    progress,
    require_extra,
    warn,
    with_flag_names,
)
from .specs import UMPC_FLAGS, engine_options, executor, field_flags, umpc_spec

if TYPE_CHECKING:
    from ..kernels import Kernel

__all__ = ["cmd_estimate", "edges_option", "umpc_run", "umpc_spec"]


def edges_option(args: argparse.Namespace, n: int, k: int, notes: list) -> tuple:
    """(edges, sampler): a relative count like 2n is capped at C(n, k) with a note."""
    edges = "2n" if args.edges is None else args.edges
    sampler = "balanced" if args.sampler is None else args.sampler
    text = edges.strip().lower()
    if text == "all":
        return "all", "all"
    total = math.comb(n, k)
    if text.endswith("n"):
        try:
            want = float(text[:-1] or "1") * n
        except ValueError:
            return edges, sampler                   # the spec names the mistake
        if math.isfinite(want) and round(want) > total:
            notes.append(f"--edges {edges} asks for {int(round(want))} edges but only "
                         f"C({n}, {k}) = {total} distinct ones exist: all {total} used")
            return "all", "all"
    return (int(text) if text.isdigit() else edges), sampler


def _check_values(args):
    """Range checks of the engine and precision options, naming the flag."""
    checks = (("workers", 1, "--workers must be >= 1"), ("bits", 2, "--bits must be >= 2"),
              ("frac_bits", 0, "--frac-bits must be >= 0"))
    for key, low, msg in checks:
        v = getattr(args, key)
        if v is not None and v < low:
            raise UsageError(f"{msg}, got {v}")
    if args.bits is not None and args.frac_bits is not None and args.frac_bits >= args.bits:
        raise UsageError(f"--frac-bits ({args.frac_bits}) must be below --bits ({args.bits})")
    r = args.resolution
    if r is not None and not (math.isfinite(r) and r > 0):
        raise UsageError(f"--resolution must be a positive number (raw data units), got {r}")
    c = args.confidence
    if c is not None and not 0 < c < 1:
        raise UsageError(f"--confidence must be in (0, 1), e.g. 0.95, got {c}")
    if args.pool is not None and args.workers == 1:
        raise UsageError("--pool applies with --workers > 1")
    if args.scheduler is not None:
        require_extra("--scheduler", ("dask", "distributed"), "dask")
    p = getattr(args, "processes", None)
    if p is not None:
        if p < 1:
            raise UsageError(f"--processes must be a positive integer, got {p}")
        for flag, key in (("--workers", "workers"), ("--scheduler", "scheduler"),
                          ("--evaluate", "evaluate")):
            if getattr(args, key, None) not in (None, False):
                raise UsageError(f"--processes runs each process on one core: drop {flag}")


def umpc_run(args: argparse.Namespace, kern: Kernel, X: np.ndarray, raw: tuple | None,
             meta: dict, notes: list) -> tuple:
    """(spec, records) of a U-MPC run of the flags on these records: raw values with their
    public bounds when the run encodes them itself (inputs exact to the resolution in raw
    units), else the records in [0, 1] and ``--resolution`` converted into those units (the
    strictest column)."""
    _check_values(args)
    edges, sampler = edges_option(args, X.shape[0], kern.degree, notes)
    if raw is not None:
        return umpc_spec(args, kern, edges=edges, sampler=sampler, bounds=raw[1]), raw[0]
    resolution = args.resolution
    if resolution is not None and meta.get("bounds"):
        widest = max(hi - lo for lo, hi in meta["bounds"])
        if math.isfinite(widest) and widest > 0:
            resolution = resolution / widest
    return umpc_spec(args, kern, edges=edges, sampler=sampler, resolution=resolution), X


def load_records(args: argparse.Namespace, kern: Kernel) -> tuple:
    """The records of ``--csv`` (or the synthetic default) as the flags say."""
    return read_records(record_source(args), kern)


def record_source(args: argparse.Namespace) -> RecordSource:
    """The :class:`~ustat.data.records.RecordSource` of the data flags."""
    return RecordSource(csv=args.csv, columns=args.columns, sep=args.sep,
                        header=not args.no_header, encoding=args.encoding or "utf-8",
                        positive=args.positive, classes=args.classes, bounds=args.bounds,
                        clip=args.clip, n=args.n, seed=args.seed, epsilon=args.epsilon)


def _check_kernel_flags(args, kern):
    """Options that this kernel would ignore are refused (never silently dropped)."""
    if args.aux_epsilon_fraction is not None and kern.aux is None:
        owners = ", ".join(k for k in _aux_kernels())
        raise UsageError(f"--aux-epsilon-fraction applies to kernels with class counts "
                         f"({owners}), not {kern.name!r}")


def _aux_kernels() -> list:
    from .. import kernels

    return [name for name in kernels.names() if kernels.get(name).aux is not None]


def cmd_estimate(args: argparse.Namespace) -> dict:
    from .. import kernels
    from . import protocols

    try:
        kern = kernels.get(args.kernel)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    check_epsilon_option(args.epsilon)
    check_options(args)
    info = protocols.check(args, kern)
    _check_kernel_flags(args, kern)
    X, warnings, meta, raw = load_records(args, kern)
    notes: list = []
    if info is None:
        run, delta = _umpc(args, kern, X, raw, meta, notes)
    else:
        run, delta = _baseline(args, info, kern, X, meta)
    for w in warnings:
        warn(w)
    if math.isinf(args.epsilon):
        warn("--epsilon inf: no noise is added; the release is NOT differentially private "
             "(evaluation only)")
    if args.seed is not None:
        warn("--seed given: randomness is reproducible and NOT secure; use only for testing")
    if meta.get("columns"):
        args.charge.reserve(meta["columns"], epsilon=args.epsilon, delta=delta, label=kern.name,
                            details={"kernel": kern.name, "protocol": args.protocol})
    if info is not None:
        progress(args, f"{info.name}: {X.shape[0]} parties, epsilon {args.epsilon:g}"
                       + (f", delta {delta:.3g}" if delta else ""))
    out = run(warnings + notes)
    args.charge.actual_delta = out["delta"]
    for w in out.get("warnings", []):
        warn(w)
    return out


def _umpc(args, kern, X, raw, meta, notes) -> tuple:
    """(run(notes) -> the report, the delta charged before it runs) of a U-MPC estimate."""
    from ..reports.umpc import estimate_output
    from ..umpc import run_umpc
    from ..umpc.privacy import committee_note, planned_delta

    spec, records = umpc_run(args, kern, X, raw, meta, notes)
    where = executor(args)
    delta = planned_delta(spec, X.shape[0])
    capped = committee_note(spec, X.shape[0])     # the release's notes say it too
    if capped and math.isfinite(args.epsilon):
        warn(cli_words(capped))

    def run(all_notes):
        res = with_flag_names(lambda: run_umpc(records, spec, where, evaluate=args.evaluate,
                                               progress=not args.no_progress),
                              field_flags(UMPC_FLAGS))()
        _check_delta(res.delta, delta)
        return estimate_output(spec, res, X, meta, all_notes, res.delta, engine_options(args))
    return run, delta


def _baseline(args, info, kern, X, meta) -> tuple:
    """(run(notes) -> the report, the delta charged before it runs) of a baseline protocol."""
    from .. import baselines
    from ..reports.baselines import protocol_output
    from . import protocols

    spec = protocols.baseline_spec(args, info, kern)
    where = executor(args)
    flags = field_flags(protocols.flag_rows(info))
    delta = with_flag_names(lambda: baselines.planned_delta(X, spec), flags)()

    def run(all_notes):
        res = with_flag_names(lambda: baselines.run_protocol(X, spec, where,
                                                             evaluate=args.evaluate), flags)()
        _check_delta(res.delta, delta)
        return protocol_output(res, meta, all_notes)
    return run, delta


def _check_delta(actual: float, planned: float):
    """A release never spends more delta than was charged before it ran (a bug otherwise)."""
    if actual > planned * (1 + 1e-9):
        raise RuntimeError(f"the run reports delta {actual:.6g} but {planned:.6g} was planned "
                           f"and charged; this is a bug in the protocol's planned_delta")
