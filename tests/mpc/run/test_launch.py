"""The launcher: one program in several processes; faults stop every process with a named error."""

import os
import time

import numpy as np
import pytest

from mpc.arith.sharing import additive_share
from mpc.protocols.beaver import multiply, open_shares
from mpc.run.launch import LaunchError, launch
from mpc.session import Session

H = np.array([0, 1])


def _multiply(rt, x, y, seed, views=False):
    """Two parties share x and y, multiply (Beaver, dealer triples) and open the product."""
    s = Session(2, seed=seed, runtime=rt, roles=("dealer",), record_views=views)
    ring, net = s.ring, s.net
    with net.phase("input"), net.round():
        xs = additive_share(ring, x, 2, s.party_rng(0))
        ys = additive_share(ring, y, 2, s.party_rng(1))
        net.send(0, 1, xs[1], ring.bits)
        net.send(1, 0, ys[0], ring.bits)
    z = multiply(s, xs, ys, H)
    out = open_shares(s, z, H)
    seen = {p: [(r.phase, r.round, r.offline, r.sender, np.asarray(r.payload).tolist())
                for r in net.view(p)] for p in range(3) if views and s.is_local(p)}
    return (out.tolist() if s.is_local(0) or s.is_local(1) else None), net.report(), seen


X = np.arange(6, dtype=np.uint64) + 3
Y = np.arange(6, dtype=np.uint64) * 7


def test_three_processes_compute_what_the_simulator_computes_with_the_same_traffic_and_views():
    sim = _multiply(None, X, Y, 7, True)
    assert sim[0] == (X * Y).tolist()
    res = launch(_multiply, X, Y, 7, True, groups=[[0], [1], ["dealer"]])
    assert [r.rank for r in res] == [0, 1, 2]
    assert res[0].value[0] == res[1].value[0] == sim[0] and res[2].value[0] is None
    for r in res:
        assert r.value[1] == sim[1]                         # every process counts everything
        for party, view in r.value[2].items():
            assert view == sim[2][party]                    # each local party's view
    # every message crossed processes: payload bytes = counted bits / 8 (byte per frame at most)
    counted = sim[1]["total_bits"]
    sent = sum(r.wire["payload_bytes_sent"] for r in res)
    frames = sum(r.wire["frames_sent"] for r in res)
    assert counted / 8 <= sent < counted / 8 + frames
    assert all(r.wire["header_bytes_sent"] > 0 for r in res)


def test_secure_randomness_still_gives_the_right_product():
    """Without a seed each process has its own streams: junk rows are really junk."""
    res = launch(_multiply, X, Y, None, groups=[[0], [1], ["dealer"]])
    assert res[0].value[0] == (X * Y).tolist() == res[1].value[0]


def _fails(rt, who):
    s = Session(2, runtime=rt, roles=("dealer",))
    if s.is_local(who):
        raise ValueError(f"party {who} refuses")
    with s.net.round():
        s.net.send(0, 1, np.zeros(3, np.uint64), 40)
        s.net.send(1, 0, np.zeros(3, np.uint64), 40)
    return "done"


def test_an_error_in_one_process_stops_the_run_and_names_the_process():
    t0 = time.monotonic()
    with pytest.raises(LaunchError) as e:
        launch(_fails, 1, groups=[[0], [1], ["dealer"]], timeout=5)
    assert time.monotonic() - t0 < 10
    msg = str(e.value)
    assert "process 1 (party 1): ValueError: party 1 refuses" in msg
    # process 0 is told why process 1 stopped (an ABORT frame), not only that it disconnected
    assert "process 0 (party 0): TransportError: process 1 (party 1) stopped: party 1 " \
           "refuses" in msg
    assert set(e.value.errors) >= {0, 1}


def _dies(rt):
    s = Session(2, runtime=rt, roles=("dealer",))
    if s.is_local(1):
        os._exit(3)                                         # killed mid-run
    with s.net.round():
        s.net.send(1, 0, np.zeros(3, np.uint64), 40)
    return "done"


def test_a_process_that_dies_is_reported_and_nothing_hangs():
    t0 = time.monotonic()
    with pytest.raises(LaunchError, match=r"process 1 .*exit status 3|disconnected"):
        launch(_dies, groups=[[0], [1], ["dealer"]], timeout=5)
    assert time.monotonic() - t0 < 10


def _two_sessions(rt, x, y):
    """A 2-party session with a dealer, then a 3-party one: each placed by its own layout."""
    first = _multiply(rt, x, y, 7)[0]
    s = Session(3, seed=7, runtime=rt, roles=("dealer",))
    mine = [p for p in range(4) if s.is_local(p)]
    return first, mine, rt.holds()


def test_processes_places_every_session_by_its_default_layout():
    """``processes=3``: parties 0 and 1 and the dealer each in a process of their own in the
    2-party session; in the 3-party session every party apart, the dealer with party 2
    (what :func:`mpc.comm.placement.layout` says, and the result the simulator's)."""
    res = launch(_two_sessions, X, Y, processes=3)
    assert [r.value[0] for r in res] == [(X * Y).tolist(), (X * Y).tolist(), None]
    assert [r.value[1] for r in res] == [[0], [1], [2, 3]]          # 3 = the dealer's id
    assert [r.holds for r in res] == [[range(1)], [range(1, 2)], [range(2, 3), "dealer"]]


def test_processes_beyond_the_participants_leaves_the_rest_idle():
    res = launch(_multiply, X, Y, 7, processes=4)
    assert [r.value[0] for r in res] == [(X * Y).tolist()] * 2 + [None, None]
    assert res[3].holds == [] and res[3].wire["payload_bytes_sent"] == 0
    assert res[0].value[1] == _multiply(None, X, Y, 7)[1]      # the same traffic counted


@pytest.mark.parametrize(("kw", "why"), [({}, "one of processes= .* or groups="),
                                         ({"processes": 2, "groups": [[0], [1]]}, "one of"),
                                         ({"processes": 0}, "integer >= 1"),
                                         ({"processes": True}, "integer >= 1"),
                                         ({"processes": 3, "relay": True}, "relay=True needs")])
def test_processes_or_groups_misused_is_one_line(kw, why):
    with pytest.raises(ValueError, match=why):
        launch(_multiply, X, Y, 7, **kw)
