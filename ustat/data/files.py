"""Reading delimited text files (CSV, ';' or TAB; gzip transparently) into columns of strings.

:func:`read_table` reads the selected columns with their file lines (for
error messages) and the file's SHA-256 (its identity for a privacy budget);
:func:`load_csv` converts them to a float64 array. Part of :mod:`ustat.data`.
"""

from __future__ import annotations

import csv
import gzip
import hashlib
import io
import math
import os
import zlib
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Literal, overload

import numpy as np

from .errors import DataError, Remark
from .values import category_codes, check_empty, parse_numeric

__all__ = ["ColumnChoice", "FilePath", "Table", "load_csv", "read_table"]

#: A file to read: a path as ``str`` or an :class:`os.PathLike`.
FilePath = str | os.PathLike[str]
#: Columns to read: names (a sequence, or one comma-separated string), or a callable
#: ``choose(header) -> names`` deciding from the header; ``None``: every column.
ColumnChoice = str | Sequence[str] | Callable[[list[str]], Sequence[str]] | None


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
    header: list[str]
    names: list[str]
    columns: dict[str, list[str]]
    lines: list[int]
    has_header: bool = True
    sha256: str = ""
    warnings: list[Remark] = field(default_factory=list)

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
        except (OSError, EOFError, zlib.error) as exc:
            raise DataError(f"{path}: damaged gzip file ({exc})",
                            cli_hint="check the file, e.g. with gzip -t", kind="encoding") from None
    norm = encoding.lower().replace("_", "-")
    try:
        text = raw.decode("utf-8-sig" if norm in ("utf-8", "utf8") else encoding)
    except LookupError:
        raise DataError(f"unknown encoding {encoding!r}", kind="encoding") from None
    except UnicodeDecodeError as exc:
        line = raw[:exc.start].count(b"\n") + 1
        raise DataError(                    # the line, not the byte: it is part of a record
            f"{path}: line {line}: not valid {encoding} text",
            api_hint="pass encoding='latin-1' or the file's encoding",
            cli_hint="give the file's encoding, e.g. --encoding latin-1", kind="encoding") from None
    return text, raw


def _looks_numeric(fields: Sequence[str]) -> bool:
    try:
        return bool(fields) and all(math.isfinite(float(f)) for f in fields)
    except ValueError:
        return False


def read_table(path: FilePath, columns: ColumnChoice = None, sep: str | None = None, *,
               header: bool = True, encoding: str = "utf-8", rows: range | None = None) -> Table:
    """Read a delimited text file (CSV, ';' or TAB; gzip transparently) into a :class:`Table`.

    ``columns``: names to keep, in order (default all), or a callable
    ``choose(header) -> names`` deciding from the header; with ``header=False``
    names are 1-based positions ("1", "2", ...) and every line is a record.
    Raises :class:`DataError` (a ValueError) naming the file and line for an
    empty file, undecodable bytes (naming the encoding), a missing or
    duplicated column and a row with the wrong number of fields.
    ``rows``: keep only the records of these indices (0-based, in file
    order; a party host's own rows): the other records are split into fields
    but their cells are never kept or parsed; ``n_rows`` counts the kept ones.
    Cost: one pass over the file.
    """
    path = os.fspath(path)
    keep = None if rows is None else range(rows.start, rows.stop)
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
            warnings.append(Remark(            # not quoted: it may be the first record
                f"{path}: the header line looks like data (every field is a number); if the "
                "file has no header, its first record is being lost", api_hint="pass header=False",
                cli_hint="use --no-header"))
        names = _select(path, head, columns, header and _looks_numeric(first_row))
        idx = [head.index(c) for c in names]
        cells: list[list[str]] = [[] for _ in names]
        lines: list[int] = []
        records = reader if header else _prepend(first_row, reader)
        width = len(head)
        index = -1
        for row in records:
            if not row or (len(row) == 1 and not row[0].strip()):
                continue  # blank line
            index += 1
            if keep is not None and index not in keep:
                if index >= keep.stop:
                    break
                continue
            if len(row) != width:
                where = "header" if header else "first line"
                raise DataError(f"{path}: line {reader.line_num}: expected {width} fields "
                                f"(as in the {where}), got {len(row)}", kind="format")
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


def _prepend(first: list[str], reader: Iterator[list[str]]) -> Iterator[list[str]]:
    yield first
    yield from reader


def _select(path: str, head: list[str], columns: ColumnChoice,
            looks_headerless: bool = False) -> list[str]:
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


@overload
def load_csv(path: FilePath, columns: Sequence[str] | None = None, sep: str | None = None, *,
             categorical: bool | Iterable[str] = False, return_categories: Literal[False] = False,
             header: bool = True, encoding: str = "utf-8") -> tuple[np.ndarray, list[str]]: ...


@overload
def load_csv(path: FilePath, columns: Sequence[str] | None = None, sep: str | None = None, *,
             categorical: bool | Iterable[str] = False, return_categories: Literal[True],
             header: bool = True, encoding: str = "utf-8"
             ) -> tuple[np.ndarray, list[str], dict[str, list[str]]]: ...


@overload
def load_csv(path: FilePath, columns: Sequence[str] | None = None, sep: str | None = None, *,
             categorical: bool | Iterable[str] = False, return_categories: bool = False,
             header: bool = True, encoding: str = "utf-8"
             ) -> (tuple[np.ndarray, list[str]]
                   | tuple[np.ndarray, list[str], dict[str, list[str]]]): ...


def load_csv(path: FilePath, columns: Sequence[str] | None = None, sep: str | None = None, *,
             categorical: bool | Iterable[str] = False, return_categories: bool = False,
             header: bool = True, encoding: str = "utf-8"
             ) -> tuple[np.ndarray, list[str]] | tuple[np.ndarray, list[str], dict[str, list[str]]]:
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
        check_empty(col, name, t.lines, t.path)
        if name in cat:
            values[:, j], categories[name] = category_codes(col)
        else:
            values[:, j] = parse_numeric(col, name, t.lines, t.path)
    if return_categories:
        return values, names, categories
    return values, names
