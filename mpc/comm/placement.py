"""Which process holds each participant: the placement of a session's parties and roles.

A network's participants are the data parties ``0 .. n_parties-1`` followed
by its named roles (dealer, aggregator, servers, analyst, ...). A
:class:`Placement` maps every participant to the rank of the process that
runs it, and knows which rank *this* process is. The simulator is the
placement with one process that holds everyone (:meth:`Placement.single`);
a deployment spreads the participants over processes
(:meth:`Placement.from_groups`, :func:`layout`).

Every process of a run holds the same placement (it is public), so each
can compute, for any batch of messages, which rows it must send to which
process and which rows it will receive from which: that is how one
exchange delivers exactly what was sent to each local participant
(:mod:`mpc.comm.network`). A sub-network (a chunk of edges whose local slots are
global parties) takes :meth:`Placement.sub`.

Cost: an ``int32`` per participant; lookups are numpy gathers.
"""

from __future__ import annotations

import itertools
import numbers
from collections.abc import Iterable, Sequence

import numpy as np
from numpy.typing import ArrayLike

#: What a group of :meth:`Placement.from_groups` lists: party ids, ranges of them, role names.
GroupItem = int | range | str


class Placement:
    """The process rank of every participant (parties, then roles) and this process's rank.

    Parameters
    ----------
    owner : int array of shape (size,)
        ``owner[i]`` is the rank of the process holding participant ``i``.
    rank : int
        This process's rank, in ``0 .. n_procs-1``.
    n_procs : int
        Number of processes of the run (>= every rank in ``owner`` + 1).
    """

    __slots__ = ("_single", "local", "n_procs", "owner", "rank")

    def __init__(self, owner, rank: int = 0, n_procs: int | None = None):
        owner = np.asarray(owner)
        if owner.ndim != 1 or owner.dtype.kind not in "iu":
            raise TypeError(f"owner must be a 1-d integer array of ranks, got {owner.dtype} "
                            f"of shape {owner.shape}")
        owner = owner.astype(np.int32)
        top = int(owner.max()) + 1 if owner.size else 1
        n_procs = top if n_procs is None else _check_int(n_procs, "n_procs", 1)
        if owner.size and (owner.min() < 0 or top > n_procs):
            raise ValueError(f"owner holds ranks outside 0..{n_procs - 1}")
        rank = _check_int(rank, "rank", 0)
        if rank >= n_procs:
            raise ValueError(f"rank must be in 0..{n_procs - 1}, got {rank}")
        self.owner = owner
        self.rank = rank
        self.n_procs = n_procs
        self.local = owner == rank
        self._single = n_procs == 1

    @classmethod
    def single(cls, size: int) -> Placement:
        """Everyone in this one process: the simulator."""
        return cls(np.zeros(_check_int(size, "size", 1), dtype=np.int32), 0, 1)

    @classmethod
    def from_groups(cls, n_parties: int, roles: Iterable[str],
                    groups: Sequence[Iterable[GroupItem]], rank: int = 0) -> Placement:
        """One group per process: ``groups[r]`` lists what process r holds.

        A group holds party ids (ints, or ``range``s) and role names; every
        participant must be in exactly one group. Example, three parties and a
        dealer in four processes: ``[[0], [1], [2], ["dealer"]]``.
        """
        n_parties = _check_int(n_parties, "n_parties", 1)
        roles = tuple(roles)
        size = n_parties + len(roles)
        owner = np.full(size, -1, dtype=np.int32)
        for r, group in enumerate(groups):
            for item in group:
                ids = _ids_of(item, n_parties, roles)
                if np.any(owner[ids] >= 0):
                    raise ValueError(f"participant(s) {_names(ids, n_parties, roles)} are in "
                                     "more than one group")
                owner[ids] = r
        missing = np.flatnonzero(owner < 0)
        if missing.size:
            raise ValueError(f"participant(s) {_names(missing, n_parties, roles)} are in no "
                             "group: every party and role needs a process")
        return cls(owner, rank, len(groups))

    # -- questions ----------------------------------------------------------------------------
    @property
    def size(self) -> int:
        return self.owner.size

    @property
    def single_process(self) -> bool:
        """True when this process holds every participant (no messages leave it)."""
        return self._single

    def is_local(self, ids: ArrayLike) -> np.ndarray | bool:
        """Whether participant(s) ``ids`` run in this process."""
        out = self.local[np.asarray(ids)]
        return bool(out) if out.ndim == 0 else out

    def held_by(self, rank: int) -> np.ndarray:
        """Participant ids held by process ``rank``."""
        return np.flatnonzero(self.owner == rank)

    def with_rank(self, rank: int) -> Placement:
        """The same placement as seen from process ``rank``."""
        return Placement(self.owner, rank, self.n_procs)

    def sub(self, ids: ArrayLike) -> Placement:
        """The placement of a sub-network whose participant i is this one's ``ids[i]``."""
        ids = np.asarray(ids, dtype=np.int64)
        return Placement(self.owner[ids], self.rank, self.n_procs)

    def describe(self, rank: int, n_parties: int, roles: Iterable[str]) -> str:
        """What process ``rank`` holds, for error messages: ``process 2 (parties 0-9, dealer)``."""
        return f"process {rank} ({_names(self.held_by(rank), n_parties, tuple(roles))})"

    def __repr__(self) -> str:
        return f"Placement(size={self.size}, rank={self.rank}, n_procs={self.n_procs})"


