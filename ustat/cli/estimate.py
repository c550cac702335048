"""``ustat estimate KERNEL``: load the records, charge the budget, run the chosen protocol.

``--protocol umpc`` (default) runs :func:`ustat.umpc.run_umpc` with the
engine, precision and collusion options; every other protocol runs through
:func:`ustat.baselines.run_protocol` (:mod:`.protocols`). Options that
``run_umpc`` of this build does not accept yet are refused with a message
(never silently dropped); options are passed only when the user gave them.
"""

from __future__ import annotations

import inspect
import math

from .budget import check_options
from .common import (UsageError, check_epsilon_option, progress, require_extra, warn,
                     with_flag_names)
from .records import load_records

__all__ = ["cmd_estimate", "edges_option", "umpc_kwargs"]

#: (flag, run_umpc keyword): passed only when given on the command line.
UMPC_OPTIONS = (
    ("--max-colluders", "max_colluders"), ("--committee-size", "committee_size"),
    ("--backend", "backend"), ("--workers", "workers"), ("--pool", "pool"),
    ("--scheduler", "scheduler"), ("--bits", "bits"), ("--frac-bits", "frac_bits"),
    ("--resolution", "resolution"), ("--confidence", "confidence"),
    ("--processes", "processes"), ("--noise-method", "noise_method"),
)


def edges_option(args, n: int, k: int, notes: list) -> tuple:
    """(edges, sampler): a relative count like 2n is capped at C(n, k) with a note."""
    text = args.edges.strip().lower()
    if text == "all":
        return "all", "all"
    total = math.comb(n, k)
    if text.endswith("n"):
        try:
            want = float(text[:-1] or "1") * n
        except ValueError:
            return args.edges, args.sampler          # run_umpc names the mistake
        if math.isfinite(want) and round(want) > total:
            notes.append(f"--edges {args.edges} asks for {int(round(want))} edges but only "
                         f"C({n}, {k}) = {total} distinct ones exist: all {total} used")
            return "all", "all"
    return args.edges, args.sampler


def _check_values(args):
    """Range checks of the engine and precision options, naming the flag."""
    checks = (("workers", 1, "--workers must be >= 1"), ("bits", 2, "--bits must be >= 2"),
              ("frac_bits", 0, "--frac-bits must be >= 0"))
    for key, low, msg in checks:
        v = getattr(args, key)
        if v is not None and v < low:
            raise UsageError(f"{msg}, got {v}")
    if args.bits is not None and args.frac_bits is not None and args.frac_bits >= args.bits:
        raise UsageError(f"--frac-bits ({args.frac_bits}) must be below --bits ({args.bits})")
    r = args.resolution
    if r is not None and not (math.isfinite(r) and r > 0):
        raise UsageError(f"--resolution must be a positive number (raw data units), got {r}")
    c = args.confidence
    if c is not None and not 0 < c < 1:
        raise UsageError(f"--confidence must be in (0, 1), e.g. 0.95, got {c}")
    if args.pool is not None and args.workers == 1:
        raise UsageError("--pool applies with --workers > 1")
    if args.scheduler is not None:
        require_extra("--scheduler", ("dask", "distributed"), "dask")
    p = getattr(args, "processes", None)
    if p is not None:
        if p < 1:
            raise UsageError(f"--processes must be a positive integer, got {p}")
        for flag, key in (("--workers", "workers"), ("--scheduler", "scheduler"),
                          ("--evaluate", "evaluate")):
            if getattr(args, key, None) not in (None, False):
                raise UsageError(f"--processes runs each process on one core: drop {flag}")


def umpc_kwargs(args) -> dict:
    """Options for run_umpc given on the command line, refused if this build cannot take them."""
    from .. import umpc

    _check_values(args)
    accepted = inspect.signature(umpc.run_umpc).parameters
    out = {"fail": args.fail, "f_h": args.honest_fraction}
    for flag, key in UMPC_OPTIONS:
        value = getattr(args, key)
        if value is None or (key == "max_colluders" and value == "half"):   # the noise default
            continue
        if key not in accepted:
            raise UsageError(f"{flag} needs ustat.umpc.run_umpc({key}=...), which this build does "
                             f"not have yet; run without {flag} (see `ustat estimate --help`)")
        out[key] = value
    return out


#: Defaults of the U-MPC options (None on the parser, so that a baseline protocol can refuse them;
#: aux_epsilon_fraction None: chosen by run_umpc from public parameters).
UMPC_DEFAULTS = {"edges": "2n", "sampler": "balanced", "threat_model": "dis",
                 "honest_fraction": 0.5, "fail": 2.0 ** -40, "aux_epsilon_fraction": None}


def _umpc_defaults(args):
    from ..umpc.chunk import BACKENDS

    for key, value in UMPC_DEFAULTS.items():
        if getattr(args, key) is None:
            setattr(args, key, value)
    if args.backend is not None and args.backend not in BACKENDS:
        raise UsageError(f"--backend must be one of {', '.join(sorted(BACKENDS))} in this build, "
                         f"got {args.backend!r}")


