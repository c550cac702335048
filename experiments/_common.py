"""Shared helpers of the experiment scripts: arguments, provenance, progress, writers, statistics.

Every script calls :func:`start` (``--quick`` / ``--full``, ``--out``,
``--data``, ``--runs``, ``--seed``), reports progress with :class:`Progress`
on stderr, and writes its results with :func:`write_csv`,
:func:`experiments._plots.save_png`, :func:`write_markdown` and
:func:`write_json` into the output directory, named after the script.

Output: ``--out DIR``; by default a scratch directory (:func:`scratch_dir`),
so that a run never overwrites the committed results by accident; pass
``--out experiments/results`` to regenerate them.

Provenance: every file records the commit of the code (``git rev-parse
HEAD``, ``+dirty`` when the work tree has changes), the command and the base
seed: the CSV in a first comment line (``# provenance: {...}``; read it with
:func:`read_csv`, or pandas' ``comment="#"``), the Markdown in its header, the
PNG in its metadata and a footer line, the JSON in a ``provenance`` field.

Randomness: every protocol run takes a seed string from :meth:`Run.seed_for`
(the base seed, the script, the setting and the run number), so a rerun
gives the same numbers; seeded runs are reproducible and NOT secure (the
protocols mark them ``insecure_seed``), which is what an experiment wants.
"""

from __future__ import annotations

import argparse
import csv
import functools
import json
import math
import os
import platform
import shlex
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

from experiments import _data  # noqa: E402 (after the sys.path insert above)
from experiments._data import (  # noqa: E402,F401 (after sys.path; re-exported for the scripts)
    BANK_FEATURES,
    DIABETES_FEATURES,
    HEART_COLUMNS,
    HEART_FEATURES,
    HEART_FILES,
    MissingData,
    bank_full,
    bank_jobs,
    bank_small,
    crossfit_dataset,
    crossfit_scores,
    data_file,
    diabetes,
    heart,
    heart_table,
    heldout_scores,
    logistic_scores,
    split,
    xpois,
)
from experiments._plots import (  # noqa: E402,F401 (after sys.path; re-exported for the scripts)
    dress,
    eps_axis,
    legend_below,
    legend_outside,
    paper_legend,
    paper_style,
    pyplot,
    save_png,
    subplots,
)

RESULTS = os.path.join(ROOT, "experiments", "results")
DEFAULT_SEED = 20240607


def scratch_dir() -> str:
    """The default output directory: ``$USTAT_EXPERIMENTS_OUT`` or ``<tmp>/ustat-experiments``."""
    return os.environ.get("USTAT_EXPERIMENTS_OUT") or os.path.join(tempfile.gettempdir(),
                                                                   "ustat-experiments")


# -- provenance ------------------------------------------------------------------------------
@functools.lru_cache(maxsize=1)
def code_commit() -> str:
    """``git rev-parse HEAD`` of the repository, ``+dirty`` if tracked files other than
    ``experiments/results`` and Markdown documents changed; ``"unknown"`` outside a git
    checkout."""
    def git(*args):
        return subprocess.run(["git", "-C", ROOT, *args], capture_output=True, text=True,
                              timeout=30)
    try:
        head = git("rev-parse", "HEAD")
        if head.returncode != 0:
            return "unknown"
        dirty = git("status", "--porcelain", "--untracked-files=no", "--", ".",
                    ":(exclude)experiments/results", ":(exclude,glob)**/*.md")
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    return head.stdout.strip() + ("+dirty" if dirty.stdout.strip() else "")


