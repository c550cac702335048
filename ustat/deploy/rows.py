"""Which rows of a party host's file hold its parties: the whole file's, or a file of its own.

A party host holding parties I..J reads rows I..J (0-based, after the header) of its file:
the whole data set, or a file padded to those positions. A file of exactly J - I + 1 rows
is taken as this host's own rows. Anything else is refused before the host connects to
any peer, naming the rows needed and the rows the file has.
"""

from __future__ import annotations


def host_file_rows(csv: str, host: range, data: dict) -> range:
    """Which data rows of ``csv`` (0-based, after the header) hold the parties ``host``: the
    rows ``host`` of a file with at least ``host.stop`` rows (the whole data set, or one padded
    to its positions), or every row of a file of exactly ``len(host)`` rows (this host's own
    only). ValueError otherwise, naming the rows needed and the rows the file has. ``data``:
    ``[run.data]`` (``sep``, ``header``, ``encoding``). One pass over the file."""
    from ..data.files import DataError, read_table

    try:
        t = read_table(csv, lambda head: head[:1], data.get("sep"),
                       header=bool(data.get("header", True)),
                       encoding=str(data.get("encoding") or "utf-8"))
        n = t.n_rows
    except DataError as e:
        if "no data rows" not in str(e):
            raise
        n = 0
    if n >= host.stop:
        return host
    if n == len(host):
        return range(n)
    first, last = host.start, host.stop - 1
    raise ValueError(f"{csv}: this host holds parties {first}-{last}: rows {first}-{last} "
                     f"needed (0-based, after the header), the file has {n}; give the whole "
                     f"file, or one of exactly this host's {len(host)} rows")
