"""The experiments' shared helpers: data synthesis, writers, progress, arguments, curve helpers."""

import csv
import io
import math
import os
import subprocess
import sys

import numpy as np
import pytest

from experiments import _common as C
from experiments import _data, run_all

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def test_xpois_is_reproducible_and_poisson():
    x = C.xpois(3.0, 4096, "t")
    assert np.array_equal(x, C.xpois(3.0, 4096, "t"))
    assert not np.array_equal(x, C.xpois(3.0, 4096, "u"))
    assert x.min() >= 1 and x.max() <= 4096 and np.all(np.diff(x) >= 0)
    counts = np.bincount(x.astype(int), minlength=4097)[1:]
    # mean and variance of 4096 Pois(3) counts: s.e. of the mean ~ 0.027, of the variance ~ 0.09
    assert abs(counts.mean() - 3.0) < 0.15
    assert abs(counts.var() - 3.0) < 0.5
    zero = np.mean(counts == 0)                         # P(0) = e^-3 = 0.0498, s.e. 0.0034
    assert abs(zero - math.exp(-3)) < 0.015
    with pytest.raises(ValueError, match="lambda"):
        C.xpois(0.0, 10, "t")


def test_fmt_and_markdown_table():
    assert C.fmt(None) == "-" and C.fmt(3) == "3" and C.fmt(float("nan")) == "nan"
    assert C.fmt(0.012345) == "0.0123" and C.fmt(1.5e-7) == "1.50e-07"
    assert C.fmt(True) == "yes" and C.fmt(float("inf")) == "inf"
    t = C.md_table(["a", "b"], [[1, 0.5], ["x", None]])
    assert t.splitlines() == ["| a | b |", "|---|---|", "| 1 | 0.5 |", "| x | - |"]


def test_write_csv_union_of_columns_and_provenance(tmp_path):
    run = C.start("demo", "demo", ["--quick", "--out", str(tmp_path), "--seed", "7"])
    path = C.write_csv(run, [{"a": 1, "b": 0.25}, {"a": 2, "c": None}])
    assert C.read_csv(path) == [{"a": "1", "b": "0.25", "c": ""}, {"a": "2", "b": "", "c": ""}]
    prov = C.read_provenance(path)
    assert prov["seed"] == 7 and prov["mode"] == "quick"
    assert prov["command"] == f"python -m experiments.demo --quick --out {tmp_path} --seed 7"
    assert prov["commit"] == C.code_commit() and prov["commit"]
    with open(path) as fh:                     # pandas-style readers: one '#' comment line
        assert fh.readline().startswith("# provenance: {")
        assert next(csv.reader(fh)) == ["a", "b", "c"]
    C.write_markdown(run.path(".md"), "T", run, ["text"])
    C.write_json(run, [C.item("P", "I", "r", "p", "o", "e", "ev")])
    fig, ax = C.subplots()
    ax.plot([0, 1], [0, 1], label="x")
    C.legend_outside(ax)
    C.save_png(run, fig)
    for suffix in (".md", ".json", ".png"):
        assert C.read_provenance(run.path(suffix)) == prov


def test_progress_prints_deciles_when_not_a_terminal():
    buf = io.StringIO()
    with C.Progress(20, "work", stream=buf) as bar:
        for _ in range(20):
            bar.advance()
    lines = buf.getvalue().splitlines()
    assert 10 <= len(lines) <= 11 and lines[-1].split()[-4] == "20/20"


def test_start_arguments(tmp_path, monkeypatch):
    run = C.start("demo", "demo", ["--quick", "--out", str(tmp_path / "o"), "--runs", "4"])
    assert run.quick and os.path.isdir(run.out) and run.repeats(2, 50) == 4
    # no --out: a scratch directory, never the committed results
    monkeypatch.setenv("USTAT_EXPERIMENTS_OUT", str(tmp_path / "scratch"))
    assert C.start("demo", "demo", ["--quick"]).out == str(tmp_path / "scratch")
    monkeypatch.delenv("USTAT_EXPERIMENTS_OUT")
    assert os.path.abspath(C.scratch_dir()) != os.path.abspath(C.RESULTS)
    # --data DIR: the data directory, checked to exist
    monkeypatch.setattr(_data, "DATA", _data.DATA)
    C.start("demo", "demo", ["--quick", "--out", str(tmp_path), "--data", str(tmp_path)])
    assert str(tmp_path) == _data.DATA
    with pytest.raises(C.MissingData, match="data directory not found"):
        C.start("demo", "demo", ["--out", str(tmp_path), "--data", str(tmp_path / "nope")])
    assert run.seed_for("a", 1) == f"{C.DEFAULT_SEED}:demo:a:1"
    assert run.path(".csv").endswith(os.path.join("o", "demo.csv"))
    with pytest.raises(SystemExit):
        C.start("demo", "demo", ["--runs", "1", "--out", str(tmp_path)])
    with pytest.raises(SystemExit):
        C.start("demo", "demo", ["--quick", "--full", "--out", str(tmp_path)])


