"""One participant of a deployment: join the run, compute its part, release where it receives.

:func:`run_participant` is ``ustat serve`` and ``ustat party``: it builds
the run's :class:`mpc.run.hosts.Plan` from ``deploy.toml``, listens on the
participant's address, connects (TLS 1.3, certificates from the
deployment's CA; party hosts through the relay), and runs the protocol of
``[protocol]``: the same program as ``ustat estimate`` with the same
arguments (:func:`ustat.cli.estimate._run_umpc` with this process's
runtime), so a seeded deployment releases what ``ustat estimate`` releases;
or ``ustat ecdf`` / ``quantile`` / ``roc`` / ``hl`` (:mod:`.ecdf`: two servers and an
analyst, which releases).
A party host reads only its own records of the CSV file; the other
processes hold none (their rows are a public filler, never read). The
process that receives the release (the aggregator) returns it as
``ustat estimate`` would print it; every process returns what it wrote to
its sockets (:class:`mpc.wire.transport.WireCounts`, TLS records included).
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import fss

from .config import Config


def protocol_args(cfg: Config, csv: str | None = None):
    """The parsed ``ustat`` command of the deployment's protocol (with ``--csv``): ``estimate``
    (U-MPC) or an ECDF command (:mod:`.ecdf`)."""
    from ..cli import build_parser

    from .ecdf import COMMANDS

    proto = cfg.protocol
    command = proto.get("command", "estimate")
    if command != "estimate" and command not in COMMANDS:
        raise ValueError(f"{cfg.path}: protocol command {command!r}: deployments run `ustat "
                         f"estimate` (U-MPC) or `ustat {' / '.join(COMMANDS)}`")
    argv = [command, *proto.get("args", [])]
    if csv is not None:
        argv += ["--csv", csv]
    args = build_parser().parse_args(argv)
    args.no_progress = True
    if args.encoding is None:
        args.encoding = "utf-8"
    if command in COMMANDS:
        return args
    if args.protocol != "umpc":
        raise ValueError(f"{cfg.path}: deployments run U-MPC (--protocol umpc), not "
                         f"{args.protocol!r}")
    return args


def _program(rt, cfg: Config, args, kern, host: range | None):
    """This process's part of the run; the release dict in the aggregator's process."""
    from ..cli.estimate import _planned_delta, _run_umpc, _umpc_defaults
    from ..cli.output import estimate_output
    from ..cli.records import _raw_records, bounds_option, load_records

    n = int(cfg.protocol["parties"])
    d = kern.columns
    numeric = [c for c in range(d) if c not in kern.categorical]
    _umpc_defaults(args)
    bounds = bounds_option(args.bounds, len(numeric)) if args.bounds else None
    if bounds is None:
        raise ValueError(f"{cfg.path}: the protocol needs public --bounds")
    X = np.zeros((n, d))
    filler = np.zeros((n, d))
    for c, (lo, _) in zip(numeric, bounds):
        filler[:, c] = lo
    raw_X = filler.copy()
    names = [s.strip() for s in (args.columns or "").split(",") if s.strip()]
    meta = {"source": cfg.source or "deployment", "columns": names, "rows": n,
            "bounds": [list(map(float, b)) for b in bounds]}
    warnings: list = []
    if host is not None:
        Xo, warnings, _, raw_o = load_records(args, kern, rows=host)
        X[host.start:host.stop] = Xo
        raw_X[host.start:host.stop] = raw_o[0]
    raw = _raw_records(raw_X, numeric, bounds, kern)
    notes: list = []
    run = _run_umpc(args, kern, X, raw, meta, notes, runtime=rt)
    res = run()
    if not res.released:
        return None
    delta = _planned_delta(args, None, kern, X)
    res.processes = 1                   # the wire counts are reported per participant instead
    out = estimate_output(args, kern, res, X, meta, warnings + notes, delta)
    out["deployment"] = {"name": cfg.name, "processes": len(cfg.ranked) +
                         (cfg.relay is not None)}
    return out


def run_participant(cfg: Config, name: str, csv: str | None = None, *, tls: bool = True,
                    log=None) -> dict:
    """Run participant ``name`` of ``cfg`` to the end. Returns ``{"name", "role", "release"
    (the aggregator's, else None), "wire", "seconds"}``; raises TransportError / RelayError /
    ValueError on a fault (the caller exits non-zero, with no release)."""
    from mpc.run.hosts import join, open_mesh, open_relay, run_relay

    from .. import kernels

    me = cfg.get(name)
    plan = cfg.plan()
    creds = cfg.credentials(name) if tls else None
    t0 = time.perf_counter()
    if me.role == "relay":
        relay = open_relay(plan, creds)
        try:
            if log:
                log(f"{name}: listening on {me.address[0]}:{relay.port}; forwarding between "
                    f"{len(plan.relayed)} party hosts")
            out = run_relay(relay)
        finally:
            relay.close()
        return {"name": name, "role": "relay", "release": None, "wire": out,
                "seconds": time.perf_counter() - t0}
    if (me.parties is not None) != (csv is not None):
        raise ValueError(f"{name}: a party host needs --csv (its records); "
                         "other participants read no data" if me.parties is not None else
                         f"{name} holds no records: drop --csv")
    args = protocol_args(cfg, csv)
    rank = cfg.ranked.index(me)
    mesh = open_mesh(plan, rank, creds)
    try:
        if log:
            log(f"{name}: listening on {me.address[0]}:{mesh.port}, connecting")
        rt = join(mesh, plan, creds, warm_up=(fss.warm_up,))
        if log:
            log(f"{name}: connected to every participant; computing")
        if args.command == "estimate":
            release = _program(rt, cfg, args, kernels.get(args.kernel), me.parties)
        else:
            from .ecdf import program
            release = program(rt, cfg, args, me.parties)
        mesh.sample_tcp()
        return {"name": name, "role": me.role, "release": release,
                "wire": mesh.counts.to_dict(), "seconds": time.perf_counter() - t0}
    finally:
        mesh.close()


def parse_cli_config(path: str) -> Config:
    from .config import load

    try:
        return load(path)
    except FileNotFoundError:
        raise argparse.ArgumentTypeError(f"no deployment configuration at {path}") from None
