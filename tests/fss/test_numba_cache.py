"""The compiled kernels load where numba cannot cache (a service account: no writable HOME,
the package read-only): no traceback at import; the kernels compile in memory, with one
warning naming NUMBA_CACHE_DIR, and cache there when it is set (issue 37, item 15).

Each case imports a copy of ``fss`` and ``mpc`` whose ``fss/kernels/__pycache__`` is a file
(so nothing can be written beside the modules, whoever runs the test), in a subprocess
whose HOME is a file too (no ``~/.cache``).
"""

import os
import shutil
import subprocess
import sys

import pytest

pytest.importorskip("numba")

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PROBE = ("import fss, fss.kernels as k, fss.kernels._host as h; cold = k.cache_cold(); "
         "fss.warm_up(); print('numba' if h.NUMBA else 'none', cold, k.cache_cold())")


@pytest.fixture(scope="module")
def readonly_tree(tmp_path_factory):
    tree = tmp_path_factory.mktemp("ro")
    for pkg in ("fss", "mpc"):
        shutil.copytree(os.path.join(ROOT, pkg), tree / pkg,
                        ignore=shutil.ignore_patterns("__pycache__", "*.nbi", "*.nbc"))
    (tree / "fss" / "kernels" / "__pycache__").write_text("not a directory")
    home = tree / "home"
    home.write_text("not a directory either")
    return tree, home


def _probe(tree, home, **extra):
    env = {k: v for k, v in os.environ.items() if not k.startswith("NUMBA_")}
    env.update(HOME=str(home), PYTHONPATH=str(tree), XDG_CACHE_HOME=str(home / "cache"),
               PYTHONDONTWRITEBYTECODE="1", **extra)
    return subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True,
                          env=env, cwd=str(tree), timeout=600)


@pytest.mark.slow
def test_without_a_writable_cache_the_kernels_compile_in_memory_and_say_so(readonly_tree):
    tree, home = readonly_tree
    out = _probe(tree, home)
    assert out.returncode == 0, out.stderr[-2000:]
    assert "Traceback" not in out.stderr and "no locator" not in out.stderr
    assert out.stdout.split() == ["numba", "True", "True"]      # compiled in every run
    said = [ln for ln in out.stderr.splitlines() if "NUMBA_CACHE_DIR" in ln]
    assert len(said) == 1, out.stderr


@pytest.mark.slow
def test_with_numba_cache_dir_the_kernels_cache_there_quietly(readonly_tree, tmp_path):
    tree, home = readonly_tree
    cache = tmp_path / "numba-cache"
    out = _probe(tree, home, NUMBA_CACHE_DIR=str(cache))
    assert out.returncode == 0, out.stderr[-2000:]
    assert "NUMBA_CACHE_DIR" not in out.stderr
    assert any(f.endswith(".nbi") for _, _, fs in os.walk(cache) for f in fs)
    assert out.stdout.split() == ["numba", "True", "False"]     # the first run compiles
    again = _probe(tree, home, NUMBA_CACHE_DIR=str(cache))
    assert again.stdout.split() == ["numba", "False", "False"]  # later runs load
