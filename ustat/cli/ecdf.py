"""``ustat ecdf``, ``quantile``, ``roc``, ``hl``: flags to a spec and an executor, then the library.

Each ``run_*(args) -> dict`` checks every flag that needs no data
(:func:`check_flags`), reads the data, builds the statistic's spec from the flags
(:func:`ecdf_spec`, :func:`quantile_spec`, :func:`roc_spec`, :func:`hl_spec`;
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

from ..specs.base import Spec
from ..specs.ecdf import ECDFSpec, HLSpec, QuantileSpec, ROCSpec
from .common import UsageError, check_memory, integral, progress, warn
from .specs import executor, spec_error

if TYPE_CHECKING:
    import argparse
    from collections.abc import Iterable

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

#: (flag, args attribute, spec field) of the family's options
ECDF_FLAGS = (
    ("--epsilon", "epsilon", "epsilon"), ("--noise", "noise", "noise_mode"),
    ("--sensitivity", "sensitivity", "sensitivity"), ("--bounds", "bounds", "bounds"),
    ("--clip", "clip", "clip"), ("--thresholds", "thresholds", "thresholds"),
    ("--grid", "grid", "grid"), ("--branching", "branching", "branching"),
    ("--backend", "backend", "backend"), ("--servers", "servers", "servers"),
    ("--seed", "seed", "seed"), ("--smooth", "smooth", "smooth"),
    ("--confidence", "confidence", "confidence"), ("--q", "q", "q"),
    ("--groups", "groups", "groups"), ("--thresholds", "thresholds", "n_thresholds"),
    ("--null", "null", "null"), ("--verify-keys", "verify_keys", "verify_keys"),
)

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


# -- flags to specs -------------------------------------------------------------------------------
def thresholds_option(args: argparse.Namespace,
                      bounds: tuple[float, float] | None = None) -> int | tuple:
    """``--thresholds``: a count N (placed within the bounds by the spec's grid), or the
    thresholds of a FILE (one per line), checked against ``bounds``."""
    from ..ecdf import thresholds as th

    text = str(args.thresholds).strip()
    n = integral(text)                  # N, also written 1e3
    if n is not None:
        if n < 1:
            raise UsageError(f"--thresholds must be >= 1 (N = 0 thresholds gives nothing to "
                             f"release), got {n}")
        return n
    if not os.path.exists(text):
        raise UsageError(f"--thresholds must be a number N or an existing file, got {text!r}")
    return tuple(th.check_thresholds(th.from_file(text), bounds).tolist())


def branching_option(args: argparse.Namespace, n_points: int) -> int | str:
    """``--branching``: an int >= 2 or ``"auto"`` (kept: the library chooses from N and
    epsilon); checked against ``--sensitivity paper`` (branching 2 only) as it resolves."""
    from ..ecdf.tree import best_branching

    b = args.branching.strip().lower()
    if b == "auto":
        eps = args.epsilon if math.isfinite(args.epsilon) else 1.0
        branching: int | str = "auto"
        resolved = best_branching(n_points, eps)
    else:
        try:
            branching = resolved = int(b)
        except ValueError:
            raise UsageError(f"--branching must be an integer >= 2 or 'auto', "
                             f"got {args.branching!r}") from None
        if resolved < 2:
            raise UsageError(f"--branching must be >= 2, got {resolved}")
    if args.sensitivity == "paper" and resolved != 2:
        raise UsageError("--sensitivity paper (L + 1) is proved for --branching 2 only")
    return branching


def _common_fields(args, n_points: int) -> dict:
    """The flat spec fields every command of the family sets (privacy, execution, tree)."""
    if args.backend == "fss" and args.servers != 2:
        raise UsageError(f"--servers must be 2 for --backend fss (two-key DCF does not extend "
                         f"to m > 2); use --backend pointwise for {args.servers} servers")
    if args.servers < 2:
        raise UsageError(f"--servers must be >= 2, got {args.servers}")
    verify = bool(getattr(args, "verify_keys", None))
    if verify and args.backend != "fss":
        raise UsageError(f"--verify-keys checks the DCF keys of --backend fss, not --backend "
                         f"{args.backend}: drop it")
    return dict(epsilon=args.epsilon, sensitivity=args.sensitivity,
                noise_mode=None if args.backend == "central" else args.noise,
                backend=args.backend, servers=args.servers, seed=args.seed,
                branching=branching_option(args, n_points), verify_keys=verify)


def _spec(kind: type[Spec], *top: Any, **flat: Any) -> Any:
    try:
        return kind.of(*top, **flat)
    except (TypeError, ValueError) as exc:
        raise spec_error(exc, ECDF_FLAGS) from None


def _grid_fields(args, bounds, thresholds) -> dict:
    n_points = thresholds if isinstance(thresholds, int) else len(thresholds)
    return dict(_common_fields(args, n_points), bounds=tuple(bounds), thresholds=thresholds,
                clip=bool(getattr(args, "clip", False)), smooth=args.smooth,
                confidence=args.confidence)


def ecdf_spec(args: argparse.Namespace, bounds: tuple[float, float],
              thresholds: int | tuple) -> ECDFSpec:
    """The :class:`ECDFSpec` of ``ustat ecdf``'s flags (``bounds``: the public ones, or the
    data's; ``thresholds``: :func:`thresholds_option`)."""
    return _spec(ECDFSpec, grid=args.grid, **_grid_fields(args, bounds, thresholds))


def quantile_spec(args: argparse.Namespace, bounds: tuple[float, float], thresholds: int | tuple,
                  levels: Iterable[float]) -> QuantileSpec:
    """The :class:`QuantileSpec` of ``ustat quantile``'s flags (``levels``: ``--q``)."""
    return _spec(QuantileSpec, tuple(levels), grid=args.grid,
                 **_grid_fields(args, bounds, thresholds))


def roc_spec(args: argparse.Namespace, bounds: tuple[float, float],
             thresholds: int | tuple) -> ROCSpec:
    """The :class:`ROCSpec` of ``ustat roc``'s flags (``--thresholds 1`` refused: the curve
    would be (1, 1) -> (0, 0), AUC 0.5 whatever the data)."""
    if thresholds == 1:
        raise UsageError("--thresholds: a ROC curve needs at least 2 thresholds (with only the "
                         "upper bound the curve is (1, 1) -> (0, 0) and the AUC 0.5 whatever "
                         "the data); use --thresholds 2 or more")
    return _spec(ROCSpec, **_grid_fields(args, bounds, thresholds))


def hl_spec(args: argparse.Namespace) -> HLSpec:
    """The :class:`HLSpec` of ``ustat hl``'s flags (``--thresholds`` a number N; the tree's
    branching is 2, ``--branching`` is checked only)."""
    try:
        N = int(args.thresholds)
    except ValueError:
        raise UsageError(f"--thresholds for hl must be a number N, got "
                         f"{args.thresholds!r}") from None
    if N < 1:
        raise UsageError(f"--thresholds must be >= 1, got {N}")
    flat = _common_fields(args, N)
    flat.pop("branching")
    return _spec(HLSpec, groups=args.groups, n_thresholds=N, null=args.null, **flat)


def _levels(args) -> np.ndarray:
    from ..specs.ecdf import check_levels

    try:
        return check_levels([float(v) for v in args.q.split(",") if v.strip()])
    except ValueError as exc:
        raise UsageError(f"--q: {exc}") from None


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
