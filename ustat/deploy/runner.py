"""One participant of a deployment: join the run, compute its part, release where it receives.

:func:`run_participant` is ``ustat serve`` and ``ustat party``: it reads the
run of ``deploy.toml`` (``[run]``: the statistic, its spec and what each
party host reads of its own file), builds the statistic's program from the
spec (the same program ``ustat estimate``, or ``ustat ecdf`` / ``quantile`` /
``roc`` / ``hl``, runs: a seeded deployment releases what the one-process
command releases) and runs it on this participant's
:class:`~.participant.DeployedParticipant` executor. A party host reads only
its own records of the CSV file; the other processes hold none (their rows
are a public filler, never read). The process that receives the release
(the aggregator; the analyst of an ECDF command) returns its report as the
command would print it (:func:`ustat.reports.umpc.estimate_output`,
:func:`ustat.reports.ecdf.report`); every process returns what it wrote to
its sockets
(:class:`mpc.wire.transport.WireCounts`, TLS records included).
"""

from __future__ import annotations

import argparse
import time
from typing import TYPE_CHECKING, cast

import numpy as np

from ..data.records import RecordSource, load_records, raw_records
from .config import INSECURE_NOTE, Config, seed_of
from .participant import DeployedParticipant
from .rows import host_file_rows

__all__ = ["host_file_rows", "record_source", "run_participant"]

if TYPE_CHECKING:
    from collections.abc import Callable

    from ..specs import UMPCSpec
    from .budget import Gate, Ledger


def record_source(cfg: Config, csv: str | None, spec: UMPCSpec) -> RecordSource:
    """What a party host reads of its file ``csv``: ``[run.data]``, with the spec's bounds."""
    data = dict(cfg.run.get("data", {}))
    bounds = [b for b in (spec.precision.bounds or ()) if b is not None]
    text = ",".join(f"{lo!r}:{hi!r}" for lo, hi in bounds) or None
    try:
        return RecordSource(csv=csv, bounds=text, epsilon=spec.privacy.epsilon, **data)
    except TypeError as e:
        raise ValueError(f"{cfg.path}: [run.data]: {e}") from None


def _estimate(cfg: Config, executor: DeployedParticipant, host: range | None, csv):
    """This process's part of a deployed U-MPC estimate; the report in the aggregator's."""
    from ..reports.umpc import estimate_output
    from ..umpc import umpc_program

    spec = cast("UMPCSpec", cfg.spec())    # command "estimate": a UMPCSpec
    kern = spec.kern
    n, d = cfg.parties, kern.columns
    numeric = [c for c in range(d) if c not in kern.categorical]
    bounds = spec.precision.bounds
    if bounds is None:
        raise ValueError(f"{cfg.path}: the run needs public bounds ([run.spec.precision])")
    filler = np.zeros((n, d))
    for c in numeric:
        filler[:, c] = bounds[c][0]
    raw_X = filler.copy()
    source = record_source(cfg, csv, spec)
    names = [s.strip() for s in (source.columns or "").split(",") if s.strip()]
    meta = {"source": cfg.source or "deployment", "columns": names, "rows": n,
            "bounds": [list(bounds[c]) for c in numeric]}
    warnings: list = []
    if host is not None:
        rows = host_file_rows(csv, host, cfg.run.get("data", {}))
        _, warnings, _, raw_o = load_records(source, kern, rows=rows)
        raw_X[host.start:host.stop] = raw_o[0]
    raw = raw_records(raw_X, numeric, [bounds[c] for c in numeric], kern)
    if raw is None:
        raise ValueError(f"{cfg.path}: the spec's bounds must be finite with lo < hi")
    res = executor.run(umpc_program(raw[0], spec))
    if not res.released:
        return None
    res.processes = 1                   # the wire counts are reported per participant instead
    out = estimate_output(spec, res, None, meta, warnings, res.delta)
    if cfg.insecure and seed_of(spec) is not None:
        out["notes"] = [*out.get("notes", []), INSECURE_NOTE]
    out["deployment"] = {"name": cfg.name, "processes": len(cfg.ranked) +
                         (cfg.relay is not None)}
    return out


