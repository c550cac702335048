import os
import time

import numpy as np
import pytest

from fss import dcf
from mpc.arith.rng import CSPRNG
from mpc.machine import threads

U64 = np.uint64


def _gen_eval(workers):
    n, B = 10, 3 * dcf.BLOCK
    p = dcf.DCFParams(n, 16)
    alpha = CSPRNG(1).uint64(B) >> U64(64 - n)
    x = CSPRNG(2).uint64(B) >> U64(64 - n)
    k0, k1 = dcf.gen(p, alpha, 3, CSPRNG(3), workers=workers)
    y = (dcf.eval(p, 0, k0, x, workers=workers) + dcf.eval(p, 1, k1, x, workers=workers))
    return (y & U64(0xFFFF)).tobytes()


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
def test_pool_works_in_a_forked_child():
    """The parent's thread pool is started, then a forked child uses the pool (it used to hang)."""
    want = _gen_eval(2)                               # starts the parent's executor
    assert threads._pool is not None
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:                                      # child: same work on 2 threads
        try:
            ok = _gen_eval(2) == want and threads._pool is not None
            os.write(w, b"ok" if ok else b"bad")
        finally:
            os._exit(0)
    os.close(w)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        done, _ = os.waitpid(pid, os.WNOHANG)
        if done:
            break
        time.sleep(0.05)
    else:
        os.kill(pid, 9)
        os.waitpid(pid, 0)
        pytest.fail("the forked child hung using the FSS thread pool")
    with os.fdopen(r, "rb") as f:
        assert f.read() == b"ok"
    assert _gen_eval(2) == want                      # the parent's pool still works


def test_reset_after_fork_forgets_the_executor():
    _gen_eval(2)
    lock = threads._lock
    threads._reset_after_fork()
    assert threads._pool is None and threads._pool_size == 0 and threads._lock is not lock
    assert _gen_eval(2) == _gen_eval(1)
