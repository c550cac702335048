"""Deployments of ``ustat ecdf``, ``quantile``, ``roc`` and ``hl``: party hosts, two servers, an analyst.

The participants run the command of ``[protocol]`` exactly as ``ustat
ecdf`` / ``quantile`` / ``roc`` / ``hl`` would (:mod:`ustat.cli.ecdf`),
each with its own runtime (:class:`Deployed` on the parsed arguments):

* a party host reads only its own rows of its CSV file: the value column
  (``--column``; ``--score`` or ``--prob`` and the ``--label`` column for
  ``roc`` and ``hl``, labels mapped row by row by the fixed rule of
  ``--positive``); the other rows are a public filler (the lower bound,
  label 0), never read: each party's inputs enter the run only through
  its own host;
* ``server-0`` and ``server-1`` receive the parties' DCF keys (or
  pointwise shares) and answer the analyst's queries; they hold no data;
* the ``analyst`` asks the queries, receives the answers and releases: it
  prints the same text and JSON as the command run in one process (and,
  with the same ``--seed``, the same numbers). The session's dealer, which
  the ECDF protocols never use, shares the analyst's process.

Public in ``deploy.toml``: the columns, the bounds (required for ``ecdf``,
``quantile`` and ``roc``: no participant sees the data to take them from;
``hl``'s probabilities lie in [0, 1]), the thresholds, epsilon and every
other option. Refused: ``--csv`` (each host gives its own), ``--evaluate`` (reads
every value), ``--backend central`` (a trusted curator: nothing to deploy),
``--processes``, ``--budget-file`` (no participant sees the data set to
identify it) and ``--servers`` other than 2. ``--smooth`` and ``--plot``
are allowed: the analyst post-processes.
Threat model: the protocol's (:mod:`ustat.ecdf`): two non-colluding servers;
the transport adds TLS 1.3 with the deployment's certificates, and the
relay's end-to-end encryption between party hosts (parties send to the
servers directly here: only party hosts go through the relay).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

#: deployable ECDF commands
COMMANDS = ("ecdf", "quantile", "roc", "hl")
#: the column of values each command reads (``roc`` and ``hl`` also read ``--label``)
VALUE_OPTION = {"ecdf": "column", "quantile": "column", "roc": "score", "hl": "prob"}
#: the roles of an ECDF deployment (the relay added with two or more hosts)
ROLES = ("server-0", "server-1", "analyst")
#: deploy.toml role -> the ECDF session's role
SESSION_ROLE = {"server-0": "server0", "server-1": "server1"}


class NotReleased(Exception):
    """Raised in a deployment's processes that take part in a release but do not receive it."""


@dataclass
class Deployed:
    """What one process of a deployed ECDF run holds: ``args.deployment`` in the ECDF commands."""

    runtime: object
    rows: range | None            # a party host's records; None for a role
    parties: int
    source: str

    def column(self, args):
        """(values with one entry per party, column name, source): this host's rows from its
        file, the public lower bound elsewhere."""
        from ustat.data.records import bounds_option
        from ustat.data import parse_numeric, read_table

        from ..cli.common import UsageError

        lo = float(bounds_option(args.bounds, 1)[0][0])
        x = np.full(self.parties, lo)
        if self.rows is not None:
            t = read_table(args.csv, [args.column], args.sep, header=not args.no_header,
                           encoding=args.encoding, rows=self.rows)
            if t.n_rows != len(self.rows):
                raise UsageError(f"{args.csv} has no record {self.rows.start + t.n_rows} (this "
                                 f"host holds records {self.rows.start}-{self.rows.stop - 1})")
            x[self.rows.start:self.rows.stop] = parse_numeric(t.columns[args.column],
                                                              args.column, t.lines, t.path)
        return x, args.column, self.source or "deployment"

    def labelled(self, args, value_col: str, lo: float):
        """(values, 0/1 labels, notes) with one entry per party: this host's rows of
        ``value_col`` and ``--label`` (labels mapped by the fixed rule of ``--positive``,
        as :func:`ustat.cli.ecdf_options.read_labels`), ``lo`` and label 0 elsewhere."""
        from ..cli.common import UsageError
        from ..cli.ecdf_options import label_rule_note, read_labels

        x, y = np.full(self.parties, float(lo)), np.zeros(self.parties, dtype=np.int64)
        notes = [label_rule_note(args.label, args.positive)]
        if self.rows is not None:
            v, lab, notes = read_labels(args.csv, args.sep, value_col, args.label,
                                        args.positive, header=not args.no_header,
                                        encoding=args.encoding, rows=self.rows)
            if v.size != len(self.rows):
                raise UsageError(f"{args.csv} has no record {self.rows.start + v.size} (this "
                                 f"host holds records {self.rows.start}-{self.rows.stop - 1})")
            x[self.rows.start:self.rows.stop] = v
            y[self.rows.start:self.rows.stop] = lab
        return x, y, notes


