"""A privacy budget kept in a JSON file across runs, one (epsilon, delta) budget per data set.

Each release on a data set spends part of a total (epsilon, delta) fixed when
the data set is first seen; a run that would exceed either is refused before
it computes anything ("spent X of Y, asked Z"). The arithmetic is that of
:class:`noise.accounting.PrivacyBudget`: exact rational sums, **basic
composition** (Dwork-Roth Thm. 3.16: k releases that are (eps_i, delta_i)-DP
are (sum eps_i, sum delta_i)-DP together; no advanced composition is applied
across runs, so the totals are conservative).

A data set has one or more *identities* (keys): the caller passes every key
that describes the data a run reads (``ustat.data.identity`` gives a key for
the parsed content of the whole file and one for the columns used; both are
independent of row order, line endings, separators and number formatting).
A run is charged to the data set any of its keys names, and its other keys
are added to that data set, so a later run reaching the same people through
either identity is charged to the same budget. Keys of two data sets met in
one run merge them (the smaller totals, every spend of both): the run shows
that they hold the same records.

File format (JSON, version 2; version 1 files are read and upgraded)::

    {"format": "ustat-privacy-budget", "version": 2,
     "datasets": {
        "<id>": {"keys": ["<key>", ...],
                 "total_epsilon": 3.0, "total_delta": 1e-06,
                 "description": {...},                 # e.g. path, rows, columns
                 "spends": [{"id": "...", "epsilon": 1.0, "delta": 0.0,
                             "label": "auc", "status": "spent",
                             "time": "2025-01-01T00:00:00Z", "details": {...}}]}}}

``status`` is ``"reserved"`` while a run is in progress and ``"spent"`` once it
has released; a reservation counts as spent (a run that crashed after its
release was seen cannot be told apart from one that did not), and is removed
only when the run fails or is interrupted before releasing
(:meth:`BudgetFile.cancel`). A reservation may be confirmed with a smaller
delta than reserved (a protocol whose exact delta is known only after its
public planning).

Concurrency and crashes: every read-check-write holds an exclusive lock on
``<file>.lock`` (``fcntl.flock``; POSIX), and the file is replaced atomically
(a temporary file in the same directory, fsync, ``os.replace``), so two runs
can never both spend the last of a budget and a crash never leaves a
half-written file. The lock is not held while the protocol runs: the spend is
reserved first.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import tempfile
import time
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from .accounting import PrivacyBudget, check_epsilon

__all__ = ["DEFAULT_TOTAL_DELTA", "FORMAT", "VERSION", "BudgetFile", "Reservation"]

FORMAT = "ustat-privacy-budget"
VERSION = 2
#: The total delta of a data set created without one, and of a version-1 entry (which never
#: recorded a delta): well below 1/n for any data set this toolkit runs on in one process.
DEFAULT_TOTAL_DELTA = 1e-6


@dataclass(frozen=True)
class Reservation:
    """An accepted spend: its id, and the data set's totals and spends after it."""

    key: str                    # the data set's id in the file
    id: str
    epsilon: float
    total: float
    spent: float
    delta: float = 0.0
    total_delta: float = 0.0
    spent_delta: float = 0.0
    merged: tuple = ()          # ids of data sets merged into this one by this run

    @property
    def remaining(self) -> float:
        return max(0.0, self.total - self.spent)

    @property
    def remaining_delta(self) -> float:
        return max(0.0, self.total_delta - self.spent_delta)


def _check_delta(delta, name: str) -> float:
    d = float(delta)
    if not 0.0 <= d < 1.0:
        raise ValueError(f"{name} must be in [0, 1), got {delta!r}")
    return d