def _records_for_umpc(args, X, raw, meta, kwargs) -> tuple:
    """(records, kwargs): raw values with bounds= when run_umpc encodes them itself (inputs
    exact to the resolution in raw units), else the records in [0, 1] and --resolution
    converted into those units (the strictest column)."""
    from .. import umpc

    accepted = inspect.signature(umpc.run_umpc).parameters
    if raw is not None and "bounds" in accepted:
        return raw[0], {**kwargs, "bounds": raw[1]}
    if kwargs.get("resolution") is not None and meta.get("bounds"):
        widest = max(hi - lo for lo, hi in meta["bounds"])
        if math.isfinite(widest) and widest > 0:
            kwargs = {**kwargs, "resolution": kwargs["resolution"] / widest}
    return X, kwargs


def _run_umpc(args, kern, X, raw, meta, notes, **extra):
    """A callable that runs U-MPC as the options say (``extra``: e.g. ``runtime=`` of a
    process of a deployment, :mod:`ustat.deploy`)."""
    from .. import umpc

    edges, sampler = edges_option(args, X.shape[0], kern.degree, notes)
    records, kwargs = _records_for_umpc(args, X, raw, meta, umpc_kwargs(args))
    flags = {key: flag for flag, key in UMPC_OPTIONS}
    flags.update(edges="--edges", sampler="--sampler", epsilon="--epsilon",
                 aux_epsilon_fraction="--aux-epsilon-fraction")
    return with_flag_names(lambda: umpc.run_umpc(
        records, kern, epsilon=args.epsilon, edges=edges, sampler=sampler,
        threat_model=args.threat_model, seed=args.seed,
        aux_epsilon_fraction=args.aux_epsilon_fraction, evaluate=args.evaluate,
        progress=not args.no_progress, **kwargs, **extra), flags)


def _check_kernel_flags(args, kern):
    """Options that this kernel would ignore are refused (never silently dropped)."""
    if args.aux_epsilon_fraction is not None and kern.aux is None:
        owners = ", ".join(k for k in _aux_kernels())
        raise UsageError(f"--aux-epsilon-fraction applies to kernels with class counts "
                         f"({owners}), not {kern.name!r}")


def _aux_kernels() -> list:
    from .. import kernels

    return [name for name in kernels.names() if kernels.get(name).aux is not None]


def _planned_delta(args, info, kern, X) -> float:
    """The delta this run will spend, from its public parameters (charged before it runs)."""
    if info is None:
        from ..umpc.privacy import delta_spent

        return delta_spent(kern, X.shape[0], args.epsilon, threat_model=args.threat_model,
                           committee_size=args.committee_size, fail=args.fail,
                           f_h=args.honest_fraction, noise_method=args.noise_method,
                           backend=args.backend or "dealer",
                           max_colluders=None if args.max_colluders == "half" else
                           args.max_colluders)
    from . import protocols

    return protocols.planned_delta(args, info, kern, X)


def cmd_estimate(args) -> dict:
    from .. import kernels
    from . import output, protocols

    try:
        kern = kernels.get(args.kernel)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    check_epsilon_option(args.epsilon)
    check_options(args)
    info = protocols.check(args, kern)
    _check_kernel_flags(args, kern)
    if info is None:
        _umpc_defaults(args)
    X, warnings, meta, raw = load_records(args, kern)
    notes: list = []
    if info is None:
        run = _run_umpc(args, kern, X, raw, meta, notes)
    else:
        run = protocols.runner(args, info, kern, X)
    delta = _planned_delta(args, info, kern, X)
    for w in warnings:
        warn(w)
    if math.isinf(args.epsilon):
        warn("--epsilon inf: no noise is added; the release is NOT differentially private "
             "(evaluation only)")
    if args.seed is not None:
        warn("--seed given: randomness is reproducible and NOT secure; use only for testing")
    if meta.get("columns"):
        args.charge.reserve(meta["columns"], epsilon=args.epsilon, delta=delta, label=kern.name,
                            details={"kernel": kern.name, "protocol": args.protocol})
    if info is not None:
        progress(args, f"{info.name}: {X.shape[0]} parties, epsilon {args.epsilon:g}"
                       + (f", delta {delta:.3g}" if delta else ""))
    res = run()
    if info is not None:
        _check_delta(res.delta, delta)
        out = protocols.output(args, kern, res, meta, warnings + notes)
    else:
        _check_delta(getattr(res, "delta", 0.0), delta)
        out = output.estimate_output(args, kern, res, X, meta, warnings + notes,
                                     getattr(res, "delta", delta))
    args.charge.actual_delta = out["delta"]
    for w in out.get("warnings", []):
        warn(w)
    return out


def _check_delta(actual: float, planned: float):
    """A release never spends more delta than was charged before it ran (a bug otherwise)."""
    if actual > planned * (1 + 1e-9):
        raise RuntimeError(f"the run reports delta {actual:.6g} but {planned:.6g} was planned "
                           f"and charged; this is a bug in the protocol's planned_delta")
