"""A value column, and a value column with its 0/1 labels, as the ECDF family reads them.

``ustat ecdf`` / ``quantile`` read one numeric column; ``roc`` and ``hl`` a
value column (the score, the predicted probability) and a label column, each
label mapped on its own by a rule fixed before reading (``positive``: that
label -> 1, every other -> 0; without it 0/1, no/yes, false/true,
:func:`ustat.data.map_labels`): nothing about the label set (a single class,
the values present) is revealed outside the DP release. The command reads
every record of its file; a deployment's party host only its own ``rows``
(:mod:`ustat.deploy.runner`). Errors are :class:`ustat.data.DataError` (a
ValueError) naming the file, the line and the column.
"""

from __future__ import annotations

import numpy as np

from .errors import DataError
from .files import read_table
from .values import LabelMapping, map_labels, parse_numeric

__all__ = ["label_note", "label_rule_note", "read_column", "read_labelled"]


def _rows_read(path: str, got: int, rows: range | None) -> None:
    if rows is not None and got != len(rows):
        raise DataError(f"{path} has no record {rows.start + got} (this host holds records "
                        f"{rows.start}-{rows.stop - 1})", kind="format")


def read_column(path: str, column: str, *, sep: str | None = None, header: bool = True,
                encoding: str = "utf-8", rows: range | None = None) -> np.ndarray:
    """float64 values of one numeric ``column`` (``rows``: only those records)."""
    t = read_table(path, [column], sep, header=header, encoding=encoding, rows=rows)
    _rows_read(path, t.n_rows, rows)
    return parse_numeric(t.columns[column], column, t.lines, t.path)


def read_labelled(path: str, value_col: str, label_col: str, positive: str | None, *,
                  sep: str | None = None, header: bool = True, encoding: str = "utf-8",
                  rows: range | None = None) -> tuple[np.ndarray, np.ndarray, LabelMapping]:
    """(values float64, labels int64 0/1, the label mapping) of two columns, each label
    mapped on its own (module docstring); ``rows``: only those records."""
    if value_col == label_col:
        raise ValueError("the value and label columns must differ")
    t = read_table(path, [value_col, label_col], sep, header=header, encoding=encoding,
                   rows=rows)
    _rows_read(path, t.n_rows, rows)
    x = parse_numeric(t.columns[value_col], value_col, t.lines, t.path)
    codes, mapping = map_labels(t.columns[label_col], label_col, t.lines, t.path, 2,
                                positive=positive)
    return x, codes.astype(np.int64), mapping


def label_note(label_col: str, mapping: LabelMapping) -> str:
    """The report's note on how the labels were mapped."""
    shown = ", ".join(f"{lab} -> {i}" for i, lab in enumerate(mapping["classes"]))
    return f"classes of {label_col!r}: {shown} ({mapping['rule']})"


def label_rule_note(label_col: str, positive: str | None) -> str:
    """:func:`label_note` from the rule alone (it never depends on the labels read): for a
    process of a deployment that reads no record."""
    _, mapping = map_labels(np.array([], dtype=object), label_col, [], "", 2, positive=positive)
    return label_note(label_col, mapping)
