"""Subcommands ``ecdf``, ``quantile``, ``roc`` and ``hl`` of the ``ustat`` command line.

Conventions of :mod:`ustat.cli`: CSV in (``--csv``, separator sniffed), one
JSON object with ``--json``, public ``--bounds``, progress and warnings on
stderr, user mistakes -> one line and exit status 2 (``UsageError``,
``ValueError``, ``TypeError``, ``OSError`` are mapped by ``ustat.cli.main``).
:func:`register` is called by ``ustat.cli.build_parser``.
"""

from __future__ import annotations

import math
import os
import sys
import time
from typing import TYPE_CHECKING

import numpy as np

from .budget import budget_options
from .common import int_arg

if TYPE_CHECKING:
    from ustat.data.values import LabelMapping

__all__ = ["register"]

DEFAULT_THRESHOLDS = "256"


def _usage(msg: str):
    from .common import UsageError
    return UsageError(msg)


def _warn(msg: str):
    print(f"ustat: warning: {msg}", file=sys.stderr)


def _progress(args, msg: str):
    from ustat.cli.common import progress
    progress(args, msg)


def _number(text: str) -> float:
    import argparse
    try:
        return float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None


# -- parser ---------------------------------------------------------------------------------
def _common(p, *, thresholds=DEFAULT_THRESHOLDS, smooth=True):
    p.add_argument("--csv", help="delimited text file, gzip read transparently")
    p.add_argument("--sep", default=None, help="field separator (default: sniffed)")
    p.add_argument("--no-header", action="store_true",
                   help="the file has no header line: columns are 1, 2, ...")
    p.add_argument("--encoding", default=None, help="text encoding of --csv (default utf-8)")
    p.add_argument("--thresholds", default=thresholds,
                   help=f"N (a grid of N thresholds within the bounds) or a FILE with one "
                        f"threshold per line (default {thresholds})")
    p.add_argument("--epsilon", type=_number, default=1.0, help="DP budget (inf: no noise)")
    p.add_argument("--backend", default="fss", choices=("fss", "pointwise", "central"),
                   help="fss: 2 FSS servers (default); pointwise: a secure sum per query; "
                        "central: trusted curator (reference)")
    p.add_argument("--servers", type=int_arg, default=None,
                   help="servers m (fss: 2, the default; pointwise: >= 2)")
    p.add_argument("--noise", default=None, choices=("each", "split", "mpc"),
                   help="each: every server adds a full discrete Laplace per node (epsilon "
                        "holds against a server that sees the output; default); split: Polya "
                        "halves summing to one (half the variance); mpc: the servers sample "
                        "one discrete Laplace per node inside MPC (half the variance and "
                        "epsilon against a server that sees the output, delta <= 2^-40; "
                        "costs an OT-based computation between the servers)")
    p.add_argument("--branching", default="2", help="tree branching factor b >= 2, or 'auto'")
    p.add_argument("--sensitivity", default="exact", choices=("exact", "paper"),
                   help="node sensitivity: exact diameter (default) or the paper's L + 1")
    if smooth:
        p.add_argument("--smooth", choices=("l1", "l2", "isotonic"),
                       help="post-process into a non-decreasing curve in [0, 1]")
    p.add_argument("--plot", help="write a PNG figure (needs matplotlib)")
    p.add_argument("--confidence", type=_number, default=0.95,
                   help="level of the reported intervals / band (default 0.95)")
    p.add_argument("--evaluate", action="store_true",
                   help="also report the exact values (reads the data in the clear)")
    p.add_argument("--seed", default=None, help="reproducible, INSECURE randomness")
    p.add_argument("--processes", type=int_arg, default=None, metavar="P",
                   help="spread the parties, the servers and the analyst over P processes on "
                        "this machine, connected by loopback sockets (same release for a seed)")
    p.add_argument("--budget-file", metavar="FILE",
                   help="JSON file keeping a privacy budget (epsilon and delta) per data set "
                        "across runs; this release is charged to it (see ustat estimate --help)")
    budget_options(p)
    p.add_argument("--no-progress", action="store_true", help="no progress on stderr")
    p.add_argument("--json", action="store_true", help="print one JSON object")


