"""Dealing the first chunks' preprocessing while the run draws its edges (kept worker pool).

A U-MPC run draws its hypergraph E before any chunk can run (BalancedSamp
sorts all k m stubs at once): at n = 10^6 that, with the encoding and the
checks, is about 0.25 s in which the calling process uses one core and the
worker processes none. Most of a comparison chunk's work does not depend on
E or the records: the dealer's masks, FSS keys and Beaver triples
(:func:`ustat.umpc.chunk.prepare_chunk`, about two thirds of a Gini chunk).
When the ring, the chunks' sizes and the chunk streams are known before E
(``run_umpc`` knows them for BalancedSamp, whose largest degree is
ceil(k m / n) whatever E is drawn), :func:`start` submits the first chunks
to the kept workers (:mod:`ustat.umpc.worker_pool`) as *prefetched* tasks:
each deals its chunk's preprocessing at once, then waits for the chunk's
values in a :class:`Mailbox`, and finishes the chunk
(:func:`ustat.umpc.chunk.finish_chunk`) when the caller has posted them.
The other chunks run as usual. Results are the same bits as without
(prepare-then-finish equals :func:`ustat.umpc.chunk.run_chunk`).

The mailbox is a file in a memory file system (``/dev/shm`` where it exists)
mapped by the caller and by every task: one status byte per prefetched chunk
(pending, ready, aborted) and the chunk's ``(m_c, k, d)`` values as uint64.
The caller writes the values, syncs the mapping, then sets the status; a task
polls its byte every :data:`POLL_SECONDS` (sleeping: it takes no CPU), and
gives up when the status says aborted, its parent process is gone, or the
file is (a caller that died without cleaning up). The caller removes the
file when the run ends, however it ends. The kept worker pool runs these
tasks (:mod:`ustat.umpc.worker_pool`), and so does a Dask cluster whose
workers all run on this machine (:func:`ustat.umpc.dask_runner.start_prefetch`).

Memory: each prefetched task holds its chunk's preprocessing while it waits
(what the chunk would hold anyway); the mailbox holds the prefetched chunks'
values (8 k d bytes per edge).

Threat model: the mailbox carries the parties' encoded records from the
simulated parties' process to the processes simulating the same parties
(as the pipes of the pool do); it is readable by the same user only (mode
0600) and removed at the end of the run.
"""

from __future__ import annotations

import contextlib
import os
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

import numpy as np

from .chunk import ChunkResult, ChunkSpec, finish_chunk, prepare_chunk

if TYPE_CHECKING:
    from .tasks import ChunkInputs

T = TypeVar("T")


class Submitter(Protocol):
    """Where prefetched tasks run: an executor's ``submit(fn, *args) -> future``
    (:class:`concurrent.futures.Executor`, or a Dask client through
    :class:`ustat.umpc.dask_runner._Submitter`)."""

    def submit(self, fn: Callable[..., Any], /, *args: Any) -> Any: ...

PENDING, READY, ABORTED = 0, 1, 2
#: How often a waiting task looks at its status byte.
POLL_SECONDS = 0.0005
_CHECK_EVERY = 1000         # polls between looks at whether the mailbox file still exists
_ALIGN = 64                 # the status bytes, then each slot's values, on 64-byte boundaries


def mailbox_dir() -> str:
    """Where mailboxes live: a memory file system if there is one."""
    shm = "/dev/shm"
    return shm if os.path.isdir(shm) and os.access(shm, os.W_OK) else tempfile.gettempdir()


@dataclass(frozen=True)
class Mailbox:
    """The picklable address of a run's mailbox: its file and each slot's values' place."""

    path: str
    offsets: tuple              # byte offset of each slot's values
    shapes: tuple               # (m_c, k, d) of each slot

    def wait(self, slot: int) -> np.ndarray:
        """Block until slot ``slot`` is posted; its values, copied (uint64 (m_c, k, d))."""
        parent = os.getppid()
        mm = np.memmap(self.path, dtype=np.uint8, mode="r")
        try:
            polls = 0
            while mm[slot] == PENDING:
                polls += 1
                if os.getppid() != parent or (polls % _CHECK_EVERY == 0
                                              and not os.path.exists(self.path)):
                    raise RuntimeError("the run that posted this chunk is gone")
                time.sleep(POLL_SECONDS)
            if mm[slot] != READY:
                raise RuntimeError(f"prefetched chunk in slot {slot} was aborted by the run")
            shape = self.shapes[slot]
            count = int(np.prod(shape))
            return np.frombuffer(mm, dtype=np.uint64, count=count,
                                 offset=self.offsets[slot]).reshape(shape).copy()
        finally:
            del mm


def prefetched_chunk(spec: ChunkSpec, index: int, edges: int, mailbox: Mailbox,
                     slot: int) -> ChunkResult:
    """A worker task: deal chunk ``index``'s preprocessing, wait for its values, finish it."""
    prepared = in_idle_time(prepare_chunk, spec, index, edges)
    return finish_chunk(prepared, mailbox.wait(slot))


