import json
import subprocess
import sys

import numpy as np
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
    assert list(res["stage_seconds"]) == ["setup", "computing", "aggregation", "report"]
    assert abs(sum(res["stage_seconds"].values()) - res["seconds"]) < 1e-9


def test_estimate_text_shows_where_the_time_went(capsys):
    assert main(["estimate", "gini", "--n", "200", "--seed", "1", "--no-progress"]) == 0
    line = next(l for l in capsys.readouterr().out.splitlines() if l.strip().startswith("time"))
    assert "(setup " in line and ", computing " in line and ", report " in line


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
    code = main(["estimate", "gini", "--csv", str(f), "--columns", "a", "--no-progress"])
    err = capsys.readouterr().err
    assert code == 2 and "--bounds is required" in err and "'a'" in err   # no data-derived bounds
    res, err = _run_json(capsys, ["estimate", "gini", "--csv", str(f), "--columns", "a",
                                  "--epsilon", "inf"])
    assert "leak" in err                # not private anyway: the data's min/max, with a warning


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


def test_unknown_sampler_is_one_line_error(capsys):
    assert main(["estimate", "gini", "--sampler", "magic"]) == 2
    err = capsys.readouterr().err
    assert "invalid choice" in err and err.count("\n") == 1 and "usage:" not in err


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
    err = capsys.readouterr().err
    assert "line 3" in err and "hello" not in err          # the line, not the value
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


# -- issue 8 ----------------------------------------------------------------------------------
def _err(capsys, argv):
    code = main(argv + ["--no-progress"])
    out, err = capsys.readouterr()
    return code, out, err


def _scores_labels(tmp_path, labels, name="s.csv", header="score,status"):
    f = tmp_path / name
    rows = [f"{(i * 37 % 101) / 101:.4f},{lab}" for i, lab in enumerate(labels)]
    f.write_text(header + "\n" + "\n".join(rows) + "\n")
    return f


def test_auc_positive_label_and_mapping(tmp_path, capsys):
    from sklearn.metrics import roc_auc_score

    labels = ["case" if (i * 7) % 5 < 2 else "control" for i in range(40)]
    f = _scores_labels(tmp_path, labels)
    code, _, err = _err(capsys, ["estimate", "auc", "--csv", str(f), "--bounds", "0:1"])
    assert code == 2 and "--positive VALUE" in err and "'case'" not in err and "line 2" in err
    res, _ = _run_json(capsys, ["estimate", "auc", "--csv", str(f), "--bounds", "0:1", "--positive",
                                "case", "--epsilon", "inf", "--edges", "all"])
    scores = [(i * 37 % 101) / 101 for i in range(40)]
    want = roc_auc_score([lab == "case" for lab in labels], scores)
    assert res["estimate"] == pytest.approx(want, abs=1e-3)          # 2^-14 fixed point
    assert res["classes"]["classes"] == ["any label but 'case'", "case"]
    assert main(["estimate", "auc", "--csv", str(f), "--bounds", "0:1", "--positive", "case",
                 "--no-progress"]) == 0
    assert "classes   : status: any label but 'case' -> 0, case -> 1" in capsys.readouterr().out


def test_vus_class_order(tmp_path, capsys):
    import itertools

    order = ["low", "medium", "high"]
    labels = [order[(i * 5) % 3] for i in range(24)]
    f = _scores_labels(tmp_path, labels, header="score,grade")
    code, _, err = _err(capsys, ["estimate", "vus", "--csv", str(f), "--bounds", "0:1"])
    assert code == 2 and "--classes a,b,c" in err
    res, _ = _run_json(capsys, ["estimate", "vus", "--csv", str(f), "--bounds", "0:1", "--classes",
                                "low,medium,high", "--epsilon", "inf", "--edges", "all"])
    s = [(i * 37 % 101) / 101 for i in range(24)]
    c = [order.index(lab) for lab in labels]
    by = [[s[i] for i in range(24) if c[i] == k] for k in range(3)]
    vus = sum(a < b < d for a, b, d in itertools.product(*by)) / np.prod([len(b) for b in by])
    assert res["estimate"] == pytest.approx(vus, abs=1e-9)
    assert res["classes"]["rule"] == "given order"


def test_default_columns_read_score_as_number(tmp_path, capsys):
    """A two-column score,label file without --columns: the score is numeric, the label a class."""
    f = _scores_labels(tmp_path, [i % 2 for i in range(30)], header="score,label")
    from sklearn.metrics import roc_auc_score

    res, _ = _run_json(capsys, ["estimate", "auc", "--csv", str(f), "--bounds", "0:1",
                                "--epsilon", "inf", "--edges", "all"])
    want = roc_auc_score([i % 2 for i in range(30)], [(i * 37 % 101) / 101 for i in range(30)])
    assert res["data"]["columns"] == ["score", "label"]
    assert res["estimate"] == pytest.approx(want, abs=1e-3)
    g = tmp_path / "wide.csv"
    g.write_text("id,label,score,other\n" + "".join(f"{i},{i % 2},{i / 40},x\n" for i in range(30)))
    res, err = _run_json(capsys, ["estimate", "auc", "--csv", str(g), "--bounds", "0:1",
                                  "--seed", "1"])
    assert res["data"]["columns"] == ["score", "label"] and "chosen by name" in err


