"""The executor of one participant of a deployment: join the run on this host, run its part.

:class:`DeployedParticipant` is an executor (:mod:`ustat.executors`) for one
participant of ``deploy.toml``: it listens on the participant's address,
connects to every peer (TLS 1.3 with the deployment's certificates; party
hosts through the relay, :func:`mpc.run.hosts.join`) while the program's
kernels load, and runs the program with this process's runtime. The rows
the program is given are this participant's own (a party host's records,
with a public filler for every other party's; nothing for a role). The
participant that receives the release returns it; every other returns its
program's result with ``released`` false. :attr:`wire` holds what this
process wrote to its sockets.

Threat model: the program's; the transport adds TLS 1.3 with client
certificates from the deployment's CA, checked against the names, and the
relay's end-to-end encryption between party hosts. With a budget
(``[run.budget]``), nobody computes before the releasing role has charged the
run (:mod:`ustat.deploy.budget`).
"""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Callable
from typing import Any

from mpc.run.hosts import join, open_mesh

from ..executors import Executor, Place, Program
from .budget import Gate
from .config import Config


class DeployedParticipant(Executor):
    """Participant ``name`` of ``cfg`` (``tls`` False: plain TCP, loopback tests only);
    ``log``: a callable taking progress lines."""

    def __init__(self, cfg: Config, name: str, *, tls: bool = True, log=None,
                 progress: bool = False, gate: Gate | None = None) -> None:
        self.cfg, self.name, self.tls, self.log = cfg, name, tls, log
        self.progress = progress
        self.gate = gate
        self.wire: dict = {}

    def run(self, program: Program) -> Any:
        cfg = self.cfg
        me = cfg.get(self.name)
        plan = cfg.plan()
        creds = cfg.credentials(self.name) if self.tls else None
        mesh = open_mesh(plan, cfg.ranked.index(me), creds)
        try:
            log = self.log
            if log:
                log(f"{self.name}: listening on {me.address[0]}:{mesh.port}, connecting")
                if program.warm_up and _cache_cold():
                    log(f"{self.name}: compiling the FSS kernels meanwhile (the first run on "
                        "this machine: about a minute; later runs load them from numba's "
                        "cache)")
            t0 = time.perf_counter()
            mesh.on_step = vanish_hook(self.name)       # tests only: None unless asked
            rt = join(mesh, plan, creds, warm_up=program.warm_up)
            rt.max_lost = cfg.dropout_bound
            _test_vanish(mesh, plan, self.name)
            if rt.gone:
                self._check_dropouts(rt.gone)
            if log:
                log(f"{self.name}: connected to every participant ({time.perf_counter() - t0:.1f}"
                    " s); computing" + ("; progress every 5 s" if self.progress else ""))
                if self.progress:
                    mesh.progress = lambda text: log(f"{self.name}: {text} "
                                                     f"({time.perf_counter() - t0:.0f} s)")
            value = self._main(rt, program)
            mesh.sample_tcp()
            self.wire = mesh.counts.to_dict()
            return value
        except BaseException as exc:        # the peers are told why before the connections close
            mesh.close(exc)
            raise
        finally:
            mesh.close()

    def _main(self, rt: Any, program: Program) -> Any:
        """The program on this process's runtime, after the budget's gate when there is one
        (:class:`ustat.deploy.budget.Gate`: nobody computes before the run is charged)."""
        gate = self.gate
        if gate is not None:
            gate.open(rt)
            if self.log:
                self.log(f"{self.name}: the run is charged to the deployment's budget; "
                         "computing")
        try:
            value = program.main(Place(rt, 1), *program.args,
                                 **{k: a for k, (a, _) in program.rows.items()})
        except BaseException as exc:
            if gate is not None:
                gate.finished(exc=exc)
            raise
        if gate is not None:
            gate.finished(value)
        return value

    def _check_dropouts(self, gone) -> None:
        """The hosts absent at start are dropouts within ``max_dropouts``; else a fault."""
        from mpc.wire.transport import TransportError

        cfg = self.cfg
        lost = sum(len(cfg.ranked[r].parties or ()) for r in gone)
        names = ", ".join(cfg.ranked[r].name for r in sorted(gone))
        if lost > cfg.dropout_bound:
            raise TransportError(f"never connected: {names} ({lost} parties, more than "
                                 f"max_dropouts = {cfg.dropout_bound})", min(gone), None)
        if self.log:
            self.log(f"{self.name}: {names} never joined: a dropout of {lost} parties "
                     f"(max_dropouts = {cfg.dropout_bound}); going on without them")

    def describe(self) -> str:
        return f"deployment {self.cfg.name}, participant {self.name}"


def _test_vanish(mesh: Any, plan: Any, name: str) -> None:
    """Tests only: ``USTAT_TEST_VANISH=NAMES:MODE:PEER`` (e.g. ``host-1:between:server-0``)
    makes each participant of the comma-separated NAMES kill itself at its first exchange
    after joining that sends to PEER (MODE ``before``, ``between`` or ``after``:
    :meth:`mpc.wire.transport.SocketMesh._test_vanish`); a party host of an ECDF run sends
    its keys to the servers there, so the hook loses it before, during or after its upload."""
    hook = os.environ.get("USTAT_TEST_VANISH", "")
    if not hook:
        return
    names, mode, peer = hook.split(":")
    if name in names.split(","):
        mesh.vanish_at = (plan.names.index(peer), mode)


#: tests only: ``<participant>[,<participant>...]:<step>`` makes those participants SIGKILL
#: themselves when their program starts ``step`` (:func:`ustat.umpc.progress.at_step`:
#: ``sharing``, ``computing``, ``noise``, ``reshare``, ``aggregation``, ``released``), a
#: dropout at a step chosen exactly
VANISH_ENV = "USTAT_TEST_VANISH_AT"


def vanish_hook(name: str) -> Callable[[str], None] | None:
    """The ``on_step`` hook of :data:`VANISH_ENV` for participant ``name`` (None when the
    variable is unset or names another participant). The kill is SIGKILL, as a crash:
    nothing is said to the peers."""
    who, _, step = os.environ.get(VANISH_ENV, "").partition(":")
    if name not in who.split(",") or not step:
        return None

    def hook(now: str) -> None:
        if now == step:
            os.kill(os.getpid(), signal.SIGKILL)
    return hook


def _cache_cold() -> bool:
    """The FSS kernels compile at this run's warm-up (no copy in numba's cache yet)."""
    try:
        from fss.kernels import cache_cold
    except ImportError:                     # pragma: no cover - fss always ships with ustat
        return False
    return cache_cold()

