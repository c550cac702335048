"""Inputs validated inside MPC (issue 39, item 2): a party that skips its local range check
cannot push a kernel beyond its sensitivity, on every comparison backend.

The malicious party is simulated at the sharing step: its encoded record is replaced by an
arbitrary ring element after the local check (``validate_records``) ran, which is what a
party whose host skips the check would share.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

import ustat.umpc.gc_backend as gc_mod
import ustat.umpc.setup as setup_mod
from mpc.arith.rng import CSPRNG
from mpc.session import Session
from ustat import kernels
from ustat.specs import UMPCSpec
from ustat.umpc import run_umpc
from ustat.umpc.input_check import check_inputs, input_domain, neutralized

N = 24
L = 40


def _records(n=N, seed=3):
    return np.random.default_rng(seed).uniform(0, 1, n)


def _inject(monkeypatch, party, value):
    """Party ``party`` shares ``value`` (a ring element) instead of its encoded record."""
    real = setup_mod.encode_records

    def evil(session, X, kern, fp=None):
        enc = real(session, X, kern, fp).copy()
        enc[party, 0] = np.uint64(value) & session.ring.mask
        return enc

    monkeypatch.setattr(setup_mod, "encode_records", evil)
    monkeypatch.setattr(gc_mod, "check_domain", lambda *a, **k: None)   # its own check, skipped


def _run(backend, check, **kw):
    spec = UMPCSpec.of("gini", epsilon=1.0, edges="2n", seed=7, bits=L, backend=backend,
                       check_inputs=check, **kw)
    return run_umpc(_records(), spec)


#: ring elements a party shares: the ends of the signed range, -1, far above 1.0 (dealer); on gc
#: values whose low bits (which the validated-domain circuit reads) are outside [0, 1]
EVIL = {"dealer": [(1 << (L - 1)) - 1, 1 << (L - 1), (1 << L) - 1, 1 << (L - 3)],
        "gc": [(1 << L) - (1 << 15), (1 << 15) - 1]}


@pytest.mark.parametrize("backend", ["dealer", "gc"])
def test_malicious_input_stays_within_sensitivity(monkeypatch, backend):
    honest = _run(backend, True)
    if backend == "dealer":                       # the check is the identity on honest inputs
        assert honest.u_hat == _run(backend, False).u_hat
    bound = honest.max_degree * kernels.get("gini").sensitivity / honest.edges
    for value in EVIL[backend]:
        with monkeypatch.context() as mp:
            _inject(mp, 5, value)
            evil = _run(backend, True)
        assert abs(evil.u_hat - honest.u_hat) <= bound + 1e-9, value


def test_without_the_check_one_party_moves_gini_far(monkeypatch):
    """The defect: unchecked, one ring element moves the release beyond the sensitivity
    (dealer backend: the FSS abs gate reads |x - y| on the bits a [0, 1] input needs)."""
    honest = _run("dealer", False)
    bound = honest.max_degree * kernels.get("gini").sensitivity / honest.edges
    _inject(monkeypatch, 5, 1 << (L - 3))
    evil = _run("dealer", False)
    assert abs(evil.u_hat - honest.u_hat) > 10 * bound


def test_check_leaves_noise_and_value_unchanged_and_costs_are_counted():
    on, off = _run("dealer", True), _run("dealer", False)
    assert on.estimate == off.estimate and on.ci == off.ci
    phases = on.communication["phases"]
    assert "input-check" in phases and "input-check" not in off.communication["phases"]
    assert on.online_bits > off.online_bits


def _session(n, seed=1):
    return Session.derived(n, CSPRNG(seed), bits=L, frac_bits=14)


def _corpus(n, f_in, seed=5):
    """Malformed and honest encodings: random ring elements, the extremes, just outside."""
    rng = np.random.default_rng(seed)
    mask = (1 << L) - 1
    v = rng.integers(0, 1 << 62, size=n, dtype=np.uint64) & np.uint64(mask)
    nan_like = [int(np.array(x).view(np.uint64)) & mask          # float bit patterns
                for x in (np.nan, np.inf, -np.inf, -0.0)]
    edges = [0, 1, (1 << f_in) - 1, 1 << f_in, (1 << f_in) + 1, mask, mask - 1,
             (1 << L) - (1 << f_in), 1 << (L - 1), (1 << (L - 1)) - 1, (1 << (L - 1)) + 1,
             1 << (L - 2), *nan_like]
    v[:len(edges)] = np.array(edges, dtype=np.uint64)
    honest = rng.integers(0, (1 << f_in) + 1, size=n // 4, dtype=np.uint64)
    v[len(edges):len(edges) + honest.size] = honest
    return v


@pytest.mark.parametrize("backend,kernel,n", [("dealer", "gini", 10_000),
                                              ("dealer", "kendall3", 2_000),
                                              ("gc", "gini", 40)])
def test_corpus_of_malformed_inputs_is_neutralized(backend, kernel, n):
    """Every ring element comes out within the bounds; in-range ones unchanged (exact)."""
    kern = kernels.get(kernel) if kernel != "kendall3" else _kendall3()
    f_in = 14
    d = kern.columns
    enc = np.stack([_corpus(n, f_in, seed=5 + c) for c in range(d)], axis=1)
    s = _session(n)
    out = check_inputs(s, enc, kern, f_in, backend, CSPRNG(9))
    dom = input_domain(kern, f_in)
    want = neutralized(enc, dom, L)
    assert np.array_equal(out, want)
    for c, (lo, hi) in enumerate(dom):
        assert np.all((out[:, c] >= lo) & (out[:, c] <= hi))
    inside = (enc <= np.uint64(1 << f_in))
    assert np.array_equal(out[inside], enc[inside])
    assert "input-check" in s.net.report()["phases"]


def _kendall3():
    """A degree-3 kernel: the dealer backend's check then runs on the p-party circuit."""
    base = kernels.get("kendall")
    return kernels.Kernel("k3", 3, 2, base.plain, base.secure, base.output_range)


