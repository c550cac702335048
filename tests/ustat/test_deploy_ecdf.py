"""Deployments of the ECDF commands: party hosts, two servers and an analyst, each its own process.

A seeded deployment of ``ustat ecdf`` / ``quantile`` / ``roc`` / ``hl``
releases exactly what the command releases in one process (noisy counts,
intervals, quantiles, curves, statistics, counted traffic); the analyst
prints it; the servers never see a record. The Bank quantile run over 4
hosts is marked slow.
"""

import json
import os

import numpy as np
import pytest

pytest.importorskip("cryptography")

from ustat.cli import main
from ustat.cli.deploy import job_from_command
from ustat.deploy import init, load

from .test_deploy import BANK, LOCAL, _bank_rows, _deploy_cli, _ports

ECDF = ["--column", "age", "--bounds", "18:95", "--epsilon", "1", "--seed", "3"]


def _local(command, csv, args, capsys):
    assert main([command, *args, "--csv", csv, "--json", "--no-progress"]) == 0
    return json.loads(capsys.readouterr().out)


def test_an_ecdf_deployment_releases_what_ustat_ecdf_releases(tmp_path, capsys):
    csv = _bank_rows(tmp_path, 300)
    d = str(tmp_path / "dep")
    args = ECDF + ["--thresholds", "24"]
    assert main(["deploy", "init", "--local", "--insecure",
                 "--parties", "300", "--hosts", "2", "--out", d,
                 "--base-port", str(_ports()), "--", "ecdf", *args]) == 0
    capsys.readouterr()
    cfg = load(d)
    assert [p.role for p in cfg.participants] == ["parties", "parties", "server-0", "server-1",
                                                   "analyst", "relay"]
    assert cfg.groups()[2:] == [["server0"], ["server1"], ["analyst", "dealer"]]
    got = _deploy_cli(d, csv)
    want = _local("ecdf", csv, args + ["--verify-keys"], capsys)   # on by default deployed
    for key in ("noisy_counts", "ecdf", "thresholds", "intervals", "account", "communication",
                "n", "bounds", "backend"):
        assert got[key] == want[key], key
    assert got["command"] == "ecdf" and got["deployment"]["processes"] == 6
    # the two servers received keys from the hosts; they send only the key check's two
    # messages (n kappa words each, to each other) and the answers to the analyst
    w = {p["name"]: p["wire"] for p in got["participants"]}
    assert w["host-0"]["payload_bytes_sent"] > 3 * w["server-0"]["payload_bytes_sent"] > 0
    assert got["account"]["keys_dropped"] == 0
    assert got["wire"]["overhead_ratio"] < 0.10


def test_the_analyst_prints_the_quantiles_as_ustat_quantile_does(tmp_path, capsys):
    """Pointwise servers drawing the tree's noise inside MPC (issue 30), one host."""
    from ustat.cli.deploy import show_deploy

    csv = _bank_rows(tmp_path, 200)
    d = str(tmp_path / "dep")
    args = ECDF + ["--thresholds", "16", "--q", "0.5", "--backend", "pointwise", "--noise", "mpc",
                   "--epsilon", "10"]          # at 1 the noise hides 200 records' quantiles
    init(d, 200, job_from_command(["quantile", *args], 200), hosts=1, base_port=_ports(),
         keys=LOCAL, insecure=True)
    assert [p.role for p in load(d).participants] == ["parties", "server-0", "server-1",
                                                      "analyst"]
    got = _deploy_cli(d, csv)
    want = _local("quantile", csv, args, capsys)
    for key in ("quantiles", "quantile_ci", "communication", "account"):
        assert got[key] == want[key], key
    show_deploy(got)
    text = capsys.readouterr().out
    assert "Private quantiles of age" in text and "q = 0.5" in text and "wire" in text


