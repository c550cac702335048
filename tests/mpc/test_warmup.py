"""Warm-ups (mpc.warmup): kernels load while a process connects, once, and never break a run."""

import subprocess
import sys
import textwrap
import warnings

import pytest

from mpc import warmup

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


@pytest.mark.skipif(not fast.ENABLED, reason="numba not installed: no kernels to load")
def test_launched_processes_start_their_program_with_the_fss_kernels_loaded():
    """In a fresh interpreter that never called a kernel, each launched process has loaded
    them (numba dispatchers with a compiled signature) before its program's first line, and
    a comparison still gives the right answer."""
    code = textwrap.dedent("""
        import numpy as np
        import fss
        from fss import _fast, _fast_ni
        from mpc.launch import launch
        from mpc.session import Session

        KERNELS = ([_fast_ni._gen_dcf, _fast_ni._eval_all] if _fast.AESNI else []) + \\
            [_fast.any_low_bit, _fast.unpack_levels]

        def program(rt, data):
            loaded = [len(k.signatures) > 0 for k in KERNELS]
            s = Session(2, runtime=rt, roles=("dealer",))
            x = s.input(data, by=[0, 1], bound=2**31)
            return loaded, s.output(x[0] < x[1], to=[0, 1])

        assert all(len(k.signatures) == 0 for k in KERNELS), "the parent loaded kernels"
        data = np.random.default_rng(3).integers(-2**31, 2**31, size=(2, 50))
        res = launch(program, data, groups=[[0], [1], ["dealer"]], timeout=60)
        for r in res:
            assert all(r.value[0]), (r.rank, r.value[0])
        assert np.array_equal(res[0].value[1], data[0] < data[1])
        print("OK")
    """)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=180)
    assert proc.returncode == 0 and proc.stdout.strip() == "OK", proc.stderr[-3000:]