def test_no_clear_text_abort_on_class_counts(tmp_path, capsys):
    """All labels positive: no 'found 1' abort computed in the clear; the noisy count says it."""
    f = _scores_labels(tmp_path, ["yes"] * 30)
    res, _ = _run_json(capsys, ["estimate", "auc", "--csv", str(f), "--bounds", "0:1",
                                "--seed", "3"])
    assert (any("noisy positive count" in n for n in res["notes"])
            or 1 <= res["aux_noisy_sums"]["n_pos"] <= 29)
    helptext = build_parser_help()
    assert "What is checked in the clear" in helptext and "class counts" in helptext


def build_parser_help():
    from ustat.cli import build_parser

    sub = build_parser()._subparsers._group_actions[0].choices["estimate"]
    return sub.format_help()


def test_help_documents_threat_and_collusion_flags():
    text = build_parser_help()
    for flag in ("--max-colluders", "--committee-size", "--honest-fraction", "--budget-file",
                 "--positive", "--classes", "--no-header", "--encoding"):
        assert flag in text
    assert "n - 1 parties" in text and "Who must collude" in text


def test_budget_file(tmp_path, capsys):
    import json as _json

    f = tmp_path / "d.csv"
    f.write_text("x\n" + "".join(f"{i}\n" for i in range(20)))
    budget = tmp_path / "budget.json"
    base = ["estimate", "gini", "--csv", str(f), "--bounds", "0:20", "--budget-file", str(budget),
            "--noise-method", "polya"]
    code, _, err = _err(capsys, base)
    assert code == 2 and "--budget-total" in err and not budget.exists()
    res, _ = _run_json(capsys, base + ["--budget-total", "2", "--epsilon", "1.5"])
    assert res["budget"] == {"file": str(budget), "total": 2.0, "spent": 1.5, "this_run": 1.5,
                             "remaining": 0.5, "total_delta": 1e-6, "spent_delta": 0.0,
                             "this_run_delta": 0.0, "remaining_delta": 1e-6,
                             "composition": "basic (epsilons add up, deltas add up)"}
    code, _, err = _err(capsys, base + ["--epsilon", "1"])
    assert code == 2 and "spent 1.5 of 2, asked 1" in err
    # a copy of the same content shares the budget; a failing run spends nothing
    g = tmp_path / "copy.csv"
    g.write_bytes(f.read_bytes())
    code, _, err = _err(capsys, ["estimate", "gini", "--csv", str(g), "--bounds", "0:20",
                                 "--budget-file", str(budget), "--epsilon", "0.5",
                                 "--edges", "1000"])
    assert code == 2 and "exceeds" in err
    doc = _json.loads(budget.read_text())
    (entry,) = doc["datasets"].values()
    assert [sp["status"] for sp in entry["spends"]] == ["spent"] and entry["total_epsilon"] == 2
    assert main(base + ["--epsilon", "0.5", "--no-progress"]) == 0
    assert "budget    : spent 2 of 2 on this data set" in capsys.readouterr().out
    code, _, err = _err(capsys, base + ["--epsilon", "inf"])
    assert code == 2 and "cannot be charged" in err


def test_epsilon_split_and_collusion_in_output(capsys):
    polya = ["--noise-method", "polya"]
    assert main(["estimate", "auc", "--n", "60", "--no-progress", "--seed", "1"] + polya) == 0
    out = capsys.readouterr().out
    assert "epsilon 1 = 0.73 statistic + 0.27 class counts" in out      # the chosen share
    assert "up to 30 of the 60 parties" in out and "all but one contributor" in out
    res, _ = _run_json(capsys, ["estimate", "auc", "--n", "60", "--seed", "1"] + polya)
    split = res["epsilon_split"]
    assert split.pop("statistic") == pytest.approx(0.73)
    assert sum(split.values()) == pytest.approx(0.27)
    assert res["params"]["aux_epsilon_fraction"] == 0.27
    res, _ = _run_json(capsys, ["estimate", "auc", "--n", "60", "--seed", "1",
                                "--aux-epsilon-fraction", "0.1"] + polya)
    assert res["epsilon_split"]["statistic"] == pytest.approx(0.9)
    c = res["collusion"]
    assert c["max_colluders"] == 30 and c["variance_factor"] == 2.0
    assert c["epsilon_aggregator"] == pytest.approx(1.0) and c["epsilon_all_but_one"] > 3


