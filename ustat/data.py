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
import gzip
import hashlib
import io
import math
import numbers
import os
from dataclasses import dataclass, field
from typing import Callable, Iterable, Sequence

import numpy as np

from mpc.rng import as_rng

__all__ = [
    "load_csv",
    "read_table",
    "Table",
    "DataError",
    "Remark",
    "parse_numeric",
    "category_codes",
    "map_labels",
    "normalize",
    "parse_bounds",
    "synthetic_uniform",
    "DATA_BOUNDS_WARNING",
    "BINARY_VOCABULARY",
]

#: Warning returned by :func:`normalize` when the bounds come from the data.
DATA_BOUNDS_WARNING = (
    "no bounds given, so the data's own min/max were used to normalise; "
    "these are not differentially private and leak information about the data "
    "(give public bounds with --bounds lo:hi,... to avoid this)")

#: Labels whose binary meaning is fixed (case-insensitive): code 0, code 1.
BINARY_VOCABULARY = (("0", "no", "false"), ("1", "yes", "true"))


class DataError(ValueError):
    """A problem with the data or its description, with advice for each interface.

    ``str(err)`` is the message with the Python API advice (``api_hint``);
    :meth:`for_cli` gives it with the command-line advice instead. ``kind``
    names the problem (``"non-numeric"``, ``"bounds"``, ``"label"``, ...) and
    ``column`` the column, so a caller can add its own advice.
    """

    def __init__(self, message: str, *, api_hint: str = "", cli_hint: str = "",
                 kind: str = "", column: str | None = None):
        super().__init__(message + (f" ({api_hint})" if api_hint else ""))
        self.message, self.api_hint, self.cli_hint = message, api_hint, cli_hint
        self.kind, self.column = kind, column

    def for_cli(self, hint: str | None = None) -> str:
        h = self.cli_hint if hint is None else hint
        return self.message + (f" ({h})" if h else "")


class Remark(str):
    """A warning text (``str``: with the Python API advice) that also has :meth:`for_cli`."""

    def __new__(cls, message: str, api_hint: str = "", cli_hint: str = ""):
        obj = super().__new__(cls, message + (f" ({api_hint})" if api_hint else ""))
        obj.message, obj.cli_hint = message, cli_hint
        return obj

    def for_cli(self) -> str:
        return self.message + (f" ({self.cli_hint})" if self.cli_hint else "")


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


@dataclass
class Table:
    """Selected columns of a delimited text file, as strings, with their file lines.

    ``names``: the selected column names (1-based positions "1", "2", ... for
    a file without header); ``columns[name]``: the stripped cells; ``lines``:
    the file line of each row (1-based); ``sha256``: digest of the file's
    content (after gzip decompression), its identity for a privacy budget;
    ``warnings``: format remarks (:class:`Remark`, e.g. a header that looks like data).
    """

    path: str
    header: list
    names: list
    columns: dict
    lines: list
    has_header: bool = True
    sha256: str = ""
    warnings: list = field(default_factory=list)

    @property
    def n_rows(self) -> int:
        return len(self.lines)


def _read_text(path: str, encoding: str) -> tuple[str, bytes]:
    """The decoded text and the raw content; gzip (magic 1f 8b) is decompressed transparently."""
    with open(path, "rb") as fh:
        raw = fh.read()
    if raw[:2] == b"\x1f\x8b":
        try:
            raw = gzip.decompress(raw)
        except (OSError, EOFError) as exc:
            raise DataError(f"{path}: damaged gzip file ({exc})", kind="encoding") from None
    norm = encoding.lower().replace("_", "-")
    try:
        text = raw.decode("utf-8-sig" if norm in ("utf-8", "utf8") else encoding)
    except LookupError:
        raise DataError(f"unknown encoding {encoding!r}", kind="encoding") from None
    except UnicodeDecodeError as exc:
        line = raw[:exc.start].count(b"\n") + 1
        raise DataError(
            f"{path}: line {line}: byte 0x{raw[exc.start]:02x} is not valid {encoding} text",
            api_hint="pass encoding='latin-1' or the file's encoding",
            cli_hint="give the file's encoding, e.g. --encoding latin-1", kind="encoding") from None
    return text, raw


