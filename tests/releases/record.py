"""Record the releases of :data:`tests.releases.commands.COMMANDS` into ``recorded/``.

Run from the root of the checkout whose releases are the reference
(``python -m tests.releases.record``); writes one JSON file per command and
``COMMIT`` (the checkout's ``git rev-parse HEAD``).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

from .commands import COMMANDS
from .run import HERE, run


def main(names=None) -> None:
    out = os.path.join(HERE, "recorded")
    os.makedirs(out, exist_ok=True)
    for name, argv in COMMANDS:
        if names and name not in names:
            continue
        res = run(argv)
        with open(os.path.join(out, f"{name}.json"), "w") as f:
            json.dump({"argv": argv, "output": res}, f, indent=1, sort_keys=True)
            f.write("\n")
        print(name, file=sys.stderr)
    head = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True).stdout
    with open(os.path.join(out, "COMMIT"), "w") as f:
        f.write(head)


if __name__ == "__main__":
    main(sys.argv[1:])
