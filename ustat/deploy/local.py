"""``ustat deploy run --local DIR``: every participant of a deployment as its own process here.

:func:`run_local` starts one ``ustat serve`` per role and one ``ustat
party`` per party host (``python -m ustat ...``, each a separate OS
process listening on its address from ``deploy.toml``, normally
127.0.0.1), waits for them, and returns the release printed by the
aggregator together with what every participant wrote to its sockets. It
is the demo of a deployment and what the tests run; on real hosts the same
commands run one per machine (README, "Running on real hosts").

Faults: when a process exits non-zero, the others must stop by
themselves within the step timeout (their peers' errors cascade through
the connections and the relay); any still running ``timeout + grace``
seconds later is killed and reported. :class:`DeployError` carries every
participant's last error line; no release is returned.
"""

from __future__ import annotations

import json
import math
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping
from contextlib import ExitStack
from typing import IO, TYPE_CHECKING

from .config import Config, load

if TYPE_CHECKING:
    from collections.abc import Callable


class DeployError(RuntimeError):
    """A deployed run stopped with no release; ``errors`` maps participant -> its error."""

    def __init__(self, message, errors, statuses, killed=()):
        super().__init__(message)
        self.errors = errors
        self.statuses = statuses
        self.killed = set(killed)       # those the supervisor had to kill


def commands(cfg: Config, csv: str | Mapping[str, str] | None, report_dir: str, *,
             json_out: bool = True) -> dict:
    """The command line of every participant: ``{name: argv}``. ``csv``: one file every party
    host reads its own rows of, or ``{host name: file}``, each host's own file (then no
    process is ever given another host's rows)."""
    out = {}
    for p in cfg.participants:
        base = [sys.executable, "-m", "ustat"]
        if p.parties is not None:
            own = csv.get(p.name) if isinstance(csv, Mapping) else csv
            if own is None:
                raise ValueError(f"the party hosts need --csv FILE (each reads its own rows; "
                                 f"none for {p.name})")
            r = p.parties
            argv = base + ["party", "--config", cfg.path, "--id",
                           f"{r.start}-{r.stop - 1}", "--csv", own]
        else:
            argv = base + ["serve", "--config", cfg.path, "--role", p.role]
        argv += ["--report", os.path.join(report_dir, f"{p.name}.json")]
        if json_out:
            argv.append("--json")
        out[p.name] = argv
    return out


def run_local(directory: str, csv: str | Mapping[str, str] | None = None, *,
              grace: float = 5.0,
              env: dict | None = None,
              on_start: Callable[[Mapping[str, subprocess.Popen[bytes]],
                                  Mapping[str, IO[bytes]]], None] | None = None) -> dict:
    """Run every participant of the deployment in ``directory`` as a process here.

    ``csv``: as :func:`commands` (one file, or each party host's own). Every participant is
    a new ``python -m ustat`` process (started with exec, so it shares no memory with this
    one) that reads only its own rows. Returns ``{"release": the aggregator's release (the
    dict of ``ustat estimate --json``), "participants": [{"name", "role", "wire", "seconds",
    "status"}], "seconds": wall time}``. ``on_start(procs)``: called with
    ``{name: Popen}`` and ``{name: file}`` (each one's stderr, its progress)
    once all are started (tests use it to inject faults).
    Raises :class:`DeployError` when any participant fails.
    """
    cfg = load(directory)
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="ustat-deploy-") as reports, ExitStack() as files:
        argv = commands(cfg, csv, reports)
        procs = {}
        logs = {}
        try:
            for name, cmd in argv.items():
                logs[name] = files.enter_context(tempfile.TemporaryFile())
                procs[name] = subprocess.Popen(cmd, stdout=subprocess.DEVNULL,
                                               stderr=logs[name], stdin=subprocess.DEVNULL,
                                               env=env)
            if on_start is not None:
                on_start(procs, logs)
            statuses, killed = _wait(procs, cfg.timeout + grace)
        finally:
            for p in procs.values():
                if p.poll() is None:
                    p.kill()
                    p.wait(10)
        errors = {n: _last_error(logs[n], s) for n, s in statuses.items() if s != 0}
        dropped = _dropped(cfg, reports, errors)
        errors = {n: e for n, e in errors.items() if n not in dropped}
        if errors:
            lines = [f"{n} (exit status {statuses[n]}"
                     + (", killed by the supervisor" if n in killed else "") + f"): {errors[n]}"
                     for n in errors]
            raise DeployError("the deployment stopped with no release:\n  "
                              + "\n  ".join(lines), errors, statuses, killed)
        parts, release = [], None
        for p in cfg.participants:
            if p.name in dropped:
                parts.append({"name": p.name, "role": p.role, "wire": {}, "seconds": 0.0,
                              "status": statuses[p.name], "dropped": dropped[p.name]})
                continue
            with open(os.path.join(reports, f"{p.name}.json")) as f:
                rep = json.load(f)
            release = rep.get("release") or release
            parts.append({"name": p.name, "role": p.role, "wire": rep["wire"],
                          "seconds": rep["seconds"], "status": statuses[p.name]})
    return {"release": release, "participants": parts, "seconds": time.perf_counter() - t0}


def _dropped(cfg: Config, reports: str, errors: dict) -> dict:
    """The failed party hosts a completed release went on without (``{name: error}``): only
    when every failure is a party host and the releasing participant wrote its release (which
    says ``dropouts`` when it left them out; a host that vanished after the last round is in
    the release with all its parties; an ECDF family's host lost after its keys reached
    both servers is too)."""
    hosts = {p.name for p in cfg.participants if p.parties is not None}
    if not errors or not set(errors) <= hosts:
        return {}
    for p in cfg.participants:
        path = os.path.join(reports, f"{p.name}.json")
        if p.parties is None and os.path.exists(path):
            with open(path) as f:
                if json.load(f).get("release"):
                    return dict(errors)
    return {}


def _wait(procs, stop_limit):
    """Wait for every process; after the first failure, give the others ``stop_limit`` s to
    stop by themselves, then kill them. When every process but one has ended well, the last
    one (a stalled relay, say) also gets ``stop_limit`` s. Returns (exit statuses, names
    killed)."""
    statuses: dict[str, int] = {}
    killed: set[str] = set()
    first_fail = last_but_one = None
    while len(statuses) < len(procs):
        for name, p in procs.items():
            code = None if name in statuses else p.poll()
            if code is not None:
                statuses[name] = code
                if code != 0 and first_fail is None:
                    first_fail = time.monotonic()
        if last_but_one is None and len(statuses) == len(procs) - 1:
            last_but_one = time.monotonic()
        deadline = min(t for t in (first_fail, last_but_one, math.inf) if t is not None)
        if time.monotonic() > deadline + stop_limit:
            for name, p in procs.items():
                if name not in statuses:
                    p.kill()
                    statuses[name] = p.wait(10)
                    killed.add(name)
            break
        time.sleep(0.05)
    return statuses, killed


def _last_error(f, status: int | None = None) -> str:
    """A participant's error: its ``ustat: error:`` line; for one killed by a signal with no
    such line, the signal (its last progress line is not an error)."""
    f.seek(0)
    lines = [ln for ln in f.read().decode(errors="replace").splitlines() if ln.strip()]
    errs = [ln for ln in lines if ln.startswith("ustat: error:")]
    if errs:
        return errs[-1][len("ustat: error: "):]
    if status is not None and status < 0:
        try:
            name = signal.Signals(-status).name
        except ValueError:
            name = f"signal {-status}"
        return f"killed by {name}" + (f" (its last words: {lines[-1]})" if lines else "")
    return lines[-1] if lines else "no message (killed?)"
