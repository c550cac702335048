"""FedAUC steps 3-4 on the ranks: the clients' noisy statistics and the server's AUC.

Used by :mod:`.fedauc` between the network rounds, and directly (no network)
by Monte Carlo studies of the release: the same code draws the same noise
for the same stream. Inputs: ``ranks`` (what the clients hold after round 2,
:func:`.fedauc.ranks_of`), the labels ``y`` (0/1), ``owner`` (client of each
record, :func:`.fedauc.assign_clients`) and K.

* :func:`rr_statistics` / :func:`rr_release`: FedAUC_RR (Algorithms 1-3).
* :func:`lap_statistics` / :func:`lap_release`: FedAUC_Lap (Algorithm 4)
  with the allocations ``adaptive``, ``orthogonal``, ``fixed`` and ``global``
  (see :mod:`.fedauc`), the noise described by a :class:`LapNoise`.

Noise: exact discrete Laplace on the grid 2^-grid_bits, one batched draw for
all clients (:func:`noise.samplers.discrete_laplace_many`; each client's
scale is its sensitivity over its epsilon, rounded up by at most a relative
2^-23), or exact discrete Gaussian (one call per distinct scale).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import TYPE_CHECKING

import numpy as np

from noise.samplers import (
    MAX_NUMERATOR_BITS,
    discrete_gaussian,
    discrete_laplace_many,
    round_scale_up,
)

from . import _common as C  # noqa: N812 - the codebase's short capital module alias
from .options import resolved

if TYPE_CHECKING:
    from collections.abc import Callable

    from numpy.typing import ArrayLike

    from mpc.arith.rng import CSPRNG

    from .spec import BaselineSpec

#: The budget allocations of FedAUC_Lap (see :mod:`.fedauc`).
ALLOCATIONS = ("adaptive", "orthogonal", "fixed", "global")
#: The adaptive beta is rounded down to this grid (1/64).
BETA_STEPS = 64


# -- the server's formulas -------------------------------------------------------------------
def auc_from_sums(global_sum: float, P: float, M: int) -> float:
    """Eq. (1): (globalSum - P(P-1)/2) / (P N), N = M - P."""
    N = M - P
    return (global_sum - P * (P - 1) / 2) / (P * N)


def debias(auc_noisy: float, P_bar: float, N_bar: float, epsilon: float) -> tuple[float, dict]:
    """Algorithm 3: the clean AUC from the noisy one (Menon et al. 2015)."""
    rho = 1.0 / (1.0 + math.exp(epsilon)) if math.isfinite(epsilon) else 0.0
    P_est = (P_bar * (1 - rho) - N_bar * rho) / (1 - 2 * rho)
    M = P_bar + N_bar
    nan = math.nan
    pi = P_est / M if M else nan
    den_a, den_b = pi * (1 - rho) + (1 - pi) * rho, pi * rho + (1 - pi) * (1 - rho)
    # undefined (nan) when one class is empty at epsilon = inf (pi = 0 or 1), e.g. the partial
    # sums a process of a run across processes holds besides the aggregator
    a = (1 - pi) * rho / den_a if den_a else nan
    b = pi * rho / den_b if den_b else nan
    auc = (auc_noisy - (a + b) / 2) / (1 - a - b) if 1 - a - b else nan
    return auc, {"rho": rho, "P_est": P_est, "pi": pi, "alpha": a, "beta": b}


def delta_method_variance(f: Callable[[float, float], float], mean: ArrayLike,
                          cov: ArrayLike) -> float:
    """Var f(S, P) ~ grad^T cov grad at the mean (central differences): the formula we test."""
    mean = np.asarray(mean, dtype=np.float64)
    grad = np.empty(2)
    for k in range(2):
        h = 1e-4 * (1.0 + abs(mean[k]))
        e = np.zeros(2)
        e[k] = h
        grad[k] = (f(*(mean + e)) - f(*(mean - e))) / (2 * h)
    return float(grad @ np.asarray(cov) @ grad)


# -- FedAUC_RR -------------------------------------------------------------------------------
def rr_statistics(ranks: np.ndarray, y: ArrayLike, owner: np.ndarray, K: int, epsilon: float,
                  rng: CSPRNG) -> np.ndarray:
    """Each client's (localSum, localP, localN) from its randomized labels (Algorithms 1-2)."""
    y_flip = C.k_rr(np.asarray(y, dtype=np.int64), 2, epsilon, rng)          # Algorithm 1
    stats = np.zeros((K, 3))
    np.add.at(stats, owner, np.column_stack([ranks * y_flip, y_flip, 1 - y_flip]))
    return stats


