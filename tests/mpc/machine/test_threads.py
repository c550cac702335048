"""mpc.machine.threads: lanes cover every block once, errors surface, workers= is checked."""

import threading

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mpc.machine import threads


@settings(max_examples=60, deadline=None)
@given(n=st.integers(0, 40), workers=st.integers(1, 6))
def test_lanes_cover_every_start_once_on_at_most_workers_threads(n, workers):
    seen, names, lock = [], set(), threading.Lock()

    def lane(mine):
        with lock:
            seen.extend(mine)
            names.add(threading.current_thread().name)

    threads.run_lanes(lane, range(0, 3 * n, 3), workers)
    assert sorted(seen) == list(range(0, 3 * n, 3))
    assert 1 <= len(names) <= max(1, min(workers, n))


def test_one_lane_runs_in_the_calling_thread():
    where = []
    threads.run_lanes(lambda mine: where.append(threading.current_thread()), [0, 1, 2], 1)
    assert where == [threading.current_thread()]


def test_lane_errors_are_raised_in_the_caller():
    def lane(mine):
        if 2 in mine:
            raise ArithmeticError("block 2")

    with pytest.raises(ArithmeticError, match="block 2"):
        threads.run_lanes(lane, range(4), 2)


def test_run_blocks_calls_every_block():
    got, lock = [], threading.Lock()

    def block(c0):
        with lock:
            got.append(c0)

    threads.run_blocks(block, range(0, 100, 10), 3)
    assert sorted(got) == list(range(0, 100, 10))


@pytest.mark.parametrize("workers, size, minimum, expected", [
    (None, 10, 11, 1), (None, 11, 11, "all"), (3, 0, 1 << 30, 3), (1, 10 ** 9, 1, 1)])
def test_check_workers(workers, size, minimum, expected):
    want = threads.cpu_count() if expected == "all" else expected
    assert threads.check_workers(workers, size, minimum) == want


@pytest.mark.parametrize("bad, err", [(0, ValueError), (-2, ValueError), (1.5, TypeError),
                                      (True, TypeError), ("2", TypeError)])
def test_check_workers_refuses(bad, err):
    with pytest.raises(err, match="workers"):
        threads.check_workers(bad, 10, 1)
