"""Prefetched chunks: the first chunks' preprocessing dealt on the kept workers while E is drawn."""

import glob
import os
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

from mpc.arith.rng import CSPRNG
from tests.api import flat_umpc
from tests.ustat.test_engines import _records
from tests.ustat.test_engines import _same as engines_same
from ustat import sampling
from ustat.umpc import engines, prefetch, run_chunk, setup
from ustat.umpc.engines import start_prefetch
from ustat.umpc.prefetch import Prefetch
from ustat.umpc.tasks import ChunkInputs


def _run(name, X, **kw):
    kw.setdefault("epsilon", 1.0)
    kw.setdefault("threat_model", "hf")
    return flat_umpc(X, name, seed=11, chunk_size=kw.pop("chunk_size", 40), **kw)


def _same(a, b):
    engines_same(a, b)
    assert a.precision == b.precision


def _mailboxes():
    return glob.glob(os.path.join(prefetch.mailbox_dir(), f"ustat-prefetch-{os.getpid()}-*"))


class _Spy:
    """Records every Prefetch a run starts (and lets it run)."""

    def __init__(self, monkeypatch):
        self.started = []
        real = engines.start_prefetch

        def spy(*a, **kw):
            pf = real(*a, **kw)
            self.started.append(pf)
            return pf

        monkeypatch.setattr(setup, "start_prefetch", spy)


def _spec(name, X, chunk_size=40):
    """The ChunkSpec and inputs a one-worker run gives its chunks."""
    seen = {}
    real = engines.run_chunks

    def grab(spec, tasks, n_chunks, **kw):
        seen["spec"], seen["tasks"] = spec, tasks
        return real(spec, tasks, n_chunks, **kw)

    import ustat.umpc.protocol as protocol
    mp = pytest.MonkeyPatch()
    mp.setattr(protocol, "run_chunks", grab)
    try:
        _run(name, X, workers=1, chunk_size=chunk_size)
    finally:
        mp.undo()
    return seen["spec"], seen["tasks"]


@pytest.mark.parametrize("name", ["gini", "kendall", "auc", "duplicate"])
def test_prefetched_run_is_bit_identical_to_one_worker(name, monkeypatch):
    X = _records(name, 90)
    one = _run(name, X, workers=1)
    spy = _Spy(monkeypatch)
    two = _run(name, X, workers=2)
    assert len(spy.started) == 1 and isinstance(spy.started[0], Prefetch)
    assert len(spy.started[0]) == 2 * engines.WINDOW_PER_WORKER < two.chunks
    _same(one, two)
    assert _mailboxes() == []


def test_no_prefetch_where_the_engine_or_kernel_cannot(monkeypatch):
    """Threads, Dask-free single worker, degree 3, the gc backend, recorded views, a given
    hypergraph or another sampler: no prefetch, and the same bits as one worker."""
    spy = _Spy(monkeypatch)
    X = _records("gini", 60)
    _run("gini", X, workers=2, pool="threads")
    _run("gini", X, workers=1)
    _run("gini", X, workers=2, sampler="uniform")
    _run("gini", X, workers=2, hypergraph=sampling.sample("balanced", 60, 120, 2, CSPRNG(1)))
    _run("gini", X, workers=2, record_views=True, chunk_size=60)
    _run("triples", _records("triples", 20), workers=2, edges=60, chunk_size=20)
    _run("gini", _records("gini", 12), workers=2, backend="gc", chunk_size=6)
    # start_prefetch is asked only for BalancedSamp without a given hypergraph ...
    assert len(spy.started) == 5
    # ... and declines for threads, one worker, recorded views, degree 3 and gc
    assert spy.started == [None] * 5


def test_one_chunk_gets_no_prefetch():
    spec, _tasks = _spec("gini", _records("gini", 50), chunk_size=40)
    assert start_prefetch(spec, [(0, 100)], workers=2) is None
    assert start_prefetch(spec, [(0, 50), (1, 50)], workers=2, scheduler="local") is None
    assert start_prefetch(spec, [(0, 50), (1, 50)], workers=2, pool="threads") is None


