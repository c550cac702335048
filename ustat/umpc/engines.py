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
  (``concurrent.futures``). When the kernel's functions are importable by
  name (every built-in kernel, and module-level functions of a user's
  module), the workers are kept between runs (:mod:`ustat.umpc.worker_pool`:
  each task carries the spec and its chunk's values; a warm worker saves
  the fork and the first chunk's page faults, about 0.25 s per run at
  n = 10^6, and stops after a minute without runs). Otherwise (kernels
  defined in ``__main__`` or inside a function) a pool is forked for the
  run: the spec reaches the workers once, at fork, and so do the run's inputs
  when the caller passes a :class:`ChunkInputs` (then a task is a chunk
  index: each worker gathers its own chunk's values, nothing is pickled on
  the way in). Before forking, :func:`warm_up` runs a small chunk in the
  calling process once per kernel, so the workers inherit the loaded
  compiled FSS kernels (without it every worker of every run spent 0.4 to
  0.9 s of CPU loading them at its first chunk).
  When the chunks' sizes and spec are known before E (BalancedSamp, a
  kernel of degree 2 on the dealer backend), :func:`start_prefetch` hands
  the first ``WINDOW_PER_WORKER * workers`` chunks to the kept workers
  before E is drawn: each deals its preprocessing at once and waits for its
  values (:mod:`ustat.umpc.prefetch`), so the workers use the core the
  caller leaves idle while it draws E.
- ``pool="threads"``: N threads (platforms without fork, measurements).
- ``scheduler=...``: Dask distributed (:mod:`ustat.umpc.dask_runner`).

