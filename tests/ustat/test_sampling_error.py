"""The edge-sampling error bound of an incomplete U-statistic (ustat.umpc.sampling_error):
the variance formula against the real samplers, and the bound against exact enumeration."""

from __future__ import annotations

import math

import numpy as np
import pytest

from mpc.arith.rng import CSPRNG
from ustat import kernels as K
from ustat import sampling
from ustat.umpc.sampling_error import Design, class_sizes, sampling_sd


def _pairs(n):
    i, j = np.triu_indices(n, 1)
    return np.stack([i, j], axis=1)


def _exact(kern, X):
    """U, V_h (over all pairs) and zeta_1 (variance of g over the records), by enumeration."""
    n = X.shape[0]
    P = _pairs(n)
    h = kern.plain(X[P])
    U, V = h.mean(), h.var()
    g = np.zeros(n)
    np.add.at(g, P[:, 0], h)
    np.add.at(g, P[:, 1], h)
    g /= n - 1
    return float(U), float(V), float(g.var())


def _auc_data(n, pos, shift, seed):
    g = np.random.default_rng(seed)
    y = np.zeros(n)
    y[:pos] = 1
    return np.column_stack([np.round(g.normal(shift * y, 1.0), 3), y])


def _kendall_data(n, seed):
    g = np.random.default_rng(seed)
    x = g.random(n)
    return np.column_stack([x, x + g.normal(0, 0.5, n)])


@pytest.mark.parametrize("name,X", [("auc", _auc_data(80, 16, 1.5, 1)),
                                    ("kendall", _kendall_data(80, 2))])
@pytest.mark.parametrize("sampler", ["balanced", "uniform"])
def test_variance_formula_matches_the_real_sampler(name, X, sampler):
    """Var(U_E - U) = (1 - m/N)(V_h - 2 zeta_1)/m + n D2 zeta_1/m^2 over 300 draws of E
    (within 30%: the Monte Carlo sd of a variance from 300 draws is 8%, and the formula drops
    O(1/n) terms). BalancedSamp at |E| = 2n has D2 = 0; uniform has D2 ~ 2m/n."""
    kern = K.get(name)
    n, m = X.shape[0], 2 * X.shape[0]
    U, V, z1 = _exact(kern, X)
    rng = CSPRNG(seed=3)
    errs, d2 = [], []
    for _ in range(300):
        E = sampling.sample(sampler, n, m, 2, rng).edges
        errs.append(kern.plain(X[E]).mean() - U)
        d2.append(Design.of_edges(E, n).degree_variance)
    fpc = 1 - m / math.comb(n, 2)
    predicted = fpc * (V - 2 * z1) / m + n * np.mean(d2) * z1 / m ** 2
    assert np.var(errs) == pytest.approx(predicted, rel=0.3)
    if sampler == "balanced":
        assert max(d2) == 0.0 and predicted < 0.8 * V / m      # the first-order part cancels


@pytest.mark.parametrize("seed", range(12))
def test_bound_holds_at_the_true_values(seed):
    """At the exact U and class sizes, the bound is >= the formula's sd with the exact V_h and
    zeta_1 (AUC: Bhatia-Davis >= V_h and the between-class part <= zeta_1, exactly), and the
    class part makes it tighter than Bhatia-Davis alone."""
    g = np.random.default_rng(seed)
    n = 60
    pos = int(g.integers(5, 55))
    X = _auc_data(n, pos, float(g.uniform(0, 3)), seed)
    if seed % 3 == 0:
        X[:, 0] = np.round(X[:, 0])                      # ties
    kern = K.get("auc")
    U, V, z1 = _exact(kern, X)
    m = 2 * n
    design = Design(m, 0.0, "balanced")
    fpc = 1 - m / math.comb(n, 2)
    truth = math.sqrt(fpc * max(V - 2 * z1, 0.0) / m)
    bound = sampling_sd(kern, n, design, (U, U), [(pos, pos)])
    assert bound >= truth - 1e-12
    plain = sampling_sd(K.get("kendall"), n, design, (2 * U - 1, 2 * U - 1))   # no classes
    assert bound <= math.sqrt(fpc * U * (1 - U) / m) + 1e-12
    assert plain > 0


def test_design_and_class_sizes():
    E = sampling.balanced(50, 75, 2, CSPRNG(seed=1)).edges      # k m / n = 3: every degree 3
    assert Design.of_edges(E, 50).degree_variance == 0.0
    E = sampling.balanced(50, 60, 2, CSPRNG(seed=1)).edges      # degrees 2 and 3
    d = Design.of_edges(E, 50, "balanced")
    assert d.edges == 60 and 0 < d.degree_variance < 0.3
    assert class_sizes(K.get("auc"), [30.0], 100) == [30.0, 70.0]
    assert class_sizes(K.get("vus"), [10.0, 20.0, 70.0], 100) == [10.0, 20.0, 70.0]
    kern = K.get("kendall")
    assert sampling_sd(kern, 10, Design(45, 0.0), (0.0, 0.0)) == 0.0    # all pairs: exact
    # uniform-like degrees: the classical (1 - m/N) V_h / m
    u = Design.uniform_like(200, 100, 2)
    got = sampling_sd(kern, 100, u, (0.0, 0.0))
    assert got == pytest.approx(math.sqrt((1 - 200 / 4950) / 200), rel=0.02)