def test_neutralized_reference_exhaustive_small_ring():
    """The reference on every element of Z_2^8: inside [lo, hi] kept, else lo (= 0)."""
    l = 8
    v = np.arange(1 << l, dtype=np.uint64)[:, None]
    out = neutralized(v, [(0, 16)], l)
    assert np.array_equal(out[:17, 0], v[:17, 0]) and not out[17:].any()


@pytest.mark.parametrize("backend,kernel", [("dealer", "gini"), ("dealer", "kendall3"),
                                            ("gc", "gini")])
def test_check_is_exact_on_every_element_of_a_small_ring(backend, kernel):
    """Exhaustive: every x in Z_2^8 (inputs with 4 fractional bits, domain [0, 16])."""
    kern = kernels.get(kernel) if kernel != "kendall3" else _kendall3()
    l, f_in = 8, 4
    v = np.arange(1 << l, dtype=np.uint64)
    enc = np.stack([v, v[::-1]], axis=1)[:, :kern.columns]
    s = Session.derived(v.size, CSPRNG(3), bits=l, frac_bits=f_in)
    out = check_inputs(s, enc, kern, f_in, backend, CSPRNG(4))
    assert np.array_equal(out, neutralized(enc, input_domain(kern, f_in), l))


@pytest.mark.parametrize("backend", ["dealer", "gc"])
def test_checked_run_across_processes_releases_the_simulators_bits(backend):
    """The check runs where the parties are (a deployment's default): same release, same
    counted traffic as the simulator's, with 2 processes."""
    from ustat.executors import LocalProcesses

    X = np.random.default_rng(11).random((16, 2))
    spec = UMPCSpec.of("kendall", epsilon=1.0, edges="2n", seed=3, backend=backend,
                       check_inputs=True)
    sim = run_umpc(X, spec)
    got = run_umpc(X, spec, LocalProcesses(2))
    assert got.released
    assert (got.estimate, got.u_hat, got.communication) == (sim.estimate, sim.u_hat,
                                                            sim.communication)


def test_deployments_check_inputs_by_default_and_the_flag_turns_it_off():
    from ustat.cli.deploy import job_from_command

    cmd = ["estimate", "kendall", "--columns", "a,b", "--bounds", "0:1,0:1"]
    assert job_from_command(cmd, 100).spec.privacy.check_inputs is True
    off = job_from_command(cmd + ["--no-check-inputs"], 100)
    assert off.spec.privacy.check_inputs is False


def test_cli_flag_checks_inputs_and_refuses_baselines(capsys):
    from ustat.cli import main

    argv = ["estimate", "gini", "--n", "40", "--seed", "1", "--json"]
    assert main(argv + ["--check-inputs"]) == 0
    res = json.loads(capsys.readouterr().out)
    assert res["spec"]["privacy"]["check_inputs"] is True
    assert "input-check" in res["phases"]
    assert main(["estimate", "auc", "--n", "40", "--protocol", "bell-2pc",
                 "--check-inputs"]) == 2
    assert "--check-inputs applies to --protocol umpc only" in capsys.readouterr().err


def test_spec_field_is_a_bool():
    with pytest.raises(TypeError, match="check_inputs must be True or False"):
        UMPCSpec.of("gini", check_inputs="yes")
