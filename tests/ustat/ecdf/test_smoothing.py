import sys

import numpy as np
import pytest
from scipy.optimize import linprog, minimize

from mpc.arith.rng import CSPRNG
from tests.api import flat_release
from ustat.ecdf import Tree, smooth
from ustat.ecdf.smoothing import MissingDependencyError, isotonic, smooth_problem


def _noisy(N=12, n=40, eps=0.3, seed=1):
    x = CSPRNG(seed).random(n)
    r = flat_release(x, np.linspace(0, 1, N), eps, backend="central", seed=seed)
    return r.values, Tree(N)


def _needs(method):
    if method == "l2":
        pytest.importorskip("clarabel", reason="smoothing 'l2' needs clarabel (extra 'smooth')")


@pytest.mark.parametrize("method", ["isotonic", "l1", "l2"])
def test_outputs_are_monotone_and_in_unit_interval(method):
    _needs(method)
    for seed in range(4):
        F, t = _noisy(N=200, n=300, seed=seed)
        out = smooth(F, t, method)
        assert out.shape == F.shape and np.all(np.diff(out) >= 0)
        assert out.min() >= 0 and out.max() <= 1


def test_l1_optimum_equals_the_dual_lp():
    """Strong duality: min ||nu||_1 s.t. G nu >= h  ==  max h.lam s.t. |G^T lam| <= 1, lam >= 0."""
    for seed in range(5):
        F, t = _noisy(seed=seed)
        _, nu, obj = smooth(F, t, "l1", return_nu=True)
        G, h, _, _ = smooth_problem(t, F)
        Gd = G.toarray()
        dual = linprog(-h, A_ub=np.vstack([Gd.T, -Gd.T]), b_ub=np.ones(2 * Gd.shape[1]),
                       bounds=(0, None), method="highs-ipm")
        assert dual.status == 0
        assert obj == pytest.approx(-dual.fun, abs=1e-7)
        assert np.all(Gd @ nu >= h - 1e-8)


def test_l2_optimum_equals_slsqp():
    _needs("l2")
    for seed in range(5):
        F, t = _noisy(seed=seed)
        out, nu, obj = smooth(F, t, "l2", return_nu=True)
        G, h, A, _ = smooth_problem(t, F)
        Gd = G.toarray()
        ref = minimize(lambda v: v @ v, np.zeros(Gd.shape[1]), jac=lambda v: 2 * v,
                       constraints=[{"type": "ineq", "fun": lambda v: Gd @ v - h,
                                     "jac": lambda v: Gd}], method="SLSQP",
                       options={"ftol": 1e-14, "maxiter": 500})
        assert ref.success
        assert obj == pytest.approx(ref.fun, rel=1e-5, abs=1e-9)
        assert np.allclose(nu, ref.x, atol=1e-4)
        assert np.allclose(out, np.clip(F + A @ ref.x, 0, 1), atol=1e-4)


@pytest.mark.parametrize("m", ["isotonic", "l1", "l2"])
def test_feasible_input_is_unchanged(m):
    _needs(m)
    F = np.linspace(0.1, 0.9, 8)
    assert np.allclose(smooth(F, Tree(8), m), F, atol=1e-8)


def test_isotonic_equals_sklearn():
    from sklearn.isotonic import IsotonicRegression
    y = CSPRNG(3).random(500) * 1.4 - 0.2 + np.linspace(0, 0.5, 500)
    ref = IsotonicRegression(y_min=0, y_max=1).fit_transform(np.arange(500), y)
    assert np.allclose(isotonic(y), ref, atol=1e-12)


def test_subset_of_points():
    F, t = _noisy(N=64, n=100, seed=2)
    B = np.arange(0, 64, 5)
    out = smooth(F[B], t, "l1", indices=B)
    assert out.shape == B.shape and np.all(np.diff(out) >= 0)
    with pytest.raises(ValueError, match="strictly increasing"):
        smooth(F[B][::-1], t, "l1", indices=B[::-1])


def test_errors_and_missing_solver(monkeypatch):
    with pytest.raises(ValueError, match="smoothing method"):
        smooth([0.5], Tree(1), "l3")
    with pytest.raises(TypeError, match="needs the release's Tree"):
        smooth([0.5, 0.4], None, "l2")
    with pytest.raises(ValueError, match="finite"):
        smooth([np.nan], Tree(1), "isotonic")
    monkeypatch.setitem(sys.modules, "clarabel", None)
    with pytest.raises(MissingDependencyError, match=r"pip install 'ustat-mpc\[smooth\]'"):
        smooth([0.5, 0.4], Tree(2), "l2")
