"""Who must collude: the noise split that keeps epsilon against a tolerated coalition.

Distributed discrete Laplace noise is a sum of per-contributor Polya
differences (Balle et al. 2020). If every one of m contributors draws
Polya(1/m) - Polya(1/m), the total is DLap(a), but a coalition that knows
its members' draws subtracts them and is left with far less noise: with
m = 50 contributors, 49 of them colluding with the aggregator face epsilon
~15.6 instead of 1 (:func:`noise.privacy_loss.polya_difference_epsilon`).

A :class:`CollusionPlan` states the split that fixes this. Each contributor
draws Polya(1/h) - Polya(1/h) where h is the number of contributors that are
honest under the plan's assumption; any h honest contributors alone then add
exactly DLap(a), so the claimed epsilon holds against the aggregator
together with every tolerated coalition. The price is a variance factor
m / h on the total noise (the total is Polya(m/h) - Polya(m/h)).

* M_Dis (Pi_DLap, and the local variant of Remark B.1): m = n parties, a
  coalition of at most t parties (``max_colluders``) besides the aggregator,
  h = n - t. Default t = floor(n / 2): an honest majority of the noise
  contributors, the same assumption as the default f_H = 1/2 of M_HF. The
  cost is a variance factor n / (n - t) <= 2 (noise std <= 1.42x); tolerating
  t = n - 1 costs n times the variance (local-DP-sized noise), tolerating 0
  leaves the release exposed to any coalition (the old split).
* M_HF (committee): a committee of m members drawn uniformly without
  replacement from n parties, of which at most floor((1 - f_H) n) are
  corrupted. h is the largest number with P[fewer than h honest members] <=
  ``fail``: the exact hypergeometric tail (integer arithmetic) when n is
  known, the binomial tail (the paper's with-replacement model, its n ->
  infinity limit) otherwise. Default size: the smallest committee, at least
  the paper's ceil(log(fail) / log(1 - f_H)), whose variance factor m / h is
  at most 2 / f_H (within 2x of the best any committee can do, 1 / f_H);
  capped at n. It costs m (n - 1) l bits: about 190 members for f_H = 1/2
  and fail = 2^-40 (h = 48, factor 3.96) against the paper's 40 (h = 1,
  factor 40).

Input privacy is a separate matter: in M_Dis no coalition of n - 1 parties
learns an honest party's input (additive sharing), whatever t is; t only
bounds the coalitions against which the *release* keeps its epsilon.
"""

from __future__ import annotations

import functools
import math
import numbers
from collections.abc import Iterable
from dataclasses import dataclass
from fractions import Fraction

from .privacy_loss import polya_difference_epsilon
from .samplers import RealLike

__all__ = [
    "METHODS", "CollusionPlan", "binomial_lower_tail", "committee_plan", "committee_size",
    "dis_plan", "hypergeometric_lower_tail", "release_guarantee", "resolve_max_colluders",
]


