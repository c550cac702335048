"""Public bounds and the map of records into [0, 1]^d.

The kernels of Sinh & Ramon take records in X = [0, 1]^d; bounds must be
public (the data's own min/max leak). Part of :mod:`ustat.data`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from numpy.typing import ArrayLike

from .errors import DataError

__all__ = ["DATA_BOUNDS_WARNING", "normalize", "parse_bounds"]

#: Warning returned by :func:`normalize` when the bounds come from the data.
DATA_BOUNDS_WARNING: str = (
    "no bounds given, so the data's own min/max were used to normalise; "
    "these are not differentially private and leak information about the data "
    "(give public bounds with --bounds lo:hi,... to avoid this)")


def parse_bounds(text: str, d: int | None = None) -> list[tuple[float, float]]:
    """Parse "lo:hi,lo:hi,..." into [(lo, hi), ...]; one pair per column, lo < hi, finite.

    ``d``, if given, is the expected number of pairs. Cost: O(len(text)).
    """
    if not isinstance(text, str):
        raise TypeError(f"bounds must be a string like '0:1,-5:5', got {type(text).__name__}")
    if not text.strip():
        raise ValueError("bounds: empty string; expected 'lo:hi' per column, comma-separated")
    out = []
    for i, part in enumerate(text.split(",")):
        piece = part.strip()
        fields = piece.split(":")
        if len(fields) != 2:
            raise ValueError(f"bounds: entry {i + 1} {piece!r} is not of the form lo:hi")
        try:
            lo, hi = float(fields[0]), float(fields[1])
        except ValueError:
            raise ValueError(f"bounds: entry {i + 1} {piece!r}: lo and hi must be "
                             "numbers") from None
        if not (math.isfinite(lo) and math.isfinite(hi)):
            raise ValueError(f"bounds: entry {i + 1} {piece!r}: lo and hi must be finite")
        if not lo < hi:
            raise ValueError(f"bounds: entry {i + 1} {piece!r}: need lo < hi")
        out.append((lo, hi))
    if d is not None and len(out) != d:
        raise ValueError(f"bounds: got {len(out)} lo:hi pair(s) for {d} column(s)")
    return out


def normalize(values: ArrayLike, bounds: str | ArrayLike | None = None, clip: bool = False,
              names: Sequence[str] | None = None,
              lines: Sequence[int] | None = None) -> tuple[np.ndarray, str | None]:
    """Map each column affinely into [0, 1]: (x - lo) / (hi - lo).

    Parameters
    ----------
    values : array_like, shape (n, d) or (n,)
    bounds : list of (lo, hi) per column, or None
        Public bounds (as the DP analysis assumes). ``None``: the data's own
        min/max are used and a warning string is returned (they leak
        information about the data; a constant column then maps to 0).
    clip : bool
        Clip values outside the bounds instead of raising.
    names : column names for error messages (default "column 0", ...).
    lines : the file line of each row, for error messages (default: "row i", 1-based).

    Returns
    -------
    (normalized, warning) : float64 array of the input's shape, and None or
    the warning text :data:`DATA_BOUNDS_WARNING`.

    Raises ValueError for NaN/infinite values, a wrong number of bounds,
    lo >= hi, and values outside the bounds unless ``clip``, naming the
    column and the first such row (or file line), never how many rows nor
    their values: an error is an output about the data, and a count of the
    rows outside bounds the caller picks would be an exact query (issue 37).
    Cost: O(n d), vectorised.
    """
    x = np.asarray(values, dtype=np.float64)
    one_d = x.ndim == 1
    if one_d:
        x = x[:, None]
    if x.ndim != 2:
        raise ValueError(f"values must have shape (n, d) or (n,), got {np.shape(values)}")
    n, d = x.shape
    if names is None:
        names = [f"column {j}" for j in range(d)]
    elif len(names) != d:
        raise ValueError(f"names: got {len(names)} name(s) for {d} column(s)")
    label = [f"{nm!r}" if not str(nm).startswith("column ") else str(nm) for nm in names]
    if lines is not None and len(lines) != n:
        raise ValueError(f"lines: got {len(lines)} line number(s) for {n} row(s)")

    def where(i: int) -> str:
        return f"line {lines[i]}" if lines is not None else f"row {i + 1}"

    nonfinite = ~np.isfinite(x)
    if nonfinite.any():
        j = int(np.flatnonzero(nonfinite.any(axis=0))[0])
        i = int(np.flatnonzero(nonfinite[:, j])[0])
        raise ValueError(f"values: {where(i)} of {label[j]} is NaN or infinite")
    warning = None
    if bounds is None:
        if n == 0:
            raise ValueError("values: no rows to take min/max from; give bounds")
        lo = x.min(axis=0)
        hi = x.max(axis=0)
        warning = DATA_BOUNDS_WARNING
    else:
        if isinstance(bounds, str):
            bounds = parse_bounds(bounds, d)
        b = np.asarray(bounds, dtype=np.float64)
        if b.ndim == 1 and b.shape == (2,) and d == 1:
            b = b[None, :]
        if b.shape != (d, 2):
            raise ValueError(f"bounds: need one (lo, hi) pair per column ({d}), got shape "
                             f"{np.shape(bounds)}")
        lo, hi = b[:, 0], b[:, 1]
        for j in range(d):  # d is the number of columns, small
            if not (np.isfinite(lo[j]) and np.isfinite(hi[j]) and lo[j] < hi[j]):
                raise ValueError(f"bounds for {label[j]}: need finite lo < hi, got "
                                 f"({lo[j]}, {hi[j]})")
        outside = (x < lo) | (x > hi)
        if not clip and outside.any():
            j = int(np.flatnonzero(outside.any(axis=0))[0])
            i = int(np.flatnonzero(outside[:, j])[0])
            raise DataError(
                f"values of {label[j]}: {where(i)} is outside the bounds "
                f"[{lo[j]}, {hi[j]}]", api_hint="widen the bounds or pass clip=True",
                cli_hint="widen --bounds or add --clip", kind="bounds", column=str(names[j]))
        x = np.clip(x, lo, hi)
    # halves: x - lo and hi - lo cannot overflow for any finite doubles (|x| <= 1.8e308),
    # and halving is exact (but for subnormals), so the quotient is the same as without it
    span = hi * 0.5 - lo * 0.5
    safe = np.where(span > 0, span, 1.0)
    y = np.where(span > 0, (x * 0.5 - lo * 0.5) / safe, 0.0)
    y = np.clip(y, 0.0, 1.0)  # rounding only: inputs are already within [lo, hi]
    return (y[:, 0] if one_d else y), warning
