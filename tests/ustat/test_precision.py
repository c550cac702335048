"""Issue 8, section 2: the release is computed on the values the user gave.

Acceptance: with epsilon = inf and all edges, every kernel equals an
independent reference on the raw values (numpy, scipy, sklearn; never our
kernels) to 1e-9 on columns of Bank, Heart Disease (Cleveland) and Diabetes.
Subsets (first usable rows of each file): 200 records for k = 2 kernels
(19,900 edges), 50 for k = 3 (19,600 edges), and the 300-record Kendall
Bank (age, balance) case of the issue (0.06506, tau-a; 14-bit inputs merge
values into ties). The CSVs are read directly (../shared/data, PROVENANCE.md).
"""

from __future__ import annotations

import csv
import itertools
import math
import os

import numpy as np
import pytest
from scipy import stats
from sklearn.metrics import rand_score, roc_auc_score

from mpc.session import Session
from tests.api import flat_umpc
from ustat import kernels as K
from ustat.umpc.precision import Shares, choose_precision

DATA = os.path.join(os.path.dirname(__file__), "..", "..", "..", "shared", "data")
TOL = 1e-9


def _path(*parts):
    p = os.path.join(DATA, *parts)
    if not os.path.exists(p):
        pytest.skip(f"data file {os.path.join(*parts)} is absent (../shared/data, PROVENANCE.md)")
    return p


def _rows(path, delimiter, header, limit=2000):
    with open(path, newline="") as f:
        r = csv.reader(f, delimiter=delimiter)
        names = next(r) if header else None
        rows = list(itertools.islice(r, limit))
    return names, rows


def _codes(values):
    return np.unique(np.asarray(values), return_inverse=True)[1].astype(float)


def _columns(path, delimiter):
    """A getter of the named columns (as lists of strings) of a file with a header."""
    names, rows = _rows(path, delimiter, True)
    col = {n: i for i, n in enumerate(names)}
    return lambda n: [r[col[n]] for r in rows]


def bank():
    get = _columns(_path("bank", "bank.csv"), ";")
    edu = {"primary": 0, "secondary": 1, "tertiary": 2}
    return {
        "num": {"age": (np.array(get("age"), float), (18, 95)),
                "balance": (np.array(get("balance"), float), (-10000, 110000))},
        "label": (np.array(get("y")) == "yes").astype(float),
        "cat": {"job": _codes(get("job")), "marital": _codes(get("marital")),
                "education": _codes(get("education"))},
        "cls": np.array([edu.get(v, -1) for v in get("education")], float),
    }


def heart():
    _, rows = _rows(_path("heart-disease", "processed.cleveland.data"), ",", False)
    rows = [r for r in rows if "?" not in r]
    A = np.array(rows, dtype=float)
    return {
        "num": {"age": (A[:, 0], (0, 100)), "chol": (A[:, 4], (100, 600)),
                "thalach": (A[:, 7], (60, 220)), "oldpeak": (A[:, 9], (0, 7))},
        "label": (A[:, 13] > 0).astype(float),
        "cat": {"cp": A[:, 2] - 1, "sex": A[:, 1], "thal": _codes(A[:, 12])},
        "cls": np.minimum(A[:, 13], 2),
    }


def diabetes():
    get = _columns(_path("diabetes", "diabetic_data.csv"), ",")
    readm = {"NO": 0, ">30": 1, "<30": 2}
    return {
        "num": {"labs": (np.array(get("num_lab_procedures"), float), (0, 150)),
                "meds": (np.array(get("num_medications"), float), (0, 100)),
                "days": (np.array(get("time_in_hospital"), float), (1, 14))},
        "label": (np.array(get("readmitted")) != "NO").astype(float),
        "cat": {"race": _codes(get("race")), "gender": _codes(get("gender")),
                "age": _codes(get("age"))},
        "cls": np.array([readm[v] for v in get("readmitted")], float),
    }


DATASETS = {"bank": bank, "heart": heart, "diabetes": diabetes}
#: per data set: (gini column, kendall columns, auc score, triples column, vus score,
#: duplicate column, rand columns)
COLUMNS = {
    "bank": ("balance", ("age", "balance"), "balance", "age", "balance", "job",
             ("marital", "education")),
    "heart": ("oldpeak", ("age", "thalach"), "thalach", "chol", "thalach", "cp", ("sex", "cp")),
    "diabetes": ("labs", ("labs", "meds"), "labs", "labs", "meds", "age", ("race", "gender")),
}


# -- independent references on raw values --------------------------------------------
def _pairs(n):
    return np.triu_indices(n, 1)


def ref_gini(x, width):
    i, j = _pairs(x.size)
    return float(np.mean(np.abs(x[i] - x[j]))) / width


def ref_tau_a(x, y):
    i, j = _pairs(x.size)
    return float(np.mean(np.sign(x[i] - x[j]) * np.sign(y[i] - y[j])))


