"""The layers of the toolkit, written once, and the import graph they must hold.

:data:`LAYERS` lists every layer bottom up: the modules it holds (a package
prefix), the layers it may import directly, and what it is for. A layer may
import its own modules, the layers it names and, transitively, what those
may import; nothing else of the toolkit. :func:`violations` finds every
import that breaks the table (module level, inside a function, or a module
named by a string such as ``importlib.import_module("mpc.gc.provider")``);
:func:`cycles` finds every import circle among the modules of mpc, fss,
noise and ustat. Imports under ``if TYPE_CHECKING:`` never run and are
left out. ``tests/test_architecture.py`` runs both; ``python -m tools.layers``
prints the table (``--markdown`` for the docs: README's "Layers" and
docs/architecture.md are generated from it, :mod:`tools.make_docs`).
"""

from __future__ import annotations

import ast
import os
import re
import sys
from collections import defaultdict
from dataclasses import dataclass

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PACKAGES = ("mpc", "fss", "noise", "ustat")


@dataclass(frozen=True)
class Layer:
    name: str                   # the layer's name, e.g. "mpc.comm"
    imports: tuple              # layers it may import directly (and what they may)
    what: str                   # one line for the table
    holds: tuple = ()           # module or package prefixes (default: the name itself)
    exact: bool = False         # holds the named modules only, not their submodules

    @property
    def prefixes(self) -> tuple:
        return self.holds or (self.name,)


LAYERS = (
    Layer("mpc.arith", (), "ring Z_2^l and fixed point, prime fields, the CSPRNG, sharing"),
    Layer("mpc.machine", (), "this machine: worker threads, kept memory"),
    Layer("mpc.wire", (), "bytes between processes: typed frames, sockets, TLS, "
                          "end-to-end encryption, the relay"),
    Layer("mpc.comm", ("mpc.arith",), "the network that counts every bit and round (the "
                                      "simulator's), traffic, costs, placement"),
    Layer("mpc.ot", ("mpc.comm", "mpc.machine"), "oblivious transfer: base OT, IKNP "
                                                 "extension, correlated OT"),
    Layer("mpc.protocols", ("mpc.comm", "mpc.ot"), "the trusted dealer, Beaver products, the "
                                                   "p-party comparison circuit, GMW, "
                                                   "truncation, providers"),
    Layer("mpc.session", ("mpc.protocols",), "a session (parties, network, randomness, "
                                            "providers) and secure values (typed shared "
                                            "arrays with operators, comparisons, input and "
                                            "output, fixed point, sorting)",
          holds=("mpc.session", "mpc.values")),
    Layer("mpc.gc", ("mpc.session", "mpc.machine"), "garbled circuits: circuits, half-gates, "
                                                   "Yao, the garbled-circuit provider"),
    Layer("mpc.run", ("mpc.wire", "mpc.comm", "mpc.machine"), "running a program across "
                                                              "processes and hosts: routing, "
                                                              "runtime, launch"),
    Layer("mpc", ("mpc.gc", "mpc.run"), "the engine (the package itself)", exact=True),
    Layer("fss", ("mpc",), "function secret sharing: AES PRG, DPF, DCF, FSS gates and their "
                           "provider"),
    Layer("noise", ("mpc",), "exact DP samplers, distributed noise, accounting"),
    Layer("ustat", (), "the package itself: its version", exact=True),
    Layer("ustat.kernels", ("mpc", "ustat"), "the U-statistic kernels (plain and secure), "
                                             "registered by name", holds=("ustat.kernels",)),
    Layer("ustat.sampling", ("mpc",), "hypergraphs of edges: BalancedSamp, uniform, Bernoulli"),
    Layer("ustat.data", ("mpc",), "reading and checking records: files, labels, bounds, the "
                                  "synthetic default, data-set identity"),
    Layer("ustat.specs", ("ustat.kernels",), "run specs: what a statistic computes, frozen, "
                                             "typed, validated once, serializable"),
    Layer("ustat.executors", ("mpc",), "where a program runs: the simulator, Dask, local "
                                       "processes (the only code that spreads a program)"),
    Layer("ustat.umpc", ("ustat.specs", "ustat.executors", "ustat.sampling", "ustat.data",
                         "fss", "noise"),
          "U-MPC (Sinh-Ramon Protocol 3.1): secure kernels, chunks, engines, release",
          holds=("ustat.umpc", "ustat.secure")),
    Layer("ustat.ecdf", ("ustat.specs", "ustat.executors", "ustat.data", "fss", "noise"),
          "the private ECDF family: servers, tree noise, quantiles, ROC, Hosmer-Lemeshow"),
    Layer("ustat.baselines", ("ustat.umpc",), "the papers' baseline protocols"),
    Layer("ustat.reports", ("ustat.baselines", "ustat.ecdf"), "release reports: the JSON "
                                                              "object and text of each command"),
    Layer("ustat.deploy", ("ustat.reports",), "deployments on real hosts: deploy.toml, keys, "
                                              "one participant's executor and part"),
    Layer("ustat.cli", ("ustat.deploy",), "the ustat command: flags to spec to executor"),
    Layer("ustat.__main__", ("ustat.cli",), "python -m ustat"),
)

_BY_NAME = {layer.name: layer for layer in LAYERS}


def layer_of(module: str) -> str:
    """The most specific layer holding ``module``."""
    best, length = None, -1
    for layer in LAYERS:
        for prefix in layer.prefixes:
            inside = module.startswith(prefix + ".") and not layer.exact
            if (module == prefix or inside) and len(prefix) > length:
                best, length = layer.name, len(prefix)
    if best is None:
        raise KeyError(f"module {module} is in no layer of tools.layers.LAYERS")
    return best


