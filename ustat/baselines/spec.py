"""The spec of a run of a protocol of :mod:`ustat.baselines`, one group per concern.

``BaselineSpec(protocol, kernel, privacy, encoding, options, umpc, execution)``:

- ``protocol``: a name of :data:`ustat.baselines.registry.PROTOCOLS` (``bell-ldp``,
  ``bell-auc``, ``ghazi``, ``ghazi-sm``, ``fedauc-rr``, ``fedauc-lap``, ``bell-2pc``, or
  ``umpc``: U-MPC through the same interface); ``kernel``: a registered name or a
  :class:`ustat.kernels.Kernel` the protocol computes (degree 2, or the AUC only).
- :class:`Privacy`: epsilon, the ``delta`` of the protocols that spend one by choice
  (bell-2pc's advanced composition over all pairs, fedauc-lap's Gaussian noise), the
  auxiliary sums' share of epsilon (``aux_epsilon_fraction``: the AUC's positive count)
  and GhaziSM's share for a non-constant diagonal (``diag_epsilon_fraction``).
- :class:`Encoding`: how a record becomes a message: ``bins`` per numeric column and the
  ``levels`` of categorical columns of the protocols that discretize, the ring ``bits``
  and ``frac_bits`` of the fixed-point encoding.
- :class:`Options`: each baseline's own options (bell-auc's threshold and ties; the
  factorization of ghazi and ghazi-sm; GhaziSM's shuffle; FedAUC's clients and label noise;
  bell-2pc's pairs, noise bits and engine).
- :class:`UMPCOptions`: what U-MPC takes beyond those (threat model, noise, sampling
  design, backend, ...): the ``umpc`` entry runs :func:`ustat.umpc.run_umpc` on the
  :class:`~ustat.specs.UMPCSpec` they make (:func:`ustat.baselines.umpc_protocol.umpc_spec`).
- :class:`Execution`: the debug ``seed``.

Which fields a protocol takes, their defaults and checks are the protocol's declaration
(:attr:`ustat.baselines.registry.ProtocolInfo.options`: name, default, check, command-line
flag, help), read here: a field left None takes the protocol's default (None where the
protocol chooses, e.g. GhaziSM's number of messages), every value is checked by the
protocol's check (the error names the field), and a field the protocol does not take is
refused, naming the protocols that take it (``pairs does not apply to protocol
'bell-ldp' (it applies to bell-2pc)``). Rules between options (bell-2pc's delta with all
pairs, FedAUC_Lap's allocation parameters) are the protocol's ``check``. The spec stored
is the resolved one: ``to_dict`` lists the fields the protocol takes (a result records it
as ``spec``), and ``BaselineSpec.from_dict`` reads it back. A resolved spec carries its
protocol's defaults: ``replace(protocol=...)`` to a protocol that does not take them is
refused; build a new spec instead.

Where the run executes is the executor's business (:mod:`ustat.executors`): a seeded spec
releases the same bits in this process and in P local processes.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any, ClassVar

from .. import kernels as kernel_registry
from ..specs.base import Spec, check_epsilon, check_groups, check_seed, name_kernel, set_field
from ..specs.umpc import Precision

__all__ = [
    "UNIVERSAL",
    "BaselineSpec",
    "Encoding",
    "Execution",
    "Options",
    "Privacy",
    "UMPCOptions",
]

#: fields every protocol takes (not declared per protocol)
UNIVERSAL = ("epsilon", "seed")


@dataclass(frozen=True)
class Privacy(Spec):
    """Epsilon, delta where a protocol spends one by choice, the shares of epsilon."""

    GROUP: ClassVar[str] = "privacy"

    epsilon: float = 1.0
    delta: float | None = None                  # bell-2pc (all pairs), fedauc-lap (gaussian)
    aux_epsilon_fraction: float | None = None   # the auxiliary sums' share (auc)
    diag_epsilon_fraction: float | None = None  # ghazi-sm: a non-constant diagonal's share

    def __post_init__(self) -> None:
        set_field(self, "epsilon", check_epsilon(self.epsilon))


@dataclass(frozen=True)
class Encoding(Spec):
    """Bins and categorical levels of the discretizing protocols, ring and fractional bits."""

    GROUP: ClassVar[str] = "encoding"

    bins: int | None = None
    #: levels of the categorical columns: an int for all, or (column, count) pairs
    levels: int | tuple | None = None
    bits: int | None = None
    frac_bits: int | None = None


@dataclass(frozen=True)
class Options(Spec):
    """Each baseline's own options (None: not taken, or the protocol's choice)."""

    GROUP: ClassVar[str] = "options"

    # bell-auc
    threshold: float | None = None              # a > 1 (None: minimizes Theorem 3's bound)
    ties: str | None = None                     # "half" or "zero"
    # ghazi, ghazi-sm
    dim: int | None = None                      # JL dimension d (None: the paper's)
    sparsity: int | None = None
    factorization: str | None = None            # "jl" or "exact"
    # ghazi-sm
    messages: int | None = None                 # per value (None: the sizing heuristic)
    sigma: int | None = None
    materialize_limit: int | None = None
    # fedauc-rr, fedauc-lap
    clients: int | None = None                  # None: every record its own client
    partition: str | None = None                # "iid" or "noniid"
    # fedauc-lap
    mechanism: str | None = None                # "laplace" or "gaussian"
    allocation: str | None = None
    alpha: float | None = None
    beta: float | None = None
    exact_counts: bool | None = None
    grid_bits: int | None = None
    # bell-2pc
    pairs: int | str | None = None              # pairs per user, or "all"
    noise_bits: int | None = None
    engine: str | None = None                   # "gc" or "plain"


@dataclass(frozen=True)
class UMPCOptions(Spec):
    """U-MPC's options beyond privacy, encoding and seed (:class:`~ustat.specs.UMPCSpec`'s
    fields of the same names; the ``umpc`` entry only)."""

    GROUP: ClassVar[str] = "umpc"

    threat_model: str | None = None
    noise_method: str | None = None
    max_colluders: int | str | None = None
    committee_size: int | None = None
    honest_fraction: float | None = None
    committee_fail: float | None = None
    check_inputs: bool | None = None
    input_frac_bits: int | None = None
    resolution: float | None = None
    bounds: tuple | None = None
    edges: str | int | None = None
    sampler: str | None = None
    backend: str | None = None
    chunk_size: int | None = None
    confidence: float | None = None
    tie_aware: bool | None = None

    def __post_init__(self) -> None:
        if self.bounds is not None:             # U-MPC's normalization (errors name bounds[i])
            set_field(self, "bounds", Precision(bounds=self.bounds).bounds)


@dataclass(frozen=True)
class Execution(Spec):
    """The debug seed (reproducible, INSECURE randomness)."""

    GROUP: ClassVar[str] = "execution"

    seed: int | str | None = None

    def __post_init__(self) -> None:
        set_field(self, "seed", check_seed(self.seed))


@dataclass(frozen=True)
class BaselineSpec(Spec):
    """What a run of protocol ``protocol`` computes (module docstring), e.g.
    ``BaselineSpec.of("bell-2pc", "kendall", epsilon=1.0, bins=16, pairs="all")``."""

    GROUPS: ClassVar[dict] = {"privacy": Privacy, "encoding": Encoding, "options": Options,
                              "umpc": UMPCOptions, "execution": Execution}

    protocol: str
    kernel: Any
    privacy: Privacy = field(default_factory=Privacy)
    encoding: Encoding = field(default_factory=Encoding)
    options: Options = field(default_factory=Options)
    umpc: UMPCOptions = field(default_factory=UMPCOptions)
    execution: Execution = field(default_factory=Execution)

    def __post_init__(self) -> None:
        from .registry import get, owners  # the protocols' declarations

        if not isinstance(self.protocol, str):
            raise TypeError(f"protocol must be a protocol's name, got {self.protocol!r}")
        info = get(self.protocol)
        name_kernel(self, info.check_kernel(self.kernel))
        check_groups(self)
        declared = {opt.name: opt for opt in info.options}
        for name in self.GROUPS:
            group = getattr(self, name)
            resolved = {}
            for f in dataclasses.fields(group):
                if f.name in UNIVERSAL:
                    continue
                value = getattr(group, f.name)
                opt = declared.get(f.name)
                if opt is None:
                    if value is not None:
                        takers = ", ".join(owners(f.name)) or "no protocol"
                        raise ValueError(f"{f.name} does not apply to protocol "
                                         f"{self.protocol!r} (it applies to {takers})")
                    continue
                value = opt.default if value is None else value
                resolved[f.name] = value if value is None or opt.check is None \
                    else opt.check(value)
            if resolved:
                set_field(self, name, dataclasses.replace(group, **resolved))
        if info.check is not None:
            info.check(self)

    @property
    def kern(self) -> kernel_registry.Kernel:
        """The kernel object."""
        return kernel_registry.get(self.kernel)

    def takes(self) -> tuple:
        """The fields of the groups this spec's protocol takes (its declared options and
        :data:`UNIVERSAL`)."""
        from .registry import get

        return UNIVERSAL + tuple(opt.name for opt in get(self.protocol).options)

    def to_dict(self) -> dict:
        """protocol, kernel (by name) and, per group, the fields the protocol takes (a group
        it takes nothing of is left out; :meth:`from_dict` fills the rest with None)."""
        taken = set(self.takes())
        out: dict = {"protocol": self.protocol, "kernel": self.kern.name}
        for name in self.GROUPS:
            values = {k: v for k, v in getattr(self, name).to_dict().items() if k in taken}
            if values:
                out[name] = values
        return out

    def describe(self) -> str:
        """One line for protocol and kernel, then one per group the protocol takes from."""
        d = self.to_dict()
        lines = [f"BaselineSpec(protocol={d['protocol']}, kernel={d['kernel']})"]
        for name in self.GROUPS:
            if name in d:
                group = getattr(self, name)
                text = ", ".join(f"{k}={_text(getattr(group, k))}" for k in d[name])
                lines.append(f"  {name:<10}: {text}")
        return "\n".join(lines)


def _text(value: Any) -> str:
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e15:
        return f"{value:g}"
    return str(value)