Worker processes keep freed memory for reuse (:func:`mpc.machine.memory.retain_freed_memory`
in each worker; the caller's process is left as it is): a chunk frees and
allocates arrays of tens of megabytes, and on fresh pages every chunk paid
its page faults again (measured, Gini at n = 10^6 on 2 workers: a chunk
0.25 to 0.30 s on fresh pages, 0.15 s on reused ones). ``USTAT_RETAIN_MEMORY=0``
turns that off. Their memory goes when they exit (with the run, or after
:data:`ustat.umpc.worker_pool.IDLE_SECONDS` without one).

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

import itertools
import multiprocessing
import os
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future, ProcessPoolExecutor, ThreadPoolExecutor
from dataclasses import replace
from typing import TYPE_CHECKING

import numpy as np

from . import worker_pool
from .chunk import ChunkResult, ChunkSpec, run_chunk
from .tasks import (
    WINDOW_PER_WORKER,
    ChunkInputs,
    _Done,
    _init_worker,
    _worker_chunk,
    abandoned_on_error,
    windowed,
)

if TYPE_CHECKING:
    from distributed import Client

    from .prefetch import Prefetch

POOLS = ("processes", "threads")

#: Edges of the chunk run in the calling process before a pool is forked (loads the
#: compiled kernels once, so the workers inherit them; above the FSS small-batch path).
WARM_UP_EDGES = 64

_WARM: set[tuple] = set()  # (kernel, backend, widths) already run in this process


def run_chunks(spec: ChunkSpec, tasks: Iterable, n_chunks: int, *, workers: int,
               pool: str = "processes", scheduler: str | Client | None = None,
               meanwhile: Callable[[], None] | None = None,
               prefetch: Prefetch | None = None) -> Iterator[ChunkResult]:
    """Run ``run_chunk(spec, index, values)`` for every ``(index, values)`` of ``tasks``.

    Yields the results in the order of ``tasks``. ``tasks`` is consumed
    lazily (at most the window ahead), so its values can be gathered on
    demand; a :class:`ChunkInputs` lets every worker gather its own chunk's
    values (a task is then just an index). ``meanwhile`` (e.g. the noise
    step) is called once the first chunks are submitted and before any
    result is yielded, with every engine, so the caller's work overlaps the
    workers' and happens at the same point of the merge whatever the engine.
    ``prefetch``: the run's :class:`~ustat.umpc.prefetch.Prefetch` from
    :func:`start_prefetch`, whose chunks come first; ``tasks`` then holds the
    other chunks only.
    """
    if scheduler is not None:
        from . import dask_runner

        yield from dask_runner.run_chunks(spec, tasks, scheduler=scheduler, workers=workers,
                                          meanwhile=meanwhile, prefetch=prefetch)
    elif prefetch is not None:
        yield from worker_pool.run_chunks(spec, tasks, workers, meanwhile, prefetch=prefetch)
    elif workers == 1 or n_chunks <= 1:
        yield from windowed(_Done.run(spec), tasks, 1, meanwhile, background=False)
    elif pool == "threads":
        with ThreadPoolExecutor(workers) as ex, abandoned_on_error(ex):
            if isinstance(tasks, ChunkInputs):
                inputs = tasks

                def submit(i: int, _: None) -> Future:
                    return ex.submit(_gathered_chunk, spec, inputs, i)

                yield from windowed(submit, _indices(inputs), WINDOW_PER_WORKER * workers,
                                    meanwhile)
            else:
                yield from windowed(lambda i, v: ex.submit(run_chunk, spec, i, v), tasks,
                                    WINDOW_PER_WORKER * workers, meanwhile)
    else:
        yield from _process_pool(spec, tasks, workers, meanwhile)


def _process_pool(spec, tasks, workers, meanwhile) -> Iterator[ChunkResult]:
    """Forked worker processes (spawned where fork is missing); the spec and inputs go at start."""
    methods = multiprocessing.get_all_start_methods()
    forked = "fork" in methods
    inputs = tasks if isinstance(tasks, ChunkInputs) else None
    if forked:
        tasks = warm_up(spec, tasks)
    ctx = multiprocessing.get_context("fork" if forked else "spawn")
    if forked and worker_pool.reusable(spec):
        yield from worker_pool.run_chunks(spec, tasks, workers, meanwhile)
        return
    with ProcessPoolExecutor(workers, mp_context=ctx, initializer=_init_worker,
                             initargs=(spec, inputs)) as ex, abandoned_on_error(ex):
        if inputs is not None:
            yield from windowed(lambda i, _: ex.submit(_worker_chunk, i, None),
                                _indices(inputs), WINDOW_PER_WORKER * workers, meanwhile)
        else:
            yield from windowed(lambda i, v: ex.submit(_worker_chunk, i, v), tasks,
                                WINDOW_PER_WORKER * workers, meanwhile)


def start_prefetch(spec: ChunkSpec, sizes: list[tuple[int, int]], *, workers: int,
                   pool: str = "processes",
                   scheduler: str | Client | None = None) -> Prefetch | None:
    """Start dealing the first chunks' preprocessing on the kept workers, before E is drawn.

    ``sizes``: ``(index, m_c)`` of every chunk of the run, in order. Returns a
    :class:`~ustat.umpc.prefetch.Prefetch` for the first ``WINDOW_PER_WORKER *
    workers`` chunks (pass it to :func:`run_chunks` with the other chunks as
    ``tasks``, and close it), or None when this engine has no kept workers to
    give it (threads, one worker, one chunk, no fork, a kernel the kept
    workers cannot import, a backend or kernel :func:`~ustat.umpc.chunk.can_prepare`
    refuses, or the kept pool busy with another run), or when the environment
    says ``USTAT_PREFETCH=0`` (for measurements; the results are the same bits).
    On Dask, only a ``distributed.Client`` whose workers all run on this
    machine (:func:`ustat.umpc.dask_runner.start_prefetch`).
    """
    from .chunk import can_prepare

    if os.environ.get("USTAT_PREFETCH", "1") == "0" or len(sizes) < 2 or not can_prepare(spec):
        return None
    if scheduler is not None:
        from . import dask_runner

        return dask_runner.start_prefetch(spec, sizes, scheduler)
    if (pool != "processes" or workers < 2
            or "fork" not in multiprocessing.get_all_start_methods()
            or not worker_pool.reusable(spec)):
        return None
    kern = spec.kernel
    warm_up(spec, [(0, np.zeros((WARM_UP_EDGES, kern.degree, kern.columns), np.uint64))])
    return worker_pool.start_prefetch(spec, sizes[:WINDOW_PER_WORKER * workers], workers)


def warm_up(spec: ChunkSpec, tasks: Iterable) -> Iterable:
    """Run a small chunk in this process once per kernel and ring, so forked workers start warm.

    A worker process forked before the compiled FSS kernels were loaded in
    its parent loads them at its first chunk (numba's dispatchers: about
    0.4 to 0.9 s of CPU per worker, every run, since each run forks its
    pool). Running the first ``WARM_UP_EDGES`` edges of the first chunk here
    first loads them once per process; the workers inherit them at fork.
    The chunk runs on its own stream (``spec.streams.derive("warm-up")``,
    used by no chunk) and its result is discarded: nothing of it is sent or
    counted. Returns ``tasks`` (re-chained if its first item was read).
    """
    kern = spec.kernel
    key = (getattr(kern, "name", None), id(kern), spec.backend, spec.bits, spec.frac_bits,
           spec.input_frac_bits)
    if key in _WARM:
        return tasks
    if isinstance(tasks, ChunkInputs):
        if len(tasks) == 0:
            return tasks
        values = tasks.values(0)
    else:
        it = iter(tasks)
        first = next(it, None)
        if first is None:
            return it
        tasks, values = itertools.chain([first], it), first[1]
    run_chunk(replace(spec, streams=spec.streams.derive("warm-up"), record_views=False), 0,
              np.ascontiguousarray(values[:WARM_UP_EDGES]))
    _WARM.add(key)
    return tasks


def _indices(inputs: ChunkInputs):
    return ((i, None) for i in range(len(inputs)))


def _gathered_chunk(spec: ChunkSpec, inputs: ChunkInputs, index: int) -> ChunkResult:
    return run_chunk(spec, index, inputs.values(index))
