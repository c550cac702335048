import math

import numpy as np
import pytest

from mpc.arith.rng import CSPRNG
from tests.api import flat_protocol
from ustat import kernels as K
from ustat.baselines import _common as C
from ustat.baselines import bell_ldp as B

from ._data import correlated_pairs, scored_labels, tau_a


def test_privacy_off_kendall_equals_scipy_on_bins():
    X = correlated_pairs(300)
    r = flat_protocol("bell-ldp", X, "kendall", epsilon=math.inf, bins=8, seed=1, evaluate=True)
    cells = np.minimum(np.floor(X * 8), 7)
    ref = tau_a(cells[:, 0], cells[:, 1])
    assert r.estimate == pytest.approx(ref, abs=1e-12)
    assert r.evaluation["u_discretized"] == pytest.approx(ref, abs=1e-12)
    assert r.evaluation["u_complete"] == pytest.approx(tau_a(X[:, 0], X[:, 1]), abs=1e-12)


def test_privacy_off_gini_duplicate_auc():
    X = correlated_pairs(200)[:, :1]
    r = flat_protocol("bell-ldp", X, "gini", epsilon=math.inf, bins=16, seed=1)
    mid = (np.minimum(np.floor(X[:, 0] * 16), 15) + 0.5) / 16
    ref = np.abs(mid[:, None] - mid[None, :]).sum() / (200 * 199)
    assert r.estimate == pytest.approx(ref, abs=1e-12)
    D = CSPRNG(5).integers(6, (150,)).astype(float)[:, None]
    r = flat_protocol("bell-ldp", D, "duplicate", epsilon=math.inf, seed=1, levels=6)
    c = np.bincount(D[:, 0].astype(int))
    assert r.estimate == pytest.approx((c * (c - 1)).sum() / (150 * 149), abs=1e-12)
    from sklearn.metrics import roc_auc_score
    S = scored_labels(300)
    r = flat_protocol("bell-ldp", S, "auc", epsilon=math.inf, bins=32, seed=1)
    assert r.estimate == pytest.approx(roc_auc_score(S[:, 1], np.floor(S[:, 0] * 32)), abs=1e-12)


def test_bits_per_party_equal_formula():
    X = correlated_pairs(97)
    r = flat_protocol("bell-ldp", X, "kendall", epsilon=1.0, bins=5, seed=3)
    per = (25 - 1).bit_length()                        # ceil(log2 T), T = 25
    assert r.params["message_bits"] == per == 5
    assert r.online_bits == 97 * per and r.max_party_bits == per
    assert r.rounds == 1 and r.offline_bits == 0
    assert r.communication["online"]["roles"]["aggregator"]["received_bits"] == 97 * per
    assert r.dp_model == "local" and "randomized response" in r.trust


def _mc(cells, A, T, eps, runs, seed):
    """runs independent estimates, all reports drawn in one batch."""
    beta = B.rr_beta(T, eps)
    n = cells.size
    rep = C.k_rr(np.tile(cells, runs), T, eps, CSPRNG(seed)).reshape(runs, n)
    hist = np.zeros((runs, T))
    np.add.at(hist, (np.repeat(np.arange(runs), n), rep.ravel()), 1)
    one = B.estimate_from_reports(hist[0], A, beta)[0]
    # the batched estimator below is estimate_from_reports, vectorized over runs
    k, b = 1 - beta, beta / T
    c = (hist - n * b) / k
    r = A.sum(axis=1)
    q = np.diagonal(A) - 2 * b * r + b * b * r.sum()
    est = (np.einsum("ri,ij,rj->r", c, A, c) - hist @ q / k ** 2) / (n * (n - 1))
    assert est[0] == pytest.approx(one, rel=1e-12)
    return est


@pytest.mark.slow
def test_unbiased_and_variance_matches_exact_formula():
    # 4000 repetitions: the mean is within 4 standard errors of the discretized U;
    # the sample variance is within 10% of the exact variance (its relative standard
    # error is about sqrt(2/4000) = 2.2%, the kurtosis of the estimate is mild)
    X = correlated_pairs(80, seed=7)[:, :1]
    kern = K.get("gini")
    grid = C.make_grid(X, kern, 6)
    A = C.kernel_matrix(kern, grid)
    cells = grid.index(X)
    hist = np.bincount(cells, minlength=6)
    truth = C.pair_sum(A, hist) / (80 * 79)
    est = _mc(cells, A, 6, 1.0, 4000, seed=8)
    exact = B.exact_variance(hist, A, B.rr_beta(6, 1.0))
    assert abs(est.mean() - truth) < 4 * math.sqrt(exact / 4000)
    assert est.var() == pytest.approx(exact, rel=0.10)
    # Theorem 1 (kernel values in [0, 1]) bounds it
    assert exact <= B.theorem1_bound(80, B.rr_beta(6, 1.0), 1.0)


def test_exact_variance_matches_brute_force():
    # the closed form against the sum over pairs computed from explicit covariance matrices
    g = CSPRNG(9)
    T, n, eps = 4, 7, 0.8
    A = g.random((T, T))
    A = A + A.T
    x = g.integers(T, (n,))
    beta = B.rr_beta(T, eps)
    k, b = 1 - beta, beta / T
    cov = []
    for xi in x:
        p = k * np.eye(T)[xi] + b
        cov.append((np.diag(p) - np.outer(p, p)) / k ** 2)
    h = np.bincount(x, minlength=T).astype(float)
    lin = sum((A @ (h - np.eye(T)[xi])) @ cov[i] @ (A @ (h - np.eye(T)[xi]))
              for i, xi in enumerate(x))
    quad = sum(np.trace(A @ cov[i] @ A @ cov[j]) for i in range(n) for j in range(i + 1, n))
    ref = 4 * (lin + quad) / (n * (n - 1)) ** 2
    assert B.exact_variance(h, A, beta) == pytest.approx(ref, rel=1e-10)


def test_runner_reports_exact_variance_and_bound():
    X = correlated_pairs(120)
    r = flat_protocol("bell-ldp", X, "kendall", epsilon=2.0, bins=4, seed=2, evaluate=True)
    assert 0 < r.evaluation["variance_exact"] <= r.theory["variance_bound_thm1"]
    assert r.theory["keep_probability"] == pytest.approx(math.exp(2) / (math.exp(2) + 15))
