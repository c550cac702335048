"""A :class:`mpc.comm.network.Network` whose participants live in other processes.

:meth:`_Links.attach` gives the network a link (:class:`mpc.run.routing.Link`):
the sends of a round are then kept (:meth:`_Links._queue`) and, when the round
closes, exchanged with the other processes in one exchange
(:meth:`_Links._route`), every row received by a local participant written into
the payload array it was sent in; the local parties' views are recorded. The
participants of a process that vanished (a dropout the transport noted) read as
zeros (:meth:`_Links.vanished`). Without a link (the simulator) every participant
is local and a send only counts.

Cost: one exchange per round (its bits are those the network counted; the
transport counts the bytes). Threat model: the link's (private, authenticated
channels: TLS across hosts, see :mod:`mpc.wire.transport`).
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import ArrayLike

from mpc.comm.views import _Views

if TYPE_CHECKING:
    from mpc.run.routing import Link


class _Links(_Views):
    """Routing a round's sends to and from other processes."""

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
