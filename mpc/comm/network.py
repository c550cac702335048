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

Where the parts live: :class:`Network` is this module's sending and reports on
top of one chain of parts that share its fields (:mod:`mpc.comm.net_state`):
recorded views (:mod:`mpc.comm.views`), other processes (:mod:`mpc.comm.links`),
phases and rounds (:mod:`mpc.comm.rounds`), sub-networks
(:mod:`mpc.comm.subnets`). One class, cut by seam, rather than objects of
their own: a send touches the counts, the round, the link and the views at once.
"""

from __future__ import annotations

import numbers
from typing import Any, TypeVar

import numpy as np
from numpy.typing import ArrayLike

from mpc.comm.net_state import DEFAULT_ROLES
from mpc.comm.rounds import caller_op
from mpc.comm.subnets import _Subnets
from mpc.comm.traffic import Deferred, Tally, Traffic
from mpc.comm.views import Received

__all__ = ["DEFAULT_ROLES", "Network", "Received", "Traffic", "caller_op"]

_P = TypeVar("_P")


class Network(_Subnets):
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
        self._views = {}
        self._log = []        # (receiver, Received) in send order, with record_views
        self._periodic = Deferred()   # absorbed periodic traffic not yet counted (see _defer)
        self._phase = "default"
        self._phase_offline = False
        self._tallies = {}
        self._round_depth = 0
        self._round_used = set()
        self._round_index = 0
        self._lanes = None  # in parallel(): max over lanes
        self._lane_rounds = None  # in lane(): this lane's
        self._link = None  # when participants live in other processes
        self._pending = []  # this round's sends to route (with a link)
        self._op = ""                   # the current round's operation (runs and recorded views)
        self.seconds = {}     # wall time inside each phase block
        self.wait_seconds = {}  # time spent in exchanges, per phase

    # -- sending -------------------------------------------------------------
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

    # -- results -------------------------------------------------------------
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
