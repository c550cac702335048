"""The specs of the ECDF family (Barczewski, Mawass, Ramon): ECDF, quantiles, ROC, Hosmer-Lemeshow.

Every spec holds one group per concern, shared by the four statistics:

- :class:`ECDFPrivacy`: ``epsilon`` (inf: no noise, evaluation only), how
  the tree's node noise is drawn (``noise_mode``: ``each`` every server adds
  a full discrete Laplace per node, ``split`` Polya halves summing to one,
  ``mpc`` one discrete Laplace per node sampled inside MPC by the servers;
  None: ``each``, and the central backend draws one noise per node) and
  the node ``sensitivity`` rule (``exact``: the tree's diameter;
  ``paper``: Theorem 3.1's L + 1, branching 2 only).
- :class:`ECDFPrecision`: the ring Z_2^``bits`` of shares and DCF outputs,
  the public ``bounds`` (lo, hi) of the values and ``clip`` (values outside
  the bounds are an error unless clipped).
- :class:`ECDFDesign`: the public threshold grid, ``thresholds`` (a count N,
  placed within the bounds with ``grid`` spacing ``regular`` or
  ``geometric``, or the increasing thresholds themselves), and the tree's
  ``branching`` (an int b >= 2 or ``auto``: the b with the smallest MSE at
  this N and epsilon).
- :class:`ECDFExecution`: how the counts are computed (``backend``: ``fss``
  two FSS servers, ``pointwise`` a secure sum per query towards m >= 2
  servers, ``central`` a trusted curator, the reference), the number of
  ``servers`` and the debug ``seed`` (reproducible, INSECURE randomness).

and the statistic's own fields at the top: ``smooth`` (None, ``isotonic``,
``l1``, ``l2``: the released curve made non-decreasing, post-processing)
and ``confidence`` (the level of the reported intervals) for the ECDF,
quantiles and ROC; the levels ``q`` and the refusal ``max_halfwidth`` for
quantiles; ``max_auc_halfwidth`` for ROC; for Hosmer-Lemeshow the groups
and the grid on [0, 1] (:class:`HLDesign`), the ``null`` and the refusal
``max_detectable`` (its ring is 48 bits by default, :class:`HLPrecision`).
A refusal limit of ``inf`` (or None) never refuses.

A spec says what is computed, never where: the executor decides that
(:mod:`ustat.executors`); a seeded spec releases the same bits in the
simulator, in local processes and in a deployment. The checks here are the
public parameters' alone; what needs the data's size (n) is checked by the
statistic.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

from .base import (
    Spec,
    check_choice,
    check_epsilon,
    check_groups,
    check_int,
    check_real,
    check_seed,
    set_field,
)

__all__ = [
    "BACKENDS",
    "MAX_AUC_HALFWIDTH",
    "MAX_DETECTABLE",
    "MAX_QUANTILE_HALFWIDTH",
    "MAX_THRESHOLDS",
    "NOISE_MODES",
    "NULLS",
    "SENSITIVITIES",
    "SMOOTHING",
    "SPACINGS",
    "ECDFDesign",
    "ECDFExecution",
    "ECDFPrecision",
    "ECDFPrivacy",
    "ECDFSpec",
    "HLDesign",
    "HLPrecision",
    "HLSpec",
    "QuantileSpec",
    "ROCSpec",
    "check_bounds",
    "check_count",
    "check_levels",
    "check_thresholds",
]

BACKENDS = ("fss", "pointwise", "central")
NOISE_MODES = ("each", "split", "mpc")
SENSITIVITIES = ("exact", "paper")
SPACINGS = ("regular", "geometric")
SMOOTHING = ("isotonic", "l1", "l2")
NULLS = ("calibrated", "fitted")
#: Largest grid accepted (a tree of 2^22 leaves: noise and smoothing stay in memory).
MAX_THRESHOLDS = 1 << 22
#: ``quantile`` refuses when the ECDF's pointwise half-width exceeds this (probability units).
MAX_QUANTILE_HALFWIDTH = 0.15
#: ``roc`` refuses when even balanced classes would leave the AUC interval wider than +- this.
MAX_AUC_HALFWIDTH = 0.25
#: ``hl`` refuses when the miscalibration it detects half the time exceeds this.
MAX_DETECTABLE = 0.25


# -- checks of public parameters (each names its field; ustat.ecdf re-exports them) ----------
def check_count(n: Any, name: str) -> int:
    """A number of thresholds: an int in 1..MAX_THRESHOLDS."""
    if isinstance(n, (bool, np.bool_)) or not isinstance(n, numbers.Integral):
        raise TypeError(f"{name} must be an integer >= 1, got {n!r}")
    n = int(n)
    if n < 1:
        raise ValueError(f"{name} must be >= 1 (N = 0 thresholds gives nothing to release), "
                         f"got {n}")
    if n > MAX_THRESHOLDS:
        raise ValueError(f"{name} must be <= {MAX_THRESHOLDS}, got {n}")
    return n


def check_bounds(bounds: Any, name: str = "bounds") -> tuple[float, float]:
    """A public pair (lo, hi) of finite numbers with lo < hi, as floats."""
    try:
        lo, hi = (float(v) for v in bounds)
    except (TypeError, ValueError):
        raise TypeError(f"{name} must be a pair (lo, hi) of numbers, got {bounds!r}") from None
    if not (math.isfinite(lo) and math.isfinite(hi)) or not lo < hi:
        raise ValueError(f"{name} must be finite with lo < hi, got ({lo}, {hi})")
    return lo, hi


def check_thresholds(thresholds: Any, bounds: Any = None) -> np.ndarray:
    """Validate a user grid: finite, strictly increasing, N >= 1, inside ``bounds`` if given.

    Returns a float64 copy. ``ValueError`` names the first offending
    position (1-based) for unsorted or duplicated thresholds.
    """
    try:
        tau = np.array(thresholds, dtype=np.float64).reshape(-1)
    except (TypeError, ValueError):
        raise TypeError(f"thresholds must be numbers, got {type(thresholds).__name__}") from None
    if tau.size == 0:
        raise ValueError("thresholds: N = 0 thresholds; give at least one")
    check_count(tau.size, "number of thresholds")
    bad = np.flatnonzero(~np.isfinite(tau))
    if bad.size:
        raise ValueError(f"thresholds: threshold {bad[0] + 1} is not finite ({tau[bad[0]]})")
    d = np.diff(tau)
    if np.any(d < 0):
        k = int(np.flatnonzero(d < 0)[0])
        raise ValueError(f"thresholds must be sorted increasingly: threshold {k + 2} "
                         f"({tau[k + 1]}) "
                         f"< threshold {k + 1} ({tau[k]})")
    if np.any(d == 0):
        k = int(np.flatnonzero(d == 0)[0])
        raise ValueError(f"thresholds must be distinct: threshold {k + 2} duplicates threshold "
                         f"{k + 1} ({tau[k]})")
    if bounds is not None:
        lo, hi = check_bounds(bounds)
        out = np.flatnonzero((tau < lo) | (tau > hi))
        if out.size:
            k = int(out[0])
            raise ValueError(f"thresholds: threshold {k + 1} ({tau[k]}) is outside the public "
                             f"bounds [{lo}, {hi}] ({out.size} threshold(s) outside)")
    return tau


def check_levels(q: Any) -> np.ndarray:
    """Quantile levels as float64 (k,), each finite in [0, 1]."""
    if isinstance(q, (bool, np.bool_)):
        raise TypeError("q must be numbers in [0, 1], got bool")
    try:
        p = np.array(q, dtype=np.float64).reshape(-1)
    except (TypeError, ValueError):
        raise TypeError(f"q must be numbers in [0, 1], got {q!r}") from None
    if p.size == 0:
        raise ValueError("q: give at least one quantile level")
    bad = np.flatnonzero(~(np.isfinite(p) & (p >= 0) & (p <= 1)))
    if bad.size:
        raise ValueError(f"q: level {float(p[bad[0]])!r} is not in [0, 1]")
    return p


def _limit(value: Any, name: str) -> float:
    """A refusal limit: a positive number; inf (or None) never refuses."""
    if value is None:
        return math.inf
    v = check_real(value, name, positive=True, finite=False)
    assert v is not None
    return v


def _confidence(c: Any) -> float:
    if isinstance(c, bool) or not isinstance(c, numbers.Real) or not 0 < float(c) < 1:
        raise ValueError(f"confidence must be a level in (0, 1), e.g. 0.95, got {c!r}")
    return float(c)






# -- the groups -------------------------------------------------------------------------------
@dataclass(frozen=True)
class ECDFPrivacy(Spec):
    """Epsilon, how the node noise is drawn and the node sensitivity rule (module docstring)."""

    GROUP: ClassVar[str] = "privacy"

    epsilon: float = 1.0
    noise_mode: str | None = None
    sensitivity: str = "exact"

    def __post_init__(self) -> None:
        set_field(self, "epsilon", check_epsilon(self.epsilon))
        check_choice(self.noise_mode, "noise_mode", NOISE_MODES, allow_none=True)
        check_choice(self.sensitivity, "sensitivity", SENSITIVITIES)


@dataclass(frozen=True)
class ECDFPrecision(Spec):
    """The ring Z_2^bits, the public bounds (lo, hi) of the values, clipping."""

    GROUP: ClassVar[str] = "precision"

    bits: int = 32
    bounds: tuple | None = None
    clip: bool = False

    def __post_init__(self) -> None:
        set_field(self, "bits", check_int(self.bits, "bits", lo=2, hi=64))
        if self.bounds is not None:
            set_field(self, "bounds", check_bounds(self.bounds))
        if not isinstance(self.clip, bool):
            raise TypeError(f"clip must be True or False, got {self.clip!r}")
        if self.clip and self.bounds is None:
            raise ValueError("clip clips the values to the bounds, which are not given: give "
                             "bounds or drop clip")


@dataclass(frozen=True)
class ECDFDesign(Spec):
    """The public threshold grid (a count N with its spacing, or the thresholds) and the
    tree's branching (an int >= 2 or ``"auto"``)."""

    GROUP: ClassVar[str] = "design"

    thresholds: int | tuple = 256
    grid: str = "regular"
    branching: int | str = 2

    def __post_init__(self) -> None:
        t = self.thresholds
        if isinstance(t, numbers.Integral) and not isinstance(t, (bool, np.bool_)):
            set_field(self, "thresholds", check_count(t, "thresholds"))
        else:
            set_field(self, "thresholds", tuple(check_thresholds(t).tolist()))
        check_choice(self.grid, "grid", SPACINGS)
        if self.grid != "regular" and not self.counted:
            raise ValueError(f"grid {self.grid!r} places a number of thresholds; the "
                             "thresholds are given: drop grid")
        b = self.branching
        if b != "auto":
            if isinstance(b, str) or not isinstance(b, numbers.Integral):
                raise TypeError(f"branching must be an integer >= 2 or 'auto', got {b!r}")
            set_field(self, "branching", check_int(b, "branching", lo=2, hi=64))

    def to_dict(self) -> dict:
        t = self.thresholds             # a long tuple of floats: listed at once
        return {"thresholds": t if isinstance(t, int) else list(t), "grid": self.grid,
                "branching": self.branching}

    def _fields_text(self) -> str:
        t = self.thresholds
        shown = t if isinstance(t, int) else (f"[{t[0]:g}, ..., {t[-1]:g}] ({len(t)} given)"
                                              if len(t) > 4 else "[" + ", ".join(
                                                  f"{v:g}" for v in t) + "]")
        return f"thresholds={shown}, grid={self.grid}, branching={self.branching}"

    @property
    def counted(self) -> bool:
        """Whether the grid is a number of thresholds placed within the bounds."""
        return isinstance(self.thresholds, int)

    @property
    def n_points(self) -> int:
        """N: the number of thresholds of the grid."""
        return self.thresholds if isinstance(self.thresholds, int) else len(self.thresholds)


