"""A budget across deployed runs (issue 36, item 6): the releasing role's ledger, the hosts'
salted commitments to their rows.

Each deployment runs every participant in a thread of this process (plain TCP on loopback,
:mod:`tests.ustat.deploy_threads`); 12 parties on 2 hosts (4 with a host absent), a dealer,
an aggregator, a relay.
"""

import hashlib
import json
import os

import pytest

import tests.ustat.deploy_threads as threads
import ustat.deploy.participant as participant
from tests.ustat.deploy_threads import run_threads
from ustat.cli.common import UsageError
from ustat.cli.deploy import job_from_command
from ustat.data.identity import canonical_column, rows_key
from ustat.deploy import Keys, init, load
from ustat.deploy.budget import host_commitment, host_salt, identity_keys

from .test_deploy import _ports

N = 12
KENDALL = ["estimate", "kendall", "--columns", "x,y", "--bounds", "0:100,0:100", "--epsilon",
           "1"]


def _rows(shift=0.0, every=False):
    return [(round(11.0 + 7.3 * i + shift * (every or i == 9), 4), round(93.1 - 6.7 * i, 4))
            for i in range(N)]


def _files(tmp_path, rows, tag=""):
    """host-0 holds rows 0-5, host-1 rows 6-11 (each a file of its own rows)."""
    out = {}
    for h, part in enumerate((rows[:6], rows[6:])):
        p = tmp_path / f"host-{h}{tag}.csv"
        p.write_text("x,y\n" + "".join(f"{x},{y}\n" for x, y in part))
        out[f"host-{h}"] = str(p)
    return out


def _deployment(tmp_path, total):
    d = str(tmp_path / "dep")
    job = job_from_command([*KENDALL, "--budget-file", "ledger.json", "--budget-total",
                            str(total)], N)
    init(d, N, job, hosts=2, base_port=_ports(), keys=Keys(local=True), timeout=20.0,
         connect_timeout=20.0)
    return d


@pytest.fixture
def computed(monkeypatch):
    """The names of the participants whose program started (after the budget's gate)."""
    seen: list = []
    real = participant.Place

    def place(rt, *a):
        seen.append(rt.rank)
        return real(rt, *a)
    monkeypatch.setattr(participant, "Place", place)
    return seen


def _spends(d):
    with open(os.path.join(d, "ledger.json")) as f:
        doc = json.load(f)
    return [[s["status"] for s in e["spends"]] for e in doc["datasets"].values()]


def test_a_rerun_on_the_same_rows_shares_the_budget_and_is_refused_before_computing(
        tmp_path, computed):
    """Two runs on the same rows: the second is refused by the aggregator before anyone
    computes; so is a run sharing one host's rows (issue 36: a run without a host, or with
    another host's rows changed, shares the budget); every host's rows changed is another
    data set."""
    d = _deployment(tmp_path, total=1.0)
    files = _files(tmp_path, _rows())
    out, errs, _ = run_threads(d, files, salt_dir=str(tmp_path))
    assert not errs, errs
    assert out["aggregator"]["release"]["estimate"] is not None
    assert _spends(d) == [["spent"]]
    computed.clear()
    out, errs, _ = run_threads(d, files, salt_dir=str(tmp_path))
    assert isinstance(errs["aggregator"], UsageError)
    assert "spent 1 of 1" in str(errs["aggregator"])
    for host in ("host-0", "host-1", "dealer"):         # told why, by the aggregator
        assert "spent 1 of 1" in str(errs[host]), errs[host]
    assert computed == []                               # nobody computed
    assert _spends(d) == [["spent"]]                    # nothing more charged
    # one row of host-1 changed: host-0's rows are the same records, so the same budget
    _, errs, _ = run_threads(d, _files(tmp_path, _rows(shift=0.5), "b"),
                             salt_dir=str(tmp_path))
    assert "spent 1 of 1" in str(errs["aggregator"])
    assert _spends(d) == [["spent"]]
    # every host's rows changed: another data set, with a budget of its own
    _, errs, _ = run_threads(d, _files(tmp_path, _rows(shift=0.5, every=True), "c"),
                             salt_dir=str(tmp_path))
    assert not errs, errs
    assert sorted(_spends(d)) == [["spent"], ["spent"]]


def test_a_run_that_fails_after_the_go_ahead_stays_charged(tmp_path, monkeypatch):
    """host-1 dies once the run is under way (after the go-ahead: noise may have been drawn):
    no release, and the reservation stays charged."""
    d = _deployment(tmp_path, total=3.0)
    real = participant.Place
    host1 = [p.name for p in load(d).ranked].index("host-1")

    def place(rt, *a):
        if rt.rank == host1:
            raise ConnectionError("host-1 lost its power")
        return real(rt, *a)
    monkeypatch.setattr(participant, "Place", place)
    _, errs, charge = run_threads(d, _files(tmp_path, _rows()), salt_dir=str(tmp_path))
    assert "aggregator" in errs and "host-1" in errs
    assert charge is not None and charge.started
    assert _spends(d) == [["spent"]]


def test_the_ledger_holds_no_record_value_and_no_unsalted_digest(tmp_path):
    d = _deployment(tmp_path, total=2.0)
    rows = _rows()
    files = _files(tmp_path, rows)
    _, errs, _ = run_threads(d, files, salt_dir=str(tmp_path))
    assert not errs, errs
    with open(os.path.join(d, "ledger.json")) as f:
        text = f.read()
    for x, y in rows:
        assert str(x) not in text and str(y) not in text
    digests = []
    commitments = []
    for h, part in enumerate((rows[:6], rows[6:])):
        cols = [canonical_column([r[c] for r in part]) for c in (0, 1)]
        digests.append(rows_key(cols))
        digests += [hashlib.sha256(f"{x},{y}".encode()).hexdigest() for x, y in part]
        c = host_commitment(files[f"host-{h}"], range(6), {"columns": "x,y"},
                            host_salt(str(tmp_path / f"host-{h}.salt")))
        commitments.append(c)
        digests += [c[:32].hex(), c[32:].hex()]
    digests += [k.split(":", 1)[1] for k in identity_keys(commitments)]
    for dg in digests:
        assert dg not in text
    assert os.stat(tmp_path / "host-0.salt").st_mode & 0o777 == 0o600


