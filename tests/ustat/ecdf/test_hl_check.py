"""Verified Hosmer-Lemeshow contributions (issue 39, build item 2, HL): malformed (4, Q)
vectors are dropped or neutralized, honest ones always pass, and a release with 1 %
malicious parties stays within the noise of the honest-only one."""

from __future__ import annotations

import numpy as np
import pytest

from mpc.arith.ring import ring
from mpc.arith.rng import CSPRNG
from mpc.arith.sharing import additive_share
from ustat.ecdf import hl_check, keycheck
from ustat.ecdf import hosmer_lemeshow as hl_module
from ustat.specs import HLSpec

Q, C, BITS = 5, 16, 48
ONE = 1 << C
KINDS = ("label2", "label_neg", "p_above", "p_off_grid", "two_groups", "zero_groups",
         "pair_sum", "label_pair", "split_e", "random", "zero_divisor", "bad_triple",
         "witness_not_onehot", "forged_p_above", "above_l")


def _honest(n, rng, Qn=Q):
    P = rng.integers(ONE + 1, (n,)).astype(np.int64)
    P[:2] = 0, ONE                                  # the grid's ends
    g = rng.integers(Qn, (n,)).astype(np.int64)
    y = rng.integers(2, (n,)).astype(np.int64)
    v = np.zeros((n, 4, Qn), np.int64)
    r = np.arange(n)
    v[r, 0, g], v[r, 1, g], v[r, 2, g], v[r, 3, g] = P, ONE - P, y, 1 - y
    return v, P, g, y


