"""Protocol 3.1 with its parties and roles in several processes: the simulator's bits, for real.

Seeded runs must release the same bits, count the same traffic and record
the same views for P = 1 (the simulator), 2 and 3 processes; secure runs
(no seed: every process has its own streams, so rows a process lacks are
really junk) must still compute the right statistic; what the sockets
carried must be the counted bits plus framing.
"""

import math

import numpy as np
import pytest

from mpc.run.launch import launch
from mpc.session import Session
from tests.api import flat_umpc
from ustat.executors import LocalProcesses
from ustat.specs import UMPCSpec
from ustat.umpc import run_umpc

from ..conftest import shared_data

RNG = np.random.default_rng(7)
X = RNG.random((40, 2))


def _release(r):
    return (r.estimate, r.u_hat, r.aux["noisy_sums"], r.communication)


@pytest.mark.parametrize("kernel, threat_model", [("kendall", "dis"), ("gini", "hf"),
                                                  ("auc", "dis")])
@pytest.mark.parametrize("P", [2, 3])
def test_seeded_runs_release_the_same_bits_for_any_number_of_processes(kernel, threat_model, P):
    data = X.copy() if kernel != "gini" else X[:, :1].copy()
    if kernel == "auc":
        data[:, 1] = (data[:, 1] > 0.5).astype(float)
    kw = dict(epsilon=1.0, seed=3, threat_model=threat_model)
    sim = flat_umpc(data, kernel, **kw)
    got = flat_umpc(data, kernel, processes=P, **kw)
    assert got.released and got.processes == min(P, len(got.process_costs))
    assert _release(got) == _release(sim)
    assert got.ci == sim.ci and got.noise_std == sim.noise_std


def _views_program(rt, records, seed, threat_model="dis"):
    s = Session(records.shape[0], seed=seed, runtime=rt, record_views=True, bits=40,
                frac_bits=14)
    res = flat_umpc(records, "kendall", session=s, epsilon=1.0, threat_model=threat_model)
    views = {p: [(r.phase, r.round, r.offline, r.sender, np.asarray(r.payload).tolist())
                 for r in s.net.view(p)] for p in range(s.net.size) if s.is_local(p)}
    return (res.estimate if res.released else None), s.net.report(), views


@pytest.mark.parametrize("threat_model", ["dis", "hf"])
def test_every_party_sees_in_a_run_across_processes_what_it_sees_in_the_simulator(threat_model):
    records = X[:12]
    sim = _views_program(None, records, 9, threat_model)
    groups = [[range(6)], [range(6, 12)], ["dealer"], ["aggregator"]]
    res = launch(_views_program, records, 9, threat_model, groups=groups)
    seen = set()
    for r in res:
        if r.value[0] is not None:
            assert r.value[0] == sim[0]
        assert r.value[1] == sim[1]
        for party, view in r.value[2].items():
            assert view == sim[2][party], party
            seen.add(party)
    assert seen == set(range(12 + 2))            # every party and role compared once


@pytest.mark.parametrize("threat_model", ["dis", "hf"])
def test_secure_runs_compute_the_complete_statistic(threat_model):
    """No seed, epsilon inf, all edges: the release must be the exact complete U-statistic."""
    records = X[:16, :1]
    exact = flat_umpc(records, "gini", epsilon=math.inf, edges="all", seed=1,
                     evaluate=True).evaluation["exact_encoded"]
    got = flat_umpc(records, "gini", epsilon=math.inf, edges="all", processes=3,
                   threat_model=threat_model)
    assert got.insecure_seed is False
    assert got.u_hat == pytest.approx(exact, abs=2.0**-13)
    noisy = flat_umpc(records, "gini", epsilon=1.0, edges="all", processes=3,
                     threat_model=threat_model)
    assert abs(noisy.estimate - exact) < 50 * noisy.noise_std      # noise, not garbage


def test_secure_runs_agree_on_public_randomness_with_class_counts():
    """AUC's class counts are masked on a public cycle: every process must draw the same one."""
    data = X[:20].copy()
    data[:, 1] = (data[:, 1] > 0.5).astype(float)
    exact = flat_umpc(data, "auc", epsilon=math.inf, edges="all", seed=1).estimate
    got = flat_umpc(data, "auc", epsilon=math.inf, edges="all", processes=4)
    assert got.estimate == pytest.approx(exact, abs=1e-9)


def test_socket_bytes_are_the_counted_bits_plus_framing():
    """Parties, dealer and aggregator each in their own process: every message crosses."""
    records = X[:10]
    groups = [[i] for i in range(10)] + [["dealer"], ["aggregator"]]
    got = run_umpc(records, UMPCSpec.of("kendall", epsilon=1.0, seed=2),
                   LocalProcesses(groups=tuple(groups)))
    counted = got.online_bits + got.offline_bits
    payload = sum(p["wire"]["payload_bytes_sent"] for p in got.process_costs)
    frames = sum(p["wire"]["frames_sent"] for p in got.process_costs)
    header = sum(p["wire"]["header_bytes_sent"] for p in got.process_costs)
    assert counted / 8 <= payload < counted / 8 + frames
    assert header >= 42 * frames


def test_runs_across_processes_refuse_what_they_cannot_do():
    with pytest.raises(ValueError, match="evaluate reads every record"):
        flat_umpc(X[:, :1], "gini", processes=2, evaluate=True)
    with pytest.raises(ValueError, match="do not pass session"):
        flat_umpc(X[:, :1], "gini", processes=2, session=Session(40))
    with pytest.raises(ValueError, match="positive integer"):
        flat_umpc(X[:, :1], "gini", processes=0)


@pytest.mark.slow
def test_kendall_on_bank_releases_the_same_bits_with_1_2_and_4_processes():
    """Issue 26's acceptance: 4521 parties, age and balance, epsilon 1, one debug seed."""
    import csv
    with open(shared_data("bank", "bank.csv")) as f:
        rows = list(csv.DictReader(f, delimiter=";"))
    data = np.array([[float(r["age"]), float(r["balance"])] for r in rows])
    kw = dict(epsilon=1.0, seed=11, bounds=[(18, 95), (-8019, 102127)])
    sim = flat_umpc(data, "kendall", **kw)
    for P in (2, 4):
        got = flat_umpc(data, "kendall", processes=P, **kw)
        assert _release(got) == _release(sim)
        payload = sum(p["wire"]["payload_bytes_sent"] for p in got.process_costs)
        header = sum(p["wire"]["header_bytes_sent"] for p in got.process_costs)
        assert header <= 0.05 * payload