def in_idle_time(fn: Callable[..., T], *args: Any) -> T:
    """``fn(*args)`` on a thread of the lowest priority (niceness 19), waited for.

    While the caller draws E it needs its core: dealing at normal priority,
    two workers and the caller would share the two cores three ways and the
    draw, which every chunk waits for, would slow by a third (measured: the
    setup 0.24 -> 0.33 s at n = 10^6, which ate most of the gain). At
    niceness 19 the dealing takes only what the caller leaves idle. Linux
    applies niceness per thread, and raising it needs no privilege; the
    thread ends with the call, so the rest of the task runs at the worker's
    own priority. Elsewhere ``fn`` runs here, at that priority.
    """
    if not sys.platform.startswith("linux"):
        return fn(*args)
    out: dict[str, Any] = {}

    def work():
        # a sandbox refusing it (OSError): normal priority
        with contextlib.suppress(OSError):
            os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), 19)
        try:
            out["value"] = fn(*args)
        except BaseException as exc:    # re-raised in the task's thread
            out["error"] = exc

    thread = threading.Thread(target=work, name="ustat-prefetch-deal")
    thread.start()
    thread.join()
    if "error" in out:
        raise out["error"]
    return out["value"]


def _aligned(nbytes: int) -> int:
    return -(-nbytes // _ALIGN) * _ALIGN


def _new_file(size: int) -> str:
    """A new mailbox file of ``size`` zero bytes (every status pending), mode 0600."""
    fd, path = tempfile.mkstemp(prefix=f"ustat-prefetch-{os.getpid()}-{uuid.uuid4().hex[:8]}-",
                                dir=mailbox_dir())
    try:
        os.ftruncate(fd, size)
    except BaseException:
        os.close(fd)
        os.unlink(path)
        raise
    os.close(fd)
    return path


class Prefetch:
    """The caller's side of the prefetched chunks of one run (see the module docstring).

    ``pool``: an executor whose workers may block (the kept pool, acquired by
    the caller); ``sizes``: ``(index, m_c)`` of the chunks to prefetch, in
    chunk order; ``k``, ``d``: members per edge and columns. :meth:`post`
    hands the tasks their values; :meth:`close` (always call it, or use
    ``with``) aborts the tasks still waiting, removes the mailbox and calls
    ``on_close`` (the kept pool's release).
    """

    def __init__(self, pool: Submitter, spec: ChunkSpec, sizes: list[tuple[int, int]], k: int,
                 d: int, on_close: Callable[[], None] | None = None):
        self.pool, self._on_close = pool, None       # on_close: only once started
        self.indices = [int(i) for i, _ in sizes]
        shapes = tuple((int(m_c), k, d) for _, m_c in sizes)
        offsets, at = [], _aligned(len(shapes))
        for shape in shapes:
            offsets.append(at)
            at = _aligned(at + 8 * int(np.prod(shape)))
        path = _new_file(at)
        self.mailbox = Mailbox(path, tuple(offsets), shapes)
        self.futures: list = []                        # concurrent or Dask futures
        self._mm: np.memmap | None = None
        try:
            self._mm = np.memmap(path, dtype=np.uint8, mode="r+")
            for slot, (i, shape) in enumerate(zip(self.indices, shapes)):
                self.futures.append(pool.submit(prefetched_chunk, spec, i, shape[0],
                                                self.mailbox, slot))
        except BaseException:           # abort what was submitted, remove the file
            if self._mm is not None:
                self.close()
            else:
                os.unlink(path)
            raise
        self._on_close = on_close

    def __len__(self) -> int:
        return len(self.indices)

    def post(self, inputs: ChunkInputs) -> None:
        """Write each prefetched chunk's values (``inputs.values(index)``) and mark it ready."""
        mm, box = self._mm, self.mailbox
        assert mm is not None, "post() after close()"
        for slot, index in enumerate(self.indices):
            values = np.asarray(inputs.values(index))
            if values.shape != box.shapes[slot]:
                raise ValueError(f"chunk {index} was prefetched for values of shape "
                                 f"{box.shapes[slot]}, got {values.shape}")
            view = np.frombuffer(mm, dtype=np.uint64, count=values.size,
                                 offset=box.offsets[slot]).reshape(values.shape)
            view[...] = values
        mm.flush()                  # the values reach the mapping before any status says ready
        mm[:len(self)] = READY

    def close(self) -> None:
        """Abort the tasks still waiting (their futures then fail) and remove the mailbox."""
        if self._mm is None:
            return
        status = self._mm[:len(self)]
        status[status == PENDING] = ABORTED
        self._mm.flush()
        self._mm = None
        with contextlib.suppress(FileNotFoundError):
            os.unlink(self.mailbox.path)
        if self._on_close is not None:
            self._on_close()

    def __enter__(self) -> Prefetch:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