# -- arguments -------------------------------------------------------------------------------
@dataclass
class Run:
    """One invocation of a script: its mode, output directory, base seed and provenance."""

    name: str
    quick: bool
    out: str
    seed: int
    runs: int | None = None
    t0: float = 0.0
    argv: list = field(default_factory=list)

    def path(self, suffix: str) -> str:
        """``<out>/<name><suffix>``, e.g. ``path(".csv")``."""
        return os.path.join(self.out, self.name + suffix)

    def repeats(self, quick: int, full: int) -> int:
        """Runs per setting: ``--runs`` if given, else the mode's default."""
        if self.runs is not None:
            return self.runs
        return quick if self.quick else full

    def seed_for(self, *labels) -> str:
        """A reproducible seed string for one run of one setting."""
        return ":".join([str(self.seed), self.name, *(str(x) for x in labels)])

    def mode_text(self) -> str:
        return "quick (smoke test, small sizes)" if self.quick else "full"

    def elapsed(self) -> float:
        return time.perf_counter() - self.t0

    def command(self) -> str:
        """The command that reproduces this run (from the repository root; paths inside the
        repository are written relative to it)."""
        def arg(a):
            a = str(a)
            if os.path.isabs(a) and (a == ROOT or a.startswith(ROOT + os.sep)):
                a = os.path.relpath(a, ROOT)
            return shlex.quote(a)
        return " ".join(["python -m", f"experiments.{self.name}", *map(arg, self.argv)])

    def provenance(self) -> dict:
        """What every result file records: commit, command, seed, mode and the software."""
        return {"commit": code_commit(), "command": self.command(), "seed": self.seed,
                "mode": "quick" if self.quick else "full", "python": platform.python_version(),
                "numpy": np.__version__}


def start(name: str, description: str, argv=None, extra=None) -> Run:
    """Parse the common arguments, create the output directory, announce the run on stderr.

    ``extra(parser)`` may add script-specific arguments; they are then in
    ``run.args``.
    """
    argv = list(sys.argv[1:] if argv is None else argv)
    ap = argparse.ArgumentParser(prog=f"python -m experiments.{name}", description=description)
    mode = ap.add_mutually_exclusive_group()
    mode.add_argument("--quick", action="store_true",
                      help="small sizes and few runs: finishes in seconds (the tests use it)")
    mode.add_argument("--full", action="store_true",
                      help="the README's numbers (default)")
    ap.add_argument("--out", default=None,
                    help=f"output directory (default: a scratch directory, {scratch_dir()}; "
                         "--out experiments/results regenerates the committed results)")
    ap.add_argument("--data", default=None,
                    help=f"data directory (default $USTAT_DATA or {_data.DEFAULT_DATA})")
    ap.add_argument("--runs", type=int, default=None,
                    help="runs per setting (default: the mode's)")
    ap.add_argument("--seed", type=int, default=DEFAULT_SEED,
                    help=f"base seed (default {DEFAULT_SEED}); runs are reproducible, NOT secure")
    if extra is not None:
        extra(ap)
    args = ap.parse_args(argv)
    if args.runs is not None and args.runs < 2:
        ap.error("--runs must be at least 2 (a spread needs two runs)")
    if args.data is not None:
        _data.set_data_dir(args.data)
    out = os.path.abspath(args.out if args.out is not None else scratch_dir())
    os.makedirs(out, exist_ok=True)
    run = Run(name, bool(args.quick), out, args.seed, args.runs, time.perf_counter(), argv)
    run.args = args
    note = "" if args.out is not None else " (scratch; --out experiments/results to update them)"
    print(f"[{name}] {run.mode_text()}; output in {out}{note}", file=sys.stderr)
    return run


# -- progress --------------------------------------------------------------------------------
class Progress:
    """A progress bar on stderr: redrawn in place on a terminal, a line per 10% otherwise."""

    def __init__(self, total: int, label: str, stream=None):
        self.total, self.label = max(int(total), 1), label
        self.stream = sys.stderr if stream is None else stream
        self.tty = bool(getattr(self.stream, "isatty", lambda: False)())
        self.done, self._shown_decile, self._t0 = 0, -1, time.perf_counter()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False

    def line(self) -> str:
        frac = min(self.done / self.total, 1.0)
        secs = time.perf_counter() - self._t0
        eta = secs / frac * (1 - frac) if frac > 0 else float("nan")
        bar = "#" * int(30 * frac)
        return (f"  {self.label:<28} [{bar:<30}] {self.done}/{self.total} "
                f"{secs:6.1f}s (eta {eta:5.0f}s)")

    def advance(self, k: int = 1) -> None:
        self.done += int(k)
        if self.tty:
            self.stream.write("\r" + self.line())
            self.stream.flush()
            return
        decile = int(10 * min(self.done / self.total, 1.0))
        if decile > self._shown_decile:
            self._shown_decile = decile
            self.stream.write(self.line() + "\n")
            self.stream.flush()

    def close(self) -> None:
        if self.tty:
            self.stream.write("\r" + self.line() + "\n")
            self.stream.flush()


