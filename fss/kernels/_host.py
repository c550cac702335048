"""What this host can run (internal): numba, the CPU's AES instructions and their width.

Read once, at import, by :mod:`fss.kernels` (which alone picks a backend
from them) and by the compiled backends (the ``jit`` decorator and the AES
width they generate code for):

- :data:`NUMBA`: numba is installed (the optional ``fast`` extra) and not
  switched off with the environment variable ``USTAT_FSS_NUMBA=0``;
- :data:`AESNI`: with numba, the CPU features numba compiles for (the host's,
  unless ``NUMBA_CPU_FEATURES`` says otherwise) include ``aes``;
- :func:`vector_blocks`: AES blocks per instruction (VAES on 256- or 512-bit
  registers);
- :data:`LITTLE`: a little-endian host (the compiled codec writes and reads
  words through native views).

Compiled code is cached next to the modules that define it (numba's
``cache=True``, keyed on each module's own file, so a kernel and the jitted
functions it calls live in one file) and releases the GIL (``nogil``), so
the worker threads of :mod:`fss._pool` run blocks in parallel. Where numba
finds no writable place for its cache (the package's ``__pycache__``, then
``~/.cache``; a service account without a writable HOME), the kernels are
compiled in memory in each process instead (seconds at the first call), with
one warning saying to set ``NUMBA_CACHE_DIR`` to a writable directory.
"""

from __future__ import annotations

import inspect
import os
import sys
import warnings
from collections.abc import Callable
from types import ModuleType
from typing import Any

import numpy as np


def _numba() -> ModuleType | None:
    if os.environ.get("USTAT_FSS_NUMBA", "1") == "0":
        return None
    try:
        import numba
    except ImportError:  # pragma: no cover - depends on the environment
        return None
    return numba


_NUMBA = _numba()
#: numba is installed and enabled
NUMBA = _NUMBA is not None
#: a little-endian host
LITTLE = sys.byteorder == "little"


#: numba may cache compiled code on disk here (False once it found nowhere to write it)
_CACHE = [True]
#: every compiled kernel made by :func:`jit` (numba dispatchers)
_JITTED: list = []


def cache_cold() -> bool:
    """True when no compiled kernel has a copy in numba's on-disk cache yet (the first run on
    this machine, or no cache at all): the first calls compile them (about a minute in all).
    False without numba, or when it cannot tell. (Kernels of a backend this host never uses
    are never cached, hence "none cached", not "some not cached".)"""
    if _NUMBA is None:
        return False
    if not _CACHE[0]:
        return True
    try:
        return bool(_JITTED) and not any(os.path.exists(d._cache._cache_file._index_path)
                                         for d in _JITTED)
    except AttributeError:          # another numba's internals: say nothing
        return False


def jit(fn: Callable[..., Any]) -> Callable[..., Any]:
    """numba's ``njit`` (cached, GIL released, no bounds checks), or ``fn`` itself without numba.
    Where numba has nowhere to write its cache, not cached (module docstring), said once."""
    if _NUMBA is None:
        return fn
    if _CACHE[0]:
        try:
            d = _NUMBA.njit(cache=True, nogil=True, boundscheck=False)(fn)
            _JITTED.append(d)
            return d
        except RuntimeError as e:               # "cannot cache function ...: no locator"
            if "cannot cache" not in str(e):
                raise
            _CACHE[0] = False
            where = os.path.dirname(os.path.abspath(inspect.getfile(fn)))
            warnings.warn(f"numba cannot cache the FSS kernels (no writable {where}/__pycache__ "
                          f"nor ~/.cache; HOME={os.environ.get('HOME', '')!r}): each process "
                          "compiles them anew; set NUMBA_CACHE_DIR to a writable directory "
                          "to cache them", RuntimeWarning, stacklevel=2)
    return _NUMBA.njit(cache=False, nogil=True, boundscheck=False)(fn)


def target_features() -> set[str]:
    """CPU features numba compiles for: ``NUMBA_CPU_FEATURES`` if set, else the host's."""
    if _NUMBA is None:
        return set()
    try:
        import llvmlite.binding as llvm
        from numba.core import config

        flags = getattr(config, "CPU_FEATURES", None)
        if flags is not None:
            return {f[1:] for f in flags.split(",") if f.startswith("+")}
        return {k for k, v in llvm.get_host_cpu_features().items() if v}
    except Exception:  # pragma: no cover - an unknown host
        return set()


def vector_blocks() -> int:
    """AES blocks per instruction the compiled kernels use: 4 with VAES and AVX-512
    (512-bit registers), 2 with VAES and AVX2, else 1 (128-bit AES-NI)."""
    f = target_features()
    if "vaes" in f and "avx512f" in f:
        return 4
    return 2 if "vaes" in f and "avx2" in f else 1


#: numba and the CPU's AES instructions: AES inside the compiled walk
AESNI = NUMBA and "aes" in target_features()


def inner_contiguous(a: np.ndarray) -> np.ndarray:
    """``a`` itself if its axes after the first are contiguous (slices of the key arrays along
    the batch axis are), else a C-contiguous copy (the lane kernels read and write whole rows)."""
    if a.flags.c_contiguous:                # a whole key's arrays: the common case, at once
        return a
    step = a.itemsize
    for k in range(a.ndim - 1, 0, -1):
        if a.shape[k] > 1 and a.strides[k] != step:
            return np.ascontiguousarray(a)
        step *= a.shape[k]
    return a
