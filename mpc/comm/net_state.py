"""The state a :class:`mpc.comm.network.Network` is made of, and who takes part in it.

:class:`_NetworkState` declares every field the network's parts share (its
identities, the counters' cells, the round and phase bookkeeping, the link and
the recorded views), so that each part (:mod:`mpc.comm.views`,
:mod:`mpc.comm.links`, :mod:`mpc.comm.rounds`, :mod:`mpc.comm.subnets`,
:mod:`mpc.comm.network`) reads one definition; :class:`mpc.comm.network.Network`
sets them in its ``__init__``. Here too: named roles, the parties' ids, the check
of a batch of ids (:meth:`_NetworkState._ids`) and the (phase, online/offline)
cells of counts (:meth:`_NetworkState._tally`, :class:`mpc.comm.traffic.Tally`).

Cost: a role or an id check is O(ids); a cell is allocated on first use (two
int64 counters per participant). Threat model: none here (bookkeeping only).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from mpc.comm.traffic import Deferred, Tally

if TYPE_CHECKING:
    from mpc.run.routing import Link

DEFAULT_ROLES = ("dealer", "aggregator")


class _NetworkState:
    """The fields every part of a network shares (set by ``Network.__init__``), its
    identities and its cells of counts."""

    n_parties: int
    roles: tuple
    _role_ids: dict[str, int]
    size: int
    record_views: bool
    _views: dict[int, list]
    _log: list                  # (receiver, Received) in send order, with record_views
    _periodic: Deferred         # absorbed periodic traffic not yet counted (subnets._defer)
    _phase: str
    _phase_offline: bool
    _tallies: dict[tuple[str, bool], Tally]
    _round_depth: int
    _round_used: set[tuple[str, bool]]
    _round_index: int
    _lanes: dict[tuple[str, bool], int] | None          # in parallel(): max over lanes
    _lane_rounds: dict[tuple[str, bool], int] | None    # in lane(): this lane's
    _link: Link | None          # when participants live in other processes
    _pending: list[tuple]       # this round's sends to route (with a link)
    _op: str                    # the current round's operation (runs and recorded views)
    seconds: dict[str, float]   # wall time inside each phase block
    wait_seconds: dict[str, float]  # time spent in exchanges, per phase

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

    def _tally(self, key) -> Tally:
        t = self._tallies.get(key)
        if t is None:
            t = self._tallies[key] = Tally(self.size, self.n_parties)
        return t
