"""DP accounting: calibration of noise, composition, and a budget that refuses to overspend.

Conventions: epsilon > 0 finite, delta in (0, 1) where a delta is needed,
sensitivities > 0 (L1 for Laplace, L2 for Gaussian). Bad values raise
``ValueError`` naming the argument; non-numbers raise ``TypeError``.

A mechanism's accounting travels with it as a :class:`MechanismAccount`
(sensitivity, noise distribution and scale, epsilon, delta), OpenDP-style.
The budget (:class:`PrivacyBudget`) keeps exact rational sums of what was
spent (floats are converted exactly), so rounding can never let a sequence of
spends exceed the total.

References: Dwork, Roth, "The Algorithmic Foundations of DP" (2014)
(Laplace, Gaussian Thm. A.1, basic composition Thm. 3.16, advanced
composition Thm. 3.20, after Dwork, Rothblum, Vadhan 2010); Balle, Wang,
"Improving the Gaussian mechanism" ICML 2018 (analytic Gaussian);
Canonne, Kamath, Steinke NeurIPS 2020 (discrete Gaussian, zCDP -> DP);
Bun, Steinke TCC 2016 (zCDP); Kairouz, Liu, Steinke ICML 2021 (sum of
discrete Gaussians).
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Iterable
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from .samplers import RealLike, as_fraction, round_scale_up

__all__ = [
    "MechanismAccount", "PrivacyBudget", "advanced_composition", "basic_composition",
    "binomial_mechanism_delta", "check_delta", "check_epsilon", "check_n", "check_sensitivity",
    "discrete_gaussian_epsilon", "discrete_laplace_epsilon", "discrete_laplace_scale",
    "distributed_discrete_gaussian_rho", "gaussian_delta", "gaussian_sigma", "laplace_scale",
    "zcdp_to_dp",
]


# -- validation ---------------------------------------------------------------
def _real(x, name: str) -> float:
    if isinstance(x, (bool, np.bool_)) or \
            not isinstance(x, (numbers.Real, np.floating, np.integer)):
        raise TypeError(f"{name} must be a real number, got {type(x).__name__}")
    return float(x)


def _finite_positive(x: RealLike, name: str) -> float:
    v = _real(x, name)
    if not math.isfinite(v) or v <= 0:
        raise ValueError(f"{name} must be finite and > 0, got {x!r}")
    return v


def check_epsilon(epsilon: RealLike, name: str = "epsilon") -> float:
    """epsilon must be a finite real > 0."""
    return _finite_positive(epsilon, name)


def check_delta(delta: RealLike, name: str = "delta") -> float:
    """delta must lie in the open interval (0, 1)."""
    d = _real(delta, name)
    if not (0.0 < d < 1.0):
        raise ValueError(f"{name} must be in (0, 1), got {delta!r}")
    return d


def check_sensitivity(sensitivity: RealLike, name: str = "sensitivity") -> float:
    """sensitivity must be a finite real > 0."""
    return _finite_positive(sensitivity, name)


def check_n(n: int, name: str = "n") -> int:
    """n must be an integer >= 1."""
    if isinstance(n, (bool, np.bool_)) or not isinstance(n, (numbers.Integral, np.integer)):
        raise TypeError(f"{name} must be an integer >= 1, got {n!r}")
    if n < 1:
        raise ValueError(f"{name} must be >= 1, got {n}")
    return int(n)


# -- Laplace ------------------------------------------------------------------------
def laplace_scale(sensitivity: RealLike, epsilon: RealLike) -> float:
    """Laplace scale b = Delta_1 / epsilon giving epsilon-DP (Dwork-Roth Thm. 3.6)."""
    return check_sensitivity(sensitivity) / check_epsilon(epsilon)


def discrete_laplace_scale(sensitivity: RealLike, epsilon: RealLike, *,
                           max_bits: int = 48) -> Fraction:
    """Exact rational scale t >= Delta_1 / epsilon for the discrete Laplace.

    The discrete Laplace with a = exp(-1/t) on an integer query of L1
    sensitivity Delta is (Delta / t)-DP. ``sensitivity`` and ``epsilon`` are
    converted *exactly* (Fraction of the float), the ratio is computed
    exactly and rounded *up* on a dyadic grid (:func:`round_scale_up`) so the
    sampler can use it; the epsilon actually guaranteed,
    :func:`discrete_laplace_epsilon` (Delta / t), is therefore <= the
    requested epsilon.
    """
    check_sensitivity(sensitivity)
    check_epsilon(epsilon)
    exact = as_fraction(sensitivity, "sensitivity") / as_fraction(epsilon, "epsilon")
    return round_scale_up(exact, max_bits)


def discrete_laplace_epsilon(sensitivity: RealLike, scale: RealLike) -> float:
    """epsilon = Delta_1 / t guaranteed by the discrete Laplace of scale t (a float rounded up)."""
    check_sensitivity(sensitivity)
    q = as_fraction(sensitivity, "sensitivity") / as_fraction(scale, "scale")
    e = float(q)
    return e if Fraction(e) >= q else math.nextafter(e, math.inf)


# -- Gaussian -------------------------------------------------------------------------
def _phi(x: float) -> float:
    return 0.5 * math.erfc(-x / math.sqrt(2.0))


def gaussian_delta(sensitivity: RealLike, sigma: RealLike, epsilon: RealLike) -> float:
    """Exact delta of the Gaussian mechanism (Balle-Wang 2018, Thm. 8).

    delta = Phi(D/(2s) - e s/D) - e^e Phi(-D/(2s) - e s/D), D = Delta_2, s = sigma.
    """
    D = check_sensitivity(sensitivity)
    s = check_sensitivity(sigma, "sigma")
    e = check_epsilon(epsilon)
    a, b = D / (2 * s), e * s / D
    return max(0.0, _phi(a - b) - math.exp(e) * _phi(-a - b))


def gaussian_sigma(sensitivity: RealLike, epsilon: RealLike, delta: RealLike, *,
                   method: str = "analytic") -> float:
    """Gaussian noise sigma for (epsilon, delta)-DP from the L2 sensitivity.

    ``method="classic"``: sigma = Delta sqrt(2 ln(1.25/delta)) / epsilon,
    valid for epsilon < 1 (Dwork-Roth Thm. A.1; ValueError otherwise).
    ``method="analytic"``: the smallest sigma (to relative 1e-12, rounded
    up) with :func:`gaussian_delta` <= delta (Balle-Wang 2018, Alg. 1 by
    bisection); valid for every epsilon.
    """
    D = check_sensitivity(sensitivity)
    e = check_epsilon(epsilon)
    d = check_delta(delta)
    if method == "classic":
        if e >= 1:
            raise ValueError(f"epsilon must be < 1 for the classic Gaussian bound, got "
                             f"{epsilon!r}; use method='analytic'")
        return D * math.sqrt(2 * math.log(1.25 / d)) / e
    if method != "analytic":
        raise ValueError(f"method must be 'analytic' or 'classic', got {method!r}")
    lo, hi = 1e-12 * D, D
    while gaussian_delta(D, hi, e) > d:
        hi *= 2
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if gaussian_delta(D, mid, e) > d:
            lo = mid
        else:
            hi = mid
        if hi - lo <= 1e-13 * hi:
            break
    return hi


def zcdp_to_dp(rho: RealLike, delta: RealLike) -> float:
    """epsilon such that rho-zCDP implies (epsilon, delta)-DP: rho + 2 sqrt(rho ln(1/delta)).

    Bun-Steinke 2016, Prop. 1.3.
    """
    r = _real(rho, "rho")
    if not math.isfinite(r) or r < 0:
        raise ValueError(f"rho must be finite and >= 0, got {rho!r}")
    d = check_delta(delta)
    return r + 2 * math.sqrt(r * math.log(1 / d))


def discrete_gaussian_epsilon(sensitivity: RealLike, sigma2: RealLike,
                              delta: RealLike) -> float:
    """(epsilon, delta)-DP of N_Z(0, sigma2) on an integer query of L2 sensitivity Delta.

    N_Z(0, sigma2) gives rho = Delta^2 / (2 sigma2) zCDP (CKS20 Thm. 4), converted
    with :func:`zcdp_to_dp`.
    """
    D = check_sensitivity(sensitivity)
    s2 = check_sensitivity(sigma2, "sigma2")
    return zcdp_to_dp(D * D / (2 * s2), delta)


def distributed_discrete_gaussian_rho(sensitivity: RealLike, sigma2_each: RealLike, n: int, *,
                                      l1_sensitivity: RealLike | None = None) -> float:
    """zCDP rho of the sum of n iid N_Z(0, sigma2_each) added to an integer query.

    A sum of discrete Gaussians is not a discrete Gaussian. We use
    min(rho_KLS, rho_one):
      * rho_KLS = eps^2 / 2 with eps = min(sqrt(D2^2/(n s2) + tau/2),
        D2/(sqrt(n s2)) + tau), tau = 10 sum_{k=1}^{n-1} exp(-2 pi^2 s2 k/(k+1))
        (Kairouz, Liu, Steinke, ICML 2021, bound on sums of discrete
        Gaussians, d = 1, stated for sigma >= 1/2; used only then);
      * rho_one = D2^2 / (2 s2): one honest party's N_Z(0, s2) alone already
        gives this, and adding independent noise is post-processing.
    """
    D = check_sensitivity(sensitivity)
    s2 = check_sensitivity(sigma2_each, "sigma2_each")
    n = check_n(n)
    rho_one = D * D / (2 * s2)
    if n == 1 or s2 < 0.25:   # the KLS bound assumes sigma >= 1/2
        return rho_one
    k = np.arange(1, n, dtype=np.float64)
    tau = 10.0 * float(np.exp(-2 * math.pi ** 2 * s2 * k / (k + 1)).sum())
    eps = min(math.sqrt(D * D / (n * s2) + tau / 2), D / math.sqrt(n * s2) + tau)
    return min(eps * eps / 2, rho_one)


def binomial_mechanism_delta(n_coins: int, sensitivity: int, epsilon: RealLike) -> float:
    """delta of the centred Binomial(n_coins, 1/2) mechanism for an integer shift.

    Computed numerically from the privacy profile:
    delta = max over shifts 1 <= |d| <= Delta of sum_k max(0, P(k) - e^eps P(k - d)),
    with log-pmf from lgamma (float64; an accounting number, not a sampler).
    The noise is Binomial(n, 1/2) (Dwork, Kenthapadi, McSherry, Mironov,
    Naor, EUROCRYPT 2006, coin flipping); ``sensitivity`` is in coin units
    (integer >= 1).
    """
    n = check_n(n_coins, "n_coins")
    D = check_sensitivity(sensitivity)
    if int(D) != D:
        raise ValueError(f"sensitivity must be an integer number of coin units, "
                         f"got {sensitivity!r}")
    D = int(D)
    e = check_epsilon(epsilon)
    k = np.arange(n + 1, dtype=np.float64)
    lg = np.vectorize(math.lgamma, otypes=[np.float64])
    logp = lg(n + 1.0) - lg(k + 1.0) - lg(n - k + 1.0) - n * math.log(2.0)
    p = np.exp(logp)
    if n < D:
        return 1.0
    # worst shift d in 1..D: P(k) vs Q(k) = P(k - d); by symmetry of
    # Binomial(n, 1/2) both directions agree.
    delta = 0.0
    for d in range(1, D + 1):          # D is small (a sensitivity in coin units)
        q = np.concatenate([np.zeros(d), p[:n + 1 - d]])
        delta = max(delta, float(np.maximum(0.0, p - math.exp(e) * q).sum()))
    return float(min(1.0, delta))


# -- composition ------------------------------------------------------------------------
def basic_composition(mechanisms: Iterable[tuple[RealLike, RealLike]]) -> tuple[float, float]:
    """Sum of (epsilon_i, delta_i) (Dwork-Roth Thm. 3.16); ``mechanisms``: iterable of pairs."""
    eps, dl = Fraction(0), Fraction(0)
    count = 0
    for item in mechanisms:
        try:
            e, d = item
        except (TypeError, ValueError):
            raise TypeError(f"mechanisms must be (epsilon, delta) pairs, got {item!r}") from None
        check_epsilon(e)
        d_f = _real(d, "delta")
        if not (0.0 <= d_f < 1.0):
            raise ValueError(f"delta must be in [0, 1), got {d!r}")
        eps += Fraction(float(e))
        dl += Fraction(d_f)
        count += 1
    if count == 0:
        raise ValueError("mechanisms must contain at least one (epsilon, delta) pair")
    return _up(eps), _up(dl)


def _dec(x) -> Fraction:
    """The rational a user means by ``x``: exact for ints/Fractions, shortest repr for floats."""
    if isinstance(x, Fraction):
        return x
    if isinstance(x, numbers.Integral):
        return Fraction(int(x))
    return Fraction(repr(float(x)))


def _up(q: Fraction) -> float:
    f = float(q)
    return f if Fraction(f) >= q else math.nextafter(f, math.inf)


def advanced_composition(epsilon: RealLike, delta: RealLike, k: int,
                         delta_prime: RealLike) -> tuple[float, float]:
    """k-fold adaptive composition of (epsilon, delta)-DP mechanisms (Dwork-Rothblum-Vadhan 2010).

    Returns (epsilon', k delta + delta') with
    epsilon' = sqrt(2 k ln(1/delta')) epsilon + k epsilon (e^epsilon - 1)
    (Dwork-Roth Thm. 3.20). ``delta`` may be 0.
    """
    e = check_epsilon(epsilon)
    d = _real(delta, "delta")
    if not (0.0 <= d < 1.0):
        raise ValueError(f"delta must be in [0, 1), got {delta!r}")
    k = check_n(k, "k")
    dp = check_delta(delta_prime, "delta_prime")
    eps = math.sqrt(2 * k * math.log(1 / dp)) * e + k * e * math.expm1(e)
    return eps, k * d + dp


# -- accounting objects ----------------------------------------------------------------
@dataclass(frozen=True)
class MechanismAccount:
    """What a DP mechanism spends, with the noise that buys it.

    ``distribution`` names the noise ("discrete_laplace", "discrete_gaussian",
    "binomial", ...), ``scale`` is its parameter in the units the noise is
    added in (ring units for shared noise), ``sensitivity`` the query's
    sensitivity in those same units, ``epsilon``/``delta`` the guarantee.
    """

    distribution: str
    scale: float
    sensitivity: float
    epsilon: float
    delta: float = 0.0
    notes: str = ""


class PrivacyBudget:
    """A total (epsilon, delta) that protocols spend from; refuses to overspend.

    >>> b = PrivacyBudget(1.0)
    >>> _ = b.spend(0.5, label="auc")
    >>> b.remaining
    (0.5, 0.0)

    Sums are exact rationals; a float is read as the shortest decimal that
    prints as it (``0.1`` is 1/10, so ten spends of 0.1 exhaust exactly a
    budget of 1.0; the difference from the binary value is < 1e-16
    relative). A spend that
    would make the total exceed the budget raises ``ValueError`` and changes
    nothing. ``ledger`` lists (label, epsilon, delta) of accepted spends.
    """

    def __init__(self, epsilon, delta=0.0):
        check_epsilon(epsilon)
        d = _real(delta, "delta")
        if not (0.0 <= d < 1.0):
            raise ValueError(f"delta must be in [0, 1), got {delta!r}")
        self._eps = _dec(epsilon)
        self._delta = _dec(d)
        self._spent_eps = Fraction(0)
        self._spent_delta = Fraction(0)
        self.ledger: list[tuple[str, float, float]] = []

    @property
    def total(self) -> tuple[float, float]:
        return float(self._eps), float(self._delta)

    @property
    def spent(self) -> tuple[float, float]:
        return _up(self._spent_eps), _up(self._spent_delta)

    @property
    def remaining(self) -> tuple[float, float]:
        return float(self._eps - self._spent_eps), float(self._delta - self._spent_delta)

    def can_spend(self, epsilon: RealLike, delta: RealLike = 0.0) -> bool:
        e = _dec(check_epsilon(epsilon))
        d = _dec(_real(delta, "delta"))
        return (self._spent_eps + e <= self._eps) and (self._spent_delta + d <= self._delta)

    def spend(self, epsilon: RealLike | MechanismAccount, delta: RealLike = 0.0,
              label: str = "") -> PrivacyBudget:
        """Record a spend of (epsilon, delta); ``ValueError`` on overspend.

        Accepts a :class:`MechanismAccount` in place of ``epsilon``.
        """
        if isinstance(epsilon, MechanismAccount):
            acc = epsilon
            epsilon, delta = acc.epsilon, acc.delta
            label = label or acc.distribution
        e = check_epsilon(epsilon)
        d = _real(delta, "delta")
        if not (0.0 <= d < 1.0):
            raise ValueError(f"delta must be in [0, 1), got {delta!r}")
        new_e = self._spent_eps + _dec(e)
        new_d = self._spent_delta + _dec(d)
        if new_e > self._eps or new_d > self._delta:
            raise ValueError(
                f"privacy budget overspend: spending (epsilon={e}, delta={d}) for {label!r} "
                f"would exceed the budget (epsilon={float(self._eps)}, "
                f"delta={float(self._delta)}); "
                f"remaining {self.remaining}")
        self._spent_eps, self._spent_delta = new_e, new_d
        self.ledger.append((str(label), e, d))
        return self

    def __repr__(self) -> str:
        return f"PrivacyBudget(total={self.total}, spent={self.spent})"
