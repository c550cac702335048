"""mpc.machine.memory: retaining freed memory, a process-wide malloc setting, changes no result."""

import json
import os
import platform
import subprocess
import sys

import pytest

from mpc.machine import memory

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
GLIBC = platform.system() == "Linux" and platform.libc_ver()[0] == "glibc"


def _python(code: str, env=None) -> str:
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         cwd=ROOT, env=env)
    return out.stdout.strip().splitlines()[-1]


def test_bad_limits_raise_before_touching_malloc():
    for bad in (0, 1 << 19, memory.MAX_LIMIT + 1, 2.5, True, "1"):
        with pytest.raises(ValueError, match="limit"):
            memory.retain_freed_memory(bad)


def test_default_limit_bounds():
    lim = memory.default_limit()
    assert (1 << 20) <= lim <= memory.MAX_LIMIT


@pytest.mark.skipif(not GLIBC, reason="mallopt is glibc's")
def test_policy_in_a_fresh_process():
    code = ("import json; from mpc.machine import memory; a = memory.policy(); "
            "ok = memory.retain_freed_memory(64 << 20); b = memory.policy(); "
            "memory.apply({'retained': True, 'limit': 32 << 20}); c = memory.policy(); "
            "print(json.dumps([a, ok, b, c]))")
    a, ok, b, c = json.loads(_python(code))
    assert a["retained"] is False and ok is True
    assert b == {"retained": True, "limit": 64 << 20, "reason": "mallopt"}
    assert c == b                              # apply() leaves an existing setting alone
    code = ("import json; from mpc.machine import memory; memory.apply(None); a = memory.policy(); "
            "memory.apply({'retained': True, 'limit': 32 << 20}); "
            "print(json.dumps([a, memory.policy()]))")
    a, b = json.loads(_python(code))
    assert a["retained"] is False and b["retained"] is True and b["limit"] == 32 << 20


def test_cli_release_identical_with_and_without_retention():
    """The command line retains freed memory by default; USTAT_RETAIN_MEMORY=0 turns it off;
    the released figures and the communication report are the same bits either way."""
    code = ("import sys; from ustat.cli import main; "
            "sys.exit(main(['estimate', 'gini', '--n', '400', '--seed', '5', '--workers', '1', "
            "'--no-progress', '--json']))")
    outs = []
    for flag in ("1", "0"):
        env = dict(os.environ, USTAT_RETAIN_MEMORY=flag)
        res = json.loads(_python(code, env))
        res.pop("seconds", None)
        res.pop("stage_seconds", None)
        outs.append(res)
    assert outs[0] == outs[1]


def _policy_in_launched_processes(rt):
    return memory.policy()


@pytest.mark.skipif(not GLIBC, reason="mallopt is glibc's")
def test_processes_of_a_run_keep_at_most_the_run_limit():
    """Every process of a launched run lowers its limit to RUN_LIMIT (whatever its parent
    set); USTAT_RETAIN_MEMORY=0 leaves the parent's setting alone."""
    code = ("import json, os; from mpc.machine import memory; from mpc.run.launch import launch; "
            "memory.retain_freed_memory(memory.MAX_LIMIT); "
            "from tests.mpc.machine.test_memory import _policy_in_launched_processes as f; "
            "print(json.dumps([r.value for r in launch(f, groups=[[0], [1]])]))")
    for flag, limit in (("1", min(memory.RUN_LIMIT, memory.default_limit())),
                        ("0", memory.MAX_LIMIT)):
        pol = json.loads(_python(code, dict(os.environ, USTAT_RETAIN_MEMORY=flag)))
        assert [p["limit"] for p in pol] == [limit, limit] and all(p["retained"] for p in pol)
