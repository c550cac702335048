"""The shape of the code: layers import only downward, no import circles, the simulator
without socket code, small modules and signatures (tools/layers.py holds the table)."""

from __future__ import annotations

import os

from tools import layers

ROOT = layers.ROOT


def test_no_import_goes_up_a_layer_or_names_a_module_by_string():
    bad = [f"{m}:{line} imports {t} ({how}), not allowed from layer {layers.layer_of(m)}"
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
