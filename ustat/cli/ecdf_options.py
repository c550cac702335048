"""The flags of ``ustat ecdf``, ``quantile``, ``roc`` and ``hl``.

Conventions of :mod:`ustat.cli`: CSV in (``--csv``, separator sniffed), one
JSON object with ``--json``, public ``--bounds``, progress and warnings on
stderr, user mistakes -> one line and exit status 2 (``UsageError``,
``ValueError``, ``TypeError``, ``OSError`` are mapped by ``ustat.cli.main``).
:func:`register` is called by ``ustat.cli.build_parser``; :func:`parse` reads one
command of the family alone (a deployment's protocol). The flags become a spec and an
executor in :mod:`ustat.cli.ecdf`, which runs the commands.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from .budget import budget_options
from .common import Parser, int_arg

if TYPE_CHECKING:
    import argparse
    from collections.abc import Callable

__all__ = ["DEFAULT_THRESHOLDS", "add_parsers", "parse", "register"]

DEFAULT_THRESHOLDS = "256"


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
    p.add_argument("--verify-keys", action=argparse.BooleanOptionalAction, default=None,
                   help="fss: the two servers check that each party's DCF keys are one step "
                        "of weight one (a 0/1 label for roc) and drop those that are not; the "
                        "release reports keys_dropped (default: off here, on in deployments)")
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
    p.add_argument("--bounds", help="public bounds lo:hi of the column, known without looking "
                                    "at the data (required with --csv at a finite epsilon; "
                                    "only --epsilon inf, not private, may use the data's "
                                    "min/max, with a warning); -10:10 is accepted as a value")
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


def register(subparsers: argparse._SubParsersAction[Parser],
             commands: dict[str, tuple[Callable[[argparse.Namespace], dict],
                                       Callable[[dict], None]]]) -> None:
    """Add ``ecdf``, ``quantile``, ``roc``, ``hl`` and their (run, show) to ``commands``."""
    from ..reports.ecdf import show_ecdf, show_hl, show_quantile, show_roc
    from . import ecdf

    add_parsers(subparsers)
    commands.update({"ecdf": (ecdf.run_ecdf, show_ecdf),
                     "quantile": (ecdf.run_quantile, show_quantile),
                     "roc": (ecdf.run_roc, show_roc),
                     "hl": (ecdf.run_hl, show_hl)})


def parse(command: list) -> argparse.Namespace:
    """The arguments of one command of the family (``["quantile", "--column", "age", ...]``),
    as ``ustat`` parses them; UsageError for a mistake."""
    ap = Parser(prog="ustat")
    add_parsers(ap.add_subparsers(dest="command"))
    return ap.parse_args(list(command))


def add_parsers(subparsers: argparse._SubParsersAction[Parser]) -> None:
    """The parsers of ``ecdf``, ``quantile``, ``roc`` and ``hl``."""
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
    r.add_argument("--bounds", help="public bounds lo:hi of the score, known without looking "
                                    "at the data (required with --csv at a finite epsilon; "
                                    "only --epsilon inf, not private, may use the data's "
                                    "min/max, with a warning); -10:10 is accepted as a value")
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
