import json
import os
import subprocess
import sys

import numpy as np
import pytest

from tests.conftest import REPO, shared_data
from ustat.cli import main

from ._data import bank_scores


def _bank():
    return shared_data("bank", "bank.csv")


def _plot(path) -> list:
    """``--plot path`` when matplotlib is installed (extra 'plots'), else nothing."""
    try:
        import matplotlib  # noqa: F401 - whether the optional plots extra is installed
    except ImportError:
        return []
    return ["--plot", str(path)]


def _run(capsys, argv):
    code = main(argv + ["--json", "--no-progress"])
    out, err = capsys.readouterr()
    assert code == 0, err
    return json.loads(out), err


@pytest.fixture(scope="module")
def scores_csv(tmp_path_factory):
    p, y = bank_scores(1200)
    path = tmp_path_factory.mktemp("ecdf") / "scores.csv"
    lines = ["prob;y"] + [f"{float(a)!r};\"{'yes' if b else 'no'}\"" for a, b in zip(p, y)]
    path.write_text("\n".join(lines) + "\n")
    return str(path)


def test_ecdf_on_bank_age_matches_numpy_with_eps_inf(capsys):
    res, err = _run(capsys, ["ecdf", "--csv", _bank(), "--column", "age", "--bounds", "18:95",
                             "--thresholds", "78", "--epsilon", "inf", "--backend", "fss",
                             "--seed", "1"])
    from ustat.data import load_csv
    x = load_csv(_bank(), columns=["age"])[0][:, 0]
    tau = np.asarray(res["thresholds"])
    assert np.array_equal(tau, np.linspace(18, 95, 78))
    assert np.array_equal(res["ecdf"], np.searchsorted(np.sort(x), tau, side="right") / x.size)
    assert "NOT differentially private" in err and res["account"]["epsilon"] == "inf"
    assert res["communication"]["offline_bits"] > 0


def test_ecdf_smoothing_plot_and_text(tmp_path, capsys):
    png = tmp_path / "age.png"
    res, _ = _run(capsys, ["ecdf", "--csv", _bank(), "--column", "age", "--bounds", "18:95",
                           "--thresholds", "64", "--epsilon", "0.5", "--smooth", "l1",
                           "--evaluate", "--backend", "pointwise"] + _plot(png))
    F = np.asarray(res["ecdf_smoothed"])
    assert np.all(np.diff(F) >= 0) and res["evaluation"]["max_abs_error"] < 0.2
    if "plot" in res:
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert main(["ecdf", "--n", "300", "--thresholds", "16", "--no-progress"]) == 0
    out = capsys.readouterr().out
    assert "Private ECDF of x" in out and "epsilon = " in out and "traffic" in out
    res, _ = _run(capsys, ["ecdf", "--n", "300", "--thresholds", "1000", "--branching", "auto",
                           "--backend", "central", "--sensitivity", "paper"])
    assert res["account"]["branching"] == 2 and res["account"]["sensitivity_nodes"] == 11


def test_quantile_command(capsys):
    res, _ = _run(capsys, ["quantile", "--csv", _bank(), "--column", "balance",
                           "--bounds=-10000:110000", "--thresholds", "4096", "--epsilon", "inf",
                           "--q", "0.1,0.5,0.9", "--evaluate", "--backend", "central"])
    assert res["q"] == [0.1, 0.5, 0.9] and len(res["quantiles"]) == 3
    step = 120000 / 4095
    assert np.all(np.abs(np.subtract(res["quantiles"], res["evaluation"]["quantiles"])) <= step)
    res, _ = _run(capsys, ["quantile", "--csv", _bank(), "--column", "age", "--bounds", "18:95",
                           "--thresholds", "78", "--q", "0.5", "--epsilon", "2", "--smooth",
                           "isotonic", "--backend", "central"])
    assert 30 <= res["quantiles"][0] <= 45


def test_roc_and_hl_commands(scores_csv, tmp_path, capsys):
    from sklearn.metrics import roc_auc_score
    p, y = bank_scores(1200)
    res, _ = _run(capsys, ["roc", "--csv", scores_csv, "--score", "prob", "--label", "y",
                           "--bounds", "0:1", "--thresholds", "64", "--epsilon", "inf",
                           "--evaluate", "--backend", "central"] + _plot(tmp_path / "roc.png"))
    assert res["evaluation"]["n_pos"] == y.sum() and res["auc"] == res["evaluation"]["auc"]
    assert abs(res["auc"] - roc_auc_score(y, p)) < 0.02        # 64-threshold grid
    assert res["auc_ci"] == [res["auc"], res["auc"]] and res["auc_noise_std"] == 0.0
    assert (tmp_path / "roc.png").exists() == ("plot" in res)
    res, _ = _run(capsys, ["roc", "--csv", scores_csv, "--score", "prob", "--label", "y",
                           "--bounds", "0:1", "--thresholds", "64", "--epsilon", "4",
                           "--backend", "central", "--seed", "3"])
    lo, hi = res["auc_ci"]
    assert lo < res["auc"] < hi and 0 < res["auc_noise_std"] < hi - lo
    band = res["roc_band"]
    assert len(band["tpr_lo"]) == len(res["tpr"]) and np.all(np.array(band["tpr_lo"])
                                                            <= np.array(band["tpr_hi"]))
    res, _ = _run(capsys, ["hl", "--csv", scores_csv, "--prob", "prob", "--label", "y",
                           "--groups", "10", "--epsilon", "inf", "--evaluate",
                           "--thresholds", "512", "--backend", "central"]
                  + _plot(tmp_path / "hl.png"))
    assert res["df"] == 10 and res["statistic"] == pytest.approx(res["evaluation"]["statistic"])
    assert res["null"] == "calibrated" and "simulated null" not in res["p_value_method"]
    assert 0 <= res["p_value"] <= 1 and (tmp_path / "hl.png").exists() == ("plot" in res)


