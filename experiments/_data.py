"""The experiments' data: the shared data sets, synthetic data, splits and classifier scores.

Data sets are read from the data directory (``--data DIR``; default the
environment variable ``USTAT_DATA`` or ``../shared/data`` beside the
repository; see its PROVENANCE.md). A missing file raises
:class:`MissingData` naming the path. Splits and synthetic data use the
CSPRNG with public, seeded coins (they are not secrets).
"""

from __future__ import annotations

import math
import os

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_DATA = os.path.normpath(os.path.join(ROOT, "..", "shared", "data"))

#: The data directory in use; :func:`experiments._common.start` sets it from ``--data``.
DATA = os.environ.get("USTAT_DATA") or DEFAULT_DATA


class MissingData(FileNotFoundError):  # noqa: N818 - public name: run_all.py and the tests catch it
    """A data set of the data directory is not there (the message names the path)."""


def set_data_dir(path: str) -> str:
    """Use ``path`` as the data directory (checked to exist); returns its absolute path."""
    global DATA
    path = os.path.abspath(os.path.expanduser(path))
    if not os.path.isdir(path):
        raise MissingData(f"data directory not found: {path} (pass --data DIR, the directory "
                          "holding bank/, diabetes/ and heart-disease/)")
    DATA = path
    return path


def data_file(*parts) -> str:
    """Path of a file under the data directory, or :class:`MissingData`."""
    path = os.path.join(DATA, *parts)
    if not os.path.exists(path):
        raise MissingData(f"data set not found: {path} (the experiments read --data DIR, default "
                          "../shared/data beside the repository; see its PROVENANCE.md)")
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


def bank_small(columns=("age", "balance"), limit=None) -> np.ndarray:
    """bank.csv (n = 4521): numeric ``columns`` scaled to [0, 1] by their min and max.

    The Sinh-Ramon experiments' data (the authors' load_data.py does the same
    min-max scaling). ``limit``: the first rows only (quick mode).
    """
    from ustat.data import load_csv

    raw = load_csv(data_file("bank", "bank.csv"), columns=list(columns))
    raw = np.asarray(raw[0] if isinstance(raw, tuple) else raw, dtype=np.float64)
    if limit is not None:
        raw = raw[:limit]
    return (raw - raw.min(axis=0)) / (raw.max(axis=0) - raw.min(axis=0))


def bank_jobs(limit=None) -> tuple[np.ndarray, list]:
    """bank.csv's ``job`` column as integer codes (n = 4521, 12 levels) and the level names."""
    from ustat.data import load_csv

    raw, _, cats = load_csv(data_file("bank", "bank.csv"), columns=["job"], categorical=["job"],
                            return_categories=True)
    codes = np.asarray(raw, dtype=np.int64).reshape(-1, 1)
    if limit is not None:
        codes = codes[:limit]
    return codes, list(cats["job"])


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


def heart_table(columns) -> np.ndarray:
    """The 4 processed Heart Disease files stacked, the given columns ('?' as NaN)."""
    from ustat.data import read_table

    idx = [HEART_COLUMNS.index(c) for c in columns]
    blocks = []
    for f in HEART_FILES:
        t = read_table(data_file("heart-disease", f), header=False)
        blocks.append(np.column_stack([
            np.array([np.nan if v == "?" else float(v) for v in t.columns[str(i + 1)]])
            for i in idx]))
    return np.vstack(blocks)


def heart():
    """UCI Heart Disease, the 4 processed files (rows with a '?' in the features dropped).

    Features age, sex, cp, trestbps, thalach, exang, oldpeak; label num > 0.
    """
    tab = heart_table(HEART_FEATURES + ["num"])
    keep = np.all(np.isfinite(tab[:, :-1]), axis=1)
    return tab[keep][:, :-1], (tab[keep, -1] > 0).astype(np.int64)


def xpois(lam: float, n_points: int, seed) -> np.ndarray:
    """The ECDF paper's synthetic X_pois(lambda) (Section 6.2.1): values 1..N, Pois(lambda) of each.

    Counts by inversion of the Poisson CDF on CSPRNG uniforms (public data,
    not a secret; exact up to the float CDF). Returns the sorted values.
    """
    from mpc.arith.rng import CSPRNG

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
    from mpc.arith.rng import CSPRNG

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
