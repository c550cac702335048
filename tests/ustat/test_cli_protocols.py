"""`ustat estimate KERNEL --protocol NAME`: every baseline protocol end to end, and its errors."""

import json
import os
import subprocess
import sys

import pytest

from tests.conftest import REPO, shared_data
from ustat.baselines.registry import PROTOCOLS
from ustat.cli import main

BASELINES = [name for name in PROTOCOLS if name != "umpc"]


def _kernel_for(name):
    return {"auc": "auc", "degree-2": "kendall", "any": "kendall"}[PROTOCOLS[name].kernels]


def _run(capsys, argv):
    code = main(argv + ["--json", "--no-progress"])
    out, err = capsys.readouterr()
    assert code == 0, err
    return json.loads(out), err


def _err(capsys, argv):
    try:
        code = main(argv + ["--no-progress"])
    except SystemExit as exc:          # argparse's own errors
        code = exc.code
    return code, capsys.readouterr().err


@pytest.mark.parametrize("name", BASELINES)
def test_each_baseline_protocol_end_to_end(capsys, name):
    """Every registered baseline runs on the synthetic default; eps = inf gives the exact
    (discretized) statistic; the JSON carries protocol, parameters, trust model, costs."""
    info = PROTOCOLS[name]
    kern = _kernel_for(name)
    argv = ["estimate", kern, "--protocol", name, "--n", "24", "--seed", "5"]
    if info.uses_bins:
        argv += ["--bins", "4"]
    res, err = _run(capsys, argv + ["--epsilon", "inf", "--evaluate"])
    assert res["protocol"] == name and res["kernel"] == kern and res["n"] == 24
    assert res["dp_model"] == info.dp_model and res["trust"] and res["paper"] == info.paper
    assert res["online_bits"] > 0 and res["rounds"] >= 1 and isinstance(res["params"], dict)
    assert res["epsilon"] == "inf" and "NOT differentially private" in err
    ev = res["evaluation"]
    assert ev["encoding_error"] == pytest.approx(ev["exact_encoded"] - ev["exact_raw"])
    if "u_pairs" in ev:                          # bell-2pc: the U-statistic of the sampled pairs
        assert res["u_hat"] == pytest.approx(ev["u_pairs"], abs=1e-9)
    elif info.uses_bins:
        assert res["params"]["bins"] == 4
        assert res["estimate"] == pytest.approx(ev["exact_encoded"], abs=1e-9)
    else:
        assert res["estimate"] == pytest.approx(ev["exact_raw"], abs=1e-9)
    res, _ = _run(capsys, argv)                 # private, no evaluation
    assert res["epsilon"] == 1.0 and res.get("evaluation") is None


def test_protocol_text_output(capsys):
    assert main(["estimate", "kendall", "--protocol", "bell-ldp", "--bins", "4", "--n", "30",
                 "--no-progress", "--evaluate"]) == 0
    out = capsys.readouterr().out
    assert "U-statistic (kendall) by bell-ldp = " in out
    for head in ("privacy   : epsilon 1 (local DP)", "trust     :", "parameters: bins=4",
                 "traffic   : online", "evaluation: exact U-statistic on the raw values = ",
                 "on the discretized values = "):
        assert head in out, head


def test_bell_2pc_options(capsys):
    res, _ = _run(capsys, ["estimate", "kendall", "--protocol", "bell-2pc", "--n", "16",
                           "--bins", "4", "--pairs", "2", "--noise-bits", "24", "--seed", "1"])
    p = res["params"]
    assert (p["pairs"], p["noise_bits"], p["engine"]) == (2, 24, "gc")
    assert res["offline_bits"] > 0 and res["delta"] > 0
    res, _ = _run(capsys, ["estimate", "kendall", "--protocol", "bell-2pc", "--n", "12",
                           "--bins", "4", "--pairs", "all", "--delta", "1e-5", "--engine",
                           "plain", "--seed", "1"])
    p = res["params"]
    assert p["pairs"] == "all" and p["n_pairs"] == 66 and p["engine"] == "plain"
    assert p["delta_param"] == 1e-5


