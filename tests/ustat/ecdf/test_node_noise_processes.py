"""ECDF noise mode "mpc" with the parties, the servers and the analyst in separate processes.

The servers' GMW sampler (OT triples) runs across processes: one debug seed
gives the simulator's counts, HL statistic, report and recorded views at
P = 2 and 3; without a seed, with each server in its own process, the counts
stay within the noise of the exact ones (a junk row of another process's
server would move them by about 2^31) and the socket payload is the counted
bits / 8 within a byte per frame.
"""

from types import SimpleNamespace

import numpy as np
import pytest

from mpc.launch import launch
from tests.process_helpers import (assert_same_as_simulator, assert_socket_bytes, local_rows,
                                   result, wire_mark)
from ustat.ecdf import private_hosmer_lemeshow, release
from ustat.ecdf.servers import make_session

N = 30
TAU = np.linspace(0.0, 1.0, 6)
_G = np.random.default_rng(5)
VALUES = _G.random(N)
LABELS = (_G.random(N) < VALUES).astype(np.int64)


def _mine(s, a):
    return np.where(s.net.is_local(np.arange(a.size)), a, 0)


def program(rt, seed, views=True):
    out = {}
    for case in ("fss", "hl"):
        s = make_session(N, 2, bits=48 if case == "hl" else 32, seed=seed, record_views=views,
                         runtime=rt)
        mark, an = wire_mark(s), s.net.role("analyst")
        x, y = _mine(s, VALUES), _mine(s, LABELS)
        if case == "fss":
            r = release(x, TAU, 8.0, noise_mode="mpc", session=s)
            rows = {"counts": r.counts, "delta": [r.account["delta"]]}
        else:
            r = private_hosmer_lemeshow(x, y, 3, 8.0, n_thresholds=8, noise_mode="mpc",
                                        session=s, max_detectable=None)
            rows = {"statistic": [r.statistic], "edges": r.edges}
        outputs = {k: local_rows(s, [an], [np.asarray(v, dtype=np.float64)])
                   for k, v in rows.items()}
        out[case] = result(s, outputs, mark)
    return out


def _case(runs, case):
    return [SimpleNamespace(rank=r.rank, value=r.value[case]) for r in runs]


@pytest.fixture(scope="module")
def runs():
    apart = [[range(0, 15)], [range(15, 30)], ["server0"], ["server1"], ["analyst", "dealer"]]
    return {"sim": program(None, 7),
            2: launch(program, 7, groups=[[range(0, 15), "server0", "analyst", "dealer"],
                                          [range(15, 30), "server1"]]),
            3: launch(program, 7, groups=[[range(0, 10), "analyst", "dealer"],
                                          [range(10, 20), "server0"], [range(20, 30), "server1"]]),
            "secure": launch(program, None, False, groups=apart)}


@pytest.mark.parametrize("procs", [2, 3])
@pytest.mark.parametrize("case", ["fss", "hl"])
def test_mpc_noise_across_processes_releases_the_simulators_bits(runs, procs, case):
    assert_same_as_simulator(runs["sim"][case], _case(runs[procs], case))


def test_secure_mpc_noise_across_processes(runs):
    got = next(r.value["fss"]["outputs"] for r in runs["secure"]
               if r.value["fss"]["outputs"]["counts"][0].size)
    counts, delta = got["counts"][1][0], got["delta"][1][0, 0]
    exact = np.searchsorted(np.sort(VALUES), TAU, side="right")
    # node scale 1 at epsilon 8: |noise on a path of 4 nodes| > 60 has probability < 2^-40
    assert np.abs(counts - exact).max() <= 60 and 0 < delta <= 2.0 ** -40
    for case in ("fss", "hl"):
        sec = _case(runs["secure"], case)
        assert_socket_bytes(sec, sec[0].value["report"]["total_bits"])


def test_the_api_runs_mpc_noise_in_processes():
    one = release(VALUES, TAU, 1.0, noise_mode="mpc", seed=3)
    three = release(VALUES, TAU, 1.0, noise_mode="mpc", seed=3, processes=3)
    np.testing.assert_array_equal(one.counts, three.counts)
    assert three.account["delta"] == one.account["delta"] and len(three.process_costs) == 3
