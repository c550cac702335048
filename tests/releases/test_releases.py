"""Seeded releases are bit for bit those recorded before the code was reshaped.

Every command of :data:`tests.releases.commands.COMMANDS` runs in this
process and its JSON must contain every field recorded in
``recorded/NAME.json`` (from the commit in ``recorded/COMMIT``) with the
same value: released estimates, intervals, noise, bits and rounds, exactly
(floats included). Fields added since may appear; wall times and other
machine-dependent fields are left out on both sides (:data:`.run.VOLATILE`).
"""

from __future__ import annotations

import json
import math
import os

import pytest

from .commands import COMMANDS
from .run import DATA, HERE, run


def _differences(old, new, path="") -> list:
    if isinstance(old, dict):
        if not isinstance(new, dict):
            return [f"{path}: was an object, now {type(new).__name__}"]
        out = []
        for k, v in old.items():
            if k not in new:
                out.append(f"{path}.{k}: missing")
            else:
                out += _differences(v, new[k], f"{path}.{k}")
        return out
    if isinstance(old, list):
        if not isinstance(new, list) or len(new) != len(old):
            return [f"{path}: was a list of {len(old)}, now {new!r:.80}"]
        return [d for i, (a, b) in enumerate(zip(old, new)) for d in _differences(a, b,
                                                                                  f"{path}[{i}]")]
    if old != new and not (isinstance(old, float) and isinstance(new, float)
                           and math.isnan(old) and math.isnan(new)):
        return [f"{path}: was {old!r}, now {new!r}"]
    return []


@pytest.mark.parametrize("name,argv", COMMANDS, ids=[c[0] for c in COMMANDS])
def test_release_unchanged(name, argv):
    if any("DATA" in a for a in argv) and not os.path.isdir(DATA):
        pytest.skip(f"needs the shared data folder {DATA}")
    with open(os.path.join(HERE, "recorded", f"{name}.json")) as f:
        recorded = json.load(f)
    assert recorded["argv"] == argv, "the command changed: record it again"
    diff = _differences(recorded["output"], run(argv))
    assert not diff, f"{name}: {len(diff)} field(s) changed:\n" + "\n".join(diff[:20])


def test_every_command_is_recorded():
    names = {c[0] for c in COMMANDS}
    assert len(names) == len(COMMANDS)
    files = {f[:-5] for f in os.listdir(os.path.join(HERE, "recorded")) if f.endswith(".json")}
    assert files == names
