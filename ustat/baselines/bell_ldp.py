"""Bell, Bellet, Gascon, Kulkarni (AISTATS 2020), Algorithm 1: quantize + k-ary randomized response.

Any registered degree-2 kernel f. Steps, on the simulated network:

1. *Quantize* (local): party i maps its record to its cell x_i of the bin
   grid (:class:`ustat.baselines._common.Grid`: t bins per numeric column,
   codes for categorical columns; T cells in all).
2. *Randomize and send* (1 round): party i sends R(x_i), T-ary randomized
   response (true cell with probability 1 - beta + beta/T, every cell with
   probability beta/T, beta = T / (T + e^eps - 1)), drawn exactly
   (:func:`ustat.baselines._common.k_rr`). The paper's Algorithm 1 sends the
   index x~_i, so the message is ceil(log2 T) bits (Sinh-Ramon's Table 1
   counts a one-hot of l-bit words, n l t bits; we send what the paper's
   algorithm sends).
3. *Estimate* (aggregator): with u_i = (e_{R(x_i)} - b) / (1 - beta),
   b = (beta/T) 1, the unbiased estimate of the discretized U-statistic is
   U^ = sum_{i != j} u_i^T A u_j / (n (n-1)), A[x, y] = f(r_x, r_y) on the
   bins' representatives. Computed from the histogram of the reports in
   O(T^2) (not the paper's O(n^2 T^2) pair loop).

Auxiliary sums of a kernel (the positive count of the AUC) are estimated
from the same unbiased histogram estimate and post-processed as the kernel
says. Cost: n ceil(log2 T) bits, 1 round, no offline phase.

Variance: Theorem 1 bounds Var(U^) <= 1/(n(1-beta)^2) + (1+beta)^2 / (2n(n-1)(1-beta)^4)
for f in [0, 1] (times (hi - lo)^2 for a kernel with range [lo, hi]);
:func:`exact_variance` gives the exact variance given the data (Hoeffding
decomposition of the estimator over the independent reports).

Threat model / DP: epsilon-local DP per record; no trusted party; the
aggregator sees every party's randomized cell.
"""

from __future__ import annotations

import math
import time
from typing import TYPE_CHECKING, Any

import numpy as np

from . import _common as C  # noqa: N812 - the codebase's short capital module alias
from .options import BINS, BITS, FRAC_BITS, LEVELS, resolved
from .result import Released, build_result, delta_variance

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

    from mpc.session import Session

    from .result import ProtocolResult
    from .spec import BaselineSpec

TRUST = ("local DP: each party randomizes its own binned record (T-ary randomized response) "
         "before sending it, so nobody has to be trusted; the aggregator sees every party's "
         "randomized cell (epsilon-LDP per record)")
#: the options bell-ldp takes (:class:`ustat.specs.BaselineSpec` fields)
OPTIONS = (BINS, LEVELS, BITS, FRAC_BITS)


def rr_beta(T: int, epsilon: float) -> float:
    """beta = T / (T + e^eps - 1) (0 when epsilon is infinite)."""
    if not math.isfinite(epsilon):
        return 0.0
    return T / (T + math.expm1(epsilon))


def estimate_from_reports(hist: np.ndarray, A: np.ndarray, beta: float) -> tuple[float, np.ndarray]:
    """(U^, unbiased histogram estimate c) from the histogram of the randomized reports."""
    hist = np.asarray(hist, dtype=np.float64)
    n, T = hist.sum(), hist.size
    keep = 1.0 - beta
    b = beta / T
    c = (hist - n * b) / keep
    r = A.sum(axis=1)
    # (e_y - b)^T A (e_y - b) for every cell y
    q = np.diagonal(A) - 2 * b * r + b * b * r.sum()
    total = c @ (A @ c) - (hist @ q) / keep ** 2
    return float(total / (n * (n - 1))), c


def theorem1_bound(n: int, beta: float, kernel_range: float) -> float:
    """Bell et al. Theorem 1, scaled by the kernel's range squared."""
    k = 1.0 - beta
    return kernel_range ** 2 * (1 / (n * k * k) + (1 + beta) ** 2 / (2 * n * (n - 1) * k ** 4))


