"""Blocks of instances for garbling and evaluation: their size, their threads, their scratch.

Instances are processed in blocks whose labels (n_slots x block x 16 bytes)
stay in cache: gathering a step's input rows then costs no DRAM traffic. The
blocks run on threads (:mod:`mpc.machine.threads`) in a number that is a multiple of
the thread count, each thread one call with its share (its buffers allocated
once). Each block reads and writes only its own instances, so results do not
depend on the block size or the thread count (:mod:`mpc.gc.garble`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING

import numpy as np

from mpc.gc.schedule import STEP_AND
from mpc.machine.threads import check_workers, cpu_count, run_lanes

if TYPE_CHECKING:
    from mpc.gc.schedule import Schedule

#: A block of instances: ``(p0, p1)``, instances p0..p1-1.
Span = tuple[int, int]

_U64 = np.uint64
BLOCK_BYTES = 1 << 22
MIN_BLOCK = 64
#: ``workers=None`` uses all cores only when a thread's AND step covers at least this many
#: labels (mean AND gates per AND layer x instances per block); below it the numpy calls are
#: too small to run outside the GIL (measured: a 64-bit adder, one AND per layer, garbled
#: 1.5x slower on two threads; 1000 AES-128, 107 per layer, 1.3 to 1.7x faster)
PARALLEL_MIN = 1 << 14


def block_size(sched: Schedule, P: int, workers: int) -> int:
    """Instances per block: at most what keeps the labels in cache, in a number of blocks
    that is a multiple of ``workers`` (equal shares for the threads)."""
    cache = max(MIN_BLOCK, BLOCK_BYTES // (16 * max(sched.n_slots, 1)))
    count = -(-max(P, 1) // cache)
    count = -(-count // workers) * workers
    return max(1, -(-P // count))


def threads_for(sched: Schedule, P: int, workers: int | None = None) -> int:
    """Threads :func:`~mpc.gc.garble.garble` / ``evaluate_garbled`` use for P instances."""
    if workers is not None:
        return check_workers(workers, 0, 1)
    w = cpu_count()
    width = sched.n_and / max(sched.and_depth, 1)
    return w if w > 1 and width * block_size(sched, P, w) >= PARALLEL_MIN else 1


def run_blocks(lane: Callable[[list[Span]], object], sched: Schedule, P: int,
               workers: int | None) -> None:
    """``lane(spans)`` over the blocks ``(p0, p1)`` of P instances, on the resolved number of
    threads (each thread one call with its share of the blocks)."""
    w = threads_for(sched, P, workers)
    size = block_size(sched, P, w)
    run_lanes(lane, [(p0, min(P, p0 + size)) for p0 in range(0, P, size)], w)


def blocks(sched: Schedule, hashes: int, spans: list[Span],
           tweaks: dict) -> Iterator[tuple[int, int, np.ndarray, Workspace]]:
    """Yield ``(p0, p1, labels, workspace)`` for the blocks ``spans`` (buffers allocated once
    for the largest and reused; a smaller block gets views and its own workspace).
    ``hashes``: hash rows per AND gate (4 garbling, 2 evaluating); ``tweaks``: their gate
    tweaks per AND step."""
    if not spans:
        return
    size = max(p1 - p0 for p0, p1 in spans)
    labels = np.empty((sched.n_slots, size, 2), dtype=_U64)
    ws = Workspace(sched, size, hashes, tweaks)
    for p0, p1 in spans:
        if p1 - p0 != ws.P:
            labels = labels[:, :p1 - p0]
            ws = Workspace(sched, p1 - p0, hashes, tweaks)
        yield p0, p1, labels, ws


class Workspace:
    """Preallocated scratch for the largest step (no multi-MB allocation per step)."""

    def __init__(self, sched: Schedule, P: int, hashes: int, tweaks: dict):
        self.tweaks = tweaks
        kmax = max([st.size for st in sched.steps] + [1])
        kand = max([st.size for st in sched.steps if st.kind == STEP_AND] + [1])
        self.P = P
        self.x = np.empty(hashes * kand * P * 2, dtype=_U64)
        self.y = np.empty_like(self.x)
        self.z = np.empty_like(self.x)
        self.m1 = np.empty(2 * kmax * P * 2, dtype=_U64)
        self.m2 = np.empty_like(self.m1)

    def blocks(self, buf: np.ndarray, *shape: int) -> np.ndarray:
        n = 1
        for d in shape:
            n *= d
        return buf[:n].reshape(shape)
