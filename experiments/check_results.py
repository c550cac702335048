"""Check that the committed results regenerate: rerun scripts in full mode with 2 runs, compare.

Usage::

    python -m experiments.check_results [--only a,b] [--results DIR] [--out DIR] [--runs R]

Every run of every script takes its seed from (base seed, script, setting,
run number), never from the number of runs, so a full-mode rerun with
``--runs 2`` reproduces the committed rows of runs 0 and 1 exactly (and every
row without a run number, e.g. deterministic tables), at a fraction of the
time. This script reruns each script that way into a scratch directory and
compares those rows with the committed CSV: every numeric column except
timings (columns whose name contains ``seconds``) must agree to 1e-9
relative. Prints one line per script and exits 1 on any difference.
``authors_code`` is compared only with ``--authors DIR``.
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import tempfile

if __package__ in (None, ""):                       # run as a file: make the repo importable
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from experiments import _common as C  # noqa: N812 - the codebase's short capital module alias

#: Columns that are measurements of time (they differ from run to run).
TIMING = ("seconds",)
#: Columns not compared: where a row was made (authors_code's rows name their commit).
NOT_COMPARED = ("commit",)
#: Columns a script records since a later commit: an empty committed cell is not compared.
RECORDED_LATER = ("noise", "sampling_err")
#: Scripts whose rows do not follow the per-run seeding rule in every column (timings only).
TIMING_ONLY = {"ecdf_runtime"}


def _subset(rows, runs: int) -> list:
    return [r for r in rows if r.get("run", "") in ("",) or int(r["run"]) < runs]


def _same(a: str, b: str) -> bool:
    if a == b:
        return True
    try:
        x, y = float(a), float(b)
    except ValueError:
        return False
    if math.isnan(x) and math.isnan(y):
        return True
    return abs(x - y) <= 1e-9 * max(abs(x), abs(y), 1e-300)


def compare(committed: list, fresh: list, runs: int) -> list:
    """Differences (strings) between the committed rows of runs < ``runs`` and a rerun's."""
    old, new = _subset(committed, runs), _subset(fresh, runs)
    if len(old) != len(new):
        return [f"{len(new)} rows with run < {runs}, committed {len(old)}"]
    diffs = []
    for i, (a, b) in enumerate(zip(old, new)):
        for k in a:
            if any(t in k for t in TIMING) or k not in b or k in NOT_COMPARED:
                continue
            if k in RECORDED_LATER and a[k] == "":
                continue
            if not _same(a[k], b[k]):
                diffs.append(f"row {i} column {k}: committed {a[k]}, now {b[k]}")
    return diffs


def check(name: str, results: str, out: str, runs: int, extra=()) -> list:
    import importlib

    committed = os.path.join(results, f"{name}.csv")
    if not os.path.exists(committed):
        return [f"no committed {committed}"]
    mod = importlib.import_module(f"experiments.{name}")
    mod.main(["--out", out, "--runs", str(runs), *extra])
    if name in TIMING_ONLY:
        return []
    return compare(C.read_csv(committed), C.read_csv(os.path.join(out, f"{name}.csv")), runs)


def main(argv=None) -> int:
    from experiments.run_all import SCRIPTS

    ap = argparse.ArgumentParser(prog="python -m experiments.check_results",
                                 description=__doc__.splitlines()[0])
    ap.add_argument("--only", default=None, help="comma-separated subset of the scripts")
    ap.add_argument("--results", default=C.RESULTS, help="the committed results")
    ap.add_argument("--out", default=None, help="scratch directory (default: a temporary one)")
    ap.add_argument("--runs", type=int, default=2, help="runs per setting to recompute")
    ap.add_argument("--authors", default=None, help="the authors' checkout (authors_code)")
    args = ap.parse_args(argv)
    names = SCRIPTS if args.only is None else [s.strip() for s in args.only.split(",")]
    bad = 0
    with tempfile.TemporaryDirectory(prefix="check-results-") as tmp:
        out = args.out or tmp
        for name in names:
            extra = []
            if name == "authors_code":
                if not args.authors:
                    print(f"{name:<24} not checked (needs --authors)")
                    continue
                extra = ["--authors", args.authors]
            diffs = check(name, args.results, out, args.runs, extra)
            bad += bool(diffs)
            print(f"{name:<24} {'OK' if not diffs else 'DIFFERS'}"
                  + "".join(f"\n    {d}" for d in diffs[:10]))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
