"""The collusion-aware noise split: plans, exact tails, privacy loss, protocol wiring."""

import math
from fractions import Fraction

import numpy as np
import pytest
from scipy import stats

from mpc.session import Session
from noise import collusion as C
from noise import distributed as D
from noise.privacy_loss import polya_difference_epsilon, polya_log_pmf
from noise.samplers import polya_pmf


# -- plans ---------------------------------------------------------------------------------
def test_dis_plan_default_is_an_honest_majority():
    for n, t in [(1, 0), (2, 1), (3, 1), (4, 2), (50, 25), (20000, 10000)]:
        plan = C.dis_plan(n)
        assert plan.max_colluders == t and plan.honest == n - t
        assert plan.shape == Fraction(1, n - t) and plan.variance_factor == n / (n - t) <= 2
    assert C.dis_plan(10, "all").honest == 1 and C.dis_plan(10, 0).honest == 10
    assert C.dis_plan(10, 3).variance_factor == pytest.approx(10 / 7)


@pytest.mark.parametrize("value,exc,msg", [(10, ValueError, r"max_colluders must be in 0\.\.9"),
                                           (-1, ValueError, "max_colluders"),
                                           ("most", TypeError, "'half' or 'all'"),
                                           (2.5, TypeError, "max_colluders")])
def test_max_colluders_errors(value, exc, msg):
    with pytest.raises(exc, match=msg):
        C.dis_plan(10, value)


@pytest.mark.parametrize("m,f,h", [(40, 0.5, 1), (60, 0.5, 5), (188, 0.5, 47), (41, 0.9, 19),
                                   (7, 0.3, 0)])
def test_binomial_tail_is_exact(m, f, h):
    got = C.binomial_lower_tail(m, f, h)
    assert isinstance(got, Fraction)
    assert float(got) == pytest.approx(stats.binom.cdf(h - 1, m, f), rel=1e-12, abs=1e-300)


@pytest.mark.parametrize("n,f,m,h", [(100, 0.5, 40, 3), (24, 0.5, 24, 12), (24, 0.5, 24, 13),
                                     (4521, 0.5, 180, 45), (1000, 0.9, 30, 20)])
def test_hypergeometric_tail_is_exact(n, f, m, h):
    corrupted = math.floor((1 - Fraction(str(f))) * n)
    want = stats.hypergeom.cdf(h - 1, n, n - corrupted, m)
    got = float(C.hypergeometric_lower_tail(n, f, m, h))
    assert got == pytest.approx(want, rel=1e-9, abs=1e-300)


@pytest.mark.parametrize("fail,f_h,n", [(2.0 ** -40, 0.5, None), (2.0 ** -40, 0.5, 10 ** 6),
                                        (2.0 ** -40, 0.9, None), (1e-9, 0.5, 4521),
                                        (2.0 ** -40, 0.5, 24)])
def test_default_committee_rule(fail, f_h, n):
    """Smallest committee (>= the paper's) with factor m/h <= 2/f_H, capped at n; h is the
    largest safe."""
    plan = C.committee_plan(fail, f_h, n=n)
    m, h = plan.contributors, plan.honest
    tail = (C.binomial_lower_tail(m, f_h, h) if n is None
            else C.hypergeometric_lower_tail(n, f_h, m, h))
    nxt = (C.binomial_lower_tail(m, f_h, h + 1) if n is None
           else C.hypergeometric_lower_tail(n, f_h, m, h + 1))
    assert tail <= Fraction(fail) < nxt or h == m
    assert plan.fail_probability == pytest.approx(float(tail))
    assert m >= min(C.committee_size(fail, f_h), n or m)
    if n is None or m < n:
        assert m / h <= 2 / f_h
        smaller = C.committee_plan(fail, f_h, n=n, size=m - 1)
        assert smaller.contributors == m - 1 and (m - 1) / smaller.honest > 2 / f_h
    else:
        assert h == n - math.floor((1 - f_h) * n) and plan.fail_probability == 0.0


