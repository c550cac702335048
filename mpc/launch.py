"""Run one program in several processes on this machine, connected by loopback sockets.

:func:`launch` starts P processes, connects them pairwise over TCP on
127.0.0.1 (:class:`mpc.transport.SocketMesh`), agrees a joint key for
public randomness (:meth:`mpc.runtime.Runtime.agree_key`), and calls
``program(runtime, *args, **kwargs_for(rank))`` in each: the same protocol
code every process runs, each holding the participants its group names
(:mod:`mpc.placement`). It returns what every process returned, with what
each wrote to its sockets.

The processes are forked (``spawn`` where fork is missing: then
``program`` must be importable by name and its arguments picklable), so a
child starts with the parent's modules and its arguments as they are.
Results come back over multiprocessing's pipes, the launcher's control
channel. Protocol messages never do: they go over the mesh as typed frames
(:mod:`mpc.frames`).

Faults: if a process raises (a protocol error, or a
:class:`~mpc.transport.TransportError` naming a peer and a step), the
others stop at their next exchange (the mesh is broken) or are terminated
after ``grace`` seconds; :func:`launch` raises :class:`LaunchError` with
every process's message and no result. Every child is joined or killed
before :func:`launch` returns, so nothing is left running.
"""

from __future__ import annotations

import multiprocessing as mp
import os
import time
import traceback
from dataclasses import dataclass

from .placement import layout
from .runtime import Runtime
from .transport import DEFAULT_TIMEOUT, SocketMesh, TransportError, new_session_id

_CTX = None


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
    wire: dict                  # mpc.transport.WireCounts.to_dict()
    seconds: float              # the program's wall time in the process


def context():
    """The multiprocessing context of launched runs: ``fork`` where it exists (children start
    in milliseconds with the parent's modules loaded, and ``program`` may be any callable),
    else ``spawn`` (then ``program`` must be importable by name)."""
    global _CTX
    if _CTX is None:
        _CTX = mp.get_context("fork" if "fork" in mp.get_all_start_methods() else "spawn")
    return _CTX


def groups_for(n_parties: int, roles, processes: int | None = None, groups=None) -> list:
    """``groups`` as given, or the default layout of ``processes`` (:func:`mpc.placement.layout`)."""
    if groups is not None:
        return [list(g) for g in groups]
    if processes is None:
        raise ValueError("give processes= or groups=")
    return layout(n_parties, tuple(roles), processes)


def launch(program, *args, groups, kwargs_for=None, timeout: float = DEFAULT_TIMEOUT,
           delay: float = 0.0, grace: float = 3.0, run_timeout: float | None = None):
    """Run ``program(runtime, *args, **kwargs_for(rank))`` in ``len(groups)`` processes.

    ``groups[r]``: what process r holds (party ids, ranges, role names).
    ``kwargs_for(rank)``: per-process keyword arguments (e.g. only that
    process's records); default none. ``timeout``: seconds an exchange may
    wait for a peer. ``delay``: seconds added to every exchange (a stand-in
    for network latency, see :class:`~mpc.transport.SocketMesh`).
    ``run_timeout``: seconds the whole run may take (default unbounded:
    the per-exchange timeout bounds every wait).
    Returns a list of :class:`ProcessResult`, by rank.
    """
    groups = [list(g) for g in groups]
    P = len(groups)
    if P < 1:
        raise ValueError("groups must name at least one process")
    ctx = context()
    session = new_session_id()
    pipes, procs = [], []
    try:
        for rank in range(P):
            parent, child = ctx.Pipe()
            kw = kwargs_for(rank) if kwargs_for is not None else {}
            p = ctx.Process(target=_child, name=f"mpc-rank-{rank}", daemon=True,
                            args=(child, rank, groups, session, program, args, kw, timeout,
                                  delay))
            p.start()
            child.close()
            pipes.append(parent)
            procs.append(p)
        ports = [_recv(pipes[r], procs[r], 60.0, r, groups) for r in range(P)]
        for r in range(P):
            if ports[r][0] != "port":
                raise LaunchError(f"process {r} failed at start-up: {ports[r][1]}",
                                  {r: ports[r][1]})
        addresses = [("127.0.0.1", port) for _, port in ports]
        for pipe in pipes:
            pipe.send(addresses)
        return _collect(pipes, procs, groups, grace, run_timeout)
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


def _collect(pipes, procs, groups, grace, run_timeout):
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
        ready = mp.connection.wait([pipes[r] for r in pending], timeout=0.2)
        for conn in ready:
            r = pipes.index(conn)
            try:
                msg = conn.recv()
            except EOFError:
                code = procs[r].exitcode
                msg = ("error", f"process exited without a result (exit status {code})")
            pending.discard(r)
            if msg[0] == "ok":
                results[r] = ProcessResult(r, groups[r], msg[1], msg[2], msg[3])
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
        lines = [f"process {r} ({_holds(groups[r])}): {errors[r]}" for r in sorted(errors)]
        raise LaunchError("the run stopped with no result:\n  " + "\n  ".join(lines), errors)
    return [results[r] for r in range(P)]


def _recv(pipe, proc, timeout, rank, groups):
    if pipe.poll(timeout):
        try:
            return pipe.recv()
        except EOFError:
            pass
    return ("error", f"no port from process {rank} ({_holds(groups[rank])}); exit status "
                     f"{proc.exitcode}")


def _holds(group) -> str:
    """``party 3``, ``parties 0-9``, ``dealer``: what a group holds, for messages."""
    out = []
    for g in group:
        if isinstance(g, range):
            out.append(f"parties {g.start}-{g.stop - 1}" if len(g) > 1 else f"party {g.start}")
        elif isinstance(g, str):
            out.append(g)
        else:
            ids = [int(i) for i in (g if hasattr(g, "__len__") else [g])]
            out.append(("party " if len(ids) == 1 else "parties ") + ", ".join(map(str, ids)))
    return ", ".join(out) or "nothing"


def _child(pipe, rank, groups, session, program, args, kw, timeout, delay):
    """A launched process: listen, learn the others' ports, connect, agree a key, run."""
    mesh, status = None, 1
    try:
        mesh = SocketMesh.open(rank, len(groups), session, timeout=timeout, delay=delay,
                               describe=lambda r: f"process {r} ({_holds(groups[r])})")
        pipe.send(("port", mesh.port))
        if not pipe.poll(60.0):
            raise TransportError("the launcher sent no addresses")
        addresses = pipe.recv()
        mesh.connect(addresses)
        rt = Runtime(rank, groups, mesh)
        rt.agree_key()
        mesh.counts.restart()
        t0 = time.perf_counter()
        value = program(rt, *args, **kw)
        seconds = time.perf_counter() - t0
        pipe.send(("ok", value, mesh.counts.to_dict(), seconds))
        status = 0
    except BaseException as e:          # noqa: BLE001 - reported to the launcher, then exit
        detail = f"{type(e).__name__}: {e}"
        if not isinstance(e, (TransportError, ValueError, TypeError)):
            detail += "\n" + traceback.format_exc(limit=8)
        try:
            pipe.send(("error", detail))
        except (BrokenPipeError, OSError):
            pass
    finally:
        if mesh is not None:
            mesh.close()
        pipe.close()
        os._exit(status)
