"""The parties' records for a U-statistic: a CSV file's columns or the synthetic default.

:class:`RecordSource` says where the records come from and how to read them
(the file, its format, the columns, the rule that maps labels to classes,
the public bounds, clipping); :func:`load_records` reads them (a party host
of a deployment reads only its own ``rows``) and normalizes the numeric
columns into [0, 1]. The ``ustat`` command builds a source from its flags,
a deployment from ``deploy.toml``; the messages name the flags.

Every check here is on one record at a time against public parameters (see
``CLEAR_CHECKS``): the file's format, numeric cells, labels against a rule
fixed before reading the data (``--positive`` / ``--classes``), values
against public ``--bounds``. Nothing computed across records is checked.
"""

from __future__ import annotations

import math
import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

from .errors import DataError
from .files import read_table
from .scale import normalize, parse_bounds
from .synthetic import synthetic_uniform
from .values import category_codes, map_labels, parse_numeric

if TYPE_CHECKING:
    from ..kernels import Kernel

__all__ = [
    "CLEAR_CHECKS",
    "SYNTHETIC_LEVELS",
    "SYNTHETIC_N",
    "RecordSource",
    "SourceError",
    "bounds_option",
    "check_memory",
    "label_options",
    "load_records",
    "raw_records",
    "require_bounds",
    "split_list",
]


@dataclass(frozen=True)
class RecordSource:
    """Where the parties' records come from (``csv`` None: the synthetic default of ``n``
    records drawn from ``seed``), which columns (``columns``: names, one per kernel column;
    None: by the kernel's names, else the whole file), the file's format, the label rule
    (``positive`` / ``classes``), the public ``bounds`` text (``lo:hi,...``) and ``clip``;
    ``epsilon``: the run's (bounds are required with a file at a finite epsilon)."""

    csv: str | None = None
    columns: str | None = None
    sep: str | None = None
    header: bool = True
    encoding: str = "utf-8"
    positive: str | None = None
    classes: str | None = None
    bounds: str | None = None
    clip: bool = False
    n: int | None = None
    seed: object = None
    epsilon: float = 1.0


class SourceError(ValueError):
    """A mistake in what the source names (the CLI reports it in one line, exit status 2)."""


def check_memory(n: int, bytes_per_record: int, flag: str = "--n") -> None:
    """Refuse a size whose records alone exceed this machine's memory, before allocating."""
    need = int(n) * int(bytes_per_record)
    try:
        have = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):       # pragma: no cover - non-POSIX
        return
    if need > have:
        raise SourceError(f"{flag} {n} needs at least {_bytes(need)} of memory for the records "
                         f"alone, and this machine has {_bytes(have)}: use a smaller {flag}")


def _bytes(b: float) -> str:
    for unit, scale in (("TB", 1e12), ("GB", 1e9), ("MB", 1e6)):
        if b >= scale:
            return f"{b / scale:.3g} {unit}"
    return f"{b:.0f} B"


def split_list(text: str | None) -> list | None:
    return None if text is None else [c.strip() for c in text.split(",") if c.strip()]

SYNTHETIC_N = 1000
#: number of categories of each categorical column in the synthetic default
SYNTHETIC_LEVELS = 5

#: What the CLI checks on the data in the clear, and what it does not (--help, docs/guides/cli.md).
CLEAR_CHECKS = """\
What is checked in the clear: only facts about each record on its own
against public parameters, the checks every party could make on its own
record before joining: the file's format (encoding, header, field count),
that a numeric cell parses and is finite, that a label belongs to the
declared classes (--positive / --classes or a label whose meaning is fixed),
that a value lies within the public --bounds (an error unless --clip). An
error names the first such line, never how many nor a cell's value. Nothing
computed across records is checked or printed outside the DP release: not the
class counts (or whether a class is empty), not the number of distinct labels,
not the min/max (--bounds is required with --csv at a finite epsilon). A
class that is empty or nearly so shows up in the released, noisy class counts
(a note says so)."""