# -- writers ---------------------------------------------------------------------------------
def fmt(x, digits: int = 3) -> str:
    """A number for a table: 3 significant digits, '-' for None, ints as they are."""
    if x is None:
        return "-"
    if isinstance(x, str):
        return x
    if isinstance(x, (bool, np.bool_)):
        return "yes" if x else "no"
    if isinstance(x, (int, np.integer)):
        return str(int(x))
    x = float(x)
    if math.isnan(x):
        return "nan"
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    if x == 0:
        return "0"
    if 1e-3 <= abs(x) < 1e5:
        return f"{x:.{digits}g}"
    return f"{x:.{digits - 1}e}"


def ecdf_levels(n_points: int) -> int:
    """L, the levels of the ECDF tree over ``n_points`` thresholds."""
    from ustat.ecdf import Tree

    return int(Tree(n_points).levels)


def ecdf_noise_words(levels: int) -> str:
    """The ECDF rows' noise scale, ours against the paper's (Thm 3.1), for a tree of L levels."""
    return (f"noise per tree node: ours discrete Laplace of scale L/epsilon (sensitivity L = "
            f"{levels}), the paper's Laplace of scale (L + 1)/epsilon (Thm 3.1): the paper's "
            f"noise variance is ((L + 1)/L)^2 = {((levels + 1) / levels) ** 2:.3f} times ours")


def pm(mean, se, digits: int = 3) -> str:
    """``mean +- se`` for a table cell (``se`` with 2 digits; '-' parts stay '-')."""
    if se is None or (isinstance(se, float) and math.isnan(se)):
        return fmt(mean, digits)
    return f"{fmt(mean, digits)} +- {fmt(se, 2)}"


def write_csv(run: Run, rows: list, suffix: str = ".csv") -> str:
    """Rows (dicts) as CSV after a ``# provenance: {...}`` line; columns in order of appearance."""
    path = run.path(suffix)
    cols: list = []
    for r in rows:
        cols.extend(k for k in r if k not in cols)
    with open(path, "w", newline="") as fh:
        fh.write("# provenance: " + json.dumps(run.provenance(), sort_keys=True) + "\n")
        w = csv.DictWriter(fh, fieldnames=cols)
        w.writeheader()
        for r in rows:
            w.writerow({k: _csv_value(r.get(k)) for k in cols})
    return path


def read_csv(path: str) -> list:
    """The rows of a results CSV (dicts of strings), skipping the provenance comment line."""
    with open(path, newline="") as fh:
        return list(csv.DictReader(line for line in fh if not line.startswith("#")))


def read_provenance(path: str) -> dict:
    """The provenance a results file records (CSV, Markdown, JSON or PNG)."""
    if path.endswith(".png"):
        from PIL import Image

        with Image.open(path) as im:
            return json.loads(im.info["provenance"])
    with open(path) as fh:
        if path.endswith(".json"):
            return json.load(fh)["provenance"]
        for line in fh:
            for tag in ("# provenance: ", "<!-- provenance: "):
                if line.startswith(tag):
                    return json.loads(line[len(tag):].rstrip().removesuffix("-->").strip())
    raise ValueError(f"{path}: no provenance line")


def _csv_value(v):
    if v is None:
        return ""
    if isinstance(v, (float, np.floating)):
        return repr(float(v))
    if isinstance(v, np.integer):
        return int(v)
    return v


