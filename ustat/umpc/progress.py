"""Progress on stderr for long runs, and the clock behind a run's ``stage_seconds``
(:class:`StageClock`).

Shown only when asked for. On a terminal (``isatty``): one line, shown once
the run has lasted ``delay`` seconds (1 s), then redrawn at most every
``interval`` seconds (0.2 s) by a background thread, so a single long chunk
or a long sampling step still shows its stage and elapsed time; the line is
cleared when the run ends. Elsewhere (a log, a pipe): one plain line per
stage as it starts, ``ustat: computing 9042 edges (at 0.3 s; sampling took 0.2 s)``
(the time since the run started, and how long the stage before it took), so a long
run in a batch job still says where it is.
"""

from __future__ import annotations

import sys
import threading
import time
from typing import Any


class Progress:
    """``with Progress(total, enabled) as bar: bar.stage("computing"); bar.advance(m)``."""

    def __init__(self, total: int, enabled: bool, *, label: str = "edges", stream=None,
                 delay: float = 1.0, interval: float = 0.2):
        self.stream = sys.stderr if stream is None else stream
        isatty = getattr(self.stream, "isatty", None)
        tty = callable(isatty) and isatty()
        self.enabled = bool(enabled) and tty
        self.plain = bool(enabled) and not tty          # one line per stage
        self.total, self.label = int(total), label
        self.delay, self.interval = float(delay), float(interval)
        self.done, self.name = 0, "starting"
        self._t0 = self._stage_t0 = time.perf_counter()
        self._stop = threading.Event()
        self._shown = False
        self._thread: threading.Thread | None = None

    def __enter__(self):
        if self.enabled:
            self._thread = threading.Thread(target=self._run, name="umpc-progress", daemon=True)
            self._thread.start()
        return self

    def __exit__(self, *exc):
        if self._thread is not None:
            self._stop.set()
            self._thread.join()
            if self._shown:
                self.stream.write("\r\033[K")
                self.stream.flush()
        return False

    def stage(self, name: str) -> None:
        now = time.perf_counter()
        previous, took = self.name, now - self._stage_t0
        self.name, self._stage_t0 = name, now
        if self.plain:
            size = f" {self.total} {self.label}" if self.total else ""
            before = "" if previous == "starting" else f"; {previous} took {took:.1f} s"
            self.stream.write(f"ustat: {name}{size} (at {now - self._t0:.1f} s{before})\n")
            self.stream.flush()

    def advance(self, count: int) -> None:
        self.done += int(count)

    def line(self) -> str:
        frac = self.done / self.total if self.total else 0.0
        bar = "#" * int(30 * min(frac, 1.0))
        elapsed = time.perf_counter() - self._t0
        return (f"[{bar:<30}] {self.done}/{self.total} {self.label}  {self.name:<11} "
                f"{elapsed:6.1f}s")

    def _run(self):
        if self._stop.wait(self.delay):
            return
        while True:
            self.stream.write("\r" + self.line())
            self.stream.flush()
            self._shown = True
            if self._stop.wait(self.interval):
                return


class StageClock:
    """Wall-clock seconds per stage of a run: ``lap(name)`` closes the stage that just ended.

    ``laps`` maps stage names to seconds in the order they ran; ``total()``
    is the time from creation to the last lap (the laps add up to it).
    """

    def __init__(self):
        self.start = self.last = time.perf_counter()
        self.laps: dict = {}

    def lap(self, name: str) -> None:
        now = time.perf_counter()
        self.laps[name] = now - self.last
        self.last = now

    def total(self) -> float:
        return self.last - self.start


def at_step(transport: Any, step: str) -> None:
    """Tell ``transport`` (a run's, or None in the simulator) that this process starts the
    protocol step ``step``: its ``on_step`` hook, if it has one (a progress line, or a test
    that makes a participant vanish at a chosen step, :mod:`ustat.deploy.participant`).
    Public names only; nothing is sent."""
    hook = getattr(transport, "on_step", None)
    if hook is not None:
        hook(step)
