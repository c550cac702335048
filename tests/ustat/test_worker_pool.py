"""Worker processes kept between runs: which kernels may use them, reuse, shutdown, same results."""

import dataclasses
import os
import time

import numpy as np
import pytest

from mpc.arith.rng import CSPRNG
from tests.api import flat_umpc
from ustat import kernels as K
from ustat.umpc import worker_pool
from ustat.umpc.chunk import ChunkSpec, run_chunk

pytestmark = pytest.mark.skipif("fork" not in __import__("multiprocessing").get_all_start_methods(),
                                reason="the kept pool forks its workers")


def _spec(kern):
    return ChunkSpec(kernel=kern, bits=40, frac_bits=14, input_frac_bits=14, roles=("dealer",),
                     streams=CSPRNG(1))


def _pid(_):
    return os.getpid()


def test_reusable_needs_kernel_functions_found_by_name():
    assert worker_pool.reusable(_spec(K.get("gini")))
    assert worker_pool.reusable(_spec(K.get("auc")))

    def local_secure(ops, x):
        return ops.abs(ops.sub(x[0][0], x[1][0]))

    local = dataclasses.replace(K.get("gini"), name="gini-local", secure=local_secure)
    assert not worker_pool.reusable(_spec(local))
    lam = dataclasses.replace(K.get("gini"), name="gini-lambda", plain=lambda X: X[:, 0, 0])
    assert not worker_pool.reusable(_spec(lam))


def test_pool_is_kept_between_runs_and_stops_when_idle(monkeypatch):
    worker_pool.shutdown_workers()
    a = worker_pool._acquire(2)
    pids = set(a.map(_pid, range(8)))
    worker_pool._release(a)
    b = worker_pool._acquire(2)
    assert b is a
    later = set(b.map(_pid, range(8)))
    assert pids <= set(b._processes) and later <= set(b._processes)   # the same processes
    assert worker_pool._acquire(2) is None          # busy: a concurrent run forks its own
    worker_pool._release(b)
    c = worker_pool._acquire(3)                     # another size replaces it
    assert c is not a
    monkeypatch.setattr(worker_pool, "IDLE_SECONDS", 0.05)
    worker_pool._release(c)
    deadline = time.time() + 10
    while worker_pool._REUSED["pool"] is not None and time.time() < deadline:
        time.sleep(0.02)
    assert worker_pool._REUSED["pool"] is None
    worker_pool.shutdown_workers()                  # nothing to stop: no error


def _gini_local_records(n):
    return CSPRNG(5).random((n, 1))


@pytest.mark.parametrize("local", [False, True])
def test_kept_and_per_run_pools_give_the_same_bits(local):
    """Built-in gini runs on the kept pool (twice: the second on warm workers); a kernel
    defined in a function forks a pool for its run; both equal the in-process run."""
    kern = K.get("gini")
    if local:
        def local_secure(ops, x):
            return ops.abs(ops.sub(x[0][0], x[1][0]), bound=1)
        kern = dataclasses.replace(kern, secure=local_secure)
    X = _gini_local_records(60)
    kw = dict(epsilon=1.0, threat_model="hf", seed=3, chunk_size=13)
    one = flat_umpc(X, kern, workers=1, **kw)
    for _ in range(2):
        two = flat_umpc(X, kern, workers=2, **kw)
        assert two.estimate == one.estimate and two.communication == one.communication
    assert (worker_pool._REUSED["pool"] is not None) or local
    np.testing.assert_equal(two.aux["noisy_sums"], one.aux["noisy_sums"])


def _chunks(spec, count, size=64):
    rng = np.random.default_rng(7)
    kern = spec.kernel
    return [(i, rng.integers(0, 2 ** 14, (size, kern.degree, kern.columns), dtype=np.uint64))
            for i in range(count)]


def _running(pid):
    """Whether ``pid`` is a live process (not gone, not a zombie), read from /proc."""
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def _all_ended(procs, seconds=20.0):
    deadline = time.monotonic() + seconds
    for p in procs:
        p.join(max(0.0, deadline - time.monotonic()))
    if os.path.isdir("/proc"):          # a worker reaped by the pool's own thread counts too
        return [p.pid for p in procs if _running(p.pid)]
    return [p.pid for p in procs if p.is_alive()]


@pytest.mark.parametrize("kept", [True, False])
def test_a_run_stopped_early_ends_its_workers_and_the_next_run_gets_new_ones(kept, monkeypatch):
    """Ctrl-C or an error mid-run (here: the caller closes the chunk generator after one
    result) cancels the chunks still queued and ends the pool's workers at once, instead of the
    interpreter's exit waiting for them; the kept pool is replaced by the next run."""
    worker_pool.shutdown_workers()
    spec = _spec(K.get("gini"))
    seen = []
    real = worker_pool._acquire
    if kept:
        monkeypatch.setattr(worker_pool, "_acquire", lambda w: seen.append(real(w)) or seen[-1])
    else:
        monkeypatch.setattr(worker_pool, "_acquire", lambda w: None)   # a pool of its own
        real_pool = worker_pool.ProcessPoolExecutor
        monkeypatch.setattr(worker_pool, "ProcessPoolExecutor",
                            lambda *a, **k: seen.append(real_pool(*a, **k)) or seen[-1])
    gen = worker_pool.run_chunks(spec, _chunks(spec, 40), 2, None)
    first = next(gen)
    assert first is not None
    procs = list(seen[0]._processes.values())
    assert procs and all(p.is_alive() for p in procs)
    gen.close()
    assert _all_ended(procs) == []
    assert worker_pool._REUSED["pool"] is not seen[0]
    assert worker_pool._REUSED["busy"] == 0
    monkeypatch.undo()
    tasks = _chunks(spec, 4)
    again = list(worker_pool.run_chunks(spec, tasks, 2, None))   # a fresh pool, the same bits
    assert [r.index for r in again] == [0, 1, 2, 3]
    for r, (i, v) in zip(again, tasks, strict=True):
        np.testing.assert_array_equal(r.shares, run_chunk(spec, i, v).shares)
    worker_pool.shutdown_workers()
