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
import numbers
import os

import numpy as np

__all__ = ["check_thresholds", "regular", "geometric", "from_file", "grid_rank", "MAX_THRESHOLDS"]

#: Largest grid accepted (a tree of 2^22 leaves: noise and smoothing stay in memory).
MAX_THRESHOLDS = 1 << 22


def _count(n, name: str) -> int:
    if isinstance(n, (bool, np.bool_)) or not isinstance(n, numbers.Integral):
        raise TypeError(f"{name} must be an integer >= 1, got {n!r}")
    if n < 1:
        raise ValueError(f"{name} must be >= 1 (N = 0 thresholds gives nothing to release), "
                         f"got {n}")
    if n > MAX_THRESHOLDS:
        raise ValueError(f"{name} must be <= {MAX_THRESHOLDS}, got {n}")
    return int(n)


def _bounds(bounds, name: str = "bounds") -> tuple[float, float]:
    try:
        lo, hi = (float(v) for v in bounds)
    except (TypeError, ValueError):
        raise TypeError(f"{name} must be a pair (lo, hi) of numbers, got {bounds!r}") from None
    if not (math.isfinite(lo) and math.isfinite(hi)) or not lo < hi:
        raise ValueError(f"{name} must be finite with lo < hi, got ({lo}, {hi})")
    return lo, hi


def check_thresholds(thresholds, bounds=None) -> np.ndarray:
    """Validate a user grid: finite, strictly increasing, N >= 1, inside ``bounds`` if given.

    Returns a float64 copy. ``ValueError`` names the first offending
    position (1-based) for unsorted or duplicated thresholds.
    """
    try:
        tau = np.array(thresholds, dtype=np.float64).reshape(-1)
    except (TypeError, ValueError):
        raise TypeError(f"thresholds must be numbers, got {type(thresholds).__name__}") from None
    if tau.size == 0:
        raise ValueError("thresholds: N = 0 thresholds; give at least one")
    _count(tau.size, "number of thresholds")
    bad = np.flatnonzero(~np.isfinite(tau))
    if bad.size:
        raise ValueError(f"thresholds: threshold {bad[0] + 1} is not finite ({tau[bad[0]]})")
    d = np.diff(tau)
    if np.any(d < 0):
        k = int(np.flatnonzero(d < 0)[0])
        raise ValueError(f"thresholds must be sorted increasingly: threshold {k + 2} "
                         f"({tau[k + 1]}) "
                         f"< threshold {k + 1} ({tau[k]})")
    if np.any(d == 0):
        k = int(np.flatnonzero(d == 0)[0])
        raise ValueError(f"thresholds must be distinct: threshold {k + 2} duplicates threshold "
                         f"{k + 1} ({tau[k]})")
    if bounds is not None:
        lo, hi = _bounds(bounds)
        out = np.flatnonzero((tau < lo) | (tau > hi))
        if out.size:
            k = int(out[0])
            raise ValueError(f"thresholds: threshold {k + 1} ({tau[k]}) is outside the public "
                             f"bounds [{lo}, {hi}] ({out.size} threshold(s) outside)")
    return tau


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


def regular(bounds, n=None, psi=None) -> np.ndarray:
    """A regular grid on [lo, hi]: ``n`` equally spaced points from lo to hi, or the
    multiples of ``psi`` inside [lo, hi] followed by hi (so that tau_N = hi)."""
    lo, hi = _bounds(bounds)
    return _grid(lo, hi, n, psi, lambda v: v, lambda v: v, np.linspace, "grid step")


def geometric(bounds, n=None, psi=None) -> np.ndarray:
    """A geometric grid {e^(psi z)} in [lo, hi] (lo > 0): ``n`` log-spaced points from lo to
    hi, or the points e^(psi z) inside [lo, hi] followed by hi."""
    lo, hi = _bounds(bounds)
    if lo <= 0:
        raise ValueError(f"a geometric grid needs a positive lower bound, got lo = {lo}")
    return _grid(lo, hi, n, psi, math.log, np.exp, np.geomspace, "log step")


def from_file(path) -> np.ndarray:
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


def grid_rank(values, thresholds) -> np.ndarray:
    """Each value's rank alpha = #{k : tau_k < x} in [0, N] (int64): 1[x <= tau_k] = 1[alpha <= k].

    This is the encoding every party computes locally from its own value.
    ``ValueError`` for NaN or infinite values (naming the first row).
    """
    x = np.asarray(values, dtype=np.float64).reshape(-1)
    bad = np.flatnonzero(~np.isfinite(x))
    if bad.size:
        raise ValueError(f"values: row {bad[0] + 1} is NaN or infinite ({bad.size} such value(s))")
    tau = np.asarray(thresholds, dtype=np.float64)
    return np.searchsorted(tau, x, side="left").astype(np.int64)
