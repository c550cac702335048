"""Deployments of ``ustat ecdf``, ``quantile``, ``roc``, ``hl``: party hosts, servers, an analyst.

``deploy.toml`` stores the statistic's spec (``[run.spec]``: an
:class:`~ustat.specs.ECDFSpec`, :class:`~ustat.specs.QuantileSpec`,
:class:`~ustat.specs.ROCSpec` or :class:`~ustat.specs.HLSpec`) and what each
party host reads of its own file (``[run.data]``: ``columns``, the value
column and for ``roc`` / ``hl`` the label column, ``positive``, ``sep``,
``header``, ``encoding``). Every participant builds the statistic's program
from them (:func:`program`, the one :mod:`ustat.ecdf` runs in one process)
and runs it on its own executor (:class:`~.participant.DeployedParticipant`):

* a party host reads only its own rows of its CSV file (:func:`host_rows`):
  the value column, and the labels mapped row by row by the fixed rule of
  ``positive``; the other rows are a public filler (the lower bound, label
  0), never read: each party's inputs enter the run only through its own host;
* ``server-0`` and ``server-1`` receive the parties' DCF keys (or pointwise
  shares) and answer the analyst's queries; they hold no data;
* the ``analyst`` asks the queries, receives the answers and releases: its
  report is the command's (:mod:`ustat.reports.ecdf`: with the same seed,
  the same numbers). The session's dealer, which the ECDF protocols never
  use, shares the analyst's process.

Public in ``deploy.toml``: the columns, the bounds (required for ``ecdf``,
``quantile`` and ``roc``: no participant sees the data to take them from;
``hl``'s probabilities lie in [0, 1]), the thresholds, epsilon and every
other option. :func:`ustat.cli.deploy.job_from_command` refuses what a
deployment cannot run (``--csv``, ``--evaluate``, ``--backend central``,
``--processes``, ``--budget-file``, ``--plot``, ``--servers`` other than 2).
Threat model: the protocol's (:mod:`ustat.ecdf`): two non-colluding servers, which
check every party's keys by default (``verify_keys``, :mod:`ustat.ecdf.keycheck`:
a malicious host's malformed keys are dropped and counted, ``keys_dropped``);
the transport adds TLS 1.3 with the deployment's certificates, and the
relay's end-to-end encryption between party hosts (parties send to the
servers directly here: only party hosts go through the relay).
Dropouts (``ecdf``, ``quantile``, ``roc`` on the FSS servers: :mod:`ustat.ecdf.dropouts`):
a party host lost before its keys reached both servers is left out, within
``max_dropouts``; a server or the analyst lost ends the run with no release.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, cast

import numpy as np

if TYPE_CHECKING:
    from ..executors import Program

__all__ = ["COMMANDS", "ROLES", "SESSION_ROLE", "host_rows", "program"]

#: deployable ECDF commands
COMMANDS = ("ecdf", "quantile", "roc", "hl")
#: the roles of an ECDF deployment (the relay added with two or more hosts)
ROLES = ("server-0", "server-1", "analyst")
#: deploy.toml role -> the ECDF session's role
SESSION_ROLE = {"server-0": "server0", "server-1": "server1"}


def host_rows(command: str, spec: Any, data: dict, n: int, host: range | None,
              csv: str | None, source: str) -> tuple:
    """(values, labels or None, meta) with one entry per party: this host's rows of its file
    (``host`` None: a role, which reads nothing), the public filler elsewhere (the lower
    bound, or 0; label 0); ``meta``: what the report says about the data."""
    from ..data.labelled import label_rule_note, read_column, read_labelled

    columns = [c.strip() for c in str(data.get("columns", "")).split(",") if c.strip()]
    want = 1 if command in ("ecdf", "quantile") else 2
    if len(columns) != want:
        raise ValueError(f"[run.data] columns must name {want} column(s) for {command}, got "
                         f"{data.get('columns')!r}")
    sep, header = data.get("sep"), bool(data.get("header", True))
    encoding = str(data.get("encoding") or "utf-8")
    if host is not None and csv is None:
        raise ValueError("a party host needs its file of records")
    bounds = getattr(spec.precision, "bounds", None)
    x = np.full(n, 0.0 if bounds is None else float(bounds[0]))
    rows = None
    if host is not None:
        from .rows import host_file_rows
        rows = host_file_rows(str(csv), host, data)
    if want == 1:
        if host is not None:
            x[host.start:host.stop] = read_column(str(csv), columns[0], sep=sep, header=header,
                                                  encoding=encoding, rows=rows)
        return x, None, {"column": columns[0], "source": source, "notes": []}
    y = np.zeros(n, dtype=np.int64)
    positive = data.get("positive")
    if host is not None:
        v, lab, _ = read_labelled(str(csv), columns[0], columns[1], positive, sep=sep,
                                  header=header, encoding=encoding, rows=rows)
        x[host.start:host.stop] = v
        y[host.start:host.stop] = lab
    value = "score" if command == "roc" else "prob"
    return x, y, {value: columns[0], "label": columns[1], "n": n,
                  "notes": [label_rule_note(columns[1], positive)]}


def program(command: str, spec: Any, values: np.ndarray, labels: np.ndarray | None) -> Program:
    """The statistic's program (:class:`ustat.executors.Program`) on these rows."""
    if command == "ecdf":
        from ..ecdf.release import ecdf_program
        return ecdf_program(values, spec)
    if command == "quantile":
        from ..ecdf.quantiles import quantile_program
        return quantile_program(values, spec)
    if command == "roc":
        from ..ecdf.roc import roc_program
        return roc_program(values, cast("np.ndarray", labels), spec)    # host_rows' labels
    if command == "hl":
        from ..ecdf.hosmer_lemeshow import hl_program
        return hl_program(values, cast("np.ndarray", labels), spec)      # host_rows' labels
    raise ValueError(f"not an ECDF command: {command!r}")
