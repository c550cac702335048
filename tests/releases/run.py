"""Run one command of :mod:`tests.releases.commands` in this process; its JSON with volatile
fields (wall times, machine-dependent counts, paths) removed."""

from __future__ import annotations

import contextlib
import io
import json
import os

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.normpath(os.path.join(HERE, "..", "..", "..", "shared", "data"))

#: keys whose values depend on the machine or the moment, never on the protocol's randomness
VOLATILE = ("seconds", "stage_seconds", "noise_seconds", "workers", "wire", "process_costs",
            "time", "elapsed", "chunks", "relay", "source", "path", "launch_seconds")


def argv_of(argv: list) -> list:
    return [a.replace("DATA", DATA).replace("HERE", HERE) for a in argv] + ["--json",
                                                                            "--no-progress"]


def run(argv: list) -> dict:
    """``ustat ARGV --json --no-progress`` in this process: the parsed JSON (stable fields)."""
    from ustat.cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(argv_of(argv))
    if code != 0:
        raise RuntimeError(f"ustat {' '.join(argv)} exited {code}: {err.getvalue()}")
    return stable(json.loads(out.getvalue()))


def stable(obj):
    """``obj`` without the volatile keys (recursively)."""
    if isinstance(obj, dict):
        return {k: stable(v) for k, v in obj.items()
                if not any(k == key or k.endswith("_" + key) for key in VOLATILE)}
    if isinstance(obj, list):
        return [stable(v) for v in obj]
    return obj
