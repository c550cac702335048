"""The protocols of ``ustat estimate --protocol NAME`` and what each declares: ``PROTOCOLS``.

Names: ``umpc`` (:func:`ustat.umpc.run_umpc`, Sinh-Ramon Protocol 3.1, through
:mod:`.umpc_protocol`), ``bell-ldp``, ``bell-auc``, ``ghazi``, ``ghazi-sm``,
``fedauc-rr``, ``fedauc-lap``, ``bell-2pc`` (Bell et al.'s 2PC protocol, Section 5:
subsampled pairs or all pairs, garbled circuits, :mod:`.bell_2pc`). More protocols
can be added with :func:`register`.

A :class:`ProtocolInfo` row says what a protocol is (description, paper, DP model,
trust, kernels) and declares what it takes: its options (:class:`~.options.Option`:
the spec field, default, check, command-line flag, help), the rules between them
(``check``), the delta it will spend (``planned_delta``) and what a run across
processes must know (:class:`AcrossProcesses`). :class:`ustat.specs.BaselineSpec`
reads the options to fill defaults, check values and refuse what a protocol does not
take; the command line reads them to know which flag applies to which protocol.

A run (:func:`ustat.baselines.run_protocol`) is one SPMD program per protocol
(:mod:`.protocol`) that calls the row's ``runner`` in every process, or the row's own
``program`` (``umpc``: U-MPC's chunked program).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from .. import kernels as kernel_registry
from ._common import check_auc_kernel, check_kernel_degree2
from .options import Option

__all__ = [
    "DEFAULT_BINS",
    "PROTOCOLS",
    "AcrossProcesses",
    "ProtocolInfo",
    "get",
    "names",
    "owners",
    "register",
]

DEFAULT_BINS = 64


@dataclass(frozen=True)
class AcrossProcesses:
    """What a run of a protocol across processes needs to know (:mod:`.protocol`).

    ``roles``: the session's roles beyond the dealer and the aggregator (e.g. a shuffler);
    ``public_columns``: columns of the records the protocol treats as public (every
    process holds them, e.g. bell-auc's labels); ``refuse(records, spec) -> str | None``:
    why this run cannot spread over processes (None: it can); ``from_records``: theory
    entries computed from every record, left out of a run across processes with a note.
    """

    roles: tuple = ()
    public_columns: tuple = ()
    refuse: Callable[[Any, Any], str | None] | None = None
    from_records: tuple = ()


@dataclass(frozen=True)
class ProtocolInfo:
    """One row of :data:`PROTOCOLS` (module docstring).

    ``runner(records, spec, *, session=None, evaluate=False, runtime=None)``: the protocol
    in one process, returning a :class:`~.result.ProtocolResult`; ``kernels``: ``"any"``
    (every degree), ``"degree-2"`` or ``"auc"``; ``options``: the
    :class:`~.options.Option` s it takes; ``planned_delta(records, spec) -> float``: the
    delta the run will report, from its public planning (None: pure epsilon-DP, delta 0);
    ``check(spec)``: rules between its options (raising ValueError naming the field);
    ``program(records, spec, *, session, evaluate)``: a :class:`ustat.executors.Program`
    of its own instead of the runner's (None: :func:`.protocol.protocol_program`'s).
    """

    name: str
    runner: Callable
    description: str
    dp_model: str
    trust: str
    kernels: str
    paper: str
    options: tuple = ()
    planned_delta: Callable | None = None
    check: Callable | None = None
    processes: AcrossProcesses = field(default_factory=AcrossProcesses)
    program: Callable | None = None

    @property
    def uses_bins(self) -> bool:
        """Whether the protocol discretizes its inputs (it takes ``bins``)."""
        return any(opt.name == "bins" for opt in self.options)

    def option(self, name: str) -> Option | None:
        """The declared :class:`~.options.Option` ``name``, or None."""
        return next((opt for opt in self.options if opt.name == name), None)

    def check_kernel(self, kernel: Any) -> kernel_registry.Kernel:
        """The kernel, refused (ValueError) unless the protocol computes it."""
        if self.kernels == "degree-2":
            return check_kernel_degree2(kernel, self.name)
        if self.kernels == "auc":
            return check_auc_kernel(kernel, self.name)
        return kernel_registry.get(kernel)


PROTOCOLS: dict[str, ProtocolInfo] = {}


def register(info: ProtocolInfo, replace: bool = False) -> ProtocolInfo:
    """Add a protocol (e.g. ``bell-2pc``) to :data:`PROTOCOLS`."""
    if not isinstance(info, ProtocolInfo):
        raise TypeError(f"register needs a ProtocolInfo, got {type(info).__name__}")
    if info.name in PROTOCOLS and not replace:
        raise ValueError(f"a protocol named {info.name!r} is already registered")
    PROTOCOLS[info.name] = info
    return info


def names() -> list:
    return list(PROTOCOLS)


def get(name: str) -> ProtocolInfo:
    try:
        return PROTOCOLS[name]
    except (KeyError, TypeError):
        raise ValueError(f"unknown protocol {name!r}; available: {', '.join(PROTOCOLS)}") from None


def owners(option: str, *, umpc: bool = False) -> list:
    """The protocols that take ``option``, in table order (``umpc`` only when asked)."""
    return [p.name for p in PROTOCOLS.values()
            if (umpc or p.name != "umpc") and p.option(option) is not None]


def _builtin():
    from ..umpc.privacy import UMPC_TRUST
    from . import bell_2pc, bell_auc, bell_ldp, fedauc, ghazi, ghazi_shuffle, umpc_protocol

    rows = [
        ProtocolInfo("umpc", umpc_protocol.run_umpc_protocol,
                     "U-MPC (Sinh-Ramon Protocol 3.1): MPC over a sampled hypergraph of edges, "
                     "distributed discrete Laplace noise, central DP; any degree",
                     "central", UMPC_TRUST["dis"], "any",
                     "Sinh & Ramon, Federated U-statistics of higher degree, Protocol 3.1",
                     umpc_protocol.OPTIONS, umpc_protocol.planned_delta, umpc_protocol.check_spec,
                     program=umpc_protocol.program),
        ProtocolInfo("bell-ldp", bell_ldp.run_bell_ldp,
                     "Bell et al. Algorithm 1: t bins per column, T-ary randomized response, "
                     "unbiased estimate from the noisy histogram; any degree-2 kernel",
                     "local", bell_ldp.TRUST, "degree-2",
                     "Bell, Bellet, Gascon, Kulkarni, AISTATS 2020, Algorithm 1",
                     bell_ldp.OPTIONS),
        ProtocolInfo("bell-auc", bell_auc.run_bell_auc,
                     "Bell et al. Section 4: AUC from hierarchical histograms, one-bit Hadamard "
                     "frequency oracle, recursive UAUC with threshold; labels public",
                     "local", bell_auc.TRUST, "auc",
                     "Bell, Bellet, Gascon, Kulkarni, AISTATS 2020, Section 4 and B.2",
                     bell_auc.OPTIONS, processes=AcrossProcesses(public_columns=(1,))),
        ProtocolInfo("ghazi", ghazi.run_ghazi,
                     "Ghazi et al. 2024: kernel matrix factored A ~ L^T R (JL, dimension d), "
                     "each party sends VRand(L e_x), VRand(R e_x); any degree-2 kernel",
                     "local", ghazi.TRUST, "degree-2",
                     "Ghazi, Kamath, Kumar, Manurangsi, Sealfon, NeurIPS; Sinh-Ramon App. D",
                     ghazi.OPTIONS),
        ProtocolInfo("ghazi-sm", ghazi_shuffle.run_ghazi_sm,
                     "GhaziSM: Ghazi et al.'s factorization with the vector sums computed in the "
                     "multi-message shuffle model (Balle et al. 2020), central DP",
                     "shuffle", ghazi_shuffle.TRUST, "degree-2",
                     "Ghazi et al.; Balle, Bell, Gascon, Nissim CCS 2020; Sinh-Ramon Sect. 5",
                     ghazi_shuffle.OPTIONS, ghazi_shuffle.planned_delta,
                     processes=AcrossProcesses(roles=("shuffler",),
                                               refuse=ghazi_shuffle.across_processes)),
        ProtocolInfo("fedauc-rr", fedauc.run_fedauc_rr,
                     "FedAUC_RR (Sun et al. Algorithms 1-3): labels flipped by randomized "
                     "response, AUC from ranks, debiased; scores public, label-DP",
                     "label-local", fedauc.TRUST_RR, "auc",
                     "Sun et al., label-DP AUC in vertical FL, Algorithms 1-3",
                     fedauc.OPTIONS_RR,
                     processes=AcrossProcesses(refuse=fedauc.across_processes)),
        ProtocolInfo("fedauc-lap", fedauc.run_fedauc_lap,
                     "FedAUC_Lap (Sun et al. Algorithm 4, Section 5.3): discrete Laplace or "
                     "Gaussian noise on the label statistics, adaptive budget allocation",
                     "label-local", fedauc.TRUST_LAP, "auc",
                     "Sun et al., label-DP AUC in vertical FL, Algorithm 4 and Section 5.3",
                     fedauc.OPTIONS_LAP, fedauc.planned_delta, fedauc.check_lap,
                     processes=AcrossProcesses(refuse=fedauc.across_processes)),
        ProtocolInfo("bell-2pc", bell_2pc.run_bell_2pc,
                     "Bell et al. Section 5 / Theorem 5: P pairs per user (or all pairs), each "
                     "pair computes f(x_i, x_j) + eta by Yao garbled circuits with the noise drawn "
                     "in the circuit; kendall, gini, auc, duplicate, renyi2, rand",
                     "2pc-cdp", bell_2pc.TRUST, "degree-2",
                     "Bell, Bellet, Gascon, Kulkarni, AISTATS 2020, Section 5, Theorem 5",
                     bell_2pc.OPTIONS, bell_2pc.planned_delta, bell_2pc.check_spec,
                     processes=AcrossProcesses(refuse=bell_2pc.across_processes)),
    ]
    for info in rows:
        register(info)


_builtin()