def test_committee_plan_numbers_and_errors():
    p = C.committee_plan(2.0 ** -40, 0.5)
    assert (p.contributors, p.honest, p.variance_factor) == (188, 47, 4.0)
    paper = C.committee_plan(2.0 ** -40, 0.5, size=40)
    assert paper.honest == 1 and paper.variance_factor == 40 and "binomial" in paper.tail_model
    assert C.committee_plan(2.0 ** -40, 1.0, n=100).contributors == 1
    with pytest.raises(ValueError, match="no honest member"):
        C.committee_plan(2.0 ** -40, 0.5, size=10)
    with pytest.raises(ValueError, match=r"fail must be in \(0, 1\)"):
        C.committee_plan(1.5, 0.5)
    with pytest.raises(ValueError, match=r"f_h must be in \(0, 1\]"):
        C.committee_plan(0.1, 0.0)
    with pytest.raises(ValueError, match="applies to threat models 'dis' and 'local'"):
        D.noise_plan("hf", 10, max_colluders=2)
    with pytest.raises(ValueError, match="'hf' only"):
        D.noise_plan("dis", 10, committee_size=3)


# -- privacy loss ----------------------------------------------------------------------------
def _brute_loss(r, t, d):
    """sup over z and |s| <= d of |ln P(z) - ln P(z + s)| from the convolved pmf (bulk only)."""
    K = int(60 * t) + 200
    p = np.exp(polya_log_pmf(np.arange(K), r, t))
    lp = np.log(np.correlate(p, p, mode="full"))
    lag = np.arange(-(K - 1), K)
    best = 0.0
    for s in range(1, d + 1):
        sel = np.abs(lag[:-s]) < 20 * t
        best = max(best, float(np.max(np.abs(lp[:-s] - lp[s:])[sel])))
    return best


@pytest.mark.parametrize("r,t,d", [(0.25, 3, 3), (0.5, 4, 4), (0.2, 2.5, 5),
                                   (Fraction(1, 3), 10, 7), (0.9, 5, 5), (0.05, 3, 3)])
def test_privacy_loss_matches_brute_force(r, t, d):
    """Exact loss ln P(0) - ln P(d) for r < 1 (the log-convexity argument), vs every z and shift."""
    got = polya_difference_epsilon(r, t, d)
    want = _brute_loss(float(r), t, d)
    assert want <= got <= want * (1 + 2e-9)


def test_privacy_loss_large_scales_and_r_at_least_one():
    # the tail integral agrees with direct summation far beyond the switch-over point
    for r, t, d in [(0.25, 2000.0, 2000), (0.02, 291271.1, 262144), (0.5, 1e5, 30000)]:
        assert polya_difference_epsilon(r, t, d) == pytest.approx(
            polya_difference_epsilon(r, t, d, _direct=1 << 19), rel=1e-12)
    assert polya_difference_epsilon(1, 5, 5) == pytest.approx(1.0, rel=2e-9)
    assert polya_difference_epsilon(3, 5, 5) == pytest.approx(1.0, rel=2e-9)
    assert polya_difference_epsilon(0.3, 7, 0.5) == 0.0
    k = np.arange(60)
    assert np.allclose(np.exp(polya_log_pmf(k, 0.3, 7)), polya_pmf(k, 0.3, 7), rtol=1e-10)


def test_old_split_is_weak_against_n_minus_one():
    """The review's measurement: epsilon >= 15 at n = 50, >= 21.9 at n = 20,000 with Polya(1/n)."""
    sens = 4 * 2 ** 14
    legacy50 = C.dis_plan(50, 0)
    assert legacy50.epsilon_against(49, 1.0, sens / 1.0, sens) > 15
    assert C.dis_plan(20000, 0).epsilon_against(19999, 1.0, sens, sens) > 21.9
    new = C.dis_plan(50)
    assert new.epsilon_against(25, 1.0, sens, sens) == 1.0
    e26 = new.epsilon_against(26, 1.0, sens, sens)
    e49 = new.epsilon_against(49, 1.0, sens, sens)
    assert 1.0 < e26 < e49 < legacy50.epsilon_against(49, 1.0, sens, sens)
    assert new.epsilon_against(50, 1.0, sens, sens) == math.inf


