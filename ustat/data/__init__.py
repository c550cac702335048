"""Reading, checking and normalising the parties' records for the CLI.

In a deployment each party holds its own record; the CLI simulates the n
parties from one table. This package turns a CSV file (or the embedded
synthetic default) into a ``float64`` array of shape (n, d) whose rows are
the parties' records, and maps it into [0, 1]^d as the kernels of Sinh &
Ramon (Section 2: X = [0, 1]^d, kernel values in [0, 1]) expect.

Errors are raised, never silently repaired: an empty, NaN or non-numeric
cell is a ``ValueError`` naming the file line and the column; values outside
user-given bounds are an error unless ``clip=True`` is asked for.
Bounds taken from the data itself leak information about the data (the
minimum and maximum are not differentially private), so ``normalize`` then
returns a warning string that the CLI prints.

Modules, bottom up (each imports only those above it):

:mod:`ustat.data.errors`
    :class:`DataError` and :class:`Remark`, with API and CLI advice;
:mod:`ustat.data.values`
    cells to numbers, category codes and class labels;
:mod:`ustat.data.files`
    reading delimited text files (CSV, ';', TAB; gzip) into a :class:`Table`;
:mod:`ustat.data.scale`
    public bounds and the map into [0, 1]^d;
:mod:`ustat.data.synthetic`
    the synthetic default data set;
:mod:`ustat.data.identity`
    which data set a file holds (the privacy budget's keys).

Every public name of the API is importable from here.
"""

from __future__ import annotations

from .errors import DataError, Remark
from .files import Table, load_csv, read_table
from .identity import DataIdentity, dataset_identity
from .scale import DATA_BOUNDS_WARNING, normalize, parse_bounds
from .synthetic import synthetic_uniform
from .values import BINARY_VOCABULARY, category_codes, map_labels, parse_numeric

__all__ = [
    "BINARY_VOCABULARY",
    "DATA_BOUNDS_WARNING",
    "DataError",
    "DataIdentity",
    "Remark",
    "Table",
    "category_codes",
    "dataset_identity",
    "load_csv",
    "map_labels",
    "normalize",
    "parse_bounds",
    "parse_numeric",
    "read_table",
    "synthetic_uniform",
]
