import math

import numpy as np
import pytest
from scipy.stats import rankdata
from sklearn.metrics import roc_auc_score

from mpc.arith.rng import CSPRNG
from tests.api import flat_protocol
from ustat.baselines import fedauc as FA

from ._data import scored_labels


def test_midranks_match_scipy():
    v = np.array([0.3, 0.1, 0.3, 0.9, 0.1, 0.1, 0.5])
    assert np.array_equal(FA.midranks(v), rankdata(v) - 1)


def _with_ties(n, seed=3):
    S = scored_labels(n, seed)
    S[:, 0] = np.round(S[:, 0] * 20) / 20                  # many ties
    return S


@pytest.mark.parametrize("proto", ["fedauc-rr", "fedauc-lap"])
@pytest.mark.parametrize("clients", [None, 7])
def test_privacy_off_equals_sklearn(proto, clients):
    S = _with_ties(300)
    kw = {} if clients is None else {"clients": clients, "partition": "noniid"}
    r = flat_protocol(proto, S, "auc", epsilon=math.inf, seed=1, evaluate=True, **kw)
    ref = roc_auc_score(S[:, 1], S[:, 0])
    assert r.estimate == pytest.approx(ref, abs=1e-9)
    assert r.evaluation["statistic_discretized"] == pytest.approx(ref, abs=1e-9)
    assert r.params["clients"] == (300 if clients is None else 7)


def test_debias_inverts_the_flip_model():
    # with the expected noisy counts and the expected noisy AUC, debiasing returns the truth
    eps, P, N, auc = 1.0, 300.0, 700.0, 0.8
    rho = 1 / (1 + math.e)
    Pb = P * (1 - rho) + N * rho
    pi = P / (P + N)
    a = (1 - pi) * rho / (pi * (1 - rho) + (1 - pi) * rho)
    b = pi * rho / (pi * rho + (1 - pi) * (1 - rho))
    noisy = (1 - a - b) * auc + (a + b) / 2
    assert FA.debias(noisy, Pb, P + N - Pb, eps)[0] == pytest.approx(auc, abs=1e-12)


def _runs(proto, S, runs, eps, **kw):
    out = [flat_protocol(proto, S, "auc", epsilon=eps, seed=s, **kw) for s in range(runs)]
    return np.array([r.estimate_raw for r in out]), out[0]


@pytest.mark.slow
@pytest.mark.parametrize("proto, eps, runs, kw", [
    ("fedauc-rr", 1.0, 300, {}), ("fedauc-lap", 1.0, 300, {}),
    ("fedauc-lap", 4.0, 200, {"mechanism": "gaussian"}),
    ("fedauc-lap", 1.0, 200, {"clients": 12}),
    ("fedauc-lap", 2.0, 200, {"allocation": "fixed", "clients": 12}),
    ("fedauc-lap", 2.0, 200, {"allocation": "global", "clients": 12}),
    ("fedauc-lap", 1.0, 200, {"allocation": "orthogonal", "beta": 0.3, "clients": 12}),
    ("fedauc-lap", 1.0, 200, {"allocation": "fixed", "exact_counts": True})])
def test_variance_matches_delta_method_and_small_bias(proto, eps, runs, kw):
    # sample variance within 5 relative SE (sqrt(2/runs)) of the delta-method variance, which
    # is accurate while the noise on the positive count is small against it (hence eps = 4
    # for the Gaussian variant at n = 800); the ratio estimators are only asymptotically
    # unbiased: the mean is within 4 SE + var / min(p, 1-p) (the second-order bias scale)
    S = scored_labels(800, seed=4)
    truth = roc_auc_score(S[:, 1], S[:, 0])
    est, first = _runs(proto, S, runs, eps, **kw)
    var = first.theory["variance_delta_method"]
    assert est.var() == pytest.approx(var, rel=5 * math.sqrt(2 / runs))
    p = S[:, 1].mean()
    assert abs(est.mean() - truth) < 4 * math.sqrt(var / runs) + var / min(p, 1 - p)


