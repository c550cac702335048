"""``ustat ecdf``, ``quantile``, ``roc``, ``hl``: flags to a spec and an executor, then the library.

Each ``run_*(args) -> dict`` checks every flag that needs no data
(:func:`check_flags`), reads the data, builds the statistic's spec from the flags
(:mod:`ustat.cli.ecdf_specs`: :func:`ecdf_spec`, :func:`quantile_spec`, :func:`roc_spec`,
:func:`hl_spec`;
:mod:`ustat.specs.ecdf`, a mistake reported under its flag) and the executor
(:func:`ustat.cli.specs.executor`: ``--processes P`` runs the program in P local
processes), reserves the budget, calls :mod:`ustat.ecdf` and returns the report of
:mod:`ustat.reports.ecdf` (with the plot and the wall time); the text is
:func:`ustat.reports.ecdf.show`. A deployment stores the spec the same flags build
(:func:`deployed_spec`, :func:`ustat.cli.deploy.job_from_command`). The flags are
defined in :mod:`ustat.cli.ecdf_options`.
"""

from __future__ import annotations

import functools
import math
import os
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

from ..specs.ecdf import ECDFSpec, HLSpec, QuantileSpec, ROCSpec
from .common import UsageError, check_memory, integral, progress, warn
from .ecdf_specs import (
    ECDF_FLAGS,
    _levels,
    branching_option,
    ecdf_spec,
    hl_spec,
    quantile_spec,
    roc_spec,
    thresholds_option,
)
from .specs import executor

if TYPE_CHECKING:
    import argparse

    from numpy.typing import ArrayLike


__all__ = [
    "ECDF_FLAGS",
    "branching_option",
    "check_flags",
    "data_bounds",
    "deployed_spec",
    "ecdf_spec",
    "hl_spec",
    "quantile_spec",
    "read_labels",
    "roc_spec",
    "run_ecdf",
    "run_hl",
    "run_quantile",
    "run_roc",
    "thresholds_option",
]

#: Noise sets sampled inside MPC per release with --noise mpc (roc: two class trees; hl: the
#: tree and the group sums), each planned at delta <= 2^-40 (noise.mpc_sampler.plan_dlap).
_MPC_NOISE_SETS = {"roc": 2, "hl": 2}


def clock() -> float:
    return time.perf_counter()


# -- checks that need no data -------------------------------------------------------------------
def check_flags(args: argparse.Namespace, *, deployed: bool = False) -> float:
    """Every check that needs no data, before anything is read or computed (epsilon, budget,
    flags that would be ignored, the plot path, optional extras), then the warnings.
    ``deployed``: the flags of a deployment's protocol (no ``--csv``; the analyst's extras
    are not this machine's)."""
    from .budget import check_options
    from .common import check_epsilon_option

    e = check_epsilon_option(args.epsilon)
    if not deployed:                    # a deployment's budget: ustat.cli.deploy.budget_table
        check_options(args)
    _check_ignored_flags(args, deployed)
    if not deployed:
        _check_outputs(args)
    if math.isinf(e):
        warn("--epsilon inf: no noise is added; the release is NOT differentially private "
             "(evaluation only)")
    if args.seed is not None:
        warn("--seed given: randomness is reproducible and NOT secure; use only for testing")
    c = getattr(args, "confidence", 0.95)
    if not 0 < c < 1:
        raise UsageError(f"--confidence must be a level in (0, 1), e.g. 0.95, got {c}")
    return e


def _check_ignored_flags(args, deployed: bool) -> None:
    """A flag this run would ignore is refused; then the defaults are filled in."""
    rules = [("--n", "n", args.csv is not None, "sets the size of the synthetic default; with "
              "--csv the records are the file's rows"),
             ("--column", "column", args.csv is None and not deployed,
              "names a column of --csv, which is not given"),
             ("--bins", "bins", not getattr(args, "plot", None), "sets the histogram of --plot"),
             ("--clip", "clip", not getattr(args, "bounds", None), "clips to --bounds, which are "
              "not given"),
             ("--servers", "servers", args.backend == "central", "applies to --backend fss or "
              "pointwise, not central"),
             ("--noise", "noise", args.backend == "central", "applies to --backend fss or "
              "pointwise (central draws one noise per node)"),
             ("--processes", "processes", args.backend == "central", "spreads the parties and "
              "servers of --backend fss or pointwise; central is one trusted curator")]
    for flag, key, ignored, why in rules:
        if ignored and getattr(args, key, None) not in (None, False):
            raise UsageError(f"{flag} {why}: drop it")
    if getattr(args, "grid", "regular") != "regular" and integral(args.thresholds) is None:
        raise UsageError("--grid applies to --thresholds N, not to a file of thresholds: drop it")
    if getattr(args, "processes", None) is not None:
        if args.processes < 1:
            raise UsageError(f"--processes must be a positive integer, got {args.processes}")
        if args.evaluate:
            raise UsageError("--evaluate reads every record in the clear in one process: drop it "
                             "with --processes")
    for key, value in (("servers", 2), ("noise", "each"), ("bins", 20), ("n", 1000)):
        if getattr(args, key, 0) is None:
            setattr(args, key, value)


