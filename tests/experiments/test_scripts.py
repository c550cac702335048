"""Every experiment script in --quick mode, in a temporary directory: outputs exist and are sane.

Each script runs in this process through its ``main(argv)``; the scripts
that read ../shared/data skip with the reason when it is absent. Checks:
the CSV has rows and finite numbers where they must be, every PNG is a
readable image of reasonable size, the Markdown has its tables, and a few
script-specific facts (exact traffic formulas, the FSS release equal to
counts + noise, error ratios positive).
"""

import csv
import math
import os

import pytest

from experiments.run_all import SCRIPTS

pytest.importorskip("matplotlib")
pytest.importorskip("sklearn")
pytest.importorskip("scipy")
pytest.importorskip("clarabel")

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DATA = os.path.normpath(os.path.join(REPO, "..", "shared", "data"))
NEEDS = {
    "ecdf_roc": [("bank", "bank-full.csv"), ("diabetes", "diabetic_data.csv"),
                 ("heart-disease", "processed.va.data")],
    "ecdf_hosmer_lemeshow": [("bank", "bank-full.csv"), ("diabetes", "diabetic_data.csv")],
    "fedauc_eps": [("bank", "bank-full.csv")],
    "bell_auc_rr": [("diabetes", "diabetic_data.csv")],
    "bell_kendall": [("diabetes", "diabetic_data.csv")],
    "sinh_ramon_kendall": [("bank", "bank.csv")],
    "sinh_ramon_duplicates": [("bank", "bank.csv")],
    "sinh_ramon_heart": [("heart-disease", f) for f in (
        "processed.cleveland.data", "processed.hungarian.data", "processed.switzerland.data",
        "processed.va.data")],
}
PNGS = {"ecdf_roc": ["ecdf_roc.png", "ecdf_roc_curves.png"]}


def _need_data(name):
    for parts in NEEDS.get(name, []):
        path = os.path.join(DATA, *parts)
        if not os.path.exists(path):
            pytest.skip(f"shared data not available: {path} (clone with ../shared beside the repo)")


def _rows(path):
    with open(path, newline="") as fh:
        return list(csv.DictReader(fh))


def _num(v):
    return float(v) if v not in ("", None) else math.nan


def check_smoothing(out):
    rows = _rows(os.path.join(out, "ecdf_smoothing.csv"))
    for r in rows:
        for m in ("isotonic", "l1", "l2"):
            v = _num(r[f"ratio_{m}"])
            assert 0 < v < 5, (m, r)
    # isotonic is the L2 projection onto non-decreasing [0, 1] sequences: never worse than raw
    assert all(_num(r["ratio_isotonic"]) <= 1 + 1e-9 for r in rows)


def check_inverse(out):
    with open(os.path.join(out, "ecdf_inverse.md")) as fh:
        md = fh.read()
    assert "| FSS release == exact counts + node noise (all N points) | yes |" in md
    rows = _rows(os.path.join(out, "ecdf_inverse.csv"))
    assert all(_num(r["mse_ecdf"]) > 0 and _num(r["mse_inverse"]) >= 0 for r in rows)


def check_roc(out):
    rows = _rows(os.path.join(out, "ecdf_roc.csv"))
    for r in rows:
        assert 0.5 < _num(r["auc_true"]) < 1
        for m in ("isotonic", "l1", "l2"):
            assert 0 <= _num(r[f"l1dist_{m}"]) <= 1


def check_hosmer_lemeshow(out):
    rows = _rows(os.path.join(out, "ecdf_hosmer_lemeshow.csv"))
    assert {r["set"] for r in rows} == {"bank", "diabetes"}
    assert all(_num(r["rel_err2"]) >= 0 and _num(r["H_true"]) > 0 for r in rows)


def check_runtime(out):
    rows = _rows(os.path.join(out, "ecdf_runtime.csv"))
    traffic = [r for r in rows if r["panel"] == "traffic"]
    assert {r["backend"] for r in traffic} == {"fss", "pointwise"}
    assert all(int(r["total_bits"]) == int(r["formula_bits"]) for r in traffic)
    fss = [r for r in rows if r["panel"] == "fss"]
    assert all(_num(r["offline_bits_per_party"]) == _num(r["offline_bits_per_party_formula"])
               for r in fss)
    assert all(_num(r["server_eval_one_query_seconds"]) > 0 for r in fss)


def check_fedauc(out):
    rows = _rows(os.path.join(out, "fedauc_eps.csv"))
    assert {r["protocol"] for r in rows} == {"fedauc-rr", "fedauc-lap", "umpc", "bell-auc"}
    assert all(int(r["online_bits"]) > 0 and int(r["rounds"]) >= 1 for r in rows)
    finite = [r for r in rows if math.isfinite(_num(r["estimate"]))]
    assert len(finite) >= 0.9 * len(rows)


