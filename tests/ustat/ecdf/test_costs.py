"""Every ECDF release carries the session's :class:`mpc.comm.costs.Costs`: the same bits and rounds
as its ``communication`` report, and wall time per phase."""

import math

import numpy as np
import pytest

from mpc.comm.costs import Costs
from tests.api import flat_hl, flat_quantiles, flat_release, flat_roc


def _same(costs, comm):
    assert isinstance(costs, Costs)
    for part in ("online", "offline"):
        assert costs[part]["bits"] == comm[part]["bits"]
        assert costs[part]["rounds"] == comm[part]["rounds"]
    assert costs.total_bits == comm["total_bits"] > 0
    assert set(costs.phases) == set(comm["phases"])
    assert set(costs.seconds) <= set(comm["phases"]) | {None}


@pytest.mark.parametrize("backend", ["fss", "pointwise"])
def test_release_and_quantiles_carry_costs(backend):
    x = np.random.default_rng(1).random(80)
    tau = np.linspace(0, 1, 16)
    r = flat_release(x, tau, 1.0, bounds=(0, 1), backend=backend, seed=2)
    _same(r.costs, r.communication)
    q = flat_quantiles(x, tau, [0.5], 1.0, bounds=(0, 1), backend=backend, seed=2)
    _same(q.ecdf.costs, q.ecdf.communication)


def test_roc_and_hosmer_lemeshow_carry_costs():
    rng = np.random.default_rng(3)
    p = rng.random(120)
    y = (rng.random(120) < p).astype(int)
    roc = flat_roc(p, y, np.linspace(0, 1, 16), math.inf, bounds=(0, 1), seed=1)
    _same(roc.costs, roc.communication)
    hl = flat_hl(p, y, 4, math.inf, n_thresholds=32, seed=1)
    _same(hl.costs, hl.communication)


def test_central_backend_has_no_session_and_no_costs():
    x = np.random.default_rng(1).random(40)
    r = flat_release(x, np.linspace(0, 1, 8), 1.0, bounds=(0, 1), backend="central", seed=2)
    assert r.costs is None and r.communication is None