def ref_duplicate(c):
    counts = np.unique(c, return_counts=True)[1].astype(float)
    return float(np.sum(counts * (counts - 1)) / (c.size * (c.size - 1)))


def ref_triples(x):
    i, j, k = np.array(list(itertools.combinations(range(x.size), 3))).T
    a, b, c = x[i], x[j], x[k]
    return float(np.mean(np.sign(a + b - 2 * c) + np.sign(a + c - 2 * b) + np.sign(b + c - 2 * a)))


def ref_vus(s, y):
    s0, s1, s2 = s[y == 0], s[y == 1], s[y == 2]
    below = (s0[None, :] < s1[:, None]).sum(axis=1)
    above = (s2[None, :] > s1[:, None]).sum(axis=1)
    return float(np.sum(below * above)) / (s0.size * s1.size * s2.size)


def _release(X, name, bounds=None):
    return flat_umpc(X, name, epsilon=math.inf, edges="all", sampler="all", seed=7, workers=1,
                    bounds=bounds)


def _cases(ds, name):
    """(records, bounds, reference) of kernel ``name`` on data set ``ds``."""
    d = DATASETS[ds]()
    gcol, kcols, acol, tcol, vcol, dcol, rcols = COLUMNS[ds]
    n2, n3 = 200, 50
    if name == "gini":
        x, b = d["num"][gcol]
        return x[:n2], [b], ref_gini(x[:n2], b[1] - b[0])
    if name == "kendall":
        (x, bx), (y, by) = d["num"][kcols[0]], d["num"][kcols[1]]
        return np.column_stack([x, y])[:n2], [bx, by], ref_tau_a(x[:n2], y[:n2])
    if name == "auc":
        s, b = d["num"][acol]
        return (np.column_stack([s, d["label"]])[:n2], [b, None],
                roc_auc_score(d["label"][:n2], s[:n2]))
    if name in ("duplicate", "renyi2"):
        c = d["cat"][dcol][:n2]
        r = ref_duplicate(c)
        return c, None, r if name == "duplicate" else -math.log(r)
    if name == "rand":
        a, b = d["cat"][rcols[0]][:n2], d["cat"][rcols[1]][:n2]
        return np.column_stack([a, b]), None, rand_score(a, b)
    if name == "triples":
        x, b = d["num"][tcol]
        return x[:n3], [b], ref_triples(x[:n3])
    s, b = d["num"][vcol]
    keep = d["cls"] >= 0
    s, y = s[keep][:n3], d["cls"][keep][:n3]
    return np.column_stack([s, y]), [b, None], ref_vus(s, y)


KERNELS = ("gini", "kendall", "auc", "duplicate", "renyi2", "rand", "triples", "vus")


@pytest.mark.parametrize("ds", sorted(DATASETS))
@pytest.mark.parametrize("name", KERNELS)
def test_every_kernel_equals_a_raw_value_reference(ds, name):
    X, bounds, ref = _cases(ds, name)
    res = _release(X, name, bounds)
    assert abs(res.estimate - ref) <= TOL, (ds, name, res.estimate, ref, res.precision)
    assert res.ci == [res.estimate, res.estimate]


def test_triples_on_bank_age_and_balance():
    d = bank()
    for col in ("age", "balance"):
        x, b = d["num"][col]
        res = _release(x[:50], "triples", [b])
        assert abs(res.estimate - ref_triples(x[:50])) <= TOL
        # the old 14-bit normalized inputs break ties of a + b - 2c: visible, not silent
        old = flat_umpc((x[:50] - b[0]) / (b[1] - b[0]), "triples", epsilon=math.inf,
                       edges="all", seed=7, workers=1, bits=40, frac_bits=14,
                       input_frac_bits=14, evaluate=True)
        assert old.evaluation["exact_encoded"] == pytest.approx(old.estimate, abs=TOL)


