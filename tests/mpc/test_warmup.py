"""Warm-ups (mpc.run.warmup): kernels load while a process connects, once, and never break a run."""

import os
import subprocess
import sys
import textwrap
import warnings

import pytest

from mpc.run import warmup

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

fast = pytest.importorskip("fss._fast")


@pytest.fixture
def registry(monkeypatch):
    """A private registry, so these tests neither see nor disturb fss's warm-up."""
    monkeypatch.setattr(warmup, "_WARMUPS", {})
    monkeypatch.setattr(warmup, "_DONE", set())
    return warmup


def test_each_warm_up_runs_once_per_process(registry):
    calls = []
    registry.register("a", lambda: calls.append("a"))
    registry.register("b", lambda: calls.append("b"))
    assert registry.run() == ["a", "b"]
    assert registry.run() == []
    registry.start().join(10)
    assert calls == ["a", "b"]


def test_a_failing_warm_up_warns_and_the_others_still_run(registry):
    calls = []

    def broken():
        raise RuntimeError("no cache here")

    registry.register("broken", broken)
    registry.register("ok", lambda: calls.append("ok"))
    with pytest.warns(RuntimeWarning, match="warm-up 'broken' failed .*no cache here"):
        assert registry.run() == ["broken", "ok"]
    assert calls == ["ok"]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert registry.run() == []                 # tried once only


def test_importing_fss_registers_its_warm_up():
    import fss  # noqa: F401

    assert "fss" in warmup._WARMUPS


def _kernels():
    from fss import _fast, _fast_ni
    return ([_fast_ni._gen_dcf, _fast_ni._eval_all] if _fast.AESNI else []) + \
        [_fast.any_low_bit, _fast.unpack_levels]


def _program(rt, data):
    """What a launched process has loaded when its program starts; then a comparison."""
    from mpc.session import Session
    loaded = [len(k.signatures) > 0 for k in _kernels()]
    s = Session(2, runtime=rt, roles=("dealer",))
    x = s.input(data, by=[0, 1], bound=2**31)
    return loaded, s.output(x[0] < x[1], to=[0, 1])


@pytest.mark.skipif(not fast.ENABLED, reason="numba not installed: no kernels to load")
@pytest.mark.parametrize("method", ["fork", "spawn"])
def test_launched_processes_start_their_program_with_the_fss_kernels_loaded(method):
    """In a fresh interpreter that never called a kernel, each launched process has loaded
    them before its program's first line: forked children inherit what the launcher loaded
    once, spawned ones (and deployments' processes) load them in mpc.run.hosts.join while they
    connect. A comparison still gives the right answer."""
    code = textwrap.dedent(f"""
        import multiprocessing
        import numpy as np
        import fss
        from mpc.run import launch as L
        from tests.mpc.test_warmup import _kernels, _program

        assert all(len(k.signatures) == 0 for k in _kernels()), "loaded before the launch"
        L._CTX = multiprocessing.get_context("{method}")
        data = np.random.default_rng(3).integers(-2**31, 2**31, size=(2, 50))
        res = L.launch(_program, data, groups=[[0], [1], ["dealer"]], timeout=60)
        for r in res:
            assert all(r.value[0]), (r.rank, r.value[0])
        assert np.array_equal(res[0].value[1], data[0] < data[1])
        print("OK")
    """)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=180, cwd=ROOT)
    assert proc.returncode == 0 and proc.stdout.strip() == "OK", proc.stderr[-3000:]
