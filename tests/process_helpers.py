"""Helpers for tests that run one protocol in the simulator and in several processes.

A test program (a module-level function ``program(rt, ...)`` for
:func:`mpc.run.launch.launch`, called with ``rt=None`` for the simulator)
returns :func:`result`: the outputs of the participants local to its
process, ``net.report()``, the local participants' recorded views, and the
bytes its process wrote to sockets during the protocol. The assertions
compare processes with the simulator the way the porting rules ask: the
same outputs bit for bit, the same report, the same views, and socket
payload bytes equal to the counted bits / 8 up to one byte per frame.
"""

from __future__ import annotations

import numpy as np

WIRE_KEYS = ("payload_bytes_sent", "header_bytes_sent", "frames_sent")


def wire_mark(session):
    """What this process wrote to its sockets so far (None in the simulator)."""
    link = session.net.link
    return None if link is None else dict(link.transport.counts.to_dict())


def local_rows(session, ids, values) -> tuple:
    """``(positions, rows)`` of ``values`` whose participant ``ids[i]`` runs here."""
    ids = np.asarray(ids)
    local = np.broadcast_to(np.asarray(session.net.is_local(ids), dtype=bool), ids.shape)
    idx = np.flatnonzero(local)
    return idx, np.asarray(values)[idx]


def views_of(session) -> dict:
    """Every local participant's view: (phase, round, offline, sender, dtype, shape, bytes)."""
    net = session.net
    out = {}
    for p in range(net.size):
        if net.is_local(p):
            out[p] = [(r.phase, r.round, r.offline, r.sender, str(np.asarray(r.payload).dtype),
                       np.shape(r.payload), np.ascontiguousarray(r.payload).tobytes())
                      for r in net.view(p)]
    return out


def result(session, outputs: dict, mark) -> dict:
    """What a test program returns (see the module docstring)."""
    wire = None
    if mark is not None:
        now = wire_mark(session)
        wire = {k: now[k] - mark[k] for k in WIRE_KEYS}
    return {"outputs": outputs, "report": session.net.report(),
            "views": views_of(session) if session.net.record_views else None, "wire": wire}


def assert_same_as_simulator(sim: dict, runs) -> None:
    """Every process: its local outputs equal the simulator's, the same report and views."""
    covered = {name: set() for name in sim["outputs"]}
    for run in runs:
        got = run.value
        assert got["report"] == sim["report"], f"process {run.rank}: report differs"
        if got["views"] is not None:
            for party, view in got["views"].items():
                assert view == sim["views"][party], f"process {run.rank}: view of {party} differs"
        assert set(got["outputs"]) == set(sim["outputs"])
        for name, (idx, rows) in got["outputs"].items():
            if not len(idx):                # no participant of this output runs here
                continue
            want = sim["outputs"][name][1][idx]
            assert np.array_equal(rows, want), f"process {run.rank}: output {name} differs"
            covered[name].update(np.asarray(idx).tolist())
    for name, (idx, _) in sim["outputs"].items():
        assert covered[name] == set(np.asarray(idx).tolist()), f"output {name}: rows missing"


def assert_socket_bytes(runs, total_bits: int) -> dict:
    """Payload bytes written by all processes = counted bits / 8, up to one byte per frame."""
    payload = sum(r.value["wire"]["payload_bytes_sent"] for r in runs)
    frames = sum(r.value["wire"]["frames_sent"] for r in runs)
    headers = sum(r.value["wire"]["header_bytes_sent"] for r in runs)
    assert frames > 0 and headers > 0
    assert total_bits / 8 <= payload < total_bits / 8 + frames, (payload, total_bits / 8, frames)
    return {"payload": payload, "frames": frames, "headers": headers}
