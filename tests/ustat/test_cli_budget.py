"""--budget-file charges every private release of every command, epsilon and delta, to a data
set recognised by its content; a run that fails or is interrupted before computing gives its
reservation back, one that stops after computing started stays charged (issue 37)."""

import json
import signal
import subprocess
import sys

import numpy as np
import pytest

from tests.conftest import shared_data
from ustat.cli import main


def _run(capsys, argv):
    code = main(argv + ["--json", "--no-progress"])
    out, err = capsys.readouterr()
    assert code == 0, err
    return json.loads(out)


def _err(capsys, argv):
    code = main(argv + ["--no-progress"])
    return code, capsys.readouterr().err


def _spends(path):
    (entry,) = json.loads(path.read_text())["datasets"].values()
    return entry["spends"]


@pytest.fixture
def data(tmp_path):
    # 2000 records: enough that roc and quantile are not refused for noise at these epsilons
    rows = [f"{(i * 37) % 101 / 101:.3f},{(i * 53) % 97 / 97:.3f},{i % 2}" for i in range(2000)]
    path = tmp_path / "d.csv"
    path.write_text("p,q,y\n" + "\n".join(rows) + "\n")
    return path


def test_every_command_is_charged_to_one_budget(capsys, data, tmp_path):
    b = tmp_path / "b.json"
    common = ["--csv", str(data), "--budget-file", str(b), "--seed", "1"]
    runs = [(["estimate", "gini", "--columns", "p", "--bounds", "0:1", "--budget-total", "10"],
             1.0),
            (["ecdf", "--column", "p", "--bounds", "0:1", "--thresholds", "16"], 1.0),
            (["quantile", "--column", "q", "--bounds", "0:1", "--thresholds", "16"], 0.5),
            (["roc", "--score", "p", "--label", "y", "--bounds", "0:1", "--thresholds", "16",
              "--backend", "central"], 2.0),
            (["hl", "--prob", "p", "--label", "y", "--groups", "4", "--thresholds", "64",
              "--backend", "central"], 2.0),
            (["estimate", "kendall", "--columns", "p,q", "--bounds", "0:1,0:1",
              "--protocol", "bell-ldp", "--bins", "4"], 0.5)]
    spent = 0.0
    for argv, eps in runs:
        res = _run(capsys, argv[:1] + common + argv[1:] + ["--epsilon", str(eps)])
        spent += eps
        assert res["budget"]["spent"] == pytest.approx(spent) and res["budget"]["this_run"] == eps
    assert [s["label"] for s in _spends(b)] == ["gini", "ecdf", "quantile", "roc", "hl", "kendall"]
    assert all(s["status"] == "spent" for s in _spends(b))
    code, err = _err(capsys, ["ecdf"] + common + ["--column", "p", "--bounds", "0:1",
                                                  "--epsilon", "4"])
    assert code == 2 and "epsilon: spent 7 of 10, asked 4" in err


def test_shuffled_crlf_copy_shares_the_budget(capsys, data, tmp_path):
    b = tmp_path / "b.json"
    lines = data.read_text().splitlines()
    order = np.random.default_rng(3).permutation(len(lines) - 1) + 1
    copy = tmp_path / "copy.csv"
    copy.write_bytes(("\r\n".join([lines[0]] + [lines[i] for i in order]) + "\r\n").encode())
    assert copy.read_bytes() != data.read_bytes()
    _run(capsys, ["ecdf", "--csv", str(data), "--column", "p", "--bounds", "0:1", "--epsilon",
                  "0.75", "--budget-file", str(b), "--budget-total", "1"])
    code, err = _err(capsys, ["ecdf", "--csv", str(copy), "--column", "p", "--bounds", "0:1",
                              "--epsilon", "0.5", "--budget-file", str(b)])
    assert code == 2 and "spent 0.75 of 1, asked 0.5" in err
    # another column of the same people (and a renamed header) is the same data set too
    renamed = tmp_path / "renamed.csv"
    renamed.write_text(data.read_text().replace("p,q,y", "score,other,label", 1))
    res = _run(capsys, ["estimate", "auc", "--csv", str(renamed), "--columns", "other,label",
                        "--bounds", "0:1", "--epsilon", "0.25", "--budget-file", str(b)])
    assert res["budget"]["spent"] == 1.0 and res["budget"]["remaining"] == 0.0