def layout(n_parties: int, roles: Iterable[str],
           processes: int) -> list[list[GroupItem]]:
    """The default groups of :meth:`Placement.from_groups` for ``processes`` processes.

    - ``processes >= n_parties + len(roles)``: every role gets a process of
      its own at the end (a dealer or an aggregator in a party's process
      would see that party's secrets) and the parties are split into
      contiguous blocks over the others.
    - ``n_parties <= processes < n_parties + len(roles)``: every party (a
      share holder) gets a process of its own, as MPyC's ``-M P``; the roles
      go round-robin over the processes left, and when none is left they
      share the parties' processes from the last (3 parties and a dealer in
      3 processes: ``[[0], [1], [2, "dealer"]]``: the dealer sees party 2's
      secrets there; give ``groups`` to place it elsewhere).
    - ``processes < n_parties``: parties cannot all be apart; when there are
      processes to spare the roles get their own and the parties are split
      into contiguous blocks over the others, else the parties are split over
      all of them and the roles go round-robin from the last.
    """
    n_parties = _check_int(n_parties, "n_parties", 1)
    processes = _check_int(processes, "processes", 1)
    roles = tuple(roles)
    if n_parties <= processes < n_parties + len(roles):
        apart: list[list[GroupItem]] = [[range(i, i + 1)] for i in range(n_parties)]
        apart += [[] for _ in range(processes - n_parties)]
        left = processes - n_parties
        for i, r in enumerate(roles):
            apart[n_parties + i % left if left else (processes - 1 - i) % processes].append(r)
        return apart
    spare = processes - len(roles)
    party_procs = spare if spare >= 1 else processes
    party_procs = min(party_procs, n_parties)
    cuts = np.linspace(0, n_parties, party_procs + 1).round().astype(int)
    groups: list[list[GroupItem]] = [[range(int(a), int(b))]
                                              for a, b in itertools.pairwise(cuts)]
    groups += [[] for _ in range(processes - party_procs)]
    if spare >= 1 and processes - party_procs >= len(roles):
        for i, r in enumerate(roles):
            groups[processes - len(roles) + i].append(r)
    else:
        for i, r in enumerate(roles):
            groups[(processes - 1 - i) % processes].append(r)
    return [g for g in groups if g]


def _ids_of(item, n_parties: int, roles: tuple) -> np.ndarray:
    if isinstance(item, str):
        if item not in roles:
            raise ValueError(f"unknown role {item!r}; roles are {list(roles)}")
        return np.array([n_parties + roles.index(item)])
    if isinstance(item, range):
        ids = np.arange(item.start, item.stop, item.step)
    elif isinstance(item, numbers.Integral) and not isinstance(item, bool):
        ids = np.array([int(item)])
    else:
        ids = np.asarray(item)
        if ids.dtype.kind not in "iu":
            raise TypeError(f"a group holds party ids, ranges and role names, got {item!r}")
    if ids.size and (ids.min() < 0 or ids.max() >= n_parties):
        raise ValueError(f"party id outside 0..{n_parties - 1} in group item {item!r}")
    return ids.astype(np.int64)


def _names(ids, n_parties: int, roles: tuple) -> str:
    """``parties 0-9, 12, dealer`` for a sorted id list."""
    ids = np.sort(np.asarray(ids))
    parties = ids[ids < n_parties]
    out = []
    if parties.size:
        runs, start, prev = [], int(parties[0]), int(parties[0])
        for v in parties[1:].tolist():
            if v != prev + 1:
                runs.append((start, prev))
                start = v
            prev = v
        runs.append((start, prev))
        shown = [f"{a}" if a == b else f"{a}-{b}" for a, b in runs[:4]]
        more = ", ..." if len(runs) > 4 else ""
        out.append(("party " if parties.size == 1 else "parties ") + ", ".join(shown) + more)
    out += [roles[int(i) - n_parties] for i in ids[ids >= n_parties]]
    return ", ".join(out) if out else "nothing"


def _check_int(v, name: str, minimum: int) -> int:
    if isinstance(v, bool) or not isinstance(v, numbers.Integral):
        raise TypeError(f"{name} must be an integer, got {v!r}")
    if v < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {v}")
    return int(v)
