"""Sub-networks: what a piece of a protocol step sent, packed and added to the main network.

A protocol step that runs in pieces (a chunk of edges, possibly in another
thread, process or machine) sends on a small network of its own whose parties
are the piece's local ids; :meth:`_Subnets.traffic` packs what it sent (a
:class:`mpc.comm.traffic.Traffic`, picklable) and :meth:`_Subnets.absorb` adds it
to the main network under a map from local to global ids: bits, messages and
per-party counts add up, rounds count as if sent here (inside a lane they count
once per parallel block), recorded views keep their order. Periodic traffic (a
member class of a chunk) is held and counted at the next read
(:meth:`_Subnets._defer`).

Cost: O(sub-network's parties + roles + recorded messages) per absorb. Threat
model: none (bookkeeping only).
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike

from mpc.comm.rounds import _Rounds
from mpc.comm.traffic import Traffic
from mpc.comm.views import Received


class _Subnets(_Rounds):
    """Packing a network's traffic and absorbing a sub-network's."""

    #: absorbed periodic ids held beyond 4 per party before they are counted
    _defer_slack = 1 << 22

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