@dataclass(frozen=True)
class ECDFExecution(Spec):
    """The backend that computes the counts, the number of servers, the debug seed."""

    GROUP: ClassVar[str] = "execution"

    backend: str = "fss"
    servers: int = 2
    seed: int | str | None = None           # reproducible, INSECURE randomness
    verify_keys: bool = False               # the servers check each party's keys (fss)

    def __post_init__(self) -> None:
        check_choice(self.backend, "backend", BACKENDS)
        set_field(self, "servers", check_int(self.servers, "servers", lo=2, hi=64))
        if self.backend == "fss" and self.servers != 2:
            raise ValueError(f"servers: backend 'fss' needs servers = 2, got {self.servers} "
                             "(two-key DCF does not extend to m > 2; use backend 'pointwise')")
        set_field(self, "seed", check_seed(self.seed))
        if not isinstance(self.verify_keys, (bool, np.bool_)):
            raise ValueError(f"verify_keys must be true or false, got {self.verify_keys!r}")
        set_field(self, "verify_keys", bool(self.verify_keys))
        if self.verify_keys and self.backend != "fss":
            raise ValueError(f"verify_keys: the key check is the fss backend's (its parties' "
                             f"DCF keys), not backend {self.backend!r}'s")


@dataclass(frozen=True)
class HLPrecision(Spec):
    """The ring of the Hosmer-Lemeshow run (48 bits: its sums carry 16 fractional bits)."""

    GROUP: ClassVar[str] = "precision"

    bits: int = 48

    def __post_init__(self) -> None:
        set_field(self, "bits", check_int(self.bits, "bits", lo=2, hi=64))