def check_command(command) -> None:
    """ValueError unless ``command`` is an ECDF command a deployment can run."""
    from ..cli.common import UsageError
    from ..cli.parser import build_parser

    try:
        args = build_parser({}).parse_args(list(command))
    except SystemExit:
        raise ValueError(f"the protocol {' '.join(command)!r} is not a valid `ustat "
                         f"{command[0]}` command (see the message above)") from None
    except UsageError as e:
        raise ValueError(f"the protocol {' '.join(command)!r} is not a valid `ustat "
                         f"{command[0]}` command: {e}") from None
    value = VALUE_OPTION[args.command]
    if not getattr(args, value, None) or (args.command != "hl" and not args.bounds):
        need = f"--{value}" + ("" if args.command == "hl" else " and public --bounds")
        raise ValueError(f"the protocol must name {need} (each party host reads that column "
                         "of its own file; no participant sees all the data)")
    refused = (("evaluate", "--evaluate reads every value in the clear"),
               ("processes", "--processes: the deployment lays out the processes"),
               ("budget_file", "--budget-file: no participant sees the data set to identify it"))
    for key, why in refused:
        if getattr(args, key, None):
            raise ValueError(f"not in a deployment: {why}")
    if args.backend == "central":
        raise ValueError("--backend central is a trusted curator holding every value: nothing "
                         "to deploy (use fss or pointwise)")
    if args.servers not in (None, 2):
        raise ValueError(f"deployments have two servers (server-0, server-1); got --servers "
                         f"{args.servers}")


def program(executor, cfg, host: range | None, csv: str | None):
    """This process's part of a deployed ECDF command (on ``executor``, a
    :class:`~.participant.DeployedParticipant`); the JSON release in the analyst's."""
    from ..executors import Program

    args = _args(cfg, csv)
    n = cfg.parties
    import fss

    return executor.run(Program(f"ustat {args.command}", _main, n, (), warm_up=(fss.warm_up,),
                                args=(cfg.name, len(cfg.ranked) + (cfg.relay is not None),
                                      cfg.source, n, args, host)))


def _args(cfg, csv):
    from ..cli.parser import build_parser

    command = cfg.command
    argv = [command, *cfg.run.get("args", [])]
    if csv is not None:
        argv += ["--csv", csv]
    args = build_parser({}).parse_args(argv)
    args.no_progress = True
    if args.encoding is None:
        args.encoding = "utf-8"
    return args


def _main(place, name, processes, source, n, args, host):
    from ..cli.budget import Charge
    from ..cli.ecdf import run_ecdf, run_hl, run_quantile, run_roc

    args.deployment = Deployed(place.runtime, host, n, source)
    args.charge = Charge(args)
    run = {"ecdf": run_ecdf, "quantile": run_quantile, "roc": run_roc,
           "hl": run_hl}[args.command]
    try:
        out = run(args)
    except NotReleased:
        return None
    out["deployment"] = {"name": name, "processes": processes}
    return out
