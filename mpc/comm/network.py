"""A simulated network of n parties plus named roles that counts every bit and round.

Parties are ids ``0 .. n_parties-1``; named roles (dealer, aggregator,
servers) get the ids after them (:meth:`Network.role`). Protocols send
*message batches*: arrays of senders, receivers and payloads, so that one call
can carry 10^6 messages. Every batch is accounted from what it carries: the
payload's element count times the element width in bits (``l`` for a ring
element, 1 for a bit, 128 for a seed or label), or an explicit per-message bit
size for structured payloads such as serialized FSS keys.

Accounting is kept separately for online and offline (preprocessing) traffic
and for each named phase: total bits, message count, rounds, and per-party
bits sent and received. A round is counted at an explicit boundary: all sends
inside one ``with net.round():`` block form one round; a send outside any
round block is a round by itself. Optionally (small n, tests) the network
records each party's *view*: everything it received, with sender, phase and
round.

Accounting is linear in what is sent: a batch of m messages adds to the
per-party counters of the m senders and receivers it touches (``np.add.at``;
a ``bincount`` when m is a quarter of the parties or more), never to an
array of length n per batch, so streaming |E| edges in chunks costs O(|E|)
however many parties there are. A batch sent by or to a whole member class
of a chunk (every p-th party from j, p <= 64) adds to a pattern of p
counters instead (:mod:`mpc.comm.traffic`), expanded only when read or packed as
is by :meth:`Network.traffic`. Memory: per (phase, online/offline) cell, two
int64 counters per participant (16 bytes per party per cell, allocated
zero-filled on first use).

Sub-networks: a protocol step that runs in pieces (a chunk of edges, possibly
in another thread, process or machine) sends on a small network of its own
whose parties are the piece's local ids; :meth:`Network.traffic` packs what it
sent (a :class:`Traffic`, picklable) and :meth:`Network.absorb` adds it to the
main network under a map from local to global ids: bits, messages and per-party
counts add up, rounds count as if sent here (inside a :meth:`Network.lane`
they count once per :meth:`Network.parallel` block), recorded views keep their
order.

The network is a simulation: delivery is the identity on the payload (it is
returned to the caller, who hands it to the receivers' code). It does not
model latency or bandwidth; it measures what a real deployment would send.
Threat model: channels are assumed private and authenticated.
"""

from __future__ import annotations

import contextlib
import dataclasses
import math
import numbers
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np
from numpy.typing import ArrayLike

from mpc.comm.traffic import Deferred, Tally, Traffic

if TYPE_CHECKING:
    from mpc.run.routing import Link

_P = TypeVar("_P")

DEFAULT_ROLES = ("dealer", "aggregator")


@dataclass(frozen=True)
class Received:
    """One message in a party's recorded view."""

    phase: str
    round: int
    offline: bool
    sender: int
    payload: object
    op: str = ""        # the operation that sent it (:func:`caller_op` of the round)


def caller_op() -> str:
    """The name of the protocol function that opened the current round: the first caller
    outside this module and ``contextlib`` (e.g. ``output_values``, ``multiply``). The same in
    every process of an SPMD run; frames carry its tag, so a process whose program took
    another path is named as diverged. A few microseconds, once per round."""
    f: Any = sys._getframe(1)
    while f is not None and (f.f_code.co_filename == __file__
                             or f.f_code.co_filename.endswith("contextlib.py")):
        f = f.f_back
    return "?" if f is None else getattr(f.f_code, "co_qualname", f.f_code.co_name)


