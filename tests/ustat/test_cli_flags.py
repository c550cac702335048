"""`ustat estimate` engine and precision flags reaching the spec and the executor, the release
fields,
default column choice, and negative bounds in every command."""

import json
import os
import re
import subprocess
import sys

import numpy as np
import pytest

from tests.conftest import REPO, shared_data
from tests.ustat.test_cli_protocols import _err, _run
from ustat import umpc
from ustat.cli import main
from ustat.executors import Dask, LocalProcesses, Simulator
from ustat.specs import UMPCSpec


@pytest.fixture
def spy(monkeypatch):
    """Record the spec and the executor the CLI gives run_umpc (and run it)."""
    real, calls = umpc.run_umpc, []

    def run_umpc(records, spec, executor=None, **kw):
        calls.append((spec, executor))
        return real(records, spec, executor, **kw)

    monkeypatch.setattr(umpc, "run_umpc", run_umpc)
    return calls


def test_engine_flags_reach_run_umpc(capsys, spy):
    res, _ = _run(capsys, ["estimate", "gini", "--n", "30", "--seed", "1", "--backend", "dealer",
                           "--workers", "2", "--pool", "threads", "--bits", "48", "--frac-bits",
                           "20"])
    spec, ex = spy[-1]
    assert (spec.execution.backend, ex.workers, ex.pool, spec.precision.bits,
            spec.precision.frac_bits) == ("dealer", 2, "threads", 48, 20)
    assert isinstance(ex, Simulator) and spec.execution.seed == "1"
    assert res["backend"] == "dealer" and res["workers"] == 2 and res["protocol"] == "umpc"
    assert "trusted dealer" in res["trust"] and res["params"]["bits"] == 48
    assert res["params"]["edges"] == 60 and res["params"]["pool"] == "threads"
    assert UMPCSpec.from_dict(res["spec"]) == spec          # the release records its spec
    _run(capsys, ["estimate", "gini", "--n", "30", "--seed", "1", "--workers", "1"])
    spec, ex = spy[-1]
    assert ex == Simulator(workers=1) and spec.precision.bits is None
    _run(capsys, ["estimate", "gini", "--n", "30", "--seed", "1", "--processes", "2"])
    assert spy[-1][1] == LocalProcesses(2)


def test_scheduler_flag_is_passed(capsys, monkeypatch):
    """--scheduler makes a Dask executor as given (a fake run_umpc: no cluster is started)."""
    seen = {}

    def fake(records, spec, executor=None, **kw):
        seen.update(executor=executor)
        raise ValueError("stop here")

    monkeypatch.setattr(umpc, "run_umpc", fake)
    code, err = _err(capsys, ["estimate", "gini", "--n", "20", "--scheduler", "local",
                              "--workers", "2"])
    assert code == 2 and seen == {"executor": Dask("local", 2)} and "stop here" in err


def test_backend_choices(capsys):
    code, err = _err(capsys, ["estimate", "gini", "--n", "20", "--backend", "nope"])
    assert code == 2 and "--backend must be one of" in err and "dealer" in err and "gc" in err


def test_precision_flags_exact_at_eps_inf(capsys):
    res, _ = _run(capsys, ["estimate", "gini", "--n", "25", "--bits", "48", "--frac-bits", "24",
                           "--epsilon", "inf", "--edges", "all", "--evaluate"])
    ev = res["evaluation"]
    assert res["estimate"] == pytest.approx(ev["exact_encoded"], abs=1e-6)
    assert abs(ev["encoding_error"]) < 1e-6
    assert ev["encoding_error"] == pytest.approx(ev["exact_encoded"] - ev["exact_raw"], abs=1e-12)


@pytest.mark.parametrize("argv,msg", [
    (["--workers", "0"], "--workers must be >= 1, got 0"),
    (["--bits", "1"], "--bits must be >= 2"),
    (["--frac-bits", "-1"], "--frac-bits must be >= 0"),
    (["--bits", "20", "--frac-bits", "20"], "--frac-bits (20) must be below --bits (20)"),
    (["--resolution", "-1"], "--resolution must be a positive number"),
    (["--resolution", "nan"], "--resolution must be a positive number"),
    (["--confidence", "1.5"], "--confidence must be in (0, 1)"),
    (["--pool", "threads", "--workers", "1"], "--pool applies with --workers > 1"),
    (["--pool", "forks"], "invalid choice: 'forks'"),
    (["--workers", "two"], "argument --workers: not an integer: 'two'"),
    (["--edges", "5x"], "--edges: edges must be like '2n', an integer or 'all'"),
    (["--csv", "{csv}", "--bounds", "-5:5,0:1"], "--bounds: got 2 lo:hi pair(s) for 1 column(s)"),
    (["--csv", "{csv}", "--bounds", "5:-5"], "--bounds: entry 1 '5:-5': need lo < hi"),
])
def test_engine_flag_errors(tmp_path, capsys, argv, msg):
    f = tmp_path / "x.csv"
    f.write_text("x\n" + "".join(f"{i - 3}\n" for i in range(8)))
    argv = [str(f) if a == "{csv}" else a for a in argv]
    base = ["estimate", "gini"] + ([] if "--csv" in argv else ["--n", "20"])
    code, err = _err(capsys, base + argv)
    assert code == 2 and msg in err and "Traceback" not in err, err