def allowed(layer: str) -> set:
    """Layers ``layer`` may import: itself and, transitively, those it names."""
    out, todo = set(), [layer]
    while todo:
        name = todo.pop()
        if name in out:
            continue
        out.add(name)
        todo.extend(_BY_NAME[name].imports)
    return out


# -- the import graph ------------------------------------------------------------------------
def modules(root: str = ROOT) -> dict:
    """Every module of :data:`PACKAGES` under ``root``: dotted name -> path."""
    out = {}
    for pkg in PACKAGES:
        for dirpath, dirnames, filenames in os.walk(os.path.join(root, pkg)):
            dirnames[:] = [d for d in dirnames if d != "__pycache__"]
            for f in filenames:
                if f.endswith(".py"):
                    path = os.path.join(dirpath, f)
                    name = os.path.relpath(path, root)[:-3].replace(os.sep, ".")
                    out[name[:-9] if name.endswith(".__init__") else name] = path
    return out


_STRING = re.compile(r"(?:mpc|fss|noise|ustat)(?:\.\w+)+")


def _type_checking_nodes(tree) -> set:
    skip: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If):
            test = node.test
            name = test.id if isinstance(test, ast.Name) else \
                test.attr if isinstance(test, ast.Attribute) else None
            if name == "TYPE_CHECKING":
                for sub in node.body:
                    skip.update(id(n) for n in ast.walk(sub))
    return skip


def imports(root: str = ROOT) -> dict:
    """module -> {imported module: (line, how)}; how is "module", "function" or "string"."""
    mods = modules(root)

    def known(name: str):
        while name:
            if name in mods:
                return name
            name = name.rpartition(".")[0]
        return None

    graph: dict = defaultdict(dict)
    for mod, path in mods.items():
        with open(path, encoding="utf-8") as f:
            tree = ast.parse(f.read(), path)
        package = mod if path.endswith("__init__.py") else mod.rpartition(".")[0]
        skip = _type_checking_nodes(tree)
        in_function: set[int] = set()
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                in_function.update(id(n) for n in ast.walk(node) if n is not node)
        for node in ast.walk(tree):
            if id(node) in skip:
                continue
            how = "function" if id(node) in in_function else "module"
            targets = []
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = package.split(".")
                    base = base[:len(base) - node.level + 1]
                    prefix = ".".join(base + ([node.module] if node.module else []))
                else:
                    prefix = node.module or ""
                targets = [f"{prefix}.{a.name}" if f"{prefix}.{a.name}" in mods else prefix
                           for a in node.names]
            elif isinstance(node, ast.Constant) and isinstance(node.value, str) \
                    and _STRING.fullmatch(node.value) and node.value in mods:
                targets, how = [node.value], "string"
            for t in targets:
                t = known(t)
                if t is not None and t != mod and t not in graph[mod]:
                    graph[mod][t] = (getattr(node, "lineno", 0), how)
    return {m: dict(graph.get(m, {})) for m in mods}


def violations(root: str = ROOT) -> list:
    """``(module, imported, line, how)`` for every import the layer table forbids, and every
    module named by a string (never allowed: import it)."""
    out = []
    graph = imports(root)
    placed = {m: _layer_or_none(m) for m in graph}
    for mod, targets in graph.items():
        layer = placed[mod]
        if layer is None:
            out.append((mod, "(no layer)", 0, "table"))
            continue
        ok = allowed(layer)
        for t, (line, how) in sorted(targets.items()):
            if how == "string" or placed.get(t) not in ok:
                out.append((mod, t, line, how))
    return out


def _layer_or_none(module: str) -> str | None:
    try:
        return layer_of(module)
    except KeyError:
        return None


def cycles(root: str = ROOT) -> list:
    """Every import circle (a strongly connected component of two or more modules)."""
    graph = {m: set(t) for m, t in imports(root).items()}
    index, low, stack, on, out = {}, {}, [], set(), []
    counter = [0]
    sys.setrecursionlimit(max(10000, sys.getrecursionlimit()))

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return sorted(out)


def closure(module: str, root: str = ROOT) -> set:
    """Every module ``module`` may load, at import or in any of its functions."""
    graph = imports(root)
    seen, todo = set(), [module]
    while todo:
        m = todo.pop()
        if m in seen:
            continue
        seen.add(m)
        todo.extend(graph.get(m, ()))
    return seen - {module}


def markdown() -> str:
    """The layer table as Markdown, bottom up."""
    rows = ["| layer | imports (and what those import) | what it holds |", "|---|---|---|"]
    for layer in LAYERS:
        below = layer.imports
        holds = ", ".join(f"`{p}`" for p in layer.prefixes)
        imports = ", ".join(f"`{b}`" for b in below) or "nothing"
        rows.append(f"| {holds} | {imports} | {layer.what} |")
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if "--markdown" in argv:
        print(markdown())
        return 0
    bad, circles = violations(), cycles()
    for mod, t, line, how in bad:
        print(f"{mod}:{line} imports {t} ({how}): not allowed from {_layer_or_none(mod)}")
    for c in circles:
        print("circle: " + " -> ".join(c))
    print(f"{len(modules())} modules, {len(bad)} upward or string imports, {len(circles)} circles")
    return 1 if bad or circles else 0


if __name__ == "__main__":
    sys.exit(main())
