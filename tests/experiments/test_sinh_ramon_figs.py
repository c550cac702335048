"""Helpers of the Sinh-Ramon figure scripts: exact references, the time split, the cost model.

The scripts themselves run in --quick mode in test_scripts.py; here the
pieces whose mistakes would not show there: the O(n log n) Gini reference
equals the pair mean, the party/server clock sees the parties' last message
and leaves :class:`mpc.comm.network.Network` as it found it, one measured run has
consistent fields, and the paper's cost model gives the authors' numbers.
"""

import math

import numpy as np
import pytest

from experiments import _sinh_ramon as G
from experiments.sinh_ramon_gini import gini_complete


def test_gini_complete_equals_pair_mean():
    from ustat import kernels

    x = np.random.default_rng(3).random(300)
    brute = np.abs(x[:, None] - x[None, :])[np.triu_indices(300, 1)].mean()
    assert gini_complete(x) == pytest.approx(brute, rel=1e-12)
    assert gini_complete(x) == pytest.approx(kernels.complete_u(kernels.get("gini"),
                                                                  x.reshape(-1, 1)), rel=1e-12)


def test_clock_restores_network_and_sees_party_sends():
    from mpc.comm.network import Network
    from ustat.umpc import protocol

    before = {name: getattr(Network, name) for name in G.PartyServerClock.SENDERS + ("absorb",)}
    eval_before = protocol.evaluate_run
    net = Network(3, roles=("aggregator", "dealer"))
    with G.PartyServerClock() as clock:
        net.send(net.role("dealer"), 0, np.zeros(2, dtype=np.uint64), 8)   # not a data party
        assert clock.last_party is None
        net.send(net.parties, net.role("aggregator"), np.zeros(3, dtype=np.uint64), 8)
        assert clock.last_party is not None
    assert {name: getattr(Network, name) for name in before} == before
    assert protocol.evaluate_run is eval_before
    assert net.report()["online"]["bits"] == 2 * 8 + 3 * 8           # still counted


@pytest.mark.parametrize("protocol", ["umpc", "bell-ldp", "ghazi"])
def test_run_one_fields(protocol):
    x = np.random.default_rng(5).random(120).reshape(-1, 1)
    ref = gini_complete(x)
    row = G.run_one(protocol, x, "gini", epsilon=1.0, bins=16, seed=f"t:{protocol}",
                    reference=ref)
    assert row["total_error"] == pytest.approx(row["estimate"] - ref, abs=1e-12)
    assert row["per_party_seconds"] == pytest.approx(row["party_seconds"] / 120)
    assert 0 < row["party_seconds"] + row["server_seconds"] <= row["seconds"] + 1e-9
    if protocol == "umpc":
        assert row["ring_bits"] == 40 and row["frac_bits"] == 14 and row["edges"] == 240
        assert row["aggregation_bits"] == 120 * 40
        assert row["variance_factor"] >= 1 and row["noise_var"] > 0
    else:
        assert row["mean_party_bits"] == row["formula_party_bits"]


def test_paper_cost_model_matches_the_authors_formulas():
    # Bell: t n l; U-MPC (gini, M_HF, p = 2): 3 n p l + 128 l n p + (p n + n) l + l n
    assert G.paper_comm("bell-ldp", 1000, 256, 1.0, "gini") == 256 * 1000 * 40
    assert G.paper_comm("umpc", 1000, 256, 1.0, "gini") == 10640 * 1000
    # JL dimension of Dasgupta-Gupta with beta = 1/(eps sqrt n)
    b = 1 / math.sqrt(1000)
    assert G.paper_jl_dim(1000, 256, 1.0) == int(4 / (b * b / 2 - b ** 3 / 3) * math.log(256))
    assert G.paper_comm("ghazi-sm", 1000, 256, 1.0, "gini") == (
        G.paper_comm("ghazi", 1000, 256, 1.0, "gini") * G.paper_shufflers(1000))
    assert G.paper_noise_var(1000, 1.0) == pytest.approx(8e-6)