@dataclass(frozen=True)
class HLDesign(Spec):
    """The test's groups Q (df = Q - 2 >= 1) and the regular grid of N thresholds on [0, 1]
    that places the group edges."""

    GROUP: ClassVar[str] = "design"

    groups: int = 10
    n_thresholds: int = 1024

    def __post_init__(self) -> None:
        set_field(self, "n_thresholds", check_count(self.n_thresholds, "n_thresholds"))
        if isinstance(self.groups, bool) or not isinstance(self.groups, numbers.Integral):
            raise TypeError(f"groups must be an integer, got {self.groups!r}")
        if not 3 <= self.groups <= self.n_thresholds:
            raise ValueError(f"groups must be in 3..{self.n_thresholds} (df = Q - 2 >= 1, at "
                             f"most one group per threshold), got {self.groups}")
        set_field(self, "groups", int(self.groups))


# -- the statistics' specs --------------------------------------------------------------------
class _Family:
    """The checks across groups every spec of the family makes (a mixin: its annotations
    name the groups every spec has, its methods check them together)."""

    GROUPS: ClassVar[dict]
    privacy: ECDFPrivacy
    execution: ECDFExecution

    def _check_groups(self) -> None:
        check_groups(self)
        if self.execution.backend == "central" and self.privacy.noise_mode is not None:
            raise ValueError("noise_mode applies to backend 'fss' or 'pointwise' (the central "
                             "backend draws one noise per node): drop it")

    @property
    def epsilon(self) -> float:
        """The whole release's epsilon (``privacy.epsilon``)."""
        return self.privacy.epsilon

    @property
    def seed(self) -> int | str | None:
        """The debug seed (``execution.seed``; None: secure randomness)."""
        return self.execution.seed


