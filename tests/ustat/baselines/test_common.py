import math

import numpy as np
import pytest
from scipy.stats import chisquare

from mpc.arith.rng import CSPRNG
from tests.api import flat_protocol
from ustat import kernels as K
from ustat.baselines import _common as C

from ._data import correlated_pairs, scored_labels


def test_k_rr_exact_law():
    # chi-square goodness of fit against e^eps/(e^eps+k-1), 1/(e^eps+k-1); 60000 draws,
    # fixed seed: the test fails with probability 1e-3 under the exact law
    k, eps, m = 5, 0.7, 60000
    x = np.full(m, 2)
    out = C.k_rr(x, k, eps, CSPRNG(11))
    counts = np.bincount(out, minlength=k)
    den = math.exp(eps) + k - 1
    p = np.full(k, 1 / den)
    p[2] = math.exp(eps) / den
    assert chisquare(counts, m * p).pvalue > 1e-3


def test_k_rr_privacy_off_and_keep_sign():
    x = np.arange(10) % 4
    assert np.array_equal(C.k_rr(x, 4, math.inf, CSPRNG(1)), x)
    s = C.keep_sign(50000, 1.0, CSPRNG(2))
    keep = math.e / (math.e + 1)
    # 5 standard errors
    assert abs((s == 1).mean() - keep) < 5 * math.sqrt(keep * (1 - keep) / 50000)
    assert set(np.unique(s)) <= {-1, 1}


def test_grid_cells_representatives_and_matrix():
    X = np.array([[0.0, 0.99], [0.5, 1.0], [0.26, 0.24]])
    kern = K.get("kendall")
    grid = C.make_grid(X, kern, 4)
    assert grid.sizes == (4, 4) and grid.domain == 16
    assert grid.cells(X).tolist() == [[0, 3], [2, 3], [1, 0]]
    reps = grid.representatives()
    assert np.allclose(grid.discretize(X), [[0.125, 0.875], [0.625, 0.875], [0.375, 0.125]])
    A = C.kernel_matrix(kern, grid)
    i, j = np.meshgrid(np.arange(16), np.arange(16), indexing="ij")
    ref = kern.plain(np.stack([reps[i.ravel()], reps[j.ravel()]], axis=1)).reshape(16, 16)
    assert np.array_equal(A, ref)
    assert C.kernel_matrix(kern, grid) is A            # cached


def test_grid_categorical_levels():
    X = scored_labels(50)
    grid = C.make_grid(X, K.get("auc"), 8)
    assert grid.sizes == (8, 2)
    notes = []
    D = np.array([[0.0], [3.0], [1.0]])
    g = C.make_grid(D, K.get("duplicate"), 8, None, notes)
    assert g.sizes == (4,) and "leaks" in notes[0]
    assert C.make_grid(D, K.get("duplicate"), 8, 6).sizes == (6,)
    with pytest.raises(ValueError, match=r"codes 0\.\.1"):
        C.make_grid(D, K.get("duplicate"), 8, 2)


def test_pair_sum_against_loops():
    g = CSPRNG(3)
    A = g.random((6, 6))
    A = A + A.T
    x = g.integers(6, (30,))
    ref = sum(A[x[i], x[j]] for i in range(30) for j in range(30) if i != j)
    assert math.isclose(C.pair_sum(A, np.bincount(x, minlength=6)), ref, rel_tol=1e-12)


@pytest.mark.parametrize("proto", ["bell-ldp", "ghazi", "ghazi-sm"])
def test_degree3_kernels_refused(proto):
    X = CSPRNG(4).random((20, 1))
    with pytest.raises(ValueError, match=r"degree-2 U-statistics only.*degree 3"):
        flat_protocol(proto, X, "triples", epsilon=1.0, seed=1)


@pytest.mark.parametrize("proto", ["bell-auc", "fedauc-rr", "fedauc-lap"])
def test_auc_only_protocols_refuse_other_kernels(proto):
    with pytest.raises(ValueError, match="only the AUC"):
        flat_protocol(proto, correlated_pairs(30)[:, :1], "gini", epsilon=1.0, seed=1)


@pytest.mark.parametrize("bins, err, msg", [(1, ValueError, "bins must be >= 2"),
                                            (0, ValueError, "bins must be >= 2"),
                                            (2.5, TypeError, "bins must be an integer"),
                                            (True, TypeError, "bins must be an integer")])
@pytest.mark.parametrize("proto", ["bell-ldp", "bell-auc", "ghazi", "ghazi-sm"])
def test_bad_bins(proto, bins, err, msg):
    kernel = "auc" if proto == "bell-auc" else "gini"
    X = scored_labels(40) if kernel == "auc" else correlated_pairs(40)[:, :1]
    with pytest.raises(err, match=msg):
        flat_protocol(proto, X, kernel, epsilon=1.0, bins=bins, seed=1)


def test_other_bad_inputs():
    X = correlated_pairs(40)
    with pytest.raises(ValueError, match="unknown protocol 'nope'"):
        flat_protocol("nope", X, "kendall")
    with pytest.raises(ValueError, match="epsilon must be > 0"):
        flat_protocol("bell-ldp", X, "kendall", epsilon=0.0)
    with pytest.raises(ValueError, match="power of two"):
        flat_protocol("bell-auc", scored_labels(40), "auc", bins=48)
    with pytest.raises(ValueError, match="normalized to \\[0, 1\\]"):
        flat_protocol("ghazi", X * 2, "kendall")
    with pytest.raises(ValueError, match="T = 128 x 128 = 16384"):
        flat_protocol("bell-ldp", X, "kendall", bins=128)
    with pytest.raises(ValueError, match="needs records with 2 column"):
        flat_protocol("ghazi-sm", X[:, :1], "kendall")