class Network:
    """Simulated network with per-party, per-phase bit and round accounting.

    Parameters
    ----------
    n_parties : int
        Number of data-holding parties (ids 0..n_parties-1), >= 1.
    roles : sequence of str
        Extra named participants (ids n_parties, n_parties+1, ...).
    record_views : bool
        Keep every received message per receiver (for tests at small n).
    """

    #: absorbed periodic ids held beyond 4 per party before they are counted
    _defer_slack = 1 << 22

    def __init__(self, n_parties, roles=DEFAULT_ROLES, record_views: bool = False):
        if isinstance(n_parties, bool) or not isinstance(n_parties, numbers.Integral):
            raise TypeError(f"n_parties must be a positive integer, got {n_parties!r}")
        if n_parties < 1:
            raise ValueError(f"n_parties must be >= 1, got {n_parties}")
        roles = tuple(roles)
        for r in roles:
            if not isinstance(r, str) or not r:
                raise TypeError(f"roles must be non-empty strings, got {r!r}")
        if len(set(roles)) != len(roles):
            raise ValueError(f"roles must be distinct, got {roles}")
        self.n_parties = int(n_parties)
        self.roles = roles
        self._role_ids = {r: self.n_parties + i for i, r in enumerate(roles)}
        self.size = self.n_parties + len(roles)
        self.record_views = bool(record_views)
        self._views: dict[int, list] = {}
        self._log: list = []        # (receiver, Received) in send order, with record_views
        self._periodic = Deferred()   # absorbed periodic traffic not yet counted (see _defer)
        self._phase = "default"
        self._phase_offline = False
        self._tallies: dict[tuple[str, bool], Tally] = {}
        self._round_depth = 0
        self._round_used: set[tuple[str, bool]] = set()
        self._round_index = 0
        self._lanes: dict[tuple[str, bool], int] | None = None  # in parallel(): max over lanes
        self._lane_rounds: dict[tuple[str, bool], int] | None = None  # in lane(): this lane's
        self._link: Link | None = None  # when participants live in other processes
        self._pending: list[tuple] = []  # this round's sends to route (with a link)
        self._op = ""                   # the current round's operation (runs and recorded views)
        self.seconds: dict[str, float] = {}     # wall time inside each phase block
        self.wait_seconds: dict[str, float] = {}  # time spent in exchanges, per phase

    # -- processes -----------------------------------------------------------------------
    def attach(self, link: Link | None) -> None:
        """Route messages to other processes through ``link`` (:class:`mpc.run.routing.Link`).

        Without a link (the simulator) every participant is local and a send
        only counts. With one, the sends of a round are exchanged with the
        other processes when the round closes, and every row received by a
        local participant is written into the payload array it was sent in.
        """
        if link is not None and link.placement.size != self.size:
            raise ValueError(f"the placement has {link.placement.size} participants, the "
                             f"network {self.size}")
        self._link = None if link is None or link.placement.single_process else link

    @property
    def link(self) -> Link | None:
        return self._link

    def is_local(self, ids: ArrayLike) -> np.ndarray | bool:
        """Whether participant(s) ``ids`` run in this process (always True in the simulator)."""
        if self._link is None:
            return True if np.ndim(ids) == 0 else np.ones(np.shape(ids), dtype=bool)
        return self._link.placement.is_local(ids)

    def vanished(self, ids: ArrayLike) -> np.ndarray:
        """Whether participant(s) ``ids`` ran in a process that has vanished (a dropout the
        transport noted: what it owed reads as zeros); a bool array shaped as ``ids``, all
        False in the simulator and in a run where nobody may vanish."""
        ids = np.asarray(ids, dtype=np.int64)
        link = self._link
        gone = getattr(link.transport, "gone", ()) if link is not None else ()
        if link is None or not gone:
            return np.zeros(ids.shape, dtype=bool)
        return np.isin(link.placement.owner[ids], np.fromiter(gone, dtype=np.int64))

    # -- identities --------------------------------------------------------
    def role(self, name: str) -> int:
        """The party id of a named role (e.g. ``"dealer"``)."""
        try:
            return self._role_ids[name]
        except KeyError:
            raise ValueError(f"unknown role {name!r}; roles are {list(self.roles)}") from None

    @property
    def parties(self) -> np.ndarray:
        return np.arange(self.n_parties, dtype=np.int64)

    # -- phases and rounds ---------------------------------------------------
    @property
    def current_phase(self) -> tuple[str, bool]:
        """The ``(name, offline)`` cell that a send made now is charged to."""
        return self._phase, self._phase_offline

    @contextlib.contextmanager
    def phase(self, name: str, offline: bool = False) -> Iterator[Network]:
        """Name the phase of everything sent inside (nesting restores the outer)."""
        if not isinstance(name, str) or not name:
            raise TypeError(f"phase name must be a non-empty string, got {name!r}")
        prev = (self._phase, self._phase_offline)
        self._phase, self._phase_offline = name, bool(offline)
        t0 = time.perf_counter()
        try:
            yield self
        finally:
            self._phase, self._phase_offline = prev
            self.seconds[name] = self.seconds.get(name, 0.0) + time.perf_counter() - t0

    @contextlib.contextmanager
    def round(self) -> Iterator[Network]:
        """Everything sent inside counts as one communication round.

        Nested blocks belong to the outermost one. The round is charged to
        each (phase, online/offline) cell that received traffic in it.
        """
        if not self._round_depth and (self._link is not None or self.record_views):
            self._op = caller_op()
        self._round_depth += 1
        ok = False
        try:
            yield self
            ok = True
        finally:
            self._round_depth -= 1
            if self._round_depth == 0:
                self._close_round()
                if self._pending:
                    pending, self._pending = self._pending, []
                    if ok:
                        self._route(pending)

    @contextlib.contextmanager
    def parallel(self) -> Iterator[Network]:
        """Lanes opened inside run in parallel: their rounds are counted once.

        A protocol that streams a batch in chunks runs the same steps on every
        chunk; in a deployment the chunks travel together, so the rounds of
        the block are, per (phase, online/offline) cell, the maximum over its
        lanes (:meth:`lane`), not the sum. Bits and messages add up as usual.
        """
        if self._lanes is not None:
            raise RuntimeError("parallel blocks do not nest")
        self._lanes = {}
        try:
            yield self
        finally:
            lanes, self._lanes = self._lanes, None
            for key, rounds in lanes.items():
                self._tally(key).rounds += rounds

    @contextlib.contextmanager
    def lane(self) -> Iterator[Network]:
        """One of the parallel instances of a :meth:`parallel` block."""
        if self._lanes is None:
            raise RuntimeError("lane() must be used inside a parallel() block")
        if self._round_depth:
            raise RuntimeError("lane() cannot start inside a round block")
        self._lane_rounds = {}
        try:
            yield self
        finally:
            for key, rounds in self._lane_rounds.items():
                self._lanes[key] = max(self._lanes.get(key, 0), rounds)
            self._lane_rounds = None

    def _count_round(self, key):
        if self._lane_rounds is not None:
            self._lane_rounds[key] = self._lane_rounds.get(key, 0) + 1
        else:
            self._tally(key).rounds += 1

    def _mark_round(self, key):
        """A send to cell ``key``: part of the open round block, or a round of its own."""
        if self._round_depth:
            self._round_used.add(key)
        else:
            if self._link is not None or self.record_views:
                self._op = caller_op()
            self._count_round(key)
            self._round_index += 1

    def _close_round(self):
        if self._round_used:
            for key in self._round_used:
                self._count_round(key)
            self._round_used = set()
            self._round_index += 1

    def _tally(self, key) -> Tally:
        t = self._tallies.get(key)
        if t is None:
            t = self._tallies[key] = Tally(self.size, self.n_parties)
        return t

    # -- sending -------------------------------------------------------------
    def _ids(self, ids, name: str) -> np.ndarray:
        arr = np.asarray(ids)
        if arr.dtype.kind not in "iu":
            raise TypeError(f"{name} must be integer party ids, got dtype {arr.dtype}")
        if arr.ndim > 1:
            raise ValueError(f"{name} must be a scalar or a 1-d array of party ids")
        if arr.size and (arr.min() < 0 or arr.max() >= self.size):
            raise ValueError(
                f"{name} contains an id outside 0..{self.size - 1} "
                f"({self.n_parties} parties + roles {list(self.roles)})"
            )
        return arr.astype(np.int64, copy=False)

    def send(self, senders: ArrayLike, receivers: ArrayLike, payload: _P, bits: int, *,
             offline: bool | None = None) -> _P:
        """Send a batch of messages and count them; returns ``payload``.

        ``senders``/``receivers``: an id or 1-d id arrays of one length m.
        With scalar ids the whole ``payload`` is one message; with arrays,
        ``payload.shape[0] == m`` and message i is ``payload[i]``.
        ``bits``: width of one payload element in bits (1..64 for ring
        elements, 128 for seeds/labels, any positive int).
        """
        if isinstance(bits, bool) or not isinstance(bits, numbers.Integral) or bits < 1:
            raise ValueError(f"bits must be a positive integer element width, got {bits!r}")
        payload_arr = np.asarray(payload)
        s = self._ids(senders, "senders")
        r = self._ids(receivers, "receivers")
        if self._link is not None and not isinstance(payload, np.ndarray):
            raise TypeError(
                "in a run across processes a payload must be a numpy array (the received rows "
                f"are written into it), got {type(payload).__name__}: for one element of an "
                "array use a 0-d view a[j, ...], not the scalar a[j]")
        if s.ndim == 0 and r.ndim == 0:
            nbits = np.asarray(payload_arr.size * int(bits), dtype=np.int64)
            self._account(s, r, nbits, offline, payload_arr, single=True)
            if self._link is not None:
                return self._queue("single", s, r, payload_arr, int(bits), 1, offline)
        else:
            m = max(s.size if s.ndim else 1, r.size if r.ndim else 1)
            if s.ndim and r.ndim and s.size != r.size:
                raise ValueError(
                    f"senders and receivers must have the same length, got {s.size} and {r.size}"
                )
            if payload_arr.ndim == 0 or payload_arr.shape[0] != m:
                raise ValueError(
                    f"payload must have one row per message: expected first dimension {m}, "
                    f"got shape {payload_arr.shape}"
                )
            per_msg = (payload_arr.size // m) * int(bits) if m else 0
            self._account(s, r, np.asarray(per_msg, dtype=np.int64), offline, payload_arr,
                          single=False, m=m)
            if self._link is not None and m:
                return self._queue("batch", s, r, payload_arr, int(bits), m, offline)
        return payload

    def send_all_to_all(self, parties: ArrayLike, payload: _P, bits: int, *,
                        offline: bool | None = None) -> _P:
        """Every party of ``parties`` sends ``payload[i, j]`` to ``parties[j]`` (j != i).

        ``payload``: shape ``(n, n, ...)``; the diagonal is not sent. One
        message per ordered pair, n (n-1) in all; accounting costs O(n), so
        dense exchanges (e.g. Pi_DLap at n = 10^4) are cheap to count.
        Returns ``payload``.
        """
        P, n = self._all_pairs_ids(parties, bits)
        if n < 2:
            return payload
        arr = np.asarray(payload)
        if arr.shape[:2] != (n, n):
            raise ValueError(f"payload must have shape ({n}, {n}, ...), got {arr.shape}")
        off = self._count_all_pairs(P, arr.shape[2:], bits, offline)
        if self._link is not None:
            return self._queue("all", P, P, arr, int(bits), n, off)
        if self.record_views:
            self._record_all_to_all(P, arr, self._round_index, off)
        return payload

    def broadcast(self, parties: ArrayLike, rows: _P, bits: int, *,
                  offline: bool | None = None) -> _P:
        """Every party of ``parties`` sends its row ``rows[i]`` to every other one (one round).

        Counted as :meth:`send_all_to_all` with ``payload[i, j] = rows[i]``
        (one message per ordered pair: every receiver gets its own copy).
        ``rows``: shape ``(n, ...)``, writable (the rows of parties in other
        processes are written into it). Returns ``rows``.
        """
        P, n = self._all_pairs_ids(parties, bits)
        if n < 2:
            return rows
        arr = np.asarray(rows)
        if arr.ndim < 1 or arr.shape[0] != n:
            raise ValueError(f"rows must have shape ({n}, ...), got {arr.shape}")
        off = self._count_all_pairs(P, arr.shape[1:], bits, offline)
        if self._link is not None:
            return self._queue("bcast", P, P, arr, int(bits), n, off)
        if self.record_views:
            self._record_all_to_all(P, np.broadcast_to(arr[:, None], (n, n) + arr.shape[1:]),
                                    self._round_index, off)
        return rows

    def _all_pairs_ids(self, parties, bits):
        if isinstance(bits, bool) or not isinstance(bits, numbers.Integral) or bits < 1:
            raise ValueError(f"bits must be a positive integer element width, got {bits!r}")
        P = self._ids(parties, "parties")
        if P.ndim != 1:
            raise ValueError("parties must be a 1-d array of party ids")
        if np.unique(P).size != P.size:
            raise ValueError("parties must be distinct")
        return P, P.size

    def _count_all_pairs(self, P, elem_shape, bits, offline) -> bool:
        n = P.size
        per_msg = int(np.prod(elem_shape, dtype=np.int64)) * int(bits)
        off = self._phase_offline if offline is None else bool(offline)
        key = (self._phase, off)
        t = self._tally(key)
        each = per_msg * (n - 1)
        t.add(0, P, each)
        t.add(1, P, each)
        t.bits += each * n
        t.messages += n * (n - 1)
        self._mark_round(key)
        return off

    def _record_all_to_all(self, P, arr, rnd, off, receivers=None):
        n = P.size
        for i in range(n):
            for j in range(n):
                if i != j and (receivers is None or receivers[j]):
                    self._keep(int(P[j]), Received(self._phase, rnd, off, int(P[i]), arr[i, j]))

    def send_bits(self, senders: ArrayLike, receivers: ArrayLike, nbits: ArrayLike,
                  payload: Any = None, *, offline: bool | None = None) -> Any:
        """Count messages of explicit sizes (``nbits`` per message, scalar or per message).

        Use for structured payloads whose wire size is known from their
        serialization (e.g. FSS keys). ``payload`` (any object) is recorded in
        views when given and returned.
        """
        nb = np.asarray(nbits)
        if nb.dtype.kind not in "iu" or (nb.size and nb.min() < 0):
            raise ValueError(f"nbits must be non-negative integers, got {nbits!r}")
        s = self._ids(senders, "senders")
        r = self._ids(receivers, "receivers")
        if s.ndim == 0 and r.ndim == 0 and nb.ndim == 0:
            self._account(s, r, nb.astype(np.int64), offline, payload, single=True)
            if self._link is not None:
                return self._queue("single", s, r, self._bytes_payload(payload, s, r), 8, 1,
                                   offline)
        else:
            m = max(s.size if s.ndim else 1, r.size if r.ndim else 1, nb.size if nb.ndim else 1)
            for arr, name in ((s, "senders"), (r, "receivers"), (nb, "nbits")):
                if arr.ndim and arr.size != m:
                    raise ValueError(f"{name} must have length {m} (one per message), "
                                     f"got {arr.size}")
            self._account(s, r, nb.astype(np.int64), offline, payload, single=False, m=m)
            if self._link is not None and m:
                return self._queue("batch", s, r, self._bytes_payload(payload, s, r, m), 8, m,
                                   offline)
        return payload

    def _bytes_payload(self, payload, s, r, m=None) -> np.ndarray:
        """The byte array a counted-size message carries across processes (uint8; one row per
        message for a batch): a message that leaves its process must carry what it counts."""
        arr = None if payload is None else np.asarray(payload)
        if arr is None or arr.dtype != np.uint8 or (m is not None and (arr.ndim < 2 or
                                                                        arr.shape[0] != m)):
            assert self._link is not None, "only a message to another process is carried"
            owner = self._link.placement.owner
            crosses = owner[s] != owner[r]
            if np.any(crosses):
                raise TypeError("send_bits across processes needs its payload as uint8 bytes "
                                "(one row per message for a batch), got "
                                f"{None if arr is None else (arr.dtype, arr.shape)}")
            return np.zeros((m, 0) if m is not None else 0, dtype=np.uint8)
        return arr

    def _account(self, s, r, per_msg_bits, offline, payload, single, m=1):
        if m == 0:          # an empty batch sends nothing and takes no round
            return
        off = self._phase_offline if offline is None else bool(offline)
        key = (self._phase, off)
        t = self._tally(key)
        if single:
            total = int(per_msg_bits)
            t.add(0, s, total)
            t.add(1, r, total)
        else:
            per = per_msg_bits if per_msg_bits.ndim else int(per_msg_bits)
            total = int(per_msg_bits.sum()) if per_msg_bits.ndim else per * m
            # a scalar end sends/receives all m messages; an array end one each
            t.add(0, s, per if s.ndim else total)
            t.add(1, r, per if r.ndim else total)
        t.bits += total
        t.messages += m
        self._mark_round(key)
        if self.record_views and self._link is None:
            self._record(s, r, payload, single, m, off)

    # -- other processes -------------------------------------------------------------------
    def _queue(self, kind, s, r, payload, bits, m, off=None):
        """Keep a send of this round for :meth:`_route` (at once outside a round block)."""
        off = self._phase_offline if off is None else bool(off)
        self._pending.append((kind, s, r, payload, bits, m, self._phase, self._round_index,
                              off, self._op))
        if not self._round_depth:
            pending, self._pending = self._pending, []
            self._route(pending)
        return payload

    def _route(self, pending) -> None:
        """Exchange a round's sends with the other processes and record the local views."""
        link = self._link
        assert link is not None, "routing needs a link"
        ex = link.exchange(pending[0][9] if pending else "")
        for kind, s, r, payload, bits, m, *_ in pending:
            if kind == "single":
                ex.single(int(s), int(r), payload, bits)
            elif kind == "batch":
                ex.batch(s, r, payload, bits, m)
            elif kind == "bcast":
                ex.broadcast(s, payload, bits)
            else:
                ex.all_to_all(s, payload, bits)
        t0 = time.perf_counter()
        link.run(ex)
        ph = self._phase
        self.wait_seconds[ph] = self.wait_seconds.get(ph, 0.0) + time.perf_counter() - t0
        if self.record_views:
            local = link.placement.local
            prev = self._phase
            for kind, s, r, payload, _bits, m, phase, rnd, off, _op in pending:
                self._phase = phase
                if kind in ("all", "bcast"):
                    full = payload if kind == "all" else np.broadcast_to(
                        payload[:, None], (m, m) + payload.shape[1:])
                    self._record_all_to_all(s, full, rnd, off, local[s])
                else:
                    keep = local[r]
                    if np.ndim(keep) == 0:
                        if keep:
                            self._record(s, r, payload, kind == "single", m, off, rnd)
                    elif keep.any():
                        idx = np.flatnonzero(np.broadcast_to(keep, (m,)))
                        self._record(np.broadcast_to(s, (m,))[idx], np.broadcast_to(r, (m,))[idx],
                                     payload[idx], False, idx.size, off, rnd)
            self._phase = prev

    def _record(self, s, r, payload, single, m, offline, rnd=None):
        rnd = self._round_index if rnd is None else rnd
        if single:
            self._keep(int(r), Received(self._phase, rnd, offline, int(s), payload))
            return
        ss = np.broadcast_to(s, (m,))
        rr = np.broadcast_to(r, (m,))
        for i in range(m):
            item = payload[i] if payload is not None and np.ndim(payload) else payload
            self._keep(int(rr[i]), Received(self._phase, rnd, offline, int(ss[i]), item))

    def _keep(self, receiver: int, rec: Received):
        if not rec.op and self._op:
            rec = dataclasses.replace(rec, op=self._op)
        self._views.setdefault(receiver, []).append(rec)
        self._log.append((receiver, rec))

    # -- sub-networks ----------------------------------------------------------
    def traffic(self) -> Traffic:
        """Everything sent so far, packed for :meth:`absorb` on another network.

        Call outside any round block (open rounds are not counted yet).
        """
        if self._round_depth:
            raise RuntimeError("traffic() cannot be taken inside a round block")
        self._flush()
        tallies = self._tallies
        period = math.lcm(1, *(t.period for t in tallies.values() if t.period))
        if tallies and all(t.is_periodic(period) for t in tallies.values()):
            cells = {key: (t.bits, t.messages, t.rounds, *t.periodic(period))
                     for key, t in tallies.items()}
            return Traffic(self.n_parties, self.roles, cells, self._round_index, list(self._log),
                           period)
        cells = {key: (t.bits, t.messages, t.rounds, t.sent, t.received)
                 for key, t in tallies.items()}
        return Traffic(self.n_parties, self.roles, cells, self._round_index, list(self._log))

    def absorb(self, traffic: Traffic, parties: ArrayLike) -> None:
        """Add a sub-network's traffic; its local party i is global party ``parties[i]``.

        Roles map by name (each of the sub-network's roles must exist here).
        Rounds count as if the sub-network's round blocks had run here, in the
        current lane when inside :meth:`parallel`. Cost: O(sub-network's
        parties + roles + recorded messages).
        """
        ids = self._ids(parties, "parties")
        if ids.ndim != 1 or ids.size != traffic.n_parties:
            raise ValueError(f"parties must map the {traffic.n_parties} local parties, "
                             f"got shape {ids.shape}")
        if self._round_depth:
            raise RuntimeError("absorb() cannot run inside a round block")
        role_ids = np.array([self.role(r) for r in traffic.roles], dtype=np.int64)
        for key, (bits, messages, rounds, sent, received) in traffic.cells.items():
            t = self._tally(key)
            t.bits += int(bits)
            t.messages += int(messages)
            for which, counts in ((0, sent), (1, received)):
                if not traffic.period:
                    np.add.at(t.counter(which), ids, traffic.party_counts(counts))
                t.add(which, role_ids, traffic.role_counts(counts))
            for _ in range(int(rounds)):
                self._count_round(key)
        if traffic.period:
            self._defer(traffic, ids)
        if traffic.views:
            full = np.concatenate([ids, role_ids])
            for receiver, rec in traffic.views:
                self._keep(int(full[receiver]), Received(
                    rec.phase, rec.round + self._round_index, rec.offline,
                    int(full[rec.sender]), rec.payload))
        self._round_index += traffic.round_index

    def _defer(self, traffic: Traffic, ids: np.ndarray) -> None:
        """Hold a periodic traffic's party ids (:class:`mpc.comm.traffic.Deferred`), counted at the
        next read, or once more than 4 ids per participant (plus a slack) are held."""
        self._periodic.add(traffic, ids)
        if self._periodic.length > 4 * self.size + self._defer_slack:     # bounds what is held
            self._flush()

    def _flush(self) -> None:
        self._periodic.count_into(self._tally, self.size, self.n_parties)

    # -- results -------------------------------------------------------------
    def view(self, party: int) -> list:
        """Everything ``party`` received, in order (needs ``record_views=True``)."""
        if not self.record_views:
            raise ValueError("views are not recorded: create the Network with record_views=True")
        p = int(self._ids(party, "party"))
        return list(self._views.get(p, []))

    def report(self) -> dict:
        """Communication report.

        Returns a dict with ``online`` and ``offline`` totals, ``phases``
        (name -> {"online": ..., "offline": ...}), ``total_bits`` and
        ``n_parties``. Each total holds ``bits``, ``messages``, ``rounds``,
        and per-party (data-holding parties only) ``max_party_bits`` /
        ``mean_party_bits`` (sent + received), ``max_party_sent_bits``,
        ``max_party_received_bits``. Role totals are under ``roles``.
        """
        self._flush()
        out: dict[str, Any] = {"n_parties": self.n_parties, "phases": {}}
        scratch = np.empty(self.n_parties, dtype=np.int64)
        for off, label in ((False, "online"), (True, "offline")):
            agg = Tally(self.size, self.n_parties)
            for (ph, o), t in self._tallies.items():
                if o != off:
                    continue
                agg.bits += t.bits
                agg.messages += t.messages
                agg.rounds += t.rounds
                agg.counter(0)[:] += t.sent
                agg.counter(1)[:] += t.received
                out["phases"].setdefault(ph, {})[label] = t.summary(scratch)
            out[label] = agg.summary(scratch)
            out[label]["roles"] = {
                name: {"sent_bits": int(agg.sent[i]), "received_bits": int(agg.received[i])}
                for name, i in self._role_ids.items()
            }
        out["total_bits"] = out["online"]["bits"] + out["offline"]["bits"]
        return out

    def party_bits(self, offline: bool = False) -> tuple[np.ndarray, np.ndarray]:
        """Per-party (sent, received) bit counts over all phases, roles included."""
        self._flush()
        sent = np.zeros(self.size, np.int64)
        recv = np.zeros(self.size, np.int64)
        for (_, o), t in self._tallies.items():
            if o == offline:
                sent += t.sent
                recv += t.received
        return sent, recv

    def reset(self) -> None:
        """Forget all counts and views (identities and roles stay)."""
        self._tallies.clear()
        self._views.clear()
        self._log.clear()
        self._periodic = Deferred()
        self._round_used = set()
        self._round_index = 0
