"""The options of ``ustat estimate`` (U-MPC and the baseline protocols) and their help.

:func:`add_parser` adds the ``estimate`` subcommand (called by
:func:`ustat.cli.parser.build_parser`); :func:`parse` reads one ``estimate`` command line
alone (a deployment's job, :mod:`ustat.cli.deploy`). Choices that other modules own are read
at run time: the protocols from :data:`ustat.baselines.registry.PROTOCOLS`, the U-MPC backends
from :data:`ustat.umpc.chunk.BACKENDS` (checked after parsing, so a backend registered later is
accepted).
"""

from __future__ import annotations

import argparse

from ..data.records import CLEAR_CHECKS, SYNTHETIC_N
from .budget import budget_options
from .common import EXIT_CODES, Parser, float_arg, int_arg

__all__ = ["THREAT_HELP", "add_parser", "parse"]

THREAT_HELP = """\
Who must collude. Input privacy: under dis (M_Dis) no coalition of up to
n - 1 parties with the aggregator learns an honest party's record (beyond
what the release says); under hf (M_HF) none allowed by the honest fraction.
The DP guarantee of the release is a separate, stated parameter. With
--noise-method mpc (the default with the dealer backend) one discrete Laplace
is sampled inside a secure computation among all parties (dis) or a committee
with at least one honest member (hf), so epsilon holds against the aggregator
with all but one contributor, at the central model's variance. With
--noise-method polya the noise is split so that epsilon holds against the
aggregator together with --max-colluders parties (dis; default half of them:
noise variance x2 at most) or with all but the guaranteed honest members of
the noise committee (hf; committee sized by --honest-fraction and
--committee-fail); against a larger coalition epsilon degrades, and the
output reports the epsilon against the aggregator with all but one
contributor."""

def _runtime_names() -> tuple[list, list]:
    """(protocols, backends) registered in this build, for the help text."""
    try:
        from ..baselines.registry import names
        from ..umpc.chunk import BACKENDS
    except ImportError:                  # pragma: no cover - a partial build
        return [], []
    return names(), sorted(BACKENDS)


def _max_colluders_arg(text: str):
    if text in ("half", "all"):
        return text
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer, 'half' or 'all': {text!r}") from None


def _data_options(e):
    d = e.add_argument_group("data")
    d.add_argument("--csv", help="delimited text file, gzip read transparently "
                                 "(default: synthetic data, see --n)")
    d.add_argument("--sep", default=None, help="field separator (default: sniffed: , ; or TAB)")
    d.add_argument("--no-header", action="store_true",
                   help="the file has no header line: columns are 1, 2, ... (for --columns)")
    d.add_argument("--encoding", default=None, help="text encoding of --csv (default utf-8)")
    d.add_argument("--columns", help="comma-separated column names, one per kernel column "
                                     "(default: the columns named like the kernel's, else the "
                                     "whole file if it has as many columns)")
    d.add_argument("--bounds", help="public bounds lo:hi,... of the numeric columns, known "
                                    "without looking at the data (required with --csv at a "
                                    "finite epsilon; the synthetic default's are 0:1); -10:10 "
                                    "is accepted as a value")
    d.add_argument("--clip", action="store_true", help="clip values outside --bounds")
    d.add_argument("--positive", metavar="VALUE",
                   help="auc: the label of the positive class (every other label is negative); "
                        "default: labels 0/1, no/yes, false/true only")
    d.add_argument("--classes", metavar="A,B[,C]",
                   help="the class labels in order: vus (3 classes, default codes 0,1,2) or "
                        "auc (NEGATIVE,POSITIVE)")
    d.add_argument("--n", type=int_arg, default=None,
                   help=f"records of the synthetic default (default {SYNTHETIC_N}; not with --csv)")


