import json
import subprocess
import sys

import pytest

from tests.conftest import shared_data
from ustat.cli import main

REQUIRED = ("kernel", "estimate", "epsilon", "n", "edges", "max_degree", "online_bits",
            "offline_bits", "rounds", "seconds")


def _run_json(capsys, argv):
    code = main(argv + ["--json", "--no-progress"])
    out, err = capsys.readouterr()
    assert code == 0, err
    return json.loads(out), err


def test_estimate_default_synthetic(capsys):
    res, err = _run_json(capsys, ["estimate", "gini", "--n", "200", "--seed", "1"])
    for key in REQUIRED:
        assert key in res
    assert res["n"] == 200 and res["edges"] == 400 and res["threat_model"] == "dis"
    assert 0.2 < res["estimate"] < 0.5          # GMD of U(0,1) is 1/3
    assert "NOT secure" in err


def test_estimate_human_output(capsys):
    assert main(["estimate", "kendall", "--n", "60", "--no-progress"]) == 0
    out = capsys.readouterr().out
    assert "U-statistic (kendall)" in out and "threat model M_Dis" in out and "rounds" in out


def test_epsilon_inf_warns(capsys):
    res, err = _run_json(capsys, ["estimate", "duplicate", "--n", "50", "--epsilon", "inf",
                                  "--edges", "all", "--evaluate"])
    assert "NOT differentially private" in err
    assert res["epsilon"] == "inf"
    assert res["estimate"] == pytest.approx(res["evaluation"]["u_complete"], abs=1e-12)


def test_csv_with_bounds_and_data_units(tmp_path, capsys):
    f = tmp_path / "d.csv"
    f.write_text("a;b\n" + "".join(f"{i};{i % 7}\n" for i in range(30)))
    res, err = _run_json(capsys, ["estimate", "gini", "--csv", str(f), "--columns", "a",
                                  "--bounds", "0:29", "--epsilon", "inf", "--edges", "all"])
    gmd = sum(abs(i - j) for i in range(30) for j in range(i + 1, 30)) / (30 * 29 / 2)
    assert res["estimate_data_units"] == pytest.approx(gmd, abs=1e-2)
    res, err = _run_json(capsys, ["estimate", "gini", "--csv", str(f), "--columns", "a"])
    assert "leak" in err


def test_bank_csv_auc(capsys):
    path = shared_data("bank", "bank.csv")
    res, _ = _run_json(capsys, ["estimate", "auc", "--csv", path, "--columns", "duration,y",
                                "--bounds", "0:5000", "--threat-model", "hf", "--seed", "2"])
    assert res["n"] == 4521 and 0.7 < res["estimate"] < 0.95


@pytest.mark.parametrize("argv,msg", [
    (["estimate", "nope"], "unknown kernel"),
    (["estimate", "gini", "--epsilon", "0"], "--epsilon must be > 0"),
    (["estimate", "gini", "--epsilon", "-1"], "--epsilon must be > 0"),
    (["estimate", "gini", "--n", "30", "--edges", "1000"], "exceeds the number of 2-subsets"),
    (["estimate", "triples", "--n", "2"], "--n must be >= 3"),
    (["estimate", "gini", "--csv", "/nonexistent.csv"], "No such file"),
])
def test_user_errors_exit_nonzero_without_traceback(capsys, argv, msg):
    code = main(argv + ["--no-progress"])
    err = capsys.readouterr().err
    assert code == 2 and msg in err and "Traceback" not in err


def test_unknown_sampler_is_argparse_error(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["estimate", "gini", "--sampler", "magic"])
    assert exc.value.code == 2
    assert "invalid choice" in capsys.readouterr().err


def test_csv_errors(tmp_path, capsys):
    bad = tmp_path / "bad.csv"
    bad.write_text("x,y\n1,2\n3,\n")
    assert main(["estimate", "kendall", "--csv", str(bad), "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert "line 3" in err and "'y'" in err
    assert main(["estimate", "gini", "--csv", str(bad), "--columns", "zz", "--no-progress"]) == 2
    assert "zz" in capsys.readouterr().err
    nan = tmp_path / "nan.csv"
    nan.write_text("x\n1\nnan\n2\n")
    assert main(["estimate", "gini", "--csv", str(nan), "--no-progress"]) == 2
    assert "line 3" in capsys.readouterr().err
    words = tmp_path / "w.csv"
    words.write_text("x\n1\nhello\n2\n")
    assert main(["estimate", "gini", "--csv", str(words), "--no-progress"]) == 2
    assert "hello" in capsys.readouterr().err or "line 3" in capsys.readouterr().err
    assert main(["estimate", "gini", "--csv", str(nan), "--bounds", "0:1:2", "--no-progress"]) == 2


def test_out_of_bounds_needs_clip(tmp_path, capsys):
    f = tmp_path / "d.csv"
    f.write_text("x\n" + "".join(f"{i}\n" for i in range(20)))
    assert main(["estimate", "gini", "--csv", str(f), "--bounds", "0:10", "--no-progress"]) == 2
    assert "outside the bounds" in capsys.readouterr().err
    res, _ = _run_json(capsys, ["estimate", "gini", "--csv", str(f), "--bounds", "0:10", "--clip"])
    assert res["n"] == 20


def test_python_m_entry_point_and_kernels_list():
    out = subprocess.run([sys.executable, "-m", "ustat", "kernels", "--json"],
                         capture_output=True, text=True, check=True).stdout
    names = [k["name"] for k in json.loads(out)["kernels"]]
    assert "kendall" in names and "vus" in names
    out = subprocess.run([sys.executable, "-m", "ustat", "--version"], capture_output=True,
                         text=True, check=True).stdout
    assert out.startswith("ustat ")


@pytest.mark.parametrize("edges", ["infn", "1e400n", "nann"])
def test_absurd_edges_are_user_errors(capsys, edges):
    code = main(["estimate", "gini", "--n", "20", "--edges", edges, "--no-progress"])
    err = capsys.readouterr().err
    assert code == 2 and "Traceback" not in err
