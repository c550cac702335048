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
from ustat.umpc.chunk import ChunkSpec

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