@pytest.mark.parametrize("command, why", [
    (["ecdf", "--column", "age", "--bounds", "18:95", "--evaluate"], "--evaluate"),
    (["ecdf", "--column", "age"], "public --bounds"),
    (["ecdf", "--bounds", "18:95"], "--column"),
    (["quantile", "--column", "age", "--bounds", "18:95", "--backend", "central"], "central"),
    (["ecdf", "--column", "age", "--bounds", "18:95", "--backend", "pointwise", "--servers",
      "3"], "two servers"),
    (["ecdf", "--column", "age", "--bounds", "18:95", "--budget-total", "3"],
     "--budget-total needs --budget-file"),
    (["ecdf", "--column", "age", "--bounds", "18:95", "--budget-file", "b.json", "--epsilon",
      "inf"], "cannot be charged"),
    (["roc", "--score", "duration", "--label", "y"], "--score and public --bounds"),
    (["hl", "--label", "y"], "--prob"),
    (["roc", "--score", "duration", "--label", "y", "--bounds", "0:5000", "--evaluate"],
     "--evaluate"),
    (["estimate-ish", "--column", "age"], "not 'estimate-ish'"),
])
def test_init_refuses_what_a_deployment_cannot_run(tmp_path, command, why):
    with pytest.raises(ValueError, match=why.replace("-", r"\-")):
        init(str(tmp_path / "dep"), 10, job_from_command(command, 10), hosts=1, base_port=_ports(),
             keys=LOCAL, insecure=True)
    assert not os.path.exists(tmp_path / "dep" / "deploy.toml")


def test_init_refuses_roles_of_the_other_protocol(tmp_path):
    with pytest.raises(ValueError, match="has no role dealer"):
        init(str(tmp_path / "a"), 10, job_from_command(["ecdf", *ECDF], 10), hosts=1,
             roles=["server-0", "server-1", "analyst", "dealer"], insecure=True)
    with pytest.raises(ValueError, match="missing analyst"):
        init(str(tmp_path / "b"), 10, job_from_command(["quantile", *ECDF], 10), hosts=1,
             roles=["server-0", "server-1"], insecure=True)


def test_a_roc_deployment_releases_what_ustat_roc_releases(tmp_path, capsys):
    """Bank's call duration as the score of y = yes: each host reads its rows of both columns;
    the analyst prints ustat roc's text; the curve's AUC is near sklearn's on the raw rows."""
    from ustat.cli.deploy import show_deploy

    csv = _bank_rows(tmp_path, 400)
    d = str(tmp_path / "dep")
    args = ["--score", "duration", "--label", "y", "--positive", "yes", "--bounds", "0:3100",
            "--thresholds", "32", "--epsilon", "20", "--seed", "4"]
    init(d, 400, job_from_command(["roc", *args], 400), hosts=2, base_port=_ports(), insecure=True,
         keys=LOCAL)
    got = _deploy_cli(d, csv)
    want = _local("roc", csv, args + ["--verify-keys"], capsys)
    for key in ("auc", "auc_ci", "fpr", "tpr", "roc_band", "n_pos_noisy", "n_neg_noisy",
                "communication", "account"):
        assert got[key] == want[key], key
    from ustat.deploy.config import INSECURE_NOTE
    assert got["notes"] == [*want["notes"], INSECURE_NOTE]     # seeded: the release says so
    assert got["deployment"]["processes"] == 6 and got["wire"]["overhead_ratio"] < 0.10
    show_deploy(got)
    assert "Private ROC of duration for y" in capsys.readouterr().out
    sk = pytest.importorskip("sklearn.metrics")
    import csv as csv_module
    with open(csv) as f:
        rows = list(csv_module.DictReader(f, delimiter=";"))
    truth = sk.roc_auc_score([r["y"] == "yes" for r in rows], [float(r["duration"]) for r in rows])
    assert abs(got["auc"] - truth) < 0.1


def test_a_hosmer_lemeshow_deployment_releases_what_ustat_hl_releases(tmp_path, capsys):
    """Calibrated probabilities (y ~ Bernoulli(p)) over 2 hosts: the same statistic, p-value
    and group table as ustat hl; nobody but a host reads a record."""
    g = np.random.default_rng(11)
    p = g.uniform(0.05, 0.95, 300)
    y = (g.random(300) < p).astype(int)
    csv = tmp_path / "calibrated.csv"
    csv.write_text("p,y\n" + "".join(f"{a:.6f},{b}\n" for a, b in zip(p, y)))
    d = str(tmp_path / "dep")
    args = ["--prob", "p", "--label", "y", "--groups", "5", "--thresholds", "64",
            "--epsilon", "20", "--seed", "6"]
    init(d, 300, job_from_command(["hl", *args], 300), hosts=2, base_port=_ports(), insecure=True,
         keys=LOCAL)
    got = _deploy_cli(d, str(csv))
    want = _local("hl", str(csv), args + ["--verify-keys"], capsys)
    for key in ("statistic", "p_value", "edges", "table", "df", "communication", "account"):
        assert got[key] == want[key], key
    assert got["command"] == "hl" and got["n"] == 300


