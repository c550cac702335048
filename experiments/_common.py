"""Shared helpers of the experiment scripts: arguments, progress, writers, data and scores.

Every script calls :func:`start` (``--quick`` / ``--full``, ``--out``,
``--runs``, ``--seed``), reports progress with :class:`Progress` on stderr,
and writes its results with :func:`write_csv`, :func:`save_png` and
:func:`write_markdown` into the output directory, named after the script.

Randomness: every protocol run takes a seed string from :meth:`Run.seed_for`
(the base seed, the script, the setting and the run number), so a rerun
gives the same numbers; seeded runs are reproducible and NOT secure (the
protocols mark them ``insecure_seed``), which is what an experiment wants.
Data splits use the same CSPRNG (public coins, not secrets). Data sets are
read from ``../shared/data`` (see its PROVENANCE.md); a missing file raises
:class:`MissingData` naming the path.
"""

from __future__ import annotations

import argparse
import csv
import math
import os
import sys
import time
from dataclasses import dataclass

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)
DATA = os.path.normpath(os.path.join(ROOT, "..", "shared", "data"))
RESULTS = os.path.join(ROOT, "experiments", "results")
DEFAULT_SEED = 20240607

__all__ = ["Run", "start", "Progress", "MissingData", "write_csv", "write_markdown", "md_table",
           "fmt", "pyplot", "eps_axis", "save_png", "data_file", "bank_full", "diabetes", "heart",
           "xpois", "split", "logistic_scores", "crossfit_scores", "crossfit_dataset",
           "heldout_scores", "mean_se",
           "repeat_runs", "DATA", "RESULTS", "ROOT"]


class MissingData(FileNotFoundError):
    """A data set of ../shared/data is not there (the message names the path)."""


# -- arguments -------------------------------------------------------------------------------
@dataclass
class Run:
    """One invocation of a script: its mode, output directory and base seed."""

    name: str
    quick: bool
    out: str
    seed: int
    runs: int | None = None
    t0: float = 0.0

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


def start(name: str, description: str, argv=None) -> Run:
    """Parse the common arguments, create the output directory, announce the run on stderr."""
    ap = argparse.ArgumentParser(prog=f"python -m experiments.{name}", description=description)
    mode = ap.add_mutually_exclusive_group()
    mode.add_argument("--quick", action="store_true",
                      help="small sizes and few runs: finishes in seconds (the tests use it)")
    mode.add_argument("--full", action="store_true",
                      help="the README's numbers (default)")
    ap.add_argument("--out", default=RESULTS,
                    help=f"output directory (default {os.path.relpath(RESULTS, ROOT)})")
    ap.add_argument("--runs", type=int, default=None,
                    help="runs per setting (default: the mode's)")
    ap.add_argument("--seed", type=int, default=DEFAULT_SEED,
                    help=f"base seed (default {DEFAULT_SEED}); runs are reproducible, NOT secure")
    args = ap.parse_args(argv)
    if args.runs is not None and args.runs < 2:
        ap.error("--runs must be at least 2 (a spread needs two runs)")
    os.makedirs(args.out, exist_ok=True)
    run = Run(name, bool(args.quick), args.out, args.seed, args.runs, time.perf_counter())
    print(f"[{name}] {run.mode_text()}; output in {args.out}", file=sys.stderr)
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


