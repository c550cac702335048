"""The ``ustat`` argument parser: its subcommands, each registered by the module that owns
its options (:mod:`.estimate_options`, :mod:`.ecdf_options`, :mod:`.deploy`), and the
reading of negative bounds as values."""

from __future__ import annotations

import argparse
import re

from . import deploy, ecdf_options, estimate_options
from .common import EXIT_CODES, Parser, int_arg

__all__ = ["build_parser", "join_dash_values"]


def build_parser(commands: dict) -> argparse.ArgumentParser:
    """The parser; extensions add their (run, show) pairs to ``commands``."""
    from .. import __version__

    ap = Parser(
        prog="ustat", description="Private U-statistics and ECDFs among simulated parties.",
        epilog=EXIT_CODES + " Reference: docs/guides/cli.md",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--version", action="version", version=f"ustat {__version__}")
    sub = ap.add_subparsers(dest="command")
    estimate_options.add_parser(sub)
    kl = sub.add_parser("kernels", help="list the available kernels")
    kl.add_argument("--json", action="store_true")
    pl = sub.add_parser("protocols", help="list the protocols of estimate --protocol")
    pl.add_argument("--json", action="store_true")
    d = sub.add_parser("demo", help="engine demo: share, multiply, open; print the report")
    d.add_argument("--parties", type=int_arg, default=3)
    d.add_argument("--batch", type=int_arg, default=100_000)
    d.add_argument("--seed", default=None, help="reproducible, INSECURE randomness")
    d.add_argument("--json", action="store_true")
    ecdf_options.register(sub, commands)
    deploy.register(sub, commands)
    return ap


#: Options whose value may start with "-" (a negative bound): "--bounds -10:10" is read as a value.
DASH_VALUES = ("--bounds",)


def join_dash_values(argv: list) -> list:
    out, i = [], 0
    while i < len(argv):
        tok, nxt = argv[i], argv[i + 1] if i + 1 < len(argv) else ""
        if tok in DASH_VALUES and re.match(r"-[0-9.]", nxt):
            out.append(f"{tok}={nxt}")
            i += 2
        else:
            out.append(tok)
            i += 1
    return out
