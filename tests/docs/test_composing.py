"""Every code block of docs/guides/composing.md runs, in order, in one namespace."""

import os
import re

import pytest

ROOT = os.path.join(os.path.dirname(__file__), "..", "..")
DOC = os.path.join(ROOT, "docs", "guides", "composing.md")


def blocks():
    with open(DOC) as f:
        return re.findall(r"```python\n(.*?)```", f.read(), flags=re.S)


def test_the_tutorial_has_its_sections():
    with open(DOC) as f:
        text = f.read()
    for title in ("three-party argmax", "DP mean over 10^4 parties", "new kernel through U-MPC",
                  "Yao circuit", "unit test for a primitive"):
        assert title in text
    assert len(blocks()) >= 7


@pytest.mark.slow
def test_every_snippet_runs(capsys):
    ns = {"__name__": "composing_doc"}
    for i, code in enumerate(blocks()):
        try:
            exec(compile(code, f"docs/guides/composing.md block {i + 1}", "exec"), ns)
        except Exception as e:          # any error: name the failing block
            raise AssertionError(f"docs/guides/composing.md block {i + 1} failed: {e!r}") from e


def test_the_api_pages_are_generated_from_the_code():
    """docs/reference/mpc-api.md and ustat-api.md are what tools/make_api.py writes."""
    import subprocess
    import sys
    script = os.path.join(ROOT, "tools", "make_api.py")
    done = subprocess.run([sys.executable, script, "--check"], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr


def test_the_generated_tables_are_current():
    """README's and docs/architecture.md's layer tables are generated from tools/layers.py."""
    from tools import make_docs

    assert make_docs.main(["--check"]) == 0, "run python -m tools.make_docs"
