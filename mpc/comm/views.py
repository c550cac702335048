"""What each party of a :class:`mpc.comm.network.Network` received: its recorded view.

With ``record_views=True`` (tests, small n) the network keeps, per receiver,
every message it received as a :class:`Received` (phase, round, online/offline,
sender, payload and the operation that sent it), in send order; :meth:`_Views.view`
returns a party's list. In a run across processes only the local parties'
views are recorded (:mod:`mpc.comm.links`).

Cost: one Python object per recorded message (a loop over messages: views are
for small n only, never on by default). Threat model: a view is what the party
may see; tests check it is independent of other parties' inputs.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np

from mpc.comm.net_state import _NetworkState


@dataclass(frozen=True)
class Received:
    """One message in a party's recorded view."""

    phase: str
    round: int
    offline: bool
    sender: int
    payload: object
    op: str = ""        # the operation that sent it (:func:`caller_op` of the round)


class _Views(_NetworkState):
    """Recording and reading the parties' views."""

    def _record_all_to_all(self, P, arr, rnd, off, receivers=None):
        n = P.size
        for i in range(n):
            for j in range(n):
                if i != j and (receivers is None or receivers[j]):
                    self._keep(int(P[j]), Received(self._phase, rnd, off, int(P[i]), arr[i, j]))

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

    # -- results -------------------------------------------------------------
    def view(self, party: int) -> list:
        """Everything ``party`` received, in order (needs ``record_views=True``)."""
        if not self.record_views:
            raise ValueError("views are not recorded: create the Network with record_views=True")
        p = int(self._ids(party, "party"))
        return list(self._views.get(p, []))
