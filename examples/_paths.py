"""Make the examples runnable from a checkout without installing the package."""

import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)
BANK = os.path.join(ROOT, "..", "shared", "data", "bank", "bank.csv")
HEART = os.path.join(ROOT, "..", "shared", "data", "heart-disease", "processed.cleveland.data")


def uncertainty(res, scale: float = 1.0, unit: str = "") -> str:
    """'95% CI [lo, hi], DP noise std s' of a release (times ``scale``, e.g. data units), or why
    it has none (a baseline protocol without a public variance formula)."""
    if not getattr(res, "ci", None):
        why = getattr(res, "ci_method", "") or "no interval"
        return f"no interval: {why}"
    lo, hi = (v * scale for v in res.ci)
    return (f"{100 * res.confidence:g}% CI [{lo:.4g}, {hi:.4g}]{unit}, DP noise std "
            f"{res.noise_std * scale:.3g}{unit}")