class _Curve(_Family):
    """The specs released on a threshold grid within public bounds (ECDF, quantiles, ROC)."""

    precision: ECDFPrecision
    design: ECDFDesign
    smooth: str | None
    confidence: float

    def _check_curve(self) -> None:
        """The groups, the grid against the bounds, the sensitivity rule against the
        branching, the smoothing and the intervals' level."""
        self._check_groups()
        design, bounds = self.design, self.precision.bounds
        if design.counted:
            if bounds is None:
                raise ValueError(f"thresholds: {design.thresholds} thresholds are placed within "
                                 "the public bounds, which are not given: give bounds or the "
                                 "thresholds themselves")
            if design.grid == "geometric" and bounds[0] <= 0:
                raise ValueError(f"grid 'geometric' needs a positive lower bound, got lo = "
                                 f"{bounds[0]}")
        elif bounds is not None:
            check_thresholds(design.thresholds, bounds)
        if self.privacy.sensitivity == "paper" and design.branching not in (2, "auto"):
            raise ValueError("sensitivity 'paper' (L + 1) is proved for branching 2 only")
        check_choice(self.smooth, "smooth", SMOOTHING, allow_none=True)
        set_field(self, "confidence", _confidence(self.confidence))


_GROUPS = {"privacy": ECDFPrivacy, "precision": ECDFPrecision, "design": ECDFDesign,
           "execution": ECDFExecution}


