"""Worker threads for block loops: FSS Gen/Eval and garbling (bit-identical for any count).

Threads, not processes: every step of a block (numpy ufuncs on arrays of
thousands of words, pycryptodome's AES through cffi, the compiled FSS
kernels) releases the GIL, so blocks run on all cores with no pickling of
keys or garbled tables (measured: ``workers_speedup`` in
``benchmarks/fss.py``; threads against processes for garbling in
``benchmarks/gc.py``). Each block reads its own slice of the inputs and
writes its own slice of the outputs; all randomness is drawn before the
blocks are dispatched, so results are bit-identical for any number of
workers and any scheduling order.

:func:`run_blocks` calls a function per block; :func:`run_lanes` gives each
thread its strided share of the blocks in one call, for work that keeps
scratch buffers across its blocks. :func:`check_workers` resolves a
``workers=`` argument (None: all cores for batches of at least ``minimum``).

Fork safety: a forked child inherits the parent's executor object but not
its threads (and possibly a held lock), so a child that used the pool would
wait forever on work no thread picks up. ``os.register_at_fork`` gives the
child a fresh lock and no executor; its first parallel call starts its own
threads.
"""

from __future__ import annotations

import numbers
import os
import threading
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

_T = TypeVar("_T")

_lock = threading.Lock()
_pool: ThreadPoolExecutor | None = None
_pool_size = 0


def _reset_after_fork() -> None:
    """In a forked child: forget the parent's executor and lock (their threads do not exist)."""
    global _lock, _pool, _pool_size
    _lock = threading.Lock()
    _pool = None
    _pool_size = 0


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_reset_after_fork)


def cpu_count() -> int:
    """Cores this process may run on."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - platforms without affinity
        return max(1, os.cpu_count() or 1)


def check_workers(workers: int | None, size: int, minimum: int) -> int:
    """Resolve ``workers``: None -> all cores when ``size >= minimum``, else 1; an int as given
    (TypeError / ValueError unless a positive integer)."""
    if workers is None:
        return cpu_count() if size >= minimum else 1
    if isinstance(workers, bool) or not isinstance(workers, numbers.Integral):
        raise TypeError(f"workers must be a positive integer or None, got {workers!r}")
    if workers < 1:
        raise ValueError(f"workers must be >= 1, got {workers}")
    return int(workers)


def _executor(n: int) -> ThreadPoolExecutor:
    global _pool, _pool_size
    with _lock:
        if _pool is None or _pool_size < n:
            old = _pool
            _pool = ThreadPoolExecutor(max_workers=n, thread_name_prefix="ustat-blocks")
            _pool_size = n
            if old is not None:
                old.shutdown(wait=False)
        return _pool


def run_lanes(fn: Callable[[list[_T]], object], starts: Iterable[_T], workers: int) -> None:
    """Call ``fn(starts[k::w])`` for k < w = min(workers, len(starts)), one call per thread
    (in this thread when w <= 1); re-raise the first error."""
    starts = list(starts)
    w = min(workers, len(starts))
    if w <= 1:
        fn(starts)
        return
    ex = _executor(w)
    for f in [ex.submit(fn, starts[k::w]) for k in range(w)]:
        f.result()


def run_blocks(fn: Callable[[_T], object], starts: Iterable[_T], workers: int) -> None:
    """Call ``fn(start)`` for every block start, on ``workers`` threads; re-raise errors."""
    def lane(mine):
        for c0 in mine:
            fn(c0)

    run_lanes(lane, starts, workers)