def exact_variance(hist_true: np.ndarray, A: np.ndarray, beta: float) -> float:
    """Exact Var(U^) given the true histogram (independent randomized reports).

    With u_i = m_i + delta_i (m_i = e_{x_i}, Cov(delta_i) = Sigma_{x_i}),
    Var(sum_{i<j} u_i^T A u_j) = sum_i w_i^T Sigma_i w_i + sum_{i<j} tr(A Sigma_i A Sigma_j),
    w_i = A (h - e_{x_i}); Sigma_x = (D_p - p p^T) / (1 - beta)^2 with
    p = (1 - beta) e_x + (beta/T) 1. Cost O(T^2 + |occupied| T + |occupied|^2).
    """
    h = np.asarray(hist_true, dtype=np.float64)
    T, n = h.size, h.sum()
    k, b = 1.0 - beta, beta / T
    occ = np.flatnonzero(h)
    hx = h[occ]
    r = A.sum(axis=1)
    s = r.sum()
    A2 = A * A
    r2 = A2.sum(axis=1)
    s2 = r2.sum()
    Ah = A @ h
    # linear part: sum_x h_x w^T Sigma_x w, w = Ah - A e_x
    W = Ah[None, :] - A[occ]                                 # (|O|, T)
    wx = W[np.arange(occ.size), occ]
    sum_w2 = (W * W).sum(axis=1)
    sum_w = W.sum(axis=1)
    lin = ((k * wx ** 2 + b * sum_w2) - (k * wx + b * sum_w) ** 2) / k ** 2
    linear = float(hx @ lin)
    # quadratic part: (sum_{i,j} tr(A S_i A S_j) - sum_i tr(A S_i A S_i)) / 2, times k^4
    P = k * h + n * b                                          # sum_i p_i
    t1 = P @ (A2 @ P)
    Ap = k * A[occ] + b * r[None, :]                           # rows: A p_x
    t2 = hx @ ((Ap * Ap) @ P)                                  # sum_j p_j^T A D_P A p_j
    M = (k * k * A[np.ix_(occ, occ)] + k * b * (r[occ][:, None] + r[occ][None, :]) + b * b * s)
    t4 = hx @ (M * M) @ hx
    full = t1 - 2 * t2 + t4
    pAAp = k * k * A2[occ, occ] + 2 * k * b * r2[occ] + b * b * s2      # p^T (A o A) p
    pADAp = ((Ap * Ap) * (k * np.eye(T)[occ] + b)).sum(axis=1)          # p^T A D_p A p
    pAp = k * k * A[occ, occ] + 2 * k * b * r[occ] + b * b * s
    diag = hx @ (pAAp - 2 * pADAp + pAp ** 2)
    quad = (full - diag) / 2 / k ** 4
    return float(4 * (linear + quad) / (n * (n - 1)) ** 2)


def run_bell_ldp(records: ArrayLike, spec: BaselineSpec, *, session: Session | None = None,
                 evaluate: bool = False, runtime: Any = None) -> ProtocolResult:
    """Run Bell et al.'s Algorithm 1 as ``spec`` (a :class:`ustat.specs.BaselineSpec`) says;
    returns a :class:`ProtocolResult` (module docstring). ``session``: an existing one with n
    parties; ``runtime``: this process's in a run of several (:mod:`ustat.executors`)."""
    t_start = time.perf_counter()
    pre = C.prepare_degree2(records, spec, public_levels=C.several_processes(session, runtime))
    kern, eps, t, X, n, grid, A, notes = (pre.kern, pre.epsilon, pre.bins, pre.X, pre.n,
                                          pre.grid, pre.A, pre.notes)
    T = grid.domain
    bits, frac_bits = resolved(spec.encoding.bits), resolved(spec.encoding.frac_bits)
    session, run_rng = C.open_session(n, session, spec.execution.seed, label="bell-ldp-run",
                                      bits=bits, frac_bits=frac_bits, runtime=runtime)
    net = session.net
    agg = net.role("aggregator")
    cells = grid.index(X)
    # each party's private coins (one batched stream standing for the n local streams; a
    # party's report depends on its own cell only, k_rr draws every round for everyone)
    reports = C.k_rr(cells, T, eps, run_rng.derive("party-randomizers"),
                     mine=net.is_local(net.parties))
    with net.phase("report"), net.round():
        received = net.send(net.parties, agg, reports, C.index_bits(T))
    beta = rr_beta(T, eps)
    hist = np.bincount(received, minlength=T)
    u_hat, c = estimate_from_reports(hist, A, beta)
    aux_sums = []
    if kern.aux is not None:
        aux_sums = list(c @ kern.aux(grid.representatives()))
    estimate = kern.release(u_hat, aux_sums, n)
    lo, hi = kern.output_range
    theory = {"beta": beta, "keep_probability": 1 - beta + beta / T,
              "variance_bound_thm1": (theorem1_bound(n, beta, hi - lo) if math.isfinite(eps)
                                      else 0.0),
              "bits_per_party": C.index_bits(T), "bits_formula": n * C.index_bits(T)}
    ev = None
    if evaluate:
        true_hist = np.bincount(cells, minlength=grid.domain)
        ev = pre.evaluation(cells)
        ev["variance_exact"] = exact_variance(true_hist, A, beta) if math.isfinite(eps) else 0.0
    params = {"bins": t, "domain": T, "grid": list(grid.sizes), "message": "cell index",
              "message_bits": C.index_bits(T)}
    keep = 1 - beta
    # each aux sum is (sum_i a(R_i) - n beta/T sum a) / (1 - beta), a in [0, 1]: Var <= n/4/keep^2
    var_aux = [n / 4 / keep ** 2 if math.isfinite(eps) else 0.0] * len(aux_sums)
    variance = delta_variance(kern, u_hat, aux_sums, n, theory["variance_bound_thm1"], var_aux)
    out = Released(estimate, u_hat, params, theory, ev, notes, variance=variance,
                   variance_method="variance: Theorem 1's bound on Var(U) and n / (4 (1 - "
                                   "beta)^2) on each aux sum, by the delta method at the "
                                   "released values (public parameters; upper bounds, so "
                                   "conservative)")
    return build_result(session, spec, kern, out, n=n, dp_model="local", trust=TRUST,
                        t_start=t_start)