@pytest.mark.parametrize("argv,msg", [
    (["gini", "--protocol", "bell-auc"], "--protocol bell-auc supports kernel auc only, not "
                                         "kernel 'gini'"),
    (["triples", "--protocol", "bell-ldp"], "supports degree-2 kernels, not kernel 'triples'"),
    (["vus", "--protocol", "ghazi"], "--protocol umpc supports every kernel"),
    (["gini", "--protocol", "nope"], "--protocol: unknown protocol 'nope'; available: umpc, "),
    (["kendall", "--protocol", "bell-ldp", "--pairs", "2"],
     "--pairs does not apply to --protocol bell-ldp (it applies to bell-2pc)"),
    (["kendall", "--protocol", "ghazi", "--edges", "3n"],
     "--edges applies to --protocol umpc only, not 'ghazi'"),
    (["kendall", "--protocol", "ghazi", "--backend", "dealer"], "--backend applies to --protocol "
                                                                "umpc only"),
    (["kendall", "--pairs", "2"], "--pairs does not apply to --protocol umpc (it applies to "
                                  "--protocol bell-2pc)"),
    (["kendall", "--bins", "8"], "--bins does not apply to --protocol umpc"),
    (["auc", "--protocol", "fedauc-rr", "--bins", "8"], "--bins applies to the protocols that "
                                                        "discretize"),
    (["kendall", "--protocol", "bell-ldp", "--bins", "1"], "--bins must be >= 2"),
    (["kendall", "--protocol", "bell-2pc", "--pairs", "many"], "--pairs must be a positive "
                                                               "integer or 'all'"),
    (["kendall", "--protocol", "bell-2pc", "--pairs", "0", "--bins", "4"], "pairs must be >= 1"),
    (["kendall", "--protocol", "bell-2pc", "--engine", "fast"], "invalid choice: 'fast'"),
    (["auc", "--protocol", "bell-auc", "--bins", "6"], "--bins: bins must be a power of two"),
    (["kendall", "--protocol", "bell-2pc", "--noise-bits", "4", "--bins", "4"],
     "ustat: error: --noise-bits must be in [8, 62], got 4"),
    (["kendall", "--protocol", "bell-2pc", "--pairs", "all", "--delta", "2", "--bins", "4"],
     "--delta: delta must be in (0, 1)"),
])
def test_protocol_errors(capsys, argv, msg):
    code, err = _err(capsys, ["estimate"] + argv + ["--n", "20"])
    assert code == 2 and msg in err and "Traceback" not in err, err


def test_budget_file_charges_a_baseline(tmp_path, capsys):
    f = tmp_path / "d.csv"
    f.write_text("s,y\n" + "".join(f"{i / 40},{i % 2}\n" for i in range(40)))
    budget = tmp_path / "b.json"
    base = ["estimate", "auc", "--csv", str(f), "--bounds", "0:1", "--protocol", "bell-ldp",
            "--bins", "4", "--budget-file", str(budget)]
    res, _ = _run(capsys, base + ["--budget-total", "1", "--epsilon", "0.75"])
    assert res["budget"]["spent"] == 0.75 and res["classes"]["rule"] == "fixed vocabulary"
    code, err = _err(capsys, base + ["--epsilon", "0.5"])
    assert code == 2 and "spent 0.75 of 1, asked 0.5" in err