def _privacy_options(e):
    p = e.add_argument_group("privacy")
    p.add_argument("--epsilon", type=float_arg, default=1.0, help="DP budget (inf: no noise)")
    p.add_argument("--aux-epsilon-fraction", type=float_arg, default=None, metavar="F",
                   help="share of epsilon for the class counts of auc/vus (default: chosen "
                        "from public parameters to minimise the noise, 0.27 for auc with the "
                        "default edges; baselines: 0.1)")
    p.add_argument("--confidence", type=float_arg, default=None, metavar="LEVEL",
                   help="umpc: level of the reported interval, combining DP noise and edge "
                        "sampling (default 0.95)")
    p.add_argument("--ties", action="store_true", default=None,
                   help="umpc, kendall: the data may hold ties; a share of epsilon releases the "
                        "fraction of untied pairs so the interval is tight on tied data (one "
                        "more noisy sum: about twice the online traffic with --noise-method "
                        "mpc; without ties the default interval is already right)")
    p.add_argument("--check-inputs", action=argparse.BooleanOptionalAction, default=None,
                   help="umpc: range-check every party's input on its shares before the edges "
                        "(a party that skips its local check cannot push a kernel beyond its "
                        "sensitivity; about 4 rounds and a gate per input); off by default, "
                        "on by default in `ustat deploy init`")
    p.add_argument("--budget-file", metavar="FILE",
                   help="JSON file keeping a privacy budget (epsilon and delta) per data set, "
                        "recognised by its content, across runs; a run that would exceed it is "
                        "refused before computing")
    budget_options(p)
    t = e.add_argument_group("threat model (umpc)")
    t.add_argument("--threat-model", default=None, choices=("dis", "hf"),
                   help="dis: M_Dis (default), hf: M_HF (committee noise)")
    t.add_argument("--noise-method", default=None, choices=("mpc", "polya"),
                   help="mpc: one discrete Laplace sampled inside MPC (the central model's "
                        "variance, epsilon against all but one contributor, delta <= 2^-40; "
                        "default with --backend dealer); polya: Polya shares sized for "
                        "--max-colluders (cheaper; default with --backend gc)")
    t.add_argument("--max-colluders", type=_max_colluders_arg, default=None, metavar="T",
                   help="dis: parties that may collude with the aggregator while epsilon holds: "
                        "an integer, half (default) or all (n - 1; n times the noise variance)")
    t.add_argument("--committee-size", type=int_arg, default=None, metavar="M",
                   help="hf: noise committee size (default: with --noise-method mpc the "
                        "smallest with one honest member but with probability --committee-fail, "
                        "40 for f_H = 0.5 (fewer below n of a few thousand); with polya the "
                        "smallest whose variance cost is within 2x of the best, 188 for f_H = "
                        "0.5 and large n, 180 at n = 4521)")
    t.add_argument("--honest-fraction", type=float_arg, default=None, metavar="F",
                   help="hf: assumed fraction of honest parties f_H (default 0.5)")
    t.add_argument("--committee-fail", dest="fail", type=float_arg, default=None,
                   metavar="P", help="hf: allowed probability that the committee has fewer "
                                     "honest members than assumed (default 2^-40)")


def _protocol_options(e, protocols):
    g = e.add_argument_group("protocol")
    g.add_argument("--protocol", default="umpc", metavar="NAME",
                   help="umpc (default: U-MPC, central DP by MPC) or a baseline: "
                        + ", ".join(p for p in protocols if p != "umpc")
                        + " (docs/guides/baselines.md)")
    g.add_argument("--bins", type=int_arg, default=None, metavar="T",
                   help="bins per numeric column of the discretizing protocols (default 64)")
    g.add_argument("--pairs", default=None, metavar="P|all",
                   help="bell-2pc: pairs per user (default 1), or all pairs")
    g.add_argument("--delta", type=float_arg, default=None,
                   help="bell-2pc with --pairs all: delta of advanced composition (default "
                        "1e-8); fedauc-lap with --mechanism gaussian: its delta (default 1e-6)")
    g.add_argument("--mechanism", default=None, choices=("laplace", "gaussian"),
                   help="fedauc-lap: discrete Laplace (default, pure DP) or Gaussian noise")
    g.add_argument("--noise-bits", type=int_arg, default=None, metavar="R",
                   help="bell-2pc: random bits of the in-circuit noise sampler (default 40)")
    g.add_argument("--engine", default=None, choices=("gc", "plain"),
                   help="bell-2pc: gc (garbled circuits, default) or plain (the same circuit in "
                        "the clear, for error studies)")