def test_paper_formulas_reported():
    # at the released positive count (debiased for RR), never the true one (issue 37)
    S = scored_labels(500)
    r = flat_protocol("fedauc-rr", S, "auc", epsilon=1.0, seed=2)
    M, P = 500, r.theory["P_est"]
    ref = math.e / (1 + math.e) ** 2 * M * (M - 1) * (2 * M - 1) / 6 / (P * (M - P)) ** 2
    assert r.theory["variance_paper_eq7"] == pytest.approx(ref)
    r = flat_protocol("fedauc-lap", S, "auc", epsilon=1.0, seed=2, clients=None)
    ranks, y = FA.ranks_of(S[:, 0]), S[:, 1].astype(np.int64)
    stats, th = FA.lap_statistics(ranks, y, np.arange(M), M, 1.0, rng=CSPRNG(9))
    P = stats.sum(axis=0)[1]
    out = FA.lap_release(ranks, 1.0, sums=stats.sum(axis=0), theory=th)
    assert out["variance_paper_eq9_one_record"] == pytest.approx(
        M * (M - 1) * (2 * M - 1) / 3 / (P * (M - P)) ** 2)
    assert r.theory["beta_mean"] == 1.0                       # one record: all on localP


def test_adaptive_allocation_formula():
    a, b = np.array([8.0, 1.0, 5.0]), np.array([1.0, 8.0, 0.0])
    lap = FA.adaptive_betas(a, b, "laplace")
    assert lap[2] == 1.0
    exact = a[:2] ** (2 / 3) / (a[:2] ** (2 / 3) + b[:2] ** (2 / 3))
    assert np.all(lap[:2] <= exact) and np.all(exact - lap[:2] < 1 / 64)
    gau = FA.adaptive_betas(a, b, "gaussian")
    assert np.all(np.abs(gau[:2] - a[:2] / (a[:2] + b[:2])) < 1 / 64)


def test_bits_and_rounds():
    S = scored_labels(120)
    r = flat_protocol("fedauc-rr", S, "auc", epsilon=1.0, seed=3)
    bits = 40
    # per record: a score up, a rank down; per client: three statistics up
    assert r.rounds == 3 and r.max_party_bits == 2 * bits + 3 * bits
    assert r.online_bits == 120 * (2 * bits + 3 * bits)
    r = flat_protocol("fedauc-lap", S, "auc", epsilon=1.0, clients=10, seed=3)
    assert r.online_bits == 120 * 2 * bits + 10 * 3 * bits and r.rounds == 3
    assert r.dp_model == "label-local" and "scores are NOT protected" in r.trust


def test_iid_partition_is_balanced_and_public():
    owner = FA.assign_clients(np.arange(103.0), 10, "iid", CSPRNG(1))
    counts = np.bincount(owner)
    assert counts.min() == 10 and counts.max() == 11
    noniid = FA.assign_clients(CSPRNG(2).random(100), 4, "noniid", CSPRNG(1))
    assert np.array_equal(np.bincount(noniid), [25, 25, 25, 25])


def test_bad_inputs():
    S = scored_labels(50)
    with pytest.raises(ValueError, match="mechanism must be"):
        flat_protocol("fedauc-lap", S, "auc", mechanism="cauchy")
    with pytest.raises(ValueError, match="allocation must be"):
        flat_protocol("fedauc-lap", S, "auc", allocation="x")
    with pytest.raises(ValueError, match="alpha must be in"):
        flat_protocol("fedauc-lap", S, "auc", allocation="fixed", alpha=1.0)
    with pytest.raises(ValueError, match="clients must be <="):
        flat_protocol("fedauc-rr", S, "auc", clients=51)
    with pytest.raises(ValueError, match="partition must be"):
        flat_protocol("fedauc-rr", S, "auc", clients=5, partition="x")
    with pytest.raises(ValueError, match="delta must be in"):
        flat_protocol("fedauc-lap", S, "auc", mechanism="gaussian", delta=0.0)


@pytest.mark.parametrize("allocation, kw", [("orthogonal", {"beta": 0.3}), ("global", {}),
                                            ("fixed", {"exact_counts": True})])
