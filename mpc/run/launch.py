"""Run one program in several processes on this machine, connected by loopback sockets.

:func:`launch` starts P processes, connects them pairwise over TCP on
127.0.0.1 (:class:`mpc.wire.transport.SocketMesh`), agrees a joint key for
public randomness (:meth:`mpc.run.runtime.Runtime.agree_key`), and calls
``program(runtime, *args, **kwargs_for(rank))`` in each: the same protocol
code every process runs, each holding the participants its group names
(:mod:`mpc.comm.placement`). It returns what every process returned, with what
each wrote to its sockets.

The processes are forked (``spawn`` where fork is missing: then
``program`` must be importable by name and its arguments picklable), so a
child starts with the parent's modules and its arguments as they are.
Results come back over multiprocessing's pipes, the launcher's control
channel. Protocol messages never do: they go over the mesh as typed frames
(:mod:`mpc.wire.frames`).

Faults: if a process raises (a protocol error, or a
:class:`~mpc.wire.transport.TransportError` naming a peer and a step), the
others stop at their next exchange (the mesh is broken) or are terminated
after :data:`GRACE` seconds; :func:`launch` raises :class:`LaunchError` with
every process's message and no result. Every child is joined or killed
before :func:`launch` returns, so nothing is left running.
"""

from __future__ import annotations

import contextlib
import multiprocessing as mp
import os
import tempfile
import time
import traceback
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from multiprocessing.context import BaseContext
from typing import TYPE_CHECKING, Any

from mpc.comm.placement import layout
from mpc.run import warmup
from mpc.run.hosts import Plan, join, open_mesh, open_relay, party_hosts, run_relay
from mpc.run.hosts import holds_text as _holds
from mpc.wire.relay import RelayError
from mpc.wire.transport import CONNECT_TIMEOUT, DEFAULT_TIMEOUT, TransportError, new_session_id

if TYPE_CHECKING:
    from mpc.comm.placement import GroupItem
    from mpc.wire.tls import Credentials

_CTX = None
#: seconds the launcher waits for the other processes after one failed, before terminating them
GRACE = 3.0


class LaunchError(RuntimeError):
    """A process of a launched run failed; ``errors`` maps rank -> message."""

    def __init__(self, message, errors):
        super().__init__(message)
        self.errors = errors


@dataclass
class ProcessResult:
    """What one process of a run returned, and what it wrote to its sockets."""

    rank: int
    holds: list                 # its group (party ids / ranges, role names)
    value: object               # the program's return value
    wire: dict                  # mpc.wire.transport.WireCounts.to_dict()
    seconds: float              # the program's wall time in the process
    relay: dict | None = None   # (results[0] of a run with a relay) what the relay forwarded


def context() -> BaseContext:
    """The multiprocessing context of launched runs: ``fork`` where it exists (children start
    in milliseconds with the parent's modules loaded, and ``program`` may be any callable),
    else ``spawn`` (then ``program`` must be importable by name)."""
    global _CTX
    if _CTX is None:
        _CTX = mp.get_context("fork" if "fork" in mp.get_all_start_methods() else "spawn")
    return _CTX


def groups_for(n_parties: int, roles: Iterable[str], processes: int | None = None,
               groups: Iterable[Iterable[GroupItem]] | None = None) -> list[list[GroupItem]]:
    """``groups`` as given, or the default layout of ``processes`` processes.

    The default is :func:`mpc.comm.placement.layout`.
    """
    if groups is not None:
        return [list(g) for g in groups]
    if processes is None:
        raise ValueError("give processes= or groups=")
    return layout(n_parties, tuple(roles), processes)