def rr_release(ranks: np.ndarray, epsilon: float, *, sums: np.ndarray) -> dict:
    """The server's step 4 and Algorithm 3 on the summed statistics, with the variance formulas.

    Inputs: the ``ranks`` (the server computed them: FedAUC's scores are not private), epsilon
    and the released ``sums`` (globalSum, P_bar, N_bar of the randomized labels). Returns
    ``auc`` (debiased), ``auc_noisy`` (Table 3: no debiasing), the debiasing terms, the paper's
    eq. (7) and our delta-method variance, and ``note`` when the flipped labels fell in one
    class (then nan).

    Threat model: post-processing of the released sums and the public ranks only, never the
    true labels (issue 37): the positive count in eq. (7) is the debiased estimate ``P_est``,
    and the delta method is taken at the released sums (plug-in); both are nan where they are
    undefined (an estimated class outside (0, M)). No division by a true class count, so an
    empty class raises nothing: its release is the noise the clients drew (charged).
    """
    ranks = np.asarray(ranks, dtype=np.float64)
    M = ranks.size
    g_sum, P_bar, N_bar = (float(v) for v in sums)
    note = None
    if P_bar < 1 or N_bar < 1:
        note = "all flipped labels fell in one class: the noisy AUC is undefined (nan)"
        auc_noisy = math.nan
    else:
        auc_noisy = auc_from_sums(g_sum, P_bar, M)
    auc, info = debias(auc_noisy, P_bar, N_bar, epsilon)
    rho = info["rho"]
    finite = math.isfinite(epsilon)
    pn = info["P_est"] * (M - info["P_est"])
    v = rho * (1 - rho)
    cov = v * np.array([[np.sum(ranks ** 2), np.sum(ranks)], [np.sum(ranks), M]])

    def f(S: float, P: float) -> float:
        return debias(auc_from_sums(S, P, M), P, M - P, epsilon)[0] if 0 < P < M else math.nan

    eq7 = (math.exp(epsilon) / (1 + math.exp(epsilon)) ** 2 * M * (M - 1) * (2 * M - 1) / 6
           / pn ** 2 if pn > 0 else math.nan)
    return {"auc": auc, **info, "auc_noisy": auc_noisy, "note": note,
            "variance_paper_eq7": eq7 if finite else 0.0,
            "variance_delta_method": (delta_method_variance(f, [g_sum, P_bar], cov)
                                      if finite and 1 <= P_bar <= M - 1 else
                                      0.0 if not finite else math.nan)}


# -- FedAUC_Lap ------------------------------------------------------------------------------
def adaptive_betas(a: np.ndarray, b: np.ndarray, mechanism: str = "laplace") -> np.ndarray:
    """Section 5.3: the beta minimizing Var(localSum'), rounded down to 1/64 (1 when b = 0).

    ``a`` = mean rank of the client (|u'|_inf), ``b`` = |v'|_inf.
    """
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        if mechanism == "laplace":
            beta = a ** (2 / 3) / (a ** (2 / 3) + b ** (2 / 3))
        else:
            beta = a / (a + b)
    beta = np.where(b == 0, 1.0, np.nan_to_num(beta, nan=1.0))
    q = np.floor(beta * BETA_STEPS) / BETA_STEPS
    return np.where(b == 0, 1.0, np.clip(q, 1.0 / BETA_STEPS, 1 - 1.0 / BETA_STEPS))


