"""Dropouts in a deployment (issue 36 item 5): the bound deploy.toml states.

``max_dropouts`` is read, defaulted and checked when ``deploy.toml`` is
loaded; a party host that never joins is a dropout within the bound (each
deployed run starts 7 interpreters: a few seconds).
"""

import os
import signal

import pytest

pytest.importorskip("cryptography")

from ustat.cli.deploy import job_from_command
from ustat.deploy import DeployError, init, load, run_local

from .test_deploy import KENDALL, LOCAL, _bank_rows, _ports


def _dep(tmp_path, line=None):
    d = str(tmp_path / "dep")
    init(d, 20, job_from_command(["estimate", *KENDALL], 20), hosts=4, base_port=_ports(),
         insecure=True, keys=LOCAL)
    if line is not None:
        path = tmp_path / "dep" / "deploy.toml"
        path.write_text(path.read_text().replace("[deployment]\n", f"[deployment]\n{line}\n", 1))
    return d


def test_max_dropouts_defaults_to_a_third_of_the_parties(tmp_path):
    cfg = load(_dep(tmp_path))
    assert cfg.max_dropouts is None and cfg.dropout_bound == 6     # floor(19 / 3)


@pytest.mark.parametrize(("line", "bound"), [("max_dropouts = 0", 0), ("max_dropouts = 5", 5),
                                             ("max_dropouts = 13", 13)])
def test_max_dropouts_is_read_from_deploy_toml(tmp_path, line, bound):
    assert load(_dep(tmp_path, line)).dropout_bound == bound


@pytest.mark.parametrize(("line", "why"), [("max_dropouts = -1", "integer >= 0"),
                                           ("max_dropouts = 1.5", "integer >= 0"),
                                           ("max_dropouts = true", "integer >= 0"),
                                           ("max_dropouts = 18", "lets 3 of the 4 party "
                                                                 "hosts vanish"),
                                           ("max_dropouts = 19", "fewer than 2")])
def test_a_bad_max_dropouts_is_one_line_naming_the_file(tmp_path, line, why):
    with pytest.raises(ValueError, match=why) as e:
        load(_dep(tmp_path, line))
    assert "deploy.toml" in str(e.value) and "\n" not in str(e.value)


def _survivors_in_the_simulator(d, csv, lost, step, evaluate=False):
    """What the simulator releases for the deployment ``d`` on ``csv`` losing parties
    ``lost`` (the records read as the party hosts read them)."""
    import numpy as np

    from ustat.data.records import load_records, raw_records
    from ustat.deploy.runner import record_source
    from ustat.umpc.dropouts import Dropouts
    from ustat.umpc.survivors import run_with_dropouts

    cfg = load(d)
    spec = cfg.spec()
    kern, n = spec.kern, cfg.parties
    numeric = [c for c in range(kern.columns) if c not in kern.categorical]
    bounds = spec.precision.bounds
    _, _, _, raw_o = load_records(record_source(cfg, csv, spec), kern, rows=range(n))
    raw = raw_records(np.asarray(raw_o[0]), numeric, [bounds[c] for c in numeric], kern)
    return run_with_dropouts(raw[0], spec, Dropouts(lost, step),
                             evaluate="incomplete" if evaluate else False)


@pytest.mark.slow
@pytest.mark.parametrize("extra", [[], ["--threat-model", "hf", "--backend", "gc"]])
def test_a_host_that_never_joins_is_a_dropout_and_the_survivors_release(tmp_path, extra):
    """One of four party hosts killed before it joins: the others go on without it (after
    connect_timeout), and the release is the simulator's survivors' release, bit for bit
    (dealer and dis; gc and hf)."""
    csv = _bank_rows(tmp_path, 24)
    d = str(tmp_path / "dep")
    init(d, 24, job_from_command(["estimate", *KENDALL, *extra], 24), hosts=4,
         base_port=_ports(), connect_timeout=30.0, insecure=True, keys=LOCAL)  # cold start

    def inject(procs, logs):
        os.kill(procs["host-2"].pid, signal.SIGKILL)

    out = run_local(d, csv, on_start=inject, grace=10.0)
    rel = out["release"]
    want = _survivors_in_the_simulator(d, csv, range(12, 18), "start")
    assert rel["dropouts"] == want.dropouts
    assert rel["dropouts"]["parties_lost"] == 6 and rel["dropouts"]["step"] == "start"
    assert (rel["n"], rel["edges"], rel["max_degree"]) == (18, want.edges, want.max_degree)
    assert (rel["estimate"], rel["u_hat"], rel["ci"]) == (want.estimate, want.u_hat, want.ci)
    dropped = [p for p in out["participants"] if p.get("dropped")]
    assert [p["name"] for p in dropped] == ["host-2"]


@pytest.mark.slow
def test_a_loss_beyond_max_dropouts_ends_the_run_with_no_release(tmp_path):
    csv = _bank_rows(tmp_path, 24)
    d = str(tmp_path / "dep")
    init(d, 24, job_from_command(["estimate", *KENDALL], 24), hosts=4, base_port=_ports(),
         connect_timeout=30.0, insecure=True, keys=LOCAL)     # a cold start is slow

    def inject(procs, logs):
        for name in ("host-1", "host-2"):               # 12 parties > floor(23 / 3) = 7
            os.kill(procs[name].pid, signal.SIGKILL)

    with pytest.raises(DeployError) as e:
        run_local(d, csv, on_start=inject, grace=10.0)
    assert "more than max_dropouts = 7" in str(e.value)            # named, with the bound
    assert e.value.statuses["aggregator"] != 0


