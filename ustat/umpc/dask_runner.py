"""The chunks of a U-MPC run as tasks on a Dask distributed cluster (optional extra).

Needs ``dask[distributed]`` (``pip install "ustat-mpc[dask]"``). Each chunk is
one task calling :func:`ustat.umpc.chunk.run_chunk` with the run's spec
(scattered once to every worker) and the chunk's encoded member values; the
task returns the members' shares and the chunk's traffic, which the client
merges in chunk order into the session's network, so the report is the same
as a local run's and the release is bit-identical to it. Dask schedules; we
only keep a bounded window of tasks in flight (2 per worker thread) so the
client never holds more than that many chunks. A client whose workers all
run on this machine also gets the first chunks dealt while E is drawn
(:func:`start_prefetch`, :mod:`ustat.umpc.prefetch`).

``scheduler``:

- ``"local"``: a :class:`distributed.LocalCluster` on this machine with
  ``workers`` single-threaded worker processes, closed after the run;
- ``"tcp://host:8786"`` (any address): an existing cluster
  (``dask scheduler`` + ``dask worker`` on the machines; see docs/guides/parallel.md);
- a :class:`distributed.Client`: used as is and left open.

Security: the workers simulate every party of their chunks and receive the
run's chunk stream (the key that derives all masks, triples and FSS keys), so
the cluster must be trusted like the machine running a local simulation;
use TLS (Dask's ``Security``) between machines.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable, Iterable, Iterator
from typing import TYPE_CHECKING, Any

import numpy as np

from mpc.machine import memory

from .chunk import ChunkResult, ChunkSpec, run_chunk
from .tasks import WINDOW_PER_WORKER, default_workers, windowed

if TYPE_CHECKING:
    from distributed import Client

    from .prefetch import Prefetch


def _import_distributed():
    try:
        import distributed
    except ImportError:  # pragma: no cover - depends on the environment
        raise ImportError(
            "scheduler= needs Dask distributed: pip install 'dask[distributed]' "
            "(or the project's [dask] extra)") from None
    return distributed


def worker_environ() -> dict:
    """Dask's pre-spawn worker environment for the workers of ``scheduler="local"``.

    Dask sets ``MALLOC_TRIM_THRESHOLD_`` to 64 KiB so that long-lived workers
    return memory to the OS; a chunk allocates and frees arrays of megabytes
    many times, and with that setting every one of them costs fresh page
    faults (a chunk ran 35% slower on a worker than in process). The workers
    of the local cluster are this run's own processes, so they keep freed
    memory for reuse instead (glibc's ``MALLOC_MMAP_THRESHOLD_`` and
    ``MALLOC_TRIM_THRESHOLD_`` at :func:`mpc.machine.memory.default_limit`, the
    environment form of :func:`mpc.machine.memory.retain_freed_memory`); with
    ``USTAT_RETAIN_MEMORY=0`` both are left unset (glibc's adaptive default).
    A cluster at an address keeps its own settings.
    """
    import dask

    env = dict(dask.config.get("distributed.nanny.pre-spawn-environ", {}))
    limit = str(memory.default_limit()) if memory.wanted() else None   # None: not set
    env["MALLOC_TRIM_THRESHOLD_"] = limit
    env["MALLOC_MMAP_THRESHOLD_"] = limit
    return env


#: Dask settings of the workers of ``scheduler="local"`` (a cluster at an address keeps its
#: own): no statistical profiler, which samples every task's stack each 10 ms under the GIL
#: (measured at n = 10^6 on 2 workers: runs 5% slower with it; Dask's dashboard then shows
#: no profile for these workers).
LOCAL_CLUSTER_CONFIG = {"distributed.worker.profile.enabled": False}


@contextlib.contextmanager
def connect(scheduler: str | Client, workers: int | None = None) -> Iterator[Client]:
    """A :class:`distributed.Client` for ``scheduler`` ("local", an address, or a Client).

    ``"local"`` starts a :class:`distributed.LocalCluster` of ``workers``
    single-threaded processes with :data:`LOCAL_CLUSTER_CONFIG` and
    :func:`worker_environ`, closed on exit.
    """
    distributed = _import_distributed()
    if isinstance(scheduler, distributed.Client):
        yield scheduler
        return
    if not isinstance(scheduler, str) or not scheduler:
        raise TypeError(f"scheduler must be 'local', a scheduler address or a "
                        f"distributed.Client, got {scheduler!r}")
    if scheduler == "local":
        import dask

        with dask.config.set({**LOCAL_CLUSTER_CONFIG,
                              "distributed.nanny.pre-spawn-environ": worker_environ()}):
            cluster = distributed.LocalCluster(
                n_workers=workers or default_workers(), threads_per_worker=1, processes=True,
                dashboard_address=":0", silence_logs=logging.ERROR)
        with cluster, distributed.Client(cluster) as client:
            yield client
    else:
        with distributed.Client(scheduler) as client:
            yield client


def run_chunks(spec: ChunkSpec, tasks: Iterable, *, scheduler: str | Client,
               workers: int | None = None, meanwhile: Callable[[], object] | None = None,
               prefetch: Prefetch | None = None) -> Iterator[ChunkResult]:
    """Run the chunks of ``tasks`` ((index, values) pairs) as Dask tasks; yield results in order.

    ``meanwhile``: see :func:`ustat.umpc.engines.run_chunks`. ``prefetch``: the
    run's :func:`start_prefetch` (its chunks come first, ``tasks`` are the others).
    """
    with connect(scheduler, workers) as client:
        spec_future = client.scatter(spec, broadcast=True, hash=False)
        threads = sum(client.nthreads().values()) or 1

        mem = memory.policy()

        def submit(index, values):
            return client.submit(_task, spec_future, index, values, mem, pure=False)

        yield from windowed(submit, tasks, WINDOW_PER_WORKER * threads, meanwhile,
                            started=() if prefetch is None else prefetch.futures)


class _Submitter:
    """A Dask client seen as an executor (``submit(fn, *args)``) for :class:`Prefetch`."""

    def __init__(self, client: Client):
        self.client = client

    def submit(self, fn: Callable[..., Any], /, *args: Any) -> Any:
        return self.client.submit(fn, *args, pure=False)


def start_prefetch(spec: ChunkSpec, sizes: list[tuple[int, int]],
                   scheduler: str | Client) -> Prefetch | None:
    """Prefetched chunks (:mod:`ustat.umpc.prefetch`) on a Dask cluster whose workers all run
    on this machine, or None.

    Only for ``scheduler`` given as a :class:`distributed.Client` (a client
    the run does not open itself exists before E is drawn) whose workers all
    listen on a loopback address, as those of a :class:`distributed.LocalCluster`
    do: the tasks wait for their values in a file of this machine's memory
    file system, which workers elsewhere cannot see. ``sizes``: the first
    ``WINDOW_PER_WORKER`` chunks per worker thread are prefetched.
    """
    from .prefetch import Prefetch

    distributed = _import_distributed()
    if not isinstance(scheduler, distributed.Client):
        return None
    info = scheduler.scheduler_info().get("workers", {})
    if not info or not all(_loopback(address) for address in info):
        return None
    threads = sum(scheduler.nthreads().values()) or 1
    kern = spec.kernel
    return Prefetch(_Submitter(scheduler), spec, sizes[:WINDOW_PER_WORKER * threads],
                    kern.degree, kern.columns)


def _loopback(address: str) -> bool:
    host = address.split("://", 1)[-1].rsplit(":", 1)[0].strip("[]")
    return host in ("localhost", "::1") or host.startswith("127.")


def _task(spec: ChunkSpec, index: int, values: np.ndarray, mem: dict) -> ChunkResult:
    """One chunk on a worker under the client's memory policy (:func:`mpc.machine.memory.apply`)."""
    memory.apply(mem)
    return run_chunk(spec, index, values)
