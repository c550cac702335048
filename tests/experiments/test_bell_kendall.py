"""experiments.bell_kendall --quick: the three protocols of Bell et al.'s Fig. 4, measured.

Runs the script once (module fixture, a few seconds) in a temporary directory
and checks its outputs for real: every variant (randomized response, 2PC
subsampling, 2PC all pairs) has finite positive errors, bell-ldp's measured
bits per party equal ceil(log2 36), the garbled-circuit runs give exactly the
plain engine's estimate on the same seed (bell_2pc documents the same
circuit on the same coins) with measured bits and rounds, the PNG is a
readable image, the Markdown has its tables. Skips when ../shared/data is absent
(the run is the one of test_scripts.py: the ``quick`` fixture).
"""

import math
import os

import pytest

from experiments import _common as C

pytest.importorskip("matplotlib")
pytest.importorskip("sklearn")


@pytest.fixture(scope="module")
def out(quick):
    return quick("bell_kendall")


def _rows(out):
    return C.read_csv(os.path.join(out, "bell_kendall.csv"))


def test_three_protocol_variants_with_finite_positive_errors(out):
    rows = [r for r in _rows(out) if r["panel"] in ("A", "B")]
    variants = {r["variant"] for r in rows}
    assert "rr" in variants and "2pc-all" in variants
    assert {v for v in variants if v.startswith("2pc-P")} == {"2pc-P1", "2pc-P2", "2pc-P5"}
    assert {r["protocol"] for r in rows} == {"bell-ldp", "bell-2pc"}
    # all pairs runs on the small panel only (quadratic); the rest on both panels
    assert {r["panel"] for r in rows if r["variant"] == "2pc-all"} == {"A"}
    assert {r["panel"] for r in rows if r["variant"] == "rr"} == {"A", "B"}
    by_setting = {}
    for r in rows:
        err = float(r["abs_error"])
        assert math.isfinite(err) and err >= 0
        assert float(r["abs_error"]) == pytest.approx(abs(float(r["estimate"]) - float(r["truth"])))
        by_setting.setdefault((r["panel"], r["variant"], r["epsilon"]), []).append(err)
    assert len(by_setting) == 4 * 2 + 3 * 2 + 1           # A: 4 variants, B: 3; 2 epsilons; P=5
    assert all(len(v) == 3 and sum(v) > 0 for v in by_setting.values())
    # the truth is the exact tau-a of the discretized records: one value per panel, in [-1, 1]
    for panel in ("A", "B"):
        truths = {r["truth"] for r in rows if r["panel"] == panel}
        assert len(truths) == 1 and -1 <= float(truths.pop()) <= 1


def test_bell_ldp_bits_per_party_equal_ceil_log2_of_the_domain(out):
    rr = [r for r in _rows(out) if r["variant"] == "rr"]
    assert rr
    for r in rr:
        assert int(r["online_bits"]) == int(r["n"]) * math.ceil(math.log2(36))
        assert int(r["max_party_bits"]) == 6 and int(r["rounds"]) == 1


def test_garbled_circuit_runs_equal_the_plain_engine_and_are_measured(out):
    gc = [r for r in _rows(out) if r["panel"] == "gc"]
    assert {r["pairs"] for r in gc} == {"1", "2", "all"}
    for r in gc:
        assert r["engine"] == "gc"
        assert float(r["estimate"]) == float(r["plain_estimate"]) and r["same_as_plain"] == "True"
        assert int(r["online_bits"]) > 0 and int(r["offline_bits"]) > int(r["online_bits"])
        assert int(r["rounds"]) == 3 and int(r["offline_rounds"]) >= 1
        assert float(r["seconds"]) > 0
        # per pair circuit: at least 128 bits per garbler label of the packed inputs
        assert int(r["online_bits"]) / int(r["n_pairs"]) > 128 * 6
    n_all = int(next(r["n"] for r in gc if r["pairs"] == "all"))
    assert int(next(r["n_pairs"] for r in gc if r["pairs"] == "all")) == n_all * (n_all - 1) // 2
    # all pairs: (n - 1) delta_pair of the bounded noise (+ 1e-8 when advanced composition wins)
    d = float(next(r["delta"] for r in gc if r["pairs"] == "all"))
    assert 0 < d < 1e-6


def test_png_and_markdown(out):
    import matplotlib.image as mpimg

    png = os.path.join(out, "bell_kendall.png")
    assert os.path.getsize(png) > 20_000
    img = mpimg.imread(png)
    assert img.ndim == 3 and img.shape[0] >= 300 and img.shape[1] >= 500
    with open(os.path.join(out, "bell_kendall.md")) as fh:
        md = fh.read()
    assert md.startswith("# ") and "--quick" in md and "|---|" in md
    assert ("| garbled-circuit engine == plain engine on the same seed (documented: same "
            "circuit, same coins) | yes |") in md
    assert "| bell-ldp measured bits per party == ceil(log2 36) = 6 | 6 (yes) |" in md
    assert "## Claims" in md and "randomized response performs slightly better" in md
    from tests.experiments.test_scripts import check_table_widths

    check_table_widths(md)
