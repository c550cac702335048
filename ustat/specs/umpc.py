"""The spec of a U-MPC run (Sinh-Ramon Protocol 3.1), one group per concern.

``UMPCSpec(kernel, privacy, precision, design, execution, confidence, tie_aware)``:

- :class:`Privacy`: epsilon, the threat model (``dis``: M_Dis, ``hf``: M_HF)
  and how the noise is drawn (``noise_method``: ``mpc`` one discrete Laplace
  sampled inside MPC, ``polya`` Polya shares; None: ``mpc`` where it serves),
  the collusion parameters of the noise (``max_colluders``,
  ``committee_size``, ``honest_fraction`` f_H, ``committee_fail``) and the
  class counts' share of epsilon (``aux_epsilon_fraction``, AUC and VUS), and
  ``check_inputs``: range-check every party's input on its shares before the
  edges (:mod:`ustat.umpc.input_check`; a party that skips its local check
  cannot push a kernel beyond its sensitivity), off by default in the
  simulator, on in deployments (``ustat deploy init``).
- :class:`Precision`: the ring and fixed-point bits (None: chosen per kernel,
  :mod:`ustat.umpc.precision`), the resolution comparisons must keep, and the
  public ``bounds`` of raw numeric columns.
- :class:`Design`: the sampling design of the incomplete U-statistic (the
  number of edges, the sampler).
- :class:`Execution`: how each edge computes (``backend``: ``dealer`` FSS
  gates and Beaver triples from a trusted dealer, ``gc`` garbled circuits
  with oblivious transfer), the chunk size (randomness is derived per chunk,
  so it fixes the release's bits), and the debug ``seed``.
- ``confidence``: the level of the released interval.
- ``tie_aware``: the data may hold ties (a kernel with an edge statistic for them, Kendall): a
  share of epsilon releases the fraction of untied pairs so that the interval is tight on
  tied data (:func:`ustat.umpc.release.choose_edge_fraction`); off by default, since it
  costs one more noisy sum (about twice the online traffic with noise sampled inside MPC)
  and about 11% more noise on the estimate, and without ties the interval is already right.

Where the run executes (this process, P local processes, the hosts of a
deployment, Dask) is the executor's business (:mod:`ustat.executors`), not
the spec's: a seeded spec releases the same bits wherever it runs.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Any, ClassVar

from .. import kernels as kernel_registry
from .base import (
    Spec,
    check_choice,
    check_epsilon,
    check_fraction,
    check_groups,
    check_int,
    check_positive_int,
    check_real,
    check_seed,
    name_kernel,
    set_field,
)

__all__ = [
    "BACKENDS",
    "DEFAULT_CHUNK",
    "DEFAULT_THREAT_MODEL",
    "NOISE_METHODS",
    "SAMPLERS",
    "THREAT_MODELS",
    "Design",
    "Execution",
    "Precision",
    "Privacy",
    "UMPCSpec",
]

THREAT_MODELS = ("dis", "hf")
DEFAULT_THREAT_MODEL = "dis"
NOISE_METHODS = ("mpc", "polya")
SAMPLERS = ("balanced", "uniform", "bernoulli", "all")
#: how a chunk computes f(x_e) (:mod:`ustat.umpc.chunk`)
BACKENDS = ("dealer", "gc")
#: edges per chunk by default (the unit of work; randomness is derived per chunk)
DEFAULT_CHUNK = 1 << 17

_EDGES = re.compile(r"\s*(all|\d+|(\d+(\.\d*)?|\.\d+)?n)\s*", re.I)


@dataclass(frozen=True)
class Privacy(Spec):
    """Epsilon, the threat model and how the noise is drawn (module docstring)."""

    GROUP: ClassVar[str] = "privacy"

    epsilon: float = 1.0
    threat_model: str = DEFAULT_THREAT_MODEL
    noise_method: str | None = None
    max_colluders: int | str | None = None      # an int, "half" or "all" (Polya noise)
    committee_size: int | None = None           # hf: the noise committee
    honest_fraction: float = 0.5                # hf: f_H
    committee_fail: float = 2.0 ** -40          # hf: P(fewer honest members than assumed)
    aux_epsilon_fraction: float | None = None   # class counts' share (None: chosen)
    #: range-check every input on its shares before the edges (ustat.umpc.input_check):
    #: off by default (the simulator's seeded releases keep their bits), on in deployments
    check_inputs: bool = False

    def __post_init__(self) -> None:
        set_field(self, "epsilon", check_epsilon(self.epsilon))
        if type(self.check_inputs).__name__ not in ("bool", "bool_"):
            raise TypeError(f"check_inputs must be True or False, got {self.check_inputs!r}")
        set_field(self, "check_inputs", bool(self.check_inputs))
        check_choice(self.threat_model, "threat_model", THREAT_MODELS)
        if self.noise_method is not None and self.noise_method not in NOISE_METHODS:
            raise ValueError(f"noise_method must be 'mpc' or 'polya', got {self.noise_method!r}")
        mc = self.max_colluders
        if mc is not None and mc not in ("half", "all"):
            set_field(self, "max_colluders", check_int(mc, "max_colluders", lo=0))
        set_field(self, "committee_size", check_int(self.committee_size, "committee_size", lo=1,
                                               allow_none=True))
        set_field(self, "honest_fraction", check_real(self.honest_fraction, "honest_fraction"))
        set_field(self, "committee_fail", check_real(self.committee_fail, "committee_fail"))
        set_field(self, "aux_epsilon_fraction", check_fraction(self.aux_epsilon_fraction,
                                                          "aux_epsilon_fraction",
                                                          allow_none=True))


@dataclass(frozen=True)
class Precision(Spec):
    """Ring and fixed-point bits (None: chosen per kernel), resolution, public bounds."""

    GROUP: ClassVar[str] = "precision"

    bits: int | None = None
    frac_bits: int | None = None
    input_frac_bits: int | None = None
    resolution: float | None = None
    #: public (lo, hi) per column of raw records (None, or an empty pair, for a categorical
    #: column); None: the records are given in [0, 1] (numeric) and as integer codes
    bounds: tuple | None = None

    def __post_init__(self) -> None:
        for name in ("bits", "frac_bits", "input_frac_bits"):
            value = getattr(self, name)
            if value is not None and (isinstance(value, bool) or not isinstance(value, int)):
                raise TypeError(f"{name} must be an integer, got {value!r}")
        r = self.resolution
        if r is not None and (isinstance(r, bool) or not isinstance(r, (int, float))
                              or not math.isfinite(r) or r <= 0):
            raise ValueError(f"resolution must be a positive number, got {r!r}")
        if self.bounds is not None:
            set_field(self, "bounds", tuple(None if b is None or (isinstance(b, (list, tuple))
                                                             and not b) else _pair(b, i)
                                       for i, b in enumerate(self.bounds)))


@dataclass(frozen=True)
class Design(Spec):
    """The sampling design: how many edges (``"2n"``, ``"<c>n"``, an int, ``"all"``) and how
    they are drawn (``balanced``: BalancedSamp, ``uniform``, ``bernoulli``, ``all``)."""

    GROUP: ClassVar[str] = "design"

    edges: str | int = "2n"
    sampler: str = "balanced"

    def __post_init__(self) -> None:
        e = self.edges
        if isinstance(e, bool) or not isinstance(e, (str, int)):
            raise TypeError(f"edges must be like '2n', an integer or 'all', got {e!r}")
        if isinstance(e, str) and not _EDGES.fullmatch(e):
            raise ValueError(f"edges must be like '2n', an integer or 'all', got {e!r}")
        if isinstance(e, int) and e < 1:
            raise ValueError(f"edges must be >= 1, got {e}")
        check_choice(self.sampler, "sampler", SAMPLERS)


@dataclass(frozen=True)
class Execution(Spec):
    """How each edge computes (``backend``), the chunk size, the debug seed."""

    GROUP: ClassVar[str] = "execution"

    backend: str = "dealer"
    chunk_size: int = DEFAULT_CHUNK
    seed: int | str | None = None               # reproducible, INSECURE randomness

    def __post_init__(self) -> None:
        if self.backend not in BACKENDS:
            raise ValueError(f"backend must be one of {sorted(BACKENDS)}, got {self.backend!r}")
        check_positive_int(self.chunk_size, "chunk_size")
        set_field(self, "seed", check_seed(self.seed))


@dataclass(frozen=True)
class UMPCSpec(Spec):
    """What a U-MPC run computes (module docstring); ``kernel`` a registered name or a
    :class:`ustat.kernels.Kernel`."""

    GROUPS: ClassVar[dict] = {"privacy": Privacy, "precision": Precision, "design": Design,
                              "execution": Execution}

    kernel: Any
    privacy: Privacy = field(default_factory=Privacy)
    precision: Precision = field(default_factory=Precision)
    design: Design = field(default_factory=Design)
    execution: Execution = field(default_factory=Execution)
    confidence: float = 0.95
    tie_aware: bool = False

    def __post_init__(self) -> None:
        kern = kernel_registry.get(self.kernel)
        name_kernel(self, kern)
        check_groups(self)
        c = self.confidence
        if isinstance(c, bool) or not isinstance(c, (int, float)) or not 0 < c < 1:
            raise ValueError(f"confidence must be a level in (0, 1), e.g. 0.95, got {c!r}")
        set_field(self, "confidence", float(c))
        if type(self.tie_aware).__name__ not in ("bool", "bool_"):     # bool or numpy's
            raise TypeError(f"tie_aware must be True or False, got {self.tie_aware!r}")
        set_field(self, "tie_aware", bool(self.tie_aware))
        b = self.precision.bounds
        if b is not None and len(b) != kern.columns:
            raise ValueError(f"bounds must give one (lo, hi) per column ({kern.columns}), "
                             f"got {len(b)}")

    @property
    def kern(self) -> kernel_registry.Kernel:
        """The kernel object."""
        return kernel_registry.get(self.kernel)

    def to_dict(self) -> dict:
        out = super().to_dict()
        out["kernel"] = self.kern.name
        return out




def _pair(b: Any, i: int) -> tuple:
    try:
        lo, hi = (float(v) for v in b)
    except (TypeError, ValueError):
        raise ValueError(f"bounds[{i}] must be a (lo, hi) pair, got {b!r}") from None
    if not (math.isfinite(lo) and math.isfinite(hi) and hi > lo):
        raise ValueError(f"bounds[{i}] must be finite with hi > lo, got {b!r}")
    return (lo, hi)