def test_more_allocations_privacy_off_equal_sklearn(allocation, kw):
    S = _with_ties(300)
    r = flat_protocol("fedauc-lap", S, "auc", epsilon=math.inf, seed=1, allocation=allocation,
                      clients=7, partition="iid", **kw)
    assert r.estimate == pytest.approx(roc_auc_score(S[:, 1], S[:, 0]), abs=1e-9)
    assert r.params["allocation"] == allocation


def test_exact_counts_variances_are_eqs_8_and_9():
    # one record per client, P and N released exactly, the whole epsilon on localSum: the
    # delta-method variance is the noise on the rank sum over (P N)^2, eq. (9) for
    # LocalLaplace (sensitivities = the ranks) and eq. (8) for GlobalLaplace (M - 1 each)
    S = scored_labels(400, seed=5)
    S[:, 0] = np.arange(400) / 400                       # no ties: ranks 0 .. M-1
    for allocation, key in (("fixed", "variance_paper_eq9_one_record"),
                            ("global", "variance_paper_eq8_global")):
        r = flat_protocol("fedauc-lap", S, "auc", epsilon=1.0, seed=2, allocation=allocation,
                          exact_counts=True)
        assert r.theory["variance_delta_method"] == pytest.approx(r.theory[key], rel=0.01)
        assert "NOT label-DP" in r.trust and r.params["exact_counts"]


def test_global_over_local_is_sqrt3_at_one_record():
    # the paper's Table 2 claim, from its own formulas at our M: sqrt(2K(M-1)^2 / (K(K-1)(2K-1)/3))
    S = scored_labels(2000, seed=6)
    g = flat_protocol("fedauc-lap", S, "auc", epsilon=1.0, seed=3, allocation="global",
                      exact_counts=True).theory
    assert math.sqrt(g["variance_paper_eq8_global"] / g["variance_paper_eq9_one_record"]) \
        == pytest.approx(math.sqrt(3), rel=1e-3)


def test_ranks_of_are_the_servers_ranks():
    S = _with_ties(500)
    S[:, 0] = S[:, 0] * 0.99 + np.arange(500) * 1e-6     # ties only after the 14-bit encoding
    y = S[:, 1].astype(np.int64)
    r = flat_protocol("fedauc-rr", S, "auc", epsilon=math.inf, seed=1)
    ranks = FA.ranks_of(S[:, 0])
    assert r.estimate == pytest.approx(FA.auc_from_sums(ranks @ y, y.sum(), 500), abs=1e-12)
    assert np.array_equal(ranks * 2, np.round(ranks * 2))   # mid-ranks: half-integers


def test_release_on_ranks_draws_what_the_clients_send():
    from ustat.baselines.fedauc_release import LapNoise, lap_release, lap_statistics

    S = scored_labels(300, seed=8)
    ranks, y = FA.ranks_of(S[:, 0]), S[:, 1].astype(np.int64)
    owner = FA.assign_clients(S[:, 0], 10, "noniid", CSPRNG(1))
    noise = LapNoise(allocation="adaptive")
    a, th = lap_statistics(ranks, y, owner, 10, 1.0, rng=CSPRNG(4), noise=noise)
    b, _ = lap_statistics(ranks, y, owner, 10, 1.0, rng=CSPRNG(4), noise=noise)
    assert np.array_equal(a, b) and a.shape == (10, 3)
    assert sum(th["beta_hist"]) == 10 and len(th["beta_hist"]) == 65
    out = lap_release(ranks, 1.0, sums=a.sum(axis=0), theory=th)
    assert abs(out["auc"] - roc_auc_score(y, S[:, 0])) < 0.2


def test_ring_grows_with_the_records():
    assert FA.ring_bits(120, 14) == 40 and FA.ring_bits(101_766, 14) == 49
    with pytest.raises(ValueError, match="bits=40 is too small"):
        FA.ring_bits(101_766, 14, 40)


def test_bad_allocation_arguments():
    S = scored_labels(50)
    with pytest.raises(ValueError, match="exact_counts applies"):
        flat_protocol("fedauc-lap", S, "auc", exact_counts=True)
    with pytest.raises(ValueError, match="beta must be in"):
        flat_protocol("fedauc-lap", S, "auc", allocation="orthogonal", beta=1.5)