def _check_outputs(args) -> None:
    """The plot path and the optional packages a run needs, before it computes anything."""
    from .common import require_extra

    smooth = getattr(args, "smooth", None)
    if smooth in ("l1", "l2"):
        require_extra(f"--smooth {smooth}", ("scipy",) + (("clarabel",) if smooth == "l2" else ()),
                      "smooth")
    if args.plot:
        require_extra("--plot", ("matplotlib",), "plots")
        folder = os.path.dirname(os.path.abspath(args.plot))
        if os.path.isdir(args.plot):
            raise UsageError(f"--plot {args.plot} is a directory; give a file name such as "
                             f"{os.path.join(args.plot, args.command + '.png')}")
        if not os.path.isdir(folder):
            raise UsageError(f"--plot {args.plot}: directory {folder} does not exist (create "
                             f"it, or write the figure elsewhere)")
        if not os.access(folder, os.W_OK):
            raise UsageError(f"--plot {args.plot}: directory {folder} is not writable")


def deployed_spec(args: argparse.Namespace) -> ECDFSpec | QuantileSpec | ROCSpec | HLSpec:
    """The spec a deployment of this ECDF command stores (its flags, no data: ``--bounds``
    are required but for ``hl``, a thresholds FILE is read here)."""
    from ..data.records import bounds_option

    check_flags(args, deployed=True)
    if getattr(args, "verify_keys", None) is None:     # deployments check keys by default
        args.verify_keys = args.backend == "fss"
    if args.command == "hl":
        return hl_spec(args)
    bounds = tuple(bounds_option(args.bounds, 1)[0])
    thresholds = thresholds_option(args, bounds)
    if args.command == "quantile":
        return quantile_spec(args, bounds, thresholds, _levels(args))
    return (ecdf_spec if args.command == "ecdf" else roc_spec)(args, bounds, thresholds)


# -- data -----------------------------------------------------------------------------------------
def read_labels(path: str, sep: str | None, value_col: str, label_col: str, positive: str | None,
                *, header: bool = True, encoding: str = "utf-8") -> tuple:
    """(values, 0/1 labels, notes) from a CSV, each label mapped on its own by a fixed rule
    (:func:`ustat.data.labelled.read_labelled`): ``positive``: that label -> 1, every other
    -> 0; without it the labels must be 0/1, no/yes or false/true. The rule never depends
    on which labels occur, so nothing about the label set (a single class, the values
    present) is revealed outside the DP release."""
    from ..data import DataError
    from ..data.labelled import label_note, read_labelled

    if value_col == label_col:
        raise UsageError("the value and --label columns must differ")
    try:
        x, y, mapping = read_labelled(path, value_col, label_col, positive, sep=sep,
                                      header=header, encoding=encoding)
    except DataError as exc:
        if exc.kind != "label":
            raise
        raise UsageError(exc.for_cli("--positive is required: name the positive class with "
                                     "--positive VALUE")) from None
    return x, y, [label_note(label_col, mapping)]


def data_bounds(args: argparse.Namespace, x: ArrayLike, column: str) -> tuple:
    """(bounds, note): ``--bounds``, or the data's min/max (refused at a finite epsilon;
    a warning and a note at epsilon inf)."""
    from ..data import DATA_BOUNDS_WARNING
    from ..data.records import bounds_option, require_bounds

    if args.bounds:
        return tuple(bounds_option(args.bounds, 1)[0]), None
    require_bounds(args, [column])
    lo, hi = float(np.min(x)), float(np.max(x))
    if lo == hi:
        hi = lo + 1.0
    warn(DATA_BOUNDS_WARNING.replace("warning: ", "", 1))
    return (lo, hi), f"bounds of {column!r} taken from the data (not private)"