def _looks_numeric(fields) -> bool:
    try:
        return bool(fields) and all(math.isfinite(float(f)) for f in fields)
    except ValueError:
        return False


def read_table(path, columns: Sequence[str] | Callable | None = None, sep: str | None = None, *,
               header: bool = True, encoding: str = "utf-8") -> Table:
    """Read a delimited text file (CSV, ';' or TAB; gzip transparently) into a :class:`Table`.

    ``columns``: names to keep, in order (default all), or a callable
    ``choose(header) -> names`` deciding from the header; with ``header=False``
    names are 1-based positions ("1", "2", ...) and every line is a record.
    Raises :class:`DataError` (a ValueError) naming the file and line for an
    empty file, undecodable bytes (naming the encoding), a missing or
    duplicated column and a row with the wrong number of fields.
    Cost: one pass over the file.
    """
    path = os.fspath(path)
    text, raw = _read_text(path, encoding)
    first = text.split("\n", 1)[0]
    if not first.strip():
        raise DataError(f"{path}: empty file or empty first line"
                        + (" (a header row is required)" if header else ""), kind="format")
    if sep is None:
        sep = _sniff_sep(first)
    elif not isinstance(sep, str) or len(sep) != 1:
        raise ValueError(f"sep must be a single character, got {sep!r}")
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=sep, quotechar='"')
    try:
        first_row = [h.strip() for h in next(reader)]
        head = first_row if header else [str(i + 1) for i in range(len(first_row))]
        warnings = []
        if header and _looks_numeric(first_row):
            warnings.append(Remark(
                f"{path}: the header line looks like data ({sep.join(first_row)!r}); if the "
                "file has no header, its first record is being lost", api_hint="pass header=False",
                cli_hint="use --no-header"))
        names = _select(path, head, columns, header and _looks_numeric(first_row))
        idx = [head.index(c) for c in names]
        cells: list[list[str]] = [[] for _ in names]
        lines: list[int] = []
        rows = reader if header else _prepend(first_row, reader)
        width = len(head)
        for row in rows:
            if not row or (len(row) == 1 and not row[0].strip()):
                continue  # blank line
            if len(row) != width:
                raise DataError(f"{path}: line {reader.line_num}: expected {width} fields "
                                f"(as in the {'header' if header else 'first line'}), got {len(row)}",
                                kind="format")
            lines.append(reader.line_num)
            for out, i in zip(cells, idx):
                out.append(row[i].strip())
    except csv.Error as exc:
        raise DataError(f"{path}: line {reader.line_num}: not a delimited text file ({exc})",
                        kind="format") from None
    if not lines:
        raise DataError(f"{path}: no data rows" + (" after the header" if header else ""),
                        kind="format")
    return Table(path, head, names, dict(zip(names, cells)), lines, header,
                 hashlib.sha256(raw).hexdigest(), warnings)


def _prepend(first, reader):
    yield first
    yield from reader


def _select(path, head, columns, looks_headerless: bool = False) -> list:
    if callable(columns):
        columns = columns(list(head))
    if columns is None:
        return list(head)
    if isinstance(columns, str):
        columns = [c.strip() for c in columns.split(",")]
    names = [str(c).strip() for c in columns]
    if not names:
        raise ValueError("columns must name at least one column")
    missing = [c for c in names if c not in head]
    if missing:
        raise DataError(f"{path}: column(s) {missing} not found; available columns: "
                        f"{', '.join(head)}", kind="column")
    dup = sorted({c for c in names if head.count(c) > 1})
    if dup:
        raise DataError(f"{path}: column name(s) {dup} appear more than once in the header",
                        api_hint="header=False if the file has none" if looks_headerless else "",
                        cli_hint="--no-header if the file has none" if looks_headerless else "",
                        kind="column")
    return names


