"""Issue 28's papercuts, run as a user runs them: each ends in one line ``ustat: error: ...``
naming the problem and the fix, with exit status 2, before any computation; or it works.

Most run the CLI entry function in-process (the same path as the ``ustat`` command, argument
parsing included); a few run the real command in a subprocess.
"""

import gzip
import json
import subprocess
import sys

import pytest

from ustat.cli import build_parser, main


def _fail(capsys, argv, *needles):
    """Run argv; expect exit 2 and one line ``ustat: error: ...`` (after any warnings) that
    contains every needle."""
    code = main(argv + ["--no-progress"])
    out, err = capsys.readouterr()
    assert code == 2, (argv, out, err)
    lines = err.splitlines()
    assert lines and lines[-1].startswith("ustat: error: "), err
    assert all(line.startswith("ustat: warning: ") for line in lines[:-1]), err
    for needle in needles:
        assert needle in lines[-1], (needle, err)
    return lines[-1]


@pytest.fixture
def nothing_runs(monkeypatch):
    """Every computation fails the test: a check must stop the run first."""
    import importlib

    import ustat.baselines as baselines
    import ustat.umpc as umpc

    release = importlib.import_module("ustat.ecdf.release")   # the package's name is a function

    def boom(*a, **k):
        raise AssertionError("computed before the check")

    monkeypatch.setattr(umpc, "run_umpc", boom)
    monkeypatch.setattr(baselines, "run_protocol", boom)
    monkeypatch.setattr(release, "release", boom)
    monkeypatch.setattr(release, "deploy", boom)


@pytest.fixture
def files(tmp_path):
    f = {}
    f["scores"] = tmp_path / "scores.csv"
    f["scores"].write_text("score,y\n" + "".join(
        f"{(i * 37) % 101 / 101:.3f},{'yes' if i % 3 else 'no'}\n" for i in range(600)))
    f["probs"] = tmp_path / "probs.csv"
    f["probs"].write_text("p,y\n" + "".join(f"{(i * 37) % 101 / 101:.3f},{i % 2}\n"
                                            for i in range(200)))
    raw = bytearray(gzip.compress(("x\n" + "".join(f"{i}\n" for i in range(3000))).encode()))
    raw[30:60] = bytes(b ^ 0xFF for b in raw[30:60])
    f["gz"] = tmp_path / "bad.csv.gz"
    f["gz"].write_bytes(bytes(raw))
    f["thr"] = tmp_path / "thr.txt"
    f["thr"].write_text("0.1\n0.5\n0.9\n")
    return f


def test_corrupt_gzip(capsys, files):
    _fail(capsys, ["estimate", "gini", "--csv", str(files["gz"]), "--bounds", "0:3000"],
          "damaged gzip file", "gzip -t")


def test_huge_n_is_refused_before_allocating(capsys, nothing_runs):
    _fail(capsys, ["estimate", "gini", "--n", "1000000000000"], "--n 1000000000000 needs at least",
          "use a smaller --n")
    _fail(capsys, ["ecdf", "--n", "1e13"], "--n 10000000000000 needs")


def test_missing_extras_are_named_before_computing(capsys, monkeypatch, files, tmp_path,
                                                   nothing_runs):
    for module in ("distributed", "matplotlib", "clarabel"):
        monkeypatch.setitem(sys.modules, module, None)
    _fail(capsys, ["estimate", "gini", "--n", "100", "--scheduler", "local"],
          "--scheduler needs distributed", "pip install 'ustat-mpc[dask]'")
    _fail(capsys, ["ecdf", "--plot", str(tmp_path / "x.png")], "--plot needs matplotlib",
          "pip install 'ustat-mpc[plots]'")
    _fail(capsys, ["quantile", "--smooth", "l2"], "--smooth l2 needs clarabel",
          "pip install 'ustat-mpc[smooth]'")


def test_plot_path_checked_before_computing(capsys, files, tmp_path, nothing_runs):
    _fail(capsys, ["ecdf", "--plot", "nodir/x.png"], "directory", "nodir does not exist")
    _fail(capsys, ["roc", "--csv", str(files["scores"]), "--score", "score", "--label", "y",
                   "--bounds", "0:1", "--plot", str(tmp_path)], "is a directory")