def _newer_run_umpc(real, seen):
    """A run_umpc whose result carries set values of the release fields."""
    def run_umpc(records, spec, executor=None, **kw):
        seen.update(resolution=spec.precision.resolution, confidence=spec.confidence)
        res = real(records, spec, executor, **kw)
        confidence, resolution = spec.confidence, spec.precision.resolution
        res.estimate_raw, res.estimate = 1.0432, 1.0
        res.noise_std, res.confidence = 0.0123, confidence
        res.ci = np.array([0.97, 1.0])                   # numpy values serialize too
        res.ci_method = "normal: DP noise + edge sampling"
        res.epsilon_split = {"statistic": 0.9, "class_counts": 0.1}
        res.precision = {"bits": np.int64(40), "frac_bits": 14, "input_frac_bits": 30,
                         "resolution": resolution}
        res.warnings = ["warning: class-count noise dominates", "small classes"]
        if res.evaluation is not None:
            res.evaluation.update(exact_raw=0.75, exact_encoded=0.7499, encoding_error=-1e-4)
        return res
    return run_umpc


def test_release_fields_are_reported(capsys, monkeypatch):
    seen = {}
    monkeypatch.setattr(umpc, "run_umpc", _newer_run_umpc(umpc.run_umpc, seen))
    argv = ["estimate", "auc", "--n", "40", "--seed", "1", "--resolution", "0.001",
            "--confidence", "0.9", "--evaluate"]
    res, err = _run(capsys, argv)
    assert seen == {"resolution": 0.001, "confidence": 0.9}
    assert res["estimate"] == 1.0 and res["estimate_raw"] == 1.0432 and res["ci"] == [0.97, 1.0]
    assert res["noise_std"] == 0.0123 and res["confidence"] == 0.9
    assert res["epsilon_split"] == {"statistic": 0.9, "class_counts": 0.1}
    assert res["precision"]["input_frac_bits"] == 30
    assert res["evaluation"]["exact_raw"] == 0.75 and res["evaluation"]["encoding_error"] == -1e-4
    assert res["warnings"] == ["class-count noise dominates", "small classes"]
    assert err.count("class-count noise dominates") == 1 and "warning: warning" not in err
    assert main(argv + ["--no-progress"]) == 0
    out = capsys.readouterr().out
    assert "AUC (auc) = 1   [1.0432 before clamping to the valid range]" in out
    assert "accuracy  : DP noise std 0.0123, 90% interval [0.97, 1]\n" in out
    assert "  interval  : normal: DP noise + edge sampling\n" in out
    assert "epsilon 1 = 0.9 statistic + 0.1 class counts, delta " in out   # the in-MPC noise's
    assert "(threat model M_Dis" in out
    assert ("precision : ring 40 bits, 14 fractional bits for the output, 30 for the inputs; "
            "inputs resolved to 0.001") in " ".join(out.split())
    assert ("evaluation: exact AUC on the raw values = 0.75, on the encoded inputs = 0.7499 "
            "(difference -0.0001)") in out
    assert "in U units" not in out and "u_complete" not in out


def test_noise_std_in_statistic_units_only(capsys):
    """The noise std is shown in the statistic's units (run_umpc's noise_std), never on the U
    scale next to an AUC; without noise_std only U-statistic kernels show one."""
    for kern in ("auc", "kendall"):
        res, _ = _run(capsys, ["estimate", kern, "--n", "40", "--seed", "1"])
        assert main(["estimate", kern, "--n", "40", "--seed", "1", "--no-progress"]) == 0
        out = capsys.readouterr().out
        assert "U units" not in out
        if res.get("noise_std") is not None:
            assert f"accuracy  : DP noise std {res['noise_std']:.3g}" in out
        else:
            assert ("noise std" in out) == (kern == "kendall")


