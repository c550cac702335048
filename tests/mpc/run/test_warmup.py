"""Warm-ups (mpc.run.warmup): kernels load while a process connects, once, and never break a run."""

import os
import subprocess
import sys
import textwrap
import warnings

import pytest

from fss import kernels
from mpc.run import warmup

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))


@pytest.fixture
def fresh(monkeypatch):
    """A process-local record of what ran, so these tests neither see nor disturb others."""
    monkeypatch.setattr(warmup, "_DONE", set())
    return warmup


def test_each_warm_up_runs_once_per_process(fresh):
    calls = []

    def a():
        calls.append("a")

    def b():
        calls.append("b")

    assert [n.rsplit(".", 1)[-1] for n in fresh.run([a, b])] == ["a", "b"]
    assert fresh.run([a, b]) == []
    fresh.start([a, b]).join(10)
    assert calls == ["a", "b"]


def test_a_failing_warm_up_warns_and_the_others_still_run(fresh):
    calls = []

    def broken():
        raise RuntimeError("no cache here")

    def ok():
        calls.append("ok")

    with pytest.warns(RuntimeWarning, match="warm-up '.*broken' failed .*no cache here"):
        assert len(fresh.run([broken, ok])) == 2
    assert calls == ["ok"]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert fresh.run([broken, ok]) == []             # tried once only


def test_importing_fss_registers_nothing():
    """Nothing is registered as a side effect of an import: a run names its warm-ups."""
    assert not hasattr(warmup, "register")
    code = ("import mpc.run.warmup as w, fss; assert w._DONE == set(); "
            "from fss import FSSGates; assert FSSGates().warm_up.__func__; print('OK')")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120, cwd=ROOT)
    assert proc.stdout.strip() == "OK", proc.stderr[-2000:]


def _kernels():
    from fss.kernels import passes
    compiled = [passes._any_low_bit, passes.unpack_levels]
    if kernels.missing("aesni") is None:
        from fss.kernels import aesni
        compiled += [aesni._gen_dcf, aesni._eval_all]
    return compiled


def _program(rt, data):
    """What a launched process has loaded when its program starts; then a comparison."""
    from fss import FSSGates
    from mpc.session import Session
    loaded = [len(k.signatures) > 0 for k in _kernels()]
    s = Session(2, runtime=rt, roles=("dealer",), comparisons=FSSGates())
    x = s.input(data, by=[0, 1], bound=2**31)
    return loaded, s.output(x[0] < x[1], to=[0, 1])


@pytest.mark.skipif(kernels.missing("numba") is not None,
                    reason=f"no compiled kernels to load: {kernels.missing('numba')}")
@pytest.mark.parametrize("method", ["fork", "spawn"])
def test_launched_processes_start_their_program_with_the_fss_kernels_loaded(method):
    """In a fresh interpreter that never called a kernel, each launched process has loaded
    them before its program's first line: forked children inherit what the launcher loaded
    once, spawned ones (and deployments' processes) load them in mpc.run.hosts.join while they
    connect: the launcher is given fss.warm_up. A comparison still gives the right answer."""
    code = textwrap.dedent(f"""
        import multiprocessing
        import numpy as np
        import fss
        from mpc.run import launch as L
        from tests.mpc.run.test_warmup import _kernels, _program

        assert all(len(k.signatures) == 0 for k in _kernels()), "loaded before the launch"
        L._CTX = multiprocessing.get_context("{method}")
        data = np.random.default_rng(3).integers(-2**31, 2**31, size=(2, 50))
        res = L.launch(_program, data, groups=[[0], [1], ["dealer"]], timeout=60,
                       warm_up=[fss.warm_up])
        for r in res:
            assert all(r.value[0]), (r.rank, r.value[0])
        assert np.array_equal(res[0].value[1], data[0] < data[1])
        print("OK")
    """)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=180, cwd=ROOT)
    assert proc.returncode == 0 and proc.stdout.strip() == "OK", proc.stderr[-3000:]