# -- wiring into the protocols -----------------------------------------------------------------
def test_noise_shares_report_the_guarantee():
    s = Session(10, seed=3)
    ns = D.shared_dlap_noise(s, 1.0, 4.0)
    assert ns.collusion.max_colluders == 5 and ns.variance_factor == 2.0
    g = ns.guarantee()
    assert g["epsilon_aggregator"] == g["epsilon_max_coalition"] == ns.epsilon
    assert g["max_colluders"] == 5 and "up to 9 of the 10 parties" in g["input_privacy"]
    assert g["epsilon_all_but_one"] == pytest.approx(ns.epsilon_against(9))
    assert g["epsilon_all_but_one"] > 2
    assert "up to 5 of the 10" in g["summary"] and "x2" in g["summary"]
    legacy = D.shared_dlap_noise(s, 1.0, 4.0, max_colluders=0)
    assert legacy.epsilon_against(9) > g["epsilon_all_but_one"]
    hf = D.shared_dlap_noise(Session(300, seed=4), 1.0, 4.0, threat_model="hf")
    plan = C.committee_plan(2.0 ** -40, 0.5, n=300)
    assert hf.collusion == plan and hf.committee.size == plan.contributors == 116
    assert hf.variance_factor == 4.0 and "committee of 116 of 300" in hf.guarantee()["summary"]
    with pytest.raises(ValueError, match="no collusion plan"):
        D.coin_flip_binomial(Session(2, seed=1), 4).epsilon_against(1)


def test_tiny_scale_does_not_overflow():
    """--epsilon 1e8 once failed with 'math domain error' in the wrap probability."""
    s = Session(5, seed=1)
    ns = D.shared_dlap_noise(s, 1e8, 4.0)
    assert ns.wrap_probability == 0.0 and abs(int(s.ring.to_signed(s.ring.sum(ns.shares)))) < 100
    assert D.dlap_wrap_probability(1e-6, 40) == 0.0
    assert D.dlap_wrap_probability(2.0 ** 34, 40, 4) > D.dlap_wrap_probability(2.0 ** 34, 40)


def test_check_parties_large_and_duplicates():
    """10^6 party ids are checked by an occupancy count (issue 12), duplicates still refused."""
    fake = type("S", (), {"net": type("Net", (), {"n_parties": 10 ** 6})()})()
    ids = np.arange(10 ** 6)[::-1].copy()
    assert np.array_equal(D._check_parties(fake, ids), ids)
    ids[5] = ids[6]
    with pytest.raises(ValueError, match="distinct"):
        D._check_parties(fake, ids)


def test_noise_tail_bounds():
    """DLap tail exact; the Polya(R) difference tail bounded above (checked against its pmf)."""
    t = 5.0
    a = math.exp(-1 / t)
    assert D.noise_tail_probability(30, t) == pytest.approx(2 * a ** 30 / (1 + a), rel=1e-12)
    k = D.noise_tail_bound(65536, 1)
    want = math.log(2 / (2.0 ** -40 * (1 + math.exp(-1 / 65536))))
    assert k / 65536 == pytest.approx(want, rel=1e-8)
    assert D.noise_tail_bound(65536, 4) > D.noise_tail_bound(65536, 2) > k
    for R in (2, 4):
        p = polya_pmf(np.arange(4000), R, t)
        diff = np.correlate(p, p, mode="full")                # lag 0 at index 3999
        for kk in (10, 40, 120):
            exact = 2 * diff[3999 + kk:].sum()
            assert exact <= D.noise_tail_probability(kk, t, R) <= 1.0


def test_release_guarantee_composes_the_components():
    plan = C.dis_plan(20)
    sens = 4 * 2 ** 14
    g = C.release_guarantee(plan, [(0.9, sens / 0.9), (0.1, 2 ** 14 / 0.1)])
    assert g["epsilon_aggregator"] == g["epsilon_max_coalition"] == pytest.approx(1.0)
    want = (plan.epsilon_against(19, 0.9, sens / 0.9, sens)
            + plan.epsilon_against(19, 0.1, 2 ** 14 / 0.1, 2 ** 14))
    assert g["epsilon_all_but_one"] == pytest.approx(want) and g["max_colluders"] == 10
    assert "up to 19 parties" in g["input_privacy"]
    hf = C.release_guarantee(C.committee_plan(n=500), [(1.0, 100.0)], f_h=0.5)
    assert "M_HF" in hf["input_privacy"] and hf["variance_factor"] <= 4