@pytest.mark.slow
@pytest.mark.parametrize(("n", "extra"), [(600, []),
                                          (200, ["--backend", "gc", "--threat-model", "hf"])])
def test_a_host_killed_while_computing_is_a_dropout_and_the_survivors_release(tmp_path, n,
                                                                              extra):
    """One of four party hosts killed while it computes: the survivors leave its edges out of
    their sums (nothing opened), draw the noise among themselves at the surviving design's
    sensitivity, and release for the survivors' data. The dealer backend with ``dis``; the
    dealer-free garbled circuits with the committee noise (``hf``): the survivors skip the
    OTs and circuits they shared with it and draw the committee among themselves."""
    from .test_deploy import _wait_for

    csv = _bank_rows(tmp_path, n)           # a run that lasts well beyond the kill
    d = str(tmp_path / "dep")
    # without the input check: with it, the parties whose checking partner host-2 held
    # are left out too (ustat.umpc.dropouts), beyond max_dropouts with one host of four
    init(d, n, job_from_command(["estimate", *KENDALL, "--no-check-inputs", *extra], n),
         hosts=4, base_port=_ports(), timeout=10.0, insecure=True, keys=LOCAL)

    def inject(procs, logs):
        _wait_for(logs, "host-2", "computing")
        os.kill(procs["host-2"].pid, signal.SIGKILL)

    out = run_local(d, csv, on_start=inject, grace=10.0)
    rel = out["release"]
    want = _survivors_in_the_simulator(d, csv, range(n // 2, 3 * n // 4), "computing",
                                       evaluate=True)
    assert rel["dropouts"] == want.dropouts
    assert (rel["n"], rel["edges"], rel["max_degree"]) == (3 * n // 4, want.edges,
                                                           want.max_degree)
    assert (rel["backend"], rel["threat_model"]) == (want.backend, want.threat_model)
    assert rel["noise_scale"] == want.noise_scale           # sized for the surviving design
    u_s = want.evaluation["u_raw_incomplete"]               # the survivors' U on E_S
    assert abs(rel["u_hat"] - u_s) <= 4 * rel["noise_std"]
    assert [p["name"] for p in out["participants"] if p.get("dropped")] == ["host-2"]


@pytest.mark.slow
def test_without_a_dropout_a_run_that_tolerates_them_releases_ustat_estimates_bits(tmp_path,
                                                                                   capsys):
    """Four hosts of 6 (each may vanish: roll calls, noise after the computing step): with
    none lost, the seeded release is still ``ustat estimate``'s, bit for bit."""
    from .test_deploy import _estimate

    csv = _bank_rows(tmp_path, 24)
    d = str(tmp_path / "dep")
    init(d, 24, job_from_command(["estimate", *KENDALL], 24), hosts=4, base_port=_ports(),
         insecure=True, keys=LOCAL)
    assert load(d).plan().may_vanish == {0, 1, 2, 3}
    got = run_local(d, csv)["release"]
    want = _estimate(csv, KENDALL, capsys)
    for key in ("estimate", "estimate_raw", "u_hat", "ci", "noise_std", "edges", "n"):
        assert got[key] == want[key], key
    assert "dropouts" not in got


@pytest.mark.slow
def test_auc_with_a_host_killed_while_computing_leaves_its_class_counts_out(tmp_path):
    """AUC on Bank (score duration, label y), host-2 of four killed when it starts computing
    (``USTAT_TEST_VANISH_AT``): its edges leave the sums and its labels the class count
    (the survivors mask theirs and draw the count's noise after the roll call); the release
    is the simulator's survivors' release: the same design, epsilon split and noise scales,
    the statistic and the count within 4 noise sd of the survivors'."""
    import math

    n = 48
    csv = _bank_rows(tmp_path, n)
    d = str(tmp_path / "dep")
    auc = ["auc", "--columns", "duration,y", "--bounds", "0:5000", "--epsilon", "1",
           "--seed", "5", "--no-check-inputs"]
    init(d, n, job_from_command(["estimate", *auc], n), hosts=4, base_port=_ports(),
         timeout=10.0, connect_timeout=30.0, insecure=True, keys=LOCAL)
    env = dict(os.environ, USTAT_TEST_VANISH_AT="host-2:computing")
    rel = run_local(d, csv, env=env, grace=10.0)["release"]
    want = _survivors_in_the_simulator(d, csv, range(24, 36), "computing", evaluate=True)
    assert rel["dropouts"] == want.dropouts and rel["dropouts"]["parties_lost"] == 12
    assert (rel["n"], rel["edges"], rel["max_degree"]) == (36, want.edges, want.max_degree)
    assert rel["noise_scale"] == want.noise_scale
    assert rel["epsilon_split"] == want.epsilon_split
    assert rel["aux_epsilon"] == want.aux["epsilon"]
    assert abs(rel["u_hat"] - want.evaluation["u_raw_incomplete"]) <= \
        4 * math.sqrt(2) * rel["noise_scale"]
    info = want.aux["noise"]["n_pos"]           # the same epsilon and sensitivity (above)
    assert abs(rel["aux_noisy_sums"]["n_pos"] - want.evaluation["aux_exact"][0]) <= \
        4 * math.sqrt(2) * info["sensitivity"] / info["epsilon"]
