import numpy as np
import pytest

from tests.api import flat_deploy, flat_quantiles, flat_release
from ustat.ecdf import histogram, quantiles

from ._data import bank

INF = float("inf")
LEVELS = np.linspace(0, 1, 401)


@pytest.mark.parametrize("column", ["balance", "duration"])
def test_eps_inf_equals_numpy_inverted_cdf(column):
    x = bank(column)[:, 0]
    r = flat_release(x, np.unique(x), INF, backend="central")
    assert np.array_equal(quantiles(r, LEVELS), np.quantile(x, LEVELS, method="inverted_cdf"))
    off_jumps = LEVELS[(LEVELS * x.size) % 1 > 1e-6]        # float ties only at jumps
    assert np.array_equal(quantiles(r.values, off_jumps, thresholds=r.thresholds),
                          np.quantile(x, off_jumps, method="inverted_cdf"))


def test_live_search_on_fss_servers_costs_log_rounds_and_no_epsilon():
    x = bank("age")[:1000, 0]
    tau = np.unique(x)
    dep = flat_deploy(x, tau, INF, backend="fss", seed=1)
    q = np.array([0.1, 0.5, 0.9, 0.99])
    assert np.array_equal(quantiles(dep, q), np.quantile(x, q, method="inverted_cdf"))
    steps = int(np.ceil(np.log2(tau.size)))
    assert dep.communication()["online"]["rounds"] == 2 * steps
    noisy = flat_deploy(x, tau, 0.5, backend="fss", seed=2)
    eps = noisy.account()["epsilon"]
    quantiles(noisy, np.linspace(0.01, 0.99, 50))
    assert noisy.account()["epsilon"] == eps and noisy.queries > 50


def test_noisy_quantiles_are_close_on_bank_age():
    x = bank("age")[:, 0]
    r = flat_release(x, np.arange(18, 96), 1.0, backend="central", seed=3)
    got = quantiles(r, [0.25, 0.5, 0.75])
    assert np.all(np.abs(got - np.quantile(x, [0.25, 0.5, 0.75], method="inverted_cdf")) <= 3)


def test_histogram():
    edges, h = histogram([1, 3, 3, 7], [0.0, 1.0, 2.0, 3.0])
    assert np.array_equal(edges, [0, 1, 2, 3]) and np.array_equal(h, [1, 2, 0, 4])
    edges, h = histogram([1, 3, 3, 7], [0.0, 1.0, 2.0, 3.0], bins=2)
    assert np.array_equal(edges, [1, 3]) and np.array_equal(h, [3, 4])
    with pytest.raises(ValueError, match=r"bins must be in 1\.\.4"):
        histogram([1, 3, 3, 7], [0.0, 1.0, 2.0, 3.0], bins=5)


@pytest.mark.parametrize("q,msg", [([], "at least one"), ([0.5, 1.2], "not in"),
                                   ([np.nan], "not in")])
def test_bad_levels(q, msg):
    r = flat_release([0.1, 0.2], [0.0, 1.0], INF, backend="central")
    with pytest.raises(ValueError, match=msg):
        quantiles(r, q)


def test_interpolated_quantile_is_numpy_type_4_without_ties():
    """eps = inf, thresholds = the distinct values, no value repeated: the grouped-data
    quantile is numpy's interpolated_inverted_cdf, and its interval is that point."""
    from ustat.ecdf.quantiles import interpolated_quantiles
    x = np.unique(bank("balance")[:, 0])[::7]             # distinct values
    r = flat_release(x, x, INF, backend="central")
    p = np.linspace(1 / x.size, 1, 97)
    want = np.quantile(x, p, method="interpolated_inverted_cdf")
    assert np.allclose(interpolated_quantiles(r.values, p, x), want, rtol=0, atol=1e-6)
    qi = r.quantile_intervals(p)
    assert np.allclose(qi["interpolated_lo"], want, atol=1e-6)
    assert np.allclose(qi["interpolated_hi"], want, atol=1e-6)
    assert np.array_equal(qi["lo"], np.quantile(x, p, method="inverted_cdf"))