def test_hl_epsilon_inf_prints_its_result(capsys, files):
    assert main(["hl", "--csv", str(files["probs"]), "--prob", "p", "--label", "y",
                 "--epsilon", "inf", "--backend", "central", "--no-progress"]) == 0
    out, err = capsys.readouterr()
    assert "epsilon = inf = tree inf + sums inf" in out and "error" not in err


def test_positive_label_mistyped_or_absent(capsys, files, tmp_path):
    for argv in (["roc", "--csv", str(files["scores"]), "--score", "score", "--label", "y",
                  "--bounds", "0:1", "--positive", "YES"],
                 ["estimate", "auc", "--csv", str(files["scores"]), "--columns", "score,y",
                  "--bounds", "0:1", "--positive", "Yes"]):
        # the line, not the label (issue 37: a message does not print a record's value)
        _fail(capsys, argv, "line 3, column 'y': the label differs from the positive class",
              "only in case", "as the label is written in the file")
    one = tmp_path / "one.csv"                     # a single class: told by the noisy counts
    one.write_text("score,y\n" + "".join(f"{i / 40},no\n" for i in range(40)))
    _fail(capsys, ["roc", "--csv", str(one), "--score", "score", "--label", "y", "--bounds", "0:1",
                   "--positive", "yes", "--epsilon", "inf", "--backend", "central"],
          "noisy class size <= 0", "check the label column and the positive label")


@pytest.mark.parametrize("cmd", [["estimate", "gini", "--n", "50"], ["ecdf", "--n", "50"]])
def test_epsilon_out_of_range(capsys, cmd, nothing_runs):
    _fail(capsys, cmd + ["--epsilon", "1e-300"], "--epsilon 1e-300 is below 1e-06",
          "use --epsilon 1e-06 or more")
    err = _fail(capsys, cmd + ["--epsilon", "1e308"], "is above 1e+08", "--epsilon inf")
    assert len(err) < 300                                   # no fraction of hundreds of digits


@pytest.mark.parametrize("argv, needle", [
    (["estimate", "gini", "--epsilon", "abc"], "argument --epsilon: not a number: 'abc'"),
    (["estimate", "gini", "--n", "1.5"], "argument --n: not an integer: '1.5'"),
    (["estimate", "gini", "--max-colluders", "abc"], "argument --max-colluders: not an integer"),
    (["estimate"], "the following arguments are required: kernel"),
    (["ecdf", "--backend", "gpu"], "argument --backend: invalid choice: 'gpu'"),
])
def test_argument_mistakes_are_one_line(capsys, argv, needle):
    err = _fail(capsys, argv, needle, "--help")
    assert "usage:" not in err


def test_integers_written_with_an_exponent_work():
    ap = build_parser()
    assert ap.parse_args(["estimate", "gini", "--n", "1e6"]).n == 1_000_000
    assert ap.parse_args(["ecdf", "--n", "2e3"]).n == 2000


def test_budget_file_that_is_a_directory(capsys, files, tmp_path, nothing_runs):
    _fail(capsys, ["estimate", "auc", "--csv", str(files["scores"]), "--bounds", "0:1",
                   "--budget-file", str(tmp_path), "--budget-total", "1"],
          f"--budget-file {tmp_path} is a directory", "budget.json")
    _fail(capsys, ["ecdf", "--csv", str(files["probs"]), "--column", "p", "--bounds", "0:1",
                   "--budget-file", str(tmp_path / "no" / "b.json")], "does not exist")


@pytest.mark.parametrize("argv, needle", [
    (["estimate", "gini", "--csv", "{probs}", "--columns", "p", "--bounds", "0:1", "--n", "5"],
     "--n sets the size of the synthetic default"),
    (["estimate", "gini", "--n", "50", "--aux-epsilon-fraction", "0.3"],
     "--aux-epsilon-fraction applies to kernels with class counts (auc, vus), not 'gini'"),
    (["estimate", "gini", "--n", "50", "--sep", ";"], "--sep describes the --csv file"),
    (["ecdf", "--bins", "30"], "--bins sets the histogram of --plot"),
    (["ecdf", "--thresholds", "{thr}", "--grid", "geometric"], "--grid applies to --thresholds N"),
    (["ecdf", "--clip"], "--clip clips to --bounds, which are not given"),
    (["ecdf", "--backend", "central", "--noise", "split"], "--noise applies to --backend fss"),
    (["ecdf", "--backend", "central", "--servers", "3"], "--servers applies to --backend fss"),
    (["ecdf", "--column", "p"], "--column names a column of --csv"),
    (["ecdf", "--csv", "{probs}", "--column", "p", "--bounds", "0:1", "--n", "9"],
     "--n sets the size of the synthetic default"),
    (["estimate", "kendall", "--n", "50", "--protocol", "bell-2pc", "--delta", "1e-6"],
     "--delta applies to --protocol bell-2pc with --pairs all"),
])
def test_flags_that_would_be_ignored_are_refused(capsys, files, argv, needle, nothing_runs):
    argv = [str(files[a[1:-1]]) if a.startswith("{") else a for a in argv]
    _fail(capsys, argv, needle)