def md_table(header: list, rows: list) -> str:
    """A Markdown table; cells go through :func:`fmt`, a '|' inside a cell is escaped."""
    def cell(c):
        return fmt(c).replace("|", "\\|").replace("\n", " ")
    lines = ["| " + " | ".join(cell(str(h)) for h in header) + " |",
             "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(cell(c) for c in r) + " |" for r in rows]
    return "\n".join(lines)


def write_markdown(path: str, title: str, run: Run, sections: list) -> str:
    """A Markdown report: title, provenance (commit, command, seed), then the sections."""
    prov = run.provenance()
    head = (f"# {title}\n\n<!-- provenance: {json.dumps(prov, sort_keys=True)} -->\n"
            f"Generated by `{prov['command']}` at commit `{prov['commit']}` "
            f"({run.mode_text()}, base seed {run.seed}, {run.elapsed():.0f} s). "
            "Seeded runs: reproducible, not secure.\n")
    with open(path, "w") as fh:
        fh.write(head + "\n" + "\n\n".join(s.strip("\n") for s in sections) + "\n")
    return path


def item(paper: str, name: str, ran: str, paper_value: str, ours: str, explanation: str,
         evidence: str, agrees: str = "") -> dict:
    """One row of the README's combined table (see :func:`write_json`).

    ``paper``: the paper's short name; ``name``: the table or figure;
    ``ran``: data, |E|, epsilons, runs; ``paper_value`` and ``ours`` (with its
    standard error): strings made from the numbers; ``explanation``: computed
    from the numbers; ``evidence``: the script and the row of its results.
    """
    return {"paper": paper, "item": name, "ran": ran, "paper_value": paper_value, "ours": ours,
            "agrees": agrees, "explanation": explanation, "evidence": evidence}


def write_json(run: Run, items: list, numbers: dict | None = None) -> str:
    """``<name>.json``: provenance, the README rows (:func:`item`) and key numbers."""
    from ustat.baselines.result import _jsonable

    doc = {"provenance": run.provenance(), "script": run.name, "items": items,
           "numbers": _jsonable(numbers or {})}
    path = run.path(".json")
    with open(path, "w") as fh:
        json.dump(doc, fh, indent=1, sort_keys=True)
        fh.write("\n")
    return path


def verdict(ok: bool, yes: str = "yes", no: str = "no") -> str:
    """The word a claims table prints for a check computed from the numbers."""
    return yes if ok else no


# -- statistics and timing -------------------------------------------------------------------
def raw_estimate(res) -> float:
    """The release before any clamp into the statistic's range (``estimate_raw`` where the
    result has one): the papers' protocols release unclamped values, and their errors are of
    those (the toolkit's baselines clamp since issue 37, keeping the raw value beside)."""
    raw = float(getattr(res, "estimate_raw", math.nan))
    return raw if math.isfinite(raw) else float(res.estimate)


def mean_se(values) -> tuple[float, float]:
    """Mean and standard error of the mean (nan-free input)."""
    v = np.asarray(values, dtype=np.float64)
    if v.size < 2:
        return float(v.mean()), float("nan")
    return float(v.mean()), float(v.std(ddof=1) / math.sqrt(v.size))


def std_se(values) -> tuple[float, float]:
    """Sample standard deviation and its standard error (normal approximation s / sqrt(2(r-1)))."""
    v = np.asarray(values, dtype=np.float64)
    v = v[np.isfinite(v)]
    if v.size < 2:
        return float("nan"), float("nan")
    s = float(v.std(ddof=1))
    return s, s / math.sqrt(2 * (v.size - 1))


def mse_se(errors) -> tuple[float, float]:
    """Mean squared error and its standard error (the s.e. of the mean of the squares)."""
    return mean_se(np.square(np.asarray(errors, dtype=np.float64)))


def repeat_runs(settings: list, runs, one, label: str) -> list:
    """Rows ``{**setting, "run": r, **one(setting, r)}`` for every setting and run, with progress.

    ``runs``: runs per setting, an int or a function of the setting.
    """
    count = runs if callable(runs) else (lambda _s: runs)
    rows = []
    with Progress(sum(count(s) for s in settings), label) as bar:
        for setting in settings:
            for r in range(count(setting)):
                rows.append({**setting, "run": r, **one(setting, r)})
                bar.advance()
    return rows
