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


CHECKS = {"ecdf_smoothing": check_smoothing, "ecdf_inverse": check_inverse, "ecdf_roc": check_roc,
          "ecdf_hosmer_lemeshow": check_hosmer_lemeshow, "ecdf_runtime": check_runtime,
          "fedauc_eps": check_fedauc, "bell_auc_rr": check_bell}


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
