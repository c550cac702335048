"""ECDF tree noise sampled inside MPC by the servers (noise mode "mpc", ustat.ecdf.node_noise)."""

import math

import numpy as np
import pytest

from noise.mpc_sampler import MAX_DELTA
from noise.samplers import discrete_laplace_pmf
from tests.api import flat_deploy, flat_hl, flat_release
from ustat.ecdf.tree import dlap_variance

from ...noise._stats import chisq_pvalue


def _values(n=400, seed=1):
    return np.random.default_rng(seed).random(n)


@pytest.mark.parametrize("backend,servers", [("fss", 2), ("pointwise", 3)])
def test_counts_carry_exactly_the_sampled_node_noise(backend, servers):
    from ustat.ecdf.release import exact_counts
    from ustat.ecdf.thresholds import grid_rank

    tau = np.linspace(0, 1, 100)
    dep = flat_deploy(_values(), tau, 1.0, noise_mode="mpc", seed=3, backend=backend,
                      servers=servers)
    idx = np.arange(tau.size)
    exact = exact_counts(grid_rank(_values(), tau), tau.size)
    assert np.array_equal(dep.query(idx) - exact, dep.noise.at(idx))
    r = flat_release(_values(), tau, 1.0, noise_mode="mpc", seed=3, backend=backend,
                     servers=servers)
    acc = r.account
    assert acc["noise_mode"] == "mpc" and acc["servers"] == servers
    assert 0 < acc["delta"] <= MAX_DELTA
    assert acc["epsilon_vs_server_seeing_output"] == acc["epsilon"]
    # one DLap per node: half the MSE of mode "each" (every server a full DLap)
    levels = acc["levels"]
    assert acc["mse_counts"] == pytest.approx(levels * dlap_variance(acc["node_scale"]))
    each = flat_release(_values(), np.linspace(0, 1, 100), 1.0, seed=3, backend=backend,
                        servers=servers)
    assert each.account["mse_counts"] == pytest.approx(servers * acc["mse_counts"])
    assert r.communication["phases"]["ecdf noise"]["offline"]["bits"] > 0


def test_node_noise_law_and_shares():
    """The node totals are DLap (chi-square over 1023 nodes, 2 releases); each server's share
    alone is spread over the whole ring."""
    from ustat.ecdf.node_noise import draw_noise_mpc
    from ustat.ecdf.servers import make_session
    from ustat.ecdf.tree import Tree

    tree = Tree(512)
    totals, shares = [], []
    for seed in range(2):
        s = make_session(2, seed=seed)
        nz = draw_noise_mpc(s, tree, 1.0)
        totals.append(nz.total)
        shares.append(nz.shares[0].view(np.uint64))
    x = np.concatenate(totals)
    support = np.arange(-60, 61)
    assert chisq_pvalue(x, support, discrete_laplace_pmf(support, nz.scale)) > 1e-4
    top = np.concatenate(shares) >> np.uint64(29)            # top 3 bits of a 32-bit share
    assert np.bincount(top.astype(np.int64), minlength=8).min() > 0.08 * top.size


def test_hosmer_lemeshow_with_mpc_noise():
    g = np.random.default_rng(2)
    p = g.random(600)
    y = (g.random(600) < p).astype(int)
    res = flat_hl(p, y, 5, 2.0, noise_mode="mpc", seed=1, n_thresholds=64)
    assert res.account["noise_mode"] == "mpc" and 0 < res.account["delta"] <= 2 * MAX_DELTA
    assert math.isfinite(res.statistic)


def test_infinite_epsilon_and_errors():
    r = flat_release(_values(50), np.linspace(0, 1, 20), math.inf, noise_mode="mpc", seed=1,
                     evaluate=True)
    assert np.array_equal(r.counts, r.exact)
    from ustat.ecdf.tree import Tree, draw_noise
    with pytest.raises(ValueError, match="draw_noise_mpc"):
        draw_noise(Tree(8), 1.0, 1, mode="mpc")


def test_cli_charges_the_sampler_delta(tmp_path, capsys):
    import json

    from noise.mpc_sampler import MAX_DELTA
    from ustat.cli import main

    f = tmp_path / "v.csv"
    f.write_text("x\n" + "".join(f"{v:.4f}\n" for v in _values(200)))
    b = tmp_path / "b.json"
    assert main(["ecdf", "--csv", str(f), "--column", "x", "--bounds", "0:1", "--thresholds", "16",
                 "--noise", "mpc", "--budget-file", str(b), "--budget-total", "2",
                 "--no-progress", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["budget"]["this_run_delta"] == MAX_DELTA