class BudgetFile:
    """``BudgetFile(path)``: reserve, confirm or cancel spends of per-data-set budgets."""

    def __init__(self, path):
        self.path = os.fspath(path)
        if os.path.isdir(self.path):
            raise ValueError(f"budget file {self.path} is a directory; give a file path such as "
                             f"{os.path.join(self.path, 'budget.json')}")

    @contextlib.contextmanager
    def _locked(self):
        directory = os.path.dirname(os.path.abspath(self.path))
        if not os.path.isdir(directory):
            raise ValueError(f"budget file {self.path}: directory {directory} does not exist")
        with open(self.path + ".lock", "a") as lock:
            try:
                import fcntl
                fcntl.flock(lock.fileno(), fcntl.LOCK_EX)
            except ImportError:         # pragma: no cover (non-POSIX: no cross-process lock)
                pass
            yield

    def _load(self) -> dict:
        if not os.path.exists(self.path):
            return {"format": FORMAT, "version": VERSION, "datasets": {}}
        try:
            with open(self.path, encoding="utf-8") as fh:
                doc = json.load(fh)
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise ValueError(f"budget file {self.path} is not valid JSON ({exc}); "
                             "it was not modified") from None
        if not isinstance(doc, dict) or doc.get("format") != FORMAT or not isinstance(
                doc.get("datasets"), dict):
            raise ValueError(f"budget file {self.path} is not a {FORMAT} file")
        if doc.get("version") == 1:
            return _upgrade_v1(doc)
        if doc.get("version") != VERSION:
            raise ValueError(f"budget file {self.path} has version {doc.get('version')!r}; "
                             f"this program reads versions 1 and {VERSION}")
        return doc

    def _save(self, doc: dict):
        directory = os.path.dirname(os.path.abspath(self.path))
        fd, tmp = tempfile.mkstemp(prefix=".budget-", suffix=".json", dir=directory)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                json.dump(doc, fh, indent=1, sort_keys=True)
                fh.flush()
                os.fsync(fh.fileno())
            os.replace(tmp, self.path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise

    @staticmethod
    def _budget(entry: dict) -> PrivacyBudget:
        b = PrivacyBudget(entry["total_epsilon"], entry.get("total_delta", 0.0))
        for sp in entry["spends"]:
            b.spend(sp["epsilon"], sp.get("delta", 0.0), label=sp.get("label", ""))
        return b

    def reserve(self, keys: str | Iterable[str], epsilon: float, delta: float = 0.0, *,
                total: float | None = None, total_delta: float | None = None,
                default_total_delta: float = 0.0, label: str = "",
                details: dict | None = None, description: dict | None = None) -> Reservation:
        """Record a spend of (``epsilon``, ``delta``) on the data set named by any of ``keys``.

        ``keys``: one key or a sequence of keys (identities of the same data).
        ``total`` (epsilon) is required the first time the data set is seen and
        must match the recorded total afterwards; so must ``total_delta`` when
        given (default for a new data set: ``default_total_delta``). ValueError
        on overspend: "... epsilon: spent X of Y, asked Z" (or delta).
        """
        keys = [keys] if isinstance(keys, str) else [str(k) for k in keys]
        if not keys:
            raise ValueError("reserve needs at least one data-set key")
        eps = check_epsilon(epsilon)
        dlt = _check_delta(delta, "delta")
        if total is not None:
            total = check_epsilon(total, "total")
        if total_delta is not None:
            total_delta = _check_delta(total_delta, "total_delta")
        with self._locked():
            doc = self._load()
            sets = doc["datasets"]
            found = [i for i, e in sets.items() if set(e["keys"]) & set(keys)]
            if not found:
                if total is None:
                    raise ValueError(f"budget file {self.path} has no budget for this data set "
                                     f"yet: give its total epsilon (--budget-total)")
                tdel = default_total_delta if total_delta is None else total_delta
                entry: dict[str, Any] = {"keys": [], "total_epsilon": total,
                                         "total_delta": _check_delta(tdel, "total_delta"),
                                         "description": description or {}, "spends": []}
                sets[keys[0]] = entry
                found = [keys[0]]
            rid_set, merged = found[0], tuple(found[1:])
            entry = _merge(sets, found)
            _check_totals(self.path, entry, total, total_delta)
            entry["keys"] += [k for k in keys if k not in entry["keys"]]
            budget = self._budget(entry)
            if not budget.can_spend(eps, dlt):
                (se, sd), (te, td) = budget.spent, budget.total
                what = (f"epsilon: spent {se:g} of {te:g}, asked {eps:g}"
                        if not budget.can_spend(eps) else
                        f"delta: spent {sd:.3g} of {td:.3g}, asked {dlt:.3g}")
                raise ValueError(f"privacy budget exceeded for this data set ({self.path}): "
                                 f"{what}")
            rid = secrets.token_hex(8)
            entry["spends"].append({
                "id": rid, "epsilon": eps, "delta": dlt, "label": str(label),
                "status": "reserved", "time": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                "details": details or {}})
            self._save(doc)
            after = self._budget(entry)
        return Reservation(rid_set, rid, eps, after.total[0], after.spent[0], dlt,
                           after.total[1], after.spent[1], merged)

    def _update(self, key: str, rid: str, remove: bool, delta=None):
        with self._locked():
            doc = self._load()
            entry = doc["datasets"].get(key, {"spends": []})
            keep = [sp for sp in entry["spends"] if sp.get("id") != rid]
            if len(keep) == len(entry["spends"]):
                raise ValueError(f"budget file {self.path}: no spend {rid!r} for this data set")
            if remove:
                entry["spends"] = keep
            else:
                for sp in entry["spends"]:
                    if sp.get("id") == rid:
                        sp["status"] = "spent"
                        if delta is not None:
                            if delta > sp["delta"]:
                                raise ValueError(f"budget file {self.path}: spend {rid!r} "
                                                 f"reserved delta {sp['delta']:.3g}, cannot "
                                                 f"confirm {delta:.3g}")
                            sp["delta"] = float(delta)
            self._save(doc)

    def confirm(self, reservation: Reservation, delta: float | None = None) -> None:
        """Mark a reserved spend as spent (the run released its result), with its exact delta
        when that is smaller than the reserved one."""
        d = None if delta is None else _check_delta(delta, "delta")
        self._update(reservation.key, reservation.id, remove=False, delta=d)

    def cancel(self, reservation: Reservation) -> None:
        """Remove a reserved spend (the run failed before releasing anything)."""
        self._update(reservation.key, reservation.id, remove=True)

    def status(self, key: str) -> dict | None:
        """``{"id", "total", "total_delta", "spent", "spent_delta", "remaining", "spends"}`` for
        the data set ``key`` names (its id or any of its keys), or None if unknown."""
        with self._locked():
            sets = self._load()["datasets"]
        hit = [(i, e) for i, e in sets.items() if key == i or key in e["keys"]]
        if not hit:
            return None
        i, entry = hit[0]
        b = self._budget(entry)
        return {"id": i, "total": b.total[0], "total_delta": b.total[1], "spent": b.spent[0],
                "spent_delta": b.spent[1], "remaining": b.remaining[0],
                "keys": list(entry["keys"]), "spends": list(entry["spends"])}


def _upgrade_v1(doc: dict) -> dict:
    """A version-1 document as version 2: each entry keeps its key (the SHA-256 of the file's
    bytes) as an identity; its total delta, never chosen in version 1, becomes the default."""
    sets = {}
    for key, entry in doc["datasets"].items():
        entry = dict(entry)
        entry["keys"] = [key]
        if not entry.get("total_delta"):
            entry["total_delta"] = DEFAULT_TOTAL_DELTA
        sets[key] = entry
    return {"format": FORMAT, "version": VERSION, "datasets": sets}


def _merge(sets: dict, ids: list) -> dict:
    """The entry ``ids[0]`` with the entries ``ids[1:]`` folded into it (and removed)."""
    entry = sets[ids[0]]
    for other_id in ids[1:]:
        other = sets.pop(other_id)
        entry["keys"] += [k for k in other["keys"] if k not in entry["keys"]]
        entry["spends"] += other["spends"]
        entry["total_epsilon"] = min(entry["total_epsilon"], other["total_epsilon"])
        entry["total_delta"] = min(entry.get("total_delta", 0.0), other.get("total_delta", 0.0))
        entry.setdefault("description", {}).setdefault("merged", []).append(
            {"id": other_id, "description": other.get("description", {})})
    return entry


def _check_totals(path, entry, total, total_delta):
    if total is not None and total != entry["total_epsilon"]:
        raise ValueError(f"budget file {path} records a total epsilon of "
                         f"{entry['total_epsilon']:g} for this data set, not {total:g}; "
                         "a total cannot be changed")
    if total_delta is not None and total_delta != entry.get("total_delta", 0.0):
        raise ValueError(f"budget file {path} records a total delta of "
                         f"{entry.get('total_delta', 0.0):.3g} for this data set, not "
                         f"{total_delta:.3g}; a total cannot be changed")