def _forge_digits(up, P, Pc):
    """Replace the witness with the digits of P and Pc mod 16^D (the best a party can do for
    a value without D hexadecimal digits)."""
    J = hl_check.blocks(C)
    shifts = 4 * np.arange(J // 2)
    d = np.concatenate([(P[:, None] >> shifts) & 15, (Pc[:, None] >> shifts) & 15], axis=1)
    up[:, 4 * Q:hl_check.layout(Q, C)] = (d[:, :, None] == np.arange(hl_check.BASE)) \
        .reshape(len(P), -1)


def _corpus(kind, n, rng, kappa):
    """n uploads of one kind (uint64 (n, W + T kappa), before sharing)."""
    v, P, g, y = _honest(n, rng)
    r, g2 = np.arange(n), (g + 1) % Q
    big = rng.integers(1 << 40, (n,)).astype(np.int64) + 2
    if kind == "label2":
        v[r, 2, g], v[r, 3, g] = 2, -1
    elif kind == "label_neg":
        v[r, 2, g], v[r, 3, g] = -1, 2
    elif kind in ("p_above", "forged_p_above"):
        v[r, 0, g], v[r, 1, g] = ONE + big, -big
    elif kind == "p_off_grid":                      # E1 not P (the witness): off by a unit
        v[r, 0, g] += 1
        v[r, 1, g] -= 1
    elif kind == "two_groups":
        v[r, 0, g2], v[r, 1, g2], v[r, 2, g2], v[r, 3, g2] = P, ONE - P, y, 1 - y
    elif kind == "zero_groups":
        v[:] = 0
    elif kind == "pair_sum":                        # E1 + E0 != 2^c
        v[r, 1, g] += big
    elif kind == "label_pair":                      # O1 + O0 = 1 over two groups
        v[r, 2, g], v[r, 3, g], v[r, 2, g2] = 1, -1, 1
    elif kind == "split_e":                         # weight of E1 spread to another group
        v[r, 0, g] -= big % ONE
        v[r, 0, g2], v[r, 1, g2] = big % ONE, -(big % ONE)
    elif kind in ("zero_divisor", "above_l"):       # 2^47: a zero divisor; 2^48: 0 mod 2^l
        v[r, 2, g] += 1 << (47 if kind == "zero_divisor" else BITS)
        v[r, 3, g] -= 1 << (47 if kind == "zero_divisor" else BITS)
    up = hl_check.party_upload(v, P, C, kappa, rng)
    if kind == "random":
        up = rng.uint64(up.shape)
    elif kind == "bad_triple":                      # an honest vector, a wrong a^2
        W = hl_check.layout(Q, C)
        up[:, W] += np.uint64(1)
    elif kind == "witness_not_onehot":              # digit 1 of P +1, of 2^c - P -1: +-1 entries
        v[r, 0, g], v[r, 1, g] = P + 16, ONE - P - 16
        up = hl_check.party_upload(v, P, C, kappa, rng)
        lo, hi = 4 * Q + hl_check.BASE, 4 * Q + hl_check.BASE * (hl_check.blocks(C) // 2 + 1)
        up[:, [lo + 1, hi]] += np.uint64(1)
        up[:, [lo, hi + 1]] -= np.uint64(1)
    elif kind == "forged_p_above":
        _forge_digits(up, ONE + big, -big)
    return up


def _valid_mod_l(v):
    """bool (n,): is v mod 2^l an honest contribution (one group, label 0/1, P in 0..2^c)?"""
    mask = np.uint64((1 << BITS) - 1)
    x = v.view(np.uint64) & mask
    e1, e0, o1, o0 = x[:, 0], x[:, 1], x[:, 2], x[:, 3]
    o = np.concatenate([o1, o0], axis=1)
    onehot = np.all(o <= 1, axis=1) & (o.sum(axis=1) == 1)
    gmask = (o1 + o0) == 1
    p = np.where(gmask, e1, 0).sum(axis=1)
    ok = onehot & (p <= ONE)
    ok &= np.all(np.where(gmask, e0 == np.uint64(ONE) - p[:, None], (e1 == 0) & (e0 == 0)), axis=1)
    return ok


def _check(up, rng, kappa, m=2):
    sh = additive_share(ring(64), up, m, rng)
    return hl_check.check_vectors(sh, rng.uint64((m, 2)), Q, C, kappa)


def test_every_vector_of_a_corpus_of_malformed_contributions_is_dropped_or_neutralized():
    rng = CSPRNG(b"hl corpus seed!!")
    kappa = keycheck.sketches(BITS)
    W = hl_check.layout(Q, C)
    total = 0
    for kind in KINDS:
        up = _corpus(kind, 100, rng, kappa)
        passed = _check(up, rng, kappa)
        v = up[:, :4 * Q].reshape(-1, 4, Q)
        missed = passed & ~_valid_mod_l(v.view(np.int64))
        assert not missed.any(), (kind, int(missed.sum()))
        if kind != "above_l":                       # all the others are invalid mod 2^l
            assert not passed.any(), kind
        total += up.shape[0]
    assert total >= 1000 and W == 4 * Q + 16 * 10


@pytest.mark.parametrize("m, n", [pytest.param(2, 100_000, marks=pytest.mark.slow), (3, 5000)])
def test_honest_contributions_always_pass(m, n):
    """10^5 honest vectors (random p on the grid with both ends, groups, labels, coins; m
    servers), none dropped; kappa = 3 (l = 32): passing does not depend on kappa."""
    rng = CSPRNG(b"hl honest seed!!")
    v, P, _, _ = _honest(n, rng)
    assert _check(hl_check.party_upload(v, P, C, 3, rng), rng, 3, m).all()


def _poison(monkeypatch, bad):
    real = hl_module._contributions

    def contributions(p, y, g, Qn):
        v, pe = real(p, y, g, Qn)
        r = bad[:, None]
        v[r, 2, :], v[r, 3, :] = 50, 0               # label 50 in every group
        return v, pe

    monkeypatch.setattr(hl_module, "_contributions", contributions)


def test_an_hl_release_with_one_percent_malicious_parties_is_within_the_noise(monkeypatch):
    g = np.random.default_rng(4)
    n = 4000
    p = g.random(n)
    y = (g.random(n) < p).astype(np.int64)
    bad = np.arange(0, n, 100)
    spec = HLSpec.of(groups=5, epsilon=4.0, n_thresholds=64, seed=3, max_detectable=np.inf)
    honest = hl_module.private_hosmer_lemeshow(np.delete(p, bad), np.delete(y, bad), spec)
    _poison(monkeypatch, bad)
    unchecked = hl_module.private_hosmer_lemeshow(p, y, spec)
    checked = hl_module.private_hosmer_lemeshow(p, y, spec.replace(verify_keys=True))
    acc = checked.account
    assert acc["inputs_verified"] and acc["inputs_dropped"] == bad.size
    assert acc["keys_dropped"] == 0 and "inputs_dropped" not in unchecked.account
    assert np.array_equal(checked.edges, honest.edges)         # the keys are honest here
    for col in ("O1", "O0", "E1", "E0"):            # two independent noises of sd noise_sd
        gap = np.abs(np.array(checked.table[col]) - np.array(honest.table[col]))
        assert np.max(gap) < 6 * np.sqrt(2) * checked.noise_sd, col
    assert np.max(np.abs(np.array(unchecked.table["O1"]) - honest.table["O1"])) > 1000


def test_a_verified_seeded_hl_release_equals_the_unverified_one_and_costs_two_rounds():
    g = np.random.default_rng(8)
    n = 600
    p = g.random(n)
    y = (g.random(n) < p).astype(np.int64)
    spec = HLSpec.of(groups=4, epsilon=20.0, n_thresholds=32, seed=5, max_detectable=np.inf)
    a = hl_module.private_hosmer_lemeshow(p, y, spec)
    b = hl_module.private_hosmer_lemeshow(p, y, spec.replace(verify_keys=True))
    assert b.account["inputs_dropped"] == 0
    phases = b.communication["phases"]
    assert phases["hl input check"]["online"]["rounds"] == 3          # upload + 2 between servers
    assert phases["hl input check report"]["online"]["rounds"] == 1
    assert b.table == a.table and b.statistic == a.statistic   # same sums mod 2^l, same noise


def test_the_cli_flag_checks_hl_inputs_and_n_counts_the_kept_parties(monkeypatch, capsys):
    import json
    from pathlib import Path

    from ustat.cli import main

    _poison(monkeypatch, np.arange(0, 2000, 100))
    csv = Path(__file__).parents[2] / "releases" / "hl.csv"
    args = ["hl", "--csv", str(csv), "--prob", "prob", "--label", "y", "--groups", "5",
            "--seed", "1", "--json", "--no-progress"]
    assert main([*args, "--verify-keys"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["account"]["inputs_dropped"] == 20 and out["n"] == 1980
    assert out["spec"]["execution"]["verify_keys"]