def check_bell(out):
    rows = _rows(os.path.join(out, "bell_auc_rr.csv"))
    assert {r["protocol"] for r in rows} == {"bell-auc", "bell-ldp"}
    n = None
    with open(os.path.join(out, "bell_auc_rr.md")) as fh:
        for line in fh:
            if line.startswith("| bell-auc |"):
                n = line.split("|")[8].strip()          # bits / party column
                break
    assert n == "2"                                     # one Hadamard bit + the public label


def check_bell_kendall(out):
    # more checks of the script in test_bell_kendall.py
    rows = _rows(os.path.join(out, "bell_kendall.csv"))
    runs = [r for r in rows if r["panel"] in ("A", "B")]
    variants = {r["variant"] for r in runs}
    assert "rr" in variants and "2pc-all" in variants and "2pc-P1" in variants
    assert all(math.isfinite(_num(r["abs_error"])) and _num(r["abs_error"]) >= 0 for r in runs)
    # bell-ldp: ceil(log2 36) = 6 bits per party, measured
    assert all(int(r["online_bits"]) == 6 * int(r["n"]) for r in runs if r["variant"] == "rr")
    gc = [r for r in rows if r["panel"] == "gc"]
    assert {r["pairs"] for r in gc} >= {"1", "all"}
    # garbled circuits == plain engine on the same seed (same circuit, same coins)
    assert all(_num(r["estimate"]) == _num(r["plain_estimate"]) for r in gc)
    assert all(int(r["online_bits"]) > 0 and int(r["rounds"]) == 3 for r in gc)


SR_BASELINES = {"bell-ldp", "ghazi", "ghazi-sm"}


def _sr_common(rows, kernel_dims, protocols):
    """Checks shared by the Sinh-Ramon figure scripts (rows of one CSV)."""
    assert {r["protocol"] for r in rows} == protocols
    for r in rows:
        assert math.isfinite(_num(r["estimate"])) and math.isfinite(_num(r["total_error"]))
        assert int(r["online_bits"]) > 0 and int(r["rounds"]) >= 1
        assert _num(r["seconds"]) > 0
        if r["per_party_seconds"] == "":                # no time split: GhaziSM's shortcut
            assert r["protocol"] == "ghazi-sm" and r["server_seconds"] == ""
        else:
            assert _num(r["per_party_seconds"]) > 0 and _num(r["server_seconds"]) >= 0
        assert _num(r["total_error"]) == pytest.approx(_num(r["estimate"]) - _num(r["reference"]),
                                                       abs=1e-12)
        if r["protocol"] in SR_BASELINES:
            # measured bits per party == the protocol's formula (index bits, 2 d l, m 2 d l)
            assert _num(r["mean_party_bits"]) == int(r["formula_party_bits"]) \
                == int(r["max_party_bits"])
        else:
            d = kernel_dims(r)
            n = int(r["edges"]) // 2                     # |E| = 2n
            l = int(r["ring_bits"])
            assert int(r["sharing_bits"]) == int(r["edges"]) * 2 * d * l   # |E| k (k-1) d l
            assert int(r["aggregation_bits"]) == n * l                    # one l-bit word each
            assert r["threat_model"] == "hf"
            assert _num(r["dp_error"]) == pytest.approx(
                _num(r["estimate"]) - _num(r["incomplete"]), abs=1e-12)


def _mse(rows, protocol, column="total_error", **where):
    sel = [_num(r[column]) for r in rows if r["protocol"] == protocol
           and all(r[k] == v for k, v in where.items())]
    assert sel, (protocol, where)
    v = sum(x * x for x in sel) / len(sel)
    assert math.isfinite(v) and v > 0
    return v


def check_sr_gini(out):
    rows = _rows(os.path.join(out, "sinh_ramon_gini.csv"))
    _sr_common(rows, lambda r: 1, SR_BASELINES | {"umpc", "umpc-default"})
    for r in rows:
        if r["protocol"] == "bell-ldp":
            assert _num(r["mean_party_bits"]) == 8          # ceil(log2 256): the cell index
        if r["protocol"] == "umpc":
            assert int(r["ring_bits"]) == 40 and int(r["frac_bits"]) == 14   # the paper's l, c
        if r["protocol"] == "umpc-default":
            assert int(r["ring_bits"]) > 40                # gini gets a wider ring by default
    for n in {r["n"] for r in rows}:
        dp = _mse(rows, "umpc", "dp_error", n=n)
        assert dp < min(_mse(rows, p, n=n) for p in ("bell-ldp", "ghazi"))
    with open(os.path.join(out, "sinh_ramon_gini.md")) as fh:
        md = fh.read()
    assert "| 1000 | U-MPC | 3 |" in md and "3.96e-06" in md


