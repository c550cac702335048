"""Dropouts in a deployed ECDF family run (issue 36 item 5): parties whose keys did not reach
both servers are left out, up to ``max_dropouts``.

Four party hosts of 10 parties (the default bound: floor(39 / 3) = 13, one host), two servers,
the analyst and the relay, each its own process (:func:`ustat.deploy.run_local`). A host is
lost before it joins (killed at start), or by the test hook ``USTAT_TEST_VANISH``
(:mod:`ustat.deploy.participant`): it kills itself with SIGKILL at its first exchange with
server-0 after joining (its key upload), before anything is sent, between its two sends
(server-0 got its keys, server-1 did not) or after the upload. The two-world tests: with the
same seed, the release with a dropout is, bit for bit, what ``ustat quantile`` / ``ustat
roc`` release on the kept parties' rows (the noise is drawn per tree node before any key
arrives and does not depend on n, so the seed's stream is the same in both worlds).
"""

import json
import os
import signal

import pytest

pytest.importorskip("cryptography")

from ustat.cli import main
from ustat.cli.deploy import job_from_command
from ustat.deploy import DeployError, init, run_local

from .test_deploy import LOCAL, _bank_rows, _ports

N, HOSTS = 40, 4
QUANTILE = ["quantile", "--column", "age", "--bounds", "18:95", "--thresholds", "16", "--q",
            "0.5", "--epsilon", "30", "--seed", "3"]
ROC = ["roc", "--score", "duration", "--label", "y", "--positive", "yes", "--bounds", "0:3100",
       "--thresholds", "8", "--epsilon", "20", "--seed", "4"]
LOST = range(20, 30)                        # host-2's parties


def _deployment(tmp_path, command, connect_timeout=30.0):
    csv = _bank_rows(tmp_path, N)
    d = str(tmp_path / "dep")
    init(d, N, job_from_command(command, N), hosts=HOSTS, base_port=_ports(), insecure=True,
         keys=LOCAL, connect_timeout=connect_timeout)
    return d, csv


def _hook(value):
    return dict(os.environ, USTAT_TEST_VANISH=value)


def _simulated(tmp_path, command, csv, capsys, lost=()):
    """What the one-process command releases on ``csv``'s rows without the parties ``lost``
    (with the key check, as deployed by default, unless ``command`` says otherwise)."""
    with open(csv) as f:
        head, *rows = f.readlines()
    kept = tmp_path / "kept.csv"
    kept.write_text(head + "".join(r for i, r in enumerate(rows) if i not in lost))
    capsys.readouterr()
    verify = [] if "--no-verify-keys" in command else ["--verify-keys"]
    assert main([*command, "--csv", str(kept), "--json", "--no-progress", *verify]) == 0
    return json.loads(capsys.readouterr().out)


def _same(got, want, keys):
    for key in keys:
        assert got[key] == want[key], key


QUANTILE_KEYS = ("quantiles", "quantile_ci", "quantiles_interpolated", "n", "account")
ROC_KEYS = ("auc", "auc_ci", "fpr", "tpr", "roc_band", "n_pos_noisy", "n_neg_noisy", "n",
            "account")


@pytest.mark.slow
def test_a_host_that_never_joins_is_left_out_of_the_quantiles(tmp_path, capsys):
    """host-2 killed at start: the others go on without it after connect_timeout, the servers
    agree in a round of their own (keys not verified here), and the release is ``ustat
    quantile``'s on the other 30 rows, bit for bit."""
    command = [*QUANTILE, "--no-verify-keys"]
    d, csv = _deployment(tmp_path, command, connect_timeout=30.0)

    def inject(procs, logs):
        os.kill(procs["host-2"].pid, signal.SIGKILL)

    out = run_local(d, csv, on_start=inject, grace=10.0)
    rel = out["release"]
    assert rel["dropouts"] == {"parties_lost": 10, "step": "start"}
    want = _simulated(tmp_path, command, csv, capsys, LOST)
    _same(rel, want, QUANTILE_KEYS)
    assert rel["n"] == 30 and "keys_dropped" not in rel["account"]
    phases = rel["communication"]["phases"]
    assert phases["ecdf keys held"]["offline"]["rounds"] == 1       # the servers' agreement
    assert "ecdf keys held" not in want["communication"]["phases"]
    assert [p["name"] for p in out["participants"] if p.get("dropped")] == ["host-2"]