def _load_column(args) -> tuple:
    from mpc.arith.rng import as_rng

    from ..data import load_csv

    if args.csv is None:
        if args.n < 1:
            raise UsageError(f"--n must be >= 1, got {args.n}")
        check_memory(args.n, 32)
        g = as_rng(None if args.seed is None else f"synthetic:{args.seed}")
        return g.random(args.n), "x", f"synthetic: {args.n} uniform records in [0, 1)"
    cols = [args.column] if args.column else None
    raw, names = load_csv(args.csv, columns=cols, sep=args.sep, header=not args.no_header,
                          encoding=args.encoding)
    if raw.shape[1] != 1:
        raise UsageError(f"choose the column with --column (the file has {raw.shape[1]} "
                         f"columns: {', '.join(names)})")
    return raw[:, 0], names[0], args.csv


def _bounds_for(args, x, column) -> tuple:
    if args.csv:
        return data_bounds(args, x, column)
    from ..data.records import bounds_option

    return (tuple(bounds_option(args.bounds, 1)[0]) if args.bounds else (0.0, 1.0)), None


def _labelled(args, value_col: str, no_csv: str) -> tuple:
    if args.csv is None:
        raise UsageError(no_csv)
    return read_labels(args.csv, args.sep, value_col, args.label, args.positive,
                       header=not args.no_header, encoding=args.encoding)


# -- running --------------------------------------------------------------------------------------
def charge_delta(args: argparse.Namespace) -> float:
    """The delta a release of these flags is charged: 0 (pure DP), or with --noise mpc the
    sampler's bound, 2^-40 per tree or set of sums."""
    if getattr(args, "noise", None) == "mpc" and math.isfinite(args.epsilon):
        from noise.mpc_sampler import MAX_DELTA
        return _MPC_NOISE_SETS.get(args.command, 1) * MAX_DELTA
    return 0.0


def _charge(args, columns) -> None:
    """This release's epsilon and delta (:func:`charge_delta`) reserved in --budget-file,
    before computing."""
    args.charge.reserve(columns, epsilon=args.epsilon, delta=charge_delta(args),
                        label=args.command, details={"backend": args.backend})


def _where(args) -> str:
    p = getattr(args, "processes", None)
    return "" if p is None else f"; {p} processes on loopback"


def _smoothing(args) -> str:
    return f"; then smoothing ({args.smooth})" if getattr(args, "smooth", None) else ""


def _command(run: Callable[[argparse.Namespace], dict]) -> Callable[[argparse.Namespace], dict]:
    """A command of the family: its flags checked before anything is read
    (:func:`check_flags`), its report ending with its wall time (``seconds``)."""
    @functools.wraps(run)
    def timed(args: argparse.Namespace) -> dict:
        t0 = clock()
        check_flags(args)
        out = run(args)
        out["seconds"] = clock() - t0
        return out
    return timed


def _with_plot(args: argparse.Namespace, out: dict, draw: Any) -> dict:
    """``--plot FILE``: ``draw(plots)`` writes the figure with :mod:`ustat.ecdf.plots` (a
    missing matplotlib is a usage error) and the report names it; ``out`` returned."""
    if args.plot:
        from ..ecdf import plots
        from ..ecdf.smoothing import MissingDependencyError

        try:
            draw(plots)
        except MissingDependencyError as exc:
            raise UsageError(str(exc)) from None
        out["plot"] = args.plot
    return out


def _computed(fn):
    """fn() with a missing optional package (smoothing) reported as a usage error."""
    from ..ecdf.smoothing import MissingDependencyError

    try:
        return fn()
    except MissingDependencyError as exc:
        raise UsageError(str(exc)) from None