def check_sr_kendall(out):
    rows = _rows(os.path.join(out, "sinh_ramon_kendall.csv"))
    _sr_common(rows, lambda r: 2, SR_BASELINES | {"umpc"})
    assert all(r["bins"] == "" for r in rows if r["protocol"] == "umpc")
    ts = {int(r["bins"]) for r in rows if r["protocol"] != "umpc"}
    for r in rows:
        if r["protocol"] == "bell-ldp":
            t = int(r["bins"])
            assert _num(r["mean_party_bits"]) == (t * t - 1).bit_length()   # ceil(log2 t^2)
    for t in ts:
        dp = _mse(rows, "umpc", "dp_error", epsilon="1.0")
        ldp = min(_mse(rows, p, epsilon="1.0", bins=str(t)) for p in ("bell-ldp", "ghazi"))
        assert dp < ldp
    # more privacy, more noise: U-MPC's DP-only error grows as epsilon shrinks
    assert _mse(rows, "umpc", "dp_error", epsilon="0.1") > _mse(rows, "umpc", "dp_error",
                                                                 epsilon="1.0")


def check_sr_duplicates(out):
    rows = _rows(os.path.join(out, "sinh_ramon_duplicates.csv"))
    assert {r["sampler"] for r in rows} == {"balanced", "uniform", "bernoulli"}
    for r in rows:
        assert _num(r["dp_error"]) == pytest.approx(_num(r["estimate"]) - _num(r["incomplete"]),
                                                    abs=1e-12)
        if r["sampler"] == "balanced":
            assert int(r["max_degree"]) == math.ceil(2 * int(r["m"]) / 600)


def check_sr_heart(out):
    rows = _rows(os.path.join(out, "sinh_ramon_heart.csv"))
    _sr_common(rows, lambda r: 2 if r["kernel"] == "kendall" else 1, SR_BASELINES | {"umpc"})
    assert {r["kernel"] for r in rows} == {"kendall", "duplicate"}
    for r in rows:
        if r["protocol"] == "bell-ldp" and r["kernel"] == "duplicate":
            assert _num(r["mean_party_bits"]) == 3          # ceil(log2 5): num in 0..4
    t_paper = max(int(r["bins"]) for r in rows if r["bins"])   # the caption's t (quick: 16)
    for n in {r["n"] for r in rows}:
        # U-MPC's DP error below the LDP protocols' (Kendall at the caption's t: T = t^2 cells)
        dp = _mse(rows, "umpc", "dp_error", kernel="kendall", n=n)
        assert dp < min(_mse(rows, p, kernel="kendall", n=n, bins=str(t_paper))
                        for p in ("bell-ldp", "ghazi"))
        assert _mse(rows, "umpc", "dp_error", kernel="duplicate", n=n) < _mse(
            rows, "ghazi", kernel="duplicate", n=n)


CHECKS = {"ecdf_smoothing": check_smoothing, "ecdf_inverse": check_inverse, "ecdf_roc": check_roc,
          "ecdf_hosmer_lemeshow": check_hosmer_lemeshow, "ecdf_runtime": check_runtime,
          "fedauc_eps": check_fedauc, "bell_auc_rr": check_bell, "bell_kendall": check_bell_kendall,
          "sinh_ramon_gini": check_sr_gini, "sinh_ramon_kendall": check_sr_kendall,
          "sinh_ramon_duplicates": check_sr_duplicates, "sinh_ramon_heart": check_sr_heart}


def test_every_script_has_a_check():
    assert set(CHECKS) == set(SCRIPTS)


@pytest.mark.parametrize("name", SCRIPTS)
def test_quick_mode(name, tmp_path):
    """The script's --quick run: CSV, PNG(s) and Markdown exist and are sane."""
    import importlib

    import matplotlib.image as mpimg

    _need_data(name)
    out = str(tmp_path)
    mod = importlib.import_module(f"experiments.{name}")
    assert mod.main(["--quick", "--out", out]) == 0
    rows = _rows(os.path.join(out, f"{name}.csv"))
    assert len(rows) >= 4
    for png in PNGS.get(name, [f"{name}.png"]):
        path = os.path.join(out, png)
        assert os.path.getsize(path) > 20_000, f"{png} is suspiciously small"
        img = mpimg.imread(path)
        assert img.ndim == 3 and img.shape[0] >= 300 and img.shape[1] >= 500
    with open(os.path.join(out, f"{name}.md")) as fh:
        md = fh.read()
    assert md.startswith("# ") and "--quick" in md and "|---|" in md
    CHECKS[name](out)
