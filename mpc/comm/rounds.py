"""Phases and rounds of a :class:`mpc.comm.network.Network`.

A phase names the cell (phase, online/offline) a send is charged to
(:meth:`_Rounds.phase`, nested blocks restore the outer). A round is counted at
an explicit boundary: every send inside one ``with net.round():`` block is one
round, charged to each cell that received traffic in it; a send outside any
round block is a round by itself. Inside :meth:`_Rounds.parallel` the rounds of
its lanes (:meth:`_Rounds.lane`) count once: per cell, the maximum over lanes.
:func:`caller_op` names the protocol function that opened a round (frames carry
its tag).

Cost: O(1) per send and per round. Threat model: none (bookkeeping only).
"""

from __future__ import annotations

import contextlib
import os
import sys
import time
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any, cast

from mpc.comm.links import _Links

if TYPE_CHECKING:
    from mpc.comm.network import Network

#: the network's own modules: their frames are not a protocol's (:func:`caller_op`)
_NETWORK_FILES = frozenset(os.path.join(os.path.dirname(__file__), f"{name}.py") for name in
                           ("net_state", "views", "links", "rounds", "subnets", "network"))


def caller_op() -> str:
    """The name of the protocol function that opened the current round: the first caller
    outside the network's modules and ``contextlib`` (e.g. ``output_values``, ``multiply``).
    The same in every process of an SPMD run; frames carry its tag, so a process whose
    program took another path is named as diverged. A few microseconds, once per round."""
    f: Any = sys._getframe(1)
    while f is not None and (f.f_code.co_filename in _NETWORK_FILES
                             or f.f_code.co_filename.endswith("contextlib.py")):
        f = f.f_back
    return "?" if f is None else getattr(f.f_code, "co_qualname", f.f_code.co_name)


class _Rounds(_Links):
    """The phase and round blocks, and counting a round."""

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
            yield cast("Network", self)   # a mixin of Network, never alone
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
            yield cast("Network", self)   # a mixin of Network, never alone
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
            yield cast("Network", self)   # a mixin of Network, never alone
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
            yield cast("Network", self)   # a mixin of Network, never alone
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
