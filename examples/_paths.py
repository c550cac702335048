"""Make the examples runnable from a checkout without installing the package."""

import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)
#: The shared data folder: ``../shared/data`` beside the checkout (not part of the repository;
#: README, "The examples"), or the folder named by ``USTAT_SHARED_DATA``.
DATA = os.environ.get("USTAT_SHARED_DATA") or os.path.join(ROOT, "..", "shared", "data")
BANK = os.path.join(DATA, "bank", "bank.csv")
HEART = os.path.join(DATA, "heart-disease", "processed.cleveland.data")
AES = os.path.join(DATA, "circuits", "aes_128.txt")
_WHERE = ("the shared data folder beside the repository, not part of it: see README.md, "
          "'The examples'")


def have(path: str) -> bool:
    """Whether ``path`` exists; if not, one line on stderr says the script uses synthetic data."""
    if os.path.exists(path):
        return True
    print(f"note: {os.path.normpath(path)} not found ({_WHERE}); using synthetic data instead",
          file=sys.stderr)
    return False


def need(path: str) -> str:
    """``path`` if it exists, else one error line on stderr and exit status 2 (no traceback)."""
    if not os.path.exists(path):
        script = os.path.basename(sys.argv[0]) or "example"
        print(f"{script}: error: needs {os.path.normpath(path)} ({_WHERE})", file=sys.stderr)
        raise SystemExit(2)
    return path


def uncertainty(res, scale: float = 1.0, unit: str = "") -> str:
    """'95% CI [lo, hi], DP noise std s' of a release (times ``scale``, e.g. data units), or why
    it has none (a baseline protocol without a public variance formula)."""
    if not getattr(res, "ci", None):
        why = getattr(res, "ci_method", "") or "no interval"
        return f"no interval: {why}"
    lo, hi = (v * scale for v in res.ci)
    return (f"{100 * res.confidence:g}% CI [{lo:.4g}, {hi:.4g}]{unit}, DP noise std "
            f"{res.noise_std * scale:.3g}{unit}")