def test_interpolated_quantile_interval_covers_at_its_level():
    """Bank age on 78 integer thresholds at eps 1 (coarse: the grid quantile's interval is
    nearly always the single right year, coverage ~1): 300 releases, 5 levels; the
    interpolated quantile's interval covers at about the level (measured 0.96), and
    rounded up to the grid it covers the grid quantile."""
    from ustat.ecdf.quantiles import interpolated_quantiles
    from ustat.ecdf.release import exact_counts
    from ustat.ecdf.thresholds import grid_rank
    x = bank("age")[:, 0]
    tau = np.arange(18.0, 96.0)
    F = exact_counts(grid_rank(x, tau), tau.size) / x.size
    p = np.array([0.1, 0.25, 0.5, 0.75, 0.9])
    truth, grid = interpolated_quantiles(F, p, tau), np.quantile(x, p, method="inverted_cdf")
    hits, grid_hits = [], []
    for seed in range(300):
        qi = flat_release(x, tau, 1.0, backend="central", bounds=(18, 95),
                          seed=seed).quantile_intervals(p)
        hits.extend((qi["interpolated_lo"] <= truth) & (truth <= qi["interpolated_hi"]))
        grid_hits.extend((qi["lo"] <= grid) & (grid <= qi["hi"]))
    assert 0.93 <= np.mean(hits) <= 0.985
    assert np.mean(grid_hits) >= np.mean(hits)


def test_quantile_refuses_when_the_noise_dominates(capsys, monkeypatch):
    """Public parameters only, before computing: 100 records on 64 thresholds at eps 1."""
    import importlib

    from ustat.cli import main
    from ustat.ecdf.intervals import MAX_QUANTILE_HALFWIDTH, quantile_noise_check
    from ustat.ecdf.tree import Tree, planned_law

    def never(*a, **k):
        raise AssertionError("computed before refusing")

    rel = importlib.import_module("ustat.ecdf.release")    # the package's name is a function
    monkeypatch.setattr(rel, "deploy", never)
    code = main(["quantile", "--n", "100", "--thresholds", "64", "--no-progress"])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and "noise dominates" in err
    assert "larger epsilon, more records or fewer thresholds" in err
    tree = Tree(78)
    quantile_noise_check(4521, planned_law(tree, 1.0, mode="each"), tree, 0.95)   # Bank age
    law = planned_law(Tree(256), 1.0, mode="central")
    with pytest.raises(ValueError, match=f"more than {MAX_QUANTILE_HALFWIDTH:g}"):
        quantile_noise_check(297, law, Tree(256), 0.95)                            # Heart


def test_every_step_search_is_the_adaptive_search_on_any_curve():
    """A public number of queries of a public size, the same indices, even on noisy curves."""
    from ustat.ecdf.quantiles import search

    g = np.random.default_rng(4)
    for N in (1, 2, 3, 5, 17, 64, 100):
        for _ in range(20):
            F = np.cumsum(g.integers(-3, 6, N))              # noisy, not monotone
            t = g.uniform(F.min() - 2, F.max() + 2, 7)
            calls = []

            def ev(i, calls=calls, F=F):
                calls.append(np.asarray(i).size)
                return F[i]
            fixed = search(ev, N, t, every_step=True)
            assert calls == [t.size] * (N - 1).bit_length()
            assert np.array_equal(fixed, search(lambda i, F=F: F[i], N, t))


def test_private_quantiles_are_numpys_without_noise():

    x = bank("age")[:500, 0]
    q = [0.1, 0.5, 0.9]
    r = flat_quantiles(x, np.unique(x), q, INF, backend="pointwise", seed=1)
    assert np.array_equal(r.quantiles, np.quantile(x, q, method="inverted_cdf"))
    assert r.released and r.ecdf.counts[-1] == x.size
    assert r.intervals()["lo"].shape == (3,)
