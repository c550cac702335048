"""The fields every part of a :class:`mpc.wire.transport.SocketMesh` shares, and its limits.

:class:`_MeshState` declares what the parts of the mesh read and write
(connections, the relay client, the dropout bookkeeping, the exchange under
way, counters, progress), so that each part (:mod:`mpc.wire.connecting`,
:mod:`mpc.wire.frame_io`, :mod:`mpc.wire.dropouts`, :mod:`mpc.wire.faults`,
:mod:`mpc.wire.transport`) reads one definition; ``SocketMesh.__init__`` sets
them. The constants are the mesh's timeouts and caps.

Threat model: none here (declarations only).
"""

from __future__ import annotations

import selectors
import socket
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from mpc.wire import frames as fr

if TYPE_CHECKING:
    from mpc.wire.counts import WireCounts
    from mpc.wire.faults import TransportError
    from mpc.wire.frame_io import _Reader
    from mpc.wire.relay_client import RelayClient

#: seconds one exchange may wait for a peer (a LAN deployment's order of magnitude)
DEFAULT_TIMEOUT = 60.0
#: seconds to set up the mesh (every peer connected and greeted)
CONNECT_TIMEOUT = 30.0
MAX_FRAME_BYTES = fr.MAX_FRAME_BYTES
_CHUNK = 1 << 22                # bytes per send/recv call

#: bytes of later steps' frames a host may hold from the relay before it refuses more
MAX_BUFFERED_BYTES = 1 << 32


class _MeshState:
    """The fields of a mesh (set by ``SocketMesh.__init__``)."""

    rank: int
    n_procs: int
    session: int
    timeout: float
    delay: float
    describe: Callable[[int], str]
    counts: WireCounts
    _wrap: Any                      # (sock, server_side, peer) -> socket: TLS in mpc.wire.tls
    connect_timeout: float
    relayed: frozenset              # peers reached through the relay
    relay: RelayClient | None       # once connected
    may_vanish: frozenset           # peers whose absence is a dropout, not a fault
    gone: set                       # those absent
    on_step: Callable[[str], None] | None
    refused: list                   # connections refused while waiting for peers (why)
    _tcp_base: tuple
    _peers: dict[int, socket.socket]
    _broken: TransportError | None
    _last_step: int
    _op: int                        # the operation of the current step (frames.op_tag)
    _unsent: dict                   # peer -> what an exchange that failed left unwritten
    _readers: dict[int, _Reader]    # peer -> its reader, in the exchange under way
    _listener: socket.socket | None
    _sel: selectors.BaseSelector
    port: int | None
    progress: Callable[[str], None] | None
    progress_every: float
    vanish_at: tuple | None
    _said: float
