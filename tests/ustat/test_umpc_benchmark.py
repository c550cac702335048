"""benchmarks/umpc.py's parallel measurements: the pair of whole jobs behind the machine
ceiling, and the CPU accounting."""

import importlib.util
import multiprocessing
import os
import sys
import time

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
LINUX_PROC = os.path.isdir("/proc/self/task")


@pytest.fixture(scope="module")
def bench():
    sys.path.insert(0, os.path.join(REPO, "benchmarks"))
    try:
        spec = importlib.util.spec_from_file_location("bench_umpc",
                                                      os.path.join(REPO, "benchmarks", "umpc.py"))
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        yield mod
    finally:
        sys.path.remove(os.path.join(REPO, "benchmarks"))


def test_pair_of_jobs_runs_both_at_once(bench):
    start = time.perf_counter()
    pair = bench.JobPair(lambda: (time.sleep(0.3), 0.3)[1])
    try:
        t = time.perf_counter()
        assert pair.run() == [0.3, 0.3]
        assert time.perf_counter() - t < 0.55     # at once, not one after the other
        assert pair.run() == [0.3, 0.3]           # and again, when told
    finally:
        pair.close()
    assert time.perf_counter() - start < 30


def test_pair_of_jobs_reports_a_failure(bench):
    pair = bench.JobPair(lambda: 1 / 0)
    try:
        with pytest.raises(RuntimeError, match="ZeroDivisionError"):
            pair.run()
    finally:
        pair.close()


def test_runner_pair_config_is_the_one_worker_job_twice(bench):
    res = bench.gini_runs(2000, [{"workers": 1}, {"pair": True}], 2)
    one, pair = res["configs"]
    assert len(pair["pair"]) == 2 and all(x > 0 for x in pair["pair"])   # the cold pair
    assert len(pair["warm"]) == 2 and pair["cold"] == max(pair["pair"])
    if LINUX_PROC:      # two jobs' CPU, counted in the children
        assert bench._cpu(pair) >= 1.2 * bench._cpu(one) - 0.05


def _burn(seconds):
    end = time.process_time() + seconds
    while time.process_time() < end:
        pass


def _descendant_growth(bench, conn):
    """Run in a fresh fork, which has no other descendants: a test worker's own children
    (pools, trackers from earlier tests) may end between the two readings."""
    ctx = multiprocessing.get_context("fork")
    done, hold = ctx.Event(), ctx.Event()

    def child():                            # burns CPU, then stays alive until told
        _burn(0.4)
        done.set()
        hold.wait(30)

    before = bench.cpu_seconds()
    proc = ctx.Process(target=child)
    proc.start()
    try:
        ok = done.wait(30)
        grown = bench.cpu_seconds() - before     # this process only slept meanwhile
    finally:
        hold.set()
        proc.join(30)
    conn.send(grown if ok else None)
    conn.close()


@pytest.mark.skipif(not LINUX_PROC, reason="CPU accounting reads /proc")
def test_cpu_seconds_counts_live_descendants(bench):
    ctx = multiprocessing.get_context("fork")
    mine, theirs = ctx.Pipe(duplex=False)
    proc = ctx.Process(target=_descendant_growth, args=(bench, theirs))
    proc.start()
    try:
        assert mine.poll(60)
        grown = mine.recv()
    finally:
        proc.join(30)
        if proc.is_alive():
            proc.kill()
    assert grown is not None and 0.35 <= grown <= 1.0


@pytest.mark.skipif(not LINUX_PROC, reason="CPU accounting reads /proc")
def test_runner_reports_cpu_per_warm_run(bench):
    res = bench.gini_runs(2000, [{"workers": 1}, {"workers": 2, "chunk_size": 500}], 2)
    one, two = res["configs"]
    assert len(one["warm_cpu"]) == len(two["warm_cpu"]) == 2
    assert bench._same(one, two)
    # one worker computes in the calling process: CPU about its wall time (10 ms ticks)
    assert 0 < bench._cpu(one) <= 1.5 * max(one["warm"]) + 0.05
    assert bench._cpu(two) > 0


def test_cpu_of_a_config_without_accounting_is_none(bench):
    assert bench._cpu({"warm_cpu": [None, None]}) is None
    assert bench._cpu({"warm": [1.0]}) is None
    assert bench._cpu({"warm_cpu": [0.5, 0.7, 0.6]}) == pytest.approx(0.6)