def test_default_columns_by_name_in_any_order(tmp_path, capsys):
    """Issue 8 s.3: a two-column file label,score: the score is read as the score."""
    f = tmp_path / "ls.csv"
    f.write_text("label,score\n" + "".join(f"{'yes' if i % 3 else 'no'},{i / 30}\n"
                                           for i in range(30)))
    res, err = _run(capsys, ["estimate", "auc", "--csv", str(f), "--bounds", "0:1",
                             "--epsilon", "inf", "--edges", "all"])
    assert res["data"]["columns"] == ["score", "label"] and "chosen by name" in err
    from sklearn.metrics import roc_auc_score

    want = roc_auc_score([i % 3 != 0 for i in range(30)], [i / 30 for i in range(30)])
    assert res["estimate"] == pytest.approx(want, abs=1e-6)


@pytest.mark.parametrize("cmd", [
    ["ecdf", "--column", "x", "--thresholds", "8"],
    ["quantile", "--column", "x", "--thresholds", "8", "--q", "0.5"],
    ["roc", "--score", "x", "--label", "y", "--thresholds", "8"],
    ["estimate", "gini", "--columns", "x"],
])
@pytest.mark.parametrize("form", ["space", "equals"])
def test_negative_bounds_in_every_command(tmp_path, capsys, cmd, form):
    f = tmp_path / "neg.csv"
    f.write_text("x,y\n" + "".join(f"{i - 10},{i % 2}\n" for i in range(21)))
    bounds = ["--bounds", "-10:10"] if form == "space" else ["--bounds=-10:10"]
    argv = cmd[:1] + ["--csv", str(f)] + cmd[1:] + bounds + ["--epsilon", "inf", "--seed", "1"]
    if cmd[0] != "estimate":
        argv += ["--backend", "central"]
    res, err = _run(capsys, argv)
    got = res["data"]["bounds"] if cmd[0] == "estimate" else res.get("bounds")
    assert got in ([[-10.0, 10.0]], [-10.0, 10.0], None) and "no bounds" not in err
    if cmd[0] in ("ecdf", "quantile"):
        assert res["bounds"] == [-10.0, 10.0]


def test_ecdf_huge_values_do_not_become_nan(tmp_path, capsys):
    """Issue 8 s.6 (1e308 -> NaN) for the ECDF commands: the threshold grid does not overflow."""
    f = tmp_path / "h.csv"
    f.write_text("x\n1e308\n-1e308\n0\n5e307\n")
    res, _ = _run(capsys, ["ecdf", "--csv", str(f), "--thresholds", "5", "--bounds",
                           "-1e308:1e308", "--epsilon", "inf", "--backend", "central",
                           "--evaluate"])
    assert res["thresholds"] == [-1e308, -5e307, 0.0, 5e307, 1e308]
    assert res["evaluation"]["ecdf"] == [0.25, 0.25, 0.5, 0.75, 1.0]


def test_ecdf_bounds_errors_name_the_flag(capsys):
    code, err = _err(capsys, ["ecdf", "--n", "20", "--bounds", "-1:-2"])
    assert code == 2 and "--bounds: entry 1 '-1:-2': need lo < hi" in err


def test_ecdf_commands_read_headerless_and_latin1(tmp_path, capsys):
    f = tmp_path / "h.csv"
    f.write_bytes(b"".join(b"%d,Jos\xe9\n" % i for i in range(20)))
    res, _ = _run(capsys, ["ecdf", "--csv", str(f), "--no-header", "--encoding", "latin-1",
                           "--column", "1", "--bounds", "0:20", "--thresholds", "4",
                           "--backend", "central", "--epsilon", "inf", "--evaluate"])
    assert res["n"] == 20 and res["evaluation"]["ecdf"][-1] == 1.0


def test_help_documents_every_new_flag():
    from ustat.baselines.registry import PROTOCOLS
    from ustat.cli import build_parser

    text = build_parser()._subparsers._group_actions[0].choices["estimate"].format_help()
    for flag in ("--protocol", "--bins", "--pairs", "--delta", "--noise-bits", "--engine",
                 "--backend", "--workers", "--pool", "--scheduler", "--bits", "--frac-bits",
                 "--resolution", "--confidence", "Exit status", "docs/guides/cli.md"):
        assert flag in text, flag
    joined = re.sub(r"-\s+", "-", text)          # argparse wraps at hyphens
    for name in PROTOCOLS:
        assert name in joined, name


def test_bank_umpc_subprocess_with_engine_flags():
    path = shared_data("bank", "bank.csv")
    proc = subprocess.run(
        [sys.executable, "-m", "ustat", "estimate", "kendall", "--csv", path, "--columns",
         "age,balance", "--bounds", "18:95,-10000:110000", "--workers", "1", "--backend",
         "dealer", "--bits", "40", "--frac-bits", "14", "--seed", "1", "--json",
         "--no-progress"],
        cwd=REPO, capture_output=True, text=True, timeout=180,
        env={**os.environ, "PYTHONPATH": REPO})
    assert proc.returncode == 0, proc.stderr
    res = json.loads(proc.stdout)
    assert res["n"] == 4521 and res["protocol"] == "umpc" and res["workers"] == 1
    assert res["backend"] == "dealer" and -1 <= res["estimate"] <= 1