@dataclass(frozen=True)
class CollusionPlan:
    """The noise split of one protocol run and the DP guarantee it buys.

    ``contributors``: parties that draw noise (n, or the committee size m);
    ``honest``: h, the contributors assumed honest (each draws Polya(1/h));
    ``max_colluders``: contributors that may collude with the aggregator
    while epsilon holds (contributors - honest); ``fail_probability``: the
    exact probability that fewer than h contributors are honest (0 for M_Dis;
    the committee tail for M_HF); ``n``: all parties.
    """

    threat_model: str
    n: int
    contributors: int
    honest: int
    fail_probability: float = 0.0
    tail_model: str = ""
    method: str = "polya"

    @property
    def max_colluders(self) -> int:
        return self.contributors - self.honest

    @property
    def shape(self) -> Fraction:
        """The Polya shape each contributor draws: 1 / h."""
        return Fraction(1, self.honest)

    @property
    def variance_factor(self) -> float:
        """Variance of the total noise over that of DLap(a): contributors / h (1 in MPC)."""
        return 1.0 if self.method == "mpc" else self.contributors / self.honest

    def epsilon_against(self, colluders: int, epsilon: float, scale: RealLike,
                        sensitivity: RealLike) -> float:
        """Epsilon against the aggregator plus ``colluders`` contributors who subtract their draws.

        ``epsilon`` is the claimed guarantee (returned when colluders <= the
        tolerated number); beyond, the honest part is Polya(j/h) - Polya(j/h)
        with j = contributors - colluders honest, and the exact loss is computed
        by :func:`noise.privacy_loss.polya_difference_epsilon` (``scale`` and
        ``sensitivity`` in ring units). All contributors colluding: inf.
        """
        if isinstance(colluders, bool) or not isinstance(colluders, numbers.Integral):
            raise TypeError(f"colluders must be an integer, got {colluders!r}")
        if not 0 <= colluders <= self.contributors:
            raise ValueError(f"colluders must be in 0..{self.contributors}, got {colluders}")
        if colluders <= self.max_colluders:
            return float(epsilon)
        honest = self.contributors - int(colluders)
        if honest == 0:
            return math.inf
        return polya_difference_epsilon(Fraction(honest, self.honest), scale, sensitivity)

    def describe(self) -> str:
        """One plain sentence on who may collude and what it costs."""
        if self.method == "mpc":
            who = (f"a committee of {self.contributors} of {self.n} parties (at least one honest "
                   f"member except with probability {self.fail_probability:.3g} under the honest "
                   "fraction)" if self.threat_model == "hf" else f"all {self.contributors} parties")
            return (f"noise sampled inside MPC by {who}: one discrete Laplace (variance x1), "
                    f"hidden from the aggregator with up to {self.max_colluders} colluding "
                    "contributors")
        if self.threat_model == "hf":
            return (f"committee of {self.contributors} of {self.n} parties; epsilon holds while at "
                    f"least {self.honest} members are honest (all but probability "
                    f"{self.fail_probability:.3g} under the honest fraction), i.e. against the "
                    f"aggregator with up to {self.max_colluders} colluding members; noise variance "
                    f"x{self.variance_factor:.3g}")
        return (f"epsilon holds against the aggregator colluding with up to {self.max_colluders} "
                f"of the {self.contributors} parties (each draws Polya(1/{self.honest}) "
                f"differences); noise variance x{self.variance_factor:.3g}")

    def to_dict(self) -> dict:
        return {"threat_model": self.threat_model, "n": self.n, "contributors": self.contributors,
                "honest": self.honest, "max_colluders": self.max_colluders,
                "fail_probability": self.fail_probability, "tail_model": self.tail_model,
                "variance_factor": self.variance_factor, "method": self.method,
                "polya_shape": str(self.shape) if self.method == "polya" else None}


def _check_n(n, name="n") -> int:
    if isinstance(n, bool) or not isinstance(n, numbers.Integral):
        raise TypeError(f"{name} must be an integer >= 1, got {n!r}")
    if n < 1:
        raise ValueError(f"{name} must be >= 1, got {n}")
    return int(n)


def resolve_max_colluders(value: int | str | None, n: int) -> int:
    """t from an int in 0..n-1, ``"half"`` / None (floor(n/2), the default) or ``"all"`` (n-1)."""
    n = _check_n(n)
    if value is None or value == "half":
        return n // 2
    if value == "all":
        return n - 1
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"max_colluders must be an integer, 'half' or 'all', got {value!r}")
    if not 0 <= value <= n - 1:
        raise ValueError(f"max_colluders must be in 0..{n - 1} (n = {n} parties), got {value}")
    return int(value)


def dis_plan(n: int, max_colluders: int | str | None = None, threat_model: str = "dis",
             method: str = "polya") -> CollusionPlan:
    """M_Dis (and local) split: n contributors, h = n - t honest, t = ``max_colluders``.

    ``method="mpc"`` (noise sampled inside MPC, :mod:`noise.mpc_sampler`): one
    honest contributor suffices, t = n - 1 (``max_colluders`` must be None).
    """
    n = _check_n(n)
    _check_method(method)
    if method == "mpc":
        if max_colluders is not None:
            raise ValueError("max_colluders applies to the Polya method; noise sampled inside MPC "
                             "holds against the aggregator with all but one contributor")
        return CollusionPlan(threat_model, n, n, 1, method="mpc")
    t = resolve_max_colluders(max_colluders, n)
    return CollusionPlan(threat_model, n, n, n - t)


