"""Plain progress lines (a log or a pipe): each stage says when it started and how long the
stage before it took, never the time since the start labelled as the stage's own."""

import io
import re

from ustat.umpc.progress import Progress


class _Clock:
    def __init__(self):
        self.t = 100.0

    def __call__(self):
        return self.t


def test_plain_lines_give_the_start_time_and_the_previous_stage_duration(monkeypatch):
    clock = _Clock()
    monkeypatch.setattr("ustat.umpc.progress.time.perf_counter", clock)
    buf = io.StringIO()
    with Progress(90, True, stream=buf) as bar:
        clock.t += 0.5
        bar.stage("sampling")
        clock.t += 2.0
        bar.stage("computing")
        clock.t += 7.0
        bar.stage("noise")
    lines = buf.getvalue().splitlines()
    assert lines == ["ustat: sampling 90 edges (at 0.5 s)",
                     "ustat: computing 90 edges (at 2.5 s; sampling took 2.0 s)",
                     "ustat: noise 90 edges (at 9.5 s; computing took 7.0 s)"]
    assert not any(re.search(r"edges \(\d", ln) for ln in lines)


def test_nothing_is_printed_unless_asked():
    buf = io.StringIO()
    with Progress(10, False, stream=buf) as bar:
        bar.stage("computing")
    assert buf.getvalue() == ""
