"""A privacy budget across deployed runs: the releasing role's ledger, the hosts' commitments.

With ``--budget-file`` in its protocol (``[run.budget]`` of ``deploy.toml``),
a deployment charges every run to a budget ledger (the file format of
:mod:`noise.budget_file`) kept by the role that receives the release (the
aggregator; the analyst of an ECDF command). No participant sees the data
set, so the data set is named by commitments:

- each party host commits to the rows it holds: ``HMAC-SHA-256(salt, key)``
  of the keys :mod:`ustat.data.identity` gives its rows (``file-rows``: every
  column; ``column-rows``: the columns the run reads; both independent of row
  and column order, separators and number formatting), with a 32-byte salt
  private to the host (:func:`host_salt`; by default beside its data file,
  ``FILE.<host>.commit-salt``), so a
  commitment says nothing about any record to whoever lacks the salt;
- the data set's identity is the SHA-256 of the hosts' commitments in
  participant order (one key per kind, :func:`identity_keys`), and every
  host's commitment is a key of its own too; the ledger stores those keys
  salted again with its own salt.

A run is charged to every data set any of its keys names
(:mod:`noise.budget_file`), so a rerun over the same hosts' rows (same
salts) shares the budget, and so does any run that includes one host's
unchanged rows: a run without a host that never joined (a dropout), or
with another host's rows changed, is charged to the same ledger entry, as
the records it shares with earlier runs require. Only when every host's
rows (or salt) change is the data set new.

Order of a run (:class:`Gate`): after every participant has joined, the
hosts send their commitments to the releasing role (one exchange, 64 bytes
each); it reserves the run's (epsilon, delta) in its ledger (refused: it
stops the run with the ledger's reason, before anyone computes, and nothing
is charged); then it sends every participant a go-ahead (one exchange, one
byte) and only then does any participant compute. From the go-ahead on, the
run stays charged whatever happens (a participant killed, a timeout), but
for a refusal the program makes from its public parameters before drawing
noise (:func:`ustat.executors.refusal`).

Threat model: the ledger protects the data set against an honest operator
rerunning a deployment without limit; it is kept by the releasing role,
which could delete it. The hosts are trusted to commit to the rows they
compute on (a host can always lie about its own data). Cost: the
commitment reads the host's rows once more and sorts them (only with a
budget); two exchanges with one round trip each.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import os
import tempfile
from collections.abc import Sequence
from typing import Any, Protocol

import numpy as np

__all__ = ["COMMIT_BYTES", "RELEASERS", "Gate", "Ledger", "host_commitment", "host_salt",
           "identity_keys"]

#: the roles that receive a release (and keep the ledger)
RELEASERS = ("aggregator", "analyst")
#: the kinds of key a host commits to, in order
KINDS = ("file-rows", "column-rows")
#: bytes of one host's commitment (one HMAC-SHA-256 per kind)
COMMIT_BYTES = 32 * len(KINDS)
SALT_BYTES = 32
_GO = 1


class Ledger(Protocol):
    """What the releasing role charges a run to (``ustat.cli.budget.Charge``): ``started``
    set once the run is charged whatever happens."""

    started: bool
    actual_delta: float | None

    def reserve_keys(self, keys: Sequence[str], *, epsilon: float, delta: float, label: str,
                     details: dict | None = None, description: dict | None = None) -> Any: ...


def host_salt(path: str) -> bytes:
    """The host's commitment salt in ``path`` (32 bytes), made (mode 0600, atomically: two
    hosts sharing a path on one machine agree on one salt) when missing; ValueError naming the
    file when it cannot be read or made, or is damaged."""
    if not os.path.exists(path):
        try:
            fd, tmp = tempfile.mkstemp(prefix=".commit-salt-",
                                       dir=os.path.dirname(os.path.abspath(path)))
            try:
                with os.fdopen(fd, "wb") as f:
                    f.write(os.urandom(SALT_BYTES))
                    f.flush()
                    os.fsync(f.fileno())
                with contextlib.suppress(FileExistsError):
                    os.link(tmp, path)              # the first one made wins
            finally:
                os.unlink(tmp)
        except OSError as e:
            raise ValueError(f"cannot make the commitment salt {path} ({e.strerror}): give "
                             "ustat party --salt FILE in a directory this host may "
                             "write") from None
    try:
        with open(path, "rb") as f:
            salt = f.read(SALT_BYTES + 1)
    except OSError as e:
        raise ValueError(f"cannot read the commitment salt {path} ({e.strerror})") from None
    if len(salt) != SALT_BYTES:
        raise ValueError(f"the commitment salt {path} must hold {SALT_BYTES} bytes, has "
                         f"{len(salt)} (damaged? restore it: a new salt starts a new budget)")
    return salt


def host_commitment(csv: str, rows: range, data: dict, salt: bytes) -> bytes:
    """This host's commitment (:data:`COMMIT_BYTES`) to rows ``rows`` of its file ``csv``,
    read as ``data`` (``[run.data]``: ``sep``, ``header``, ``encoding``, ``columns``) says:
    for each of :data:`KINDS`, HMAC-SHA-256(``salt``, the rows' key). One pass over the file
    and a sort of its rows."""
    from ..data.files import read_table
    from ..data.identity import canonical_column, rows_key

    table = read_table(csv, None, data.get("sep"), header=bool(data.get("header", True)),
                       encoding=str(data.get("encoding") or "utf-8"), rows=rows)
    canon = {name: canonical_column(table.columns[name]) for name in table.names}
    used = [c.strip() for c in str(data.get("columns") or "").split(",") if c.strip()]
    used = [c for c in used if c in canon] or list(canon)
    keys = (rows_key(list(canon.values())), rows_key([canon[c] for c in used]))
    return b"".join(hmac.new(salt, f"{kind}:{key}".encode(), hashlib.sha256).digest()
                    for kind, key in zip(KINDS, keys))


def identity_keys(commitments: Sequence[bytes]) -> tuple[str, ...]:
    """The data set's keys: per kind, ``deployed-<kind>:`` the SHA-256 of every host's
    commitment of that kind, in participant order, then ``deployed-host-<kind>:`` the
    SHA-256 of each host's own (a run sharing one host's rows shares the budget)."""
    out = []
    for i, kind in enumerate(KINDS):
        h = hashlib.sha256(f"ustat deployed data v1 {kind} {len(commitments)}\n".encode())
        for c in commitments:
            h.update(bytes(c)[32 * i:32 * (i + 1)])
        out.append(f"deployed-{kind}:{h.hexdigest()}")
    for i, kind in enumerate(KINDS):
        for c in commitments:
            part = bytes(c)[32 * i:32 * (i + 1)]
            one = hashlib.sha256(f"ustat deployed host data v1 {kind}\n".encode() + part)
            out.append(f"deployed-host-{kind}:{one.hexdigest()}")
    return tuple(out)


class Gate:
    """One participant's part in charging a run before it computes (module docstring).

    ``hosts``: the ranks of the party hosts in participant order; ``releaser``: the rank
    of the releasing role; ``commitment``: this host's (None elsewhere); ``ledger``: the
    releasing role's (None elsewhere); ``budget``: ``[run.budget]``; ``description``: what
    the ledger records of the data set (public: the deployment's name, hosts, parties)."""

    def __init__(self, hosts: Sequence[int], releaser: int, budget: dict, *,
                 commitment: bytes | None = None, ledger: Ledger | None = None,
                 description: dict | None = None) -> None:
        self.hosts, self.releaser = [int(h) for h in hosts], int(releaser)
        self.budget, self.commitment, self.ledger = budget, commitment, ledger
        self.description = description or {}

    def open(self, rt: Any) -> None:
        """The two exchanges on runtime ``rt`` (every participant calls it once, after joining
        and before computing); the releasing role reserves between them (UsageError, raised
        here, when its ledger refuses)."""
        from mpc.wire import frames as fr
        from mpc.wire.transport import Expected, Outgoing

        me, u8 = rt.rank, np.dtype(np.uint8)
        out, expect = {}, {}
        present = [h for h in self.hosts if h not in getattr(rt, "gone", ())]   # dropouts
        if me in self.hosts:
            if self.commitment is None or len(self.commitment) != COMMIT_BYTES:
                raise ValueError("a party host of a deployment with a budget needs its "
                                 "commitment")
            c = np.frombuffer(self.commitment, u8)
            out = {self.releaser: [Outgoing(0, u8, 8, c.shape, fr.pack(c, 8))]}
        if me == self.releaser:
            expect = {h: [Expected(0, u8, 8, (COMMIT_BYTES,))] for h in present}
        rt.counter[0] += 1
        got = rt.transport.exchange(rt.counter[0], out, expect)
        if me == self.releaser:
            self._reserve([np.asarray(got[h][0], np.uint8).tobytes() for h in present])
        go = np.array([_GO], np.uint8)
        others = [r for r in range(rt.n_procs)
                  if r != self.releaser and r not in getattr(rt, "gone", ())]
        out = {r: [Outgoing(0, u8, 8, go.shape, fr.pack(go, 8))] for r in others} \
            if me == self.releaser else {}
        expect = {} if me == self.releaser else {self.releaser: [Expected(0, u8, 8, (1,))]}
        rt.counter[0] += 1
        got = rt.transport.exchange(rt.counter[0], out, expect)
        if me != self.releaser and int(got[self.releaser][0][0]) != _GO:
            raise ValueError("the releasing role sent no go-ahead")

    def _reserve(self, commitments: list) -> None:
        ledger, b = self.ledger, self.budget
        if ledger is None:
            raise ValueError("the releasing role of a deployment with a budget needs its "
                             "ledger")
        ledger.reserve_keys(identity_keys(commitments), epsilon=float(b["epsilon"]),
                            delta=float(b.get("delta", 0.0)), label=str(b.get("label", "")),
                            details={"deployment": self.description.get("deployment")},
                            description=self.description)
        ledger.started = True           # the go-ahead goes out next: charged from here on

    def finished(self, value: Any = None, exc: BaseException | None = None) -> None:
        """The program returned ``value`` (its exact delta noted) or raised ``exc`` (a refusal
        before computing is not charged, :func:`ustat.executors.is_refusal`)."""
        from ..executors import is_refusal

        ledger = self.ledger
        if ledger is None:
            return
        if exc is not None and is_refusal(exc):
            ledger.started = False
        delta = getattr(value, "delta", None)
        if exc is None and isinstance(delta, float):
            ledger.actual_delta = delta
