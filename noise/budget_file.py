"""A privacy budget kept in a JSON file across runs, one budget per data set.

Each release on a data set spends part of a total epsilon fixed when the data
set is first seen; a run that would exceed it is refused before it computes
anything ("spent X of Y, asked Z"). The arithmetic is that of
:class:`noise.accounting.PrivacyBudget` (exact rational sums, basic
composition: Dwork-Roth Thm. 3.16).

File format (JSON, version 1)::

    {"format": "ustat-privacy-budget", "version": 1,
     "datasets": {
        "<key>": {"total_epsilon": 3.0, "total_delta": 0.0,
                  "description": {...},                 # e.g. path, sha256, rows
                  "spends": [{"id": "...", "epsilon": 1.0, "delta": 0.0,
                              "label": "auc", "status": "spent",
                              "time": "2025-01-01T00:00:00Z", "details": {...}}]}}}

``status`` is ``"reserved"`` while a run is in progress and ``"spent"`` once it
has released; a reservation counts as spent (a run that crashed after its
release was seen cannot be told apart from one that did not), and is removed
only when the run fails before releasing (:meth:`BudgetFile.cancel`).

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
from dataclasses import dataclass

from .accounting import PrivacyBudget, check_epsilon

__all__ = ["BudgetFile", "Reservation", "FORMAT", "VERSION"]

FORMAT = "ustat-privacy-budget"
VERSION = 1


@dataclass(frozen=True)
class Reservation:
    """An accepted spend: its id, and the data set's total and spent epsilon after it."""

    key: str
    id: str
    epsilon: float
    total: float
    spent: float

    @property
    def remaining(self) -> float:
        return max(0.0, self.total - self.spent)


class BudgetFile:
    """``BudgetFile(path)``: reserve, confirm or cancel spends of per-data-set budgets."""

    def __init__(self, path):
        self.path = os.fspath(path)

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
        if doc.get("version") != VERSION:
            raise ValueError(f"budget file {self.path} has version {doc.get('version')!r}; "
                             f"this program reads version {VERSION}")
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

    def reserve(self, key: str, epsilon, *, total=None, label: str = "", details=None,
                description=None) -> Reservation:
        """Record a spend of ``epsilon`` on data set ``key`` unless it would exceed the total.

        ``total`` (epsilon) is required the first time ``key`` is seen and
        must match the recorded total afterwards. ValueError on overspend:
        "... spent X of Y, asked Z".
        """
        eps = check_epsilon(epsilon)
        if total is not None:
            total = check_epsilon(total, "total")
        with self._locked():
            doc = self._load()
            entry = doc["datasets"].get(key)
            if entry is None:
                if total is None:
                    raise ValueError(f"budget file {self.path} has no budget for this data set "
                                     f"yet: give its total epsilon (--budget-total)")
                entry = {"total_epsilon": total, "total_delta": 0.0,
                         "description": description or {}, "spends": []}
                doc["datasets"][key] = entry
            elif total is not None and total != entry["total_epsilon"]:
                raise ValueError(f"budget file {self.path} records a total epsilon of "
                                 f"{entry['total_epsilon']:g} for this data set, not {total:g}; "
                                 "a total cannot be changed")
            budget = self._budget(entry)
            spent, tot = budget.spent[0], budget.total[0]
            if not budget.can_spend(eps):
                raise ValueError(f"privacy budget exceeded for this data set ({self.path}): "
                                 f"spent {spent:g} of {tot:g}, asked {eps:g}")
            rid = secrets.token_hex(8)
            entry["spends"].append({
                "id": rid, "epsilon": eps, "delta": 0.0, "label": str(label), "status": "reserved",
                "time": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                "details": details or {}})
            self._save(doc)
            after = self._budget(entry).spent[0]
        return Reservation(key, rid, eps, tot, after)

    def _update(self, key: str, rid: str, remove: bool):
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
            self._save(doc)

    def confirm(self, reservation: Reservation):
        """Mark a reserved spend as spent (the run released its result)."""
        self._update(reservation.key, reservation.id, remove=False)

    def cancel(self, reservation: Reservation):
        """Remove a reserved spend (the run failed before releasing anything)."""
        self._update(reservation.key, reservation.id, remove=True)

    def status(self, key: str) -> dict | None:
        """``{"total", "spent", "remaining", "spends"}`` for ``key``, or None if unknown."""
        with self._locked():
            entry = self._load()["datasets"].get(key)
        if entry is None:
            return None
        b = self._budget(entry)
        return {"total": b.total[0], "spent": b.spent[0], "remaining": b.remaining[0],
                "spends": list(entry["spends"])}
