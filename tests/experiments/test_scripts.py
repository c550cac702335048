"""Every experiment script in --quick mode, in a temporary directory: outputs exist and are sane.

Each script runs once per test process (the ``quick`` fixture of conftest.py);
the scripts that read ../shared/data skip with the reason when it is absent.
Checks: the CSV has rows and finite numbers where they must be, every PNG is
a readable image of reasonable size, the Markdown has its tables, the JSON
its README rows; every file records its provenance (commit, command, seed);
the quick run has the structure of the committed results (CSV columns,
Markdown sections, README items); and script-specific facts (exact traffic
formulas, the FSS release equal to counts + noise, the noise laws).
"""

import json
import math
import os

import pytest

from experiments import _common as C
from experiments.run_all import SCRIPTS

pytest.importorskip("matplotlib")
pytest.importorskip("sklearn")
pytest.importorskip("scipy")
pytest.importorskip("clarabel")

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
COMMITTED = os.path.join(REPO, "experiments", "results")
PNGS = {"ecdf_roc": ["ecdf_roc.png", "ecdf_roc_curves.png"],
        "fedauc_allocation": ["fedauc_allocation.png", "fedauc_allocation_methods.png"]}
#: Columns that only some installations produce (the cvxopt tolerance sweep is optional).
#: columns only a run with an optional solver writes (cvxopt: the experiments extra)
OPTIONAL_COLUMNS = {"ecdf_smoothing": ("ratio_", "status_"), "ecdf_runtime": ("status",)}


def _rows(out, name):
    return C.read_csv(os.path.join(out, f"{name}.csv"))


def _num(v):
    return float(v) if v not in ("", None) else math.nan


def check_smoothing(out):
    rows = [r for r in _rows(out, "ecdf_smoothing") if r["figure"] != "sweep"]
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
    rows = _rows(out, "ecdf_inverse")
    assert all(_num(r["mse_ecdf"]) > 0 and _num(r["mse_inverse"]) >= 0 for r in rows)


def check_roc(out):
    for r in _rows(out, "ecdf_roc"):
        assert 0.5 < _num(r["auc_true"]) < 1
        for m in ("isotonic", "l1", "l2"):
            assert 0 <= _num(r[f"l1dist_{m}"]) <= 1


def check_hosmer_lemeshow(out):
    rows = _rows(out, "ecdf_hosmer_lemeshow")
    assert {r["set"] for r in rows} == {"bank", "diabetes"}
    assert all(_num(r["rel_err2"]) >= 0 and _num(r["H_true"]) > 0 for r in rows)


def check_runtime(out):
    rows = _rows(out, "ecdf_runtime")
    traffic = [r for r in rows if r["panel"] == "traffic"]
    assert {r["backend"] for r in traffic} == {"fss", "pointwise"}
    assert all(int(r["total_bits"]) == int(r["formula_bits"]) for r in traffic)
    fss = [r for r in rows if r["panel"] == "fss"]
    assert all(_num(r["offline_bits_per_party"]) == _num(r["offline_bits_per_party_formula"])
               for r in fss)
    assert all(_num(r["server_eval_one_query_seconds"]) > 0 for r in fss)


def check_fedauc_rr(out):
    rows = _rows(out, "fedauc_rr")
    assert {r["set"] for r in rows} == {"main", "tenth"}
    for r in rows:
        assert 0 <= _num(r["auc_noisy"]) <= 1
        if r["epsilon"] == "inf":                       # no flips: no noise, no debiasing
            assert _num(r["auc"]) == pytest.approx(_num(r["auc_noisy"]), abs=1e-12)
    with open(os.path.join(out, "fedauc_rr.json")) as fh:
        stats = json.load(fh)["numbers"]["stats"]
    assert stats["main:inf"]["std"] == 0.0


def check_fedauc_clients(out):
    rows = _rows(out, "fedauc_clients")
    assert {r["table"] for r in rows} == {"T7", "T2"}
    assert {r["method"] for r in rows if r["table"] == "T7"} == {
        "rr", "global", "local-iid", "local-noniid", "adaptive-iid", "adaptive-noniid"}
    M = max(int(r["K"]) for r in rows)
    for r in rows:
        assert _num(r["formula_std"]) > 0 and 2 <= int(r["K"]) <= M
        if r["spc"] == "1.0":
            assert int(r["K"]) == M                      # one record per client


