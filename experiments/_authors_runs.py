"""The rows of ``authors_code``: which planned run a row is, rows kept from a previous CSV.

Used by :mod:`experiments.authors_code` (``--reuse``): a planned run is named by
:data:`RUN_KEYS` (its seed depends on these and not on the counts), so that a
previous ``authors_code.csv`` can supply the rows of the runs it holds and only
the others are run; each row names the commit it was made at.
"""

from __future__ import annotations

from experiments import _common as C  # noqa: N812 - the codebase's short capital module alias

#: The fields that name a planned run (with ``run``) in the driver's rows and the CSV.
RUN_KEYS = ("group", "kind", "data", "kernel", "sampler", "edges", "alpha", "epsilon", "t",
            "subset", "run")


def _typed(v: str):
    """A CSV cell as the driver's JSON gave it: "" None, then int, float, else the string."""
    if v == "":
        return None
    for cast in (int, float):
        try:
            return cast(v)
        except ValueError:
            pass
    return v


def _run_key(r) -> tuple:
    return tuple("" if r.get(k) is None else str(r.get(k)) for k in RUN_KEYS)


def reuse(runs, path) -> tuple[list, list]:
    """(rows of ``path`` that belong to planned runs, typed, each with its ``commit``; the
    planned runs not found there). A row's commit: its own column, else the file's."""
    commit = C.read_provenance(path).get("commit", "unknown")
    planned = {_run_key(r) for r in runs}
    kept = []
    for row in C.read_csv(path):
        r = {k: _typed(v) for k, v in row.items()}
        r["commit"] = row.get("commit") or commit
        if _run_key(r) in planned:
            kept.append(r)
    done = {_run_key(r) for r in kept}
    return kept, [r for r in runs if _run_key(r) not in done]


def group_commits(rows) -> dict:
    """Per group: {commit (7 digits): number of runs made there} (a Ghazi run gives two rows)."""
    seen: dict = {}
    for r in rows:
        seen.setdefault(r["group"], {})[_run_key(r)] = str(r.get("commit") or "unknown")[:7]
    out: dict = {}
    for g, runs in seen.items():
        for c in runs.values():
            out.setdefault(g, {})[c] = out.get(g, {}).get(c, 0) + 1
    return out