def _ecdf(cfg: Config, executor: DeployedParticipant, host: range | None, csv):
    """This process's part of a deployed ECDF command; the report in the analyst's."""
    from ..reports.ecdf import report
    from .ecdf import host_rows, program

    spec = cfg.spec()
    values, labels, meta = host_rows(cfg.command, spec, cfg.run.get("data", {}), cfg.parties,
                                     host, csv, cfg.source or "deployment")
    res = executor.run(program(cfg.command, spec, values, labels))
    if not res.released:
        return None
    out = report(cfg.command, spec, res, meta)
    lost = out.get("account", {}).pop("dropouts", None)
    if lost is not None:        # parties whose uploads did not reach every server (n: those kept)
        out["dropouts"] = lost
        if cfg.command in ("roc", "hl"):    # their n is the rows' (the others': the release's)
            out["n"] -= lost["parties_lost"]
    if cfg.insecure and seed_of(spec) is not None:
        out["notes"] = [*out.get("notes", []), INSECURE_NOTE]
    out["deployment"] = {"name": cfg.name, "processes": len(cfg.ranked) +
                         (cfg.relay is not None)}
    return out


def run_participant(cfg: Config, name: str, csv: str | None = None, *, tls: bool = True,
                    log: Callable[[str], None] | None = None, ledger: Ledger | None = None,
                    salt: str | None = None) -> dict:
    """Run participant ``name`` of ``cfg`` to the end (``tls`` False: plain TCP, refused unless
    every address is loopback; a seeded spec is refused unless ``cfg.insecure``). Returns
    ``{"name", "role", "release" (the aggregator's, else None), "wire", "seconds"}``; raises
    TransportError / RelayError / ValueError on a fault (the caller exits non-zero, with no
    release). With ``[run.budget]`` (:mod:`.budget`): the releasing role charges the run to
    ``ledger`` before anyone computes; a party host commits to its rows with the salt in
    file ``salt`` (default: ``CSV.<name>.commit-salt``)."""
    from mpc.run.hosts import open_relay, run_relay

    me = cfg.get(name)
    if not tls:
        cfg.check_plain()
    cfg.check_seed()
    t0 = time.perf_counter()
    if me.role == "relay":
        plan = cfg.plan()
        relay = open_relay(plan, cfg.credentials(name) if tls else None)
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
    rows = None
    if me.parties is not None and csv is not None:
        rows = host_file_rows(csv, me.parties, cfg.run.get("data", {}))    # checked first
        if rows != me.parties and log:
            r = me.parties
            log(f"{name}: {csv} holds {len(rows)} rows: read as this host's parties "
                f"{r.start}-{r.stop - 1}")
    gate = budget_gate(cfg, name, csv, rows, ledger, salt) if cfg.budget else None
    # the process that releases says what the run is doing (its step, whom it waits for)
    executor = DeployedParticipant(cfg, name, tls=tls, log=log,
                                   progress=me.role in ("aggregator", "analyst"), gate=gate)
    if cfg.command == "estimate":
        release = _estimate(cfg, executor, me.parties, csv)
    else:
        release = _ecdf(cfg, executor, me.parties, csv)
    return {"name": name, "role": me.role, "release": release, "wire": executor.wire,
            "seconds": time.perf_counter() - t0}


def budget_gate(cfg: Config, name: str, csv: str | None, rows: range | None,
                ledger: Ledger | None, salt: str | None) -> Gate:
    """Participant ``name``'s :class:`~.budget.Gate` of a deployment with ``[run.budget]``: a
    party host's commitment to rows ``rows`` of ``csv`` (salt file ``salt``), the releasing
    role's ``ledger``; ValueError naming what is missing."""
    from .budget import RELEASERS, Gate, host_commitment, host_salt

    ranked = cfg.ranked
    hosts = [i for i, p in enumerate(ranked) if p.parties is not None]
    releaser = next((i for i, p in enumerate(ranked) if p.role in RELEASERS), None)
    if releaser is None:
        raise ValueError(f"{cfg.path}: [run.budget] needs a role that receives the release "
                         f"({' or '.join(RELEASERS)}) to keep the ledger")
    me = cfg.get(name)
    commitment = None
    if me.parties is not None and csv is not None and rows is not None:
        commitment = host_commitment(csv, rows, cfg.run.get("data", {}),
                                     host_salt(salt or f"{csv}.{name}.commit-salt"))
    mine = ranked[releaser].name == name
    if mine and ledger is None:
        raise ValueError(f"{name} keeps the deployment's budget: give it the ledger")
    description = {"deployment": cfg.name, "command": cfg.command, "parties": cfg.parties,
                   "hosts": [ranked[h].name for h in hosts]}
    return Gate(hosts, releaser, cfg.budget, commitment=commitment,
                ledger=ledger if mine else None, description=description)


def parse_cli_config(path: str) -> Config:
    from .config import load

    try:
        return load(path)
    except FileNotFoundError:
        raise argparse.ArgumentTypeError(f"no deployment configuration at {path}") from None