def test_split_is_a_partition():
    train, test = C.split(101, "s", 0.3)
    assert test.size == 30 and train.size == 71
    assert np.array_equal(np.sort(np.concatenate([train, test])), np.arange(101))
    _train2, test2 = C.split(101, "s", 30)
    assert np.array_equal(test, test2)


def test_missing_data_names_the_path(monkeypatch, tmp_path):
    monkeypatch.setattr(_data, "DATA", str(tmp_path))
    with pytest.raises(C.MissingData, match=r"bank-full\.csv"):
        C.bank_full()


def test_area_between_roc_curves():
    from experiments.ecdf_roc import area_between

    diag = (np.array([1.0, 0.0]), np.array([1.0, 0.0]))
    perfect = (np.array([1.0, 0.0, 0.0]), np.array([1.0, 1.0, 0.0]))
    assert area_between(*diag, *diag) == 0.0
    assert area_between(*perfect, *diag) == pytest.approx(0.5, abs=1e-3)
    assert area_between(*diag, *perfect) == area_between(*perfect, *diag)


@pytest.mark.parametrize("method", ["isotonic", "l2"])
def test_smoothed_curves_equal_private_roc_smoothing(method):
    """Smoothing read back from the raw release = private_roc with smooth=m, the same noise."""
    pytest.importorskip("clarabel")
    from experiments.ecdf_roc import smoothed_curves
    from mpc.arith.rng import CSPRNG
    from ustat.ecdf import private_roc
    from ustat.specs import ROCSpec

    g = CSPRNG(7)
    s = g.random(400)
    y = (g.random(400) < 0.2 + 0.6 * s).astype(np.int64)
    spec = ROCSpec.of(thresholds=np.linspace(0, 1, 33), epsilon=2.0, bounds=(0, 1),
                      backend="central", seed="same")
    raw = private_roc(s, y, spec)
    ref = private_roc(s, y, spec.replace(smooth=method))
    fpr, tpr = smoothed_curves(raw, (method,))[method]
    np.testing.assert_allclose(fpr, ref.fpr, atol=1e-12)
    np.testing.assert_allclose(tpr, ref.tpr, atol=1e-12)


def test_run_all_lists_and_rejects(capsys):
    assert run_all.main(["--list"]) == 0
    assert capsys.readouterr().out.split() == run_all.SCRIPTS
    with pytest.raises(SystemExit):
        run_all.main(["--only", "no_such_script"])
    for name in run_all.SCRIPTS:
        assert os.path.exists(os.path.join(REPO, "experiments", f"{name}.py"))


def test_script_runs_as_a_file_from_any_directory(tmp_path):
    """``python path/to/experiments/<script>.py --quick`` works outside the repository root."""
    pytest.importorskip("matplotlib")
    pytest.importorskip("clarabel")
    proc = subprocess.run([sys.executable, os.path.join(REPO, "experiments", "ecdf_inverse.py"),
                           "--quick", "--out", str(tmp_path / "o"), "--runs", "2"],
                          cwd=str(tmp_path), capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert "[ecdf_inverse] done" in proc.stderr
    assert sorted(os.listdir(tmp_path / "o")) == ["ecdf_inverse.csv", "ecdf_inverse.json",
                                                  "ecdf_inverse.md", "ecdf_inverse.png"]


def _snapshot(path):
    return {f: (os.path.getsize(os.path.join(path, f)), os.path.getmtime(os.path.join(path, f)))
            for f in sorted(os.listdir(path))} if os.path.isdir(path) else {}


def test_run_all_quick_leaves_the_committed_results_alone(tmp_path, monkeypatch):
    """``run_all --quick`` without --out writes to the scratch directory only."""
    pytest.importorskip("matplotlib")
    before = _snapshot(C.RESULTS)
    monkeypatch.setenv("USTAT_EXPERIMENTS_OUT", str(tmp_path / "scratch"))
    assert run_all.main(["--quick", "--only", "ecdf_inverse,authors_code"]) == 0
    assert _snapshot(C.RESULTS) == before
    got = sorted(os.listdir(tmp_path / "scratch"))
    assert "ecdf_inverse.json" in got and "summary.md" in got