def load_csv(path, columns: Sequence[str] | None = None, sep: str | None = None, *,
             categorical: bool | Iterable[str] = False,
             return_categories: bool = False, header: bool = True, encoding: str = "utf-8"):
    """Read selected columns of a CSV file into a float64 array.

    Parameters
    ----------
    path : str or os.PathLike
        Delimited text (gzip-compressed files are read transparently); fields
        may be quoted ("..."), e.g. the UCI Bank Marketing ``bank.csv``
        (';'-separated, quoted strings).
    columns : sequence of str, optional
        Column names to keep, in this order (default: all columns).
    sep : str, optional
        Field separator; default: sniffed from the first line (',', ';' or TAB).
    categorical : bool or iterable of str
        Columns to read as categories: ``True`` for all selected columns, or
        a collection of names. A categorical column's distinct strings, sorted
        (numerically when they are all numbers, else as strings), are coded
        0..K-1 (e.g. ``job`` of bank.csv, for the duplicate pair ratio kernel
        f(x, y) = 1[x = y] of Section 6.2.3). The codes depend on which
        values occur: use them where only equality matters, and
        :func:`map_labels` where the order of the classes does.
    return_categories : bool
        Also return ``{column: [level_0, level_1, ...]}`` for categorical columns.
    header : bool
        The first line names the columns (default). Without, every line is a
        record and the columns are named "1", "2", ...
    encoding : str
        Text encoding (default UTF-8, with or without BOM).

    Returns
    -------
    values : ndarray of float64, shape (n, d)
    names : list of str (the d column names)
    categories : dict, only when ``return_categories`` is true

    Raises :class:`DataError` (a ValueError) for a missing header, a missing
    column (listing the available ones), a row with the wrong number of
    fields, undecodable bytes, and for empty, NaN/infinite or non-numeric
    cells in numeric columns, naming the file line (1-based) and the column.

    Cost: one pass over the file; numeric conversion is vectorised per column.
    """
    t = read_table(path, columns, sep, header=header, encoding=encoding)
    names = t.names
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
    values = np.empty((t.n_rows, len(names)), dtype=np.float64)
    categories: dict[str, list[str]] = {}
    for j, name in enumerate(names):
        col = t.columns[name]
        _check_empty(col, name, t.lines, t.path)
        if name in cat:
            values[:, j], categories[name] = category_codes(col)
        else:
            values[:, j] = parse_numeric(col, name, t.lines, t.path)
    if return_categories:
        return values, names, categories
    return values, names


def _check_empty(col, name, lines, path):
    arr = np.asarray(col, dtype=object)
    empty = np.flatnonzero(arr == "")
    if empty.size:
        raise DataError(f"{path}: line {lines[empty[0]]}, column {name!r}: empty cell "
                        f"({empty.size} empty cell(s) in this column)", kind="empty", column=name)


def category_codes(col: Sequence[str]) -> tuple[np.ndarray, list]:
    """Codes 0..K-1 of the distinct strings of ``col`` (numeric order if all are numbers)."""
    levels, codes = np.unique(np.asarray(col, dtype=str), return_inverse=True)
    order = _level_order(levels)
    rank = np.empty(len(levels), dtype=np.int64)
    rank[order] = np.arange(len(levels))
    return rank[codes].astype(np.float64), [str(levels[i]) for i in order]


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


def parse_numeric(col: Sequence[str], name: str, lines: Sequence[int], path: str) -> np.ndarray:
    """float64 values of a column; :class:`DataError` naming the first bad cell's line.

    Kinds: ``"empty"``, ``"non-numeric"`` (advice: read it as a category),
    ``"nonfinite"`` (NaN or infinite).
    """
    _check_empty(col, name, lines, path)
    try:
        out = np.asarray(col, dtype=np.float64)
    except ValueError:
        out = None
    if out is not None:
        bad = np.flatnonzero(~np.isfinite(out))
        if bad.size == 0:
            return out
        r = int(bad[0])
        raise DataError(f"{path}: line {lines[r]}, column {name!r}: value {col[r]!r} is "
                        f"NaN or infinite ({bad.size} such cell(s) in this column)",
                        kind="nonfinite", column=name)
    for r, s in enumerate(col):  # error path only: locate the first bad cell
        try:
            float(s)
        except ValueError:
            raise DataError(f"{path}: line {lines[r]}, column {name!r}: non-numeric value {s!r}",
                            api_hint="use categorical=... for category columns",
                            cli_hint="choose a numeric column with --columns", kind="non-numeric",
                            column=name) from None
    raise AssertionError("unreachable")  # pragma: no cover


def _label_key(s: str):
    try:
        v = float(s)
    except ValueError:
        return ("s", s)
    return ("n", v) if math.isfinite(v) else ("s", s)


