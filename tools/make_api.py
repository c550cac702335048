"""Regenerate the API reference pages from the code's public surface: signatures, docstrings.

Usage: python tools/make_api.py [--check]

Writes each page of :data:`PAGES` under docs/reference/: mpc-api.md (the engine, bottom
up) and ustat-api.md (specs, executors, the statistics and their results). For each
module, its summary, then every public class (with its public methods and properties) and
function: the signature and the first paragraph of the docstring (the whole docstring, and
the documented operators, for the modules of :data:`WHOLE`: the secure values a protocol
author reads as a reference). ``--check`` exits 1 if
a page is not what it would write (the test suite runs it, so the pages cannot drift from
the code).
"""

from __future__ import annotations

import importlib
import inspect
import os
import sys
from typing import Any

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

REFERENCE = os.path.join(ROOT, "docs", "reference")
MPC_MODULES = ["arith.ring", "arith.rng", "arith.field", "arith.sharing", "machine.memory",
           "comm.placement", "comm.traffic", "comm.views", "comm.rounds", "comm.network",
           "comm.costs", "protocols.dealer",
           "protocols.beaver", "protocols.compare", "protocols.gmw", "protocols.providers",
           "protocols.truncation", "session", "values", "values.secure_array",
           "values.input_output", "values.fixedpoint", "values.arrays", "wire.frames",
           "wire.counts", "wire.faults", "wire.frame_io", "wire.transport", "run.routing",
           "run.runtime", "run.launch"]

MPC_HEADER = """# mpc layer API (generated)

The engine's public surface, for code in `fss/`, `noise/`, `ustat/` and for
protocol authors. Generated from the code by `python tools/make_api.py`
(the test suite checks that this page is current): signatures and the first
paragraph of each docstring; the docstrings have the rest, except for the secure values
(`mpc.values`, `mpc.values.secure_array`, `mpc.values.input_output`,
`mpc.values.fixedpoint`, `mpc.values.arrays`, `mpc.protocols.truncation`), whose
docstrings are here whole, operators included: the full `SecureArray` reference. Start with
[composing.md](../guides/composing.md) (the tutorial) and [runtime.md](../internals/runtime.md)
(the process model). Shares are plain uint64 arrays, party axis first,
`(p, *batch)`; protocol authors work with `mpc.values.SecureArray`.
"""

USTAT_MODULES = ["specs.base", "specs.umpc", "specs.ecdf", "baselines.spec", "executors",
                 "kernels", "data.records", "umpc.protocol", "umpc.result", "baselines.protocol",
                 "baselines.result", "ecdf.release", "ecdf.quantiles", "ecdf.roc",
                 "ecdf.hosmer_lemeshow", "deploy.config", "deploy.create", "deploy.local"]

USTAT_HEADER = """# ustat API (generated)

The statistics' public surface: a statistic is computed from its data, a spec (what it
computes: `ustat.specs`, `ustat.baselines.BaselineSpec`) and an executor (where it runs:
`ustat.executors`), and returns a result that records its spec. Generated from the code by
`python tools/make_api.py` (the test suite checks that this page is current): signatures
and the first paragraph of each docstring; the docstrings have the rest. Start with the
README's "From Python" section and the guides ([release.md](../guides/release.md),
[ecdf.md](../guides/ecdf.md), [baselines.md](../guides/baselines.md),
[parallel.md](../guides/parallel.md)); the command line builds the same specs
([cli.md](../guides/cli.md)).
"""

#: modules rendered with whole docstrings and documented operators (package-qualified)
WHOLE = {"mpc.values", "mpc.values.secure_array", "mpc.values.input_output",
         "mpc.values.fixedpoint", "mpc.values.arrays", "mpc.protocols.truncation"}

#: page file name -> (header, package, its modules in reading order)
PAGES = {"mpc-api.md": (MPC_HEADER, "mpc", MPC_MODULES),
         "ustat-api.md": (USTAT_HEADER, "ustat", USTAT_MODULES)}


def first_paragraph(obj) -> str:
    doc = inspect.getdoc(obj) or ""
    para = doc.split("\n\n")[0].strip()
    return " ".join(line.strip() for line in para.splitlines())


def whole(obj) -> str:
    """The whole docstring, paragraphs kept."""
    return (inspect.getdoc(obj) or "").strip()


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


def class_members(cls: type, operators: bool = False) -> list[tuple[str, Any, str]]:
    """Public members (with ``operators``: also the dunder methods that have a docstring).

    A class cut into private parts in other modules of its package (bases named ``_...``,
    e.g. those of ``mpc.comm.network.Network``) lists theirs as its own, lowest part first."""
    members: dict[str, Any] = {}
    package = cls.__module__.rsplit(".", 1)[0]
    for part in reversed(cls.__mro__):
        if part is cls or (part.__name__.startswith("_") and part.__module__ != cls.__module__
                           and part.__module__.rsplit(".", 1)[0] == package):
            members.update(vars(part))
    out: list[tuple[str, Any, str]] = []
    for name, member in members.items():
        dunder = name.startswith("__") and name.endswith("__")
        if name.startswith("_") and name != "__init__" and not (
                operators and dunder and inspect.isfunction(member) and member.__doc__):
            continue
        if isinstance(member, property):
            out.append((name, member, "property"))
        elif isinstance(member, (classmethod, staticmethod)):
            out.append((name, member.__func__, "classmethod" if isinstance(member, classmethod)
                        else "staticmethod"))
        elif inspect.isfunction(member):
            out.append((name, member, "method"))
    return out


def _render_whole(mod, lines: list) -> None:
    """A module of :data:`WHOLE`: every docstring whole, each member under its own heading."""
    lines.append(whole(mod) + "\n")
    for name, obj in public(mod):
        if inspect.isclass(obj):
            init = vars(obj).get("__init__")
            lines.append(f"\n### class `{name}{signature(obj) if init is not None else ''}`\n")
            lines.append(whole(obj) + "\n")
            for mname, member, kind in class_members(obj, operators=True):
                if mname == "__init__":
                    continue
                sig = "" if kind == "property" else signature(member)
                lines.append(f"\n#### `.{mname}{sig}`" + (f" ({kind})" if kind != "method"
                                                          else "") + "\n")
                lines.append(whole(member) + "\n")
        else:
            lines.append(f"\n### `{name}{signature(obj)}`\n")
            lines.append(whole(obj) + "\n")


def render(header: str, package: str, modules: list) -> str:
    lines = [header]
    for short in modules:
        mod = importlib.import_module(f"{package}.{short}")
        lines.append(f"\n## `{package}.{short}`\n")
        if mod.__name__ in WHOLE:
            _render_whole(mod, lines)
            continue
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


def _read(path: str) -> str:
    with open(path, encoding="utf-8") as f:
        return f.read()


def main(argv: list | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    stale = []
    for name, (header, package, modules) in PAGES.items():
        text = render(header, package, modules)
        path = os.path.join(REFERENCE, name)
        if "--check" in argv:
            if not os.path.exists(path) or _read(path) != text:
                stale.append(name)
        else:
            with open(path, "w") as f:
                f.write(text)
    for name in stale:
        print(f"docs/reference/{name} is out of date: run python tools/make_api.py")
    return 1 if stale else 0


if __name__ == "__main__":
    sys.exit(main())
