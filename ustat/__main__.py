"""``python -m ustat``: the command line."""

import sys

try:
    from .cli import entry
except KeyboardInterrupt:           # Ctrl-C while the libraries load: the same quiet exit
    sys.stderr.write("ustat: interrupted\n")
    sys.exit(130)

sys.exit(entry())
