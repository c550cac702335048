"""The Python blocks of README.md and the guides run against the current API.

README's "From Python" block is self-contained; the guides' blocks use the inputs their
text names (``ages``, ``scores``, ``records``, ...), given here as small synthetic data.
docs/guides/composing.md has its own test (test_composing.py).
"""

import os
import re

import numpy as np
import pytest

ROOT = os.path.join(os.path.dirname(__file__), "..", "..")


def blocks(*path):
    with open(os.path.join(ROOT, *path), encoding="utf-8") as f:
        return re.findall(r"```python\n(.*?)```", f.read(), flags=re.S)


def run(name, code, ns):
    try:
        exec(compile(code, name, "exec"), ns)
    except Exception as e:          # any error: name the failing block
        raise AssertionError(f"{name} failed: {e!r}") from e


def test_readme_has_one_python_block_from_python():
    assert len(blocks("README.md")) == 1


@pytest.mark.slow
def test_readme_from_python_runs():
    run("README.md, From Python", blocks("README.md")[0], {"__name__": "readme_doc"})


@pytest.mark.slow
def test_ecdf_guide_runs():
    gen = np.random.default_rng(3)
    ns = {"__name__": "ecdf_doc", "ages": gen.integers(18, 96, size=2000).astype(float),
          "scores": gen.random(2000), "labels01": gen.integers(0, 2, size=2000),
          "probs": gen.random(2000)}
    code = blocks("docs", "guides", "ecdf.md")
    assert len(code) == 1
    run("docs/guides/ecdf.md block 1", code[0], ns)


@pytest.mark.slow
def test_baselines_guide_runs():
    gen = np.random.default_rng(4)
    ns = {"__name__": "baselines_doc", "records": gen.random((20, 2))}    # Kendall on [0, 1]
    code = blocks("docs", "guides", "baselines.md")
    assert len(code) == 2
    for i, block in enumerate(code):
        run(f"docs/guides/baselines.md block {i + 1}", block, ns)
