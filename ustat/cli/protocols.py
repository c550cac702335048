"""``ustat estimate KERNEL --protocol NAME`` for the baseline protocols (:mod:`ustat.baselines`).

The protocol list comes from :data:`ustat.baselines.registry.PROTOCOLS` at
run time. Each option is passed to the protocol's runner only when the user
gave it, and refused with a message naming the flag when that protocol does
not take it (e.g. ``--pairs`` outside ``bell-2pc``, ``--edges`` outside
``umpc``). The output carries the protocol, its parameters, its DP model and
trust model and the costs measured on the network.
"""

from __future__ import annotations

import inspect
import math

from .common import UsageError, with_flag_names
from ..reports.common import (delta_text, epsilon_text, fmt, print_budget, print_classes,
                              print_evaluation, processes_text, public_meta, traffic_text,
                              wire_totals)

__all__ = ["protocol_names", "check", "runner", "planned_delta", "output", "print_protocol",
           "UMPC_ONLY", "BASELINE_OPTIONS"]

#: (flag, args attribute): options of the U-MPC protocol only.
UMPC_ONLY = (("--edges", "edges"), ("--sampler", "sampler"), ("--threat-model", "threat_model"),
             ("--max-colluders", "max_colluders"), ("--committee-size", "committee_size"),
             ("--honest-fraction", "honest_fraction"), ("--committee-fail", "fail"),
             ("--backend", "backend"), ("--workers", "workers"), ("--pool", "pool"),
             ("--scheduler", "scheduler"), ("--resolution", "resolution"),
             ("--confidence", "confidence"), ("--noise-method", "noise_method"))

#: (flag, args attribute, runner keyword): options of some baseline protocols.
BASELINE_OPTIONS = (("--pairs", "pairs", "pairs"), ("--delta", "delta", "delta"),
                    ("--mechanism", "mechanism", "mechanism"),
                    ("--noise-bits", "noise_bits", "noise_bits"), ("--engine", "engine", "engine"),
                    ("--aux-epsilon-fraction", "aux_epsilon_fraction", "aux_epsilon_fraction"),
                    ("--bits", "bits", "bits"), ("--frac-bits", "frac_bits", "frac_bits"))

_KERNELS_TEXT = {"any": "any kernel", "degree-2": "degree-2 kernels", "auc": "kernel auc only"}


def protocol_names() -> list:
    from ..baselines.registry import names

    return names()


def check(args, kern):
    """The registry entry of --protocol (None for umpc), after checking every option against it."""
    from ..baselines import registry

    try:
        info = registry.get(args.protocol)
    except ValueError as exc:
        raise UsageError(f"--protocol: {exc}") from None
    if info.name == "umpc":
        for flag, key, _ in (("--bins", "bins", None),) + BASELINE_OPTIONS[:5]:
            if getattr(args, key) is not None:
                raise UsageError(f"{flag} does not apply to --protocol umpc (it applies to "
                                 f"--protocol {', '.join(_owners(key))})")
        return None
    for flag, key in UMPC_ONLY:
        if getattr(args, key) is not None:
            raise UsageError(f"{flag} applies to --protocol umpc only, not {info.name!r}")
    if (info.kernels == "auc" and kern.name != "auc") or (info.kernels == "degree-2"
                                                          and kern.degree != 2):
        raise UsageError(f"--protocol {info.name} supports {_KERNELS_TEXT[info.kernels]}, not "
                         f"kernel {kern.name!r} (degree {kern.degree}); --protocol umpc supports "
                         f"every kernel")
    if args.bins is not None and not info.uses_bins:
        raise UsageError(f"--bins applies to the protocols that discretize their inputs "
                         f"({', '.join(_owners('bins'))}), not {info.name!r}")
    if args.bins is not None and args.bins < 2:
        raise UsageError(f"--bins must be >= 2, got {args.bins}")
    if args.processes is not None:
        if args.processes < 1:
            raise UsageError(f"--processes must be a positive integer, got {args.processes}")
        if args.evaluate:
            raise UsageError("--evaluate reads every record in the clear in one process: drop "
                             "it with --processes")
    return info


def _owners(key: str) -> list:
    from ..baselines.registry import PROTOCOLS

    if key == "bins":
        return [p.name for p in PROTOCOLS.values() if p.uses_bins]
    return [p.name for p in PROTOCOLS.values()
            if p.name != "umpc" and key in inspect.signature(p.runner).parameters]