def label_options(args: RecordSource, kern: Kernel) -> tuple[str | None, list | None]:
    """(positive, classes) for the kernel's ordered label column, checked against the kernel."""
    levels = kern.extra.get("levels", {})
    classes = split_list(args.classes)
    if (args.positive is not None or classes is not None) and not levels:
        raise SourceError("--positive and --classes apply to kernels with class labels "
                          f"(auc, vus), not {kern.name!r}")
    if args.positive is not None and classes is not None:
        raise SourceError("give --positive or --classes, not both")
    want = next(iter(levels.values()), 0)
    if args.positive is not None and want != 2:
        raise SourceError(f"--positive applies to two-class labels; kernel {kern.name!r} needs "
                         f"--classes with {want} labels in order")
    if classes is not None and len(classes) != want:
        raise SourceError(f"--classes must name {want} labels in order for kernel {kern.name!r}, "
                         f"got {len(classes)}")
    return args.positive, classes


class HasEpsilon(Protocol):
    """What :func:`require_bounds` reads of a run's options (a RecordSource, the CLI's
    arguments): the DP budget."""

    @property
    def epsilon(self) -> float: ...


def require_bounds(args: HasEpsilon, roles: Sequence[str]) -> None:
    """Without ``--bounds`` a release would use, and print, the data's exact minimum and
    maximum outside the DP mechanism: refused at a finite epsilon (``--epsilon inf`` is not
    private anyway and may use them, with a warning)."""
    if math.isinf(args.epsilon):
        return
    names = ", ".join(repr(r) for r in roles)
    raise SourceError(f"--bounds is required with --csv at a finite epsilon: give public bounds "
                     f"lo:hi for {names}, known without looking at the data (e.g. --bounds "
                     f"{','.join(['0:100'] * len(roles))}; --clip clips values outside them). "
                     f"The data's own min/max would be released outside the DP mechanism")


def bounds_option(text: str, d: int) -> list:
    """--bounds parsed into d (lo, hi) pairs; a mistake is reported with the flag's name."""
    try:
        return parse_bounds(text, d)
    except ValueError as exc:
        raise SourceError(f"--{exc}") from None


def _synthetic(args, kern):
    from mpc.arith.rng import as_rng

    if args.columns or args.bounds or args.positive is not None or args.classes is not None:
        raise SourceError("--columns, --bounds, --positive and --classes need --csv (the synthetic "
                         "default has public bounds [0, 1] and class codes 0, 1, ...)")
    n = SYNTHETIC_N if args.n is None else args.n
    if n < kern.degree:
        raise SourceError(f"--n must be >= {kern.degree} for kernel {kern.name!r}")
    check_memory(n, 8 * (kern.columns + 2 * kern.degree))     # records and the 2n edges
    g = as_rng(None if args.seed is None else f"synthetic:{args.seed}")
    X = synthetic_uniform(n, kern.columns, g)
    levels = kern.extra.get("levels", {})
    for c in kern.categorical:
        X[:, c] = g.integers(levels.get(c, SYNTHETIC_LEVELS), (n,))
    numeric = [c for c in range(kern.columns) if c not in kern.categorical]
    meta: dict[str, Any] = {"source": f"synthetic: {n} uniform records",
                            "bounds": [[0.0, 1.0]] * len(numeric)}
    for c, k in levels.items():
        meta["classes"] = {"column": kern.column_names[c], "rule": "synthetic codes",
                           "classes": [str(i) for i in range(k)]}
    return X, [], meta, None


def _chooser(args, kern, notes):
    """choose(header) -> the kernel's columns: --columns, else by name, else the whole file."""
    def choose(head):
        want = f"{kern.columns} column(s) ({','.join(kern.column_names)})"
        if args.columns:
            names = split_list(args.columns)
            assert names is not None            # args.columns is a non-empty string
            if len(names) != kern.columns:
                raise SourceError(f"kernel {kern.name!r} needs {want}, "
                                  f"--columns gives {len(names)}")
            return names
        if all(c in head for c in kern.column_names):
            if list(head) != list(kern.column_names):
                notes.append(f"columns {','.join(kern.column_names)} chosen by name "
                             f"(--columns to change)")
            return list(kern.column_names)
        if len(head) == kern.columns:
            return list(head)
        raise SourceError(f"kernel {kern.name!r} needs {want}; the file has {len(head)}: "
                         f"choose them with --columns")
    return choose