def _one_column(p):
    p.add_argument("--column", help="the column to release (default: the only column)")
    p.add_argument("--bounds", help="public bounds lo:hi of the column (default: the data's "
                                    "min/max, which leaks); -10:10 is accepted as a value")
    p.add_argument("--clip", action="store_true", help="clip values outside --bounds")
    p.add_argument("--grid", default="regular", choices=("regular", "geometric"),
                   help="grid for --thresholds N: regular (default) or geometric (lo > 0)")
    p.add_argument("--n", type=int_arg, default=None,
                   help="records of the synthetic default (default 1000; not with --csv)")


def _labelled(p, value_flag: str, value_help: str):
    p.add_argument(value_flag, required=True, help=value_help)
    p.add_argument("--label", required=True, help="the 0/1 (or two-valued) label column")
    p.add_argument("--positive", help="the label value of the positive class (required unless "
                                      "the labels are 0/1, no/yes or false/true)")


def register(subparsers, commands):
    """Add ``ecdf``, ``quantile``, ``roc``, ``hl`` and their (run, show) to ``commands``."""
    e = subparsers.add_parser("ecdf", help="a private ECDF (tree noise, FSS servers)",
                              description="Release the empirical CDF of one column at a grid of "
                                          "thresholds, epsilon-DP with tree noise.")
    _one_column(e)
    _common(e)
    e.add_argument("--bins", type=int_arg, default=None,
                   help="histogram bins in the --plot (default 20)")
    q = subparsers.add_parser("quantile", help="private quantiles from one ECDF release",
                              description="Quantiles by binary search (Algorithm 1) on a private "
                                          "ECDF; any number of levels at no extra epsilon.")
    _one_column(q)
    _common(q)
    q.add_argument("--q", default="0.1,0.25,0.5,0.75,0.9", help="comma-separated levels in [0, 1]")
    r = subparsers.add_parser("roc", help="a private ROC curve and AUC",
                              description="ROC curve and AUC from the private ECDFs of the "
                                          "positive and negative scores (epsilon/2 each).")
    _labelled(r, "--score", "the score column (higher = more likely positive)")
    r.add_argument("--bounds", help="public bounds lo:hi of the score (default: the data's "
                                    "min/max, which leaks); -10:10 is accepted as a value")
    r.add_argument("--clip", action="store_true", help="clip scores outside --bounds")
    _common(r)
    h = subparsers.add_parser("hl", help="a private Hosmer-Lemeshow calibration test",
                              description="Hosmer-Lemeshow statistic and p-value (Algorithm 2, "
                                          "Theorem 5.1 accounting).")
    _labelled(h, "--prob", "the predicted probability column (values in [0, 1])")
    h.add_argument("--groups", type=int_arg, default=10, help="number of groups Q (default 10)")
    h.add_argument("--null", default="calibrated", choices=("calibrated", "fitted"),
                   help="calibrated: y ~ Bernoulli(p) for the given p (default, df Q); fitted: "
                        "p fitted by logistic regression on these records (df Q - 2)")
    _common(h, thresholds="1024", smooth=False)
    from . import ecdf
    commands.update({"ecdf": (ecdf.run_ecdf, ecdf.show_ecdf),
                     "quantile": (ecdf.run_quantile, ecdf.show_quantile),
                     "roc": (ecdf.run_roc, ecdf.show_roc),
                     "hl": (ecdf.run_hl, ecdf.show_hl)})


# -- shared argument handling (used by .ecdf) -------------------------------------------------
def check_epsilon(args) -> float:
    """Every check that needs no data, before anything is read or computed (epsilon, budget,
    flags that would be ignored, the plot path, optional extras), then the warnings."""
    from ustat.cli.budget import check_options
    from ustat.cli.common import check_epsilon_option

    e = check_epsilon_option(args.epsilon)
    check_options(args)
    _check_ignored_flags(args)
    _check_outputs(args)
    if math.isinf(e):
        _warn("--epsilon inf: no noise is added; the release is NOT differentially private "
              "(evaluation only)")
    if args.seed is not None:
        _warn("--seed given: randomness is reproducible and NOT secure; use only for testing")
    c = getattr(args, "confidence", 0.95)
    if not 0 < c < 1:
        raise _usage(f"--confidence must be a level in (0, 1), e.g. 0.95, got {c}")
    return e


