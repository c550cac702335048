"""A Hosmer-Lemeshow test that stays valid under its DP noise (post-processing of the release).

The private HL release (:mod:`ustat.ecdf.hosmer_lemeshow`) opens, per group q,
noisy sums E1^, E0^ (expected positives / negatives, sum p and sum 1 - p)
and O1^, O0^ (observed), each with independent discrete Laplace noise of a
known law. Comparing the classical statistic of noisy sums with a chi-square
ignores that noise, and rejects calibrated models at any epsilon.

Statistic. Under the null, the group deviation D_q = O1 - E1 = E0 - O0 has
mean 0 and variance V_q = sum p (1 - p) <= E1 E0 / n_q (the binomial value
HL uses). Two noisy copies of it are released, so

    D^_q = ((O1^ - E1^) - (O0^ - E0^)) / 2 = D_q + nu_q,
    Var nu_q = s^2 = (Var O-noise + Var E-noise) / 2,
    T = sum_q D^_q^2 / (V^_q + s^2),   V^_q = E1^+ E0^+ / (E1^+ + E0^+)

(E^+ = max(E^, 0)). With no noise T is the classical HL statistic
sum (O - E)^2 / E over both columns.

Null distribution, from released values and public parameters only: the
p-value is P(T* >= T) over ``NULL_DRAWS`` simulated
T* = sum_q (sqrt(V+_q) Z_q + nu*_q)^2 / (V^_q + s^2), Z ~ N(0, I) and nu*
fresh draws of the exact noise law (fixed seed). V+_q = min(n^_q / 4,
V^_q + 2 sd(E^)) is an upper confidence bound of V_q, so the simulated null is
(stochastically) at least as wide as the true one: the test is conservative
rather than anti-conservative where the noisy E^ understate V.

Nulls: ``"calibrated"`` (default): y_i ~ Bernoulli(p_i) independently for the
probabilities given (an external model); with no noise T ~ chi-square(Q).
``"fitted"``: the probabilities were fitted by logistic regression on these
same records (HL's in-sample setting, chi-square(Q - 2)): Z is projected
orthogonally to sqrt(V+) and sqrt(V+) logit(E1^ / n^) (the score equations of
the intercept and the slope make the deviations sum to zero along them).
With epsilon = inf the p-value is the chi-square tail, in closed form.

Refusal. Before anything is computed, from public parameters only (n, Q,
the noise scales): the miscalibration that the test detects half the time,
delta* = sqrt(lambda* (n / (4 Q) + s^2) / (Q (n / Q)^2)) with lambda* =
chi2_crit(df, 0.05) - df (the noncentrality that puts the mean at the
critical value), in probability units. Above ``MAX_DETECTABLE`` (0.25: a
model off by a quarter in every group would pass half the time) the noise
dominates and the test refuses, naming larger epsilon, more records or fewer
groups.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import numpy as np

from ..specs.ecdf import MAX_DETECTABLE, NULLS
from .noise_law import SIM_SEED

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

__all__ = [
    "MAX_DETECTABLE",
    "NULLS",
    "NULL_DRAWS",
    "chi2_isf",
    "chi2_sf",
    "detectable_miscalibration",
    "hl_pvalue",
    "hl_statistic",
]

NULL_DRAWS = 20_000


def chi2_sf(x: float, df: int) -> float:
    """P(chi^2_df > x) in closed form (integer df >= 1): Poisson sum or erfc series."""
    x = float(x)
    if x <= 0:
        return 1.0
    if df % 2 == 0:
        term, total = 1.0, 1.0
        for j in range(1, df // 2):                 # df/2 terms
            term *= (x / 2) / j
            total += term
        return min(1.0, math.exp(-x / 2) * total)
    total = math.erfc(math.sqrt(x / 2))
    term = math.sqrt(2 * x / math.pi) * math.exp(-x / 2)
    for j in range(1, (df - 1) // 2 + 1):
        total += term
        term *= x / (2 * j + 1)
    return min(1.0, total)


def chi2_isf(alpha: float, df: int) -> float:
    """x with P(chi^2_df > x) = alpha (bisection on :func:`chi2_sf`)."""
    lo, hi = 0.0, float(df) + 10.0 * math.sqrt(2.0 * df) + 50.0
    for _ in range(200):
        mid = (lo + hi) / 2.0
        lo, hi = (mid, hi) if chi2_sf(mid, df) > alpha else (lo, mid)
    return hi


def detectable_miscalibration(n: int, groups: int, noise_var: float, df: int,
                              alpha: float = 0.05) -> float:
    """delta* of the module docstring (public parameters only)."""
    lam = chi2_isf(alpha, df) - df
    nq = n / groups
    return math.sqrt(lam * (nq / 4.0 + noise_var) / (groups * nq * nq))


def _variances(E1, E0):
    e1, e0 = np.maximum(E1, 0.0), np.maximum(E0, 0.0)
    nq = np.maximum(e1 + e0, 1.0)
    return e1 * e0 / nq, nq


def hl_statistic(E1: ArrayLike, E0: ArrayLike, O1: ArrayLike, O0: ArrayLike,
                 noise_var: float) -> float:
    """T of the module docstring (the classical HL statistic when noise_var = 0)."""
    E1, E0, O1, O0 = (np.asarray(v, np.float64) for v in (E1, E0, O1, O0))
    D = ((O1 - E1) - (O0 - E0)) / 2.0
    V, _ = _variances(E1, E0)
    den = V + noise_var
    return float(np.sum(np.where(den > 0, D * D / np.where(den > 0, den, 1.0), 0.0)))


def _projector(V, p_bar, null):
    if null == "calibrated":
        return None
    w = np.sqrt(V)
    logit = np.log(np.clip(p_bar, 1e-6, 1 - 1e-6) / np.clip(1 - p_bar, 1e-6, 1))
    B = np.stack([w, w * logit], axis=1)
    Qm, _ = np.linalg.qr(B)
    return np.eye(V.size) - Qm @ Qm.T


def hl_pvalue(stat: float, E1: ArrayLike, E0: ArrayLike, noise: dict[str, Any] | None,
              null: str = "calibrated", draws: int = NULL_DRAWS) -> float:
    """P(T* >= T) under the null with the DP noise (module docstring).

    ``noise``: None (no noise: the chi-square tail) or a dict with ``o_law``
    and ``e_law`` (:class:`~ustat.ecdf.noise_law.NodeNoiseLaw` of the noise of
    one O sum in counts and one E sum in units of 2^-frac_bits) and
    ``frac_bits``.
    """
    if null not in NULLS:
        raise ValueError(f"null must be one of {NULLS}, got {null!r}")
    E1, E0 = np.asarray(E1, np.float64), np.asarray(E0, np.float64)
    Q = E1.size
    df = Q if null == "calibrated" else Q - 2
    if noise is None:
        return chi2_sf(stat, df)
    one = float(1 << noise["frac_bits"])
    o_law, e_law = noise["o_law"], noise["e_law"]
    s2 = (o_law.variance + e_law.variance / one ** 2) / 2.0
    V, nq = _variances(E1, E0)
    V_up = np.minimum(nq / 4.0, V + 2.0 * math.sqrt(e_law.variance) / one)
    gen = np.random.default_rng(SIM_SEED)
    Z = gen.standard_normal((draws, Q))
    P = _projector(V_up, np.maximum(E1, 0.0) / nq, null)
    if P is not None:
        Z = Z @ P
    nu = (o_law.sample((draws, Q), gen) - o_law.sample((draws, Q), gen)
          + (e_law.sample((draws, Q), gen) - e_law.sample((draws, Q), gen)) / one) / 2.0
    D = np.sqrt(V_up) * Z + nu
    T = np.sum(D * D / (V + s2), axis=1)
    return float((1 + np.count_nonzero(stat <= T)) / (1 + draws))
