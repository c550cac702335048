import math

import numpy as np
import pytest
from scipy import stats
from sklearn.metrics import roc_auc_score

from mpc.arith.rng import CSPRNG
from ustat import kernels as K


def test_registry_contents_and_errors():
    for name in ("gini", "kendall", "auc", "duplicate", "renyi2", "rand", "triples", "vus"):
        assert K.get(name).name == name
    assert {K.get(n).degree for n in K.names()} >= {2, 3}
    assert sum(K.get(n).degree == 3 for n in K.names()) >= 2
    with pytest.raises(ValueError, match="unknown kernel 'nope'; available: auc"):
        K.get("nope")
    with pytest.raises(ValueError, match="already registered"):
        K.register(K.get("gini"))
    with pytest.raises(ValueError, match="degree"):
        K.Kernel("x", 1, 1, None, None, (0, 1))
    with pytest.raises(ValueError, match="output_range"):
        K.Kernel("x", 2, 1, None, None, (1, 1))


def test_sensitivities():
    assert K.get("gini").sensitivity == 1
    assert K.get("kendall").sensitivity == 2
    assert K.get("triples").sensitivity == 2


def _rand_records(g, n, kern):
    X = g.random((n, kern.columns))
    for c in kern.categorical:
        X[:, c] = g.integers(kern.extra.get("levels", {}).get(c, 3), (n,))
    return X


@pytest.mark.parametrize("name", ["gini", "kendall", "auc", "duplicate", "rand", "triples", "vus"])
def test_plain_kernels_are_symmetric(name):
    kern = K.get(name)
    g = CSPRNG(1)
    X = _rand_records(g, 40, kern)
    X[5] = X[6]  # some ties
    edges = np.array([g.choice(40, kern.degree) for _ in range(200)])
    base = kern.plain(X[edges])
    for perm in ([1, 0] + list(range(2, kern.degree)), list(range(kern.degree))[::-1]):
        assert np.allclose(kern.plain(X[edges[:, perm]]), base)
    lo, hi = kern.output_range
    assert base.min() >= lo and base.max() <= hi


def test_complete_u_against_independent_references():
    g = CSPRNG(2)
    n = 60
    X = g.random((n, 2))
    tau = stats.kendalltau(X[:, 0], X[:, 1]).statistic   # no ties: tau-b = tau-a
    assert K.complete_u(K.get("kendall"), X) == pytest.approx(tau, abs=1e-12)
    x = np.sort(X[:, 0])
    gmd = 2 * np.sum((2 * np.arange(1, n + 1) - n - 1) * x) / (n * (n - 1))
    assert K.complete_u(K.get("gini"), X[:, :1]) == pytest.approx(gmd, abs=1e-12)
    S = np.column_stack([np.round(X[:, 0], 1), g.integers(2, (n,))])  # ties in scores
    u = K.complete_u(K.get("auc"), S)
    n_pos = S[:, 1].sum()
    auc = K.get("auc").release(u, [n_pos], n)
    assert auc == pytest.approx(roc_auc_score(S[:, 1], S[:, 0]), abs=1e-12)


def test_duplicate_renyi_rand_vus_triples_references():
    g = CSPRNG(3)
    n = 30
    codes = g.integers(4, (n,)).astype(float)
    counts = np.bincount(codes.astype(int))
    dpr = np.sum(counts * (counts - 1)) / (n * (n - 1))
    assert K.complete_u(K.get("duplicate"), codes[:, None]) == pytest.approx(dpr)
    assert K.get("renyi2").release(dpr, [], n) == pytest.approx(-math.log(dpr))
    a, b = g.integers(3, (n,)), g.integers(2, (n,))
    agree = sum((a[i] == a[j]) == (b[i] == b[j]) for i in range(n) for j in range(i + 1, n))
    assert K.complete_u(K.get("rand"), np.column_stack([a, b]).astype(float)) == pytest.approx(
        agree / math.comb(n, 2))
    s, y = g.random(n), g.integers(3, (n,))
    by = [s[y == v] for v in range(3)]
    vus = np.mean([[[(p < q) and (q < r) for r in by[2]] for q in by[1]] for p in by[0]])
    u = K.complete_u(K.get("vus"), np.column_stack([s, y]))
    assert K.get("vus").release(u, [len(v) for v in by], n) == pytest.approx(vus)
    x = g.random(n)
    ref = np.mean([np.sign(x[i] + x[j] - 2 * x[l]) + np.sign(x[i] + x[l] - 2 * x[j])
                   + np.sign(x[j] + x[l] - 2 * x[i])
                   for i in range(n) for j in range(i + 1, n) for l in range(j + 1, n)])
    assert K.complete_u(K.get("triples"), x[:, None]) == pytest.approx(ref)


def test_complete_u_refuses_huge():
    assert K.complete_u(K.get("gini"), np.zeros((10**5, 1)), limit=10**6) is None


def test_release_notes_say_when_a_clamp_was_active():
    n = 100
    renyi = K.get("renyi2")
    assert renyi.release_notes(0.5, [], n) == []
    (note,) = renyi.release_notes(0.0, [], n)
    assert "lower bound" in note and f"{2 * math.log(n):.4g}" in note
    assert renyi.release(0.0, [], n) == pytest.approx(2 * math.log(n))
    auc = K.get("auc")
    assert auc.release_notes(0.3, [40.0], n) == []
    assert "outside [1, n - 1]" in auc.release_notes(0.3, [-3.0], n)[0]
    assert "outside [1, n - 1]" in auc.release_notes(0.3, [n + 2.0], n)[0]
    vus = K.get("vus")
    assert vus.release_notes(0.1, [30.0, 30.0, 40.0], n) == []
    assert "n1 = -2.0" in vus.release_notes(0.1, [30.0, -2.0, 40.0], n)[0]
    assert K.get("gini").release_notes(0.3, [], n) == []