def test_collusion_flags_reach_run_umpc(capsys, monkeypatch):
    res, _ = _run_json(capsys, ["estimate", "gini", "--n", "30", "--max-colluders", "all",
                                "--seed", "1"])
    assert res["collusion"]["max_colluders"] == 29 and res["collusion"]["variance_factor"] == 30
    res, _ = _run_json(capsys, ["estimate", "gini", "--n", "300", "--threat-model", "hf",
                                "--committee-size", "60", "--seed", "1", "--noise-method", "polya"])
    assert res["collusion"]["contributors"] == 60 and res["collusion"]["variance_factor"] > 4
    res, _ = _run_json(capsys, ["estimate", "gini", "--n", "300", "--threat-model", "hf",
                                "--committee-size", "60", "--seed", "1"])        # sampled in MPC
    assert res["collusion"]["contributors"] == 60 and res["collusion"]["variance_factor"] == 1
    assert main(["estimate", "gini", "--n", "30", "--max-colluders", "half", "--no-progress"]) == 0


@pytest.mark.parametrize("argv,msg", [
    (["estimate", "gini", "--n", "30", "--max-colluders", "most"], "'half' or 'all'"),
    (["estimate", "gini", "--n", "30", "--positive", "1"], "need --csv"),
])
def test_argument_errors(capsys, argv, msg):
    try:
        code = main(argv + ["--no-progress"])
    except SystemExit as exc:
        code = exc.code
    assert code == 2 and msg in capsys.readouterr().err


def test_huge_epsilon(capsys):
    """--epsilon 1e8 failed with 'math domain error' (the wrap probability of a tiny scale)."""
    res, _ = _run_json(capsys, ["estimate", "gini", "--n", "50", "--epsilon", "1e8", "--seed", "1"])
    assert 0.2 < res["estimate"] < 0.5


def test_negative_bounds_and_cli_advice(tmp_path, capsys):
    f = tmp_path / "d.csv"
    f.write_text("x\n" + "".join(f"{i - 15}\n" for i in range(30)))
    res, err = _run_json(capsys, ["estimate", "gini", "--csv", str(f), "--bounds", "-15:15",
                                  "--epsilon", "inf", "--edges", "all"])
    assert res["data"]["bounds"] == [[-15.0, 15.0]] and "warning: warning" not in err
    code, _, err = _err(capsys, ["estimate", "gini", "--csv", str(f), "--bounds", "-5:5"])
    assert code == 2 and "--clip" in err and "clip=True" not in err
    code, _, err = _err(capsys, ["estimate", "gini", "--csv", str(f), "--epsilon", "inf"])
    assert code == 0 and "warning: warning" not in err and "ustat: warning: no bounds" in err


def test_gzip_and_encoding(tmp_path, capsys):
    import gzip

    f = tmp_path / "d.csv.gz"
    f.write_bytes(gzip.compress(b"x\n" + b"".join(b"%d\n" % i for i in range(20))))
    res, _ = _run_json(capsys, ["estimate", "gini", "--csv", str(f), "--bounds", "0:20"])
    assert res["n"] == 20
    g = tmp_path / "l.csv"
    g.write_bytes(b"name,x\n" + b"".join(b"Jos\xe9,%d\n" % i for i in range(20)))
    code, _, err = _err(capsys, ["estimate", "gini", "--csv", str(g), "--columns", "x"])
    assert code == 2 and str(g) in err and "utf-8" in err and "--encoding latin-1" in err
    res, _ = _run_json(capsys, ["estimate", "gini", "--csv", str(g), "--columns", "x",
                                "--encoding", "latin-1", "--bounds", "0:20"])
    assert res["n"] == 20


def test_huge_values_run(tmp_path, capsys):
    f = tmp_path / "d.csv"
    f.write_text("x\n1e308\n-1e308\n0\n5e307\n")
    res, _ = _run_json(capsys, ["estimate", "gini", "--csv", str(f), "--epsilon", "inf",
                                "--edges", "all"])
    assert res["estimate"] == pytest.approx((1 + 0.5 + 0.25 + 0.5 + 0.75 + 0.25) / 6, abs=1e-4)


def test_tiny_file_caps_edges(tmp_path, capsys):
    f = tmp_path / "d.csv"
    f.write_text("x\n1\n2\n3\n")
    res, _ = _run_json(capsys, ["estimate", "gini", "--csv", str(f), "--bounds", "0:5",
                                "--seed", "1"])
    assert res["edges"] == 3 and any("only C(3, 2) = 3" in n for n in res["notes"])


