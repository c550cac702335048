"""``ustat estimate KERNEL --protocol NAME``: the flags of a registry protocol to its spec.

The protocols, and which flag each takes, come from
:data:`ustat.baselines.registry.PROTOCOLS` at run time: every protocol declares its
options with their flags (:attr:`~ustat.baselines.registry.ProtocolInfo.options`).
A flag is passed only when the user gave it, and is refused with a message naming it
when the protocol does not take it (``--pairs`` outside ``bell-2pc``, ``--edges``
outside ``umpc``). The flags of a baseline become a :class:`ustat.specs.BaselineSpec`
(:func:`baseline_spec`; a mistake the spec finds is reported under its flag) that
:func:`ustat.baselines.run_protocol` runs on the executor of the flags; the report is
:mod:`ustat.reports.baselines`'s (protocol, parameters, DP and trust model, the spec, the
costs measured on the network).
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from ..baselines.spec import BaselineSpec
from ..reports.baselines import print_protocol
from .common import UsageError
from .specs import spec_error

if TYPE_CHECKING:
    from ..baselines.registry import ProtocolInfo
    from ..kernels import Kernel

__all__ = [
    "CHUNK_FLAGS",
    "baseline_spec",
    "check",
    "flag_rows",
    "print_protocol",
    "protocol_names",
]

#: executor flags that only a chunked program uses (U-MPC's): refused for the baselines
CHUNK_FLAGS = ("--workers", "--pool", "--scheduler")
#: flag -> attribute of the parsed arguments, where it is not the flag's name
_DEST = {"--committee-fail": "fail"}

_KERNELS_TEXT = {"any": "any kernel", "degree-2": "degree-2 kernels", "auc": "kernel auc only"}


def protocol_names() -> list:
    from ..baselines.registry import names

    return names()


def _dest(flag: str) -> str:
    return _DEST.get(flag, flag[2:].replace("-", "_"))


def _flags() -> dict:
    """flag -> (spec field, the protocols that take it, in table order), for every flag a
    protocol declares."""
    from ..baselines.registry import PROTOCOLS

    out: dict = {}
    for info in PROTOCOLS.values():
        for opt in info.options:
            if opt.flag is not None:
                out.setdefault(opt.flag, (opt.name, []))[1].append(info.name)
    return out


def flag_rows(info: ProtocolInfo) -> tuple:
    """``(flag, args attribute, spec field)`` of every flag protocol ``info`` takes, with
    ``--epsilon`` and ``--seed`` (for error messages under the flag's name)."""
    rows = [(opt.flag, _dest(opt.flag), opt.name) for opt in info.options if opt.flag]
    return tuple(rows) + (("--epsilon", "epsilon", "epsilon"), ("--seed", "seed", "seed"))


def _given(args: argparse.Namespace, flag: str) -> bool:
    return getattr(args, _dest(flag), None) is not None


def check(args: argparse.Namespace, kern: Kernel) -> ProtocolInfo | None:
    """The registry entry of --protocol (None for umpc), after checking the flags that need no
    data against it: the flags it does not take, the kernel, --bins, --processes."""
    from ..baselines import registry

    try:
        info = registry.get(args.protocol)
    except ValueError as exc:
        raise UsageError(f"--protocol: {exc}") from None
    flags = _flags()
    if info.name == "umpc":
        for flag, (_, takers) in flags.items():
            if "umpc" not in takers and _given(args, flag):
                raise UsageError(f"{flag} does not apply to --protocol umpc (it applies to "
                                 f"--protocol {', '.join(takers)})")
        return None
    umpc_only = [flag for flag, (_, takers) in flags.items() if takers == ["umpc"]]
    for flag in umpc_only + list(CHUNK_FLAGS):
        if _given(args, flag):
            raise UsageError(f"{flag} applies to --protocol umpc only, not {info.name!r}")
    if (info.kernels == "auc" and kern.name != "auc") or (info.kernels == "degree-2"
                                                          and kern.degree != 2):
        raise UsageError(f"--protocol {info.name} supports {_KERNELS_TEXT[info.kernels]}, not "
                         f"kernel {kern.name!r} (degree {kern.degree}); --protocol umpc supports "
                         f"every kernel")
    if args.bins is not None and not info.uses_bins:
        raise UsageError(f"--bins applies to the protocols that discretize their inputs "
                         f"({', '.join(registry.owners('bins'))}), not {info.name!r}")
    if args.bins is not None and args.bins < 2:
        raise UsageError(f"--bins must be >= 2, got {args.bins}")
    if args.processes is not None:
        if args.processes < 1:
            raise UsageError(f"--processes must be a positive integer, got {args.processes}")
        if args.evaluate:
            raise UsageError("--evaluate reads every record in the clear in one process: drop "
                             "it with --processes")
    return info


def _pairs(text: str) -> int | str:
    if text.strip().lower() == "all":
        return "all"
    try:
        return int(text)
    except ValueError:
        raise UsageError(f"--pairs must be a positive integer or 'all', got {text!r}") from None


def baseline_spec(args: argparse.Namespace, info: ProtocolInfo, kern: Kernel) -> BaselineSpec:
    """The :class:`BaselineSpec` of the flags for protocol ``info`` (a baseline): each option
    the user gave, refused naming its flag when the protocol does not take it."""
    given = {}
    for flag, (name, takers) in _flags().items():
        if not _given(args, flag) or takers == ["umpc"]:
            continue
        if info.name not in takers:
            others = [t for t in takers if t != "umpc"]
            raise UsageError(f"{flag} does not apply to --protocol {info.name} "
                             f"(it applies to {', '.join(others) or 'no protocol'})")
        value = getattr(args, _dest(flag))
        given[name] = _pairs(value) if flag == "--pairs" else value
    if given.get("delta") is not None and not _uses_delta(info.name, given):
        raise UsageError(f"--delta applies to --protocol bell-2pc with --pairs all and to "
                         f"fedauc-lap with --mechanism gaussian, not to this {info.name} run")
    try:
        return BaselineSpec.of(info.name, kern, epsilon=args.epsilon, seed=args.seed, **given)
    except (TypeError, ValueError) as exc:
        raise spec_error(exc, flag_rows(info)) from None


def _uses_delta(name: str, given: dict) -> bool:
    return ((name == "bell-2pc" and given.get("pairs") == "all")
            or (name == "fedauc-lap" and given.get("mechanism") == "gaussian"))
