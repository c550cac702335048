"""Empirical DP audit of the distributed noise against a colluding coalition.

The question: does the aggregator, colluding with ``colluders`` noise
contributors who subtract their own draws, face at most the claimed epsilon?
The audit runs the noise split many times on two neighbouring data sets
(query values 0 and Delta, an integer sensitivity in ring units) and looks at
exactly what the coalition can compute: the released total minus the
coalition's own Polya differences, i.e. the query plus the honest
contributors' noise. It is a black-box threshold test (as in Jagielski,
Ullman, Oprea, NeurIPS 2020 and Nasr et al., IEEE S&P 2021):

1. Draw ``runs`` views for each data set (exact samplers, our CSPRNG; the
   contributions come from the same helper the protocols use).
2. On the first half of the runs, choose the event S = {view <= tau} (or
   {view >= tau}, the neighbours swapped) that maximizes the empirical ratio
   P[S | D0] / P[S | D1].
3. On the other half, bound p0 = P[S | D0] from below and p1 = P[S | D1]
   from above with Clopper-Pearson intervals at confidence 1 - alpha/2
   each; epsilon >= ln(p0_lower / p1_upper) with confidence 1 - alpha.

A sound mechanism keeps the bound below its epsilon (except with probability
alpha); a mechanism whose epsilon is understated is flagged when the bound
exceeds the claim. Threshold tests are exact for the discrete Laplace (the
event {view <= 0} attains e^epsilon), so the bound approaches the claim from
below as runs grow. Cost: 4 runs x (contributors - colluders) Polya draws,
vectorized; a few seconds for 10^5 runs.
"""

from __future__ import annotations

import functools
import math
import numbers

import numpy as np
from numpy.typing import ArrayLike

from mpc.arith.rng import as_rng

from ._contributions import _polya_differences
from .collusion import dis_plan
from .privacy_loss import polya_difference_epsilon
from .samplers import RealLike, as_fraction, round_scale_up

__all__ = [
    "DEFAULT_AUDIT", "audit_epsilon_lower_bound", "clopper_pearson", "secure_noise_draws",
    "threshold_audit",
]

#: The audit's default settings (what benchmarks report as dp_audit_*).
DEFAULT_AUDIT = dict(n=4, epsilon=1.0, sensitivity=8, colluders=None, max_colluders=None,
                     split="collusion", runs=100_000, alpha=1e-3)


@functools.lru_cache(maxsize=16)
def _log_binom_coef(n: int) -> np.ndarray:
    lg = np.fromiter((math.lgamma(k + 1.0) for k in range(n + 1)), dtype=np.float64, count=n + 1)
    return lg[n] - lg - lg[::-1]


def _binom_mass(lo: int, hi: int, n: int, p: float) -> float:
    """P[lo <= Binomial(n, p) <= hi] for 0 < p < 1 (float64, summed from log-space terms)."""
    j = np.arange(lo, hi + 1, dtype=np.float64)
    logt = _log_binom_coef(n)[lo:hi + 1] + j * math.log(p) + (n - j) * math.log1p(-p)
    m = float(logt.max())
    return min(1.0, math.exp(m) * float(np.exp(logt - m).sum()))


def clopper_pearson(k: int, n: int, alpha: float) -> tuple[float, float]:
    """Two-sided Clopper-Pearson interval for k successes in n trials at level 1 - alpha.

    lower = the p with P[Bin(n, p) >= k] = alpha/2 (0 if k = 0), upper = the p
    with P[Bin(n, p) <= k] = alpha/2 (1 if k = n), found by bisection on the
    binomial tail (60 steps, below 1e-15). Equals scipy's beta quantiles.
    """
    for name, v in (("k", k), ("n", n)):
        if isinstance(v, bool) or not isinstance(v, numbers.Integral):
            raise TypeError(f"{name} must be an integer, got {v!r}")
    if n < 1 or not 0 <= k <= n:
        raise ValueError(f"need 0 <= k <= n and n >= 1, got k={k}, n={n}")
    if not 0.0 < alpha < 1.0:
        raise ValueError(f"alpha must be in (0, 1), got {alpha!r}")
    half = alpha / 2.0

    def solve(f, target):          # f increasing in p
        lo, hi = 0.0, 1.0
        for _ in range(60):                            # p stays strictly inside (0, 1)
            mid = (lo + hi) / 2.0
            if f(mid) < target:
                lo = mid
            else:
                hi = mid
        return lo, hi

    # each tail is summed directly (never as 1 - the other), for full relative precision
    lower = 0.0 if k == 0 else solve(lambda p: _binom_mass(k, n, n, p), half)[0]
    upper = 1.0 if k == n else solve(lambda p: -_binom_mass(0, k, n, p), -half)[1]
    return lower, upper