def _check_ignored_flags(args):
    """A flag this run would ignore is refused; then the defaults are filled in."""
    rules = [("--n", "n", args.csv is not None, "sets the size of the synthetic default; with "
              "--csv the records are the file's rows"),
             ("--column", "column", args.csv is None and getattr(args, "deployment", None) is None,
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
            raise _usage(f"{flag} {why}: drop it")
    if getattr(args, "grid", "regular") != "regular" and not str(args.thresholds).strip().isdigit():
        raise _usage("--grid applies to --thresholds N, not to a file of thresholds: drop it")
    if getattr(args, "processes", None) is not None:
        if args.processes < 1:
            raise _usage(f"--processes must be a positive integer, got {args.processes}")
        if args.evaluate:
            raise _usage("--evaluate reads every record in the clear in one process: drop it "
                         "with --processes")
    for key, value in (("servers", 2), ("noise", "each"), ("bins", 20), ("n", 1000)):
        if getattr(args, key, 0) is None:
            setattr(args, key, value)


def _check_outputs(args):
    """The plot path and the optional packages a run needs, before it computes anything."""
    from ustat.cli.common import require_extra

    smooth = getattr(args, "smooth", None)
    if smooth in ("l1", "l2"):
        require_extra(f"--smooth {smooth}", ("scipy",) + (("clarabel",) if smooth == "l2" else ()),
                      "smooth")
    if args.plot:
        require_extra("--plot", ("matplotlib",), "plots")
        folder = os.path.dirname(os.path.abspath(args.plot))
        if os.path.isdir(args.plot):
            raise _usage(f"--plot {args.plot} is a directory; give a file name such as "
                         f"{os.path.join(args.plot, args.command + '.png')}")
        if not os.path.isdir(folder):
            raise _usage(f"--plot {args.plot}: directory {folder} does not exist (create it, or "
                         f"write the figure elsewhere)")
        if not os.access(folder, os.W_OK):
            raise _usage(f"--plot {args.plot}: directory {folder} is not writable")


def deploy_kwargs(args, n_points: int) -> dict:
    from ..ecdf.tree import best_branching
    if args.backend == "fss" and args.servers != 2:
        raise _usage(f"--servers must be 2 for --backend fss (two-key DCF does not extend to "
                     f"m > 2); use --backend pointwise for {args.servers} servers")
    if args.servers < 2:
        raise _usage(f"--servers must be >= 2, got {args.servers}")
    b = args.branching.strip().lower()
    if b == "auto":
        eps = args.epsilon if math.isfinite(args.epsilon) else 1.0
        branching = best_branching(n_points, eps)
    else:
        try:
            branching = int(b)
        except ValueError:
            raise _usage(f"--branching must be an integer >= 2 or 'auto', "
                         f"got {args.branching!r}") from None
        if branching < 2:
            raise _usage(f"--branching must be >= 2, got {branching}")
    if args.sensitivity == "paper" and branching != 2:
        raise _usage("--sensitivity paper (L + 1) is proved for --branching 2 only")
    out = dict(backend=args.backend, servers=args.servers, branching=branching,
               noise_mode=None if args.backend == "central" else args.noise,
               sensitivity=args.sensitivity, seed=args.seed)
    if getattr(args, "processes", None) is not None:
        out["processes"] = args.processes
    deployed = getattr(args, "deployment", None)
    if deployed is not None:
        out["runtime"] = deployed.runtime
    return out


def make_thresholds(args, bounds, *, grid: str = "regular") -> np.ndarray:
    from ..ecdf import thresholds as th
    text = str(args.thresholds).strip()
    try:
        n = int(text)
    except ValueError:
        n = None
    if n is not None:
        if n < 1:
            raise _usage(f"--thresholds must be >= 1 (N = 0 thresholds gives nothing to release), "
                         f"got {n}")
        if grid == "geometric":
            return th.geometric(bounds, n=n)
        lo, hi = map(float, bounds)
        if n >= 2 and not math.isfinite(hi - lo):    # e.g. +-1e308: linspace overflows to NaN
            f = np.arange(n) / (n - 1)
            return th.check_thresholds(lo * (1 - f) + hi * f, bounds)
        return th.regular(bounds, n=n)
    if not os.path.exists(text):
        raise _usage(f"--thresholds must be a number N or an existing file, got {text!r}")
    return th.check_thresholds(th.from_file(text), bounds)


def read_labels(path, sep, value_col: str, label_col: str, positive, *, header: bool = True,
                encoding: str = "utf-8", rows: range | None = None):
    """(values, 0/1 labels, notes) from a CSV, each label mapped on its own by a fixed rule.

    ``rows``: only those records (a deployment's party host reads its own).

    ``positive``: that label -> 1, every other -> 0; without it the labels must
    be 0/1, no/yes or false/true (:func:`ustat.data.map_labels`). The rule never
    depends on which labels occur, so nothing about the label set (a single
    class, the values present) is revealed outside the DP release.
    """
    from ustat.data import DataError, map_labels, parse_numeric, read_table
    if value_col == label_col:
        raise _usage("the value and --label columns must differ")
    t = read_table(path, [value_col, label_col], sep, header=header, encoding=encoding,
                   rows=rows)
    x = parse_numeric(t.columns[value_col], value_col, t.lines, t.path)
    try:
        codes, mapping = map_labels(t.columns[label_col], label_col, t.lines, t.path, 2,
                                    positive=positive)
    except DataError as exc:
        if exc.kind != "label":
            raise
        raise _usage(exc.for_cli("--positive is required: name the positive class with "
                                 "--positive VALUE")) from None
    return x, codes.astype(np.int64), [_label_note(label_col, mapping)]


def _label_note(label_col: str, mapping: LabelMapping) -> str:
    shown = ", ".join(f"{lab} -> {i}" for i, lab in enumerate(mapping["classes"]))
    return f"classes of {label_col!r}: {shown} ({mapping['rule']})"


def label_rule_note(label_col: str, positive) -> str:
    """:func:`read_labels`' note on the label rule, from the rule alone (it never depends on
    the labels read): for a process of a deployment that reads no record."""
    from ustat.data import map_labels
    _, mapping = map_labels(np.array([], dtype=object), label_col, [], "", 2, positive=positive)
    return _label_note(label_col, mapping)


def data_bounds(args, x, column: str):
    from ustat.data.records import bounds_option, require_bounds
    from ustat.data import DATA_BOUNDS_WARNING
    if args.bounds:
        return tuple(bounds_option(args.bounds, 1)[0]), None
    require_bounds(args, [column])
    lo, hi = float(np.min(x)), float(np.max(x))
    if lo == hi:
        hi = lo + 1.0
    _warn(DATA_BOUNDS_WARNING.replace("warning: ", "", 1))
    return (lo, hi), f"bounds of {column!r} taken from the data (not private)"


def processes_summary(res) -> dict:
    """The JSON fields of a run across processes (none for a run in one process)."""
    costs = getattr(res, "process_costs", None)
    if not costs:
        return {}
    from ustat.reports.common import wire_totals
    comm = res.communication if hasattr(res, "communication") else res.ecdf.communication
    return {"processes": len(costs), "process_costs": costs,
            "wire": wire_totals(costs, comm["total_bits"])}


def comm_summary(rep) -> dict | None:
    if rep is None:
        return None
    return {"online_bits": rep["online"]["bits"], "offline_bits": rep["offline"]["bits"],
            "online_rounds": rep["online"]["rounds"], "offline_rounds": rep["offline"]["rounds"],
            "max_party_bits": rep["online"]["max_party_bits"] + rep["offline"]["max_party_bits"],
            "phases": rep["phases"]}


def clock() -> float:
    return time.perf_counter()
