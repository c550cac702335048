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

Keys are stored **salted**: a key ``kind:value`` is written as
``kind:HMAC-SHA-256(salt, "kind:value")`` (hex), with a 32-byte random salt
kept in ``<file>.salt`` (mode 0600), created with the ledger. A plain digest
of the rows would let whoever reads the ledger and knows every record but
one test guesses of the last; without the salt the stored keys say nothing.
The salt belongs to the ledger: copy or back up both together. A ledger whose
salt file is missing or damaged is refused (a fresh salt would make every
recorded data set unrecognisable, resetting its budget).

Threat model: the file protects against accidents and naive edits, not
against its owner. Hand-edited content is checked when read: every malformed
field is refused in one line naming the file and the field, and each spend
records the totals it was made under, so a total raised by hand is refused
(a lowered one is accepted: it is conservative). Someone who can write the
file can still delete spends.

File format (JSON, version 3; versions 1 and 2, whose keys are unsalted, are
read and upgraded: each stored key is salted as above, so their budgets keep
applying, and the plain keys leave the file at its next update)::

    {"format": "ustat-privacy-budget", "version": 3,
     "datasets": {
        "<id>": {"keys": ["<salted key>", ...],
                 "total_epsilon": 3.0, "total_delta": 1e-06,
                 "description": {...},                 # e.g. path, rows, columns
                 "spends": [{"id": "...", "epsilon": 1.0, "delta": 0.0,
                             "label": "auc", "status": "spent",
                             "total_epsilon": 3.0, "total_delta": 1e-06,
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
half-written file. The salt file is written (and synced) before the ledger
that uses it. The lock is not held while the protocol runs: the spend is
reserved first.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import json
import math
import os
import secrets
import tempfile
import time
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from .accounting import PrivacyBudget, check_epsilon

__all__ = ["DEFAULT_TOTAL_DELTA", "FORMAT", "SALT_BYTES", "VERSION", "BudgetExceededError",
           "BudgetFile", "Reservation"]

FORMAT = "ustat-privacy-budget"
VERSION = 3
#: The length of the salt kept in ``<file>.salt``.
SALT_BYTES = 32
_STATUSES = ("reserved", "spent")
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


class BudgetExceededError(ValueError):
    """A refused overspend: ``what`` (``"epsilon"`` or ``"delta"``), what the data set has
    ``remaining`` of it, and what the run ``asked``."""

    def __init__(self, message: str, what: str, remaining: float, asked: float):
        super().__init__(message)
        self.what, self.remaining, self.asked = what, remaining, asked


def _check_delta(delta, name: str) -> float:
    d = float(delta)
    if not 0.0 <= d < 1.0:
        raise ValueError(f"{name} must be in [0, 1), got {delta!r}")
    return d


class BudgetFile:
    """``BudgetFile(path)``: reserve, confirm or cancel spends of per-data-set budgets.

    ``path``: the ledger (JSON); its salt lives in ``path + ".salt"`` and its lock in
    ``path + ".lock"``. Every method raises ValueError, one line naming the file, when the
    ledger or its salt is malformed or missing (module docstring).
    """

    def __init__(self, path):
        self.path = os.fspath(path)
        self.salt_path = self.path + ".salt"
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

    def _salt(self, create: bool) -> bytes | None:
        """The ledger's salt; a new one written (0600, synced) when missing and ``create``."""
        try:
            with open(self.salt_path, "rb") as fh:
                salt = fh.read(SALT_BYTES + 1)
        except FileNotFoundError:
            if not create:
                return None
            salt = os.urandom(SALT_BYTES)
            _replace(self.salt_path, salt, ".budget-salt-")
            return salt
        except OSError as exc:
            raise ValueError(f"budget file {self.path}: cannot read its salt file "
                             f"{self.salt_path} ({exc.strerror})") from None
        if len(salt) != SALT_BYTES:
            raise ValueError(f"budget file {self.path}: its salt file {self.salt_path} must hold "
                             f"{SALT_BYTES} bytes, has {len(salt)} (damaged? restore it with the "
                             "ledger)")
        return salt

    def _load(self, create: bool = True) -> tuple[dict, bytes | None]:
        """(the document, checked and upgraded to :data:`VERSION`; its salt). Without a ledger
        the salt is read, or made when ``create`` (else None)."""
        if not os.path.exists(self.path):
            return ({"format": FORMAT, "version": VERSION, "datasets": {}},
                    self._salt(create))
        try:
            with open(self.path, encoding="utf-8") as fh:
                doc = json.load(fh)
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise ValueError(f"budget file {self.path} is not valid JSON ({exc}); "
                             "it was not modified") from None
        except OSError as exc:
            raise ValueError(f"budget file {self.path} cannot be read ({exc.strerror})") from None
        if not isinstance(doc, dict) or doc.get("format") != FORMAT or not isinstance(
                doc.get("datasets"), dict):
            raise ValueError(f"budget file {self.path} is not a {FORMAT} file")
        version = doc.get("version")
        if version not in (1, 2, VERSION):
            raise ValueError(f"budget file {self.path} has version {version!r}; "
                             f"this program reads versions 1 to {VERSION}")
        if version == 1:
            doc = _upgrade_v1(doc)
        _check_doc(self.path, doc)
        if version == VERSION:
            salt = self._salt(create=False)
            if salt is None:
                raise ValueError(f"budget file {self.path}: its salt file {self.salt_path} is "
                                 "missing; without it no recorded data set can be recognised "
                                 "(restore it from where the ledger came from)")
            return doc, salt
        salt = self._salt(create=True)          # versions 1 and 2: plain keys, salted now
        assert salt is not None
        return _salted_doc(doc, salt), salt

    def _save(self, doc: dict):
        text = json.dumps(doc, indent=1, sort_keys=True)
        _replace(self.path, text.encode("utf-8"), ".budget-", ".json")

    def _budget(self, entry: dict) -> PrivacyBudget:
        b = PrivacyBudget(entry["total_epsilon"], entry.get("total_delta", 0.0))
        try:
            for sp in entry["spends"]:
                b.spend(sp["epsilon"], sp.get("delta", 0.0), label=sp.get("label", ""))
        except ValueError:
            se = math.fsum(sp["epsilon"] for sp in entry["spends"])
            sd = math.fsum(sp.get("delta", 0.0) for sp in entry["spends"])
            raise ValueError(f"privacy budget exceeded for this data set ({self.path}): its "
                             f"recorded spends (epsilon {se:g}, delta {sd:.3g}) already exceed "
                             f"its total (epsilon {entry['total_epsilon']:g}, delta "
                             f"{entry.get('total_delta', 0.0):.3g})") from None
        return b

    def reserve(self, keys: str | Iterable[str], epsilon: float, delta: float = 0.0, *,
                total: float | None = None, total_delta: float | None = None,
                default_total_delta: float = 0.0, label: str = "",
                details: dict | None = None, description: dict | None = None) -> Reservation:
        """Record a spend of (``epsilon``, ``delta``) on the data set named by any of ``keys``.

        ``keys``: one key or a sequence of keys (identities of the same data, ``kind:value``;
        stored salted). ``total`` (epsilon) is required the first time the data set is seen
        and must match the recorded total afterwards; so must ``total_delta`` when given
        (default for a new data set: ``default_total_delta``). ValueError on overspend:
        "... epsilon: spent X of Y, asked Z" (or delta). The Reservation's ``key`` is the data
        set's id in the file (a salted key).
        """
        raw = [keys] if isinstance(keys, str) else [str(k) for k in keys]
        if not raw:
            raise ValueError("reserve needs at least one data-set key")
        eps = check_epsilon(epsilon)
        dlt = _check_delta(delta, "delta")
        if total is not None:
            total = check_epsilon(total, "total")
        if total_delta is not None:
            total_delta = _check_delta(total_delta, "total_delta")
        with self._locked():
            doc, salt = self._load()
            assert salt is not None
            keys = list(dict.fromkeys(_salted(salt, k) for k in raw))
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
                (rem_e, rem_d), short_eps = budget.remaining, not budget.can_spend(eps)
                what = (f"epsilon: spent {se:g} of {te:g}, asked {eps:g}" if short_eps else
                        f"delta: spent {sd:.3g} of {td:.3g}, asked {dlt:.3g}")
                raise BudgetExceededError(
                    f"privacy budget exceeded for this data set ({self.path}): {what}",
                    "epsilon" if short_eps else "delta", rem_e if short_eps else rem_d,
                    eps if short_eps else dlt)
            rid = secrets.token_hex(8)
            entry["spends"].append({
                "id": rid, "epsilon": eps, "delta": dlt, "label": str(label),
                "status": "reserved", "time": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                "total_epsilon": entry["total_epsilon"],
                "total_delta": entry.get("total_delta", 0.0), "details": details or {}})
            self._save(doc)
            after = self._budget(entry)
        return Reservation(rid_set, rid, eps, after.total[0], after.spent[0], dlt,
                           after.total[1], after.spent[1], merged)

    def _update(self, key: str, rid: str, remove: bool, delta=None):
        with self._locked():
            doc, _ = self._load()
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
        """``{"id", "total", "total_delta", "spent", "spent_delta", "remaining", "keys",
        "spends"}`` for the data set ``key`` names (its id in the file, or any of its keys as
        given to :meth:`reserve`), or None if unknown. Reads only (an old ledger is upgraded
        in memory; its salt is made if it had none)."""
        with self._locked():
            doc, salt = self._load(create=False)
        sets = doc["datasets"]
        salted = None if salt is None else _salted(salt, key)
        hit = [(i, e) for i, e in sets.items() if key == i or salted in e["keys"]]
        if not hit:
            return None
        i, entry = hit[0]
        b = self._budget(entry)
        return {"id": i, "total": b.total[0], "total_delta": b.total[1], "spent": b.spent[0],
                "spent_delta": b.spent[1], "remaining": b.remaining[0],
                "keys": list(entry["keys"]), "spends": list(entry["spends"])}


def _salted(salt: bytes, key: str) -> str:
    """``kind:HMAC-SHA-256(salt, key)`` of a key ``kind:value`` (``key:...`` without a kind)."""
    kind = key.split(":", 1)[0] if ":" in key else "key"
    return f"{kind}:{hmac.new(salt, key.encode('utf-8'), hashlib.sha256).hexdigest()}"


def _salted_doc(doc: dict, salt: bytes) -> dict:
    """A checked version-2 document (plain keys) as version 3: every key and id salted."""
    sets = {}
    for i, entry in doc["datasets"].items():
        entry = dict(entry)
        entry["keys"] = list(dict.fromkeys(_salted(salt, k) for k in entry["keys"]))
        sets[_salted(salt, i)] = entry
    return {"format": FORMAT, "version": VERSION, "datasets": sets}


def _upgrade_v1(doc: dict) -> dict:
    """A version-1 document as version 2: each entry keeps its key (the SHA-256 of the file's
    bytes) as an identity; its total delta, never chosen in version 1, becomes the default."""
    sets = {}
    for key, entry in doc["datasets"].items():
        if isinstance(entry, dict):
            entry = dict(entry)
            entry["keys"] = [key]
            if not entry.get("total_delta"):
                entry["total_delta"] = DEFAULT_TOTAL_DELTA
        sets[key] = entry
    return {"format": FORMAT, "version": 2, "datasets": sets}


def _number(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _check_doc(path: str, doc: dict) -> None:
    """Every field :class:`BudgetFile` reads, checked: ValueError naming the file and the field
    (``datasets['<id>'].spends[2].epsilon must be ...``)."""
    def bad(what):
        raise ValueError(f"budget file {path}: {what}; it was not modified")

    def positive(v, where):
        if not (_number(v) and math.isfinite(v) and v > 0):
            bad(f"{where} must be a positive finite number, got {v!r}")

    def delta(v, where):
        if not (_number(v) and 0 <= v < 1):
            bad(f"{where} must be in [0, 1), got {v!r}")

    for i, entry in doc["datasets"].items():
        at = f"datasets[{i!r}]"
        if not isinstance(entry, dict):
            bad(f"{at} must be an object, got {type(entry).__name__}")
        for name in ("keys", "total_epsilon", "spends"):
            if name not in entry:
                bad(f"{at} has no {name!r}")
        keys = entry["keys"]
        if not (isinstance(keys, list) and keys and all(isinstance(k, str) for k in keys)):
            bad(f"{at}.keys must be a list of strings, got {keys!r}")
        positive(entry["total_epsilon"], f"{at}.total_epsilon")
        delta(entry.get("total_delta", 0.0), f"{at}.total_delta")
        if not isinstance(entry["spends"], list):
            bad(f"{at}.spends must be a list, got {type(entry['spends']).__name__}")
        for j, sp in enumerate(entry["spends"]):
            where = f"{at}.spends[{j}]"
            if not isinstance(sp, dict):
                bad(f"{where} must be an object, got {sp!r}")
            if "epsilon" not in sp:
                bad(f"{where} has no 'epsilon'")
            positive(sp["epsilon"], f"{where}.epsilon")
            delta(sp.get("delta", 0.0), f"{where}.delta")
            if sp.get("status", "spent") not in _STATUSES:
                bad(f"{where}.status must be one of {', '.join(_STATUSES)}, "
                    f"got {sp.get('status')!r}")
            if not isinstance(sp.get("id", ""), str):
                bad(f"{where}.id must be a string, got {sp.get('id')!r}")
            for name in ("total_epsilon", "total_delta"):
                if name in sp:
                    (positive if name == "total_epsilon" else delta)(sp[name], f"{where}.{name}")
        _check_not_raised(path, at, entry)


def _check_not_raised(path: str, at: str, entry: dict) -> None:
    """A total may not exceed the one any of its spends was made under (a raised total:
    refused; a lowered one is conservative and accepted)."""
    for name, fmt in (("total_epsilon", "g"), ("total_delta", ".3g")):
        under = [sp[name] for sp in entry["spends"] if name in sp]
        now = entry.get(name, 0.0)
        if under and now > min(under):
            raise ValueError(f"budget file {path}: {at}.{name} is {now:{fmt}} but its spends "
                             f"were made under a total of {min(under):{fmt}}; a total cannot be "
                             "raised (was the file edited by hand?)")


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


def _replace(path: str, data: bytes, prefix: str, suffix: str = "") -> None:
    """Write ``data`` to ``path`` atomically: a synced temporary file (mode 0600) beside it,
    renamed over it; nothing is left behind on failure."""
    directory = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=prefix, suffix=suffix, dir=directory)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