def write_csv(path: str, rows: list) -> str:
    """Rows (dicts) as CSV; columns in order of first appearance."""
    cols: list = []
    for r in rows:
        cols.extend(k for k in r if k not in cols)
    with open(path, "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=cols)
        w.writeheader()
        for r in rows:
            w.writerow({k: _csv_value(r.get(k)) for k in cols})
    return path


def _csv_value(v):
    if v is None:
        return ""
    if isinstance(v, (float, np.floating)):
        return repr(float(v))
    if isinstance(v, np.integer):
        return int(v)
    return v


def md_table(header: list, rows: list) -> str:
    """A Markdown table; cells go through :func:`fmt`."""
    lines = ["| " + " | ".join(str(h) for h in header) + " |",
             "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(fmt(c) for c in r) + " |" for r in rows]
    return "\n".join(lines)


def write_markdown(path: str, title: str, run: Run, sections: list) -> str:
    """A Markdown report: title, the mode and seed, then the sections (text or tables)."""
    head = (f"# {title}\n\nGenerated by `python -m experiments.{run.name}"
            f"{' --quick' if run.quick else ''}` ({run.mode_text()}, base seed {run.seed}, "
            f"{run.elapsed():.0f} s). Seeded runs: reproducible, not secure.\n")
    with open(path, "w") as fh:
        fh.write(head + "\n" + "\n\n".join(s.strip("\n") for s in sections) + "\n")
    return path


def pyplot():
    """matplotlib.pyplot on the Agg backend (no display needed)."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    return plt


def eps_axis(ax, values) -> None:
    """A log x axis with one plain tick label per value (no crowded minor labels)."""
    ax.set_xscale("log")
    ax.set_xticks(list(values))
    ax.set_xticklabels([fmt(v) for v in values])
    ax.xaxis.set_minor_locator(pyplot().NullLocator())


def save_png(fig, path: str) -> str:
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    pyplot().close(fig)
    return path


# -- statistics and timing -------------------------------------------------------------------
def mean_se(values) -> tuple[float, float]:
    """Mean and standard error of the mean (nan-free input)."""
    v = np.asarray(values, dtype=np.float64)
    if v.size < 2:
        return float(v.mean()), float("nan")
    return float(v.mean()), float(v.std(ddof=1) / math.sqrt(v.size))


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


# -- data ------------------------------------------------------------------------------------
def data_file(*parts) -> str:
    """Path of a file under ../shared/data, or :class:`MissingData`."""
    path = os.path.join(DATA, *parts)
    if not os.path.exists(path):
        raise MissingData(f"data set not found: {path} (the experiments read ../shared/data "
                          "beside the repository; see its PROVENANCE.md)")
    return path


BANK_FEATURES = ["age", "balance", "day", "duration", "campaign", "pdays", "previous"]
DIABETES_FEATURES = ["time_in_hospital", "num_lab_procedures", "num_procedures",
                     "num_medications", "number_outpatient", "number_emergency",
                     "number_inpatient", "number_diagnoses", "age"]
HEART_FEATURES = ["age", "sex", "cp", "trestbps", "thalach", "exang", "oldpeak"]
HEART_COLUMNS = ["age", "sex", "cp", "trestbps", "chol", "fbs", "restecg", "thalach", "exang",
                 "oldpeak", "slope", "ca", "thal", "num"]
HEART_FILES = ["processed.cleveland.data", "processed.hungarian.data",
               "processed.switzerland.data", "processed.va.data"]


def bank_full():
    """UCI Bank Marketing, bank-full.csv (n = 45211): 7 numeric features, label y = yes."""
    from ustat.data import load_csv

    raw, _, cats = load_csv(data_file("bank", "bank-full.csv"), columns=BANK_FEATURES + ["y"],
                            categorical=["y"], return_categories=True)
    return raw[:, :-1], (raw[:, -1] == cats["y"].index("yes")).astype(np.int64)


def diabetes(positive: str = "any"):
    """UCI Diabetes 130-US hospitals (n = 101766): 8 numeric features and the age bracket.

    ``positive``: ``"any"`` (readmitted at all: ``<30`` or ``>30``, 46%, the
    ECDF paper's pos. frac. 0.460) or ``"<30"`` (readmitted within 30 days,
    11%, Bell et al.'s positive class).
    """
    from ustat.data import load_csv

    if positive not in ("any", "<30"):
        raise ValueError(f"positive must be 'any' or '<30', got {positive!r}")
    raw, _, cats = load_csv(data_file("diabetes", "diabetic_data.csv"),
                            columns=DIABETES_FEATURES + ["readmitted"],
                            categorical=["age", "readmitted"], return_categories=True)
    lv = cats["readmitted"]
    r = raw[:, -1]
    y = (r != lv.index("NO")) if positive == "any" else (r == lv.index("<30"))
    return raw[:, :-1], y.astype(np.int64)


def heart():
    """UCI Heart Disease, the 4 processed files (rows with a '?' in the features dropped).

    Features age, sex, cp, trestbps, thalach, exang, oldpeak; label num > 0.
    """
    from ustat.data import read_table

    blocks = []
    for f in HEART_FILES:
        t = read_table(data_file("heart-disease", f), header=False)
        cols = [np.array([np.nan if c == "?" else float(c) for c in t.columns[str(i + 1)]])
                for i in range(len(HEART_COLUMNS))]
        blocks.append(np.column_stack(cols))
    tab = np.vstack(blocks)
    idx = [HEART_COLUMNS.index(c) for c in HEART_FEATURES]
    keep = np.all(np.isfinite(tab[:, idx]), axis=1)
    return tab[keep][:, idx], (tab[keep, -1] > 0).astype(np.int64)


def xpois(lam: float, n_points: int, seed) -> np.ndarray:
    """The ECDF paper's synthetic X_pois(lambda) (Section 6.2.1): values 1..N, Pois(lambda) of each.

    Counts by inversion of the Poisson CDF on CSPRNG uniforms (public data,
    not a secret; exact up to the float CDF). Returns the sorted values.
    """
    from mpc.rng import CSPRNG

    if not lam > 0:
        raise ValueError(f"lambda must be > 0, got {lam!r}")
    kmax = int(lam + 12 * math.sqrt(lam) + 20)
    k = np.arange(kmax + 1)
    logpmf = k * math.log(lam) - lam - np.array([math.lgamma(j + 1) for j in k])
    cdf = np.cumsum(np.exp(logpmf))
    counts = np.searchsorted(cdf, CSPRNG(seed).random(n_points) * cdf[-1], side="right")
    return np.repeat(np.arange(1, n_points + 1, dtype=np.float64), counts)


def split(n: int, seed, test: int | float = 0.5):
    """(train, test) row indices from a public CSPRNG permutation; ``test`` a count or fraction."""
    from mpc.rng import CSPRNG

    perm = CSPRNG(seed).permutation(n)
    k = int(round(test * n)) if isinstance(test, float) else int(test)
    return np.sort(perm[k:]), np.sort(perm[:k])


def logistic_scores(F, y, train, test) -> np.ndarray:
    """P(y = 1) on ``test`` from a scikit-learn logistic regression fitted on ``train``."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.preprocessing import StandardScaler

    sc = StandardScaler().fit(F[train])
    model = LogisticRegression(max_iter=2000).fit(sc.transform(F[train]), y[train])
    return np.clip(model.predict_proba(sc.transform(F[test]))[:, 1], 0.0, 1.0)


def crossfit_scores(F, y, seed) -> np.ndarray:
    """Out-of-sample scores for every row: fit on one random half, score the other, and back."""
    a, b = split(y.size, seed)
    s = np.empty(y.size)
    s[b] = logistic_scores(F, y, a, b)
    s[a] = logistic_scores(F, y, b, a)
    return s


def crossfit_dataset(name: str, seed, limit: int | None = None):
    """(cross-fitted scores, labels) of ``"bank"``, ``"heart"`` or ``"diabetes"`` (any readmission).

    ``limit``: a random subset of that many rows first (quick mode).
    """
    loaders = {"bank": bank_full, "heart": heart, "diabetes": lambda: diabetes("any")}
    if name not in loaders:
        raise ValueError(f"data set must be one of {sorted(loaders)}, got {name!r}")
    F, y = loaders[name]()
    if limit is not None and y.size > limit:
        _, keep = split(y.size, f"{seed}:subset", limit)
        F, y = F[keep], y[keep]
    return crossfit_scores(F, y, f"{seed}:{name}"), y


def heldout_scores(F, y, seed, test: int | float = 0.5):
    """(scores, labels) of the held-out rows, the model fitted on the other rows."""
    train, test_idx = split(y.size, seed, test)
    return logistic_scores(F, y, train, test_idx), y[test_idx]