def check_fedauc_allocation(out):
    rows = _rows(out, "fedauc_allocation")
    assert {r["method"] for r in rows} == {"naive", "orthogonal", "adaptive"}
    assert all(math.isfinite(_num(r["auc"])) and _num(r["formula_std"]) > 0 for r in rows)
    with open(os.path.join(out, "fedauc_allocation.json")) as fh:
        hist = json.load(fh)["numbers"]["beta_hist"]
    assert set(hist) == {"iid", "noniid"} and all(len(h) == 65 and sum(h) > 0
                                                  for h in hist.values())


def check_fedauc_scores(out):
    rows = _rows(out, "fedauc_scores")
    t8 = [r for r in rows if r["table"] == "T8"]
    assert t8 and all(0 <= _num(r["precision"]) <= 1 for r in t8)
    rec = [_num(r["recall"]) for r in t8]
    assert rec == sorted(rec)
    assert all(0 <= _num(r["auc"]) <= 1 for r in rows if r["table"] == "T9")


def check_bell(out):
    rows = _rows(out, "bell_auc_rr")
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
    rows = _rows(out, "bell_kendall")
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
SR_UMPC = {"umpc", "umpc-law", "umpc-002"}


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
            l = int(r["ring_bits"])
            assert int(r["sharing_bits"]) == int(r["edges"]) * 2 * d * l   # |E| k (k-1) d l
            n = int(r["aggregation_bits"]) // l                           # one word per party
            assert int(r["edges"]) == (2 * n if r["protocol"] != "umpc-002"
                                       else int(0.02 * math.comb(n, 2)))
            assert r["threat_model"] == "hf"
            # one discrete Laplace in every variant: the paper's law (Polya shares without a
            # collusion margin) and ours (since issue 30 sampled inside MPC by default)
            assert _num(r["variance_factor"]) == 1.0
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
    rows = _rows(out, "sinh_ramon_gini")
    _sr_common(rows, lambda r: 1, SR_BASELINES | SR_UMPC | {"umpc-default"})
    for r in rows:
        if r["protocol"] == "bell-ldp":
            assert _num(r["mean_party_bits"]) == 8          # ceil(log2 256): the cell index
        if r["protocol"] in SR_UMPC:
            assert int(r["ring_bits"]) == 40 and int(r["frac_bits"]) == 14   # the paper's l, c
        if r["protocol"] == "umpc-default":
            assert int(r["ring_bits"]) > 40                # gini gets a wider ring by default
    for n in {r["n"] for r in rows}:
        dp = _mse(rows, "umpc", "dp_error", n=n)
        assert dp < min(_mse(rows, p, n=n) for p in ("bell-ldp", "ghazi"))
    with open(os.path.join(out, "sinh_ramon_gini.md")) as fh:
        md = fh.read()
    assert "## Sampler time" in md and "1.45e-04" in md         # the paper at n = 100


def check_sr_kendall(out):
    rows = _rows(out, "sinh_ramon_kendall")
    _sr_common(rows, lambda r: 2, SR_BASELINES | SR_UMPC)
    assert all(r["bins"] == "" for r in rows if r["protocol"] in SR_UMPC)
    ts = {int(r["bins"]) for r in rows if r["protocol"] not in SR_UMPC}
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
    rows = _rows(out, "sinh_ramon_duplicates")
    assert {r["sampler"] for r in rows} == {"balanced", "uniform", "bernoulli"}
    n, m = 300, int(0.5 * math.comb(300, 2))
    for r in rows:
        for law in ("default", "paper"):
            assert _num(r[f"{law}_dp_error"]) == pytest.approx(
                _num(r[f"{law}_estimate"]) - _num(r["incomplete"]), abs=1e-12)
        assert _num(r["paper_variance_factor"]) == 1.0          # one discrete Laplace
        assert _num(r["default_variance_factor"]) == 1.0        # sampled inside MPC
        if r["sampler"] != "bernoulli":
            assert int(r["edges"]) == m
        if r["sampler"] == "balanced":
            assert int(r["max_degree"]) == math.ceil(2 * m / n)


