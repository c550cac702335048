"""Smoothing a noisy ECDF into a non-decreasing function in [0, 1] (post-processing, no epsilon).

Barczewski, Mawass, Ramon, Section 3.2, problem (3): find node corrections
nu (one per tree node on the paths of the points B) minimizing
sum |nu_v|^p subject to

    F'(tau_i) = F^(tau_i) + sum_{l=0..L} nu[l, floor(i / b^l)]   (i in B)
    F'(min B) >= 0,  F'(max B) <= 1,  F' non-decreasing on B.

* ``"l1"`` (p = 1): a linear program (nu = u - w, u, w >= 0), solved by
  HiGHS through :func:`scipy.optimize.linprog` (scipy: extra ``smooth``).
* ``"l2"`` (p = 2): a convex quadratic program min 1/2 ||nu||^2, solved by
  the Clarabel interior-point solver (extra ``smooth``).
* ``"isotonic"``: plain isotonic regression of the points (PAVA, pure
  numpy/Python, no dependency), clipped to [0, 1] -- the exact L2 projection
  onto non-decreasing sequences in [0, 1]; it ignores the tree structure.

Sizes: |B| points, M ~ 2 |B| tree nodes, |B| + 1 constraints (sparse, L + 1
nonzeros per point). Solvers return a point feasible to ~1e-9; the output
is then made exactly non-decreasing and inside [0, 1] (a running maximum
and a clip, moving it by at most the solver tolerance).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal, overload

import numpy as np

from .tree import Tree

if TYPE_CHECKING:
    import scipy.sparse as sp
    from numpy.typing import ArrayLike

__all__ = ["METHODS", "MissingDependencyError", "isotonic", "smooth", "smooth_problem"]

METHODS = ("isotonic", "l1", "l2")


class MissingDependencyError(ImportError):
    """An optional dependency is missing; the message is a one-line install hint."""


def _need(module: str, package: str, what: str):
    import importlib
    try:
        return importlib.import_module(module)
    except ImportError:
        raise MissingDependencyError(f"{what} needs {package}: pip install 'ustat-mpc[smooth]' "
                                f"(or pip install {package})") from None


def isotonic(y: ArrayLike, weights: ArrayLike | None = None) -> np.ndarray:
    """Non-decreasing least-squares fit of ``y`` (pool adjacent violators), clipped to [0, 1].

    Clipping the isotonic fit is the projection onto non-decreasing
    sequences with values in [0, 1]. Cost: O(N) (a stack of blocks; the loop
    runs over points, amortized constant work each).
    """
    y = np.asarray(y, dtype=np.float64).reshape(-1)
    w = np.ones_like(y) if weights is None else np.asarray(weights, np.float64).reshape(-1)
    if w.shape != y.shape or np.any(w <= 0):
        raise ValueError("weights must be positive, one per value")
    means: list[float] = []
    wts: list[float] = []
    sizes: list[int] = []
    for v, wi in zip(y.tolist(), w.tolist()):
        m, ww, sz = v, wi, 1
        while means and means[-1] >= m:
            pm, pw, ps = means.pop(), wts.pop(), sizes.pop()
            m = (pm * pw + m * ww) / (pw + ww)
            ww += pw
            sz += ps
        means.append(m)
        wts.append(ww)
        sizes.append(sz)
    out = np.repeat(np.asarray(means), np.asarray(sizes, dtype=np.int64))
    return np.clip(out, 0.0, 1.0)


def smooth_problem(tree: Tree, values: ArrayLike, indices: ArrayLike | None = None
                   ) -> tuple[sp.csr_matrix, np.ndarray, sp.csr_matrix, np.ndarray]:
    """The sparse data of problem (3): (G, h, A, nodes) with constraints G nu >= h.

    Rows: F'(B_0) >= 0; F'(B_k) - F'(B_{k-1}) >= 0; -F'(B_last) >= -1, with
    F' = F^ + A nu and A the |B| x M path-incidence matrix over the M nodes
    that lie on some path of B (``nodes``, their tree ids).
    """
    import scipy.sparse as sp

    F = np.asarray(values, dtype=np.float64).reshape(-1)
    B = np.arange(tree.n_points) if indices is None else np.asarray(indices, np.int64).reshape(-1)
    if B.size != F.size:
        raise ValueError(f"values: {F.size} values for {B.size} indices")
    if B.size > 1 and np.any(np.diff(B) <= 0):
        raise ValueError("indices must be strictly increasing")
    P = tree.path(B)
    nodes, inv = np.unique(P, return_inverse=True)
    k = B.size
    A = sp.csr_matrix((np.ones(P.size), (np.repeat(np.arange(k), P.shape[1]), inv.reshape(-1))),
                      shape=(k, nodes.size))
    first = sp.csr_matrix(([1.0], ([0], [0])), shape=(1, k))
    last = sp.csr_matrix(([-1.0], ([0], [k - 1])), shape=(1, k))
    diffs = sp.diags([-np.ones(k - 1), np.ones(k - 1)], [0, 1], shape=(k - 1, k))
    D = sp.vstack([first, diffs, last]).tocsr()
    G = (D @ A).tocsr()
    h = -(D @ F)
    h[-1] = F[-1] - 1.0
    return G, h, A, nodes


def _solve_l1(G, h):
    sp_opt = _need("scipy.optimize", "scipy", "smoothing 'l1'")
    import scipy.sparse as sp
    M = G.shape[1]
    res = sp_opt.linprog(np.ones(2 * M), A_ub=sp.hstack([-G, G]).tocsr(), b_ub=-h,
                         bounds=(0, None), method="highs")
    if res.status != 0:
        raise RuntimeError(f"HiGHS did not solve the l1 smoothing LP: {res.message}")
    return res.x[:M] - res.x[M:]


def _solve_l2(G, h):
    clarabel = _need("clarabel", "clarabel", "smoothing 'l2'")
    import scipy.sparse as sp
    M = G.shape[1]
    settings = clarabel.DefaultSettings()
    settings.verbose = False
    solver = clarabel.DefaultSolver(sp.identity(M, format="csc"), np.zeros(M), (-G).tocsc(), -h,
                                    [clarabel.NonnegativeConeT(G.shape[0])], settings)
    sol = solver.solve()
    if str(sol.status) not in ("Solved", "AlmostSolved"):
        raise RuntimeError(f"Clarabel did not solve the l2 smoothing QP: {sol.status}")
    return np.asarray(sol.x, dtype=np.float64)


@overload
def smooth(values: ArrayLike, tree: Tree | None = None, method: str = "isotonic",
           indices: ArrayLike | None = None, return_nu: Literal[False] = False) -> np.ndarray: ...


@overload
def smooth(values: ArrayLike, tree: Tree | None = None, method: str = "isotonic",
           indices: ArrayLike | None = None, *, return_nu: Literal[True]
           ) -> tuple[np.ndarray, np.ndarray | None, float]: ...


@overload
def smooth(values: ArrayLike, tree: Tree | None = None, method: str = "isotonic",
           indices: ArrayLike | None = None, return_nu: bool = False
           ) -> np.ndarray | tuple[np.ndarray, np.ndarray | None, float]: ...


def smooth(values: ArrayLike, tree: Tree | None = None, method: str = "isotonic",
           indices: ArrayLike | None = None, return_nu: bool = False
           ) -> np.ndarray | tuple[np.ndarray, np.ndarray | None, float]:
    """The smoothed ECDF F' on the points B (``indices``, default all N thresholds).

    ``values``: F^ on B (noisy ECDF in [0, 1] units). ``tree``: required for
    ``"l1"`` and ``"l2"``. Returns F' (float64, non-decreasing, in [0, 1]);
    with ``return_nu`` also the node corrections and the objective sum |nu|^p.
    """
    if method not in METHODS:
        raise ValueError(f"smoothing method must be one of {METHODS}, got {method!r}")
    F = np.asarray(values, dtype=np.float64).reshape(-1)
    if F.size == 0:
        raise ValueError("values: nothing to smooth")
    if not np.all(np.isfinite(F)):
        raise ValueError("values must be finite")
    if method == "isotonic":
        out = isotonic(F)
        return (out, None, float("nan")) if return_nu else out
    if not isinstance(tree, Tree):
        raise TypeError(f"smoothing {method!r} needs the release's Tree, got {type(tree).__name__}")
    _need("scipy.sparse", "scipy", f"smoothing {method!r}")
    G, h, A, _ = smooth_problem(tree, F, indices)
    nu = _solve_l1(G, h) if method == "l1" else _solve_l2(G, h)
    out = np.clip(np.maximum.accumulate(F + A @ nu), 0.0, 1.0)
    if return_nu:
        obj = float(np.abs(nu).sum()) if method == "l1" else float(nu @ nu)
        return out, nu, obj
    return out