def test_bank_baseline_subprocess():
    """python -m ustat on UCI Bank (age, balance): bell-ldp with public bounds."""
    path = shared_data("bank", "bank.csv")
    proc = subprocess.run(
        [sys.executable, "-m", "ustat", "estimate", "kendall", "--csv", path, "--columns",
         "age,balance", "--bounds", "18:95,-10000:110000", "--protocol", "bell-ldp", "--bins",
         "8", "--evaluate", "--json", "--no-progress"],
        cwd=REPO, capture_output=True, text=True, timeout=120,
        env={**os.environ, "PYTHONPATH": REPO})
    assert proc.returncode == 0, proc.stderr
    res = json.loads(proc.stdout)
    assert res["protocol"] == "bell-ldp" and res["n"] == 4521 and res["params"]["bins"] == 8
    assert res["evaluation"]["exact_raw"] == pytest.approx(0.0506, abs=5e-4)
    assert res["online_bits"] == 4521 * 6          # one cell index of log2(8 * 8) bits each


def test_protocols_command(capsys):
    assert main(["protocols", "--json"]) == 0
    res = json.loads(capsys.readouterr().out)
    assert [p["name"] for p in res["protocols"]] == list(PROTOCOLS)
    assert all(p["trust"] and p["dp_model"] for p in res["protocols"])
    assert main(["protocols"]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[0].startswith("umpc") and "bell-2pc" in out


def test_bank_bell_2pc_subprocess():
    """bell-2pc on Bank through python -m ustat: --pairs, --noise-bits, --engine plain, --bins."""
    path = shared_data("bank", "bank.csv")
    proc = subprocess.run(
        [sys.executable, "-m", "ustat", "estimate", "kendall", "--csv", path, "--columns",
         "age,balance", "--bounds=18:95,-10000:110000", "--protocol", "bell-2pc", "--engine",
         "plain", "--pairs", "2", "--noise-bits", "24", "--bins", "8", "--json", "--no-progress"],
        cwd=REPO, capture_output=True, text=True, timeout=120,
        env={**os.environ, "PYTHONPATH": REPO})
    assert proc.returncode == 0, proc.stderr
    res = json.loads(proc.stdout)
    p = res["params"]
    assert (p["pairs"], p["n_pairs"], p["noise_bits"], p["engine"]) == (2, 2 * 2260, 24, "plain")
    assert res["dp_model"] == "2pc-cdp" and 0 < res["delta"] < 1e-3 and -1 <= res["estimate"] <= 1


def test_the_flags_build_the_spec_the_run_records():
    """The flags of a baseline become a BaselineSpec (each through the option its protocol
    declares), run on the executor of the flags; the JSON's spec is that spec."""
    from ustat import kernels
    from ustat.baselines import BaselineSpec
    from ustat.cli import build_parser
    from ustat.cli.protocols import baseline_spec
    from ustat.cli.specs import executor
    from ustat.executors import LocalProcesses, Simulator

    args = build_parser().parse_args(["estimate", "auc", "--protocol", "fedauc-lap",
                                      "--mechanism", "gaussian", "--delta", "1e-7", "--bits",
                                      "48", "--frac-bits", "12", "--epsilon", "2", "--seed", "4",
                                      "--processes", "2"])
    spec = baseline_spec(args, PROTOCOLS["fedauc-lap"], kernels.get("auc"))
    assert spec == BaselineSpec.of("fedauc-lap", "auc", epsilon=2.0, seed="4",
                                   mechanism="gaussian", delta=1e-7, bits=48, frac_bits=12)
    assert executor(args) == LocalProcesses(2)
    args.processes = None
    assert executor(args) == Simulator()


def test_the_json_records_the_spec(capsys):
    from ustat.baselines import BaselineSpec

    res, _ = _run(capsys, ["estimate", "kendall", "--protocol", "bell-2pc", "--n", "12",
                           "--bins", "4", "--pairs", "all", "--delta", "1e-5", "--engine",
                           "plain", "--seed", "3", "--epsilon", "2"])
    assert BaselineSpec.from_dict(res["spec"]) == BaselineSpec.of(
        "bell-2pc", "kendall", epsilon=2.0, bins=4, pairs="all", delta=1e-5, engine="plain",
        seed="3")
    assert res["spec"]["options"] == {"pairs": "all", "noise_bits": 40, "engine": "plain"}
