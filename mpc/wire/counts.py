"""What one process wrote to and read from its sockets: :class:`WireCounts`.

Frames, header (framing) bytes and payload bytes written and read, per peer
bytes sent, exchanges and the time spent in them, so that what went over the
sockets can be compared with what the network counted
(:class:`mpc.comm.network.Network`); and the bytes TCP carried (TLS records,
handshakes and relay envelopes included), read from the kernel (``TCP_INFO``)
by :meth:`mpc.wire.transport.SocketMesh.sample_tcp`. The run's start-up (the
joint key, handshakes, greetings) is counted apart (:meth:`WireCounts.restart`).

Cost: O(1) per frame. Threat model: none (counters only).
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class WireCounts:
    """What this process wrote to and read from its sockets."""

    frames_sent: int = 0
    header_bytes_sent: int = 0
    payload_bytes_sent: int = 0
    frames_received: int = 0
    header_bytes_received: int = 0
    payload_bytes_received: int = 0
    exchanges: int = 0
    wait_seconds: float = 0.0
    per_peer_sent: dict = field(default_factory=dict)     # rank -> bytes (headers + payload)
    setup_bytes_sent: int = 0       # the run's start-up (the joint key), not a protocol's
    tcp_bytes_sent: int = 0         # what TCP carried since the restart (TLS records included)
    tcp_bytes_received: int = 0
    tcp_setup_bytes_sent: int = 0   # TCP bytes of the start-up: handshakes, greetings, keys
    tls: bool = False

    def restart(self, tcp_sent: int = 0) -> None:
        """Start counting the protocol: what was sent so far becomes set-up traffic."""
        setup = self.header_bytes_sent + self.payload_bytes_sent + self.setup_bytes_sent
        tls = self.tls
        WireCounts.__init__(self)
        self.setup_bytes_sent = setup
        self.tcp_setup_bytes_sent = tcp_sent
        self.tls = tls

    def to_dict(self) -> dict:
        out = dict(self.__dict__)
        out["per_peer_sent"] = {str(k): v for k, v in self.per_peer_sent.items()}
        return out
