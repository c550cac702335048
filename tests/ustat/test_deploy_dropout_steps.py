"""Dropouts at every step of a deployed U-MPC run (issue 36 item 5): the matrix.

One of four party hosts (12 parties each, n = 48, Kendall on Bank rows,
``--no-check-inputs``, a budget file) vanishes at a chosen step, for the dealer
backend with ``dis`` and for garbled circuits with ``hf``:

- ``sharing`` and ``computing`` (steps 1-2): the survivors leave its edges out
  and release for their data. Both report step ``computing``: the survivors act
  on a loss in either at one roll call after the chunks (the step in the
  release is where the survivors saw and handled it, not where the host died);
- ``noise`` (step 3): the noise drawn then is discarded unopened and drawn again
  among the new survivors (the committee drawn again under ``hf``); step ``noise``;
- ``reshare`` (the hosts' Shamir reshare of their sums, closed by the noise's roll
  call): as a loss during the noise; step ``noise``;
- ``aggregation`` (the last round's final send, after the roll call): the aggregator
  interpolates from the evaluations that arrived; the release is the full design's
  (its edges were summed before), step ``aggregation``;
- ``released`` (after its aggregation message is sent): the release completes
  with every party.

Before the run (a host that never joins) is
``test_deploy_dropouts.py::test_a_host_that_never_joins_is_a_dropout_and_the_survivors_release``,
for the same two configurations.

Each cell is deterministic: the host kills itself (SIGKILL, as a crash: nothing said to
its peers) when its program starts the step (``USTAT_TEST_VANISH_AT``,
:func:`ustat.deploy.participant.vanish_hook`), so the step is exact rather than chosen
by a log line and a race. Each cell starts 7 interpreters (about 7-9 s of CPU, most of it
imports): slow.
"""

import os

import pytest

pytest.importorskip("cryptography")

from ustat.cli.deploy import job_from_command
from ustat.deploy import DeployError, init, run_local

from .test_deploy import KENDALL, LOCAL, _bank_rows, _ports
from .test_deploy_budget import _spends
from .test_deploy_dropouts import _survivors_in_the_simulator

N = 48
HOST2 = range(24, 36)
CONFIGS = {"dealer-dis": [], "gc-hf": ["--backend", "gc", "--threat-model", "hf"]}


def _run(tmp_path, config, step, who="host-2"):
    csv = _bank_rows(tmp_path, N)
    d = str(tmp_path / "dep")
    job = job_from_command(["estimate", *KENDALL, "--no-check-inputs", *CONFIGS[config],
                            "--budget-file", "ledger.json", "--budget-total", "10"], N)
    init(d, N, job, hosts=4, base_port=_ports(), timeout=10.0, connect_timeout=30.0,
         insecure=True, keys=LOCAL)
    env = dict(os.environ, USTAT_TEST_VANISH_AT=f"{who}:{step}")
    return d, csv, lambda: run_local(d, csv, env=env, grace=10.0)


@pytest.mark.slow
@pytest.mark.parametrize(("config", "step", "reported"),
                         [(c, s, r) for s, r in [("sharing", "computing"),
                                                 ("computing", "computing"),
                                                 ("noise", "noise"), ("reshare", "noise")]
                          for c in CONFIGS if (s, c) != ("reshare", "gc-hf")])
def test_a_host_lost_within_the_bound_before_the_last_round_the_survivors_release(
        tmp_path, config, step, reported):
    d, csv, run = _run(tmp_path, config, step)
    out = run()
    rel = out["release"]
    want = _survivors_in_the_simulator(d, csv, HOST2, reported, evaluate=True)
    assert rel["dropouts"] == want.dropouts
    assert rel["dropouts"]["step"] == reported and rel["dropouts"]["parties_lost"] == 12
    assert (rel["n"], rel["edges"], rel["max_degree"]) == (36, want.edges, want.max_degree)
    assert rel["noise_scale"] == want.noise_scale           # the surviving design's
    assert abs(rel["u_hat"] - want.evaluation["u_raw_incomplete"]) <= 4 * rel["noise_std"]
    redrawn = [t for t in rel["notes"] if "drawn again among the survivors" in t]
    assert len(redrawn) == (step in ("noise", "reshare"))   # the discarded draw is said
    assert [p["name"] for p in out["participants"] if p.get("dropped")] == ["host-2"]
    assert _spends(d) == [["spent"]]


@pytest.mark.slow
@pytest.mark.parametrize("config", list(CONFIGS))
def test_a_host_lost_in_the_last_round_the_release_completes_with_the_full_design(
        tmp_path, config):
    """The hosts' sums were Shamir-shared before the last round (degree t = 2: 4 hosts, the
    bound of 15 parties lets one vanish): the aggregator interpolates from the 3 evaluations
    that arrived. The edges were summed before the loss, so the release is the full
    design's, the lost host's parties' edges included; ``dropouts`` says so."""
    d, csv, run = _run(tmp_path, config, "aggregation")
    out = run()
    rel = out["release"]
    want = _survivors_in_the_simulator(d, csv, (), "computing", evaluate=True)
    assert rel["dropouts"] == {"parties_lost": 12, "edges_lost": 0, "step": "aggregation"}
    assert (rel["n"], rel["edges"], rel["max_degree"]) == (N, want.edges, want.max_degree)
    assert rel["noise_scale"] == want.noise_scale           # the full design's
    assert abs(rel["u_hat"] - want.evaluation["u_raw_incomplete"]) <= 4 * rel["noise_std"]
    assert not [t for t in rel["notes"] if "drawn again" in t]  # one noise draw
    # one more round; 4 x 3 reshare and 4 final field elements (128 bits) per column
    # instead of one ring element per party
    c = 1 + len(want.aux["names"]) + len((want.edge_aux or {}).get("names", []))
    assert rel["rounds"] == want.rounds + 1
    assert rel["online_bits"] - want.online_bits == \
        (4 * 3 + 4) * c * 128 - N * c * want.precision["bits"]
    assert [p["name"] for p in out["participants"] if p.get("dropped")] == ["host-2"]
    assert _spends(d) == [["spent"]]


@pytest.mark.slow
def test_two_hosts_lost_in_the_last_round_is_beyond_the_bound_and_ends_the_run_naming_it(
        tmp_path):
    """24 parties (two hosts) lost at the final send: more than max_dropouts = 15 and one
    evaluation short of t + 1 = 3: no release, one line naming the bound, still charged."""
    d, _, run = _run(tmp_path, "dealer-dis", "aggregation", who="host-1,host-2")
    with pytest.raises(DeployError) as e:
        run()
    said = e.value.errors["aggregator"]
    assert "24 parties vanished, more than max_dropouts = 15" in said
    assert "needs 3 of the party hosts' evaluations, 2 arrived: no release" in said
    assert "\n" not in said
    assert set(e.value.errors) == {"aggregator", "host-1", "host-2"}
    assert _spends(d) == [["spent"]]


@pytest.mark.slow
@pytest.mark.parametrize("config", list(CONFIGS))
def test_a_host_lost_after_sending_its_last_message_the_release_has_every_party(
        tmp_path, config):
    d, _, run = _run(tmp_path, config, "released")
    out = run()
    rel = out["release"]
    assert (rel["n"], rel.get("dropouts")) == (N, None)
    assert rel["edges"] == 2 * N                            # Kendall's default design
    assert [p["name"] for p in out["participants"] if p.get("dropped")] == ["host-2"]
    assert _spends(d) == [["spent"]]