def check_sr_heart(out):
    rows = _rows(out, "sinh_ramon_heart")
    _sr_common(rows, lambda r: 2 if r["kernel"] == "kendall" else 1, SR_BASELINES | SR_UMPC)
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


def check_authors(out):
    rows = _rows(out, "authors_code")
    assert {r["group"] for r in rows} >= {"table2", "kendall-umpc", "heart-bell"}
    assert all(_num(r["sq_err"]) >= 0 for r in rows if r["sq_err"] != "")


CHECKS = {"ecdf_smoothing": check_smoothing, "ecdf_inverse": check_inverse, "ecdf_roc": check_roc,
          "ecdf_hosmer_lemeshow": check_hosmer_lemeshow, "ecdf_runtime": check_runtime,
          "fedauc_rr": check_fedauc_rr, "fedauc_clients": check_fedauc_clients,
          "fedauc_allocation": check_fedauc_allocation, "fedauc_scores": check_fedauc_scores,
          "bell_auc_rr": check_bell, "bell_kendall": check_bell_kendall,
          "sinh_ramon_gini": check_sr_gini, "sinh_ramon_kendall": check_sr_kendall,
          "sinh_ramon_duplicates": check_sr_duplicates, "sinh_ramon_heart": check_sr_heart,
          "authors_code": check_authors}


def test_every_script_has_a_check():
    assert set(CHECKS) == set(SCRIPTS)


def check_table_widths(md):
    """Every Markdown table row has its header's number of cells (a '|' in a cell is escaped)."""
    import re

    width = None
    for line in md.splitlines():
        if not line.startswith("|"):
            width = None
            continue
        cells = len(re.findall(r"(?<!\\)\|", line))
        if width is None:
            width = cells
        assert cells == width, line


def _sections(md_path):
    """The Markdown's section headings, without their parenthesized (size-dependent) parts."""
    import re

    with open(md_path) as fh:
        return {re.sub(r"\s*\(.*?\)", "", line.strip()) for line in fh if line.startswith("## ")}


def _structure(out, name):
    """(CSV columns, Markdown sections, README items) of a script's results in ``out``."""
    rows = _rows(out, name)
    cols = set().union(*(r.keys() for r in rows))
    opt = OPTIONAL_COLUMNS.get(name, ())
    cols = {c for c in cols if not c.startswith(opt)} if opt else cols
    with open(os.path.join(out, f"{name}.json")) as fh:
        items = [it["item"] for it in json.load(fh)["items"]]
    return cols, _sections(os.path.join(out, f"{name}.md")), items


@pytest.mark.parametrize("name", SCRIPTS)
def test_quick_mode(name, quick):
    """The script's --quick run: outputs exist, are sane, carry provenance, match the committed."""
    import matplotlib.image as mpimg

    out = quick(name)
    rows = _rows(out, name)
    assert len(rows) >= 4
    for png in PNGS.get(name, [f"{name}.png"] if name != "authors_code" else []):
        path = os.path.join(out, png)
        assert os.path.getsize(path) > 20_000, f"{png} is suspiciously small"
        img = mpimg.imread(path)
        assert img.ndim == 3 and img.shape[0] >= 300 and img.shape[1] >= 500
    with open(os.path.join(out, f"{name}.md")) as fh:
        md = fh.read()
    assert md.startswith("# ") and "--quick" in md and "|---|" in md
    check_table_widths(md)
    with open(os.path.join(out, f"{name}.json")) as fh:
        doc = json.load(fh)
    for it in doc["items"]:
        assert all(str(it[k]).strip() for k in ("item", "ran", "paper_value", "ours",
                                                "explanation", "evidence")), it
    # provenance in every file the run wrote
    for f in os.listdir(out):
        prov = C.read_provenance(os.path.join(out, f))
        assert prov["commit"] and prov["seed"] == C.DEFAULT_SEED, f
        assert prov["command"].startswith(f"python -m experiments.{name}") and "--quick" in \
            prov["command"], f
    # the committed results have the same structure (their numbers: test_regenerate.py)
    if os.path.exists(os.path.join(COMMITTED, f"{name}.json")):
        assert _structure(out, name) == _structure(COMMITTED, name)
    CHECKS[name](out)
