"""The ``ustat`` command line (entry point ``ustat.cli:main``).

Subcommands:
  estimate   a differentially private U-statistic by the U-MPC protocol
             (Protocol 3.1 of Sinh and Ramon) or a baseline protocol
             (``--protocol``), on a CSV file or on the embedded synthetic
             default (n = 1000 uniform records).
  kernels    list the available kernels.
  protocols  list the protocols of ``estimate --protocol`` (U-MPC and the baselines).
  demo       share, multiply and open a batch among simulated parties and
             print the network's communication report (the engine demo).
  ecdf, quantile, roc, hl   private ECDF releases (:mod:`.ecdf`, :mod:`.ecdf_options`).
  deploy, serve, party      deployments on real hosts (:mod:`.deploy`).

Memory: the command keeps freed memory for reuse (:func:`mpc.machine.memory.retain_freed_memory`:
the same results, fewer page faults); ``USTAT_RETAIN_MEMORY=0`` turns that off.

``--json`` prints one JSON object on stdout; progress and warnings go to
stderr. User mistakes exit with status 2 and a one-line message, never a
traceback. Modules: :mod:`.parser` (options), :mod:`.records` (data),
:mod:`.estimate` (running), :mod:`.output` and :mod:`.protocols` (results),
:mod:`.commands` (kernels, demo). Reference: docs/guides/cli.md.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import signal
import sys

from mpc.machine import memory

from ..data.records import CLEAR_CHECKS
from .budget import Charge
from .commands import (
    cmd_demo,
    cmd_kernels,
    cmd_protocols,
    print_demo,
    print_kernels,
    print_protocols,
)
from .common import UsageError, check_csv_flags, error_text, warn
from .estimate import cmd_estimate

__all__ = ["CLEAR_CHECKS", "UsageError", "build_parser", "main"]


def _show_estimate(res: dict):
    from ..reports.umpc import print_estimate
    from .protocols import print_protocol

    (print_estimate if res.get("protocol", "umpc") == "umpc" else print_protocol)(res)


_COMMANDS = {
    "estimate": (cmd_estimate, _show_estimate),
    "kernels": (cmd_kernels, print_kernels),
    "protocols": (cmd_protocols, print_protocols),
    "demo": (cmd_demo, print_demo),
}


#: commands whose process shares its machine with other processes of the same run (a deployment):
#: each retaining up to a quarter of the memory made a 7-process local run 6x slower (measured);
#: they keep mpc.machine.memory.RUN_LIMIT instead, once they join the run (mpc.run.hosts.join)
SHARED_HOST_COMMANDS = ("serve", "party", "deploy")


def build_parser() -> argparse.ArgumentParser:
    """The ``ustat`` argument parser (extension subcommands registered too)."""
    from .parser import build_parser as _build

    return _build(_COMMANDS)


def main(argv: list[str] | None = None) -> int:
    try:
        from .parser import join_dash_values

        argv = join_dash_values(list(sys.argv[1:] if argv is None else argv))
        ap = build_parser()
        args = ap.parse_args(argv)
        if args.command is None:
            ap.print_help()
            return 0
        run, show = _COMMANDS[args.command]
        check_csv_flags(args)
        if memory.wanted() and args.command not in SHARED_HOST_COMMANDS:
            memory.retain_freed_memory()    # reuse freed pages: faster, same results
        res = _charged_run(run, args)
        if args.json:
            print(json.dumps(res, default=_json_default))
        else:
            show(res)
        sys.stdout.flush()
        return 0
    except (UsageError, ValueError, TypeError, OSError) as exc:
        if isinstance(exc, BrokenPipeError):
            return _broken_pipe()
        print(f"ustat: error: {error_text(exc)}", file=sys.stderr)
        return 2
    except RuntimeError as exc:
        from mpc.run.launch import LaunchError
        if not isinstance(exc, LaunchError):
            raise
        print(f"ustat: error: {exc}", file=sys.stderr)      # a process of --processes failed
        return 2
    except MemoryError:
        print("ustat: error: not enough memory for this run; use fewer records (--n), edges "
              "(--edges) or thresholds (--thresholds), or more --workers chunks", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("ustat: interrupted", file=sys.stderr)
        return 130
    except Terminated:
        print("ustat: terminated", file=sys.stderr)
        return 143


def _charged_run(run, args) -> dict:
    """run(args) with its --budget-file reservation confirmed on success, given back when it
    fails or is interrupted before computing started, and confirmed (with a warning) when it
    stops after (the command reserves through ``args.charge``; :mod:`.budget`)."""
    charge = args.charge = Charge(args)
    try:
        res = run(args)
    except BaseException:
        try:
            if charge.settle(ok=False):
                warn(charge.charged_text())
        except (ValueError, OSError) as exc:        # the original error matters more
            warn(f"the budget reservation could not be settled: {exc}")
        raise
    charge.settle(ok=True)
    summary = charge.summary()
    if summary is not None:
        res["budget"] = summary
    return res


class Terminated(BaseException):
    """SIGTERM in the ``ustat`` command: stop like Ctrl-C (a reservation given back before
    computing started, charged after), status 143."""


def entry() -> int:
    """The ``ustat`` command (and ``python -m ustat``): :func:`main`, then a quiet exit on a
    Ctrl-C that arrives while the interpreter shuts down.

    SIGTERM (``kill``) during the run stops it like Ctrl-C, status 143: the budget
    reservation is given back if computing had not started, else it stays charged
    (:mod:`.budget`). After the result is
    printed, the interpreter still joins the worker pool's threads (workers
    finish the chunk they hold); a Ctrl-C then would end in a
    ``KeyboardInterrupt`` traceback from ``threading``, or kill the process by
    the signal. From here on it exits at once with 130, as one during the run
    does. Only the command installs these handlers: :func:`main` called from
    a program leaves the caller's signal handling alone.
    """
    pid = os.getpid()

    def terminate(signum, frame):
        if os.getpid() != pid:              # a forked worker: die as it would by default
            signal.signal(signal.SIGTERM, signal.SIG_DFL)
            os.kill(os.getpid(), signal.SIGTERM)
            return
        raise Terminated()

    signal.signal(signal.SIGTERM, terminate)
    code = main()
    signal.signal(signal.SIGINT, _exit_interrupted)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    return code


def _exit_interrupted(signum, frame):
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):
            stream.flush()
    os._exit(130)


def _json_default(obj):
    """numpy scalars and arrays (e.g. in fields of newer results) as Python numbers and lists."""
    for attr in ("tolist", "item"):
        if callable(getattr(obj, attr, None)):
            return getattr(obj, attr)()
    raise TypeError(f"not JSON serializable: {type(obj).__name__}")


def _broken_pipe() -> int:
    """The reader went away (``ustat kernels | head``): stop quietly, like other tools."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())       # Python's final flush must not fail again
    return 141