METHODS = ("mpc", "polya")


def _check_method(method) -> str:
    if method not in METHODS:
        raise ValueError(f"noise method must be one of {METHODS}, got {method!r}")
    return method


def _check_fail_fh(fail, f_h) -> tuple[Fraction, Fraction]:
    """fail as its exact rational; f_h as the decimal the user wrote (0.9 is 9/10)."""
    fl = float(fail)
    if isinstance(fail, bool) or not (0.0 < fl < 1.0):
        raise ValueError(f"fail must be in (0, 1), got {fail!r}")
    fh = float(f_h)
    if isinstance(f_h, bool) or not (0.0 < fh <= 1.0):
        raise ValueError(f"f_h must be in (0, 1], got {f_h!r}")
    return Fraction(fl), _fh(f_h)


def _fh(f_h) -> Fraction:
    return f_h if isinstance(f_h, Fraction) else Fraction(repr(float(f_h)))


def committee_size(fail: float | Fraction, f_h: float | Fraction) -> int:
    """ceil(log(fail) / log(1 - f_H)): a committee with an honest member w.p. >= 1 - fail.

    ``fail`` in (0, 1); ``f_h`` (fraction of honest parties) in (0, 1]; f_h = 1
    gives 1. Sinh & Ramon, Sec. 4 (model M_HF).
    """
    _check_fail_fh(fail, f_h)
    fl, fh = float(fail), float(f_h)
    if fh == 1.0:
        return 1
    return max(1, math.ceil(math.log(fl) / math.log1p(-fh) - 1e-12))


def binomial_lower_tail(m: int, f_h: float | Fraction, h: int) -> Fraction:
    """P[Binomial(m, f_h) < h], exactly (f_h read as the decimal it prints as: 0.9 is 9/10)."""
    p = _fh(f_h)
    P, Q = p.numerator, p.denominator
    total = sum(math.comb(m, j) * P ** j * (Q - P) ** (m - j) for j in range(max(0, min(h, m + 1))))
    return Fraction(total, Q ** m)


def _corrupted(n: int, f_h) -> int:
    return math.floor((1 - _fh(f_h)) * n)


def hypergeometric_lower_tail(n: int, f_h: float | Fraction, m: int, h: int) -> Fraction:
    """P[fewer than h honest among m drawn without replacement from n, floor((1-f_h) n) corrupt]."""
    c = _corrupted(n, f_h)
    honest_pop = n - c
    total = sum(math.comb(honest_pop, j) * math.comb(c, m - j)
                for j in range(max(0, min(h, m + 1))))
    return Fraction(total, math.comb(n, m))


@functools.lru_cache(maxsize=256)
def _largest_honest(m: int, fail: Fraction, f_h: Fraction, n: int | None) -> tuple[int, Fraction]:
    """Largest h with P[fewer than h honest] <= fail, and that probability (exact)."""
    if n is None:
        p = f_h
        P, Q = p.numerator, p.denominator
        scale = Q ** m

        def term(j: int) -> int:
            return math.comb(m, j) * P ** j * (Q - P) ** (m - j)
    else:
        c = _corrupted(n, f_h)
        scale = math.comb(n, m)

        def term(j: int) -> int:
            return math.comb(n - c, j) * math.comb(c, m - j)
    limit = fail * scale
    acc = 0
    for h in range(m + 1):                 # acc = scale * P[honest < h]
        nxt = acc + term(h)
        if nxt > limit:
            return h, Fraction(acc, scale)
        acc = nxt
    raise AssertionError("unreachable: P[honest <= m] = 1 > fail")  # pragma: no cover


