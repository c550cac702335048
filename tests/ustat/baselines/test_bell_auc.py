import math

import numpy as np
import pytest
from sklearn.metrics import roc_auc_score

from mpc.arith.rng import CSPRNG
from tests.api import flat_protocol
from ustat.baselines import bell_auc as BA

from ._data import scored_labels


def test_fwht_and_hadamard_entries_against_matrix():
    for m in (1, 2, 8, 32):
        H = np.array([[(-1) ** bin(j & v).count("1") for v in range(m)] for j in range(m)])
        x = CSPRNG(m).random(m)
        assert np.allclose(BA.fwht(x), H @ x)
        j, v = np.meshgrid(np.arange(m), np.arange(m), indexing="ij")
        assert np.array_equal(BA.hadamard_entry(j, v), H)


@pytest.mark.parametrize("bins", [2, 16, 64])
def test_privacy_off_equals_sklearn_on_bins(bins):
    X = scored_labels(400)
    r = flat_protocol("bell-auc", X, "auc", epsilon=math.inf, bins=bins, seed=1, evaluate=True)
    binned = np.minimum(np.floor(X[:, 0] * bins), bins - 1)
    ref = roc_auc_score(X[:, 1], binned)
    assert r.estimate == pytest.approx(ref, abs=1e-12)
    assert r.evaluation["statistic_discretized"] == pytest.approx(ref, abs=1e-12)
    assert r.evaluation["statistic_complete"] == pytest.approx(roc_auc_score(X[:, 1], X[:, 0]))


def test_privacy_off_strict_ties():
    X = scored_labels(300)
    r = flat_protocol("bell-auc", X, "auc", epsilon=math.inf, bins=8, ties="zero", seed=1)
    b = np.minimum(np.floor(X[:, 0] * 8), 7)
    pos, neg = b[X[:, 1] == 1], b[X[:, 1] == 0]
    ref = (pos[:, None] > neg[None, :]).mean()
    assert r.estimate == pytest.approx(ref, abs=1e-12)


def _reports(leaves, members, alpha, eps, seed):
    coins = CSPRNG(seed)
    groups = BA.level_groups(members, alpha, coins)
    rows = np.zeros(leaves.size, dtype=np.int64)
    level = np.zeros(leaves.size, dtype=np.int64)
    for lvl, g in enumerate(groups, start=1):
        level[g] = lvl
        rows[g] = coins.integers(1 << lvl, (g.size,))
    from ustat.baselines._common import keep_sign
    bit = BA.hadamard_entry(rows, leaves >> (alpha - level)) * keep_sign(leaves.size, eps, coins)
    return BA.oracle_estimates(groups, bit, rows, members.size, alpha, eps), groups


@pytest.mark.slow
def test_frequency_oracle_unbiased_with_bounded_variance():
    # Theorem 3's conditions (i) and (ii): E h^ = h and E (h^ - h)^2 <= v = n^2 c^2 / |G_l|,
    # checked on every node of levels 1..3 over 800 runs (4.5 standard errors)
    alpha, eps, n = 3, 1.0, 120
    leaves = CSPRNG(1).integers(8, (n,))
    members = np.arange(n)
    exact = BA.exact_levels(leaves, alpha)
    runs = 800
    sums = [np.zeros(2 ** lv) for lv in range(1, alpha + 1)]
    sq = [np.zeros(2 ** lv) for lv in range(1, alpha + 1)]
    for r in range(runs):                                   # Monte Carlo repetitions
        est, groups = _reports(leaves, members, alpha, eps, seed=100 + r)
        for lvl in range(alpha):
            sums[lvl] += est[lvl]
            sq[lvl] += (est[lvl] - exact[lvl]) ** 2
    for lvl in range(alpha):
        v = n ** 2 * BA.oracle_constant(eps) ** 2 / groups[lvl].size
        mean = sums[lvl] / runs
        mse = sq[lvl] / runs
        assert np.all(np.abs(mean - exact[lvl]) < 4.5 * np.sqrt(mse / runs))
        # (h^ - h)^2 has relative standard deviation about sqrt(2): 5 standard errors
        assert np.all(mse <= v * (1 + 5 * np.sqrt(2 / runs)))


@pytest.mark.slow
def test_mse_below_theorem3_bound():
    X = scored_labels(2000, seed=5)
    first = flat_protocol("bell-auc", X, "auc", epsilon=1.0, bins=32, seed=0, evaluate=True)
    truth = first.evaluation["auc_discretized"]
    est = np.array([flat_protocol("bell-auc", X, "auc", epsilon=1.0, bins=32, seed=s).estimate
                    for s in range(1, 121)])
    mse = float(np.mean((est - truth) ** 2))
    assert mse <= first.theory["mse_bound_thm3_auc"]
    assert first.theory["threshold_a"] > 1


def test_bits_rounds_and_trust():
    X = scored_labels(250)
    r = flat_protocol("bell-auc", X, "auc", epsilon=1.0, bins=16, seed=3)
    assert r.online_bits == 250 * 2 and r.max_party_bits == 2 and r.rounds == 1
    assert r.offline_bits == 250 * BA.SEED_BITS
    r = flat_protocol("bell-auc", X, "auc", epsilon=math.inf, bins=16, seed=3)
    assert r.online_bits == 250 * (4 + 1) and r.offline_bits == 0
    assert "labels are public" in r.trust


def test_default_threshold_minimizes_bound():
    a = BA.default_threshold(500, 1500, 6, 4.7)

    def f(z):
        return BA.theorem3_bound(500, 1500, 6, 4.7, z)

    assert a > 1 and f(a) <= f(a * 1.05) and f(a) <= f(1 + (a - 1) / 1.05)


def test_bad_inputs():
    X = scored_labels(40)
    with pytest.raises(ValueError, match="ties must be"):
        flat_protocol("bell-auc", X, "auc", ties="x")
    with pytest.raises(ValueError, match="threshold a must be a number > 1"):
        flat_protocol("bell-auc", X, "auc", threshold=0.5)
    few = X.copy()
    few[:, 1] = 0
    few[:2, 1] = 1
    with pytest.raises(ValueError, match="at least alpha = log2\\(bins\\) = 6 records"):
        flat_protocol("bell-auc", few, "auc", bins=64)