def test_no_data_derived_bounds_at_a_finite_epsilon(capsys, files, nothing_runs):
    for argv in (["estimate", "gini", "--csv", str(files["probs"]), "--columns", "p"],
                 ["ecdf", "--csv", str(files["probs"]), "--column", "p"],
                 ["roc", "--csv", str(files["scores"]), "--score", "score", "--label", "y"]):
        _fail(capsys, argv, "--bounds is required with --csv at a finite epsilon",
              "known without looking at the data")


def test_progress_on_stderr_when_not_a_terminal(capsys):
    """Captured stderr is not a terminal: one plain line per stage (umpc), one per baseline."""
    assert main(["estimate", "gini", "--n", "200", "--seed", "1", "--json"]) == 0
    err = capsys.readouterr().err
    stages = [line.split(" (")[0] for line in err.splitlines() if line.startswith("ustat: ")
              and "warning" not in line]
    assert stages == ["ustat: sampling", "ustat: computing 400 edges",
                      "ustat: aggregation 400 edges"]
    assert main(["estimate", "kendall", "--n", "200", "--seed", "1", "--protocol", "bell-ldp",
                 "--json"]) == 0
    assert "ustat: bell-ldp: 200 parties, epsilon 1" in capsys.readouterr().err


def test_the_command_itself_in_a_subprocess(tmp_path):
    """The installed entry point: one line, status 2, for an argument and a data mistake."""
    for args, needle in ((["estimate", "gini", "--epsilon", "abc"], "not a number: 'abc'"),
                         (["ecdf", "--plot", "nodir/x.png"], "nodir does not exist")):
        proc = subprocess.run([sys.executable, "-m", "ustat"] + args, capture_output=True,
                              text=True, timeout=120, cwd=tmp_path)
        assert proc.returncode == 2 and proc.stderr.count("\n") == 1 and needle in proc.stderr
        assert proc.stderr.startswith("ustat: error: ")


def test_every_json_field_is_documented(capsys, files):
    """Each top-level key of each command's JSON is named in docs/guides/cli.md."""
    import pathlib

    doc = (pathlib.Path(__file__).resolve().parents[2] / "docs" / "guides" / "cli.md").read_text()
    runs = [["estimate", "auc", "--csv", str(files["scores"]), "--columns", "score,y",
             "--bounds", "0:1", "--seed", "1", "--evaluate"],
            ["estimate", "gini", "--n", "60", "--seed", "1"],
            ["estimate", "kendall", "--n", "60", "--seed", "1", "--protocol", "ghazi-sm",
             "--bins", "4"],
            ["ecdf", "--n", "60", "--thresholds", "8", "--seed", "1", "--evaluate"],
            ["quantile", "--n", "1000", "--thresholds", "8", "--seed", "1", "--evaluate"],
            ["roc", "--csv", str(files["scores"]), "--score", "score", "--label", "y",
             "--bounds", "0:1", "--thresholds", "8", "--seed", "1", "--epsilon", "4"],
            ["hl", "--csv", str(files["probs"]), "--prob", "p", "--label", "y", "--groups", "4",
             "--thresholds", "64", "--seed", "1", "--epsilon", "4", "--backend", "central"]]
    missing = set()
    for argv in runs:
        assert main(argv + ["--json", "--no-progress"]) == 0, capsys.readouterr().err
        res = json.loads(capsys.readouterr().out)
        missing |= {f"{argv[0]}: {k}" for k in res if f"`{k}`" not in doc}
    assert not missing, sorted(missing)
