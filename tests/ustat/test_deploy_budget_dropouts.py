"""A budget across deployed runs with a party host absent (issue 36, items 5 and 6).

A host that never joins is a dropout (:mod:`ustat.umpc.dropouts`); the run is still
charged before anyone computes, to the data set the *present* hosts' commitments name
(:mod:`ustat.deploy.budget`), so a rerun over the same hosts' rows, with or without the
absent host, shares that budget. Every participant runs in a thread of this process
(plain TCP on loopback, :mod:`tests.ustat.deploy_threads`); 12 parties on 4 hosts of 3
(max_dropouts 3: one host may be absent), a dealer, an aggregator, a relay.
"""

import json
import os

import pytest

import tests.ustat.deploy_threads as threads
import ustat.deploy.participant as participant
from tests.ustat.deploy_threads import run_threads
from ustat.cli.common import UsageError
from ustat.cli.deploy import job_from_command
from ustat.deploy import Keys, init
from ustat.deploy.budget import host_commitment, host_salt, identity_keys

from .test_deploy import _ports

N, HOSTS = 12, 4
KENDALL = ["estimate", "kendall", "--columns", "x,y", "--bounds", "0:100,0:100", "--epsilon",
           "1"]


def _files(tmp_path):
    """host-h holds rows 3h..3h+2, each in a file of its own rows."""
    rows = [(round(11.0 + 7.3 * i, 4), round(93.1 - 6.7 * i, 4)) for i in range(N)]
    out = {}
    for h in range(HOSTS):
        p = tmp_path / f"host-{h}.csv"
        p.write_text("x,y\n" + "".join(f"{x},{y}\n" for x, y in rows[3 * h:3 * h + 3]))
        out[f"host-{h}"] = str(p)
    return out


def _ledger(d):
    with open(os.path.join(d, "ledger.json")) as f:
        doc = json.load(f)
    with open(os.path.join(d, "ledger.json.salt"), "rb") as f:
        salt = f.read()
    return doc["datasets"], salt


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


@pytest.fixture
def computed(monkeypatch):
    """The ranks whose program started (after the budget's gate)."""
    seen: list = []
    real = participant.Place

    def place(rt, *a):
        seen.append(rt.rank)
        return real(rt, *a)
    monkeypatch.setattr(participant, "Place", place)
    return seen


@pytest.mark.slow         # four runs, three of them waiting connect_timeout for the absent host
def test_a_run_without_an_absent_host_is_charged_to_the_present_hosts_commitments(
        tmp_path, absent, computed):
    from noise.budget_file import _salted

    d = str(tmp_path / "dep")
    job = job_from_command([*KENDALL, "--budget-file", "ledger.json", "--budget-total", "3"],
                           N)
    init(d, N, job, hosts=HOSTS, base_port=_ports(), keys=Keys(local=True), timeout=20.0,
         connect_timeout=3.0)
    files = _files(tmp_path)
    absent.add("host-2")
    out, errs, charge = run_threads(d, files, salt_dir=str(tmp_path))
    assert set(errs) == {"host-2"}, errs
    rel = out["aggregator"]["release"]
    assert rel["dropouts"] == {"parties_lost": 3, "edges_lost": rel["dropouts"]["edges_lost"],
                               "step": "start"}
    assert rel["n"] == 9
    assert charge is not None and charge.started
    sets, salt = _ledger(d)
    assert [[s["status"] for s in e["spends"]] for e in sets.values()] == [["spent"]]
    # keyed to the commitments of the hosts present (0, 1, 3), in participant order
    present = [host_commitment(files[h], range(3), {"columns": "x,y"},
                               host_salt(str(tmp_path / f"{h}.salt")))
               for h in ("host-0", "host-1", "host-3")]
    (entry,) = sets.values()
    assert set(entry["keys"]) == {_salted(salt, k) for k in identity_keys(present)}
    # a rerun over the same hosts' rows (host-2 absent again): the same budget
    out, errs, _ = run_threads(d, files, salt_dir=str(tmp_path))
    assert set(errs) == {"host-2"}, errs
    sets, _ = _ledger(d)
    assert [[s["status"] for s in e["spends"]] for e in sets.values()] == [["spent", "spent"]]
    # every host present: host-0, host-1 and host-3's rows are among its records: shared
    absent.clear()
    out, errs, _ = run_threads(d, files, salt_dir=str(tmp_path))
    assert not errs, errs
    assert out["aggregator"]["release"]["n"] == N
    sets, _ = _ledger(d)
    assert [[s["status"] for s in e["spends"]] for e in sets.values()] == [["spent"] * 3]
    # spent 3 of 3: refused before anyone computes, host-2 absent or not
    absent.add("host-2")
    computed.clear()
    _, errs, _ = run_threads(d, files, salt_dir=str(tmp_path))
    assert isinstance(errs["aggregator"], UsageError)
    assert "spent 3 of 3" in str(errs["aggregator"])
    assert computed == []
