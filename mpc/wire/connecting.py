"""Setting up a mesh: dialing, accepting, greeting, joining the relay; its TCP bytes.

Every process connects to every lower rank and accepts every higher one
(:func:`mpc.wire.sockets.dial`, :func:`mpc.wire.sockets.accept_peers`), except
the relayed ranks, reached through the relay (:class:`mpc.wire.relay_client.RelayClient`).
A connection is wrapped (TLS 1.3, mutual authentication, ``wrap``) and greeted
(HELLO: session, sender, receiver) before any frame; a peer that never connects
is named, with the connections refused meanwhile, before any step. Peers that
may vanish and do not come within ``connect_timeout`` are gone (a dropout before
the first step); the others then get as long again. The bytes TCP carried on
every connection are read from the kernel (``TCP_INFO``).

Cost: one handshake and one greeting per pair of processes (and per host to the
relay). Threat model: plain TCP only on loopback; across hosts the peer's
certificate must chain to the deployment's CA and name the participant its rank
must be (:mod:`mpc.wire.tls`).
"""

from __future__ import annotations

import socket
import ssl
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING

from mpc.wire import frames as fr
from mpc.wire.faults import TransportError
from mpc.wire.mesh_state import MAX_BUFFERED_BYTES, _MeshState
from mpc.wire.sockets import HELLO as _HELLO
from mpc.wire.sockets import (
    accept_peers,
    dial,
    tcp_info_bytes,
)
from mpc.wire.sockets import reason as _reason
from mpc.wire.sockets import refusals as _refusals

if TYPE_CHECKING:
    from mpc.wire.e2e import Endpoint


class _Connecting(_MeshState):
    """Connecting the mesh and reading what TCP carried."""

    def connect(self, addresses: Sequence[tuple[str, int]], relay: tuple[str, int] | None = None,
                endpoint: Endpoint | None = None) -> None:
        """Connect to every lower rank and accept every higher one (``addresses[r]`` = (host,
        port)), except the ``relayed`` ranks: those are reached through the relay at ``relay``
        (host, port), sealed by ``endpoint`` (:class:`mpc.wire.e2e.Endpoint`). A peer that never
        connects is named (with the connections refused meanwhile) before any step."""
        # a peer that may vanish is absent after connect_timeout; the others then get as long
        # again (they may have waited for it themselves: the relay, a role dialing it)
        vanish_by = time.monotonic() + self.connect_timeout
        deadline = vanish_by + (self.connect_timeout if self.may_vanish else 0.0)
        if self.relayed and self.may_vanish:    # the relay first: it waits for no role
            self._join_relay(relay, endpoint, deadline)
        for r in range(self.rank):
            if r not in self.relayed and r not in self.may_vanish:
                self._peers[r] = self._dial(r, addresses[r], deadline)
        self._dial_vanishable(addresses, vanish_by, deadline)
        waiting = set(range(self.rank + 1, self.n_procs)) - self.relayed
        listener = self._listener
        assert listener is not None, "open() made the listener"
        self._peers.update(accept_peers(listener, deadline, self.session, self.rank,
                                        self._wrap, waiting, self.refused))
        self.gone |= waiting & self.may_vanish
        waiting -= self.may_vanish
        if waiting:
            raise TransportError("never connected: " + ", ".join(
                self.describe(r) for r in sorted(waiting)) + _refusals(self.refused),
                min(waiting), None)
        listener.close()
        self._listener = None
        for sock in self._peers.values():
            sock.setblocking(False)
        if self.relayed and self.relay is None:
            self._join_relay(relay, endpoint, deadline)
        self._tcp_base = self.tcp_bytes()

    def _join_relay(self, relay: tuple[str, int] | None, endpoint: Endpoint | None,
                    deadline: float) -> None:
        if relay is None:
            raise ValueError("relayed peers need the relay's address")
        from mpc.wire.relay_client import RelayClient
        self.relay = RelayClient.join(
            relay, rank=self.rank, session=self.session, wrap=self._wrap,
            endpoint=endpoint, describe=self.describe, hosts=self.relayed | {self.rank},
            error=TransportError, counts=self.counts, deadline=deadline,
            max_buffered=MAX_BUFFERED_BYTES, may_vanish=self.may_vanish)
        self.gone |= self.relay.gone

    def _dial_vanishable(self, addresses, vanish_by: float, deadline: float) -> None:
        """Dial the lower ranks that may vanish, in turn, until each answers or ``vanish_by``
        has passed (those are :attr:`gone`: a dropout before the first step)."""
        pending = [r for r in range(self.rank) if r in self.may_vanish and r not in self.relayed]
        while pending:
            for r in list(pending):
                host, port = addresses[r]
                sock = dial(host, port, min(time.monotonic() + 0.2, vanish_by))
                if sock is not None:
                    self._peers[r] = self._dial(r, addresses[r], deadline, sock)
                    pending.remove(r)
            if time.monotonic() > vanish_by:
                break
        self.gone |= set(pending)

    def _dial(self, r: int, addr: tuple[str, int], deadline: float,
              sock: socket.socket | None = None) -> socket.socket:
        host, port = addr
        sock = dial(host, port, deadline) if sock is None else sock
        if sock is None:
            raise TransportError(f"could not connect to {self.describe(r)} at {host}:{port}",
                                 r, None)
        sock.settimeout(max(0.1, deadline - time.monotonic()))
        try:
            if self._wrap is not None:
                sock = self._wrap(sock, False, r)
            sock.sendall(_HELLO.pack(fr.MAGIC, fr.VERSION, fr.HELLO, self.session, self.rank,
                                     r))
        except (OSError, ssl.SSLError) as e:
            sock.close()
            raise TransportError(f"{self.describe(r)} at {host}:{port} refused the connection "
                                 f"or is not who it should be: {_reason(e)}", r, None) from None
        return sock

    def tcp_bytes(self) -> tuple:
        """(sent, received) bytes TCP carried on every connection of this process (TLS
        records, handshakes and relay envelopes included), from the kernel's ``TCP_INFO``."""
        socks = list(self._peers.values()) + ([self.relay.sock] if self.relay else [])
        sent = received = 0
        for sock in socks:
            a, b = tcp_info_bytes(sock)
            sent, received = sent + a, received + b
        return sent, received

    def restart_counts(self) -> None:
        """Start counting the protocol (what was sent so far is the run's start-up)."""
        now = self.tcp_bytes()
        self.counts.restart(now[0])
        self._tcp_base = now

    def sample_tcp(self) -> None:
        """Update the counters' TCP bytes (since :meth:`restart_counts`) from the kernel."""
        now = self.tcp_bytes()
        self.counts.tcp_bytes_sent = now[0] - self._tcp_base[0]
        self.counts.tcp_bytes_received = now[1] - self._tcp_base[1]
