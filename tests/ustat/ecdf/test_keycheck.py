"""Verifiable DCF keys (issue 39): malformed keys are detected or neutralized, honest keys
always pass, and a release with malicious parties stays within the noise of the honest one."""

from __future__ import annotations

import numpy as np
import pytest

from fss import dcf
from mpc.arith.rng import CSPRNG
from ustat.ecdf import keycheck, release
from ustat.ecdf import servers as servers_module
from ustat.specs import ECDFSpec, QuantileSpec

from . import _keycorpus as kc

N_POINTS, BITS = 100, 32


def test_every_key_of_a_corpus_of_ten_thousand_malformed_keys_is_detected_or_neutralized():
    g = CSPRNG()
    corpus = kc.corpus(1200, N_POINTS, BITS, g)
    total = 0
    for kind, (rows, trip) in corpus.items():
        v = kc.judge(rows, trip, N_POINTS, BITS, g)
        assert not v["missed"].any(), f"{kind}: {int(v['missed'].sum())} bad keys passed"
        assert (v["detected"] | v["neutralized"]).all()
        total += rows.shape[1]
        if kind in ("mismatched", "other_domain", "bad_triple"):
            assert v["detected"].all(), kind      # nothing of these is an honest key
        else:
            assert v["detected"].mean() > 0.5, kind
    assert total >= 10_000 and set(corpus) == set(kc.KINDS)


def test_zero_divisors_of_the_ring_are_caught_by_every_sketch_set():
    """d = 2^(l-1) passes one sketch over Z_2^l half the time; in Z_2^64 with kappa sketches
    every one of 2000 such keys (fresh coins each) fails."""
    g = CSPRNG()
    p = kc.params_for(N_POINTS)
    ranks = g.integers(N_POINTS, (2000,)).astype(np.uint64)
    k = dcf.gen(p, kc._alpha(p, ranks), 1 << (BITS - 1), g)
    trip = keycheck.triples(2000, keycheck.sketches(BITS), g)
    assert not keycheck.check_pairs(p, k, trip, N_POINTS, g.uint64((2, 2))).any()


def test_honest_keys_pass_with_any_rank_label_and_coin():
    g = CSPRNG()
    p = kc.params_for(N_POINTS)
    n = 5000
    ranks = g.integers(N_POINTS + 1, (n,)).astype(np.uint64)
    labels = g.integers(2, (n,)).astype(np.int64)            # a ROC class key: 0/1 label
    for beta in (1, labels):
        k = dcf.gen(p, kc._alpha(p, ranks), beta, g)
        trip = keycheck.triples(n, keycheck.sketches(BITS), g)
        assert keycheck.check_pairs(p, k, trip, N_POINTS, g.uint64((2, 2))).all()


@pytest.mark.slow
def test_no_honest_key_of_a_million_is_rejected():
    g = CSPRNG()
    N = 16
    p = kc.params_for(N)
    kappa = keycheck.sketches(BITS)
    rejected = 0
    for _ in range(4):                           # 4 batches of 250 000 parties
        ranks = g.integers(N + 1, (250_000,)).astype(np.uint64)
        k = dcf.gen(p, kc._alpha(p, ranks), 1, g)
        trip = keycheck.triples(250_000, kappa, g)
        rejected += int((~keycheck.check_pairs(p, k, trip, N, g.uint64((2, 2)))).sum())
    assert rejected == 0


def test_sketch_count_and_the_bits_it_needs():
    assert keycheck.sketches(32) == 3 and keycheck.sketches(48) == 7
    with pytest.raises(ValueError, match="bits <= 48"):
        keycheck.sketches(56)


def _poison(monkeypatch, bad: np.ndarray, weight) -> None:
    """The parties of ``bad`` make their keys with ``weight`` (the servers' dcf.gen)."""
    real = dcf.gen

    def gen(params, alpha, beta, rng, **kw):
        beta = np.broadcast_to(np.asarray(beta, np.int64), np.shape(alpha)).copy()
        beta[bad] = weight
        return real(params, alpha, beta, rng, **kw)

    monkeypatch.setattr(servers_module.dcf, "gen", gen)


