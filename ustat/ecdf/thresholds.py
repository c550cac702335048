"""Public threshold grids tau_1 < ... < tau_N and the parties' encoding of their values.

Barczewski, Mawass, Ramon, Section 3.1: the ECDF is released on an ordered
set of public points, e.g. a regular grid tau = psi Z within the public
bounds, or a geometric grid {e^(psi z)} when relative error matters. The
last threshold should be the public upper bound, so that F(tau_N) = 1.

Every party encodes its own value x as its *grid rank*
``alpha = #{k : tau_k < x}`` in [0, N] (:func:`grid_rank`), so that

    1[x <= tau_k] = 1[alpha <= k]      (k = 0 .. N-1, 0-based)

exactly, for the raw value (no rounding of x). The FSS servers and the
pointwise backend only ever see these ranks through keys or shares.
Thresholds are public parameters fixed before any party encodes.

Errors: ``ValueError`` naming the parameter (unsorted or duplicated
thresholds, thresholds outside the bounds, N = 0, non-finite values).
"""

from __future__ import annotations

import math
import os
from typing import TYPE_CHECKING

import numpy as np

from ..specs.ecdf import MAX_THRESHOLDS, check_bounds, check_count, check_thresholds

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

__all__ = [
    "MAX_THRESHOLDS",
    "check_thresholds",
    "from_file",
    "geometric",
    "grid",
    "grid_rank",
    "regular",
]

_count, _bounds = check_count, check_bounds


def _grid(lo, hi, n, psi, to_axis, from_axis, spaced, what):
    """n points spaced from lo to hi, or from_axis(psi z) inside [lo, hi] followed by hi."""
    if (n is None) == (psi is None):
        raise ValueError(f"give exactly one of n (number of thresholds) and psi ({what})")
    if n is not None:
        n = _count(n, "n")
        return np.array([hi]) if n == 1 else spaced(lo, hi, n)
    psi = float(psi)
    if not math.isfinite(psi) or psi <= 0:
        raise ValueError(f"psi must be finite and > 0, got {psi}")
    z0, z1 = math.ceil(to_axis(lo) / psi), math.floor(to_axis(hi) / psi)
    _count(max(z1 - z0 + 2, 1), "number of thresholds for this psi")
    tau = from_axis(np.arange(z0, z1 + 1, dtype=np.float64) * psi)
    tau = tau[(tau >= lo) & (tau < hi)]
    return np.append(tau, hi)


def regular(bounds: tuple[float, float], n: int | None = None,
            psi: float | None = None) -> np.ndarray:
    """A regular grid on [lo, hi]: ``n`` equally spaced points from lo to hi, or the
    multiples of ``psi`` inside [lo, hi] followed by hi (so that tau_N = hi). Bounds whose
    width overflows (+-1e308) are spaced as lo (1 - f) + hi f, f = k / (n - 1)."""
    lo, hi = _bounds(bounds)
    if n is not None and psi is None and _count(n, "n") >= 2 and not math.isfinite(hi - lo):
        f = np.arange(n) / (n - 1)                  # linspace would overflow to NaN
        return check_thresholds(lo * (1 - f) + hi * f, (lo, hi))
    return _grid(lo, hi, n, psi, lambda v: v, lambda v: v, np.linspace, "grid step")


def geometric(bounds: tuple[float, float], n: int | None = None,
              psi: float | None = None) -> np.ndarray:
    """A geometric grid {e^(psi z)} in [lo, hi] (lo > 0): ``n`` log-spaced points from lo to
    hi, or the points e^(psi z) inside [lo, hi] followed by hi."""
    lo, hi = _bounds(bounds)
    if lo <= 0:
        raise ValueError(f"a geometric grid needs a positive lower bound, got lo = {lo}")
    return _grid(lo, hi, n, psi, math.log, np.exp, np.geomspace, "log step")


def grid(thresholds: int | ArrayLike, spacing: str = "regular",
         bounds: tuple[float, float] | None = None) -> np.ndarray:
    """The grid of a spec's design (:class:`ustat.specs.ecdf.ECDFDesign`): ``thresholds`` a
    count N placed within ``bounds`` (``spacing`` ``"regular"`` or ``"geometric"``), or the
    thresholds themselves (checked against ``bounds`` when given)."""
    if isinstance(thresholds, (int, np.integer)) and not isinstance(thresholds, bool):
        if bounds is None:
            raise ValueError(f"thresholds: {thresholds} thresholds are placed within the public "
                             "bounds, which are not given")
        return geometric(bounds, n=int(thresholds)) if spacing == "geometric" else \
            regular(bounds, n=int(thresholds))
    return check_thresholds(thresholds, bounds)


def from_file(path: str | os.PathLike[str]) -> np.ndarray:
    """Thresholds from a text file: one number per line (blank lines and '#' comments skipped)."""
    path = os.fspath(path)
    vals = []
    with open(path, encoding="utf-8") as fh:
        for lineno, line in enumerate(fh, 1):
            s = line.split("#", 1)[0].strip()
            if not s:
                continue
            try:
                vals.append(float(s))
            except ValueError:
                raise ValueError(f"{path}: line {lineno}: not a number: {s!r}") from None
    if not vals:
        raise ValueError(f"{path}: no thresholds in the file (N = 0)")
    return np.asarray(vals, dtype=np.float64)


def grid_rank(values: ArrayLike, thresholds: ArrayLike) -> np.ndarray:
    """Each value's rank alpha = #{k : tau_k < x} in [0, N] (int64): 1[x <= tau_k] = 1[alpha <= k].

    This is the encoding every party computes locally from its own value.
    ``ValueError`` for NaN or infinite values (naming the first row).
    """
    x = np.asarray(values, dtype=np.float64).reshape(-1)
    bad = np.flatnonzero(~np.isfinite(x))
    if bad.size:
        raise ValueError(f"values: row {bad[0] + 1} is NaN or infinite")
    tau = np.asarray(thresholds, dtype=np.float64)
    return np.searchsorted(tau, x, side="left").astype(np.int64)