def test_positive_label_rules(tmp_path, capsys):
    f = tmp_path / "ab.csv"
    f.write_text("s,c\n" + "".join(f"{i / 10},{'ab'[i % 2]}\n" for i in range(10)))
    code = main(["roc", "--csv", str(f), "--score", "s", "--label", "c", "--no-progress"])
    err = capsys.readouterr().err
    assert code == 2 and "--positive is required" in err and "line 2, column 'c'" in err
    assert "'b'" not in err                     # the set of labels is not revealed
    res, _ = _run(capsys, ["roc", "--csv", str(f), "--score", "s", "--label", "c",
                           "--positive", "b", "--bounds", "0:1", "--epsilon", "inf",
                           "--evaluate", "--backend", "central"])
    assert res["evaluation"]["n_pos"] == 5
    assert any("a -> 0" not in n and "'b'" in n for n in res["notes"])
    # the CLI does not check the label set in the clear (ustat.ecdf.roc still refuses one class)
    code = main(["roc", "--csv", str(f), "--score", "s", "--label", "c", "--positive", "z",
                 "--bounds", "0:1", "--epsilon", "inf", "--backend", "central", "--no-progress"])
    err = capsys.readouterr().err
    assert code == 2 and "is not a value of label column" not in err and "values:" not in err


def _errors(tmp_path):
    unsorted = tmp_path / "unsorted.txt"
    unsorted.write_text("0.5\n0.2\n")
    dup = tmp_path / "dup.txt"
    dup.write_text("0.2\n0.2\n")
    outside = tmp_path / "outside.txt"
    outside.write_text("0.2\n7\n")
    one = tmp_path / "one.csv"
    one.write_text("p,y\n0.2,1\n0.3,1\n")
    wide = tmp_path / "wide.csv"
    wide.write_text("p,y\n" + "".join(f"{i / 50},{i % 2}\n" for i in range(60)) + "1.5,0\n")
    few = tmp_path / "few.csv"
    few.write_text("p,y\n" + "".join(f"{i / 50},{i % 2}\n" for i in range(40)))
    return [
        (["ecdf", "--thresholds", str(unsorted)], "sorted increasingly"),
        (["ecdf", "--thresholds", str(dup)], "distinct"),
        (["ecdf", "--thresholds", str(outside)], "outside the public bounds"),
        (["ecdf", "--thresholds", "0"], "N = 0"),
        (["ecdf", "--epsilon", "0"], "--epsilon must be > 0"),
        (["quantile", "--epsilon", "-2"], "--epsilon must be > 0"),
        (["quantile", "--q", "0.5,1.5"], "not in [0, 1]"),
        (["ecdf", "--servers", "3"], "--servers must be 2 for --backend fss"),
        (["ecdf", "--branching", "1"], "--branching must be >= 2"),
        (["roc", "--csv", str(one), "--score", "p", "--label", "y", "--epsilon", "inf"],
         "noisy class size <= 0"),
        (["hl", "--csv", str(wide), "--prob", "p", "--label", "y"], "outside [0, 1]"),
        (["hl", "--csv", str(few), "--prob", "p", "--label", "y", "--groups", "10"],
         "groups must be in 3"),
        (["roc", "--score", "p", "--label", "y"], "roc needs --csv"),
        (["ecdf", "--csv", "/nonexistent.csv"], "No such file"),
    ]


def test_user_errors_exit_2_without_traceback(tmp_path, capsys):
    for argv, msg in _errors(tmp_path):
        code = main(argv + ["--no-progress"])
        err = capsys.readouterr().err
        assert code == 2, argv
        assert msg in err and "Traceback" not in err, (argv, err)


def test_missing_matplotlib_gives_a_hint(monkeypatch, tmp_path, capsys):
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    code = main(["ecdf", "--n", "50", "--thresholds", "8", "--plot", str(tmp_path / "x.png"),
                 "--no-progress", "--backend", "central"])
    err = capsys.readouterr().err
    assert code == 2 and "pip install 'ustat-mpc[plots]'" in err and err.count("\n") == 1


def test_subprocess_entry_point():
    proc = subprocess.run([sys.executable, "-m", "ustat", "ecdf", "--n", "200", "--thresholds",
                           "16", "--epsilon", "1", "--seed", "3", "--json"],
                          cwd=REPO, capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PYTHONPATH": REPO})
    assert proc.returncode == 0, proc.stderr
    res = json.loads(proc.stdout)
    assert res["command"] == "ecdf" and len(res["ecdf"]) == 16 and res["insecure_seed"]
    assert "offline" in proc.stderr and "NOT secure" in proc.stderr
