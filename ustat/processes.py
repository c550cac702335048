"""A ustat protocol with its participants spread over processes on this machine (launcher side).

:func:`spread` is what the ``processes=`` argument of the ECDF family
(:mod:`ustat.ecdf`) and of the baseline protocols
(:func:`ustat.baselines.run_protocol`) calls: it lays the n parties and the
protocol's roles out over P processes (:func:`mpc.comm.placement.layout`, or
the groups given), starts them (:func:`mpc.run.launch.launch`, loopback TCP),
hands every process only the rows of its own parties of each private
array (the other rows are a public filler that passes the protocol's
checks), and has every process run the same program with its own
:class:`mpc.run.runtime.Runtime` (SPMD). The one process that releases (the
analyst's, the aggregator's) returns the result; every process's wire
counts and wall time come back with it (``process_costs``).

Roles that take no part in a protocol (the dealer of a session whose
protocol needs none) get no process of their own: they are placed with a
role that does (``idle``).

Threat model: the protocol's; the processes of one machine trust its
kernel (plain TCP on loopback, no TLS).
"""

from __future__ import annotations

import numbers
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import ArrayLike

import fss
from mpc.comm.placement import Placement
from mpc.run.launch import groups_for, launch
from mpc.wire.transport import DEFAULT_TIMEOUT

if TYPE_CHECKING:
    from mpc.comm.placement import GroupItem
    from mpc.run.launch import ProcessResult

__all__ = ["check_processes", "costs_of", "describe_group", "spread"]


def check_processes(processes: Any) -> int:
    """``processes`` as a positive int, else ValueError naming it."""
    if isinstance(processes, bool) or not isinstance(processes, numbers.Integral) \
            or processes < 1:
        raise ValueError(f"processes must be a positive integer, got {processes!r}")
    return int(processes)


def spread(program: Callable[..., Any], *args: Any, n: int, roles: Iterable[str],
           processes: int | None = None,
           groups: Iterable[Iterable[GroupItem]] | None = None,
           private: Mapping[str, tuple[ArrayLike, ArrayLike]] | None = None,
           timeout: float | None = None,
           idle: Mapping[str, str] | None = None) -> tuple[Any, list]:
    """Run ``program(runtime, *args, **rows)`` in several processes; the released value.

    ``roles``: the session's roles in order (those of
    :class:`mpc.session.Session`, the dealer included). ``private``: name ->
    (array with one row per party, filler); process r gets ``rows[name]``
    with the rows of parties it does not hold replaced by the filler.
    ``idle``: role -> role it shares a process with (default layout only).
    ``processes`` or ``groups`` (:meth:`mpc.comm.placement.Placement.from_groups`).
    Returns ``(value, process_costs)``: the value whose ``released`` is
    true (exactly one process releases) and one dict per process (rank,
    holds, wire counts, seconds).
    """
    roles = tuple(roles)
    idle = dict(idle or {})
    if groups is None:
        active = tuple(r for r in roles if r not in idle)
        groups = groups_for(n, active, check_processes(processes))
        for role, host in idle.items():
            next(g for g in groups if host in g).append(role)
    else:
        groups = groups_for(n, roles, None, groups)
    owner = Placement.from_groups(n, roles, groups).owner[:n]
    private = dict(private or {})

    def rows_of(rank):
        mine = owner == rank
        out = {}
        for name, (arr, filler) in private.items():
            a = np.asarray(arr)
            fill = np.asarray(filler, dtype=a.dtype)
            out[name] = np.where(mine.reshape((-1,) + (1,) * (a.ndim - 1)), a, fill)
        return out

    results = launch(program, *args, groups=groups, kwargs_for=rows_of,
                     timeout=DEFAULT_TIMEOUT if timeout is None else timeout,
                     warm_up=(fss.warm_up,))
    released = [r.value for r in results if getattr(r.value, "released", False)]
    if len(released) != 1:
        raise RuntimeError(f"{len(released)} processes released a result (expected one)")
    return released[0], costs_of(results)


def costs_of(results: Sequence[ProcessResult]) -> list:
    """What every process of a launched run wrote to its sockets, and its wall time."""
    return [{"rank": r.rank, "holds": describe_group(r.holds), "wire": r.wire,
             "seconds": r.seconds} for r in results]


def describe_group(group: Iterable[GroupItem]) -> list:
    """A group's items for a report: ``"parties 0-9"`` for a range, the rest as they are."""
    return [f"parties {g.start}-{g.stop - 1}" if isinstance(g, range) else g for g in group]
