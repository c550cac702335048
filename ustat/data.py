"""Reading, checking and normalising the parties' records for the CLI.

In a deployment each party holds its own record; the CLI simulates the n
parties from one table. This module turns a CSV file (or the embedded
synthetic default) into a ``float64`` array of shape (n, d) whose rows are
the parties' records, and maps it into [0, 1]^d as the kernels of Sinh &
Ramon (Section 2: X = [0, 1]^d, kernel values in [0, 1]) expect.

Errors are raised, never silently repaired: an empty, NaN or non-numeric
cell is a ``ValueError`` naming the file line and the column; values outside
user-given bounds are an error unless ``clip=True`` is asked for.
Bounds taken from the data itself leak information about the data (the
minimum and maximum are not differentially private), so ``normalize`` then
returns a warning string that the CLI prints.
"""

from __future__ import annotations

import csv
import io
import math
import numbers
import os
from typing import Iterable, Sequence

import numpy as np

from mpc.rng import as_rng

__all__ = [
    "load_csv",
    "normalize",
    "parse_bounds",
    "synthetic_uniform",
    "DATA_BOUNDS_WARNING",
]

#: Warning returned by :func:`normalize` when the bounds come from the data.
DATA_BOUNDS_WARNING = (
    "warning: no bounds given, so the data's own min/max were used to normalise; "
    "these are not differentially private and leak information about the data "
    "(give public bounds with --bounds lo:hi,... to avoid this)")

_SEPARATORS = (",", ";", "\t")


def _sniff_sep(header: str) -> str:
    """The separator among ',', ';', TAB occurring most often outside quotes in the header."""
    counts = dict.fromkeys(_SEPARATORS, 0)
    quoted = False
    for ch in header:
        if ch == '"':
            quoted = not quoted
        elif not quoted and ch in counts:
            counts[ch] += 1
    best = max(_SEPARATORS, key=lambda s: counts[s])
    return best if counts[best] else ","


def load_csv(path, columns: Sequence[str] | None = None, sep: str | None = None, *,
             categorical: bool | Iterable[str] = False,
             return_categories: bool = False):
    """Read selected columns of a CSV file with a header row into a float64 array.

    Parameters
    ----------
    path : str or os.PathLike
        File with a header row; fields may be quoted ("..."), e.g. the UCI
        Bank Marketing ``bank.csv`` (';'-separated, quoted strings).
    columns : sequence of str, optional
        Column names to keep, in this order (default: all columns).
    sep : str, optional
        Field separator; default: sniffed from the header (',', ';' or TAB).
    categorical : bool or iterable of str
        Columns to read as categories: ``True`` for all selected columns, or
        a collection of names. A categorical column's distinct strings, sorted
        (numerically when they are all numbers, else as strings), are coded
        0..K-1 (e.g. ``job`` of bank.csv, for the duplicate pair ratio kernel
        f(x, y) = 1[x = y] of Section 6.2.3).
    return_categories : bool
        Also return ``{column: [level_0, level_1, ...]}`` for categorical columns.

    Returns
    -------
    values : ndarray of float64, shape (n, d)
    names : list of str (the d column names)
    categories : dict, only when ``return_categories`` is true

    Raises ValueError for a missing file header, a missing column (listing
    the available ones), a row with the wrong number of fields, and for
    empty, NaN/infinite or non-numeric cells in numeric columns, naming the
    file line (1-based, the header is line 1) and the column.

    Cost: one pass over the file; numeric conversion is vectorised per column.
    """
    path = os.fspath(path)
    with open(path, newline="", encoding="utf-8-sig") as fh:
        text = fh.read()
    first = text.split("\n", 1)[0]
    if not first.strip():
        raise ValueError(f"{path}: empty file or empty header line (a header row is required)")
    if sep is None:
        sep = _sniff_sep(first)
    elif not isinstance(sep, str) or len(sep) != 1:
        raise ValueError(f"sep must be a single character, got {sep!r}")
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=sep, quotechar='"')
    header = [h.strip() for h in next(reader)]
    if columns is None:
        names = list(header)
    else:
        if isinstance(columns, str):
            columns = [c.strip() for c in columns.split(",")]
        names = [str(c).strip() for c in columns]
        if not names:
            raise ValueError("columns must name at least one column")
    missing = [c for c in names if c not in header]
    if missing:
        raise ValueError(f"{path}: column(s) {missing} not found; available columns: "
                         f"{', '.join(header)}")
    dup = sorted({c for c in names if header.count(c) > 1})
    if dup:
        raise ValueError(f"{path}: column name(s) {dup} appear more than once in the header")
    if categorical is True:
        cat = set(names)
    elif categorical is False or categorical is None:
        cat = set()
    else:
        cat = {categorical} if isinstance(categorical, str) else set(categorical)
        unknown = cat - set(names)
        if unknown:
            raise ValueError(f"categorical column(s) {sorted(unknown)} are not among the "
                             f"selected columns {names}")
    idx = [header.index(c) for c in names]
    cells: list[list[str]] = [[] for _ in names]
    lines: list[int] = []
    width = len(header)
    for row in reader:
        if not row or (len(row) == 1 and not row[0].strip()):
            continue  # blank line
        if len(row) != width:
            raise ValueError(f"{path}: line {reader.line_num}: expected {width} fields "
                             f"(as in the header), got {len(row)}")
        lines.append(reader.line_num)
        for out, i in zip(cells, idx):
            out.append(row[i].strip())
    if not lines:
        raise ValueError(f"{path}: no data rows after the header")
    values = np.empty((len(lines), len(names)), dtype=np.float64)
    categories: dict[str, list[str]] = {}
    for j, (name, col) in enumerate(zip(names, cells)):
        arr = np.asarray(col, dtype=object)
        empty = np.flatnonzero(arr == "")
        if empty.size:
            raise ValueError(f"{path}: line {lines[empty[0]]}, column {name!r}: empty cell "
                             f"({empty.size} empty cell(s) in this column)")
        if name in cat:
            levels, codes = np.unique(np.asarray(col, dtype=str), return_inverse=True)
            order = _level_order(levels)
            rank = np.empty(len(levels), dtype=np.int64)
            rank[order] = np.arange(len(levels))
            categories[name] = [str(levels[i]) for i in order]
            values[:, j] = rank[codes]
            continue
        values[:, j] = _to_float(col, name, lines, path)
    if return_categories:
        return values, names, categories
    return values, names


