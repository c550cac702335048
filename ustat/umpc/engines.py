"""Where the chunks of a U-MPC run execute: in process, on a pool of workers, or on Dask.

Every engine calls the same :func:`ustat.umpc.chunk.run_chunk` on the same
(spec, index, values) and yields the :class:`~ustat.umpc.chunk.ChunkResult`
objects *in chunk order*, whatever order they finished in, so that the
caller's merge (shares into each party's running sum, traffic into the
session's network) is the same for any number of workers: results are
bit-identical for 1, 2, ... workers and on a cluster (the chunk size does not
depend on the number of workers, and each chunk's randomness comes from its
index).

Engines:

- ``workers=1``: a plain loop in the calling thread.
- ``workers=N, pool="processes"`` (default): N forked worker processes
  (``concurrent.futures``). Measured on the 2-core development machine
  (``benchmarks/umpc.py``, Gini at n = 10^6, 2 workers versus 1): processes
  1.69x, threads 1.59x; with the FSS code as it was before its rework,
  threads were slower than one worker (0.8x: short numpy and AES calls
  between which Python holds the GIL). Processes do not depend on every hot
  call releasing the GIL, so they are the default. The spec reaches the
  workers once, at fork (custom kernels defined in ``__main__`` work); each
  task carries only its chunk's values and returns shares and traffic.
- ``pool="threads"``: N threads (platforms without fork, measurements).
- ``scheduler=...``: Dask distributed (:mod:`ustat.umpc.dask_runner`).

Memory: at most ``2 * workers`` chunks run at once; while the caller's own
work (the noise step) runs, finished chunks wait to be merged, at most
``HOLD = 4`` windows of them. So the run holds O(workers * chunk) of chunk
data besides its O(n + |E|) arrays. FSS inside a chunk runs single-threaded (the chunk's
session has ``workers = 1``, which :class:`ustat.secure.SecureOps` passes to
the gates): the parallelism is across chunks, never nested, and a worker
forked while the parent's FSS thread pool exists never waits on that pool
(its threads do not survive the fork).
"""

from __future__ import annotations

import collections
import itertools
import multiprocessing
import os
import threading
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor
from typing import Callable, Iterable, Iterator, Optional

from .chunk import ChunkResult, ChunkSpec, run_chunk

POOLS = ("processes", "threads")
#: Chunks in flight per worker (submitted, not yet merged).
WINDOW_PER_WORKER = 2

_WORKER_SPEC = None        # set in each worker process by its initializer


def default_workers() -> int:
    """All cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:          # pragma: no cover - not Linux
        return os.cpu_count() or 1


def run_chunks(spec: ChunkSpec, tasks: Iterable, n_chunks: int, *, workers: int,
               pool: str = "processes", scheduler=None,
               meanwhile: Optional[Callable[[], None]] = None) -> Iterator[ChunkResult]:
    """Run ``run_chunk(spec, index, values)`` for every ``(index, values)`` of ``tasks``.

    Yields the results in the order of ``tasks``. ``tasks`` is consumed
    lazily (at most the window ahead), so its values can be gathered on
    demand. ``meanwhile`` (e.g. the noise step) is called once the first
    chunks are submitted and before any result is yielded, with every
    engine, so the caller's work overlaps the workers' and happens at the
    same point of the merge whatever the engine.
    """
    if scheduler is not None:
        from . import dask_runner

        yield from dask_runner.run_chunks(spec, tasks, scheduler=scheduler, workers=workers,
                                          meanwhile=meanwhile)
    elif workers == 1 or n_chunks <= 1:
        yield from windowed(_Done.run(spec), tasks, 1, meanwhile, background=False)
    elif pool == "threads":
        with ThreadPoolExecutor(workers) as ex:
            yield from windowed(lambda i, v: ex.submit(run_chunk, spec, i, v), tasks,
                                WINDOW_PER_WORKER * workers, meanwhile)
    else:
        methods = multiprocessing.get_all_start_methods()
        ctx = multiprocessing.get_context("fork" if "fork" in methods else "spawn")
        with ProcessPoolExecutor(workers, mp_context=ctx, initializer=_init_worker,
                                 initargs=(spec,)) as ex:
            yield from windowed(lambda i, v: ex.submit(_worker_chunk, i, v), tasks,
                                WINDOW_PER_WORKER * workers, meanwhile)


def windowed(submit, tasks: Iterable, window: int, meanwhile=None,
             background: bool = True) -> Iterator:
    """Submit tasks keeping at most ``window`` running; yield results in task order.

    ``submit(index, values)`` returns a future (``concurrent.futures``, Dask,
    or :class:`_Done` for the in-process loop). ``meanwhile()`` runs after
    the first window is submitted and before the first result is yielded:
    with ``background`` in a thread, while this thread keeps the workers busy
    (results wait, at most ``HOLD * window`` of them, and nothing is merged
    until it returns); otherwise right here. On an error or an early exit the
    pending futures are cancelled.
    """
    pending = collections.deque()
    tasks = iter(tasks)
    try:
        for index, values in itertools.islice(tasks, window):
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

    thread = threading.Thread(target=work, name="umpc-meanwhile")
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

    def __init__(self, spec, index, values):
        self.args = (spec, index, values)

    @classmethod
    def run(cls, spec):
        return lambda index, values: cls(spec, index, values)

    def result(self) -> ChunkResult:
        return run_chunk(*self.args)

    def cancel(self) -> bool:
        return True


def _init_worker(spec: ChunkSpec) -> None:
    global _WORKER_SPEC
    _WORKER_SPEC = spec


def _worker_chunk(index: int, values) -> ChunkResult:
    return run_chunk(_WORKER_SPEC, index, values)
