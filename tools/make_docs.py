"""Write the generated parts of README.md and docs/architecture.md (``--check``: exit 1 when they
are not what this would write; tests/docs runs it, so the pages cannot drift from the code).

Generated parts stand between ``<!-- NAME:start -->`` and ``<!-- NAME:end -->`` markers:

- ``layers``: the layer table of :data:`tools.layers.LAYERS`.
"""

from __future__ import annotations

import os
import re
import sys

from tools import layers

ROOT = layers.ROOT
PAGES = ("README.md", os.path.join("docs", "architecture.md"))


def parts() -> dict:
    """Marker name -> the Markdown it stands for."""
    return {"layers": layers.markdown()}


def render(text: str, generated: dict) -> str:
    """``text`` with every marked part replaced by its generated content."""
    for name, body in generated.items():
        pattern = re.compile(rf"(<!-- {name}:start -->\n).*?(<!-- {name}:end -->)", re.S)
        text = pattern.sub(lambda m: m.group(1) + body.rstrip() + "\n" + m.group(2), text)
    return text


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