@pytest.mark.slow
def test_quantiles_of_bank_age_deployed_over_4_hosts_equal_ustat_quantile(tmp_path, capsys):
    if not os.path.exists(BANK):
        pytest.skip("../shared/data/bank/bank.csv is absent")
    d = str(tmp_path / "dep")
    args = ECDF + ["--thresholds", "78", "--q", "0.25,0.5,0.75"]
    init(d, 4521, job_from_command(["quantile", *args], 4521), hosts=4, base_port=_ports(),
         keys=LOCAL, insecure=True)
    got = _deploy_cli(d, BANK)
    want = _local("quantile", BANK, args + ["--verify-keys"], capsys)
    for key in ("quantiles", "quantile_ci", "communication", "account", "n"):
        assert got[key] == want[key], key
    assert len(got["participants"]) == 8                     # 4 hosts, 2 servers, analyst, relay
    assert got["wire"]["overhead_ratio"] < 0.10
    # against numpy on the raw column: within the released intervals' grid
    from ustat.data import load_csv
    x = load_csv(BANK, ["age"])[0][:, 0]
    exact = np.quantile(x, [0.25, 0.5, 0.75], method="inverted_cdf")
    lo, hi = np.array(got["quantile_ci"]).T
    assert np.all((lo <= exact) & (exact <= hi))


@pytest.mark.parametrize("command, kind, data", [
    (["ecdf", "--column", "age", "--bounds", "18:95", "--thresholds", "24", "--smooth", "l2",
      "--seed", "3"], "ECDFSpec", {"columns": "age"}),
    (["quantile", "--column", "age", "--bounds", "18:95", "--q", "0.5", "--noise", "mpc"],
     "QuantileSpec", {"columns": "age"}),
    (["roc", "--score", "duration", "--label", "y", "--positive", "yes", "--bounds", "0:3100",
      "--epsilon", "20"], "ROCSpec", {"columns": "duration,y", "positive": "yes"}),
    (["hl", "--prob", "p", "--label", "y", "--groups", "5", "--thresholds", "64", "--sep", ";"],
     "HLSpec", {"columns": "p,y", "sep": ";"}),
])
def test_a_deployment_stores_the_spec_its_flags_build(tmp_path, command, kind, data):
    """deploy.toml [run.spec] is the spec of the command's flags (what every participant builds
    its program from); [run.data] the columns each host reads; no command line is stored."""
    import ustat.specs as specs

    job = job_from_command(command, 300)
    assert type(job.spec).__name__ == kind and job.command == command[0]
    cfg = init(str(tmp_path / "dep"), 300, job, hosts=2, base_port=_ports(), insecure=True,
               keys=LOCAL)
    assert cfg.spec() == job.spec and isinstance(cfg.spec(), getattr(specs, kind))
    assert "args" not in cfg.run and {k: cfg.run["data"][k] for k in data} == data
    text = (tmp_path / "dep" / "deploy.toml").read_text()
    assert "[run.spec.privacy]" in text and "[run.spec.execution]" in text


def test_a_thresholds_file_is_read_at_init(tmp_path):
    grid = tmp_path / "ages.txt"
    grid.write_text("20\n30\n40\n65\n95\n")
    job = job_from_command(["quantile", "--column", "age", "--bounds", "18:95", "--thresholds",
                            str(grid), "--q", "0.5"], 100)
    assert job.spec.design.thresholds == (20.0, 30.0, 40.0, 65.0, 95.0)
    for argv, why in ((["ecdf", "--column", "age", "--bounds", "18:95", "--plot", "a.png"],
                       "--plot"),
                      (["ecdf", "--column", "age", "--bounds", "18:95", "--thresholds", "0"],
                       "N = 0"),
                      (["roc", "--score", "y", "--label", "y", "--bounds", "0:1"], "must differ")):
        with pytest.raises(ValueError, match=why):
            job_from_command(argv, 100)
