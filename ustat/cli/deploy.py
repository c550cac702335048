"""``ustat deploy init|run``, ``ustat serve``, ``ustat party``: a deployment from the command line.

- ``ustat deploy init --parties N [--hosts H] --out DIR -- estimate KERNEL --columns ...
  --bounds ...`` (or ``-- quantile --column C --bounds lo:hi --q ...``, or
  ``-- ecdf ...``, ``-- roc --score S --label Y --bounds ...``, ``-- hl --prob P
  --label Y``): the configuration (the command's flags become the run's spec,
  :func:`job_from_command`) and the CA (:func:`ustat.deploy.init`); with ``--local``
  (a demo on one machine) every participant's key and certificate too, pinned.
- ``ustat deploy keygen --name host-1 [--out DIR]``: on the participant's machine, its key
  (never leaves DIR) and a certificate signing request for the organizer.
- ``ustat deploy sign --ca DIR --csr FILE [--csr FILE ...] [--out FILE]``: the organizer
  signs requests with the CA and pins each certificate in ``deploy.toml``
  (:mod:`ustat.deploy.keys`).
- ``ustat serve --config DIR/deploy.toml --role dealer|aggregator|relay``
  (``server-0|server-1|analyst|relay`` for an ECDF command): one role's
  process (:mod:`ustat.deploy.runner`); the aggregator (the analyst) prints the release.
- ``ustat party --config DIR/deploy.toml --id I-J --csv FILE``: the party
  host holding parties I..J, one record each (rows I..J of FILE, the only
  rows it reads).
- ``ustat deploy run --local DIR --csv FILE``: every participant as its own
  process on this machine (:mod:`ustat.deploy.local`), the release and every
  participant's bytes on the wire.

Exit status 3: the run stopped (a participant disconnected, stalled past
the timeout, sent a bad frame or certificate); the message names it and the
step, and nothing is released.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import os
import sys
from typing import TYPE_CHECKING

from .common import UsageError, float_arg, int_arg

if TYPE_CHECKING:
    from collections.abc import Callable

    from ..deploy.config import Job
    from .common import Parser

FAULT_STATUS = 3


def register(sub: argparse._SubParsersAction[Parser],
             commands: dict[str, tuple[Callable[[argparse.Namespace], dict],
                                       Callable[[dict], None]]]) -> None:
    d = sub.add_parser("deploy", help="a deployment: keys, configuration, a local run",
                       description="Set up a deployment (one process per role and per party "
                                   "host, TLS with the deployment's own CA) or run one here.")
    dsub = d.add_subparsers(dest="deploy_command", required=True)
    i = dsub.add_parser("init", help="write DIR/deploy.toml and the CA (DIR/ca/, keys/ca.pem)")
    i.add_argument("--parties", type=int_arg, required=True, help="data parties (records)")
    i.add_argument("--hosts", type=int_arg, default=None,
                   help="party-host processes, each holding a block of parties (default 4, "
                        "at most --parties)")
    i.add_argument("--roles", default=None,
                   help="comma-separated roles (default dealer,aggregator, plus relay with 2 "
                        "or more hosts)")
    i.add_argument("--out", required=True, help="the deployment directory (new)")
    i.add_argument("--address", action="append", default=[], metavar="NAME=HOST:PORT",
                   help="where a participant listens (repeatable; default 127.0.0.1 and "
                        "ports from --base-port)")
    i.add_argument("--base-port", type=int_arg, default=7100)
    i.add_argument("--name", default="deployment", help="the deployment's name (in its CA)")
    i.add_argument("--source", default="", help="how the release names the data")
    i.add_argument("--timeout", type=float_arg, default=60.0,
                   help="seconds a step may wait for a peer (default 60, a LAN's margin)")
    i.add_argument("--connect-timeout", type=float_arg, default=30.0,
                   help="seconds to wait for every participant at start-up (default 30)")
    i.add_argument("--insecure", action="store_true",
                   help="allow a seeded protocol (--seed: every participant can compute the "
                        "noise; tests and demos only); the release says so")
    i.add_argument("--local", action="store_true",
                   help="a demo on one machine: also make every participant's key and "
                        "certificate here, pinned (whoever holds DIR holds every key)")
    i.add_argument("--ca-passphrase-file", metavar="FILE",
                   help="encrypt the CA key (DIR/ca/ca.key) with the first line of FILE (or "
                        "set USTAT_CA_PASSPHRASE)")
    i.add_argument("protocol", nargs=argparse.REMAINDER,
                   help="after --: the ustat command the participants run, e.g. -- estimate "
                        "kendall --columns age,balance --bounds 18:95,-8019:102127, or -- "
                        "quantile --column age --bounds 18:95 --q 0.5 (also ecdf, roc, hl)")
    i.add_argument("--json", action="store_true")
    k = dsub.add_parser("keygen", help="on a participant's machine: its key and a signing "
                                       "request (the key never leaves DIR)")
    k.add_argument("--name", required=True, help="the participant's name in deploy.toml")
    k.add_argument("--out", default="keys", metavar="DIR",
                   help="where the key (0600) and NAME.csr go (default keys, next to the "
                        "participant's copy of deploy.toml)")
    k.add_argument("--json", action="store_true")
    g = dsub.add_parser("sign", help="the organizer: sign requests with the CA and pin the "
                                     "certificates in deploy.toml")
    g.add_argument("--ca", required=True, metavar="DIR", help="the CA's directory (DIR/ca)")
    g.add_argument("--csr", required=True, action="append", metavar="FILE",
                   help="a participant's request (repeatable)")
    g.add_argument("--out", metavar="FILE",
                   help="where the certificate goes (one --csr; default the participant's cert "
                        "path in deploy.toml)")
    g.add_argument("--config", help="the deployment's deploy.toml (default next to --ca)")
    g.add_argument("--ca-passphrase-file", metavar="FILE",
                   help="the CA key's passphrase (or USTAT_CA_PASSPHRASE)")
    g.add_argument("--json", action="store_true")
    r = dsub.add_parser("run", help="run every participant as a process on this machine")
    r.add_argument("--local", required=True, metavar="DIR", help="the deployment directory")
    r.add_argument("--csv", help="the records (each party host reads only its own rows)")
    r.add_argument("--json", action="store_true")
    s = sub.add_parser("serve", help="run one role of a deployment (dealer, aggregator, relay)")
    s.add_argument("--config", required=True, help="DIR/deploy.toml")
    s.add_argument("--role", required=True,
                   help="dealer|aggregator|relay|server-0|server-1|analyst (or a participant "
                        "name)")
    _process_flags(s)
    p = sub.add_parser("party", help="run a party host: parties I..J, one record each")
    p.add_argument("--config", required=True, help="DIR/deploy.toml")
    p.add_argument("--id", required=True, metavar="I|I-J", help="the parties this host holds")
    p.add_argument("--csv", required=True, help="the records; this host reads rows I..J only")
    p.add_argument("--columns", help="must equal the protocol's --columns if given")
    p.add_argument("--salt", metavar="FILE",
                   help="with a budget ([run.budget]): this host's secret commitment salt, "
                        "made when missing (default: CSV.NAME.commit-salt); keep it: "
                        "a new salt starts a new budget")
    _process_flags(p)
    commands["deploy"] = (cmd_deploy, show_deploy)
    commands["serve"] = (cmd_process, show_process)
    commands["party"] = (cmd_process, show_process)


def _process_flags(p):
    p.add_argument("--plain", action="store_true",
                   help="plain TCP instead of TLS (refused unless every address in deploy.toml "
                        "is loopback: nothing is authenticated or encrypted)")
    p.add_argument("--report", metavar="FILE", help="also write the result and wire counts here")
    p.add_argument("--json", action="store_true")


def _config(path):
    from ..deploy.config import load

    try:
        return load(path)
    except FileNotFoundError:
        raise UsageError(f"no deployment configuration at {path}") from None


def _log(msg):
    print(msg, file=sys.stderr, flush=True)


def _fault(exc):
    print(f"ustat: error: {exc}", file=sys.stderr, flush=True)
    raise SystemExit(FAULT_STATUS)


def cmd_process(args: argparse.Namespace) -> dict:
    from mpc.wire.relay import RelayError
    from mpc.wire.transport import TransportError

    from ..deploy.config import parse_range
    from ..deploy.runner import run_participant

    cfg = _config(args.config)
    if args.command == "party":
        me = cfg.host_for(parse_range(args.id))
        given = [c.strip() for c in (args.columns or "").split(",") if c.strip()]
        want = [c.strip() for c in cfg.run.get("data", {}).get("columns", "").split(",")
                if c.strip()]
        if given and given != want:
            raise UsageError(f"--columns {args.columns} differs from the protocol's "
                             f"{','.join(want)} (deploy.toml)")
        csv = args.csv
        if not os.path.isfile(csv):
            raise UsageError(f"--csv {csv}: no such file")
        if not os.access(csv, os.R_OK):
            raise UsageError(f"--csv {csv}: not readable by this user")
    else:
        me = next((p for p in cfg.participants if p.name == args.role), None) \
            or cfg.by_role(args.role)
        if me.parties is not None:
            raise UsageError(f"{me.name} is a party host: run it with `ustat party`")
        csv = None
    ledger = None
    if cfg.budget and me.role in ("aggregator", "analyst"):
        b = cfg.budget                  # the ledger this role keeps (ustat.deploy.budget)
        args.budget_file, args.budget_total = b["file"], b.get("total")
        args.budget_delta = b.get("total_delta")
        ledger = args.charge
    try:
        out = run_participant(cfg, me.name, csv, tls=not args.plain, log=_log, ledger=ledger,
                              salt=getattr(args, "salt", None))
    except (TransportError, RelayError) as exc:
        _fault(exc)
    if ledger is not None and out["release"] is not None:
        out["release"]["budget"] = ledger.summary()     # as ustat estimate --budget-file
    if args.report:
        with open(args.report, "w") as f:
            json.dump(out, f, default=_plain)
    return out["release"] if out["release"] is not None else out


def _print_release(res: dict):
    """The release as the command run in one process prints it."""
    from ..deploy.ecdf import COMMANDS
    from ..reports.umpc import print_estimate

    if res.get("command") in COMMANDS:
        from ..reports.ecdf import show
        show(res)
    else:
        print_estimate(res)


def show_process(res: dict) -> None:
    from ..deploy.ecdf import COMMANDS

    if "estimate" in res or res.get("command") in COMMANDS:
        _print_release(res)
    else:
        w = res["wire"]
        sent = w.get("tcp_bytes_sent", 0)
        print(f"{res['name']} ({res['role']}): done in {res['seconds']:.2f} s, {sent:,} bytes "
              f"sent on the wire")


def _keys_command(args: argparse.Namespace) -> dict:
    """``deploy keygen`` and ``deploy sign`` (:mod:`ustat.deploy.keys`)."""
    from ..deploy import keys

    if args.deploy_command == "keygen":
        key, csr = keys.keygen(args.name, args.out)
        return {"command": "deploy keygen", "name": args.name, "key": key, "csr": csr}
    signed = keys.sign(args.ca, args.csr, config=args.config, out=args.out,
                       ca_passphrase=keys.passphrase(args.ca_passphrase_file))
    config = args.config or os.path.join(os.path.dirname(os.path.abspath(args.ca)), "deploy.toml")
    return {"command": "deploy sign", "config": config, "signed": signed,
            "unpinned": keys.unpinned(config)}


def cmd_deploy(args: argparse.Namespace) -> dict:
    if args.deploy_command in ("keygen", "sign"):
        return _keys_command(args)
    if args.deploy_command == "init":
        from ..deploy.create import init
        from ..deploy.keys import Keys, passphrase

        proto = list(args.protocol)
        if proto and proto[0] == "--":
            proto = proto[1:]
        addresses = {}
        for a in args.address:
            name, _, addr = a.partition("=")
            if not addr:
                raise UsageError(f"--address NAME=HOST:PORT, got {a!r}")
            addresses[name] = addr
        roles = [r.strip() for r in args.roles.split(",")] if args.roles else None
        hosts = args.hosts if args.hosts is not None else min(4, args.parties)
        job = dataclasses.replace(job_from_command(proto, args.parties), source=args.source)
        cfg = init(args.out, args.parties, job, hosts=hosts, roles=roles,
                   base_port=args.base_port, addresses=addresses, name=args.name,
                   timeout=args.timeout, connect_timeout=args.connect_timeout,
                   insecure=args.insecure,
                   keys=Keys(args.local, passphrase(args.ca_passphrase_file)))
        return {"command": "deploy init", "config": cfg.path, "local": cfg.local,
                "participants": [{"name": p.name, "role": p.role,
                                  "parties": None if p.parties is None else
                                  [p.parties.start, p.parties.stop - 1],
                                  "address": f"{p.address[0]}:{p.address[1]}"}
                                 for p in cfg.participants]}
    from ..deploy.local import DeployError, run_local
    from ..deploy.wire import summary

    try:
        out = run_local(args.local, args.csv)
    except DeployError as exc:
        _fault(exc)
    release = dict(out["release"])
    release["participants"] = out["participants"]
    release["wire"] = summary(release, out["participants"])
    release["deployment_seconds"] = out["seconds"]
    return release


def _show_keys(res: dict) -> None:
    if res["command"] == "deploy keygen":
        print(f"wrote {res['key']} (this participant's private key: it never leaves this "
              f"machine) and {res['csr']}: send the .csr to the organizer (ustat deploy sign)")
        return
    for s in res["signed"]:
        print(f"signed {s['name']}: {s['cert']}, pinned {s['fingerprint']}"
              + (f" (replacing {s['replaced']}: the old certificate is revoked)"
                 if s["replaced"] else ""))
    if res["unpinned"]:
        print(f"not pinned yet: {', '.join(res['unpinned'])}")
    else:
        print(f"every participant is pinned: send {res['config']}, keys/ca.pem and keys/*.pem "
              "(all public) to every participant")


def show_deploy(res: dict) -> None:
    if res.get("command") in ("deploy keygen", "deploy sign"):
        _show_keys(res)
        return
    if res.get("command") == "deploy init":
        print(f"wrote {res['config']}; participants:")
        for p in res["participants"]:
            held = "" if p["parties"] is None else f"  parties {p['parties'][0]}-{p['parties'][1]}"
            print(f"  {p['name']:<12} {p['role']:<11} {p['address']}{held}")
        base = os.path.dirname(res["config"])
        if res.get("local"):
            print(f"LOCAL DEMO (--local): every participant's key was made here, in "
                  f"{os.path.join(base, 'keys')}: whoever holds that directory can be any "
                  "participant; for real hosts, init without --local")
        else:
            print(f"the CA is in {os.path.join(base, 'ca')} (keep it offline); next: each "
                  "participant runs `ustat deploy keygen --name NAME` on its machine and "
                  f"sends NAME.csr; sign them with `ustat deploy sign --ca "
                  f"{os.path.join(base, 'ca')} --csr NAME.csr ...`")
        return
    _print_release(res)
    from ..deploy.wire import print_wire
    print_wire(res)


def job_from_command(command: list, parties: int) -> Job:
    """The :class:`ustat.deploy.Job` of a ``ustat`` command line (``["estimate", "kendall",
    "--columns", "age,balance", "--bounds", ...]``) for ``parties`` parties: its flags become
    the run's spec (every participant computes from the spec, never parses a command line)
    and what each party host reads of its own file. ValueError for what a deployment cannot
    run (no ``--csv``: each host gives its own file; no ``--processes`` or ``--evaluate``).
    ``--budget-file`` becomes ``[run.budget]`` (:func:`budget_table`)."""
    from ..deploy import ecdf

    command = list(command)
    if not command:
        raise ValueError("give the protocol after --, e.g. -- estimate kendall --columns a,b "
                         "--bounds 0:1,0:1")
    if command[0] != "estimate" and command[0] not in ecdf.COMMANDS:
        raise ValueError(f"deployments run `ustat estimate` (U-MPC) or `ustat "
                         f"{' / '.join(ecdf.COMMANDS)}`, not {command[0]!r}")
    if "--csv" in command or any(a.startswith("--csv=") for a in command):
        raise ValueError("no --csv in the protocol: each party host gives its own file "
                         "(ustat party --csv FILE)")
    if "--processes" in command:
        raise ValueError("no --processes in the protocol: the deployment lays out the processes")
    if command[0] != "estimate":
        return _ecdf_job(command)
    return _estimate_job(command, parties)


#: the column of values each ECDF command reads (``roc`` and ``hl`` also read ``--label``)
VALUE_OPTION = {"ecdf": "column", "quantile": "column", "roc": "score", "hl": "prob"}


def _ecdf_job(command: list):
    """The job of an ECDF command: its spec (:func:`ustat.cli.ecdf.deployed_spec`) and the
    columns each party host reads; ValueError for what a deployment cannot run."""
    from ..deploy.config import Job
    from . import ecdf, ecdf_options

    what = f"the protocol {' '.join(command)!r} is not a valid `ustat {command[0]}` command"
    try:
        args = ecdf_options.parse(command)
    except SystemExit:
        raise ValueError(f"{what} (see the message above)") from None
    except UsageError as e:
        raise ValueError(f"{what}: {e}") from None
    value = VALUE_OPTION[args.command]
    if not getattr(args, value, None) or (args.command != "hl" and not args.bounds):
        need = f"--{value}" + ("" if args.command == "hl" else " and public --bounds")
        raise ValueError(f"the protocol must name {need} (each party host reads that column "
                         "of its own file; no participant sees all the data)")
    refused = (("evaluate", "--evaluate reads every value in the clear"),
               ("processes", "--processes: the deployment lays out the processes"),
               ("plot", "--plot: the analyst's report (--json) holds the curve to plot"),
               ("n", "--n sets the size of the synthetic default; each host reads its file"))
    for key, why in refused:
        if getattr(args, key, None):
            raise ValueError(f"not in a deployment: {why}")
    if args.backend == "central":
        raise ValueError("--backend central is a trusted curator holding every value: nothing "
                         "to deploy (use fss or pointwise)")
    if args.servers not in (None, 2):
        raise ValueError(f"deployments have two servers (server-0, server-1); got --servers "
                         f"{args.servers}")
    try:
        spec = ecdf.deployed_spec(args)
    except UsageError as e:
        raise ValueError(f"{what}: {e}") from None
    columns = getattr(args, value) + ("" if args.command in ("ecdf", "quantile") else
                                      f",{args.label}")
    if args.command in ("roc", "hl") and getattr(args, value) == args.label:
        raise ValueError("the value and --label columns must differ")
    data = {"columns": columns, "sep": args.sep, "header": not args.no_header,
            "encoding": args.encoding or "utf-8", "positive": getattr(args, "positive", None)}
    return Job(args.command, spec, data,
               budget=budget_table(args, ecdf.charge_delta(args), args.command))


def _estimate_job(command: list, parties: int):
    from .. import kernels
    from ..data.records import bounds_option
    from ..deploy.config import Job
    from ..umpc.privacy import planned_delta
    from . import estimate_options
    from .estimate import edges_option, umpc_spec

    try:
        args = estimate_options.parse(command)
    except SystemExit:
        raise ValueError(f"the protocol {' '.join(command)!r} is not a valid `ustat estimate` "
                         "command (see the message above)") from None
    except UsageError as e:
        raise ValueError(f"the protocol {' '.join(command)!r} is not a valid `ustat estimate` "
                         f"command: {e}") from None
    if args.protocol != "umpc":
        raise ValueError("deployments run U-MPC (--protocol umpc)")
    if not args.columns or not args.bounds:
        raise ValueError("the protocol must name --columns and public --bounds (each party "
                         "host reads those columns of its own file)")
    if args.evaluate:
        raise ValueError("--evaluate reads every record in the clear: not in a deployment")
    kern = kernels.get(args.kernel)
    numeric = [c for c in range(kern.columns) if c not in kern.categorical]
    pairs = iter(bounds_option(args.bounds, len(numeric)))
    bounds = [tuple(map(float, next(pairs))) if c in numeric else None
              for c in range(kern.columns)]
    edges, sampler = edges_option(args, parties, kern.degree, [])
    spec = umpc_spec(args, kern, edges=edges, sampler=sampler, bounds=bounds)
    if args.check_inputs is None:       # deployments check inputs unless told not to
        spec = spec.replace(check_inputs=True)
    data = {"columns": args.columns, "sep": args.sep, "header": not args.no_header,
            "encoding": args.encoding or "utf-8", "positive": args.positive,
            "classes": args.classes, "clip": args.clip}
    return Job("estimate", spec, data,
               budget=budget_table(args, planned_delta(spec, parties), kern.name))


def budget_table(args: argparse.Namespace, delta: float, label: str) -> dict:
    """``[run.budget]`` of a protocol's ``--budget-file`` (empty without it): the ledger the
    releasing role keeps (:mod:`ustat.deploy.budget`), the totals it starts a data set with,
    and what each run charges (``epsilon``, ``delta``); ValueError for what cannot be
    charged."""
    if not args.budget_file:
        for flag, value in (("--budget-total", args.budget_total),
                            ("--budget-delta", args.budget_delta)):
            if value is not None:
                raise ValueError(f"{flag} needs --budget-file")
        return {}
    if math.isinf(args.epsilon):
        raise ValueError("--epsilon inf is not private and cannot be charged to --budget-file")
    total, total_delta = args.budget_total, args.budget_delta
    if total is not None and not 0 < total < math.inf:
        raise ValueError(f"--budget-total must be > 0 and finite, got {total}")
    if total_delta is not None and not 0 <= total_delta < 1:
        raise ValueError(f"--budget-delta must be in [0, 1), got {total_delta}")
    return {"file": args.budget_file, "total": total, "total_delta": total_delta,
            "epsilon": float(args.epsilon), "delta": float(delta), "label": label}


def _plain(obj):
    for attr in ("tolist", "item"):
        if callable(getattr(obj, attr, None)):
            return getattr(obj, attr)()
    raise TypeError(f"not JSON serializable: {type(obj).__name__}")
