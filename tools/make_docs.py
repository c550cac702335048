"""Write the generated parts of README.md and docs/architecture.md (``--check``: exit 1 when they
are not what this would write; tests/docs runs it, so the pages cannot drift from the code).

Generated parts stand between ``<!-- NAME:start -->`` and ``<!-- NAME:end -->`` markers:

- ``layers``: the layer table of :data:`tools.layers.LAYERS`;
- ``<!-- sample: ARGS -->`` ... ``<!-- sample:end -->``: the text ``ustat ARGS --seed readme``
  prints, run in this process (``DATA`` stands for ``../shared/data``); the line of the wall
  time, which no two runs share, is left out. A sample whose data is missing (a clone without
  ``../shared``) is left as it is.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Callable

from tools import layers

ROOT = layers.ROOT
PAGES = ("README.md", os.path.join("docs", "architecture.md"))


def parts() -> dict:
    """Marker name -> the Markdown it stands for."""
    return {"layers": layers.markdown()}


def _between_markers(body: str) -> Callable[[re.Match], str]:
    """A substitution keeping a marked part's start and end markers around ``body``."""
    return lambda m: m.group(1) + body.rstrip() + "\n" + m.group(2)


def render(text: str, generated: dict, samples: bool = True) -> str:
    """``text`` with every marked part replaced by its generated content."""
    for name, body in generated.items():
        pattern = re.compile(rf"(<!-- {name}:start -->\n).*?(<!-- {name}:end -->)", re.S)
        text = pattern.sub(_between_markers(body), text)
    if samples:
        text = SAMPLE.sub(_sample_block, text)
    return text


SAMPLE = re.compile(r"(<!-- sample: (.*?) -->\n)```text\n.*?```\n(<!-- sample:end -->)", re.S)
DATA = os.path.normpath(os.path.join(ROOT, "..", "shared", "data"))
#: lines of a sample that differ from run to run whatever the seed
VOLATILE = ("  time      :",)


def _sample_block(m: re.Match) -> str:
    argv = m.group(2).split()
    if any("DATA" in a for a in argv) and not os.path.isdir(DATA):
        return m.group(0)
    return m.group(1) + "```text\n" + sample(argv) + "```\n" + m.group(3)


def sample(argv: list) -> str:
    """What ``ustat ARGV --seed readme --no-progress`` prints (volatile lines left out)."""
    import contextlib
    import io

    from ustat.cli import main

    argv = [a.replace("DATA", DATA) for a in argv] + ["--seed", "readme", "--no-progress"]
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        code = main(argv)
    if code != 0:
        raise RuntimeError(f"ustat {' '.join(argv)} exited with status {code}")
    lines = [re.sub(r", \d+ worker\(s\)", "", ln) for ln in out.getvalue().splitlines()
             if not ln.startswith(VOLATILE)]          # the workers follow this machine's cores
    return "\n".join(ln.replace(DATA, "../shared/data") for ln in lines) + "\n"


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    generated = parts()
    stale = []
    for page in PAGES:
        path = os.path.join(ROOT, page)
        with open(path, encoding="utf-8") as f:
            text = f.read()
        new = render(text, generated)
        if new != text:
            stale.append(page)
            if "--check" not in argv:
                with open(path, "w", encoding="utf-8") as f:
                    f.write(new)
    if "--check" in argv and stale:
        print(f"out of date: {', '.join(stale)}: run python -m tools.make_docs")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
