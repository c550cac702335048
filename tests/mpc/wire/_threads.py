"""Run one call per participant in threads (the wire tests' participants share a process)."""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import Any


def run_all(calls: Sequence[Callable[[], Any]], timeout: float = 30.0) -> tuple[list, list]:
    """``(results, errors)``: ``calls[i]()`` run in thread i, each joined within ``timeout``
    seconds; an exception is caught into ``errors[i]`` (None where the call returned)."""
    res: list = [None] * len(calls)
    errs: list = [None] * len(calls)

    def run(i: int) -> None:
        try:
            res[i] = calls[i]()
        except Exception as e:
            errs[i] = e

    ts = [threading.Thread(target=run, args=(i,)) for i in range(len(calls))]
    for t in ts:
        t.start()
    for t in ts:
        t.join(timeout)
    return res, errs
