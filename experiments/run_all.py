"""Run every experiment script in turn (full mode by default) and print how long each took.

Usage: ``python -m experiments.run_all [--quick] [--out DIR] [--only a,b] [--list]``.
Each script runs in this process through its ``main(argv)``, writes its CSV,
PNG(s) and Markdown to ``--out`` and shows its progress bar on stderr; a
script whose data set is missing is reported and skipped, the others go on.
The exit status is 1 if any script failed.
"""

from __future__ import annotations

import argparse
import importlib
import sys
import time

from experiments._common import RESULTS, MissingData

#: Every script, in the order of the README (one section per paper).
SCRIPTS = [
    "ecdf_smoothing", "ecdf_inverse", "ecdf_roc", "ecdf_hosmer_lemeshow", "ecdf_runtime",
    "fedauc_eps", "bell_auc_rr", "bell_kendall",
    "sinh_ramon_gini", "sinh_ramon_kendall", "sinh_ramon_duplicates", "sinh_ramon_heart",
]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m experiments.run_all",
                                 description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="every script in --quick mode")
    ap.add_argument("--out", default=RESULTS, help="output directory")
    ap.add_argument("--only", default=None, help="comma-separated subset of the scripts")
    ap.add_argument("--list", action="store_true", help="print the scripts and exit")
    args = ap.parse_args(argv)
    names = SCRIPTS if args.only is None else [s.strip() for s in args.only.split(",")]
    unknown = [s for s in names if s not in SCRIPTS]
    if unknown:
        ap.error(f"unknown script(s) {unknown}; available: {', '.join(SCRIPTS)}")
    if args.list:
        print("\n".join(names))
        return 0
    times, failed = {}, []
    t_all = time.perf_counter()
    for name in names:
        mod = importlib.import_module(f"experiments.{name}")
        t = time.perf_counter()
        try:
            mod.main((["--quick"] if args.quick else []) + ["--out", args.out])
        except MissingData as exc:
            print(f"[{name}] skipped: {exc}", file=sys.stderr)
            failed.append(name)
        times[name] = time.perf_counter() - t
    total = time.perf_counter() - t_all
    for name, secs in times.items():
        print(f"{name:<24} {secs:8.1f} s{'  (skipped)' if name in failed else ''}")
    print(f"{'total':<24} {total:8.1f} s")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
