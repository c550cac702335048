import numpy as np
import pytest
from sklearn.metrics import roc_auc_score, roc_curve

from ustat.ecdf import private_roc

from ._data import bank_scores

INF = float("inf")


def _dedupe(f, t):
    pts = np.stack([f, t], 1)
    keep = np.ones(len(pts), bool)
    keep[1:] = np.any(pts[1:] != pts[:-1], axis=1)
    return pts[keep]


@pytest.mark.parametrize("backend,n", [("central", None), ("fss", 600), ("pointwise", 600)])
def test_eps_inf_equals_sklearn(backend, n):
    s, y = bank_scores(n)
    r = private_roc(s, y, np.unique(s), INF, bounds=(0, 1), backend=backend, seed=1)
    fpr, tpr, _ = roc_curve(y, s, drop_intermediate=False)
    assert np.array_equal(_dedupe(r.fpr, r.tpr)[::-1], np.stack([fpr, tpr], 1))
    assert r.auc == pytest.approx(roc_auc_score(y, s), rel=1e-12)
    assert r.n_pos == y.sum() and r.n_neg == (1 - y).sum()


def test_private_roc_accounting_and_accuracy():
    s, y = bank_scores()
    r = private_roc(s, y, np.linspace(0, 1, 128), 8.0, bounds=(0, 1), backend="central", seed=2,
                    smooth="isotonic", evaluate=True)
    assert r.account["epsilon"] <= 8.0 and r.account["epsilon_per_class"] <= 4.0
    assert np.all(np.diff(r.fpr) <= 0) and np.all(np.diff(r.tpr) <= 0)     # smoothed: monotone
    assert abs(r.auc - r.exact["auc"]) < 0.05
    assert abs(r.n_pos - 521) < 60                  # noisy class size, L + 1 node noises


def test_fss_hides_labels_in_the_key_weights():
    """Both classes upload keys for all parties: the servers' key count does not reveal n+."""
    s, y = bank_scores(200)
    r = private_roc(s, y, np.linspace(0, 1, 16), INF, bounds=(0, 1), backend="fss", seed=3)
    rep = r.communication
    assert rep["offline"]["messages"] == 2 * 2 * 200             # 2 trees x 2 servers x n


def test_single_class_is_not_checked_in_the_clear():
    """One class only: nothing is refused before the release; only the DP class counts tell."""
    with pytest.raises(ValueError, match="noisy class size"):
        private_roc([0.1, 0.2], [1, 1], [0.5, 1.0], INF, bounds=(0, 1), backend="central")
    s, _ = bank_scores(200)
    outcomes = set()
    for seed in range(6):
        try:
            private_roc(s, np.ones(s.size, dtype=int), np.linspace(0, 1, 8), 1.0, bounds=(0, 1),
                        backend="central", seed=seed)
            outcomes.add("released")
        except ValueError as exc:
            assert "noisy class size" in str(exc)
            outcomes.add("noisy count <= 0")
    assert outcomes            # any mix: the outcome depends on the noise, never on a clear check


def test_bad_labels():
    with pytest.raises(ValueError, match="0/1"):
        private_roc([0.1, 0.2], [0, 2], [0.5, 1.0], 1.0, bounds=(0, 1))
    with pytest.raises(ValueError, match="outside the bounds"):
        private_roc([0.1, 2.0], [0, 1], [0.5, 1.0], 1.0, bounds=(0, 1))
