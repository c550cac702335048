"""The empirical DP audit of the collusion-aware split (threshold test, Clopper-Pearson)."""

import pytest
from scipy import stats

from noise.audit import DEFAULT_AUDIT, audit_epsilon_lower_bound, clopper_pearson


@pytest.mark.parametrize("k,n,alpha", [(5861, 10000, 0.05), (1154, 10000, 1e-3), (0, 10, 0.05),
                                       (10, 10, 0.05), (3, 10, 0.2), (1, 100000, 1e-3)])
def test_clopper_pearson_matches_scipy(k, n, alpha):
    lo, hi = clopper_pearson(k, n, alpha)
    ref = stats.binomtest(k, n).proportion_ci(1 - alpha, "exact")
    assert lo == pytest.approx(ref.low, abs=1e-12) and hi == pytest.approx(ref.high, abs=1e-12)


def test_errors():
    with pytest.raises(ValueError, match="0 <= k <= n"):
        clopper_pearson(5, 3, 0.05)
    with pytest.raises(ValueError, match="alpha"):
        clopper_pearson(1, 3, 1.5)
    with pytest.raises(ValueError, match="split"):
        audit_epsilon_lower_bound(split="new")
    with pytest.raises(ValueError, match=r"colluders must be an integer in 0\.\.3"):
        audit_epsilon_lower_bound(colluders=4)
    with pytest.raises(ValueError, match="sensitivity must be an integer"):
        audit_epsilon_lower_bound(sensitivity=2.5)
    with pytest.raises(ValueError, match="runs"):
        audit_epsilon_lower_bound(runs=10)


@pytest.mark.slow
@pytest.mark.parametrize("kw", [{}, {"n": 3}, {"n": 5, "max_colluders": 4}])
def test_audit_passes_new_split_and_flags_the_old_one(kw):
    """The coalition's view stays below the claim with Polya(1/(n - t)); Polya(1/n) is flagged."""
    eps_new, d_new = audit_epsilon_lower_bound(seed=1, **kw)
    assert d_new["colluders"] == d_new["max_colluders"]
    assert d_new["eps_exact"] == pytest.approx(1.0, rel=1e-8)
    assert 0.75 < eps_new <= d_new["eps_claimed"] and not d_new["flagged"]
    eps_old, d_old = audit_epsilon_lower_bound(seed=1, split="legacy", **kw)
    assert d_old["flagged"] and eps_old > 1.2 * d_old["eps_claimed"]
    assert eps_old <= d_old["eps_exact"]                 # a lower bound of the exact loss


@pytest.mark.slow
def test_audit_beyond_the_tolerated_coalition():
    """One colluder more than tolerated: the bound exceeds the claim, below the exact loss."""
    eps, d = audit_epsilon_lower_bound(seed=2, n=4, colluders=3)
    assert d["max_colluders"] == 2 and d["flagged"] and eps <= d["eps_exact"]
    assert DEFAULT_AUDIT["n"] == 4 and DEFAULT_AUDIT["runs"] == 100_000


def test_threshold_audit_on_two_samples():
    """DLap views of neighbours whose query differs by the sensitivity: the lower bound stays
    below the true epsilon, and a mechanism four times as loose is caught above the claim."""
    import math

    import numpy as np

    from noise.audit import threshold_audit

    g = np.random.default_rng(3)

    def dlap(scale, size):
        a = math.exp(-1.0 / scale)
        return g.geometric(1 - a, size) - g.geometric(1 - a, size)

    for eps, check in ((1.0, lambda e: e <= 1.0), (4.0, lambda e: e > 1.0)):
        scale = 8 / eps
        v0, v1 = dlap(scale, 4000), 8 + dlap(scale, 4000)
        eps_lo, d = threshold_audit(v0, v1)
        assert check(eps_lo) and eps_lo <= eps, (eps, eps_lo, d)
        assert d["holdout"] == 2000 and d["direction"] in ("le", "ge")