def _views(rng, r, scale, honest: int, runs: int, shift: int) -> np.ndarray:
    c = _polya_differences(r, scale, runs * honest, rng).reshape(runs, honest)
    return c.sum(axis=1) + shift


def secure_noise_draws(n: int, scale: RealLike, epsilon: float, count: int,
                       seed: int | str | None = None, chunk: int = 50_000) -> np.ndarray:
    """``count`` noises sampled inside MPC among n contributors (:mod:`noise.mpc_sampler`,
    dealer triples), in chunks; int64. What a coalition of up to n - 1 of them faces."""
    from mpc.session import Session

    from .mpc_sampler import plan_dlap, secure_dlap

    plan = plan_dlap(scale, epsilon=epsilon)
    base = as_rng(seed).derive("dp-audit", "mpc", int(n))
    out = []
    for start in range(0, count, chunk):
        s = Session(n, seed=None if seed is None else f"audit-{seed}-{start}")
        draws = secure_dlap(s, [plan] * min(chunk, count - start), holders=np.arange(n),
                            rng=base.derive("chunk", start))
        out.append(s.ring.to_signed(s.ring.sum(draws.shares, axis=0)).astype(np.int64))
    return np.concatenate(out)


def _best_threshold(v0: np.ndarray, v1: np.ndarray):
    """(tau, direction) maximizing a pessimistic ln P[S|D0] / P[S|D1] on the selection runs.

    Counts are moved three standard deviations against the test (k0 - 3 sqrt(k0),
    k1 + 3 sqrt(k1) + 9, a Poisson-style bound that is 9 at k1 = 0), so that
    thresholds in the sparse tails, whose empirical ratios are mostly noise
    and cannot give a tight Clopper-Pearson bound anyway, are not chosen.
    """
    grid = np.unique(np.concatenate([v0, v1]))
    s0, s1 = np.sort(v0), np.sort(v1)
    best = (-math.inf, 0, "le")
    for direction, a, b in (("le", s0, s1), ("ge", s1, s0)):
        # "le": S = {v <= tau}, D0 vs D1; "ge": S = {v >= tau}, D1 vs D0 (the mirror test)
        if direction == "le":
            ca = np.searchsorted(a, grid, side="right")
            cb = np.searchsorted(b, grid, side="right")
        else:
            ca = a.size - np.searchsorted(a, grid, side="left")
            cb = b.size - np.searchsorted(b, grid, side="left")
        score = (np.log(np.maximum(ca - 3.0 * np.sqrt(ca), 0.5))
                 - np.log(cb + 3.0 * np.sqrt(cb) + 9.0))
        i = int(np.argmax(score))
        if score[i] > best[0]:
            best = (float(score[i]), int(grid[i]), direction)
    return best[1], best[2]


def _count(v: np.ndarray, tau: int, direction: str) -> int:
    return int(np.sum(v <= tau) if direction == "le" else np.sum(v >= tau))


