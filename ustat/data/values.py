"""Cells to numbers: numeric columns, category codes and class labels by a fixed rule.

Every function checks each record on its own (empty, non-numeric, NaN cells,
labels outside the rule) and raises :class:`~ustat.data.errors.DataError`
naming the file line and column of the first such record, never how many
there are nor a cell's content (a message is an output about the data: a
count would answer an exact query, issue 37). Part of :mod:`ustat.data`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TypedDict

import numpy as np

from .errors import DataError

__all__ = ["BINARY_VOCABULARY", "Cells", "LabelMapping", "category_codes", "check_empty",
           "map_labels", "parse_numeric"]

#: Labels whose binary meaning is fixed (case-insensitive): code 0, code 1.
BINARY_VOCABULARY = (("0", "no", "false"), ("1", "yes", "true"))

#: The cells of one column: stripped strings, as :class:`~ustat.data.files.Table` holds them
#: (a 1-d array of strings, or of objects, is accepted too).
Cells = Sequence[str] | np.ndarray


class LabelMapping(TypedDict):
    """How :func:`map_labels` coded a label column: the column, the rule, each code's label(s)."""

    column: str
    rule: str
    classes: list[str]


def check_empty(col: Cells, name: str, lines: Sequence[int], path: str) -> None:
    """DataError naming the line of the first empty cell of a column, if any (not how many)."""
    arr = np.asarray(col, dtype=object)
    empty = np.flatnonzero(arr == "")
    if empty.size:
        raise DataError(f"{path}: line {lines[empty[0]]}, column {name!r}: empty cell",
                        kind="empty", column=name)


def category_codes(col: Cells) -> tuple[np.ndarray, list[str]]:
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


def parse_numeric(col: Cells, name: str, lines: Sequence[int], path: str) -> np.ndarray:
    """float64 values of a column; :class:`DataError` naming the first bad cell's line.

    Kinds: ``"empty"``, ``"non-numeric"`` (advice: read it as a category),
    ``"nonfinite"`` (NaN or infinite).
    """
    check_empty(col, name, lines, path)
    try:
        out = np.asarray(col, dtype=np.float64)
    except ValueError:
        out = None
    if out is not None:
        bad = np.flatnonzero(~np.isfinite(out))
        if bad.size == 0:
            return out
        r = int(bad[0])
        raise DataError(f"{path}: line {lines[r]}, column {name!r}: the value is NaN or "
                        "infinite", kind="nonfinite", column=name)
    for r, s in enumerate(col):  # error path only: locate the first bad cell
        try:
            float(s)
        except ValueError:
            raise DataError(f"{path}: line {lines[r]}, column {name!r}: non-numeric value",
                            api_hint="use categorical=... for category columns",
                            cli_hint="choose a numeric column with --columns", kind="non-numeric",
                            column=name) from None
    raise AssertionError("unreachable")  # pragma: no cover


def _label_key(s: str) -> tuple[str, str | float]:
    try:
        v = float(s)
    except ValueError:
        return ("s", s)
    return ("n", v) if math.isfinite(v) else ("s", s)


def map_labels(col: Cells, name: str, lines: Sequence[int], path: str, n_classes: int, *,
               positive: str | None = None,
               classes: Sequence[str] | None = None) -> tuple[np.ndarray, LabelMapping]:
    """Class codes 0..n_classes-1 of a label column by a rule fixed before looking at the data.

    The mapping never depends on which labels occur (that, like the class
    counts, is a fact about the data that only the DP release may reveal):
    each record's label is mapped on its own.

    * ``classes`` (a, b, c): label a -> 0, b -> 1, ...; any other label is an error.
    * ``positive`` (binary only): that label -> 1, every other label -> 0; a
      label equal to it but for case or surrounding spaces is an error (a
      mistyped class would otherwise make the positive class empty).
    * neither: binary labels must come from :data:`BINARY_VOCABULARY`
      (0/no/false -> 0, 1/yes/true -> 1, case-insensitive, 1.0 = 1); more
      classes must be the codes 0, 1, ..., n_classes - 1.

    Labels match as strings, or as numbers when both parse (1 = 1.0).
    Returns ``(codes float64, mapping)``; ``mapping`` = {"column", "rule",
    "classes": the label(s) of each code}. :class:`DataError` (kind
    ``"label"``) names the first label outside the rule and the options.
    """
    check_empty(col, name, lines, path)
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
        text = str(positive).strip()
        pos = _label_key(text)
        keys = [_label_key(v) for v in col]
        hits = [k == pos for k in keys]
        near = [r for r, v in enumerate(col)
                if not hits[r] and v.strip().casefold() == text.casefold()]
        if near:                   # this record's label is the positive class mistyped
            raise DataError(f"{path}: line {lines[near[0]]}, column {name!r}: the label differs "
                            f"from the positive class {text!r} only in case or spaces; labels "
                            f"are matched exactly",
                            api_hint="pass positive= as the label is written in the file",
                            cli_hint="give --positive as the label is written in the file",
                            kind="positive", column=name)
        codes = np.array(hits, dtype=np.float64)
        return codes, {"column": name, "rule": "positive label",
                       "classes": [f"any label but {text!r}", text]}
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
            raise _label_error(r, name, lines, path, n_classes, classes)
        codes[r] = code
    return codes, {"column": name, "rule": rule, "classes": shown}


def _label_error(r: int, name: str, lines: Sequence[int], path: str, n_classes: int,
                 classes: Sequence[str] | None) -> DataError:
    where = f"{path}: line {lines[r]}, column {name!r}: the label"
    if classes is not None:
        return DataError(f"{where} is not one of the classes {list(classes)}", kind="label",
                         column=name)
    if n_classes == 2:
        return DataError(f"{where} has no fixed meaning (0/1, no/yes, false/true)",
                         api_hint="name the positive class with positive=... or the order with "
                                  "classes=[negative, positive]",
                         cli_hint="name the positive class with --positive VALUE, or the order "
                                  "with --classes NEGATIVE,POSITIVE", kind="label", column=name)
    codes = ",".join(str(i) for i in range(n_classes))
    example = "a,b,c" if n_classes == 3 else "a,b,..."
    return DataError(f"{where} is not one of the codes {codes}, whose order is fixed",
                     api_hint="give the class order with classes=[...]",
                     cli_hint=f"give the class order with --classes {example}",
                     kind="label", column=name)
