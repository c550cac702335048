"""The six protocols of issue 40 (examples/mpc_protocols.py, examples/mpc_wilcoxon.py), each
equal to numpy / scipy within its stated precision, in one process and in three (loopback)."""

import math
import os
import sys

import numpy as np
import pytest
from scipy import stats

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                "examples"))
import mpc_protocols as P
import mpc_wilcoxon as W

from mpc.run.launch import launch


def _data(m, rng):
    ints = rng.integers(-10**4, 10**4, size=(3, m))
    vals = rng.normal(50, 10, size=(3, m))
    f0, f1 = rng.uniform(-1, 1, size=(2, m, 2))
    lab = (f0[:, 0] + f1[:, 1] + rng.normal(0, 0.5, m) > 0).astype(np.int64)
    inst = rng.integers(0, 1000, size=(3, 10 * m))
    return ints, vals, f0, f1, lab, inst


W0, LR = np.array([0.1, -0.2, 0.3, 0.05]), 0.5


def _all(rt, ints, vals, f0, f1, lab, inst):
    """Every protocol of mpc_protocols in one run (one launch for all in the 3-process case)."""
    return (P.argmax(rt, inst), P.median_sort(rt, ints), P.median_search(rt, ints),
            P.mean_var(rt, vals), P.logistic_step(rt, f0, f1, lab, W0, LR),
            P.dp_count(rt, ints, 0, 1.0, reveal_noise=True))


def _check(out, ints, vals, f0, f1, lab, inst):
    arg, med_sort, med_search, (m, v), w1, (rel, noise) = out
    assert np.array_equal(arg, np.argmax(inst, axis=0))
    assert med_sort == np.median(ints) and med_search == np.median(ints)      # exact
    assert abs(m / vals.mean() - 1) < 1e-6 and abs(v / vals.var() - 1) < 1e-6
    assert np.max(np.abs(w1 - P.numpy_logistic_step(f0, f1, lab, W0, LR))) < 1e-4
    assert rel - np.sum(ints > 0) == noise                                     # exactly


def test_six_protocols_in_one_process_small():
    data = _data(40, np.random.default_rng(3))
    _check(_all(None, *data), *data)


@pytest.mark.slow
def test_six_protocols_in_one_process_at_the_issues_sizes():
    data = _data(1000, np.random.default_rng(1))             # 10^4 argmax, 3 x 1000 median
    _check(_all(None, *data), *data)


@pytest.mark.slow
def test_six_protocols_in_three_processes():
    data = _data(100, np.random.default_rng(2))
    res = launch(_all, *data, groups=P.GROUPS_3, timeout=60, run_timeout=120)
    for r in res[:3]:                                        # the parties' processes
        _check(r.value, *data)


@pytest.mark.parametrize("processes", [1, 3])
def test_wilcoxon_t_plus_through_run_umpc_equals_scipy(processes):
    d = W.sample(12 if processes == 3 else 30, np.random.default_rng(processes))
    got = W.t_plus(d, processes=processes, seed=3)
    assert got == pytest.approx(stats.wilcoxon(d, alternative="greater").statistic, abs=1e-9)
    assert math.isfinite(got)
