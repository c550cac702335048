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

The code lives in :mod:`ustat.data_errors` (errors with API and CLI advice),
:mod:`ustat.data_io` (reading files), :mod:`ustat.data_values` (cells to
numbers, codes and labels) and :mod:`ustat.data_scale` (bounds,
normalisation, synthetic data); every public name is importable from here.
"""

from __future__ import annotations

from .data_errors import DataError, Remark
from .data_io import Table, load_csv, read_table
from .data_scale import DATA_BOUNDS_WARNING, normalize, parse_bounds, synthetic_uniform
from .data_values import BINARY_VOCABULARY, category_codes, map_labels, parse_numeric


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