def _level_order(levels: np.ndarray) -> np.ndarray:
    """Order of categorical levels: numerically when every level is a number
    (so class labels "2", "10" keep their order), else as sorted strings."""
    try:
        as_num = np.array([float(v) for v in levels])
    except ValueError:
        return np.arange(len(levels))
    if not np.all(np.isfinite(as_num)):
        return np.arange(len(levels))
    return np.argsort(as_num, kind="stable")


def _to_float(col: list[str], name: str, lines: list[int], path: str) -> np.ndarray:
    try:
        out = np.asarray(col, dtype=np.float64)
    except ValueError:
        out = None
    if out is not None:
        bad = np.flatnonzero(~np.isfinite(out))
        if bad.size == 0:
            return out
        r = int(bad[0])
        raise ValueError(f"{path}: line {lines[r]}, column {name!r}: value {col[r]!r} is "
                         f"NaN or infinite ({bad.size} such cell(s) in this column)")
    for r, s in enumerate(col):  # error path only: locate the first bad cell
        try:
            v = float(s)
        except ValueError:
            raise ValueError(f"{path}: line {lines[r]}, column {name!r}: non-numeric value "
                             f"{s!r} (use categorical=... for category columns)") from None
        if not math.isfinite(v):
            raise ValueError(f"{path}: line {lines[r]}, column {name!r}: value {s!r} is "
                             f"NaN or infinite")
    raise AssertionError("unreachable")  # pragma: no cover


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
            raise ValueError(f"bounds: entry {i + 1} {piece!r}: lo and hi must be numbers") from None
        if not (math.isfinite(lo) and math.isfinite(hi)):
            raise ValueError(f"bounds: entry {i + 1} {piece!r}: lo and hi must be finite")
        if not lo < hi:
            raise ValueError(f"bounds: entry {i + 1} {piece!r}: need lo < hi")
        out.append((lo, hi))
    if d is not None and len(out) != d:
        raise ValueError(f"bounds: got {len(out)} lo:hi pair(s) for {d} column(s)")
    return out


def normalize(values, bounds=None, clip: bool = False, names: Sequence[str] | None = None):
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

    Returns
    -------
    (normalized, warning) : float64 array of the input's shape, and None or
    the warning text :data:`DATA_BOUNDS_WARNING`.

    Raises ValueError for NaN/infinite values, a wrong number of bounds,
    lo >= hi, and values outside the bounds (naming the column and how many
    rows are out) unless ``clip``. Cost: O(n d), vectorised.
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
    nonfinite = ~np.isfinite(x)
    if nonfinite.any():
        j = int(np.flatnonzero(nonfinite.any(axis=0))[0])
        raise ValueError(f"values: {int(nonfinite[:, j].sum())} NaN or infinite value(s) in "
                         f"{label[j]}")
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
        out_count = ((x < lo) | (x > hi)).sum(axis=0)
        if not clip and out_count.any():
            j = int(np.flatnonzero(out_count)[0])
            raise ValueError(
                f"values of {label[j]}: {int(out_count[j])} of {n} row(s) outside the bounds "
                f"[{lo[j]}, {hi[j]}] (widen the bounds or pass clip=True)")
        x = np.clip(x, lo, hi)
    span = hi - lo
    safe = np.where(span > 0, span, 1.0)
    y = np.where(span > 0, (x - lo) / safe, 0.0)
    y = np.clip(y, 0.0, 1.0)  # rounding only: inputs are already within [lo, hi]
    return (y[:, 0] if one_d else y), warning


def synthetic_uniform(n: int, d: int, rng=None) -> np.ndarray:
    """The embedded default data set: n records uniform in [0, 1)^d, float64 (n, d).

    Drawn from the CSPRNG (``rng`` a CSPRNG or a seed; 53 random bits per
    value). Cost: 8 n d bytes of AES keystream.
    """
    for name, v in (("n", n), ("d", d)):
        if isinstance(v, bool) or not isinstance(v, numbers.Integral):
            raise TypeError(f"{name} must be an integer, got {v!r}")
        if v < 1:
            raise ValueError(f"{name} must be >= 1, got {v}")
    return as_rng(rng).random((int(n), int(d)))
