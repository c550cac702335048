"""One cost object for every protocol: what was sent, in how many rounds, and how long it took.

:class:`Costs` is what :meth:`mpc.session.Session.costs` returns, what
:func:`mpc.gc.yao.yao` puts in ``YaoResult.costs`` (the call's share) and
what ``run_umpc`` reports (``UMPCResult.costs``): the same fields
everywhere.

- ``online`` / ``offline``: totals of the network's count (:meth:`mpc.comm.network.Network.report`):
  ``bits``, ``messages``, ``rounds``, per party (data parties) ``max_party_bits`` and
  ``mean_party_bits`` (sent + received), ``max_party_sent_bits``,
  ``max_party_received_bits``, and per role ``roles``;
- ``phases``: the same per named phase, online and offline;
- ``seconds``: wall time inside each phase (a phase's blocks added up;
  nested phases count in both), and ``wait_seconds``: the part of it spent
  waiting in exchanges with other processes (0 in the simulator);
- ``wire``: in a run of several processes, what this process wrote to and
  read from its sockets (:class:`mpc.wire.transport.WireCounts`: frames, header
  bytes apart from payload bytes), else None;
- ``extra``: a protocol's own figures (formulas to compare with, e.g.
  Yao's per-instance sizes).

The network counts every message of the run in every process (routing is
public), so ``online``, ``offline`` and ``phases`` are the same in every
process and in the simulator; ``wire`` is this process's own.
``costs["online"]["bits"]`` works as on the report dict.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from mpc.comm.network import Network
    from mpc.session import Session


@dataclass
class Costs:
    """Bits, messages, rounds (online, offline, per phase, per party) and wall time."""

    n_parties: int
    online: dict
    offline: dict
    phases: dict
    total_bits: int
    seconds: dict = field(default_factory=dict)
    wait_seconds: dict = field(default_factory=dict)
    wire: dict | None = None
    processes: int = 1
    extra: dict = field(default_factory=dict)

    @classmethod
    def of(cls, session: Session) -> Costs:
        """Everything ``session`` sent so far."""
        return cls.of_network(session.net, processes=session.placement.n_procs)

    @classmethod
    def of_network(cls, net: Network, processes: int = 1) -> Costs:
        rep = net.report()
        link = net.link
        wire = link.transport.counts.to_dict() if link is not None else None
        return cls(n_parties=rep["n_parties"], online=rep["online"], offline=rep["offline"],
                   phases=rep["phases"], total_bits=rep["total_bits"],
                   seconds=dict(net.seconds), wait_seconds=dict(net.wait_seconds), wire=wire,
                   processes=processes)

    def since(self, before: Costs) -> dict:
        """Bits and rounds added since ``before`` (online and offline)."""
        return {k: {m: getattr(self, k)[m] - getattr(before, k)[m] for m in ("bits", "rounds")}
                for k in ("online", "offline")}

    def to_dict(self) -> dict:
        return asdict(self)

    # the report's dict interface (costs["online"]["bits"], costs.get("phases"))
    def __getitem__(self, key):
        if key in self.extra:
            return self.extra[key]
        try:
            return getattr(self, key)
        except AttributeError:
            raise KeyError(key) from None

    def get(self, key: str, default: Any = None) -> Any:
        try:
            return self[key]
        except KeyError:
            return default

    def __contains__(self, key) -> bool:
        return key in self.extra or key in self.__dataclass_fields__

    def summary(self) -> str:
        """One line: online and offline bits and rounds, per-party max, wire bytes if any."""
        on, off = self.online, self.offline
        line = (f"online {on['bits'] / 8e6:.3f} MB in {on['rounds']} rounds (max per party "
                f"{on['max_party_bits'] / 8e3:.1f} kB), offline {off['bits'] / 8e6:.3f} MB in "
                f"{off['rounds']} rounds")
        if self.wire:
            w = self.wire
            line += (f"; this process wrote {w['payload_bytes_sent'] / 1e6:.3f} MB of payload "
                     f"and {w['header_bytes_sent'] / 1e3:.1f} kB of frame headers")
        return line


class Meter:
    """The costs of what a block sends: ``with Meter(session.net) as m: ...``, then ``m.costs``.

    A :class:`Costs` of the difference: totals, rounds and messages per cell,
    per-party max and mean of the bits each party sent and received inside
    the block, wall time per phase. Cost: two network reports (O(parties)).
    """

    def __init__(self, net, processes: int = 1):
        self.net = net
        self.processes = processes
        self.costs: Costs | None = None

    def __enter__(self):
        self._before = _state(self.net)
        return self

    def __exit__(self, *exc):
        if exc[0] is None:
            self.costs = _difference(self.net, self._before, _state(self.net), self.processes)
        return False


def _state(net):
    rep = net.report()
    return (rep, net.party_bits(False), net.party_bits(True), dict(net.seconds),
            dict(net.wait_seconds),
            None if net.link is None else net.link.transport.counts.to_dict())


def _cell(after: dict, before: dict | None) -> dict:
    keys = ("bits", "messages", "rounds")
    return {k: after[k] - (before[k] if before else 0) for k in keys}


def _difference(net, b, a, processes) -> Costs:
    n = net.n_parties
    out = {}
    for i, label in ((1, "online"), (2, "offline")):
        cell = _cell(a[0][label], b[0][label])
        sent = a[i][0] - b[i][0]
        recv = a[i][1] - b[i][1]
        both = (sent + recv)[:n]
        cell.update(max_party_bits=int(both.max()) if n else 0,
                    mean_party_bits=float(both.mean()) if n else 0.0,
                    max_party_sent_bits=int(sent[:n].max()) if n else 0,
                    max_party_received_bits=int(recv[:n].max()) if n else 0,
                    roles={name: {"sent_bits": int(sent[net.role(name)]),
                                  "received_bits": int(recv[net.role(name)])}
                           for name in net.roles})
        out[label] = cell
    phases = {}
    for name, cells in a[0]["phases"].items():
        prev = b[0]["phases"].get(name, {})
        d = {lab: _cell(c, prev.get(lab)) for lab, c in cells.items()}
        if any(v["bits"] or v["rounds"] or v["messages"] for v in d.values()):
            phases[name] = d
    secs = {k: v - b[3].get(k, 0.0) for k, v in a[3].items() if v - b[3].get(k, 0.0) > 0}
    waits = {k: v - b[4].get(k, 0.0) for k, v in a[4].items() if v - b[4].get(k, 0.0) > 0}
    wire = None
    if a[5] is not None:
        wire = {k: (v - b[5][k]) if isinstance(v, (int, float)) else v for k, v in a[5].items()}
    return Costs(n_parties=n, online=out["online"], offline=out["offline"], phases=phases,
                 total_bits=out["online"]["bits"] + out["offline"]["bits"], seconds=secs,
                 wait_seconds=waits, wire=wire, processes=processes)
