"""Run every experiment script in turn (full mode by default) and print how long each took.

Usage::

    python -m experiments.run_all [--quick] [--out DIR] [--data DIR] [--seed S]
                                  [--authors DIR] [--only a,b] [--list]

(or ``python path/to/experiments/run_all.py ...`` from any directory). Each
script runs in this process through its ``main(argv)``, writes its CSV,
PNG(s), Markdown and JSON to ``--out`` and shows its progress bar on stderr.
``--out`` defaults to a scratch directory (see
:func:`experiments._common.scratch_dir`): the committed results in
``experiments/results`` change only with ``--out experiments/results``. At
the end the combined table of all papers' items is written to
``<out>/summary.md`` (:mod:`experiments.summary`).

``authors_code`` runs the original authors' code and needs a checkout of
their repository at the pinned commit (``--authors DIR``); without it, it
is listed as not run. A script whose data set is missing is reported and
skipped, the others go on. The exit status is 1 if any script failed or
was skipped for missing data.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
import time

if __package__ in (None, ""):                       # run as a file: make the repo importable
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from experiments._common import DEFAULT_SEED, MissingData, scratch_dir

#: Every script, in the order of the README (one section per paper).
SCRIPTS = [
    "ecdf_smoothing", "ecdf_inverse", "ecdf_roc", "ecdf_hosmer_lemeshow", "ecdf_runtime",
    "fedauc_rr", "fedauc_clients", "fedauc_allocation", "fedauc_scores",
    "bell_auc_rr", "bell_kendall",
    "sinh_ramon_gini", "sinh_ramon_kendall", "sinh_ramon_duplicates", "sinh_ramon_heart",
    "authors_code",
]
#: Scripts that need the authors' checkout (``--authors``).
NEEDS_AUTHORS = {"authors_code"}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m experiments.run_all",
                                 description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="every script in --quick mode")
    ap.add_argument("--out", default=None,
                    help=f"output directory (default: a scratch directory, {scratch_dir()}; "
                         "--out experiments/results regenerates the committed results)")
    ap.add_argument("--data", default=None, help="data directory (default ../shared/data)")
    ap.add_argument("--seed", type=int, default=DEFAULT_SEED, help="base seed")
    ap.add_argument("--authors", default=None,
                    help="checkout of the Sinh-Ramon authors' repository (for authors_code)")
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
    out = os.path.abspath(args.out if args.out is not None else scratch_dir())
    common = (["--quick"] if args.quick else []) + ["--out", out, "--seed", str(args.seed)]
    if args.data is not None:
        common += ["--data", args.data]
    times, failed, not_run = {}, [], []
    t_all = time.perf_counter()
    for name in names:
        extra = []
        if name in NEEDS_AUTHORS:
            if args.authors is None:
                print(f"[{name}] not run: it needs --authors DIR (see experiments/README.md)",
                      file=sys.stderr)
                not_run.append(name)
                continue
            extra = ["--authors", args.authors]
        mod = importlib.import_module(f"experiments.{name}")
        t = time.perf_counter()
        try:
            mod.main(common + extra)
        except MissingData as exc:
            print(f"[{name}] skipped: {exc}", file=sys.stderr)
            failed.append(name)
        times[name] = time.perf_counter() - t
    total = time.perf_counter() - t_all
    from experiments import summary

    path = summary.write_summary(out)
    for name, secs in times.items():
        print(f"{name:<24} {secs:8.1f} s{'  (skipped)' if name in failed else ''}")
    for name in not_run:
        print(f"{name:<24} not run (needs --authors)")
    print(f"{'total':<24} {total:8.1f} s")
    print(f"results in {out}; combined table: {path}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
