"""bell-2pc as a whole protocol with its users and aggregator in separate processes.

Each process reads only the records of its own users (the others' rows are
zeros there). One debug seed: the same release, report and views as the
simulator at P = 2 and 3 (Kendall with in-circuit noise; AUC with the
label's randomized-response sums, opened by the aggregator from what it
received). No seed, every user in its own process: the exact (eps = inf,
all pairs) statistic, and socket bytes equal to the counted bits / 8.
"""

import math

import numpy as np
import pytest

from mpc.run.launch import launch
from mpc.run.runtime import Runtime
from mpc.session import Session
from tests.process_helpers import (
    assert_same_as_simulator,
    assert_socket_bytes,
    local_rows,
    result,
    wire_mark,
)
from ustat.baselines import BaselineSpec
from ustat.baselines.bell_2pc import run_bell_2pc

from ._data import correlated_pairs, scored_labels

N = 8
SMALL = 4                       # users of the secure run: one process each, plus the aggregator
CASES = {"kendall": dict(epsilon=1.0, pairs=2, noise_bits=8, bins=8),
         "auc": dict(epsilon=2.0, pairs=1, noise_bits=8, bins=4)}
RECORDS = {"kendall": correlated_pairs(N, 3), "auc": scored_labels(N, 4)}


def program(rt, cases, seed, views=True, n=N):
    s = Session(n, seed=seed, runtime=rt, record_views=views)
    mine = np.asarray(s.net.is_local(np.arange(n)))
    agg = s.net.role("aggregator")
    out, mark = {}, wire_mark(s)
    for kernel, kw in cases.items():
        X = np.where(mine[:, None], RECORDS[kernel][:n], 0.0)    # only this process's users
        res = run_bell_2pc(X, BaselineSpec.of("bell-2pc", kernel, **kw), session=s)
        out[kernel] = local_rows(s, [agg], [[res.estimate, res.u_hat]])
    return result(s, out, mark)


@pytest.fixture(scope="module")
def runs():
    exact = {"kendall": dict(epsilon=math.inf, pairs="all", bins=8)}
    return {"sim": program(None, CASES, 7),
            2: launch(program, CASES, 7, groups=[[0, 1, 2, 3, "aggregator"],
                                                 [4, 5, 6, 7, "dealer"]]),
            3: launch(program, CASES, 7, groups=[[0, 1, 2], [3, 4, 5, 6, 7],
                                                 ["dealer", "aggregator"]]),
            "exact": program(None, exact, 7, False, SMALL),
            "secure": launch(program, exact, None, False, SMALL,
                             groups=[[i] for i in range(SMALL)] + [["dealer", "aggregator"]])}


@pytest.mark.parametrize("procs", [2, 3])
def test_processes_give_the_simulators_release(runs, procs):
    assert_same_as_simulator(runs["sim"], runs[procs])
    released = [r.value["outputs"]["auc"][1] for r in runs[procs]]
    assert [x.shape for x in released].count((1, 2)) == 1        # at the aggregator only


def test_secure_run_releases_the_exact_statistic(runs):
    sec = runs["secure"]
    (_idx, rows), = [r.value["outputs"]["kendall"] for r in sec
                    if r.value["outputs"]["kendall"][0].size]
    np.testing.assert_array_equal(rows, runs["exact"]["outputs"]["kendall"][1])
    assert_socket_bytes(sec, sec[0].value["report"]["total_bits"])


def test_plain_engine_and_data_levels_are_refused_across_processes():
    """Checked before any message: a session placed over two processes (no transport needed)."""
    rt = Runtime(0, [[0, 1, 2, 3], [4, 5, 6, 7, "dealer", "aggregator"]], transport=None)
    with pytest.raises(ValueError, match="engine='plain'"):
        run_bell_2pc(RECORDS["kendall"], BaselineSpec.of("bell-2pc", "kendall", engine="plain"),
                     session=Session(N, seed=1, runtime=rt))
    X = np.column_stack([np.arange(N) % 3, np.arange(N) % 2]).astype(float)
    with pytest.raises(ValueError, match="levels="):
        run_bell_2pc(X, BaselineSpec.of("bell-2pc", "rand"), session=Session(N, seed=1, runtime=rt))