def test_a_release_with_one_percent_malicious_parties_is_within_the_noise_of_the_honest(
        monkeypatch):
    g = np.random.default_rng(5)
    n, N = 3000, 64
    x = g.random(n)
    bad = np.arange(0, n, 100)                   # 1 %: each adds weight 1000 at its value
    spec = ECDFSpec.of(thresholds=N, bounds=(0, 1), epsilon=1.0)
    honest = release(np.delete(x, bad), spec.replace(seed=None))
    _poison(monkeypatch, bad, 1000)
    unchecked = release(x, spec)
    checked = release(x, spec.replace(verify_keys=True))
    assert checked.account["keys_verified"] and checked.account["keys_dropped"] == bad.size
    assert "keys_dropped" not in unchecked.account
    sd = np.sqrt(checked.account["mse_counts"])
    assert np.max(np.abs(checked.counts - honest.counts)) < 8 * sd
    assert np.max(np.abs(unchecked.counts - honest.counts)) > 1000     # the attack, unchecked


def test_a_verified_seeded_release_equals_the_unverified_one_and_drops_nothing():
    x = np.random.default_rng(2).random(400)
    spec = QuantileSpec.of((0.5,), thresholds=32, bounds=(0, 1), epsilon=5.0, seed=9)
    from ustat.ecdf.quantiles import private_quantiles
    a, b = private_quantiles(x, spec), private_quantiles(x, spec.replace(verify_keys=True))
    assert np.array_equal(a.ecdf.counts, b.ecdf.counts) and a.quantiles == b.quantiles
    assert b.ecdf.account["keys_dropped"] == 0
    phases = b.ecdf.communication["phases"]
    assert phases["ecdf key check"]["offline"]["rounds"] == 2          # between the servers
    assert phases["ecdf key check report"]["offline"]["rounds"] == 1   # the count, to the analyst


def test_roc_keys_with_a_label_other_than_0_or_1_are_dropped(monkeypatch):
    from ustat.ecdf.roc import private_roc
    from ustat.specs import ROCSpec

    g = np.random.default_rng(3)
    n = 600
    x, y = g.random(n), (g.random(n) < 0.4).astype(np.int64)
    bad = np.arange(0, n, 50)
    _poison(monkeypatch, bad, 2)                   # label 2 (and 2 for 1 - y too)
    spec = ROCSpec.of(thresholds=16, bounds=(0, 1), epsilon=50.0, seed=1, verify_keys=True)
    r = private_roc(x, y, spec)
    assert r.account["keys_dropped_per_class"] == [bad.size, bad.size]


def test_verify_keys_is_refused_off_the_fss_backend():
    with pytest.raises(ValueError, match="verify_keys"):
        ECDFSpec.of(thresholds=8, backend="pointwise", verify_keys=True)
    with pytest.raises(ValueError, match="true or false"):
        ECDFSpec.of(thresholds=8, verify_keys="yes")


def test_the_cli_flag_reports_the_dropped_keys_and_is_refused_off_fss(capsys):
    import json

    from ustat.cli import main

    common = ["ecdf", "--n", "300", "--bounds", "0:1", "--thresholds", "16", "--seed", "2",
              "--json", "--no-progress"]
    assert main([*common, "--verify-keys"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["account"]["keys_dropped"] == 0 and out["spec"]["execution"]["verify_keys"]
    assert main([*common, "--backend", "central", "--verify-keys"]) == 2
    err = capsys.readouterr().err
    assert "ustat: error: --verify-keys" in err and "Traceback" not in err


def test_across_processes_a_non_canonical_record_drops_its_party_not_the_batch(monkeypatch):
    """Parties 0, 7, 14, ... upload records with a control bit set in a seed (which the
    parser refuses): the servers, in their own processes, drop those parties only and the
    release equals the one without them (the launcher forks: the patch reaches the parties)."""
    from ustat.executors import LocalProcesses

    real = dcf.instance_payloads

    def payloads(key):
        rows = real(key).copy()
        rows[::7, 0] |= 1
        return rows

    x = np.random.default_rng(4).random(140)
    spec = ECDFSpec.of(thresholds=16, bounds=(0, 1), epsilon=1.0, seed=5, verify_keys=True)
    monkeypatch.setattr(servers_module.dcf, "instance_payloads", payloads)
    got = release(x, spec, LocalProcesses(2))
    monkeypatch.undo()
    assert got.account["keys_dropped"] == 20 and got.n == 120
    want = release(x, spec.replace(verify_keys=False), LocalProcesses(2))
    bad = np.zeros(140, bool)
    bad[::7] = True
    exact = np.array([np.sum(x[~bad] <= t) for t in got.thresholds])
    full = np.array([np.sum(x <= t) for t in got.thresholds])
    assert np.array_equal(got.counts - exact, want.counts - full)   # same noise, honest counts
