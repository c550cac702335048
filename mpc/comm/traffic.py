"""Per-party traffic counters of a network cell, the packed traffic of a sub-network, and the
periodic traffic a network holds until it is read (:class:`Deferred`).

:class:`Tally` holds the counters of one (phase, online/offline) cell of a
:class:`mpc.comm.network.Network`: total bits, messages, rounds, and per
participant (parties, then roles) the bits sent and received.

Periodic sends. Chunked protocols (a chunk of edges of k members, local
party ``e k + j`` being member j of edge e) send to whole member classes at
once: ``ids = arange(j, n, p)``. Adding such a batch to the per-party
counters touches every p-th counter (a ``bincount`` of the ids plus passes
over the counter array); the tally instead adds the bits to one entry of a
*pattern* of p counters per direction (:func:`residue_class` checks that the
ids are exactly that class, one comparison pass). The pattern is expanded
into the counters only when they are read (:attr:`Tally.sent`,
:attr:`Tally.received`), and a sub-network whose cells hold nothing else
packs it as is (:meth:`Tally.periodic`, a :class:`Traffic` with a period):
no counter of the size of the chunk is touched. Patterns of different
periods p and q combine into one of period lcm(p, q) (a divisor of n), up
to :data:`MAX_PERIOD`; longer periods (sends to few parties) go to the
counters.
Counts are identical either way (tested against the dense counters).

Cost of a send to m parties: O(m) for the class check (and O(p) for the
pattern), or, for any other ids, O(m) through ``np.add.at`` / ``np.bincount``.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

#: longest pattern kept (a send to every p-th party with a longer period p touches few
#: parties, and goes to the counters)
MAX_PERIOD = 64


def residue_class(ids: np.ndarray, n: int) -> tuple[int, int] | None:
    """``(p, j)`` when ``ids`` is exactly ``arange(j, n, p)`` with ``0 <= j < p`` (and at least
    two ids), else None. O(len(ids)): one comparison with the expected class."""
    size = ids.size
    if ids.ndim != 1 or size < 2 or n % size:
        return None
    p = n // size
    j = int(ids[0])
    if not 0 <= j < p or int(ids[1]) != j + p or int(ids[-1]) != j + p * (size - 1):
        return None
    if not np.array_equal(ids, np.arange(j, n, p, dtype=ids.dtype)):
        return None
    return p, j


class Tally:
    """Counters for one (phase, online/offline) cell of a network of ``n_parties`` parties
    followed by roles (``size`` participants in all)."""

    def __init__(self, size: int, n_parties: int):
        self.size, self.n_parties = int(size), int(n_parties)
        self.bits = self.messages = self.rounds = 0
        # zero-filled on demand by the OS: untouched pages cost nothing
        self._counts = (np.zeros(self.size, dtype=np.int64), np.zeros(self.size, dtype=np.int64))
        self.period = 0
        self._pattern: Any = None   # int64 (2, period): sent / received bits per member class
        self.dense = False          # a party counter was added to outside the pattern

    # -- reading ----------------------------------------------------------------
    @property
    def sent(self) -> np.ndarray:
        """Bits sent per participant (parties, then roles)."""
        self.settle()
        return self._counts[0]

    @property
    def received(self) -> np.ndarray:
        """Bits received per participant (parties, then roles)."""
        self.settle()
        return self._counts[1]

    def settle(self) -> None:
        """Expand the pattern into the per-party counters."""
        if self.period:
            reps = self.n_parties // self.period
            for which in (0, 1):
                self._counts[which][:self.n_parties] += np.tile(self._pattern[which], reps)
            self.period, self._pattern, self.dense = 0, None, True

    def periodic(self, period: int) -> tuple[np.ndarray, ...]:
        """``(sent, received)`` as one ``period`` of the party counters followed by the role
        counters, without expanding anything; only when :meth:`is_periodic` (period)."""
        if not self.is_periodic(period):
            raise ValueError(f"the counters do not repeat with period {period}")
        pat = (np.tile(self._pattern, (1, period // self.period)) if self.period
               else np.zeros((2, period), dtype=np.int64))
        n = self.n_parties
        return tuple(np.concatenate([pat[w], self._counts[w][n:]]) for w in (0, 1))

    def is_periodic(self, period: int) -> bool:
        return not self.dense and period > 0 and self.n_parties % period == 0 and (
            not self.period or period % self.period == 0)

    def summary(self, scratch: np.ndarray | None = None) -> dict:
        """Totals and per-party maxima / mean (sent + received) over the parties.

        ``scratch``: an int64 array of at least ``n_parties`` entries to hold the
        per-party sums (a caller summarizing many tallies passes one, instead
        of a fresh array per tally). The mean is the exact integer total over
        the party count.
        """
        n = self.n_parties
        sent, received = self.sent[:n], self.received[:n]
        out = {"bits": int(self.bits), "messages": int(self.messages), "rounds": int(self.rounds),
               "max_party_bits": 0, "mean_party_bits": 0.0, "max_party_sent_bits": 0,
               "max_party_received_bits": 0}
        if n:
            per_party = np.add(sent, received, out=None if scratch is None else scratch[:n])
            out.update(max_party_bits=int(per_party.max()),
                       mean_party_bits=int(per_party.sum()) / n,
                       max_party_sent_bits=int(sent.max()),
                       max_party_received_bits=int(received.max()))
        return out

    # -- adding -------------------------------------------------------------------
    def counter(self, which: int) -> np.ndarray:
        """The sent (0) or received (1) counter array, for a caller that adds to it directly."""
        if self.n_parties:
            self.dense = True
        return self._counts[which]

    def add(self, which: int, ids: np.ndarray, bits: np.ndarray | int) -> None:
        """Add ``bits`` (scalar or one per id) to the sent (0) or received (1) counters of ``ids``.

        A whole member class with scalar bits goes to the pattern; other ids
        through ``np.add.at``, or, when they are at least a quarter of the
        counters, one ``np.bincount`` (twice as fast there, still linear in
        the send).
        """
        if np.ndim(ids):
            if np.ndim(bits) == 0:
                rc = residue_class(ids, self.n_parties)
                if rc is not None and math.lcm(self.period or 1, rc[0]) <= MAX_PERIOD:
                    self._add_class(which, rc[0], rc[1], int(bits))
                    return
            counter = self._counts[which]
            if ids.size and int(ids.min()) < self.n_parties:
                self.dense = True
            if np.ndim(bits) == 0 and 4 * ids.size >= counter.size:
                counter += np.bincount(ids, minlength=counter.size) * int(bits)
            else:
                np.add.at(counter, ids, bits)
        else:
            i = int(ids)
            counter = self.counter(which) if i < self.n_parties else self._counts[which]
            counter[i] += int(np.sum(bits))

    def _add_class(self, which: int, p: int, j: int, bits: int) -> None:
        """Add ``bits`` to member class j of period p (parties j, j + p, ...)."""
        P = self.period
        if not P:
            self.period, self._pattern = p, np.zeros((2, p), dtype=np.int64)
        elif P % p:                             # lcm(P, p): divides n, at most MAX_PERIOD
            L = P * p // math.gcd(P, p)
            self._pattern, self.period = np.tile(self._pattern, (1, L // P)), L
        self._pattern[which, j::p] += bits


@dataclass
class Traffic:
    """What a sub-network sent, packed for :meth:`mpc.comm.network.Network.absorb` (picklable).

    ``cells`` maps (phase, offline) to ``(bits, messages, rounds, sent,
    received)``; ``sent``/``received`` hold one counter per local party then
    one per role, or, when ``period`` is set, one period of the party counters
    followed by the role counters. ``round_index`` is the number of rounds
    the sub-network closed; ``views`` its recorded messages in the order they
    were sent, as (local receiver, :class:`mpc.comm.network.Received`).
    """

    n_parties: int
    roles: tuple
    cells: dict
    round_index: int
    views: list = field(default_factory=list)
    period: int = 0            # 0: full per-party arrays

    def compress(self, period: int) -> Traffic:
        """Store each per-party array as one period when it repeats with that period.

        Chunked protocols give every edge the same traffic pattern, so the
        counters of members ``j, j + k, j + 2k, ...`` are usually equal:
        a chunk's report then shrinks from O(chunk) to O(k) integers. A
        traffic that is already periodic is returned as is.
        """
        n = self.n_parties
        if self.period or period < 1 or n % period:
            return self
        arrays = [a for c in self.cells.values() for a in c[3:]]
        rows = [a[:n].reshape(-1, period) for a in arrays]
        if not all(np.array_equal(r, np.broadcast_to(r[:1], r.shape)) for r in rows):
            return self
        cells = {key: c[:3] + tuple(np.concatenate([a[:period], a[n:]]) for a in c[3:])
                 for key, c in self.cells.items()}
        return Traffic(n, self.roles, cells, self.round_index, self.views, period)

    def party_counts(self, counts: np.ndarray) -> np.ndarray:
        """The per-local-party part of a ``sent``/``received`` array, expanded."""
        if self.period:
            return np.tile(counts[:self.period], self.n_parties // self.period)
        return counts[:self.n_parties]

    def role_counts(self, counts: np.ndarray) -> np.ndarray:
        return counts[self.period or self.n_parties:]


class Deferred:
    """Periodic traffic absorbed into a network, held by party ids and counted later.

    Chunks of one protocol step share one pattern (every edge sends the
    same), so instead of adding each chunk's counts to every (phase,
    online/offline) counter at random positions, :meth:`count_into` counts
    once how often each party holds each member position and scales those
    counts by the pattern: one random access per (edge, member) instead of
    one per (edge, member, cell, direction). Ids are kept by reference (a
    view of the caller's edge array costs nothing); the network decides when
    to count (at every read, and when :attr:`length` ids are held).
    """

    def __init__(self):
        self.groups: dict = {}      # (period, patterns) -> list of id arrays
        self.length = 0             # ids held

    def add(self, traffic: Traffic, ids: np.ndarray) -> None:
        """Hold ``ids`` (global party of each local party) of a periodic ``traffic``."""
        p = traffic.period
        patterns = tuple((key, tuple(int(v) for v in c[3][:p]), tuple(int(v) for v in c[4][:p]))
                         for key, c in sorted(traffic.cells.items()))
        self.groups.setdefault((p, patterns), []).append(ids)
        self.length += ids.size

    def count_into(self, tally_of: Callable[[tuple[str, bool]], Tally], size: int,
                   n_parties: int) -> None:
        """Add everything held to the counters (``tally_of(key)``: the network's tally of a
        cell; ``size`` participants of which ``n_parties`` parties), then forget it.

        ``held[j]``: how many of the held edges each participant is member j of
        (one ``np.bincount`` over all of them per position, about twice as
        fast as scattered adds); each cell's counters then add the pattern's
        bits times ``held[j]``. A pattern with the same bits at every position
        (every member sends alike, the usual case) adds bits times the
        participant's edge count (``held`` summed once) in one product instead
        of one per position, and a cell whose party counters are still zero is
        written instead of added to. Cost: O(ids + period * size).
        """
        n = n_parties
        for (p, patterns), arrays in self.groups.items():
            held = np.empty((p, size), dtype=np.int64)     # member position x participants
            for j in range(p):
                ids = np.concatenate([a[j::p] for a in arrays]) if len(arrays) > 1 \
                    else arrays[0][j::p]
                held[j] = np.bincount(ids, minlength=size)
            total = None                                 # held summed over positions, once
            scaled = np.empty(size, dtype=np.int64)
            for key, sent, received in patterns:
                t = tally_of(key)
                zero = not t.dense and not t.period       # party counters all 0 so far
                for which, pattern in ((0, sent), (1, received)):
                    terms = [(held[j], bits) for j, bits in enumerate(pattern) if bits]
                    if len(terms) > 1 and len(set(pattern)) == 1:
                        total = held.sum(axis=0) if total is None else total
                        terms = [(total, pattern[0])]
                    counter = t.counter(which)
                    for i, (count, bits) in enumerate(terms):
                        if zero and i == 0:
                            np.multiply(count[:n], bits, out=counter[:n])
                            counter[n:] += count[n:] * bits
                        else:
                            counter += np.multiply(count, bits, out=scaled)
        self.groups.clear()
        self.length = 0