def test_no_header(tmp_path, capsys):
    f = tmp_path / "d.csv"
    f.write_text("".join(f"{i},{i * i % 7 + 10}\n" for i in range(1, 13)))
    res, err = _run_json(capsys, ["estimate", "kendall", "--csv", str(f), "--bounds", "0:12,10:17"])
    assert res["n"] == 11 and "--no-header" in err
    res, err = _run_json(capsys, ["estimate", "kendall", "--csv", str(f), "--bounds", "0:12,10:17",
                                  "--no-header"])
    assert res["n"] == 12 and "looks like data" not in err
    res, _ = _run_json(capsys, ["estimate", "gini", "--csv", str(f), "--columns", "2",
                                "--bounds", "10:17", "--no-header"])
    assert res["data"]["columns"] == ["2"]
    g = tmp_path / "z.csv"
    g.write_text("0,0\n1,2\n2,1\n")
    code, _, err = _err(capsys, ["estimate", "kendall", "--csv", str(g)])
    assert code == 2 and "--no-header if the file has none" in err


def test_non_numeric_default_column(tmp_path, capsys):
    f = tmp_path / "j.csv"
    f.write_text("job\nadmin\nnurse\nchef\n")
    code, _, err = _err(capsys, ["estimate", "gini", "--csv", str(f)])
    assert code == 2 and "choose a numeric column" in err and "--columns" in err
    assert "categorical=" not in err


def test_renyi2_lower_bound_note(tmp_path, capsys):
    f = tmp_path / "d.csv"
    f.write_text("x\n" + "".join(f"v{i}\n" for i in range(40)))
    res, _ = _run_json(capsys, ["estimate", "renyi2", "--csv", str(f), "--epsilon", "inf",
                                "--edges", "all"])
    assert res["estimate"] == pytest.approx(2 * np.log(40))
    assert any("lower bound" in n for n in res["notes"])


def test_evaluate_prints_the_statistic(capsys):
    assert main(["estimate", "auc", "--n", "40", "--evaluate", "--no-progress", "--seed", "2"]) == 0
    out = capsys.readouterr().out
    ev = out[out.index("evaluation:"):]
    assert "exact AUC on the raw values = " in ev and "on the encoded inputs = " in ev
    assert "(difference " in ev and "incomplete U" not in ev and " U " not in ev


def test_ctrl_c_without_traceback():
    import signal
    import time

    # about 7 s alone: the signal lands once the run says it is computing (a fixed delay
    # could land during the imports on a loaded machine, before the command handles it)
    p = subprocess.Popen([sys.executable, "-m", "ustat", "estimate", "kendall", "--n", "2000",
                          "--edges", "400n"], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    seen, deadline = [], time.monotonic() + 60
    while time.monotonic() < deadline:
        line = p.stderr.readline()
        seen.append(line)
        if "computing" in line or not line:
            break
    time.sleep(0.3)
    p.send_signal(signal.SIGINT)
    _, err = p.communicate(timeout=120)
    err = "".join(seen) + err
    assert p.returncode == 130 and "Traceback" not in err and "interrupted" in err


def test_broken_pipe_is_quiet():
    p = subprocess.Popen([sys.executable, "-m", "ustat", "kernels"], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE)
    p.stdout.close()                    # the reader is gone before ustat writes
    err = p.stderr.read().decode()
    p.wait(timeout=60)
    assert "Broken pipe" not in err and "BrokenPipeError" not in err and "Traceback" not in err


def test_ctrl_c_while_the_libraries_load_is_quiet():
    """A KeyboardInterrupt during ``python -m ustat``'s imports exits 130 like one mid-run."""
    code = ("import builtins, runpy, sys\n"
            "real = builtins.__import__\n"
            "def imp(name, *a, **k):\n"
            "    if name == 'cli':\n"
            "        raise KeyboardInterrupt\n"
            "    return real(name, *a, **k)\n"
            "builtins.__import__ = imp\n"
            "runpy.run_module('ustat', run_name='__main__')\n")
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert p.returncode == 130 and "Traceback" not in p.stderr
    assert p.stderr.strip() == "ustat: interrupted"


def test_ctrl_c_while_the_interpreter_shuts_down_is_quiet():
    """After the result is printed the interpreter joins the worker pool's threads; a Ctrl-C
    then exits 130 at once (no traceback from threading, no death by the signal)."""
    import signal
    import time

    code = ("import sys, threading, time\n"
            "from ustat.cli import entry\n"
            "threading.Thread(target=time.sleep, args=(60,)).start()   # joined at exit\n"
            "sys.argv = ['ustat', 'kernels']\n"
            "sys.exit(entry())\n")
    p = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    first = p.stdout.readline()                     # the command has printed: shutting down
    time.sleep(0.5)
    p.send_signal(signal.SIGINT)
    _out, err = p.communicate(timeout=30)
    assert first and p.returncode == 130 and "Traceback" not in err