@dataclass(frozen=True)
class ECDFSpec(_Curve, Spec):
    """A private ECDF at a public grid of thresholds (module docstring), e.g.
    ``ECDFSpec.of(thresholds=78, bounds=(18, 95), epsilon=1.0)``."""

    GROUPS: ClassVar[dict] = _GROUPS

    privacy: ECDFPrivacy = field(default_factory=ECDFPrivacy)
    precision: ECDFPrecision = field(default_factory=ECDFPrecision)
    design: ECDFDesign = field(default_factory=ECDFDesign)
    execution: ECDFExecution = field(default_factory=ECDFExecution)
    smooth: str | None = None
    confidence: float = 0.95

    def __post_init__(self) -> None:
        self._check_curve()


@dataclass(frozen=True)
class QuantileSpec(_Curve, Spec):
    """Quantiles at levels ``q`` by binary search (Algorithm 1) on one private ECDF, e.g.
    ``QuantileSpec.of([0.25, 0.5, 0.75], thresholds=78, bounds=(18, 95))``: live queries to
    the servers, or with ``smooth`` a search of the smoothed curve. ``max_halfwidth``:
    refuse, before anything is computed, when a point of the ECDF is known only to +- more
    than this (probability units; inf or None: never)."""

    GROUPS: ClassVar[dict] = _GROUPS

    q: tuple
    privacy: ECDFPrivacy = field(default_factory=ECDFPrivacy)
    precision: ECDFPrecision = field(default_factory=ECDFPrecision)
    design: ECDFDesign = field(default_factory=ECDFDesign)
    execution: ECDFExecution = field(default_factory=ECDFExecution)
    smooth: str | None = None
    confidence: float = 0.95
    max_halfwidth: float = MAX_QUANTILE_HALFWIDTH

    def __post_init__(self) -> None:
        set_field(self, "q", tuple(float(v) for v in check_levels(self.q)))
        self._check_curve()
        set_field(self, "max_halfwidth", _limit(self.max_halfwidth, "max_halfwidth"))


@dataclass(frozen=True)
class ROCSpec(_Curve, Spec):
    """A ROC curve and its AUC from the private ECDFs of the two classes' scores (epsilon / 2
    each). The last threshold is the upper bound (appended if missing; without bounds the
    largest score, which runs in one process only). ``max_auc_halfwidth``: refuse, before
    anything is computed, when even balanced classes would leave the AUC interval wider
    than +- this (inf or None: never)."""

    GROUPS: ClassVar[dict] = _GROUPS

    privacy: ECDFPrivacy = field(default_factory=ECDFPrivacy)
    precision: ECDFPrecision = field(default_factory=ECDFPrecision)
    design: ECDFDesign = field(default_factory=ECDFDesign)
    execution: ECDFExecution = field(default_factory=ECDFExecution)
    smooth: str | None = None
    confidence: float = 0.95
    max_auc_halfwidth: float = MAX_AUC_HALFWIDTH

    def __post_init__(self) -> None:
        self._check_curve()
        set_field(self, "max_auc_halfwidth", _limit(self.max_auc_halfwidth, "max_auc_halfwidth"))


@dataclass(frozen=True)
class HLSpec(_Family, Spec):
    """The private Hosmer-Lemeshow test (Algorithm 2, Theorem 5.1's accounting), e.g.
    ``HLSpec.of(groups=10, epsilon=1.0)``. ``null``: ``calibrated`` (y ~ Bernoulli(p), df
    Q) or ``fitted`` (p fitted on these records, df Q - 2). ``max_detectable``: refuse,
    before anything is computed, when the miscalibration detected half the time exceeds it
    (inf or None: never). The group edges come from a tree over ``n_thresholds`` regular
    thresholds on [0, 1] (branching 2)."""

    GROUPS: ClassVar[dict] = {"privacy": ECDFPrivacy, "precision": HLPrecision,
                              "design": HLDesign, "execution": ECDFExecution}

    privacy: ECDFPrivacy = field(default_factory=ECDFPrivacy)
    precision: HLPrecision = field(default_factory=HLPrecision)
    design: HLDesign = field(default_factory=HLDesign)
    execution: ECDFExecution = field(default_factory=ECDFExecution)
    null: str = "calibrated"
    max_detectable: float = MAX_DETECTABLE

    def __post_init__(self) -> None:
        self._check_groups()
        check_choice(self.null, "null", NULLS)
        set_field(self, "max_detectable", _limit(self.max_detectable, "max_detectable"))