def _engine_options(e, backends):
    g = e.add_argument_group("engine and precision (umpc)")
    g.add_argument("--backend", default=None, metavar="NAME",
                   help="how each edge computes f(x_e): " + " or ".join(backends or ["dealer"])
                        + " (default dealer)")
    g.add_argument("--workers", type=int_arg, default=None, metavar="N",
                   help="chunks computed in parallel (default: all cores; 1: in this process)")
    g.add_argument("--pool", default=None, choices=("processes", "threads"),
                   help="worker pool for --workers > 1 (default processes)")
    g.add_argument("--scheduler", default=None, metavar="local|ADDRESS",
                   help="run the chunks on Dask: local, or a scheduler address tcp://host:port")
    g.add_argument("--processes", type=int_arg, default=None, metavar="P",
                   help="spread the parties and the roles (dealer, aggregator, shuffler) over P "
                        "processes on this machine, connected by loopback sockets (same release "
                        "for a seed; every --protocol)")
    g.add_argument("--bits", type=int_arg, default=None, metavar="L",
                   help="ring bits l of the fixed-point encoding (default: chosen per kernel)")
    g.add_argument("--frac-bits", type=int_arg, default=None, metavar="C",
                   help="fractional bits c of the encoding (default: chosen per kernel)")
    g.add_argument("--resolution", type=float_arg, default=None, metavar="R",
                   help="smallest input difference, in raw data units, that comparisons must "
                        "resolve (default: chosen per kernel)")


def _run_options(e):
    r = e.add_argument_group("run")
    r.add_argument("--edges", default=None,
                   help="umpc: number of edges: 2n (default; capped at all for tiny data), "
                        "any cn such as 0.5n or 10n, an integer N, or all")
    r.add_argument("--sampler", default=None, choices=("balanced", "uniform", "bernoulli"),
                   help="umpc: how edges are drawn: balanced (every party in about the same "
                        "number of edges, the smallest noise; default), uniform, bernoulli")
    r.add_argument("--seed", default=None, help="reproducible, INSECURE randomness")
    r.add_argument("--evaluate", action="store_true",
                   help="also report the exact statistic on the raw and on the encoded values "
                        "(reads the data in the clear)")
    r.add_argument("--no-progress", action="store_true", help="no progress bar on stderr")
    r.add_argument("--json", action="store_true", help="print one JSON object")


def add_parser(sub: argparse._SubParsersAction[Parser]) -> argparse.ArgumentParser:
    """The ``estimate`` subcommand's parser, added to ``sub``."""
    protocols, backends = _runtime_names()
    e = sub.add_parser(
        "estimate", help="a DP U-statistic by U-MPC or a baseline protocol",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Estimate a differentially private U-statistic with the U-MPC protocol among "
                    "simulated parties (one per record), or with a baseline protocol "
                    "(--protocol). Options marked umpc apply to U-MPC only.",
        epilog=THREAT_HELP + "\n\n" + CLEAR_CHECKS + "\n\n" + EXIT_CODES
               + "\n\nFull reference: docs/guides/cli.md")
    e.add_argument("kernel", help="kernel name (see `ustat kernels`)")
    _data_options(e)
    _privacy_options(e)
    _protocol_options(e, protocols)
    _engine_options(e, backends)
    _run_options(e)
    return e


def parse(command: list) -> argparse.Namespace:
    """The arguments of one ``estimate`` command (``["estimate", "auc", "--columns", ...]``),
    as ``ustat`` parses them; UsageError for a mistake (SystemExit from argparse's own)."""
    ap = Parser(prog="ustat")
    add_parser(ap.add_subparsers(dest="command"))
    return ap.parse_args(list(command))