def test_failed_and_interrupted_runs_give_their_reservation_back(capsys, data, tmp_path,
                                                                 monkeypatch):
    b = tmp_path / "b.json"
    base = ["--csv", str(data), "--budget-file", str(b), "--budget-total", "1"]
    _run(capsys, ["ecdf"] + base + ["--column", "p", "--bounds", "0:1", "--epsilon", "0.5"])
    import importlib

    release = importlib.import_module("ustat.ecdf.release")   # the package's name is a function
    roc = importlib.import_module("ustat.ecdf.roc")

    def interrupted(*a, **k):
        raise KeyboardInterrupt

    monkeypatch.setattr(release, "release", interrupted)
    assert main(["ecdf"] + base + ["--column", "p", "--bounds", "0:1", "--epsilon", "0.25",
                                   "--no-progress"]) == 130
    monkeypatch.setattr(roc, "roc_program", interrupted)      # before computing
    assert main(["roc"] + base + ["--score", "p", "--label", "y", "--bounds", "0:1",
                                  "--epsilon", "0.5", "--backend", "central", "--thresholds",
                                  "16", "--no-progress"]) == 130
    capsys.readouterr()
    code, err = _err(capsys, ["estimate", "gini"] + base + ["--columns", "p", "--bounds", "0:1",
                                                             "--epsilon", "0.25", "--edges",
                                                             "10000000"])
    assert code == 2 and "exceeds" in err                    # failed after reserving
    assert [s["status"] for s in _spends(b)] == ["spent"]    # only the completed release


