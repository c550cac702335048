"""The shape of the code: layers import only downward, no import circles, the simulator
without socket code, small modules and signatures: annotated, at most twelve parameters
(tools/layers.py holds the table)."""

from __future__ import annotations

import ast
import os

import pytest

from tools import layers

ROOT = layers.ROOT


def test_no_import_goes_up_a_layer_or_names_a_module_by_string():
    bad = [f"{m}:{line} imports {t} ({how}), not allowed from layer {layers._layer_or_none(m)}"
           for m, t, line, how in layers.violations()]
    assert not bad, "\n".join(bad)


def test_no_import_circle():
    circles = layers.cycles()
    assert not circles, "\n".join(" -> ".join(c) for c in circles)


def test_every_module_is_in_a_layer():
    for mod in layers.modules():
        layers.layer_of(mod)


def test_the_simulator_loads_no_socket_code():
    """A session, its secure values and the protocols on them never reach mpc.wire or mpc.run,
    at import or in any function (only a runtime handed to a session reaches the wire)."""
    for root in ("mpc.session", "mpc.values", "mpc.protocols.gmw", "mpc.gc.provider"):
        reached = {m for m in layers.closure(root)
                   if m.startswith(("mpc.wire", "mpc.run"))}
        assert not reached, f"{root} reaches {sorted(reached)}"


def test_importing_the_statistics_loads_no_socket_code():
    """In a fresh interpreter, the statistics and the simulator executor import no socket code
    (mpc.wire, mpc.run): only an executor that spreads a program loads it, when it runs."""
    import subprocess
    import sys

    code = ("import sys, fss, noise, ustat.umpc, ustat.ecdf, ustat.baselines, ustat.executors; "
            "print(sorted(m for m in sys.modules if m.startswith(('mpc.wire', 'mpc.run'))))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          cwd=ROOT, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]", done.stdout


def test_mpc_keeps_at_most_ten_modules_at_its_top():
    top = [f for f in os.listdir(os.path.join(ROOT, "mpc")) if f.endswith(".py")]
    assert len(top) <= 10, sorted(top)


def test_a_layer_checker_catches_what_it_must(tmp_path):
    """The checker itself: an upward import, a function-level circle and a string import."""
    for pkg in layers.PACKAGES:
        (tmp_path / pkg).mkdir()
        (tmp_path / pkg / "__init__.py").write_text("")
    (tmp_path / "mpc" / "comm").mkdir()
    (tmp_path / "mpc" / "comm" / "__init__.py").write_text("")
    (tmp_path / "mpc" / "comm" / "a.py").write_text("def f():\n    from mpc.comm import b\n")
    (tmp_path / "mpc" / "comm" / "b.py").write_text("from mpc.comm import a\n")
    (tmp_path / "mpc" / "arith").mkdir()
    (tmp_path / "mpc" / "arith" / "__init__.py").write_text("")
    (tmp_path / "mpc" / "arith" / "r.py").write_text(
        "import importlib\nimport fss\nM = importlib.import_module('mpc.comm.a')\n")
    bad = {(m, t, how) for m, t, _, how in layers.violations(str(tmp_path))}
    assert ("mpc.arith.r", "fss", "module") in bad
    assert ("mpc.arith.r", "mpc.comm.a", "string") in bad
    assert layers.cycles(str(tmp_path)) == [["mpc.comm.a", "mpc.comm.b"]]


# -- signatures -------------------------------------------------------------------------------
#: Most parameters a public function may take (positional, keyword-only, *args and **kwargs;
#: self/cls apart): more is an options object waiting to be named (DESIGN.md, "Shape").
MAX_PARAMETERS = 12
#: Packages whose public functions are all annotated, every parameter and the return.
ANNOTATED = ("mpc", "fss", "noise", "ustat")


def _skipped(mod: str, skip: tuple) -> bool:
    return any(mod == s or mod.startswith(s + ".") for s in skip)


def _public_defs(package: str, root: str = ROOT, skip: tuple = ()) -> list:
    """``(where, qualified name, def node, is_method)`` for every public function and method of
    ``package``: module-level functions and the methods of classes (nested classes too) whose
    names do not start with "_", in every module, private modules included, but those of
    ``skip`` (module or package names)."""
    out = []

    def walk(body, path, prefix, in_class):
        for node in body:
            if isinstance(node, ast.ClassDef):
                walk(node.body, path, f"{prefix}{node.name}.", True)
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) \
                    and not node.name.startswith("_"):
                out.append((f"{path}:{node.lineno}", prefix + node.name, node, in_class))

    for mod, path in sorted(layers.modules(root).items()):
        if (mod == package or mod.startswith(package + ".")) and not _skipped(mod, skip):
            with open(path, encoding="utf-8") as f:
                tree = ast.parse(f.read(), path)
            walk(tree.body, os.path.relpath(path, root), "", False)
    return out