def test_chunk_sizes_match_chunk_inputs():
    for m, size in [(100, 40), (2_000_000, 1 << 17), (7, 7), (7, 3), (1, 5)]:
        sizes = setup._chunk_sizes(m, size)
        edges = np.zeros((m, 2), dtype=np.int64)
        inputs = ChunkInputs(np.zeros((1, 1), np.uint64), edges, size)
        assert [i for i, _ in sizes] == list(range(len(inputs)))
        assert [c for _, c in sizes] == [b - a for a, b in map(inputs.bounds, range(len(inputs)))]
        assert sum(c for _, c in sizes) == m and max(c for _, c in sizes) <= size


def test_prefetch_on_threads_equals_run_chunk_and_cleans_up():
    """The mailbox protocol on its own: tasks deal, wait, get their values, finish."""
    spec, tasks = _spec("kendall", _records("kendall", 60))
    sizes = [(i, tasks.values(i).shape[0]) for i in range(3)]
    with ThreadPoolExecutor(3) as ex:
        pf = Prefetch(ex, spec, sizes, 2, 2)
        path = pf.mailbox.path
        assert os.path.exists(path) and oct(os.stat(path).st_mode & 0o777) == "0o600"
        assert not any(f.done() for f in pf.futures)        # dealt, now waiting
        pf.post(tasks)
        got = [f.result(timeout=60) for f in pf.futures]
        pf.close()
    assert not os.path.exists(path)
    for (i, _), res in zip(sizes, got):
        want = run_chunk(spec, i, tasks.values(i))
        assert res.index == i and np.array_equal(res.shares, want.shares)
        assert res.traffic.cells.keys() == want.traffic.cells.keys()


def test_closing_before_posting_aborts_the_waiting_tasks():
    spec, tasks = _spec("gini", _records("gini", 60))
    released = []
    with ThreadPoolExecutor(2) as ex:
        pf = Prefetch(ex, spec, [(0, tasks.values(0).shape[0]), (1, tasks.values(1).shape[0])],
                      2, 1, on_close=lambda: released.append(True))
        pf.close()
        pf.close()                              # idempotent: releases once
        for f in pf.futures:
            with pytest.raises((RuntimeError, FileNotFoundError)):
                f.result(timeout=60)
    assert released == [True] and not os.path.exists(pf.mailbox.path)


def test_post_checks_the_shapes():
    spec, tasks = _spec("gini", _records("gini", 60))
    with (ThreadPoolExecutor(1) as ex, Prefetch(ex, spec, [(0, 5)], 2, 1) as pf,
          pytest.raises(ValueError, match="prefetched for values of shape")):
        pf.post(tasks)


def test_a_failing_draw_aborts_the_prefetch_and_releases_the_pool(monkeypatch):
    X = _records("gini", 90)
    before = _run("gini", X, workers=2)
    spy = _Spy(monkeypatch)

    def broken(*a, **kw):
        raise KeyboardInterrupt("drawing E was interrupted")

    monkeypatch.setattr(setup, "_sample", broken)
    with pytest.raises(KeyboardInterrupt):
        _run("gini", X, workers=2)
    assert isinstance(spy.started[0], Prefetch) and spy.started[0]._mm is None
    assert _mailboxes() == []
    monkeypatch.undo()
    _same(before, _run("gini", X, workers=2))        # the kept pool is free again