@_command
def run_ecdf(args: argparse.Namespace) -> dict:
    from ..reports.ecdf import ecdf_output

    x, column, source = _load_column(args)
    bounds, note = _bounds_for(args, x, column)
    spec = ecdf_spec(args, bounds, thresholds_option(args, bounds))
    where = executor(args)
    _charge(args, [column])
    N = spec.design.n_points
    progress(args, f"{args.backend}: {x.size} parties, {N} thresholds; offline: keys / node "
                   f"noise, then {N} queries" + _where(args) + _smoothing(args))
    from ..ecdf.release import release  # looked up at run time (tests replace it)
    rel = _computed(lambda: release(x, spec, where, evaluate=args.evaluate))
    out = ecdf_output(spec, rel, {"column": column, "source": source,
                                  "notes": [note] if note else []})
    _with_plot(args, out, lambda plots: plots.plot_ecdf(
        args.plot, rel.thresholds, rel.values, n=rel.n, epsilon=args.epsilon, column=column,
        smoothed=rel.smoothed, smoothing=args.smooth,
        exact=None if rel.exact is None else rel.exact / rel.n, bins=args.bins,
        backend=args.backend))
    return out


@_command
def run_quantile(args: argparse.Namespace) -> dict:
    from ..ecdf.quantiles import check_quantile_noise, private_quantiles
    from ..reports.ecdf import quantile_output

    levels = _levels(args)
    x, column, source = _load_column(args)
    bounds, note = _bounds_for(args, x, column)
    spec = quantile_spec(args, bounds, thresholds_option(args, bounds), levels)
    check_quantile_noise(spec, x.size)        # public parameters, before reserving
    where = executor(args)
    _charge(args, [column])
    N = spec.design.n_points
    if args.smooth:
        progress(args, f"{args.backend}: {x.size} parties, {N} thresholds; offline: keys / "
                       f"node noise, then {N} queries" + _where(args) + _smoothing(args))
    else:
        progress(args, f"{args.backend}: binary search with {levels.size} levels, ceil(log2 "
                       f"{N}) query rounds, then all {N} points for the intervals" + _where(args))
    res = _computed(lambda: private_quantiles(x, spec, where, evaluate=args.evaluate))
    out = quantile_output(spec, res, {"column": column, "source": source,
                                      "notes": [note] if note else []})
    return out


@_command
def run_roc(args: argparse.Namespace) -> dict:
    from ..ecdf.roc import private_roc
    from ..reports.ecdf import roc_output

    s, y, notes = _labelled(args, args.score, "roc needs --csv (a file with the score and "
                                              "label columns)")
    bounds, note = data_bounds(args, s, args.score)
    notes += [note] if note else []
    spec = roc_spec(args, bounds, thresholds_option(args, bounds))
    where = executor(args)
    progress(args, f"{args.backend}: ECDFs of positive and negative scores, {s.size} parties, "
                   f"{spec.design.n_points} thresholds" + _where(args))
    _charge(args, [args.score, args.label])
    r = _computed(lambda: private_roc(s, y, spec, where, evaluate=args.evaluate))
    out = roc_output(spec, r, {"score": args.score, "label": args.label, "n": int(s.size),
                               "notes": notes})
    _with_plot(args, out, lambda plots: plots.plot_roc(args.plot, r, score=args.score,
                                                       label=args.label, positive=args.positive))
    return out


@_command
def run_hl(args: argparse.Namespace) -> dict:
    from ..ecdf.hosmer_lemeshow import private_hosmer_lemeshow
    from ..reports.ecdf import hl_output

    p, y, notes = _labelled(args, args.prob, "hl needs --csv (a file with the probability and "
                                             "label columns)")
    out_of = (p < 0) | (p > 1)
    if out_of.any():
        # the first record only, no count and no value: an error is an output about the data
        raise UsageError(f"--prob {args.prob!r}: row {int(np.flatnonzero(out_of)[0]) + 1} is a "
                         "probability outside [0, 1]")
    spec = hl_spec(args)
    where = executor(args)
    _charge(args, [args.prob, args.label])
    progress(args, f"{args.backend}: group edges from the private ECDF of {args.prob}, "
                   f"then {args.groups} x 4 noisy sums" + _where(args))
    r = private_hosmer_lemeshow(p, y, spec, where, evaluate=args.evaluate)
    kept = int(p.size) - int(r.account.get("inputs_dropped", 0))     # verified: the kept
    out = hl_output(spec, r, {"prob": args.prob, "label": args.label, "n": kept,
                              "notes": notes})
    _with_plot(args, out, lambda plots: plots.plot_hl(args.plot, r, prob=args.prob))
    if r.clamped:
        warn(f"{r.clamped} noisy expected count(s) below 0 were taken as 0 in the variances")
    return out