def audit_epsilon_lower_bound(*, n: int = 4, epsilon: float = 1.0, sensitivity: int = 8,
                              colluders: int | None = None, max_colluders: int | str | None = None,
                              split: str = "collusion", runs: int = 100_000, alpha: float = 1e-3,
                              seed: int | str | None = None) -> tuple[float, dict]:
    """Lower bound on the epsilon a coalition actually faces (module docstring), and details.

    ``n`` contributors (M_Dis split, :func:`noise.collusion.dis_plan` with
    ``max_colluders``, default floor(n/2)); ``colluders`` of them with the
    aggregator (default: the largest tolerated number); ``split``
    ``"collusion"`` (Polya(1/(n - t)) per contributor), ``"legacy"`` (the
    paper's Polya(1/n), the control) or ``"mpc"`` (one discrete Laplace
    sampled inside MPC among the n contributors, :func:`secure_noise_draws`:
    a coalition of any ``colluders`` < n holds only uniform shares of it, so
    it faces the query plus the whole noise; default ``colluders`` n - 1);
    scale = sensitivity / epsilon rounded up as the protocol does. ``seed``
    makes the run reproducible (insecure, for tests). Returns ``(eps_lower,
    details)``; details has the claimed and the exact (numerical) epsilon for
    this coalition, the test's threshold and counts, the Clopper-Pearson
    bounds and the settings.
    """
    if split not in ("collusion", "legacy", "mpc"):
        raise ValueError(f"split must be 'collusion', 'legacy' or 'mpc', got {split!r}")
    plan = dis_plan(n, max_colluders, method="mpc" if split == "mpc" else "polya")
    c = plan.max_colluders if colluders is None else colluders
    if isinstance(c, bool) or not isinstance(c, numbers.Integral) or not 0 <= c < plan.n:
        raise ValueError(f"colluders must be an integer in 0..{plan.n - 1}, got {colluders!r}")
    if isinstance(sensitivity, bool) or not isinstance(sensitivity, numbers.Integral) \
            or sensitivity < 1:
        raise ValueError(f"sensitivity must be an integer >= 1 (ring units), got {sensitivity!r}")
    if isinstance(runs, bool) or not isinstance(runs, numbers.Integral) or runs < 100:
        raise ValueError(f"runs must be an integer >= 100, got {runs!r}")
    scale = round_scale_up(as_fraction(sensitivity, "sensitivity")
                           / as_fraction(epsilon, "epsilon"))
    h_split = plan.honest if split == "collusion" else plan.n
    r = as_fraction(1, "r") / h_split
    honest = plan.n - int(c)
    if split == "mpc":                   # the coalition's shares are uniform: it faces all of eta
        r = as_fraction(1, "r")
        eta = secure_noise_draws(plan.n, scale, float(sensitivity / scale), 2 * runs, seed)
        v0, v1 = eta[:runs], eta[runs:] + int(sensitivity)
    else:
        rng = as_rng(seed).derive("dp-audit", split, plan.n, int(c))
        v0 = _views(rng, r, scale, honest, runs, 0)
        v1 = _views(rng, r, scale, honest, runs, int(sensitivity))
    eps_lo, test = threshold_audit(v0, v1, alpha)
    eps_exact = (float(sensitivity / scale) if split == "mpc"
                 else polya_difference_epsilon(r * honest, scale, sensitivity))
    claimed = float(sensitivity / scale)
    return eps_lo, {
        "eps_lower": eps_lo, "eps_claimed": claimed, "eps_exact": eps_exact,
        "n": plan.n, "colluders": int(c), "honest": honest, "max_colluders": plan.max_colluders,
        "split": split, "polya_shape": str(r), "scale": float(scale),
        "sensitivity": int(sensitivity),
        "runs": int(runs), "alpha": alpha, **test, "flagged": eps_lo > claimed,
    }


def threshold_audit(v0: ArrayLike, v1: ArrayLike, alpha: float = 1e-3) -> tuple[float, dict]:
    """Steps 2-3 of the module docstring on two samples of views (integers), e.g. whole releases.

    ``v1`` is the sample of the data set whose query is the larger (the
    tested events are {v <= tau} for v0 against v1 and {v >= tau} for v1
    against v0). The first half of each picks the event, the second half
    bounds its probabilities. Returns ``(eps_lower, {threshold, direction, counts,
    holdout, p0_lower, p1_upper})``.
    """
    v0, v1 = np.asarray(v0), np.asarray(v1)
    runs = min(v0.size, v1.size)
    half = runs // 2
    tau, direction = _best_threshold(v0[:half], v1[:half])
    a, b = (v0, v1) if direction == "le" else (v1, v0)
    k0, k1 = _count(a[half:runs], tau, direction), _count(b[half:runs], tau, direction)
    m = runs - half
    p0_lo, _ = clopper_pearson(k0, m, alpha)
    _, p1_hi = clopper_pearson(k1, m, alpha)
    eps_lo = max(0.0, math.log(p0_lo / p1_hi)) if p0_lo > 0 else 0.0
    return eps_lo, {"threshold": tau, "direction": direction, "counts": [k0, k1],
                    "holdout": m, "p0_lower": p0_lo, "p1_upper": p1_hi}