def test_a_hypergraph_off_the_promised_degrees_is_refused(monkeypatch):
    """The ring was chosen from BalancedSamp's ceil(k m / n) before E existed: a draw that
    breaks that promise must not be used with it."""
    X = _records("gini", 90)
    uniform = sampling.sample("uniform", 90, 180, 2, CSPRNG(2))
    assert uniform.max_degree != -(-2 * 180 // 90)
    monkeypatch.setattr(setup, "_sample", lambda *a: uniform)
    with pytest.raises(RuntimeError, match="it guarantees"):
        _run("gini", X, workers=2)
    assert _mailboxes() == []


def test_dealing_runs_on_a_lowest_priority_thread_and_returns_or_raises():
    import sys
    import threading

    def niceness():
        return os.getpriority(os.PRIO_PROCESS, threading.get_native_id())

    mine = niceness()
    seen = prefetch.in_idle_time(lambda a, b: (niceness(), threading.get_native_id(), a + b),
                                 2, 3)
    assert seen[2] == 5 and seen[1] != threading.get_native_id()
    if sys.platform.startswith("linux"):
        assert seen[0] == 19
    assert niceness() == mine                       # the caller's thread keeps its priority

    def boom():
        raise ZeroDivisionError("inside")

    with pytest.raises(ZeroDivisionError, match="inside"):
        prefetch.in_idle_time(boom)


def test_a_failing_submit_leaves_no_mailbox_and_releases_the_kept_pool_once(monkeypatch):
    from ustat.umpc import worker_pool

    spec, _tasks = _spec("gini", _records("gini", 60))

    class Refusing(ThreadPoolExecutor):
        calls = 0

        def submit(self, *a, **kw):
            Refusing.calls += 1
            if Refusing.calls > 1:
                raise RuntimeError("pool refused the task")
            return super().submit(*a, **kw)

    with Refusing(2) as ex:
        released = []
        with pytest.raises(RuntimeError, match="refused"):
            Prefetch(ex, spec, [(0, 20), (1, 20)], 2, 1, on_close=lambda: released.append(1))
    assert released == [] and _mailboxes() == []

    # through the kept pool: its busy count goes back to where it was
    busy = worker_pool._REUSED["busy"]
    monkeypatch.setattr(prefetch, "_new_file", lambda size: (_ for _ in ()).throw(
        OSError("no room for the mailbox")))
    with pytest.raises(OSError, match="no room"):
        worker_pool.start_prefetch(spec, [(0, 20), (1, 20)], 2)
    assert worker_pool._REUSED["busy"] == busy


def test_ustat_prefetch_0_turns_it_off_with_the_same_bits(monkeypatch):
    X = _records("kendall", 90)
    spy = _Spy(monkeypatch)
    with_it = _run("kendall", X, workers=2)
    monkeypatch.setenv("USTAT_PREFETCH", "0")
    without = _run("kendall", X, workers=2)
    assert isinstance(spy.started[0], Prefetch) and spy.started[1] is None
    _same(with_it, without)


# -- Dask: a client whose workers all run on this machine ---------------------------------------
@pytest.fixture(scope="module")
def client():
    pytest.importorskip("distributed", reason="the [dask] extra is not installed")
    from ustat.umpc.dask_runner import connect

    with connect("local", 2) as c:
        yield c


def test_a_local_dask_cluster_gets_the_prefetch_with_the_same_bits(client, monkeypatch):
    X = _records("auc", 90)
    one = _run("auc", X, workers=1)
    spy = _Spy(monkeypatch)
    remote = _run("auc", X, scheduler=client)
    assert isinstance(spy.started[0], Prefetch) and len(spy.started[0]) == 4
    _same(one, remote)
    assert _mailboxes() == []
    _run("auc", X, scheduler="local", workers=2)        # a cluster the run opens itself: none
    assert spy.started[1] is None


def test_loopback_addresses():
    from ustat.umpc.dask_runner import _loopback

    for address in ("tcp://127.0.0.1:40123", "tcp://localhost:8786", "tcp://[::1]:8786",
                    "127.0.0.2:1"):
        assert _loopback(address), address
    for address in ("tcp://10.0.0.5:8786", "tcp://node7:8786", "tls://192.168.1.2:9000",
                    "tcp://[2001:db8::1]:8786"):
        assert not _loopback(address), address
