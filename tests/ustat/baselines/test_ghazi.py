import math

import numpy as np
import pytest

from mpc.arith.rng import CSPRNG
from tests.api import flat_protocol
from ustat.baselines import factor as F
from ustat.baselines import ghazi as G

from ._data import correlated_pairs, scored_labels, tau_a


def test_privacy_off_exact_discretized_statistic():
    X = correlated_pairs(250)
    r = flat_protocol("ghazi", X, "kendall", epsilon=math.inf, bins=8, seed=1, evaluate=True)
    cells = np.minimum(np.floor(X * 8), 7)
    assert r.params["factorization"] == "exact"          # d = inf >= T: no projection
    assert r.estimate == pytest.approx(tau_a(cells[:, 0], cells[:, 1]), abs=1e-12)
    assert r.evaluation["u_discretized"] == pytest.approx(r.estimate, abs=1e-12)
    G1 = correlated_pairs(200)[:, :1]
    r = flat_protocol("ghazi", G1, "gini", epsilon=math.inf, bins=16, seed=1)
    mid = (np.minimum(np.floor(G1[:, 0] * 16), 15) + 0.5) / 16
    assert r.estimate == pytest.approx(np.abs(mid[:, None] - mid).sum() / (200 * 199), abs=1e-12)


def test_jl_factorization_structure_and_unbiasedness():
    g = CSPRNG(2)
    A = g.random((12, 12))
    A = A + A.T
    fac = F.jl_factorization(A, 8, 2, g)
    assert fac.dim == 8 and fac.rows.shape == (2, 12)
    Lt = np.zeros((12, 8))
    Lt[np.arange(12), fac.rows[0]] += fac.vals[0]
    Lt[np.arange(12), fac.rows[1]] += fac.vals[1]
    LtL = Lt @ Lt.T
    assert np.allclose(np.diagonal(LtL), 1.0)                # (G^T G)_xx = 1 exactly
    assert np.allclose(fac.R, Lt.T @ A)                      # R = G A
    assert np.allclose(fac.product(), LtL @ A)
    assert np.allclose(fac.left_norms()[0], 1.0)
    # E[L^T R] = A: mean over 1000 draws within 5 standard errors entrywise
    prods = np.stack([F.jl_factorization(A, 8, 2, g).product() for _ in range(1000)])
    se = prods.std(axis=0) / math.sqrt(1000)
    assert np.all(np.abs(prods.mean(axis=0) - A) < 5 * se + 1e-12)


def test_vrand_unbiased_second_moment_and_sign_coin():
    g = CSPRNG(3)
    d, m, eps = 5, 40000, 1.0
    v = np.array([0.3, -0.2, 0.5, 0.0, 0.1])
    out = G.vrand(np.tile(v, (m, 1)), eps, g)
    kappa = G.vrand_kappa(eps)
    se = out.std(axis=0) / math.sqrt(m)
    assert np.all(np.abs(out.mean(axis=0) - v) < 5 * se)
    # E |out|^2 = kappa^2 d exactly (|S| = 1, E Z Z^T = I)
    sq = (out ** 2).sum(axis=1)
    assert abs(sq.mean() - kappa ** 2 * d) < 5 * sq.std() / math.sqrt(m)
    z = G.symmetric_gaussian((200000,), g)
    assert abs(z.mean()) < 0.01 and abs(z.var() - 1) < 0.02
    with pytest.raises(ValueError, match="unit ball"):
        G.vrand(np.array([[2.0, 0.0]]), eps, g)


