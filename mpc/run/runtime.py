"""The process side of a run: which participants this process holds and how it reaches the others.

Every protocol is one program that every process of a run executes (SPMD,
as MPyC, CrypTen and MP-SPDZ do). A :class:`Runtime` is what one process
knows about the run:

- ``rank`` and ``groups``: what every process holds (party ids and role
  names, :meth:`mpc.comm.placement.Placement.from_groups`); a session made with
  this runtime builds its :class:`~mpc.comm.placement.Placement` from them;
- ``transport``: the connections to the other processes
  (:class:`mpc.wire.transport.SocketMesh`), and the counter that numbers the
  run's exchanges, shared by every session and sub-session of the run;
- ``joint_key``: 16 bytes every process agreed on at start-up (each
  contributes ``os.urandom(16)``, the key is their XOR, so it is uniform if
  one process is honest), from which public randomness is drawn (the
  hypergraph, a committee): see :meth:`mpc.session.Session.agreed`.

The simulator has no runtime (``runtime=None``): one process holds every
participant and nothing leaves it. :mod:`mpc.run.launch` starts the processes
of a run on this machine and builds one runtime in each.
"""

from __future__ import annotations

import os
from collections.abc import Iterable

import numpy as np

from mpc.comm.placement import Placement
from mpc.run.routing import Link
from mpc.wire import frames as fr
from mpc.wire.transport import Expected, Outgoing


class Runtime:
    """One process's view of a run (see the module docstring)."""

    def __init__(self, rank: int, groups, transport, joint_key: bytes | None = None):
        self.rank = int(rank)
        self.groups = [list(g) for g in groups]
        self.transport = transport
        self.counter = [0]
        self.joint_key = joint_key
        self._sessions = 0
        self._agreed = 0
        #: ranks absent from the run (dropouts at start-up, agreed by :meth:`roll_call`)
        self.gone: frozenset = frozenset()
        #: parties the run may lose (None: no bound here; a deployment sets its max_dropouts)
        self.max_lost: int | None = None

    @property
    def n_procs(self) -> int:
        return len(self.groups)

    def placement(self, n_parties: int, roles: Iterable[str]) -> Placement:
        """The placement of a session of ``n_parties`` parties and ``roles`` in this run."""
        return Placement.from_groups(n_parties, tuple(roles), self.groups, self.rank)

    def link(self, n_parties: int, roles: Iterable[str]) -> Link:
        return Link(self.placement(n_parties, roles), self.transport, self.counter)

    def next_session(self) -> int:
        """A number every process gives to the same session (sessions are made in program order)."""
        self._sessions += 1
        return self._sessions

    def next_agreed(self) -> int:
        """A number every process gives to the same agreed stream (program order)."""
        self._agreed += 1
        return self._agreed

    def agree_key(self) -> bytes:
        """Coin flip: every process sends 16 random bytes to every other; the key is their XOR.

        One exchange (16 bytes to each peer). Uniform if one process is
        honest (semi-honest model: nobody chooses its bytes after seeing the
        others').
        """
        mine = np.frombuffer(os.urandom(16), dtype=np.uint8)
        peers = self.peers()
        out = {r: [Outgoing(0, mine.dtype, 8, mine.shape, fr.pack(mine, 8))] for r in peers}
        expect = {r: [Expected(0, mine.dtype, 8, mine.shape)] for r in peers}
        self.counter[0] += 1
        got = self.transport.exchange(self.counter[0], out, expect)
        key = mine.copy()
        for r in peers:
            key ^= got[r][0]
        self.joint_key = key.tobytes()
        return self.joint_key

    def peers(self) -> list:
        """The other ranks of the run, the absent ones left out."""
        return [r for r in range(self.n_procs) if r != self.rank and r not in self.gone]

    def roll_call(self, absent: Iterable[int]) -> frozenset:
        """Agree which ranks are absent: every present process sends the set it saw (one
        byte per rank) to every other it reached; the union is :attr:`gone`, the same in
        every process. One exchange (n_procs bytes to each peer)."""
        mine = np.zeros(self.n_procs, dtype=np.uint8)
        mine[sorted(int(r) for r in absent)] = 1
        self.gone = frozenset(int(r) for r in np.flatnonzero(mine))
        peers = self.peers()
        out = {r: [Outgoing(0, mine.dtype, 8, mine.shape, fr.pack(mine, 8))] for r in peers}
        expect = {r: [Expected(0, mine.dtype, 8, mine.shape)] for r in peers}
        self.counter[0] += 1
        got = self.transport.exchange(self.counter[0], out, expect)
        for r in peers:
            mine |= got[r][0]
        self.gone = frozenset(int(r) for r in np.flatnonzero(mine))
        return self.gone
