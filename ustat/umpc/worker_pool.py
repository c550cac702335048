"""Worker processes kept between U-MPC runs (internal; used by :mod:`ustat.umpc.engines`).

Forking a pool per run costs little in itself, but each fresh worker then
pays its first chunk's page faults (0.15 to 0.25 s at n = 10^6, chunk
2^17 edges, on this repository's 2-core VM) while the run's other steps
wait. A pool kept between runs starts warm: its workers already hold the
loaded compiled kernels and, with :mod:`mpc.machine.memory`, the pages of earlier
chunks. Each task carries the spec and its chunk's values (about 2 MB for
2^17 edges of one column: pickled, not inherited), or, for a prefetched
chunk (:func:`start_prefetch`), the address of the mailbox where its values
will appear (:mod:`ustat.umpc.prefetch`), so the pool serves any
run whose kernel's functions can be found by name in a process forked
earlier (:func:`reusable`); other runs fork a pool of their own.

Lifetime: the pool is forked at the first run that can use it and shut
down after :data:`IDLE_SECONDS` without a run (a daemon timer), at
interpreter exit, or by :func:`shutdown_workers`; a pool of another size
replaces it, and a second run while it is busy (another thread) forks a
pool of its own. A broken pool (a worker killed) is replaced at the next
run, and so is one whose run stopped early (Ctrl-C, SIGTERM, an error): its
queued chunks are cancelled and its workers ended at once, so the
interpreter's exit does not wait for them. A module whose kernel functions
are reloaded (``importlib.reload``) after the pool started needs
:func:`shutdown_workers` first: the workers import kernels by name and keep
the code they loaded. Results are the same bits as with any other engine:
the chunks, their streams and their merge order do not depend on where they
run.
"""

from __future__ import annotations

import multiprocessing
import threading
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ProcessPoolExecutor
from typing import TYPE_CHECKING, Any

import numpy as np

from .chunk import ChunkResult, ChunkSpec, run_chunk

if TYPE_CHECKING:
    from .prefetch import Prefetch

#: Seconds without a run after which the kept workers stop.
IDLE_SECONDS = 60.0
_REUSED: dict[str, Any] = {"pool": None, "workers": 0, "timer": None, "busy": 0}
_REUSED_LOCK = threading.Lock()


def reusable(spec: ChunkSpec) -> bool:
    """Whether a long-lived worker can run this spec's chunks: the spec travels with each task,
    so its kernel's functions must be importable by name in a process forked earlier
    (module-level functions of a module other than ``__main__``)."""
    kern = spec.kernel
    for name in ("plain", "secure", "aux", "finalize", "notes"):
        fn = getattr(kern, name, None)
        if fn is None:
            continue
        mod, qual = getattr(fn, "__module__", None), getattr(fn, "__qualname__", "")
        if mod in (None, "__main__") or "<" in qual:
            return False
    return True


def _acquire(workers: int) -> ProcessPoolExecutor | None:
    """The kept pool of ``workers`` processes, marked busy (forked if needed), or None when
    another run is using it."""
    with _REUSED_LOCK:
        if _REUSED["timer"] is not None:
            _REUSED["timer"].cancel()
            _REUSED["timer"] = None
        pool = _REUSED["pool"]
        broken = pool is not None and getattr(pool, "_broken", False)
        if pool is None or broken or _REUSED["workers"] != workers or _REUSED["busy"]:
            if pool is not None and not _REUSED["busy"]:
                pool.shutdown(wait=False, cancel_futures=True)
            if _REUSED["busy"]:                       # a concurrent run: a pool of its own
                return None
            from .tasks import _init_worker

            pool = ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("fork"),
                                       initializer=_init_worker, initargs=(None, None))
            _REUSED.update(pool=pool, workers=workers)
        _REUSED["busy"] += 1
        return pool


def _release(pool: ProcessPoolExecutor) -> None:
    with _REUSED_LOCK:
        _REUSED["busy"] -= 1
        if _REUSED["pool"] is pool and not _REUSED["busy"]:
            timer = threading.Timer(IDLE_SECONDS, shutdown_workers)
            timer.daemon = True
            _REUSED["timer"] = timer
            timer.start()


def shutdown_workers() -> None:
    """Stop the kept worker processes now (they also stop after IDLE_SECONDS without a run)."""
    with _REUSED_LOCK:
        pool, busy = _REUSED["pool"], _REUSED["busy"]
        if pool is None or busy:
            return
        if _REUSED["timer"] is not None:
            _REUSED["timer"].cancel()
        _REUSED.update(pool=None, workers=0, timer=None)
    pool.shutdown(wait=False, cancel_futures=True)


def start_prefetch(spec: ChunkSpec, sizes: list[tuple[int, int]],
                   workers: int) -> Prefetch | None:
    """A :class:`~ustat.umpc.prefetch.Prefetch` of chunks ``sizes`` on the kept pool, which
    stays acquired until the prefetch is closed; None if the pool is busy."""
    from .prefetch import Prefetch

    pool = _acquire(workers)
    if pool is None:
        return None
    try:
        return Prefetch(pool, spec, sizes, spec.kernel.degree, spec.kernel.columns,
                        on_close=lambda: _release(pool))
    except BaseException:
        _release(pool)
        raise


def run_chunks(spec: ChunkSpec, tasks: Iterable[tuple[int, np.ndarray]], workers: int,
               meanwhile: Callable[[], object] | None,
               prefetch: Prefetch | None = None) -> Iterator[ChunkResult]:
    """:func:`ustat.umpc.tasks.windowed` over the kept pool; ``tasks``: (index, values) pairs
    (the chunks after ``prefetch``'s, whose results come first)."""
    from .tasks import WINDOW_PER_WORKER, _init_worker, _worker_chunk, abandoned_on_error, windowed

    if prefetch is not None:
        kept = prefetch.pool
        try:
            yield from windowed(lambda i, v: kept.submit(run_chunk, spec, i, v), tasks,
                                WINDOW_PER_WORKER * workers, meanwhile, started=prefetch.futures)
        except BaseException:
            _discard(kept)
            raise
        return
    pool = _acquire(workers)
    if pool is None:
        with ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("fork"),
                                 initializer=_init_worker, initargs=(spec, None)) as ex, \
                abandoned_on_error(ex):
            yield from windowed(lambda i, v: ex.submit(_worker_chunk, i, v), tasks,
                                WINDOW_PER_WORKER * workers, meanwhile)
        return
    try:
        yield from windowed(lambda i, v: pool.submit(run_chunk, spec, i, v), tasks,
                            WINDOW_PER_WORKER * workers, meanwhile)
    except BaseException:
        _discard(pool)
        raise
    finally:
        _release(pool)


def _discard(pool: Any) -> None:
    """A run on the kept pool stopped early (Ctrl-C, an error): the pool is no longer kept, its
    queued chunks are cancelled and its workers ended (:func:`~ustat.umpc.tasks.abandon`);
    the next run forks a new one."""
    from .tasks import abandon

    with _REUSED_LOCK:
        if _REUSED["pool"] is pool:
            _REUSED.update(pool=None, workers=0)
    abandon(pool)