def _laplace(sens: np.ndarray, eps_k: np.ndarray, rng) -> tuple[np.ndarray, np.ndarray]:
    """DLap(sens_k / eps_k) per client (grid units; 0 where eps_k = 0) and its variance.

    sens_k: positive integers (grid units). The scale is sens_k * c with c >= 1/eps_k a
    dyadic rational of few bits (a relative rounding up below 2^-23), so that one batched
    exact draw serves every client.
    """
    sens = np.asarray(sens, dtype=np.int64)
    out = np.zeros(sens.size, dtype=np.int64)
    var = np.zeros(sens.size)
    active = np.flatnonzero(eps_k > 0)
    if active.size == 0:
        return out, var
    top = max(int(sens[active].max()).bit_length(), 1)
    bits = min(48, MAX_NUMERATOR_BITS - top)
    if bits < 24:
        raise ValueError(f"sensitivities up to 2^{top} grid units are too large for the exact "
                         "sampler; use fewer grid_bits")
    num = np.empty(active.size, dtype=np.int64)
    den = np.empty(active.size, dtype=np.int64)
    eps_a = eps_k[active]
    for e in np.unique(eps_a):                  # one rational per distinct budget (<= 65)
        c = round_scale_up(1 / Fraction(float(e)), bits)
        sel = eps_a == e
        num[sel] = sens[active][sel] * c.numerator
        den[sel] = c.denominator
    out[active] = discrete_laplace_many(num, den, rng)
    a = np.exp(-den / num.astype(np.float64))
    var[active] = 2 * a / (1 - a) ** 2
    return out, var


def _gaussian(sens: np.ndarray, frac: np.ndarray, eps: float, delta: float, rng):
    """N_Z with rho_k = frac_k rho(eps, delta) per client, one call per distinct scale."""
    out = np.zeros(sens.size, dtype=np.int64)
    var = np.zeros(sens.size)
    L = math.log(1 / delta)
    rho = (math.sqrt(L + eps) - math.sqrt(L)) ** 2
    active = np.flatnonzero(frac > 0)
    keys = np.stack([sens[active].astype(np.float64), frac[active]], axis=1)
    uniq, inv = np.unique(keys, axis=0, return_inverse=True)
    for j, (s, f) in enumerate(uniq):            # one call per distinct noise scale
        sel = active[inv.ravel() == j]
        sigma2 = round_scale_up(Fraction(float(s) ** 2 / (2 * rho * float(f))))
        out[sel] = discrete_gaussian(sigma2, (sel.size,), rng)
        var[sel] = float(sigma2)
    return out, var


def _noise(sens, frac, mechanism, eps, delta, rng):
    """Noise per client in grid units for sensitivities ``sens`` and budget fractions ``frac``."""
    sens = np.asarray(sens, dtype=np.int64)
    frac = np.asarray(frac, dtype=np.float64)
    if mechanism == "laplace":
        return _laplace(sens, frac * eps, rng)
    return _gaussian(sens, frac, eps, delta, rng)


def _check_allocation(allocation, alpha, beta, exact_counts):
    if allocation not in ALLOCATIONS:
        raise ValueError(f"allocation must be one of {ALLOCATIONS}, got {allocation!r}")
    if allocation in ("fixed", "global") and not 0 < alpha < 1:
        raise ValueError(f"alpha must be in (0, 1), got {alpha!r}")
    if allocation == "orthogonal" and not 0 < beta < 1:
        raise ValueError(f"beta must be in (0, 1), got {beta!r}")
    if exact_counts and allocation not in ("fixed", "global"):
        raise ValueError("exact_counts applies to allocation 'fixed' or 'global' only (the "
                         f"paper's Table 2), got allocation {allocation!r}")


