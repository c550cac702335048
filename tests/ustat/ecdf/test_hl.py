import math

import numpy as np
import pytest
from scipy import stats

from tests.api import flat_hl
from ustat.ecdf import chi2_sf
from ustat.ecdf.tree import Tree

from ._data import bank_scores

INF = float("inf")


def test_chi2_sf_equals_scipy():
    for df in range(1, 30):
        for x in (0.01, 0.5, 3.0, 12.0, 60.0, 300.0):
            assert chi2_sf(x, df) == pytest.approx(stats.chi2.sf(x, df), rel=1e-10, abs=1e-300)
    assert chi2_sf(0, 3) == 1.0


def _reference_hl(p, y, edges):
    """Independent HL on the raw data: half-open groups (t_{q-1}, t_q], first one closed."""
    Q = len(edges) - 1
    H = 0.0
    for q in range(Q):
        lo, hi = edges[q], edges[q + 1]
        m = (p > lo) & (p <= hi) if q else (p >= lo) & (p <= hi)
        e1, o1 = p[m].sum(), y[m].sum()
        e0, o0 = (1 - p[m]).sum(), (1 - y[m]).sum()
        H += (o1 - e1) ** 2 / e1 + (o0 - e0) ** 2 / e0
    return H


@pytest.mark.parametrize("backend", ["central", "fss", "pointwise"])
def test_eps_inf_equals_independent_computation(backend):
    p, y = bank_scores(1500 if backend != "central" else None)
    r = flat_hl(p, y, 10, INF, backend=backend, seed=1, evaluate=True,
                n_thresholds=512)
    ref = _reference_hl(p, y, r.edges)
    tol = 1e-12 if backend == "central" else 1e-5          # E in fixed point (2^-16) on servers
    assert r.statistic == pytest.approx(ref, rel=tol)
    assert r.p_value == pytest.approx(stats.chi2.sf(ref, 10), rel=1e-4)    # calibrated: df Q
    fitted = flat_hl(p, y, 10, INF, backend=backend, seed=1, null="fitted",
                     n_thresholds=512)
    assert fitted.df == 8 and fitted.p_value == pytest.approx(stats.chi2.sf(ref, 8), rel=1e-4)
    assert np.array_equal(r.edges, r.exact["edges"])
    assert sum(map(int, r.table["O1"])) == y.sum()


def test_accounting_follows_theorem_5_1():
    p, y = bank_scores(2000)
    r = flat_hl(p, y, 10, 1.0, backend="central", seed=2, sensitivity="paper",
                n_thresholds=1024)
    L = Tree(1024).levels
    assert r.account["epsilon_prime"] == pytest.approx(1.0 / (L + 9))
    assert r.account["epsilon"] <= 1.0 + 1e-12
    assert r.account["tree_epsilon"] == pytest.approx((L + 1) / (L + 9))
    assert r.account["sums_epsilon"] == pytest.approx(8 / (L + 9))
    exact = flat_hl(p, y, 10, 1.0, backend="central", seed=2, n_thresholds=1024)
    # a quarter for the edges; the sums' exact L1 sensitivity is 4 (a record's (p, 1-p, y, 1-y)
    # has norm 2), so eps' = (3/4) / 4
    assert exact.account["tree_epsilon"] == pytest.approx(0.25, rel=1e-6)
    assert exact.account["epsilon_prime"] == pytest.approx(0.75 / 4)
    assert exact.account["sums_epsilon"] == pytest.approx(0.75, rel=1e-6)
    assert exact.account["epsilon"] <= 1.0 + 1e-12


def test_private_hl_on_bank_with_large_epsilon():
    p, y = bank_scores()
    r = flat_hl(p, y, 10, 50.0, backend="central", seed=3, evaluate=True)
    assert math.isfinite(r.statistic) and 0 <= r.p_value <= 1
    assert abs(r.statistic - r.exact["statistic"]) < 0.5 * r.exact["statistic"]


def test_single_class_is_not_checked_in_the_clear():
    """All labels 1: the test runs (its noisy sums show it); nothing data-dependent is refused."""
    p, y = bank_scores(2000)
    r = flat_hl(p, np.ones_like(y), 10, 5.0, backend="central", seed=1)
    assert math.isfinite(r.statistic) and 0 <= r.p_value <= 1


def test_refuses_when_the_noise_dominates_before_computing():
    """Heart-sized data (n = 303) at epsilon 0.5: the noise sd per group (~15 records) exceeds
    the group's whole sampling sd; refused from public parameters, naming the remedies."""
    p, y = bank_scores(303)
    with pytest.raises(ValueError, match=r"noise dominates.*larger epsilon.*fewer groups"):
        flat_hl(p, y, 10, 0.5, backend="central")
    r = flat_hl(p, y, 10, 0.5, backend="central", max_detectable=None, seed=1)
    assert 0 < r.p_value <= 1 and r.detectable_miscalibration > 0.25


def test_noise_aware_statistic_and_null():
    """With no noise T is the classical HL statistic; the simulated null of a noisy release
    has the chi-square(Q) mean plus the noise's share, and a grossly miscalibrated model
    (p halved) is rejected while calibrated labels are not (one fixed draw each)."""
    from ustat.ecdf.hl_test import hl_pvalue, hl_statistic
    from ustat.ecdf.noise_law import NodeNoiseLaw
    E1, E0 = np.array([5.0, 20.0, 60.0]), np.array([95.0, 80.0, 40.0])
    O1, O0 = np.array([7.0, 18.0, 66.0]), np.array([93.0, 82.0, 34.0])
    H = float(np.sum((O1 - E1) ** 2 / E1 + (O0 - E0) ** 2 / E0))
    assert hl_statistic(E1, E0, O1, O0, 0.0) == pytest.approx(H, rel=1e-12)
    assert hl_pvalue(H, E1, E0, None) == pytest.approx(stats.chi2.sf(H, 3), rel=1e-10)
    noise = {"o_law": NodeNoiseLaw(3.0), "e_law": NodeNoiseLaw(3.0 * 2 ** 16), "frac_bits": 16}
    assert 0.5 < hl_pvalue(1.0, E1, E0, noise) < 1.0
    p, _ = bank_scores()
    g = np.random.default_rng(3)
    y_cal = (g.random(p.size) < p).astype(int)
    y_bad = (g.random(p.size) < np.minimum(1, 2 * p)).astype(int)
    ok = flat_hl(p, y_cal, 10, 5.0, backend="central", seed=4)
    bad = flat_hl(p, y_bad, 10, 5.0, backend="central", seed=4)
    assert ok.p_value > 0.01 and bad.p_value < 1e-3


@pytest.mark.parametrize("kwargs,msg", [
    (dict(groups=2), "groups must be in 3"),
    (dict(groups=1000), "groups must be in 3"),
    (dict(probs_shift=0.5), r"must lie in \[0, 1\]"),
])
def test_bad_inputs(kwargs, msg):
    p, y = bank_scores(300)
    if kwargs.pop("probs_shift", None):
        p = p + 0.95
    with pytest.raises(ValueError, match=msg):
        flat_hl(p, y, kwargs.get("groups", 10), 1.0, backend="central")