def test_sigterm_gives_the_reservation_back(tmp_path, data):
    """``kill`` (SIGTERM) of the ustat command stops it like Ctrl-C, status 143."""
    b = tmp_path / "b.json"
    script = ("import sys, time\n"
              "import importlib\n"
              "r = importlib.import_module('ustat.ecdf.release')\n"
              "def slow(*a, **k):\n"
              "    print('computing', flush=True); time.sleep(60)\n"
              "r.release = slow\n"
              "from ustat.cli import entry\n"
              "sys.argv = ['ustat'] + sys.argv[1:]\n"
              "sys.exit(entry())\n")
    proc = subprocess.Popen([sys.executable, "-c", script, "ecdf", "--csv", str(data), "--column",
                             "p", "--bounds", "0:1", "--budget-file", str(b), "--budget-total",
                             "1", "--no-progress"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    try:
        assert proc.stdout.readline().strip() == "computing"
        assert [s["status"] for s in _spends(b)] == ["reserved"]
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 143 and "ustat: terminated" in err and "Traceback" not in err
    assert _spends(b) == []


def test_delta_is_charged_for_committee_and_composition(capsys, tmp_path):
    path = shared_data("bank", "bank.csv")
    b = tmp_path / "b.json"
    res = _run(capsys, ["estimate", "auc", "--csv", path, "--columns", "duration,y", "--bounds",
                        "0:5000", "--threat-model", "hf", "--seed", "2", "--budget-file", str(b),
                        "--budget-total", "3", "--noise-method", "polya"])
    # Polya noise: two committees (the AUC's sum and the positive count), each failing w.p. the
    # exact tail (the in-MPC noise's delta: tests/ustat/test_umpc_noise_method.py)
    assert 0 < res["delta"] < 2 * 2.0 ** -40 and res["budget"]["this_run_delta"] == res["delta"]
    assert res["budget"]["total_delta"] == 1e-6 and _spends(b)[0]["delta"] == res["delta"]
    res = _run(capsys, ["estimate", "kendall", "--csv", path, "--columns", "age,balance",
                        "--bounds", "18:95,-8019:102127", "--protocol", "ghazi-sm", "--bins", "8",
                        "--seed", "2", "--budget-file", str(b), "--epsilon", "0.5"])
    assert 0 < res["delta"] < 1e-9 and _spends(b)[1]["delta"] == res["delta"]
    code, err = _err(capsys, ["estimate", "kendall", "--csv", path, "--columns", "age,balance",
                              "--bounds", "18:95,-8019:102127", "--protocol", "bell-2pc",
                              "--pairs", "all", "--delta", "1e-6", "--engine", "plain",
                              "--budget-file", str(b), "--epsilon", "0.5"])
    assert code == 2 and "delta: spent" in err and "of 1e-06, asked" in err
    assert "--budget-delta" in err
    remaining = 1e-6 - sum(s["delta"] for s in _spends(b))
    assert f"lower --delta ({remaining:.3g} left" in err             # the flag that fits
    assert len(_spends(b)) == 2                                   # refused before running


def _refused(capsys, argv, *needles):
    """argv ends in one line ``ustat: error: ...`` (exit 2, no traceback) with every needle."""
    code, err = _err(capsys, argv)
    line = err.strip().splitlines()[-1]
    assert code == 2 and line.startswith("ustat: error: ") and "Traceback" not in err, err
    for needle in needles:
        assert needle in line, (needle, line)
    return line


@pytest.mark.parametrize("argv", [
    ["estimate", "gini", "--columns", "p", "--bounds", "0:1"],
    ["estimate", "kendall", "--columns", "p,q", "--bounds", "0:1,0:1", "--protocol", "bell-ldp",
     "--bins", "4"],
    ["ecdf", "--column", "p", "--bounds", "0:1"],
])
def test_evaluate_is_refused_with_a_budget_file(capsys, data, tmp_path, argv):
    """--evaluate prints the exact statistic: nothing a budget can charge (like --epsilon inf)."""
    b = tmp_path / "b.json"
    _refused(capsys, argv[:1] + ["--csv", str(data), "--budget-file", str(b), "--budget-total",
                                 "1"] + argv[1:] + ["--evaluate"],
             "--evaluate", "--budget-file")
    assert not b.exists()


@pytest.mark.parametrize("protocol, needles", [
    ("fedauc-rr", ("label-DP", "scores reach the server in the clear")),
    ("fedauc-lap", ("label-DP", "scores reach the server in the clear")),
    ("bell-auc", ("treats column y as public",)),
])
def test_releases_that_are_not_record_level_dp_are_refused(capsys, data, tmp_path, protocol,
                                                          needles):
    b = tmp_path / "b.json"
    _refused(capsys, ["estimate", "auc", "--csv", str(data), "--columns", "p,y", "--bounds",
                      "0:1", "--protocol", protocol, "--budget-file", str(b), "--budget-total",
                      "1"], f"--protocol {protocol}", "record-level", "--budget-file", *needles)
    assert not b.exists()


def test_a_malformed_budget_file_is_one_line(capsys, data, tmp_path):
    b = tmp_path / "b.json"
    b.write_text(json.dumps({"format": "ustat-privacy-budget", "version": 2,
                             "datasets": {"k": {"keys": ["k"], "total_epsilon": 1.0}}}))
    _refused(capsys, ["ecdf", "--csv", str(data), "--column", "p", "--bounds", "0:1",
                      "--budget-file", str(b)], f"budget file {b}", "has no 'spends'")


def test_stored_keys_are_not_the_plain_row_digests(capsys, data, tmp_path):
    from ustat.data import dataset_identity

    b = tmp_path / "b.json"
    _run(capsys, ["ecdf", "--csv", str(data), "--column", "p", "--bounds", "0:1", "--epsilon",
                  "0.5", "--budget-file", str(b), "--budget-total", "1"])
    text = b.read_text()
    for key in dataset_identity(data, ["p"]).keys:
        assert key.split(":", 1)[1] not in text
    code, err = _err(capsys, ["ecdf", "--csv", str(data), "--column", "q", "--bounds", "0:1",
                              "--epsilon", "0.75", "--budget-file", str(b)])
    assert code == 2 and "spent 0.5 of 1, asked 0.75" in err


def _no_positives(tmp_path, n=3000):
    rows = [f"{(i * 37) % 101 / 101:.3f},0" for i in range(n)]
    path = tmp_path / "neg.csv"
    path.write_text("s,y\n" + "\n".join(rows) + "\n")
    return path


def test_roc_failing_after_its_noise_is_drawn_stays_charged(capsys, tmp_path):
    """No positives: the noisy positive count comes out <= 0 about half the time (seed 3 here),
    after both class ECDFs were released. That failure is charged (issue 37, item 1)."""
    b = tmp_path / "b.json"
    code, err = _err(capsys, ["roc", "--csv", str(_no_positives(tmp_path)), "--score", "s",
                              "--label", "y", "--bounds", "0:1", "--thresholds", "16",
                              "--backend", "central", "--seed", "3", "--epsilon", "1",
                              "--budget-file", str(b), "--budget-total", "3"])
    assert code == 2 and "noisy class size <= 0" in err and "Traceback" not in err
    assert "stays charged" in err
    (spend,) = _spends(b)
    assert spend["status"] == "spent" and spend["epsilon"] == 1.0 and spend["label"] == "roc"


def test_refusals_from_public_parameters_are_refunded(capsys, tmp_path):
    """quantile and roc refuse when the noise dominates (n, epsilon, the grid: public), before
    computing: nothing is charged."""
    data = tmp_path / "small.csv"
    data.write_text("s,y\n" + "\n".join(f"{i / 60:.3f},{i % 2}" for i in range(60)) + "\n")
    b = tmp_path / "b.json"
    base = ["--csv", str(data), "--bounds", "0:1", "--epsilon", "0.1", "--budget-file", str(b),
            "--budget-total", "3"]
    code, err = _err(capsys, ["quantile", *base, "--column", "s", "--thresholds", "64"])
    assert code == 2 and "noise" in err and "stays charged" not in err
    code, err = _err(capsys, ["roc", *base, "--score", "s", "--label", "y", "--thresholds", "64",
                              "--backend", "central"])
    assert code == 2 and "noise dominates" in err and "stays charged" not in err
    assert not b.exists() or _spends(b) == []


def test_interrupted_after_computing_started_stays_charged(capsys, data, tmp_path, monkeypatch):
    """Ctrl-C once the class ECDFs are being computed (roc's deploy): charged; a U-MPC refusal
    of its parameters raised inside the program before any noise (--edges too many) is not."""
    import importlib

    roc = importlib.import_module("ustat.ecdf.roc")
    b = tmp_path / "b.json"
    base = ["--csv", str(data), "--budget-file", str(b), "--budget-total", "3", "--no-progress"]

    def interrupted(*a, **k):
        raise KeyboardInterrupt

    monkeypatch.setattr(roc, "deploy", interrupted)
    assert main(["roc"] + base + ["--score", "p", "--label", "y", "--bounds", "0:1",
                                  "--epsilon", "0.5", "--backend", "central", "--thresholds",
                                  "16"]) == 130
    assert "stays charged" in capsys.readouterr().err
    assert [(s["label"], s["status"], s["epsilon"]) for s in _spends(b)] == [("roc", "spent", 0.5)]
    code, err = _err(capsys, ["estimate", "gini"] + base + ["--columns", "p", "--bounds", "0:1",
                                                             "--epsilon", "0.25", "--edges",
                                                             "10000000"])
    assert code == 2 and "exceeds" in err and "stays charged" not in err
    assert len(_spends(b)) == 1


def test_roc_with_one_threshold_is_refused_and_refunded(capsys, data, tmp_path):
    """One threshold: the curve is (1, 1) -> (0, 0), AUC 0.5 whatever the data (issue 37,
    item 12): refused before computing, nothing charged."""
    b = tmp_path / "b.json"
    code, err = _err(capsys, ["roc", "--csv", str(data), "--score", "p", "--label", "y",
                              "--bounds", "0:1", "--thresholds", "1", "--backend", "central",
                              "--budget-file", str(b), "--budget-total", "3"])
    assert code == 2 and "--thresholds" in err and "at least 2" in err
    assert len(err.strip().splitlines()) == 1
    assert not b.exists() or _spends(b) == []


_DEPLOYED = [
    ["estimate", "kendall", "--columns", "p,q", "--bounds", "0:1,0:1"],
    ["ecdf", "--column", "p", "--bounds", "0:1"],
    ["quantile", "--column", "p", "--bounds", "0:1"],
    ["roc", "--score", "p", "--label", "y", "--bounds", "0:1"],
    ["hl", "--prob", "p", "--label", "y"],
]


@pytest.mark.parametrize("protocol", _DEPLOYED)
@pytest.mark.parametrize("budget", [["--budget-total", "3"], ["--budget-delta", "1e-6"]])
def test_deploy_init_refuses_a_budget_total_without_its_file(capsys, tmp_path, protocol,
                                                             budget):
    out = tmp_path / "dep"
    code = main(["deploy", "init", "--parties", "50", "--hosts", "1", "--out", str(out), "--",
                 *protocol, *budget])
    err = capsys.readouterr().err
    assert code == 2 and f"{budget[0]} needs --budget-file" in err
    assert len(err.strip().splitlines()) == 1
    assert not (out / "deploy.toml").exists()


@pytest.mark.parametrize("protocol", _DEPLOYED)
def test_deploy_init_writes_the_budget_the_releasing_role_keeps(capsys, tmp_path, protocol):
    """A deployment's budget (issue 36, item 6): [run.budget] names the ledger (beside
    deploy.toml), its totals and what each run charges (ustat.deploy.budget)."""
    from ustat.deploy import load

    out = tmp_path / "dep"
    assert main(["deploy", "init", "--parties", "50", "--hosts", "1", "--out", str(out), "--",
                 *protocol, "--budget-file", "b.json", "--budget-total", "3"]) == 0
    capsys.readouterr()
    b = load(str(out)).budget
    assert b["file"] == str(out / "b.json") and b["total"] == 3.0 and b["epsilon"] == 1.0
    assert b["delta"] >= 0 and "total_delta" not in b