def map_labels(col: Sequence[str], name: str, lines: Sequence[int], path: str, n_classes: int, *,
               positive: str | None = None, classes: Sequence[str] | None = None):
    """Class codes 0..n_classes-1 of a label column by a rule fixed before looking at the data.

    The mapping never depends on which labels occur (that, like the class
    counts, is a fact about the data that only the DP release may reveal):
    each record's label is mapped on its own.

    * ``classes`` (a, b, c): label a -> 0, b -> 1, ...; any other label is an error.
    * ``positive`` (binary only): that label -> 1, every other label -> 0.
    * neither: binary labels must come from :data:`BINARY_VOCABULARY`
      (0/no/false -> 0, 1/yes/true -> 1, case-insensitive, 1.0 = 1); more
      classes must be the codes 0, 1, ..., n_classes - 1.

    Labels match as strings, or as numbers when both parse (1 = 1.0).
    Returns ``(codes float64, mapping)``; ``mapping`` = {"column", "rule",
    "classes": the label(s) of each code}. :class:`DataError` (kind
    ``"label"``) names the first label outside the rule and the options.
    """
    _check_empty(col, name, lines, path)
    if positive is not None and classes is not None:
        raise ValueError("give positive or classes, not both")
    if positive is not None and n_classes != 2:
        raise DataError(f"a positive class applies to two-class labels; column {name!r} needs "
                        f"{n_classes} ordered classes", api_hint="pass classes=[...]",
                        cli_hint="give the class order with --classes", kind="label", column=name)
    if classes is not None:
        classes = [str(c).strip() for c in classes]
        if len(classes) != n_classes or len(set(map(_label_key, classes))) != n_classes:
            raise ValueError(f"classes must name {n_classes} distinct labels, got {classes}")
        table = {_label_key(c): i for i, c in enumerate(classes)}
        rule, shown = "given order", list(classes)
    elif positive is not None:
        pos = _label_key(str(positive).strip())
        keys = [_label_key(v) for v in col]
        codes = np.array([k == pos for k in keys], dtype=np.float64)
        return codes, {"column": name, "rule": "positive label",
                       "classes": [f"any label but {str(positive).strip()!r}", str(positive).strip()]}
    elif n_classes == 2:
        table = {("s", w): i for i, words in enumerate(BINARY_VOCABULARY) for w in words}
        table.update({("n", 0.0): 0, ("n", 1.0): 1})
        rule, shown = "fixed vocabulary", ["/".join(w) for w in BINARY_VOCABULARY]
    else:
        table = {("n", float(i)): i for i in range(n_classes)}
        rule, shown = "numeric codes", [str(i) for i in range(n_classes)]
    codes = np.empty(len(col), dtype=np.float64)
    for r, v in enumerate(col):            # one dictionary lookup per record
        k = _label_key(v)
        code = table.get(k if k[0] == "n" or classes is not None else ("s", v.casefold()))
        if code is None:
            raise _label_error(v, r, name, lines, path, n_classes, classes)
        codes[r] = code
    return codes, {"column": name, "rule": rule, "classes": shown}


def _label_error(v, r, name, lines, path, n_classes, classes) -> DataError:
    where = f"{path}: line {lines[r]}, column {name!r}: label {v!r}"
    if classes is not None:
        return DataError(f"{where} is not one of the classes {list(classes)}", kind="label",
                         column=name)
    if n_classes == 2:
        return DataError(f"{where} is not a label whose meaning is fixed (0/1, no/yes, false/true)",
                         api_hint="name the positive class with positive=... or the order with "
                                  "classes=[negative, positive]",
                         cli_hint="name the positive class with --positive VALUE, or the order "
                                  "with --classes NEGATIVE,POSITIVE", kind="label", column=name)
    codes = ",".join(str(i) for i in range(n_classes))
    return DataError(f"{where} is not one of the codes {codes}, whose order is fixed",
                     api_hint="give the class order with classes=[...]",
                     cli_hint=f"give the class order with --classes a,b,{'c' if n_classes == 3 else '...'}",
                     kind="label", column=name)


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
            raise DataError(
                f"values of {label[j]}: {int(out_count[j])} of {n} row(s) outside the bounds "
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