def launch(program: Callable[..., Any], *args: Any,
           groups: Iterable[Iterable[GroupItem]] | None = None, processes: int | None = None,
           kwargs_for: Callable[[int], dict[str, Any]] | None = None,
           timeout: float = DEFAULT_TIMEOUT, delay: float = 0.0,
           run_timeout: float | None = None, tls: bool = False, relay: bool = False,
           connect_timeout: float | None = None,
           warm_up: Iterable[Callable[[], object]] = ()) -> list[ProcessResult]:
    """Run ``program(runtime, *args, **kwargs_for(rank))`` in several processes.

    Where each participant runs, one of:

    - ``processes=P``: P processes, and every session the program makes
      places its parties and roles by the default layout
      :func:`mpc.comm.placement.layout` ``(n_parties, roles, P)``, decided
      when the session is made (as MPyC's ``-M P``): with at least as many
      processes as parties, every party (a share holder) has a process of
      its own, and the roles go to the processes left, or share the parties'
      from the last when none is left (3 parties and a dealer in 3 processes:
      ``[[0], [1], [2, "dealer"]]``: the dealer then sees party 2's secrets).
      Processes a session's layout leaves empty take part in nothing.
      ``kwargs_for`` may compute the same layout to hand each process only
      its parties' rows.
    - ``groups``: ``groups[r]`` is what process r holds (party ids, ranges,
      role names), for every session of the run. Needed with ``relay``,
      which must know before the start which processes hold only parties.

    ``kwargs_for(rank)``: per-process keyword arguments (e.g. only that
    process's records); default none. ``timeout``: seconds an exchange may
    wait for a peer. ``delay``: seconds added to every exchange (a stand-in
    for network latency, see :class:`~mpc.wire.transport.SocketMesh`).
    ``run_timeout``: seconds the whole run may take (default unbounded:
    the per-exchange timeout bounds every wait).
    ``tls``: every connection TLS 1.3 with certificates of a CA made for
    this run (in a temporary directory, removed afterwards); ``relay``: the
    party-only processes reach each other through a relay process (one
    more process; frames sealed end to end when ``tls``), as a deployment
    does (:mod:`mpc.run.hosts`). ``warm_up``: callables that load the program's compiled
    kernels (e.g. ``fss.warm_up``, :mod:`mpc.run.warmup`): run once here before forking, or
    in each spawned process while it connects.
    Returns a list of :class:`ProcessResult`, by rank (the relay's counts,
    if any, are in ``results[0].relay``).
    """
    if (groups is None) == (processes is None):
        raise ValueError("give one of processes= (the default layout) or groups=")
    if processes is not None:
        if isinstance(processes, bool) or not isinstance(processes, int) or processes < 1:
            raise ValueError(f"processes must be an integer >= 1, got {processes!r}")
        if relay:
            raise ValueError("relay=True needs groups=: which processes hold only parties "
                             "must be known before the start")
        return _launch(program, args, [None] * processes, kwargs_for, timeout, delay,
                       run_timeout, tls, relay, connect_timeout, warm_up)
    assert groups is not None, "checked above"
    return _launch(program, args, [list(g) for g in groups], kwargs_for, timeout, delay,
                   run_timeout, tls, relay, connect_timeout, warm_up)


def _launch(program, args, groups, kwargs_for, timeout, delay, run_timeout, tls, relay,
            connect_timeout, warm_up):
    """:func:`launch` with ``groups`` a list (``None`` entries: decided per session)."""
    P = len(groups)
    if P < 1:
        raise ValueError("groups must name at least one process")
    relayed = party_hosts(groups) if relay else []
    if relay and len(relayed) < 2:
        raise ValueError("relay=True needs two or more processes that hold only parties")
    ctx: Any = context()
    if ctx.get_start_method() == "fork":
        warmup.run(warm_up)     # once here: the forked children inherit the loaded kernels
    plan = Plan(names=[f"process-{r}" for r in range(P)], groups=groups, addresses=[],
                session=new_session_id(), relay=("127.0.0.1", 0) if relay else None,
                relayed=frozenset(relayed), timeout=timeout, delay=delay,
                labels=[f"process {r}" for r in range(P)],
                connect_timeout=CONNECT_TIMEOUT if connect_timeout is None else connect_timeout)
    pipes, procs = [], []
    tmp = tempfile.TemporaryDirectory(prefix="ustat-tls-") if tls else None
    try:
        creds: dict[str, Credentials] = {}
        if tls:
            from mpc.wire.tls import make_deployment
            assert tmp is not None, "made above for tls"
            creds = make_deployment(tmp.name, plan.names + [plan.relay_name], "launch")
        ranks: list[Any] = list(range(P)) + (["relay"] if relay else [])   # ints, "relay"
        for rank in ranks:
            parent, child = ctx.Pipe()
            target: Callable[..., None]
            a: tuple
            if rank == "relay":
                target, a = _relay_child, (child, plan, creds.get(plan.relay_name))
            else:
                kw = kwargs_for(rank) if kwargs_for is not None else {}
                target, a = _child, (child, rank, plan, program, args, kw,
                                     creds.get(plan.names[rank]), tuple(warm_up))
            p = ctx.Process(target=target, name=f"mpc-rank-{rank}", daemon=True, args=a)
            p.start()
            child.close()
            pipes.append(parent)
            procs.append(p)
        labels = ["default layout" if g is None else _holds(g) for g in groups]
        labels += ["relay"] if relay else []
        ports = [_recv(pipes[r], procs[r], 60.0, r, labels) for r in range(len(ranks))]
        for r, got in enumerate(ports):
            if got[0] != "port":
                raise LaunchError(f"process {r} failed at start-up: {got[1]}", {r: got[1]})
        addresses = [("127.0.0.1", port) for _, port in ports]
        for pipe in pipes:
            pipe.send(addresses)
        return _collect(pipes, procs, labels, GRACE, run_timeout, relay)
    finally:
        for p in procs:
            if p.is_alive():
                p.terminate()
        for p in procs:
            p.join(5)
            if p.is_alive():
                p.kill()
                p.join(5)
        for pipe in pipes:
            pipe.close()
        if tmp is not None:
            tmp.cleanup()


