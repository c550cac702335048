"""Worker threads for the block loops of Gen/Eval (internal): :mod:`mpc.machine.threads`, with the
batch size below which FSS uses one thread."""

from __future__ import annotations

from mpc.machine import threads
from mpc.machine.threads import cpu_count, run_blocks

__all__ = ["PARALLEL_MIN", "check_workers", "cpu_count", "run_blocks"]

PARALLEL_MIN = 1 << 15      # instances (keys x points) below which one worker is used


def check_workers(workers: int | None, size: int) -> int:
    """Resolve ``workers``: None -> all cores for large batches, 1 for small ones."""
    return threads.check_workers(workers, size, PARALLEL_MIN)