@dataclass(frozen=True)
class LapNoise:
    """FedAUC_Lap's noise (:mod:`.fedauc`): the budget ``allocation`` (``alpha`` for
    ``fixed``/``global``, ``beta`` for ``orthogonal``), the ``mechanism`` (``laplace`` or
    ``gaussian`` with its ``delta``), the grid 2^-``grid_bits`` and ``exact_counts`` (the
    paper's Table 2 setting). Checked when made."""

    allocation: str = "adaptive"
    alpha: float = 0.5
    beta: float = 0.5
    mechanism: str = "laplace"
    delta: float = 1e-6
    grid_bits: int = 14
    exact_counts: bool = False

    def __post_init__(self) -> None:
        _check_allocation(self.allocation, self.alpha, self.beta, self.exact_counts)
        if self.mechanism not in ("laplace", "gaussian"):
            raise ValueError(f"mechanism must be 'laplace' or 'gaussian', got {self.mechanism!r}")

    @classmethod
    def of(cls, spec: BaselineSpec) -> LapNoise:
        """The noise of a fedauc-lap :class:`ustat.specs.BaselineSpec`."""
        o = spec.options
        return cls(resolved(o.allocation), resolved(o.alpha), resolved(o.beta),
                   resolved(o.mechanism), resolved(spec.privacy.delta), resolved(o.grid_bits),
                   resolved(o.exact_counts))