def _parameters(node, is_method: bool) -> list:
    """The parameters of a def, ``self``/``cls`` (a method's first, unless static) apart."""
    a = node.args
    params = a.posonlyargs + a.args + a.kwonlyargs + [p for p in (a.vararg, a.kwarg) if p]
    static = any(isinstance(d, ast.Name) and d.id == "staticmethod" for d in node.decorator_list)
    if is_method and not static and a.posonlyargs + a.args:
        params.remove((a.posonlyargs + a.args)[0])
    return params


def _unannotated(package: str, root: str = ROOT, skip: tuple = ()) -> list:
    out = []
    for where, name, node, is_method in _public_defs(package, root, skip):
        missing = [p.arg for p in _parameters(node, is_method) if p.annotation is None]
        missing += ["return"] if node.returns is None else []
        if missing:
            out.append(f"{where} {name}: no annotation on {', '.join(missing)}")
    return out


def _too_many_parameters(package: str, root: str = ROOT) -> list:
    return [f"{where} {name}: {n} parameters (at most {MAX_PARAMETERS})"
            for where, name, node, is_method in _public_defs(package, root)
            if (n := len(_parameters(node, is_method))) > MAX_PARAMETERS]


@pytest.mark.parametrize("package", ANNOTATED)
def test_every_public_function_is_annotated(package):
    """Every parameter (self/cls apart) and the return of every public function and method."""
    bad = _unannotated(package)
    assert not bad, "\n".join(bad)


@pytest.mark.parametrize("package", layers.PACKAGES)
def test_no_public_function_takes_more_than_twelve_parameters(package):
    bad = _too_many_parameters(package)
    assert not bad, "\n".join(bad)


def test_the_signature_checks_catch_what_they_must(tmp_path):
    """The checkers themselves: a missing annotation (self apart), a private name left alone,
    *args and **kwargs counted, a static method's first parameter counted."""
    for pkg in layers.PACKAGES:
        (tmp_path / pkg).mkdir()
        (tmp_path / pkg / "__init__.py").write_text("")
    (tmp_path / "mpc" / "_private.py").write_text(
        "def f(a: int, b) -> int: ...\n"
        "def _g(a, b): ...\n"
        "class C:\n"
        "    def m(self, x: int): ...\n"
        "    @staticmethod\n"
        "    def s(a: int, b: int, c: int, d: int, e: int, f: int, g: int, h: int, i: int,\n"
        "          j: int, k: int, l: int) -> None: ...\n"
        "    def n(self, *args: int, a: int, b: int, c: int, d: int, e: int, f: int, g: int,\n"
        "          h: int, i: int, j: int, k: int, l: int, **kw: int) -> None: ...\n")
    assert [line.split(" ", 1)[1] for line in _unannotated("mpc", str(tmp_path))] == [
        "f: no annotation on b", "C.m: no annotation on return"]
    assert _unannotated("mpc", str(tmp_path), skip=("mpc._private",)) == []
    assert len(_unannotated("mpc", str(tmp_path), skip=("mpc._priv",))) == 2   # whole names
    assert [line.split(" ", 1)[1] for line in _too_many_parameters("mpc", str(tmp_path))] == [
        "C.n: 14 parameters (at most 12)"]
