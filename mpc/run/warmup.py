"""Warm-ups: load a process's compiled kernels while it connects to its peers.

A kernel compiled with numba is loaded from its on-disk cache at its first
call in a process. For the FSS gates that is about 0.4-0.7 CPU seconds,
which a fresh process of a run used to pay inside its first gate, while its
peers waited for it (measured: 10^6 comparisons between two parties and a
dealer over TLS, 4.4 s cold against 3.5 s with the kernels loaded).

A warm-up is a callable with no arguments (``fss.warm_up``, a provider's
``warm_up``); whoever starts a run names the ones its program needs:
:func:`mpc.run.hosts.join` (used by :mod:`mpc.run.launch` and the deployment
runner) runs them in a thread (:func:`start`) while the process connects to
its peers, and waits for it before the program starts;
:func:`mpc.run.launch.launch` with the ``fork`` start method runs them once
in the launching process instead (:func:`run`), and the children inherit
the loaded kernels: one load rather than one per process on the same cores.
Each runs at most once per process. Warm-ups touch no secret and no peer:
they run the kernels on a few instances of throw-away data. A warm-up that
fails is reported and ignored (the kernel then loads at its first call).
"""

from __future__ import annotations

import threading
import warnings
from collections.abc import Callable, Iterable

_DONE: set = set()
_LOCK = threading.Lock()


def _name(fn) -> str:
    return f"{getattr(fn, '__module__', '?')}.{getattr(fn, '__qualname__', repr(fn))}"


def run(warm_ups: Iterable[Callable[[], object]] = ()) -> list[str]:
    """Run the warm-ups of ``warm_ups`` not run yet in this process; returns their names."""
    ran = []
    with _LOCK:
        for fn in warm_ups:
            name = _name(fn)
            if name in _DONE:
                continue
            _DONE.add(name)
            try:
                fn()
            except Exception as e:          # a warm-up is only an optimization
                warnings.warn(f"warm-up {name!r} failed ({e}); its kernels load at first use",
                              RuntimeWarning, stacklevel=2)
            ran.append(name)
    return ran


def start(warm_ups: Iterable[Callable[[], object]] = ()) -> threading.Thread:
    """:func:`run` in a daemon thread (started); ``join()`` it before the program runs."""
    fns = tuple(warm_ups)
    t = threading.Thread(target=run, args=(fns,), name="ustat-warm-up", daemon=True)
    t.start()
    return t