@pytest.mark.slow
def test_unbiased_and_variance_matches_formula():
    # exact factorization: E U^ = discretized U and Var U^ = conditional_variance (rounding to
    # 2^-14 adds < 1e-8 relative); 400 runs: mean within 4 SE, variance within 25%
    # (relative SE of a sample variance ~ sqrt(2/400) = 7%)
    X = correlated_pairs(60, seed=4)[:, :1]
    runs = [flat_protocol("ghazi", X, "gini", epsilon=2.0, bins=4, factorization="exact",
                          seed=s, evaluate=(s == 0)) for s in range(400)]
    est = np.array([r.estimate_raw for r in runs])
    truth = runs[0].evaluation["u_discretized"]
    var = runs[0].evaluation["variance_given_factorization"]
    assert abs(est.mean() - truth) < 4 * math.sqrt(var / 400)
    assert est.var() == pytest.approx(var, rel=0.25)


@pytest.mark.slow
def test_jl_path_unbiased_over_projections():
    # d = 6 < T = 16: mean over 300 runs (fresh projection each) within 4 SE of the truth
    X = correlated_pairs(80, seed=6)
    est, truth = [], None
    for s in range(300):
        r = flat_protocol("ghazi", X, "kendall", epsilon=4.0, bins=4, dim=6, sparsity=2, seed=s,
                          evaluate=(s == 0))
        truth = r.evaluation["u_discretized"] if s == 0 else truth
        est.append(r.estimate)
        assert r.params["factorization"] == "jl" and r.params["dim"] == 6
    est = np.array(est)
    assert abs(est.mean() - truth) < 4 * est.std() / math.sqrt(300)


def test_bits_rounds_and_aux():
    X = correlated_pairs(90)
    r = flat_protocol("ghazi", X, "kendall", epsilon=1.0, bins=4, dim=6, seed=5)
    d = r.params["dim"]
    assert d == 6
    assert r.online_bits == 90 * 2 * d * 40 and r.max_party_bits == 2 * d * 40
    assert r.rounds == 1 and r.offline_bits == 90 * G.SEED_BITS
    r = flat_protocol("ghazi", X, "kendall", epsilon=1.0, bins=4, seed=5)
    assert r.params["factorization"] == "exact" and r.offline_bits == 0
    assert r.theory["dim_paper"] >= 16 and r.notes and "would not compress" in r.notes[0]
    S = scored_labels(120)
    r = flat_protocol("ghazi", S, "auc", epsilon=1.0, bins=4, seed=5)
    # T = 4 x 2 cells, plus one randomized-response bit for the positive count
    assert r.max_party_bits == 2 * 8 * 40 + 1


def test_conditional_variance_against_brute_force():
    g = CSPRNG(7)
    T = 3
    A = g.random((T, T))
    A = A + A.T
    fac = F.jl_factorization(A, 2, 1, g)
    x = np.array([0, 1, 1, 2, 0])
    n = x.size
    cl, cr, kappa = 1.0, 2.5, 3.0
    L, R = fac.left(x), fac.right(x)
    cov_l = [cl ** 2 * kappa ** 2 * np.eye(2) - np.outer(v, v) for v in L]
    cov_r = [cr ** 2 * kappa ** 2 * np.eye(2) - np.outer(v, v) for v in R]
    lin = 0.0
    for i in range(n):
        wr = R.sum(0) - R[i]
        wl = L.sum(0) - L[i]
        lin += wr @ cov_l[i] @ wr + wl @ cov_r[i] @ wl
    quad = sum(np.trace(cov_l[i] @ cov_r[j]) for i in range(n) for j in range(n) if i != j)
    ref = (lin + quad) / (n * (n - 1)) ** 2
    got = G.conditional_variance(np.bincount(x, minlength=T), fac, cl, cr, kappa)
    assert got == pytest.approx(ref, rel=1e-10)


def test_bad_parameters():
    X = correlated_pairs(40)
    with pytest.raises(ValueError, match="factorization must be"):
        flat_protocol("ghazi", X, "kendall", bins=4, factorization="svd")
    with pytest.raises(ValueError, match="dim must be >= 1"):
        flat_protocol("ghazi", X, "kendall", bins=4, dim=0)
    with pytest.raises(ValueError, match="aux_epsilon_fraction"):
        flat_protocol("ghazi", scored_labels(40), "auc", bins=4, aux_epsilon_fraction=1.5)
