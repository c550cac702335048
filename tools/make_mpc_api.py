"""Regenerate docs/reference/mpc-api.md from the mpc layer's public surface: signatures, docstrings.

Usage: python tools/make_mpc_api.py [--check]

Writes docs/reference/mpc-api.md: for each module of :data:`MODULES` (bottom up), its
summary, then every public class (with its public methods and properties)
and function: the signature and the first paragraph of the docstring.
``--check`` exits 1 if the file is not what it would write (the test suite
runs it, so the page cannot drift from the code).
"""

from __future__ import annotations

import importlib
import inspect
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

OUT = os.path.join(ROOT, "docs", "reference", "mpc-api.md")
MODULES = ["arith.ring", "arith.rng", "arith.field", "arith.sharing", "machine.memory",
           "comm.placement", "comm.traffic", "comm.network", "comm.costs", "protocols.dealer",
           "protocols.beaver", "protocols.compare", "protocols.gmw", "protocols.providers",
           "session", "values", "wire.frames", "wire.transport", "run.routing", "run.runtime",
           "run.launch"]

HEADER = """# mpc layer API (generated)

The engine's public surface, for code in `fss/`, `noise/`, `ustat/` and for
protocol authors. Generated from the code by `python tools/make_mpc_api.py`
(the test suite checks that this page is current): signatures and the first
paragraph of each docstring; the docstrings have the rest. Start with
[composing.md](../guides/composing.md) (the tutorial) and [runtime.md](../internals/runtime.md)
(the process model). Shares are plain uint64 arrays, party axis first,
`(p, *batch)`; protocol authors work with `mpc.values.SecureArray`.
"""


def first_paragraph(obj) -> str:
    doc = inspect.getdoc(obj) or ""
    para = doc.split("\n\n")[0].strip()
    return " ".join(line.strip() for line in para.splitlines())


def signature(obj) -> str:
    try:
        return str(inspect.signature(obj))
    except (TypeError, ValueError):
        return "(...)"


def public(module):
    names = getattr(module, "__all__", None)
    if names is None:
        names = [n for n in vars(module) if not n.startswith("_")]
    out = []
    for name in names:
        obj = getattr(module, name)
        if getattr(obj, "__module__", None) != module.__name__:
            continue
        if inspect.isclass(obj) or inspect.isfunction(obj):
            out.append((name, obj))
    return out


def class_members(cls):
    out = []
    for name, member in vars(cls).items():
        if name.startswith("_") and name != "__init__":
            continue
        if isinstance(member, property):
            out.append((name, member, "property"))
        elif isinstance(member, (classmethod, staticmethod)):
            out.append((name, member.__func__, "classmethod" if isinstance(member, classmethod)
                        else "staticmethod"))
        elif inspect.isfunction(member):
            out.append((name, member, "method"))
    return out


def render() -> str:
    lines = [HEADER]
    for short in MODULES:
        mod = importlib.import_module(f"mpc.{short}")
        lines.append(f"\n## `mpc.{short}`\n")
        lines.append(first_paragraph(mod) + "\n")
        for name, obj in public(mod):
            if inspect.isclass(obj):
                init = vars(obj).get("__init__")
                sig = signature(obj) if init is not None else ""
                lines.append(f"\n### class `{name}{sig}`\n")
                lines.append(first_paragraph(obj) + "\n")
                for mname, member, kind in class_members(obj):
                    if mname == "__init__":
                        continue
                    if kind == "property":
                        lines.append(f"- `.{mname}` (property): {first_paragraph(member)}")
                    else:
                        lines.append(f"- `.{mname}{signature(member)}`"
                                     + (f" ({kind})" if kind != "method" else "")
                                     + f": {first_paragraph(member)}")
            else:
                lines.append(f"\n### `{name}{signature(obj)}`\n")
                lines.append(first_paragraph(obj) + "\n")
    text = "\n".join(lines).rstrip() + "\n"
    return text.replace(ROOT, "<repo>")


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    text = render()
    if "--check" in argv:
        with open(OUT) as f:
            current = f.read()
        if current != text:
            print("docs/reference/mpc-api.md is out of date: run python tools/make_mpc_api.py")
            return 1
        return 0
    with open(OUT, "w") as f:
        f.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