@pytest.mark.slow
@pytest.mark.parametrize("when", ["between", "after"])
def test_a_host_lost_at_an_upload_is_left_out_of_both_roc_classes(tmp_path, capsys, when):
    """host-2 lost between its two sends of the first class's keys (server-0 got them,
    server-1 did not: the servers agree to leave it out, and server-0 discards its keys
    unopened), or after that upload and before the second class's (the first class then
    leaves it out too, so both curves count the same parties): ``ustat roc``'s release on the
    other 30 rows, bit for bit."""
    d, csv = _deployment(tmp_path, ROC)
    out = run_local(d, csv, env=_hook(f"host-2:{when}:server-0"), grace=10.0)
    rel = out["release"]
    assert rel["dropouts"] == {"parties_lost": 10, "step": "upload"}
    want = _simulated(tmp_path, ROC, csv, capsys, LOST)
    _same(rel, want, ROC_KEYS)
    assert rel["account"]["keys_dropped"] == 0           # nothing counted as malformed
    assert [p["name"] for p in out["participants"] if p.get("dropped")] == ["host-2"]
    got_bytes = {p["name"]: p["wire"]["payload_bytes_received"] for p in out["participants"]
                 if p["name"].startswith("server")}
    if when == "between":           # server-0 received host-2's first keys, server-1 did not
        assert got_bytes["server-0"] > got_bytes["server-1"]
    else:                           # both received them (then host-2 was lost)
        assert got_bytes["server-0"] == got_bytes["server-1"]
    # the servers agreed within the key check's own exchanges: no phase, no round more
    got_c, want_c = rel["communication"], want["communication"]
    assert set(got_c["phases"]) == set(want_c["phases"])
    assert got_c["offline_rounds"] == want_c["offline_rounds"]


@pytest.mark.slow
def test_a_host_lost_after_its_keys_reached_both_servers_changes_nothing(tmp_path, capsys):
    """host-2 killed once its keys are at both servers: the quantiles are for all 40 parties,
    ``ustat quantile``'s bit for bit, with no ``dropouts``."""
    d, csv = _deployment(tmp_path, QUANTILE)
    out = run_local(d, csv, env=_hook("host-2:after:server-0"), grace=10.0)
    rel = out["release"]
    assert "dropouts" not in rel and rel["n"] == N
    _same(rel, _simulated(tmp_path, QUANTILE, csv, capsys), QUANTILE_KEYS)
    assert [p["name"] for p in out["participants"] if p.get("dropped")] == ["host-2"]


@pytest.mark.slow
def test_a_loss_beyond_max_dropouts_ends_the_run_with_no_release(tmp_path):
    d, csv = _deployment(tmp_path, QUANTILE)
    with pytest.raises(DeployError) as e:           # 20 parties > floor(39 / 3) = 13
        run_local(d, csv, env=_hook("host-1,host-2:before:server-0"), grace=10.0)
    assert "20 of 40 parties' keys did not reach both servers, more than max_dropouts = 13" \
        in str(e.value)
    assert e.value.statuses["analyst"] != 0