@pytest.mark.slow
def test_ustat_processes_charge_the_release_and_a_host_killed_mid_run_leaves_it_charged(
        tmp_path):
    """Every participant its own `ustat serve` / `ustat party` process: the release reports
    its budget; then host-1 is killed (SIGKILL) once the run is charged: no release, and the
    ledger keeps the run's spend."""
    import signal

    from ustat.deploy import DeployError, run_local

    from .test_deploy import _bank_rows, _wait_for

    csv = _bank_rows(tmp_path, 200)             # a run that lasts beyond the kill
    d = str(tmp_path / "dep")
    job = job_from_command(["estimate", "kendall", "--columns", "age,balance", "--bounds",
                            "18:95,-8019:102127", "--epsilon", "1", "--budget-file",
                            "ledger.json", "--budget-total", "3"], 200)
    init(d, 200, job, hosts=2, base_port=_ports(), keys=Keys(local=True), timeout=5.0,
         connect_timeout=30.0)
    got = run_local(d, csv)["release"]
    assert got["budget"]["spent"] == 1.0 and got["budget"]["total"] == 3.0

    def kill(procs, logs):
        _wait_for(logs, "host-1", "charged to the deployment's budget")
        os.kill(procs["host-1"].pid, signal.SIGKILL)

    with pytest.raises(DeployError):
        run_local(d, csv, on_start=kill, grace=10.0)
    assert _spends(d) == [["spent", "spent"]]


# -- a host absent at start (issue 36 item 5): charged to the present hosts' commitments --

def _files_of_four(tmp_path):
    """12 rows on 4 hosts: host-h holds rows 3h..3h+2, each in a file of its own rows."""
    rows = [(round(11.0 + 7.3 * i, 4), round(93.1 - 6.7 * i, 4)) for i in range(N)]
    out = {}
    for h in range(4):
        p = tmp_path / f"host-{h}.csv"
        p.write_text("x,y\n" + "".join(f"{x},{y}\n" for x, y in rows[3 * h:3 * h + 3]))
        out[f"host-{h}"] = str(p)
    return out


def _ledger(d):
    """(the ledger's data sets, its salt)."""
    with open(os.path.join(d, "ledger.json")) as f:
        doc = json.load(f)
    with open(os.path.join(d, "ledger.json.salt"), "rb") as f:
        return doc["datasets"], f.read()


@pytest.fixture
def absent(monkeypatch):
    """Participants named here never start (switched off): a dropout at ``start``."""
    names: set = set()
    real = threads.run_participant

    def run(cfg, name, *a, **kw):
        if name in names:
            raise ConnectionRefusedError(f"{name} is switched off")
        return real(cfg, name, *a, **kw)
    monkeypatch.setattr(threads, "run_participant", run)
    return names


@pytest.mark.slow         # four runs, three of them waiting connect_timeout for the absent host
def test_a_run_without_an_absent_host_is_charged_to_the_present_hosts_commitments(
        tmp_path, absent, computed):
    from noise.budget_file import _salted

    d = str(tmp_path / "dep")
    job = job_from_command([*KENDALL, "--budget-file", "ledger.json", "--budget-total", "3"],
                           N)
    init(d, N, job, hosts=4, base_port=_ports(), keys=Keys(local=True), timeout=20.0,
         connect_timeout=3.0)
    files = _files_of_four(tmp_path)
    absent.add("host-2")
    out, errs, charge = run_threads(d, files, salt_dir=str(tmp_path))
    assert set(errs) == {"host-2"}, errs
    rel = out["aggregator"]["release"]
    assert rel["dropouts"] == {"parties_lost": 3, "edges_lost": rel["dropouts"]["edges_lost"],
                               "step": "start"}
    assert rel["n"] == 9
    assert charge is not None and charge.started
    assert _spends(d) == [["spent"]]
    # keyed to the commitments of the hosts present (0, 1, 3), in participant order
    present = [host_commitment(files[h], range(3), {"columns": "x,y"},
                               host_salt(str(tmp_path / f"{h}.salt")))
               for h in ("host-0", "host-1", "host-3")]
    (entry,) = _ledger(d)[0].values()
    salt = _ledger(d)[1]
    assert set(entry["keys"]) == {_salted(salt, k) for k in identity_keys(present)}
    # a rerun over the same hosts' rows (host-2 absent again): the same budget
    out, errs, _ = run_threads(d, files, salt_dir=str(tmp_path))
    assert set(errs) == {"host-2"}, errs
    assert _spends(d) == [["spent", "spent"]]
    # every host present: host-0, host-1 and host-3's rows are among its records: shared
    absent.clear()
    out, errs, _ = run_threads(d, files, salt_dir=str(tmp_path))
    assert not errs, errs
    assert out["aggregator"]["release"]["n"] == N
    assert _spends(d) == [["spent"] * 3]
    # spent 3 of 3: refused before anyone computes, host-2 absent or not
    absent.add("host-2")
    computed.clear()
    _, errs, _ = run_threads(d, files, salt_dir=str(tmp_path))
    assert isinstance(errs["aggregator"], UsageError)
    assert "spent 3 of 3" in str(errs["aggregator"])
    assert computed == []