def test_bank_pool_and_release_options(capsys):
    """Bank through main(): --pool threads --workers 2, and --resolution/--confidence."""
    path = shared_data("bank", "bank.csv")
    argv = ["estimate", "kendall", "--csv", path, "--columns", "age,balance", "--bounds",
            "18:95,-10000:110000", "--pool", "threads", "--workers", "2", "--seed", "1"]
    res, _ = _run(capsys, argv)
    assert res["n"] == 4521 and res["params"]["pool"] == "threads" and res["workers"] == 2
    res, _ = _run(capsys, argv + ["--resolution", "1", "--confidence", "0.9"])
    assert res["confidence"] == 0.9 and res["ci"][0] <= res["estimate"] <= res["ci"][1]


def test_data_hash_is_not_released(tmp_path, capsys):
    """The file's SHA-256 (a function of every record) identifies the data set in the budget
    file only; it is not in the output."""
    f = tmp_path / "d.csv"
    f.write_text("x\n" + "".join(f"{i}\n" for i in range(20)))
    budget = tmp_path / "b.json"
    for proto in ("umpc", "bell-ldp"):
        res, _ = _run(capsys, ["estimate", "gini", "--csv", str(f), "--bounds", "0:20",
                               "--protocol", proto, "--budget-file", str(budget),
                               "--budget-total", "5"])
        assert "sha256" not in res["data"] and res["data"]["rows"] == 20
    assert "sha256:" in budget.read_text()


def test_backend_gc_when_registered(capsys):
    """--backend gc (issue 9) through the CLI: the same release as the dealer backend at eps = inf,
    and the trust sentence says no dealer; a degree-3 kernel is refused naming the flag."""
    from ustat.umpc.chunk import BACKENDS

    if "gc" not in BACKENDS:
        pytest.skip("the garbled-circuit backend is not registered in this build")
    argv = ["estimate", "gini", "--n", "16", "--epsilon", "inf", "--edges", "all", "--seed", "2"]
    gc, _ = _run(capsys, argv + ["--backend", "gc"])
    dealer, _ = _run(capsys, argv + ["--backend", "dealer"])
    assert gc["backend"] == "gc" and gc["estimate"] == dealer["estimate"]
    assert "trusted dealer provides" not in gc["trust"] and "backend gc" in gc["trust"]
    code, err = _err(capsys, ["estimate", "triples", "--n", "10", "--backend", "gc"])
    assert code == 2 and err.count("ustat: error: --backend") == 1


def test_raw_records_and_bounds_go_to_run_umpc(tmp_path, capsys, spy):
    """Issue 8 s.2: the CLI passes the raw values (clipped with --clip) and the public bounds
    per kernel column in the spec; --resolution in raw units."""
    f = tmp_path / "d.csv"
    f.write_text("s,y\n" + "".join(f"{i * 10},{i % 2}\n" for i in range(12)))
    argv = ["estimate", "auc", "--csv", str(f), "--bounds", "0:100", "--clip", "--seed", "1",
            "--resolution", "0.5"]
    _run(capsys, argv)
    spec, _ = spy[-1]
    assert spec.precision.bounds == ((0.0, 100.0), None) and spec.precision.resolution == 0.5


def test_bank_kendall_raw_reference(tmp_path, capsys):
    """Issue 8 s.2 through the CLI: Kendall's tau-a on Bank (age, balance, 300 rows). The
    evaluation's exact_raw equals a numpy reference on the raw values, and, with run_umpc
    encoding the raw values itself (the spec's bounds), the eps = inf release equals it to
    1e-9."""
    path = shared_data("bank", "bank.csv")
    with open(path) as fh:
        lines = fh.read().splitlines()[:301]
    f = tmp_path / "bank300.csv"
    f.write_text("\n".join(lines) + "\n")
    from ustat.data import load_csv

    x, _ = load_csv(str(f), ["age", "balance"])
    i, j = np.triu_indices(len(x), 1)
    want = float(np.mean(np.sign(x[i, 0] - x[j, 0]) * np.sign(x[i, 1] - x[j, 1])))
    res, _ = _run(capsys, ["estimate", "kendall", "--csv", str(f), "--columns", "age,balance",
                           "--bounds", "18:95,-10000:110000", "--epsilon", "inf", "--edges",
                           "all", "--evaluate", "--workers", "1"])
    assert res["evaluation"]["exact_raw"] == pytest.approx(want, abs=1e-12)
    assert res["estimate"] == pytest.approx(want, abs=1e-9)
    assert abs(res["evaluation"]["encoding_error"]) <= 1e-9