def test_kendall_bank_age_balance_300_rows_is_tau_a():
    d = bank()
    (age, ba), (bal, bb) = d["num"]["age"], d["num"]["balance"]
    x, y = age[:300], bal[:300]
    ref = ref_tau_a(x, y)
    assert ref == pytest.approx(0.06506, abs=5e-6)
    # scipy's tau-b corrected to tau-a with the tie counts (independent of numpy's signs)
    n0 = 300 * 299 / 2
    tx = sum(c * (c - 1) / 2 for c in np.unique(x, return_counts=True)[1])
    ty = sum(c * (c - 1) / 2 for c in np.unique(y, return_counts=True)[1])
    tau_b = stats.kendalltau(x, y).statistic
    assert tau_b * math.sqrt((n0 - tx) * (n0 - ty)) / n0 == pytest.approx(ref, abs=1e-12)
    raw = flat_umpc(np.column_stack([x, y]), "kendall", epsilon=math.inf, edges="all", seed=1,
                   workers=1, bounds=[ba, bb], evaluate=True)
    assert abs(raw.estimate - ref) <= TOL
    assert raw.evaluation["exact_raw"] == pytest.approx(ref, abs=1e-12)
    assert raw.evaluation["encoding_error"] == 0.0
    # records normalized by the caller (by hi - lo, not a power of two): same value
    Xn = (np.column_stack([x, y]) - [ba[0], bb[0]]) / [ba[1] - ba[0], bb[1] - bb[0]]
    norm = flat_umpc(Xn, "kendall", epsilon=math.inf, edges="all", seed=1, workers=1,
                    evaluate=True)
    assert abs(norm.estimate - ref) <= TOL
    assert norm.precision["input_frac_bits"] == 38 and norm.precision["bits"] == 40
    # the old encoding (14 input bits) merges values into ties (the issue saw 0.06491 with
    # other bounds), and the evaluation now says so
    old = flat_umpc(Xn, "kendall", epsilon=math.inf, edges="all", seed=1, workers=1,
                   bits=40, frac_bits=14, input_frac_bits=14, evaluate=True)
    assert abs(old.estimate - ref) > 5e-5
    ev = old.evaluation
    assert ev["exact_raw"] == pytest.approx(ref, abs=1e-12)
    assert ev["exact_encoded"] == pytest.approx(old.estimate, abs=1e-12)
    assert ev["encoding_error"] == pytest.approx(old.estimate - ref, abs=1e-12)


# -- the choice of the encoding ---------------------------------------------------------
def _choose(name, **kw):
    args = dict(m=1000, n=500, delta_max=4, eps=1.0, shares=Shares(0.1))
    args.update(kw)
    return choose_precision(K.get(name), **args)


def test_precision_per_kernel():
    assert (_choose("kendall").bits, _choose("kendall").frac_bits,
            _choose("kendall").input_frac_bits) == (40, 14, 38)
    assert _choose("triples").input_frac_bits == 37          # a + b - 2c spans 2 input ranges
    g = _choose("gini")            # the narrowest ring giving 32 fractional bits
    # |E| + 28 delta_max / eps = 1112 < 2^10.2: 32 + 2 + 10.2 bits -> l = 45
    assert (g.bits, g.frac_bits, g.input_frac_bits) == (45, 32, 32)
    assert _choose("gini", m=2 * 10 ** 7, n=10 ** 7).bits == 59
    # explicit ints are used as given (inputs still as fine as the ring allows)
    p = _choose("kendall", bits=48, frac_bits=10)
    assert (p.bits, p.frac_bits, p.input_frac_bits) == (48, 10, 46)
    # a fine resolution widens a free ring; an explicit ring that cannot give it is refused
    assert _choose("kendall", resolution=2.0 ** -50).bits == 52
    with pytest.raises(ValueError, match=r"resolution=.* cannot be met"):
        _choose("kendall", bits=40, resolution=2.0 ** -50)
    # many edges: an arithmetic kernel keeps fewer fractional bits, never wraps
    big = _choose("gini", m=10 ** 12)
    assert big.bits == 64 and big.frac_bits < 32 and 10 ** 12 * 2 ** big.frac_bits < 2 ** 63


def test_precision_errors():
    with pytest.raises(ValueError, match="input_frac_bits must equal frac_bits"):
        _choose("gini", frac_bits=20, input_frac_bits=30)
    with pytest.raises(ValueError, match="input_frac_bits=39 lets kernel 'kendall'"):
        _choose("kendall", input_frac_bits=39)
    with pytest.raises(ValueError, match="resolution must be a positive number"):
        _choose("kendall", resolution=0)
    with pytest.raises(ValueError, match="bits must be an integer"):
        _choose("kendall", bits=65)
    X = np.random.default_rng(0).random((10, 2))
    s = Session(10, bits=40, frac_bits=14, seed=1)
    with pytest.raises(ValueError, match="bits=48 differs from the session's bits=40"):
        flat_umpc(X, "kendall", session=s, bits=48)
    with pytest.raises(ValueError, match=r"row 3 is outside the bounds"):
        X2 = X * 100
        X2[3, 1] = 200.0
        flat_umpc(X2, "kendall", bounds=[(0, 100), (0, 100)], epsilon=math.inf)
    with pytest.raises(ValueError, match=r"bounds must give one \(lo, hi\) per column"):
        flat_umpc(X, "kendall", bounds=[(0, 1)])


def test_precision_reported_and_session_widths_kept():
    X = np.random.default_rng(1).random((12, 2))
    s = Session(12, bits=44, frac_bits=12, seed=2)
    res = flat_umpc(X, "kendall", session=s, epsilon=math.inf, edges="all", workers=1)
    assert res.precision["bits"] == 44 and res.precision["frac_bits"] == 12
    assert res.precision["input_frac_bits"] == 42
    assert res.precision["resolution"] == 2.0 ** -42
    assert res.estimate == pytest.approx(ref_tau_a(X[:, 0], X[:, 1]), abs=TOL)
