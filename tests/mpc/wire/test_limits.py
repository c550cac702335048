"""Nothing is allocated from an announced length: the relay and a host's relay client under the
issue's W3/W4 inputs and 10^4 fuzzed ones, each in a subprocess whose address space is capped
(:mod:`tests.mpc.wire.adversary`), refuse with one error naming the peer and stay small."""

import json
import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(__file__))))


def _run(*args, limit=60):
    env = dict(os.environ, PYTHONPATH=ROOT, OPENBLAS_NUM_THREADS="1")
    out = subprocess.run([sys.executable, "-m", "tests.mpc.wire.adversary", *args], cwd=ROOT,
                         env=env, capture_output=True, text=True, timeout=limit)
    assert out.returncode == 0, out.stderr[-2000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("scenario, match", [
    ("relay-huge", "host-0 disconnected"),
    ("relay-empty", "host-0 sent an empty data envelope"),
    ("relay-small", None),
])
def test_the_relay_allocates_nothing_on_an_announced_length(scenario, match):
    got = _run(scenario)
    assert got["kind"] != "MemoryError", got
    assert got["grew_mb"] < 48, got
    if match is not None:
        assert match in (got["error"] or ""), got


@pytest.mark.parametrize("scenario, match", [
    ("host-huge", "host-1 for step 2 announces 4294967295 bytes"),
    ("host-empty", "host-1 sent an empty frame for step 2"),
    ("host-steps", "host-1 has 1024 frames waiting for later steps"),
    ("host-segments", "host-1 has 1024 frames waiting for later steps"),
])
def test_a_host_refuses_what_it_would_have_to_hold_and_names_the_peer(scenario, match):
    got = _run(scenario)
    assert got["kind"] == "TransportError", got
    assert match in got["error"], got
    assert got["grew_mb"] < 48, got


def test_fuzzed_headers_and_envelopes_are_refused_or_accepted_never_crash():
    got = _run("fuzz", "--cases", "10000", limit=120)
    o = got["outcomes"]
    assert o["relay"] == o["client"] == o["mesh"] == 10_000
    assert o["refused"] > 20_000
    assert got["grew_mb"] < 64, got