def _collect(pipes, procs, labels, grace, run_timeout, relay=False):
    P = len(pipes)
    results, errors = {}, {}
    deadline = None if run_timeout is None else time.monotonic() + run_timeout
    first_error = None
    pending = set(range(P))
    while pending:
        now = time.monotonic()
        if first_error is not None and now > first_error + grace:
            for r in pending:
                errors[r] = "stopped by the launcher after another process failed"
            break
        if deadline is not None and now > deadline:
            for r in pending:
                errors[r] = f"still running after run_timeout={run_timeout:g} s"
            break
        ready: list[Any] = mp.connection.wait([pipes[r] for r in pending], timeout=0.2)
        for conn in ready:
            r = pipes.index(conn)
            try:
                msg = conn.recv()
            except EOFError:
                code = procs[r].exitcode
                msg = ("error", f"process exited without a result (exit status {code})")
            pending.discard(r)
            if msg[0] == "ok":
                results[r] = msg
            else:
                errors[r] = msg[1]
                if first_error is None:
                    first_error = time.monotonic()
        for r in list(pending):             # a child killed before it could write
            if not procs[r].is_alive() and not pipes[r].poll():
                pending.discard(r)
                errors[r] = f"process died (exit status {procs[r].exitcode})"
                if first_error is None:
                    first_error = time.monotonic()
    if errors:
        lines = [(f"process {r}" if r < len(labels) - relay else "the relay") +
                 f" ({labels[r]}): {errors[r]}" for r in sorted(errors)]
        raise LaunchError("the run stopped with no result:\n  " + "\n  ".join(lines), errors)
    n = P - relay
    out = [ProcessResult(r, results[r][4], results[r][1], results[r][2], results[r][3])
           for r in range(n)]
    if relay:
        out[0].relay = results[n][1]
    return out


def _recv(pipe, proc, timeout, rank, labels):
    if pipe.poll(timeout):
        try:
            return pipe.recv()
        except EOFError:
            pass
    return ("error", f"no port from process {rank} ({labels[rank]}); exit status "
                     f"{proc.exitcode}")


def _child(pipe, rank, plan, program, args, kw, creds, warm_up=()):
    """A launched process: listen, learn the others' ports, connect, agree a key, run."""
    mesh, status = None, 1
    try:
        mesh = open_mesh(plan, rank, creds, host="127.0.0.1", port=0)
        pipe.send(("port", mesh.port))
        plan = _with_addresses(pipe, plan)
        rt = join(mesh, plan, creds, warm_up=warm_up)
        t0 = time.perf_counter()
        value = program(rt, *args, **kw)
        seconds = time.perf_counter() - t0
        mesh.sample_tcp()
        pipe.send(("ok", value, mesh.counts.to_dict(), seconds, rt.holds()))
        status = 0
    except BaseException as e:          # reported to the launcher, then exit
        _report(pipe, e)
        if mesh is not None:
            mesh.close(e)               # the peers are told why (naming who caused it)
    finally:
        if mesh is not None:
            mesh.close()
        pipe.close()
        os._exit(status)


def _relay_child(pipe, plan, creds):
    """The relay of a launched run: forward between the party-only processes until done."""
    relay, status = None, 1
    try:
        relay = open_relay(plan, creds, host="127.0.0.1", port=0)
        pipe.send(("port", relay.port))
        _with_addresses(pipe, plan)
        pipe.send(("ok", run_relay(relay), None, 0.0, ["relay"]))
        status = 0
    except BaseException as e:
        _report(pipe, e)
    finally:
        if relay is not None:
            relay.close()
        pipe.close()
        os._exit(status)


def _with_addresses(pipe, plan):
    if not pipe.poll(60.0):
        raise TransportError("the launcher sent no addresses")
    addresses = pipe.recv()
    n = len(plan.groups)
    plan.addresses = addresses[:n]
    if plan.relay is not None:
        plan.relay = addresses[n]
    return plan


def _report(pipe, e) -> None:
    detail = f"{type(e).__name__}: {e}"
    if not isinstance(e, (TransportError, ValueError, TypeError, RelayError)):
        detail += "\n" + traceback.format_exc(limit=8)
    with contextlib.suppress(BrokenPipeError, OSError):
        pipe.send(("error", detail))
