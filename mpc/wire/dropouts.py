"""Dropout bookkeeping of a mesh: peers that may vanish, and those gone.

A run that tolerates dropouts (:mod:`ustat.umpc.dropouts`) tells the mesh which
peers may vanish (``may_vanish``: party hosts). A peer among them whose
connection ends with no BYE is :attr:`gone`: what it still owed the step reads as
zeros, nothing more is sent to it (:meth:`_Dropouts._vanished`). A peer that this
step neither writes to nor reads from is watched too (:meth:`_Dropouts._idle`):
the end of its connection is a dropout (or, for a peer that may not vanish, a
fault) now, not at the next step that needs it. Peers absent at start-up are
gone before the first step (:mod:`mpc.wire.connecting`). The test hook
``vanish_at`` (a process that kills itself at a given point of an exchange) is
:meth:`mpc.wire.transport.SocketMesh._test_vanish`.

Threat model: a vanished peer is a crash (no more messages), not a lie; zeros
stand for what it owed, and the protocol leaves its parties out.
"""

from __future__ import annotations

import contextlib
import socket

from mpc.wire import frames as fr
from mpc.wire.faults import TransportError
from mpc.wire.mesh_state import _MeshState
from mpc.wire.sockets import (
    WOULD_BLOCK,
    select_socket,
)
from mpc.wire.sockets import pending as _pending
from mpc.wire.sockets import why as _why


class _Dropouts(_MeshState):
    """Noting a peer that vanished, and watching idle peers."""

    def _idle(self, step, peer) -> None:
        """A peer this step neither writes to nor reads from has something to read: if it is
        the end of its connection with nothing before it (no BYE, no ABORT: killed or
        crashed), that is a fault now, not at the next step that needs it; anything else (its
        frames for a later step, a BYE, an ABORT) waits for that step."""
        sock = self._peers[peer]
        select_socket(self._sel, sock, 0, None)
        if _pending(sock):
            return
        try:
            data = socket.socket.recv(sock, 1, socket.MSG_PEEK | socket.MSG_DONTWAIT)
        except WOULD_BLOCK:
            return
        except OSError as e:
            if peer not in self.may_vanish:
                raise TransportError(f"{self.describe(peer)} disconnected at step {step}"
                                     f"{_why(e)}", peer, step) from None
            data = b""
        if not data and peer in self.may_vanish:
            self._vanished(peer)
            return
        if not data:
            raise TransportError(f"{self.describe(peer)} disconnected at step {step}", peer,
                                 step)

    def _vanished(self, peer) -> None:
        """A peer that may vanish has (its connection ended with no BYE): it is :attr:`gone`;
        what it still owed this step reads as zeros, nothing more is sent to it."""
        self.gone.add(peer)
        sock = self._peers.pop(peer)
        select_socket(self._sel, sock, 0, None)
        with contextlib.suppress(OSError):
            sock.close()
        self._unsent.pop(peer, None)
        rd = self._readers.get(peer)
        if rd is not None:
            rd.out = rd.out[:rd.i] + [fr.zeros_of(x) for x in rd.specs[rd.i:]]
            rd.i = len(rd.specs)