def _column_values(args, kern, table, c, name, by_default):
    """float64 values of kernel column c: labels, category codes or numbers."""
    col, lines = table.columns[name], table.lines
    levels = kern.extra.get("levels", {})
    if c in levels:
        positive, classes = label_options(args, kern)
        return map_labels(col, name, lines, table.path, levels[c], positive=positive,
                               classes=classes)
    if c in kern.categorical:
        return category_codes(col)[0], None
    try:
        return parse_numeric(col, name, lines, table.path), None
    except DataError as exc:
        if exc.kind != "non-numeric":
            raise
        role = kern.column_names[c] if c < len(kern.column_names) else str(c)
        hint = (f"the column was picked by default; choose a numeric column for {role!r} with "
                f"--columns" if by_default else f"kernel {kern.name!r} needs a number for {role!r}")
        raise SourceError(exc.for_cli(hint)) from None


def load_records(args: RecordSource, kern: Kernel, rows: range | None = None) -> tuple:
    """Records (n, d) normalized into [0, 1], warnings, metadata, and the raw records with
    their public bounds per kernel column (None for the synthetic default). ``rows``: only
    these records of the file (a party host's own, :mod:`ustat.deploy`)."""
    if args.csv is None:
        return _synthetic(args, kern)
    if args.n is not None:
        raise SourceError("--n sets the size of the synthetic default; with --csv the records are "
                         "the file's rows (drop --n)")
    numeric = [c for c in range(kern.columns) if c not in kern.categorical]
    label_options(args, kern)
    warnings: list = []
    table = read_table(args.csv, _chooser(args, kern, warnings), args.sep,
                            header=args.header, encoding=args.encoding, rows=rows)
    warnings = [w.for_cli() for w in table.warnings] + warnings
    names = table.names
    if rows is not None and table.n_rows != len(rows):
        raise SourceError(f"{args.csv} has no record {rows.start + table.n_rows} (this host holds "
                         f"records {rows.start}-{rows.stop - 1})")
    if rows is None and table.n_rows < kern.degree:
        raise SourceError(f"kernel {kern.name!r} needs at least {kern.degree} records, "
                         f"the file has {table.n_rows}")
    X = np.empty((table.n_rows, kern.columns))
    meta = {"source": args.csv, "columns": names, "rows": table.n_rows, "sha256": table.sha256}
    for c, name in enumerate(names):
        X[:, c], mapping = _column_values(args, kern, table, c, name, not args.columns)
        if mapping is not None:
            meta["classes"] = mapping
    raw = None
    if numeric:
        bounds = bounds_option(args.bounds, len(numeric)) if args.bounds else None
        if bounds is None:
            require_bounds(args, [names[c] for c in numeric])
        normed, warn = normalize(X[:, numeric], bounds, clip=args.clip,
                                 names=[names[c] for c in numeric], lines=table.lines)
        if warn:
            warnings.append(warn)
        if bounds is None:
            bounds = [[float(X[:, c].min()), float(X[:, c].max())] for c in numeric]
        raw = raw_records(X, numeric, bounds, kern)
        X[:, numeric] = normed
        meta["bounds"] = [list(map(float, b)) for b in bounds]
    return X, warnings, meta, raw


def raw_records(X: np.ndarray, numeric: Sequence[int], bounds: Sequence,
                kern: Kernel) -> tuple[np.ndarray, list] | None:
    """(records in raw units, clipped to the bounds; per kernel column (lo, hi) or None), for a
    run_umpc that encodes raw values itself; None when a column's width is 0 or overflows."""
    kb: list = [None] * kern.columns
    out = X.copy()
    for c, (lo, hi) in zip(numeric, bounds):
        lo, hi = float(lo), float(hi)
        if not (np.isfinite(hi - lo) and hi > lo):
            return None
        out[:, c] = np.clip(out[:, c], lo, hi)
        kb[c] = (lo, hi)
    return out, kb