def _pairs(text: str):
    if text.strip().lower() == "all":
        return "all"
    try:
        return int(text)
    except ValueError:
        raise UsageError(f"--pairs must be a positive integer or 'all', got {text!r}") from None


def _kwargs(args, info) -> dict:
    """The runner's keywords for the options the user gave (refused if it does not take one)."""
    accepted = inspect.signature(info.runner).parameters
    kwargs = {}
    for flag, key, kw in BASELINE_OPTIONS:
        value = getattr(args, key)
        if value is None:
            continue
        if kw not in accepted:
            raise UsageError(f"{flag} does not apply to --protocol {info.name} "
                             f"(it applies to {', '.join(_owners(kw)) or 'no protocol'})")
        kwargs[kw] = _pairs(value) if kw == "pairs" else value
    if kwargs.get("delta") is not None and not _uses_delta(info.name, kwargs):
        raise UsageError(f"--delta applies to --protocol bell-2pc with --pairs all and to "
                         f"fedauc-lap with --mechanism gaussian, not to this {info.name} run")
    return kwargs


def _uses_delta(name: str, kwargs: dict) -> bool:
    return ((name == "bell-2pc" and kwargs.get("pairs") == "all")
            or (name == "fedauc-lap" and kwargs.get("mechanism") == "gaussian"))


def _flags() -> dict:
    flags = {kw: flag for flag, _, kw in BASELINE_OPTIONS}
    flags["bins"] = "--bins"
    return flags


def runner(args, info, kern, X):
    """A callable running the protocol with the options the user gave."""
    from ..baselines import run_protocol

    kwargs = _kwargs(args, info)
    return with_flag_names(lambda: run_protocol(info.name, X, kern, epsilon=args.epsilon,
                                                bins=args.bins, seed=args.seed,
                                                evaluate=args.evaluate,
                                                processes=args.processes, **kwargs), _flags())


def planned_delta(args, info, kern, X) -> float:
    """The delta the run will spend (:func:`ustat.baselines.planned_delta`), before it runs."""
    from ..baselines import planned_delta as plan

    kwargs = _kwargs(args, info)
    return with_flag_names(lambda: plan(info.name, X, kern, epsilon=args.epsilon,
                                        bins=args.bins, **kwargs), _flags())()


def output(args, kern, res, meta, notes) -> dict:
    from ..baselines.registry import get

    info = get(res.protocol)
    out = res.to_dict()
    out.pop("communication", None)
    out.update({"description": info.description, "paper": info.paper, "data": public_meta(meta),
                "phases": res.communication.get("phases", {}), "warnings": []})
    out["notes"] = list(res.notes) + list(notes)
    if res.processes > 1:
        out["wire"] = wire_totals(res.process_costs, res.online_bits + res.offline_bits)
    if "classes" in meta:
        out["classes"] = meta["classes"]
    ev = out.get("evaluation")
    if ev:
        raw, enc = ev.get("statistic_complete"), ev.get("statistic_discretized")
        ev["exact_raw"], ev["exact_encoded"] = raw, enc
        ev["encoding_error"] = None if raw is None or enc is None else enc - raw
    return out


def print_protocol(res: dict):
    print(f"{res['statistic']} ({res['kernel']}) by {res['protocol']} = {res['estimate']:.6g}")
    eps = res["epsilon"]
    print(f"  privacy   : {epsilon_text(eps if isinstance(eps, str) else float(eps), None)}"
          + delta_text(res.get("delta")) + f" ({res['dp_model']} DP)")
    print(f"  protocol  : {res['description']}")
    print(f"  trust     : {res['trust']}")
    params = ", ".join(f"{k}={v}" for k, v in res["params"].items()
                       if isinstance(v, (int, float, str, bool)))
    if params:
        print(f"  parameters: {params}")
    print_classes(res)
    print(f"  data      : n = {res['n']}, {res['data']['source']}")
    print(f"  traffic   : {traffic_text(res)}")
    if res.get("processes"):
        print(f"  processes : {processes_text(res)}")
    print(f"  time      : {res['seconds']:.2f} s")
    print_budget(res)
    if res.get("evaluation"):
        binned = "bins" in res["params"]
        print_evaluation(res, encoded="the discretized values" if binned else "the encoded values")
        mse = res["evaluation"].get("mse_thm5")
        if isinstance(mse, (int, float)) and math.isfinite(mse):
            print(f"              Theorem 5's MSE at these data: {fmt(mse)}")
    for note in res["notes"]:
        print(f"  note      : {note}")
