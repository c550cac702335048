"""Keeping freed memory in the process, for runs that allocate large arrays over and over.

A U-MPC chunk, a batch of FSS keys or a serialized key allocates arrays of
tens to hundreds of megabytes, uses them and frees them, and the next chunk
or batch does the same. glibc's malloc serves such sizes with ``mmap`` and
returns them to the kernel on ``free``, so every new array starts on fresh
pages, and the first touch of each page is a page fault in which the kernel
(and, in a virtual machine, the host) finds and zeroes a page. On this
repository's 2-core virtual machine that costs about 0.6 s per GB, more than
the work on the data in several hot paths (measured: writing a serialized
batch of 2^20 DCF keys, 701 MB, 0.27 s on reused pages, 0.9 to 1.2 s on fresh
ones; generating those keys, 872 MB of correction words, 1.29 M against
0.72 M key pairs per second).

:func:`retain_freed_memory` tells glibc (``mallopt``) to serve allocations up
to ``limit`` bytes from its heap and to keep up to ``limit`` freed bytes for
reuse instead of returning them, so the next array of a similar size lands
on pages the process already has. The price: after a large run the process
keeps up to ``limit`` bytes it no longer uses (its resident size stays near
its peak until it exits); nothing else changes (the arrays and results are
the same). The ``ustat`` command line applies it at start (unless
``USTAT_RETAIN_MEMORY=0``); a program using the API calls it once, or sets
glibc's own ``MALLOC_MMAP_THRESHOLD_`` and ``MALLOC_TRIM_THRESHOLD_``.
The U-MPC worker processes (:mod:`ustat.umpc.engines`) and the workers of a
local Dask cluster apply it themselves; Dask workers elsewhere follow the
client's setting at their first task. Every process of a run across
processes (:func:`mpc.run.hosts.join`: launched runs and deployments) keeps at
most :data:`RUN_LIMIT` (:func:`retain_for_run`), since several of them may
share a machine: a quarter of the memory each made a 7-process local
deployment 6x slower (measured). At 256 MiB each, measured on this
repository's 2-core machine: 10^6 FSS comparisons between two parties and a
dealer over TLS take 2.6-2.9 s instead of 3.2-4.0 s (the key batches of a
chunk, about 100 MB each, land on reused pages), while Kendall on Bank
deployed over 7 processes takes 3.4-3.7 s instead of 3.2-3.8 s (median
3.55 against 3.31 s, within the spread of the runs).
:func:`wanted` reads the switch.

Only glibc has ``mallopt``; elsewhere the call does nothing and says so.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import threading

#: glibc's mallopt parameters (malloc.h)
_M_TRIM_THRESHOLD = -1
_M_MMAP_THRESHOLD = -3
#: the largest limit (mallopt takes a C int): 2 GiB - 1 MiB
MAX_LIMIT = (1 << 31) - (1 << 20)

_lock = threading.Lock()
_state = {"retained": False, "limit": 0, "reason": "not requested"}


def _libc():
    try:
        name = ctypes.util.find_library("c") or "libc.so.6"
        lib = ctypes.CDLL(name)
        lib.mallopt.argtypes = (ctypes.c_int, ctypes.c_int)
        lib.mallopt.restype = ctypes.c_int
        lib.gnu_get_libc_version.restype = ctypes.c_char_p
        lib.gnu_get_libc_version()
        return lib
    except (OSError, AttributeError):
        return None


def wanted() -> bool:
    """Whether the processes this package starts should retain freed memory:
    yes unless the environment says ``USTAT_RETAIN_MEMORY=0``."""
    return os.environ.get("USTAT_RETAIN_MEMORY", "1") != "0"


def default_limit() -> int:
    """A quarter of the physical memory, at most :data:`MAX_LIMIT` (64 MiB if it cannot be read)."""
    try:
        total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return 64 << 20
    return int(max(1 << 20, min(MAX_LIMIT, total // 4)))


def retain_freed_memory(limit: int | None = None) -> bool:
    """Keep up to ``limit`` freed bytes in the process for reuse (module docstring).

    ``limit``: bytes (an int in [2^20, :data:`MAX_LIMIT`]), default :func:`default_limit`.
    Returns True if glibc took the setting, False where it cannot be applied
    (not glibc); :func:`policy` says which and why. Process-wide and
    idempotent; calling it again with another limit replaces the limit.
    """
    limit = default_limit() if limit is None else limit
    if isinstance(limit, bool) or not isinstance(limit, int) or not (1 << 20) <= limit <= MAX_LIMIT:
        raise ValueError(f"limit must be an integer number of bytes in [2^20, {MAX_LIMIT}], "
                         f"got {limit!r}")
    with _lock:
        lib = _libc()
        if lib is None:
            _state.update(retained=False, limit=0, reason="not glibc: mallopt unavailable")
            return False
        ok = (lib.mallopt(_M_MMAP_THRESHOLD, limit) == 1
              and lib.mallopt(_M_TRIM_THRESHOLD, limit) == 1)
        _state.update(retained=ok, limit=limit if ok else 0,
                      reason="mallopt" if ok else "mallopt refused the limit")
        return ok


#: what each process of a run across processes keeps at most (:func:`retain_for_run`)
RUN_LIMIT = 256 << 20


def retain_for_run() -> bool:
    """:func:`retain_freed_memory` with ``min(RUN_LIMIT, default_limit())`` (also lowering a
    larger limit this process inherited), unless :func:`wanted` says no."""
    if not wanted():
        return False
    return retain_freed_memory(min(RUN_LIMIT, default_limit()))


def policy() -> dict:
    """``{"retained": bool, "limit": bytes, "reason": str}``: what this process asked for."""
    with _lock:
        return dict(_state)


def apply(state: dict | None) -> None:
    """Apply another process's :func:`policy` here (a Dask worker's first task)."""
    if state and state.get("retained") and not policy()["retained"]:
        retain_freed_memory(int(state["limit"]))
