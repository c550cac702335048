"""Which data set a file holds, for the privacy budget: keys computed from its parsed content.

A budget belongs to the people in a data set, not to a file's bytes. The
keys here are SHA-256 digests of the *parsed* records, canonicalized so that
what does not change the records does not change the key:

* rows are sorted (row order, duplicated rows kept as a multiset);
* line endings (CRLF/LF), the separator, quoting, a BOM, gzip compression
  and blank lines are gone after parsing;
* a cell is stripped and compared case-insensitively; a number is written in
  one canonical form (``1``, ``1.0``, ``1e0`` and `` 01 `` are the same);
* column names are left out and columns are put in a canonical order (by
  their own content), so renaming or reordering columns changes nothing.

Two keys describe a run (:func:`dataset_identity`):

``file-rows:<hex>``
    every column of the parsed file: releases on different columns of one
    file share a budget (they describe the same people);
``column-rows:<hex>``
    the columns the release reads: adding, dropping or renaming the *other*
    columns (or extracting the used ones into a file of their own) does not
    give a fresh budget either.

:class:`noise.budget_file.BudgetFile` charges a run to the data set either
key names and records both. A file in which a record was added, removed or
changed is a different data set to these keys (no key can tell a different
population from a changed one): keep one budget file per population.
``sha256:<hex>`` (the SHA-256 of the decompressed bytes, the key of version-1
budget files) is kept as a third identity, so existing budgets still apply.
Cost: one more pass over the file, and a sort of its rows (only with a
budget file).

Threat model: these keys are plain digests of every record, so whoever knows
all records but one could test guesses of the last against them. They are
computed in the process and never printed or stored as they are: the budget
file stores ``kind:HMAC-SHA-256(salt, key)`` with a secret 32-byte salt kept
beside it (:mod:`noise.budget_file`).
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

import numpy as np

from .files import FilePath, read_table

__all__ = ["DataIdentity", "canonical_column", "dataset_identity", "rows_key"]

_SEP = "\x1f"          # between cells of a row (cannot occur in a canonical cell of a text file)


@dataclass(frozen=True)
class DataIdentity:
    """The budget keys of the data a run reads, and a description kept in the budget file."""

    keys: tuple[str, ...]
    description: dict[str, object] = field(default_factory=dict)


def canonical_column(cells: Iterable[object]) -> list[str]:
    """The cells of one column in canonical form: numbers as the repr of their float64 value
    (``-0`` as ``0``), other cells stripped and case-folded."""
    arr = [str(c).strip() for c in cells]
    try:
        nums = np.asarray(arr, dtype=np.float64)
    except ValueError:                      # text (or mixed): canonicalize each distinct cell
        levels, inverse = np.unique(np.asarray(arr, dtype=str), return_inverse=True)
        canon = np.array([_canonical_cell(c) for c in levels.tolist()], dtype=object)
        return canon[inverse].tolist()
    return [repr(v + 0.0) for v in nums.tolist()]


def _canonical_cell(text: str) -> str:
    try:
        return repr(float(text) + 0.0)
    except ValueError:
        return text.casefold()


def rows_key(columns: Sequence[Sequence[str]]) -> str:
    """SHA-256 of the sorted rows of canonical ``columns`` (lists of equal length), with the
    columns in the order of their own sorted content (names play no part)."""
    digests = [hashlib.sha256("\n".join(sorted(c)).encode()).hexdigest() for c in columns]
    order = sorted(range(len(columns)), key=lambda j: digests[j])
    rows = sorted(_SEP.join(r) for r in zip(*(columns[j] for j in order)))
    h = hashlib.sha256(f"ustat data rows v1 {len(columns)} {len(rows)}\n".encode())
    for r in rows:
        h.update(r.encode())
        h.update(b"\n")
    return h.hexdigest()


def dataset_identity(path: FilePath, used: Iterable[object], *, sep: str | None = None,
                     header: bool = True, encoding: str = "utf-8") -> DataIdentity:
    """The keys of the data set in file ``path`` and of its columns ``used`` (names as the
    run selected them), read the way the run reads them."""
    table = read_table(path, None, sep, header=header, encoding=encoding)
    canon = {name: canonical_column(table.columns[name]) for name in table.names}
    used_names = [str(u) for u in used]
    keys = (f"file-rows:{rows_key(list(canon.values()))}",
            f"column-rows:{rows_key([canon[u] for u in used_names])}",
            f"sha256:{table.sha256}")
    desc: dict[str, object] = {"path": os.path.abspath(os.fspath(path)), "rows": table.n_rows,
            "columns": list(table.names)}
    return DataIdentity(keys, desc)