def lap_statistics(ranks: np.ndarray, y: ArrayLike, owner: np.ndarray, K: int, epsilon: float,
                   *, rng: CSPRNG,
                   noise: LapNoise = LapNoise()) -> tuple[np.ndarray, dict]:
    """Each client's released (localSum', localP', localN') and the noise's covariance.

    Returns ``(stats, theory)``: stats (K, 3); theory holds the covariance of
    the summed (localSum', localP') noise (``cov``) and the allocation's
    parameters (for ``adaptive``: the mean, minimum and histogram of beta on
    the 1/64 grid, ``beta_hist``).
    """
    allocation, alpha, beta = noise.allocation, noise.alpha, noise.beta
    mechanism, delta, grid_bits = noise.mechanism, noise.delta, noise.grid_bits
    exact_counts = noise.exact_counts
    ranks = np.asarray(ranks, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    gamma = 2.0 ** -grid_bits
    size = np.bincount(owner, minlength=K).astype(np.float64)
    local_p = np.bincount(owner, weights=y, minlength=K)
    local_sum = np.bincount(owner, weights=ranks * y, minlength=K)
    finite = math.isfinite(epsilon)
    zeros = (np.zeros(K, dtype=np.int64), np.zeros(K))
    unit = np.full(K, round(1 / gamma), dtype=np.int64)            # sensitivity 1, grid units
    if allocation in ("fixed", "global"):                          # Section 5.2 / GlobalLaplace
        if allocation == "global":
            sens = np.full(K, round((owner.size - 1) / gamma), dtype=np.int64)
        else:
            r_max = np.zeros(K)
            np.maximum.at(r_max, owner, ranks)
            sens = np.rint(np.maximum(r_max, 0.5) / gamma).astype(np.int64)
        f_sum, f_p = (1.0, 0.0) if exact_counts else (alpha, 1 - alpha)
        (s1, v1), (s2, v2) = zeros, zeros
        if finite:
            s2, v2 = _noise(sens, np.full(K, f_sum), mechanism, epsilon, delta, rng)
            if f_p > 0:
                s1, v1 = _noise(unit, np.full(K, f_p), mechanism, epsilon, delta, rng)
        p_rel = local_p + gamma * s1
        sum_rel = local_sum + gamma * s2
        cov = gamma ** 2 * np.array([[np.sum(v2), 0.0], [0.0, np.sum(v1)]])
        theory = {"alpha": alpha, "eps_localSum": f_sum * epsilon, "eps_localP": f_p * epsilon}
    else:                                                          # Section 5.3
        mean_r = np.bincount(owner, weights=ranks, minlength=K) / size
        vq = np.rint((ranks - mean_r[owner]) / gamma)                  # v' on the grid (units)
        bq = np.zeros(K)
        np.maximum.at(bq, owner, np.abs(vq))
        q2 = np.bincount(owner, weights=vq * y, minlength=K)           # <v', y> in grid units
        if allocation == "adaptive":
            b = adaptive_betas(mean_r, bq * gamma, mechanism)
        else:
            b = np.where(bq > 0, float(beta), 1.0)
        (s1, v1), (s2, v2) = zeros, zeros
        if finite:
            s1, v1 = _noise(unit, b, mechanism, epsilon, delta, rng)
            s2, v2 = _noise(np.where(bq > 0, bq, 1).astype(np.int64),
                            np.where(bq > 0, 1 - b, 0.0), mechanism, epsilon, delta, rng)
        p_rel = local_p + gamma * s1
        # privacy off: the exact statistics (no rounding of v' to the grid)
        sum_rel = mean_r * p_rel + gamma * (q2 + s2) if finite else local_sum
        cov = gamma ** 2 * np.array([[np.sum(mean_r ** 2 * v1 + v2), np.sum(mean_r * v1)],
                                     [np.sum(mean_r * v1), np.sum(v1)]])
        theory = {"beta_mean": float(b.mean()), "beta_min": float(b.min()),
                  "beta_hist": np.bincount(np.rint(b * BETA_STEPS).astype(np.int64),
                                           minlength=BETA_STEPS + 1).tolist()}
    stats = np.column_stack([sum_rel, p_rel, size - p_rel])
    return stats, {**theory, "allocation": allocation, "clients": K, "grid": gamma,
                   "mechanism": mechanism,
                   "exact_counts": bool(exact_counts), "cov": cov.tolist()}


def lap_release(ranks: np.ndarray, epsilon: float, *, sums: np.ndarray,
                theory: dict) -> dict:
    """The server's step 4 on the summed statistics, with the variance formulas.

    Inputs: the ``ranks`` (public in FedAUC's model), epsilon, the released ``sums``
    (globalSum', P', N') and ``theory`` (:func:`lap_statistics`' second output: the noise's
    covariance and the allocation, from the ranks and public parameters only). Adds the
    delta-method variance of the AUC, the paper's eq. (8) (GlobalLaplace, accurate P and N:
    2 K (M-1)^2 / (P N eps_localSum)^2) and, for one record per client, its eq. (9)
    (LocalLaplace, accurate P and N: K (K-1)(2K-1) / (3 (P N eps_localSum)^2)).

    Threat model: post-processing of the released sums and public values only, never the
    true labels (issue 37): P and N in eqs. (8)-(9) are the released P' and M - P', and the
    delta method is taken at the released sums (plug-in); nan where P' is outside (0, M).
    An empty class raises nothing: its release is the clients' noise (charged).
    """
    ranks = np.asarray(ranks, dtype=np.float64)
    M = ranks.size
    g_sum, P_bar, _ = (float(v) for v in sums)
    note = None
    defined = 0 < P_bar < M
    if not defined:
        note = "the noisy positive count fell outside (0, M): the AUC is undefined (nan)"
        auc = math.nan
    else:
        auc = auc_from_sums(g_sum, P_bar, M)
    K = int(theory["clients"])
    out = {k: v for k, v in theory.items() if k != "cov"}
    if math.isfinite(epsilon):
        eps_sum = theory.get("eps_localSum", epsilon)
        pn2 = (P_bar * (M - P_bar)) ** 2 if defined else math.nan
        out["variance_paper_eq8_global"] = 2 * K * (M - 1) ** 2 / pn2 / eps_sum ** 2
        if K == M:
            out["variance_paper_eq9_one_record"] = (K * (K - 1) * (2 * K - 1) / 3 / pn2
                                                    / eps_sum ** 2)

    def f(S: float, P: float) -> float:
        return auc_from_sums(S, P, M) if 0 < P < M else math.nan

    return {"auc": auc, "note": note, **out,
            "variance_delta_method": (delta_method_variance(f, [g_sum, P_bar], theory["cov"])
                                      if defined else math.nan)}
