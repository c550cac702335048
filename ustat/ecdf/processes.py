"""The ECDF family with its parties, servers and analyst spread over processes on this machine.

:func:`across` is what ``release``, ``private_quantiles``, ``private_roc``
and ``private_hosmer_lemeshow`` call with ``processes=P``: the n parties,
the servers ``server0..server{m-1}`` and the ``analyst`` are laid out over
P processes (:func:`ustat.processes.spread`: with enough processes every
server and the analyst get one of their own, so that no process holds
both servers; the session's dealer, which the ECDF never uses, shares the
analyst's), each process receives only its own parties' values and labels
(the other rows are a public filler: the lower bound, or 0), and every
process runs the same function with its own runtime. The analyst's process
releases; the result carries every process's wire counts and wall time.

Cost: the protocol's messages (keys as their wire records, queries,
shares, answers), plus ~42 bytes of frame header per (round, pair of
processes) with traffic, and process start-up (~0.3 s per process).
Threat model: the protocol's; the processes trust this machine's kernel
(plain TCP on loopback).
"""

from __future__ import annotations

import numpy as np

from ustat.processes import spread

from .servers import roles_of

__all__ = ["across"]

#: private arrays of 0/1 labels (filler 0; the values' filler is the lower bound, or 0)
_LABELS = ("weights", "labels")


def across(function: str, private: dict, kwargs: dict, *, processes, timeout=None, groups=None):
    """Run ``function(**private, **kwargs, runtime=rt)`` of :mod:`ustat.ecdf` in processes.

    ``private``: name -> array with one entry per party (None: not passed).
    Returns the analyst's result with ``process_costs`` set.
    """
    if kwargs.get("session") is not None:
        raise ValueError("processes= makes its own sessions, one per process: do not pass "
                         "session=")
    if kwargs.get("evaluate"):
        raise ValueError("evaluate reads every value in the clear: not with processes=")
    if kwargs.get("backend", "fss") == "central":
        raise ValueError("backend 'central' is a trusted curator holding every value: it has "
                         "no parties or servers to spread over processes")
    bounds = kwargs.get("bounds")
    low = 0.0 if bounds is None else float(bounds[0])
    rows = {}
    for name, arr in private.items():
        if arr is None:
            continue
        a = np.asarray(arr)
        rows[name] = (a, 0 if name in _LABELS else low)
    n = len(next(iter(rows.values()))[0])
    roles = roles_of(kwargs.get("servers", 2)) + ("dealer",)
    value, costs = spread(_program, function, kwargs, n=n, roles=roles, processes=processes,
                          groups=groups, private=rows, timeout=timeout,
                          idle={"dealer": "analyst"})
    value.process_costs = costs
    return value


def _program(rt, function, kwargs, **rows):
    import importlib
    module = {"release": "release", "private_quantiles": "quantiles", "private_roc": "roc",
              "private_hosmer_lemeshow": "hosmer_lemeshow"}[function]
    fn = getattr(importlib.import_module(f"{__package__}.{module}"), function)
    return fn(**rows, **kwargs, runtime=rt)
