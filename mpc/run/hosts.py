"""A run whose processes may be on different hosts: who is where, and how each process joins.

A :class:`Plan` is what every process of a run knows (all of it public):
the participant name of every rank (``host-0``, ``dealer``, ...), what each
rank holds (party ranges, roles: :mod:`mpc.comm.placement`), the address each
listens on, the relay's address and which ranks reach each other through
it (party hosts), the run's session tag and its timeouts.

:func:`open_mesh` and :func:`join` turn a plan into the process's
:class:`mpc.run.runtime.Runtime`: listen, connect to every peer (TLS 1.3 with
the process's :class:`mpc.wire.tls.Credentials`, the peers' certificates
checked against the names and pins), join the relay (fresh X25519 keys and
nonces, confirmed by signatures of the run's transcript with the
certificate keys, :mod:`mpc.wire.e2e`), agree the joint key, and start counting.
:func:`run_relay` is the relay's process. :mod:`mpc.run.launch` uses the same
functions for runs on this machine, and ``ustat serve`` / ``ustat party``
for deployments (:mod:`ustat.deploy`).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from mpc.machine import memory
from mpc.run import warmup
from mpc.run.runtime import Runtime
from mpc.wire.transport import CONNECT_TIMEOUT, DEFAULT_TIMEOUT, SocketMesh

if TYPE_CHECKING:
    from mpc.comm.placement import GroupItem
    from mpc.wire.relay import Relay
    from mpc.wire.tls import Credentials, Wrapper


@dataclass
class Plan:
    """The public layout of a run across processes (see the module docstring)."""

    names: list                         # participant name of each rank
    groups: list                        # what each rank holds (None: decided per session)
    addresses: list                     # (host, port) each rank listens on
    session: int
    relay: tuple | None = None          # (host, port) of the relay, or None
    relayed: frozenset = field(default_factory=frozenset)   # ranks that meet through it
    relay_name: str = "relay"
    timeout: float = DEFAULT_TIMEOUT
    connect_timeout: float = CONNECT_TIMEOUT
    delay: float = 0.0
    labels: list | None = None          # how messages name each rank (default: its name)
    may_vanish: frozenset = field(default_factory=frozenset)   # absent at start: a dropout

    def __post_init__(self):
        self.relayed = frozenset(int(r) for r in self.relayed)
        if len(self.relayed) == 1:
            raise ValueError("a relay serves two or more party hosts")
        if self.relayed and self.relay is None:
            raise ValueError("relayed ranks need the relay's address")

    def describe(self, rank: int) -> str:
        label = self.labels[rank] if self.labels else self.names[rank]
        if self.groups[rank] is None:
            return label
        return f"{label} ({holds_text(self.groups[rank])})"


def party_hosts(groups: Sequence[Iterable[GroupItem]]) -> list[int]:
    """Ranks whose group holds parties and no role: those that meet through a relay."""
    return [r for r, g in enumerate(groups)
            if g is not None and g and not any(isinstance(x, str) for x in g)]


def wrapper(plan: Plan, creds: Credentials | None) -> Wrapper | None:
    """The TLS wrap hook for ``creds`` (None: plain TCP, for runs on this machine only)."""
    if creds is None:
        return None
    from mpc.wire.tls import Wrapper
    return Wrapper(creds, plan.names, plan.relay_name if plan.relay is not None else None)


def open_mesh(plan: Plan, rank: int, creds: Credentials | None = None, *, host: str | None = None,
              port: int | None = None) -> SocketMesh:
    """This rank's listening end (``port`` 0: any; default: the plan's address)."""
    h, p = plan.addresses[rank] if plan.addresses and plan.addresses[rank] else ("127.0.0.1", 0)
    return SocketMesh.open(rank, len(plan.groups), plan.session, host=host or h,
                           port=p if port is None else port, timeout=plan.timeout,
                           delay=plan.delay, describe=plan.describe,
                           wrap=wrapper(plan, creds), connect_timeout=plan.connect_timeout,
                           relayed=plan.relayed - {rank} if rank in plan.relayed else (),
                           may_vanish=plan.may_vanish)


def join(mesh: SocketMesh, plan: Plan, creds: Credentials | None = None, *,
         warm_up: Iterable[Callable[[], object]] = ()) -> Runtime:
    """Connect ``mesh`` to its peers (and the relay), agree the joint key, start counting.

    Meanwhile a thread runs the warm-ups ``warm_up`` (callables that load the program's
    compiled kernels, :mod:`mpc.run.warmup`); it is waited for before returning, so the
    program starts with them loaded. The process keeps
    up to :data:`mpc.machine.memory.RUN_LIMIT` of freed memory for reuse
    (:func:`mpc.machine.memory.retain_for_run`; ``USTAT_RETAIN_MEMORY=0``: not)."""
    memory.retain_for_run()
    warming = warmup.start(warm_up)
    endpoint = None
    if mesh.relayed and creds is not None:
        from mpc.wire.e2e import Endpoint
        endpoint = Endpoint(creds, plan.names, mesh.rank, plan.session)
    mesh.connect(plan.addresses, relay=plan.relay if mesh.relayed else None,
                 endpoint=endpoint)
    rt = Runtime(mesh.rank, plan.groups, mesh)
    if plan.may_vanish:         # every process leaves out the same absent hosts
        rt.roll_call(mesh.gone)
    rt.agree_key()
    warming.join()
    mesh.restart_counts()
    return rt


def open_relay(plan: Plan, creds: Credentials | None = None, *, host: str | None = None,
               port: int | None = None) -> Relay:
    """The relay's listening end (:class:`mpc.wire.relay.Relay`)."""
    from mpc.wire.relay import Relay
    h, p = plan.relay if plan.relay is not None else ("127.0.0.1", 0)
    return Relay(sorted(plan.relayed), plan.names, plan.session, wrap=wrapper(plan, creds),
                 connect_timeout=plan.connect_timeout,
                 may_vanish=plan.may_vanish & plan.relayed).open(host or h,
                                                            p if port is None else port)


def run_relay(relay: Relay) -> dict:
    """Accept every host, forward until all are done; returns bytes forwarded per host and the
    wall time. RelayError (every host told) on a fault."""
    t0 = time.perf_counter()
    relay.accept_all()
    out = relay.serve()
    out["seconds"] = time.perf_counter() - t0
    return out


def holds_text(group: Iterable[GroupItem]) -> str:
    """``party 3``, ``parties 0-9``, ``dealer``: what a group holds, for messages."""
    out = []
    for g in group:
        if isinstance(g, range):
            out.append(f"parties {g.start}-{g.stop - 1}" if len(g) > 1 else f"party {g.start}")
        elif isinstance(g, str):
            out.append(g)
        else:
            items: Any = g if hasattr(g, "__len__") else [g]      # ids, or one id
            ids = [int(i) for i in items]
            out.append(("party " if len(ids) == 1 else "parties ") + ", ".join(map(str, ids)))
    return ", ".join(out) or "nothing"