def committee_plan(fail: float | Fraction = 2.0 ** -40, f_h: float | Fraction = 0.5, *,
                   n: int | None = None, size: int | None = None,
                   method: str = "polya") -> CollusionPlan:
    """The M_HF committee: its size m, the guaranteed honest members h, and the failure probability.

    ``size`` None picks the default (module docstring); a given size is capped
    at n. ValueError if not even one honest member is guaranteed.
    ``method="mpc"``: the committee samples the noise inside MPC, one honest
    member suffices (h = 1): the default size is the smallest with at least
    one honest member except with probability ``fail`` (40 for f_h = 1/2,
    fail = 2^-40, the paper's size; fewer from the exact hypergeometric tail
    when n is small).
    """
    fail_q, fh_q = _check_fail_fh(fail, f_h)
    _check_method(method)
    if n is not None:
        n = _check_n(n)
    mpc = method == "mpc"
    if size is not None:
        m = min(_check_n(size, "committee_size"), n if n is not None else size)
        h, prob = _largest_honest(m, fail_q, fh_q, n)
        if h == 0:
            least = _one_honest_committee(fail_q, fh_q, n) if mpc else committee_size(fail, f_h)
            raise ValueError(
                f"committee_size={size} has no honest member with probability >= 1 - fail "
                f"(fail = {float(fail):.3g}, f_h = {float(f_h):.3g}); use at least "
                f"{least} members")
    elif mpc:
        m = _one_honest_committee(fail_q, fh_q, n)
    else:
        m, h, prob = _default_committee(fail_q, fh_q, n)
    model = "binomial" if n is None else \
        f"hypergeometric (n = {n}, at most {_corrupted(n, fh_q)} corrupted)"
    if mpc:             # in MPC one honest member hides the noise: h = 1, P[none honest]
        h = 1
        prob = binomial_lower_tail(m, fh_q, 1) if n is None else hypergeometric_lower_tail(
            n, fh_q, m, 1)
    return CollusionPlan("hf", n if n is not None else m, m, h, float(prob), model, method)


@functools.lru_cache(maxsize=64)
def _one_honest_committee(fail: Fraction, f_h: Fraction, n: int | None) -> int:
    """The smallest committee with at least one honest member except with probability fail."""
    cap = n if n is not None else 1 << 20
    m = 1
    while m < cap and _largest_honest(m, fail, f_h, n)[0] == 0:
        m += 1
    return m


@functools.lru_cache(maxsize=64)
def _default_committee(fail: Fraction, f_h: Fraction, n: int | None):
    target = 2 / f_h
    m = committee_size(float(fail), float(f_h))
    cap = n if n is not None else 1 << 20
    m = min(m, cap)
    while True:
        h, prob = _largest_honest(m, fail, f_h, n)
        if (h and Fraction(m, h) <= target) or m >= cap:
            return m, h, prob
        m += 1


def release_guarantee(plan: CollusionPlan, components: Iterable[tuple[float, float]],
                      f_h: float | Fraction = 0.5) -> dict:
    """The plain statement for a release made of several noisy sums (basic composition).

    ``components``: (epsilon, scale) of each discrete Laplace noise draw of the
    release (scale in ring units; the sensitivity is epsilon * scale). Returns
    input privacy, epsilon against the aggregator alone and with the largest
    tolerated coalition (the sum of the claims), against the aggregator with
    all but one contributor (the sum of the exact losses), and the plan.
    """
    claimed = worst = 0.0
    for eps, scale in components:
        sens = eps * scale
        sens = round(sens) if abs(sens - round(sens)) < 1e-6 * sens else sens
        claimed += eps
        worst += plan.epsilon_against(plan.contributors - 1, eps, scale, sens)
    if plan.threat_model == "hf":
        inputs = (f"inputs hidden from any coalition allowed by M_HF (at most a {1 - float(f_h):g} "
                  "fraction of the parties) and the aggregator")
    else:
        inputs = (f"inputs hidden from any coalition of up to {plan.n - 1} parties and the "
                  "aggregator (M_Dis), except through the release")
    return {"input_privacy": inputs, "epsilon_aggregator": claimed,
            "max_colluders": plan.max_colluders, "contributors": plan.contributors,
            "epsilon_max_coalition": claimed, "fail_probability": plan.fail_probability,
            "variance_factor": plan.variance_factor, "epsilon_all_but_one": worst,
            "summary": plan.describe()}
