"""The tasks of a run's chunks: the inputs each worker gathers, the window of submitted
tasks, and the worker process's side.

Shared by every engine (:mod:`ustat.umpc.engines`: in process, a pool of
workers; :mod:`ustat.umpc.worker_pool`: the kept workers; :mod:`ustat.umpc.dask_runner`:
Dask). :class:`ChunkInputs` holds the run's encoded records and edges and
gives each chunk's member values; :func:`windowed` keeps at most a window of
tasks running and yields their results in task order (so a run's result
does not depend on which worker finished first); :func:`_init_worker` and
:func:`_worker_chunk` are what a worker process runs.
"""

from __future__ import annotations

import collections
import contextlib
import itertools
import os
import threading
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np

from mpc.machine import memory

from .chunk import ChunkResult, ChunkSpec, run_chunk

__all__ = ["HOLD", "WINDOW_PER_WORKER", "ChunkInputs", "default_workers", "windowed"]

#: Chunks in flight per worker (submitted, not yet merged).
WINDOW_PER_WORKER = 2

_WORKER_SPEC: ChunkSpec | None = None      # set in each worker process by its initializer
_WORKER_INPUTS: ChunkInputs | None = None  # ditto: the run's ChunkInputs, when tasks are indices


@dataclass(frozen=True)
class ChunkInputs:
    """Every chunk's member values, gathered where the chunk runs (the tasks of a run).

    ``enc``: the (n, d) encoded records (uint64, or uint32 from :meth:`of_run`
    when every word fits); ``edges``: the (m, k) edge list, cut into
    ``ceil(m / chunk_size)`` chunks of equal size (differing by
    at most one edge; chunk i is edges ``[i m // C, (i + 1) m // C)``), so
    that no short last chunk leaves a worker idle at the end of a run (at
    m = 2 x 10^6 and chunk_size = 2^17: 16 chunks of 125,000 edges instead of
    15 full ones and one of 34,848; 2 workers then finish together). A
    forked worker process inherits both arrays at fork (no copy, no
    pickling), so a task carries only its index and each worker gathers its
    own chunk's values (m_c k d words) from them; threads gather in the
    worker thread. Iterating gives the ``(index, values)`` pairs (for Dask,
    where values travel with the task).
    """

    enc: np.ndarray
    edges: np.ndarray
    chunk_size: int

    @classmethod
    def of_run(cls, enc: np.ndarray, edges: np.ndarray, chunk_size: int) -> ChunkInputs:
        """The inputs of a run, with ``enc`` as uint32 when every encoded word fits in 32 bits
        (e.g. Gini's records on [0, 1]): each chunk's values are then half the bytes to
        gather, pickle to a worker or send to a Dask task; :func:`run_chunk` widens them
        back to uint64 (the same words)."""
        if enc.dtype == np.uint64 and enc.size and int(enc.max()) < (1 << 32):
            enc = enc.astype(np.uint32)
        return cls(enc, edges, chunk_size)

    def __len__(self) -> int:
        return -(-self.edges.shape[0] // self.chunk_size)

    def bounds(self, index: int) -> tuple:
        """Chunk ``index``'s edges ``[start, stop)``: equal sizes, differing by at most one."""
        m, count = self.edges.shape[0], len(self)
        return index * m // count, (index + 1) * m // count

    def edges_of(self, index: int) -> np.ndarray:
        """The (m_c, k) edges of chunk ``index`` (a view)."""
        start, stop = self.bounds(index)
        return self.edges[start:stop]

    def values(self, index: int) -> np.ndarray:
        """``values[e, j]``: member j's encoded record of edge e of chunk ``index``, (m_c, k, d)."""
        return np.take(self.enc, self.edges_of(index), axis=0)

    def __iter__(self) -> Iterator[tuple[int, np.ndarray]]:
        return ((i, self.values(i)) for i in range(len(self)))


def default_workers() -> int:
    """All cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:          # pragma: no cover - not Linux
        return os.cpu_count() or 1


def windowed(submit: Callable[[int, Any], Any], tasks: Iterable, window: int,
             meanwhile: Callable[[], object] | None = None, background: bool = True,
             started: Iterable = ()) -> Iterator:
    """Submit tasks keeping at most ``window`` running; yield results in task order.

    ``started``: futures of the tasks before ``tasks``, already submitted
    (prefetched chunks); their results come first.

    ``submit(index, values)`` returns a future (``concurrent.futures``, Dask,
    or :class:`_Done` for the in-process loop). ``meanwhile()`` runs after
    the first window is submitted and before the first result is yielded:
    with ``background`` in a thread, while this thread keeps the workers busy
    (results wait, at most ``HOLD * window`` of them, and nothing is merged
    until it returns); otherwise right here. On an error or an early exit the
    pending futures are cancelled.
    """
    pending = collections.deque(started)
    tasks = iter(tasks)
    try:
        for index, values in itertools.islice(tasks, max(0, window - len(pending))):
            pending.append(submit(index, values))
        if meanwhile is not None:
            if background:
                _keep_busy(meanwhile, submit, tasks, pending, window)
            else:
                meanwhile()
        for index, values in tasks:
            yield pending.popleft().result()
            pending.append(submit(index, values))
        while pending:
            yield pending.popleft().result()
    finally:
        for fut in pending:
            fut.cancel()


def abandon(pool: Any) -> None:
    """Stop a process pool now: cancel its queued chunks and end its workers.

    For a run that stops early (Ctrl-C, SIGTERM, an error): without it the
    interpreter's exit waits until the workers have run every chunk already
    handed to them, which at n = 2000 and 800,000 edges took about a minute
    after Ctrl-C. A thread pool's running chunks cannot be ended; its queued
    ones are cancelled.
    """
    kill = getattr(pool, "kill_workers", None)                 # Python 3.14
    procs = list((getattr(pool, "_processes", None) or {}).values())
    pool.shutdown(wait=False, cancel_futures=True)
    if kill is not None:
        with contextlib.suppress(Exception):
            kill()
    for proc in procs:      # SIGKILL: a forked worker may have inherited a SIGTERM handler
        with contextlib.suppress(Exception):
            proc.kill()


@contextlib.contextmanager
def abandoned_on_error(pool: Any) -> Iterator[Any]:
    """``with abandoned_on_error(pool):`` :func:`abandon` ``pool`` if the block stops early
    (any exception, including Ctrl-C and a generator closed before its end)."""
    try:
        yield pool
    except BaseException:
        abandon(pool)
        raise


#: While the caller's own work runs, up to HOLD windows of finished chunks may wait.
HOLD = 4


def _keep_busy(meanwhile, submit, tasks, pending, window) -> None:
    """Run ``meanwhile()`` in a thread; until it returns, top up the running tasks.

    Only this thread submits; the other one does the caller's work (e.g. the
    noise step on the session's network), which nothing here touches.
    """
    error = []

    def work():
        try:
            meanwhile()
        except BaseException as exc:  # re-raised in the caller's thread
            error.append(exc)

    # a daemon: a Ctrl-C in this thread does not wait for the caller's work at exit
    thread = threading.Thread(target=work, name="umpc-meanwhile", daemon=True)
    thread.start()
    while thread.is_alive():
        running = sum(not fut.done() for fut in pending)
        if running < window and len(pending) < HOLD * window:
            nxt = next(tasks, None)
            if nxt is not None:
                pending.append(submit(*nxt))
                continue
        thread.join(0.005)
    if error:
        raise error[0]


class _Done:
    """A future that runs its chunk when its result is asked for (the in-process loop)."""

    def __init__(self, spec: ChunkSpec, index: int, values: np.ndarray):
        self.args = (spec, index, values)

    @classmethod
    def run(cls, spec: ChunkSpec) -> Callable[[int, np.ndarray], _Done]:
        return lambda index, values: cls(spec, index, values)

    def result(self) -> ChunkResult:
        return run_chunk(*self.args)

    def cancel(self) -> bool:
        return True


def _init_worker(spec: ChunkSpec | None, inputs: ChunkInputs | None = None) -> None:
    global _WORKER_SPEC, _WORKER_INPUTS
    _WORKER_SPEC, _WORKER_INPUTS = spec, inputs
    if memory.wanted():
        memory.retain_freed_memory()


def _worker_chunk(index: int, values: np.ndarray | None) -> ChunkResult:
    # a pool whose tasks are _worker_chunk was started with the run's spec (and its inputs when
    # a task carries only its index)
    assert _WORKER_SPEC is not None
    if values is None:
        assert _WORKER_INPUTS is not None
        values = _WORKER_INPUTS.values(index)
    return run_chunk(_WORKER_SPEC, index, values)
