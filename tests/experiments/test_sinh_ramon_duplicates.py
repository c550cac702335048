"""experiments.sinh_ramon_duplicates in --quick mode: outputs exist and the errors are sane.

Checks on the CSV and Markdown: 3 samplers x 3 edge counts, every sampler
draws distinct pairs (duplicate ratio 0), the balanced sampler has the
smallest maximal degree (ceil(2|E|/n)), errors are finite and the DP-only
error is the difference to the exact incomplete U-statistic.
"""

import csv
import math
import os

import pytest

pytest.importorskip("matplotlib")

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BANK = os.path.normpath(os.path.join(REPO, "..", "shared", "data", "bank", "bank.csv"))


@pytest.fixture(scope="module")
def out(tmp_path_factory):
    if not os.path.exists(BANK):
        pytest.skip(f"shared data not available: {BANK} (clone with ../shared beside the repo)")
    from experiments import sinh_ramon_duplicates

    d = str(tmp_path_factory.mktemp("srd"))
    assert sinh_ramon_duplicates.main(["--quick", "--out", d]) == 0
    return d


def _rows(out):
    with open(os.path.join(out, "sinh_ramon_duplicates.csv"), newline="") as fh:
        return list(csv.DictReader(fh))


def test_outputs_exist(out):
    for suffix in (".csv", ".png", ".md"):
        path = os.path.join(out, "sinh_ramon_duplicates" + suffix)
        assert os.path.getsize(path) > 500, path
    with open(os.path.join(out, "sinh_ramon_duplicates.md")) as fh:
        md = fh.read()
    assert "| sampler |" in md and "2.20e-06" in md


def test_rows_and_errors(out):
    rows = _rows(out)
    assert {r["sampler"] for r in rows} == {"balanced", "uniform", "bernoulli"}
    assert len({(r["sampler"], r["edges"]) for r in rows}) == 9
    for r in rows:
        est, inc = float(r["estimate"]), float(r["incomplete"])
        assert math.isfinite(est) and -1 <= inc <= 1
        assert float(r["dp_error"]) == pytest.approx(est - inc, abs=1e-12)


def test_balanced_has_smallest_degree(out):
    rows = _rows(out)
    n = 600
    for r in rows:
        if r["sampler"] == "balanced":
            assert int(r["max_degree"]) == math.ceil(2 * int(r["edges"]) / n)
    for m in {r["edges"] for r in rows}:
        deg = {r["sampler"]: int(r["max_degree"]) for r in rows if r["edges"] == m}
        assert deg["balanced"] <= min(deg["uniform"], deg["bernoulli"])