@pytest.mark.slow
def test_a_server_that_vanishes_ends_the_run_naming_it(tmp_path):
    """Two-server model: server-1 lost at the upload round (it sends its key check coin to
    server-0 there): no release, and the error names server-1."""
    d, csv = _deployment(tmp_path, QUANTILE)
    with pytest.raises(DeployError) as e:
        run_local(d, csv, env=_hook("server-1:before:server-0"), grace=10.0)
    assert e.value.statuses["analyst"] != 0 and e.value.statuses["server-0"] != 0
    assert "server-1" in e.value.errors["server-0"]
    assert "server-1" in e.value.errors["analyst"]


@pytest.mark.slow
def test_a_host_lost_before_its_hl_sums_is_left_out_of_the_sums(tmp_path, capsys, monkeypatch):
    """``hl`` (keys verified, the deployed default): host-1 killed once its keys reached both
    servers, so it is lost at the HL sums (its shares never sent): the servers agree within
    the input check's first round and leave it out. Two worlds: ``ustat hl`` in one process
    with the same loss injected after the group edges (the tree counts all 40, the sums 30)."""
    from .ecdf.test_dropouts import P, Y, _Loss

    csv = tmp_path / "calibrated.csv"
    csv.write_text("p,y\n" + "".join(f"{a:.6f},{b}\n" for a, b in zip(P, Y)))
    command = ["hl", "--prob", "p", "--label", "y", "--groups", "3", "--thresholds", "16",
               "--epsilon", "40", "--seed", "6"]
    d = str(tmp_path / "dep")
    init(d, N, job_from_command(command, N), hosts=HOSTS, base_port=_ports(), insecure=True,
         keys=LOCAL)
    out = run_local(d, str(csv), env=_hook("host-1:after:server-0"), grace=10.0)
    rel = out["release"]
    assert rel["dropouts"] == {"parties_lost": 10, "step": "sums"} and rel["n"] == 30
    assert rel["account"]["inputs_dropped"] == 0 and rel["account"]["keys_dropped"] == 0
    assert [p["name"] for p in out["participants"] if p.get("dropped")] == ["host-1"]
    from ustat.ecdf import hosmer_lemeshow as hl_module
    loss = _Loss(monkeypatch)
    edges = hl_module._edges
    monkeypatch.setattr(hl_module, "_edges", lambda *a: (edges(*a), loss.lose())[0])
    capsys.readouterr()
    assert main([*command, "--csv", str(csv), "--json", "--no-progress", "--verify-keys"]) == 0
    want = json.loads(capsys.readouterr().out)
    _same(rel, want, ("statistic", "p_value", "edges", "table", "df"))
    assert want["account"]["dropouts"] == rel["dropouts"]


@pytest.mark.slow
def test_a_host_lost_between_its_pointwise_answers_is_left_out_of_the_ecdf(tmp_path, capsys):
    """The pointwise backend: host-2 killed between its shares to server-0 and to server-1
    (server-0 received them): the servers agree in a round of their own (phase ``ecdf pointwise
    held``) and open the sums of the other 30 parties only: ``ustat ecdf`` on their rows, bit
    for bit."""
    command = ["ecdf", "--column", "age", "--bounds", "18:95", "--thresholds", "16",
               "--epsilon", "30", "--seed", "3", "--backend", "pointwise"]
    d, csv = _deployment(tmp_path, command)
    out = run_local(d, csv, env=_hook("host-2:between:server-0"), grace=10.0)
    rel = out["release"]
    assert rel["dropouts"] == {"parties_lost": 10, "step": "query"}
    want = _simulated(tmp_path, [*command, "--no-verify-keys"], csv, capsys, LOST)
    _same(rel, want, ("ecdf", "noisy_counts", "intervals", "n"))
    assert rel["n"] == 30
    assert rel["communication"]["phases"]["ecdf pointwise held"]["offline"]["rounds"] == 1
    assert [p["name"] for p in out["participants"] if p.get("dropped")] == ["host-2"]
    got_bytes = {p["name"]: p["wire"]["payload_bytes_received"] for p in out["participants"]
                 if p["name"].startswith("server")}
    assert got_bytes["server-0"] > got_bytes["server-1"]
