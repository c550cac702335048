import dataclasses
import math
from fractions import Fraction

import numpy as np
import pytest
from scipy import stats

from mpc.arith.rng import CSPRNG
from mpc.arith.sharing import additive_share
from mpc.session import Session
from noise import distributed as D
from noise import samplers as S

from ._stats import chisq_pvalue

ALPHA = 1e-4


def _total(s, ns):
    return int(s.ring.to_signed(s.ring.sum(ns.shares, axis=0)))


def _online(s, phase="noise"):
    return s.net.report()["phases"][phase]["online"]


# -- communication equals the formula -------------------------------------------------
@pytest.mark.parametrize("n", [1, 2, 3, 7, 31])
def test_pidlap_bits_and_rounds(n):
    s = Session(n, seed=n)
    with s.net.phase("noise"):
        ns = D.shared_dlap_noise(s, 1.0, 1.0, threat_model="dis")
    assert ns.shares.shape == (n,) and ns.shares.dtype == np.uint64
    if n == 1:
        assert "noise" not in s.net.report()["phases"]
        return
    rep = _online(s)
    assert rep["bits"] == D.pidlap_bits(n, s.ring.bits) == n * (n - 1) * 40
    assert rep["messages"] == n * (n - 1) and rep["rounds"] == 1
    assert rep["max_party_sent_bits"] == (n - 1) * 40


@pytest.mark.parametrize("n", [2, 5, 12])
def test_pidlap_separate_pair_matches_paper_count(n):
    s = Session(n, seed=1)
    with s.net.phase("noise"):
        D.pi_dlap(s, 10, separate_pair=True)
    assert _online(s)["bits"] == D.pidlap_bits(n, 40, separate_pair=True) == 2 * n * (n - 1) * 40
    assert _online(s)["rounds"] == 1


@pytest.mark.parametrize("n,fail,f_h,m", [(5, 2.0 ** -40, 0.5, 5), (100, 2.0 ** -40, 0.5, 40),
                                          (1000, 1e-9, 0.5, 30), (1000, 2.0 ** -40, 0.9, 13),
                                          (77, 2.0 ** -40, 1.0, 1), (3000, 2.0 ** -80, 0.25, 193)])
def test_committee_size_and_bits(n, fail, f_h, m):
    """The paper's committee size, asked for explicitly, and its traffic."""
    expect = 1 if f_h == 1 else math.ceil(math.log(fail) / math.log(1 - f_h))
    assert D.committee_size(fail, f_h) == expect
    assert min(expect, n) == m
    s = Session(n, seed=n)
    with s.net.phase("noise"):
        ns = D.shared_dlap_noise(s, 0.5, 2.0, threat_model="hf", fail=fail, f_h=f_h,
                                 committee_size=expect)
    assert ns.committee.size == m and np.unique(ns.committee).size == m
    assert ns.collusion.contributors == m and ns.collusion.fail_probability <= fail
    assert np.all((ns.committee >= 0) & (ns.committee < n))
    rep = _online(s)
    assert rep["bits"] == D.committee_bits(n, m, 40) == m * (n - 1) * 40 and rep["rounds"] == 1


def test_committee_is_drawn_from_the_csprng():
    c1 = D.shared_dlap_noise(Session(500, seed=1), 1.0, 1.0, threat_model="hf").committee
    c2 = D.shared_dlap_noise(Session(500, seed=1), 1.0, 1.0, threat_model="hf").committee
    c3 = D.shared_dlap_noise(Session(500, seed=2), 1.0, 1.0, threat_model="hf").committee
    assert np.array_equal(c1, c2) and not np.array_equal(c1, c3)
    # the committee is uniform over parties: membership frequency over many draws
    s = Session(20, seed=3)
    hits = np.zeros(20)
    for _ in range(300):
        hits[D.draw_committee(s.rng, np.arange(20), 5)] += 1
    assert stats.chisquare(hits).pvalue > ALPHA


def test_local_variant_sends_nothing():
    s = Session(50, seed=4)
    with s.net.phase("noise"):
        ns = D.shared_dlap_noise(s, 1.0, 1.0, threat_model="local")
    assert s.net.report()["total_bits"] == 0 and ns.threat_model == "local"


def test_parties_subset_and_views():
    s = Session(6, seed=5, record_views=True)
    P = np.array([1, 3, 4])
    with s.net.phase("noise"):
        ns = D.shared_dlap_noise(s, 1.0, 1.0, parties=P)
    assert np.array_equal(ns.parties, P) and ns.shares.shape == (3,)
    for q in (0, 2, 5):
        assert s.net.view(q) == []
    v = s.net.view(3)
    assert len(v) == 2 and {r.sender for r in v} == {1, 4}


def test_accounting_travels_with_the_shares():
    s = Session(4, bits=48, frac_bits=14, seed=6)
    ns = D.shared_dlap_noise(s, 0.3, 2.5)
    want = Fraction(2.5) * 2 ** 14 / Fraction(0.3)
    assert ns.scale >= want and (ns.scale - want) / want < Fraction(1, 2 ** 40)
    assert ns.epsilon <= 0.3 and ns.epsilon == pytest.approx(0.3, rel=1e-12)
    assert ns.sensitivity == 2.5 and ns.sensitivity_ring == 2.5 * 2 ** 14
    assert ns.distribution == "discrete_laplace" and ns.delta == 0.0 and ns.insecure_seed
    assert ns.account.epsilon == ns.epsilon and ns.wrap_probability < 1e-30
    with pytest.raises(dataclasses.FrozenInstanceError):
        ns.epsilon = 1.0


# -- the reconstructed noise has the target law ------------------------------------------------
def _polya_difference_pmf(R, scale, K):
    """P(X - Y = k), |k| <= K, X, Y iid Polya(R, exp(-1/scale)) (convolution of the pmfs)."""
    p = S.polya_pmf(np.arange(8 * K), R, scale)
    full = np.correlate(p, p, mode="full")                 # lag 0 at index 8K - 1
    mid = p.size - 1
    return full[mid - K:mid + K + 1]


@pytest.mark.slow
@pytest.mark.parametrize("tm,n,kw,R", [("dis", 4, {}, 2), ("dis", 5, {"max_colluders": 0}, 1),
                                       ("hf", 9, {}, 3), ("local", 6, {"max_colluders": "all"}, 6)])
def test_reconstructed_noise_law(tm, n, kw, R):
    """The total is Polya(R) - Polya(R), R = contributors / honest (R = 1: discrete Laplace)."""
    s = Session(n, bits=32, frac_bits=0, seed={"dis": 11, "hf": 12, "local": 13}[tm] + R)
    eps, sens = 1.0, 3.0                     # integer units: scale 3
    runs = [D.shared_dlap_noise(s, eps, sens, threat_model=tm, f_h=0.5, fail=2 ** -3, **kw)
            for _ in range(2000)]
    assert runs[0].variance_factor == R
    z = np.array([_total(s, ns) for ns in runs])
    K = 60
    k = np.arange(-K, K + 1)
    pmf = _polya_difference_pmf(R, 3, K)
    if R == 1:
        assert np.allclose(pmf, S.discrete_laplace_pmf(k, 3), rtol=1e-9, atol=0)
    assert chisq_pvalue(z, k, pmf) > ALPHA


def test_reconstruction_equals_sum_of_party_noise():
    """pi_dlap shares are fresh sharings: any n-1 shares look uniform, the sum is the noise."""
    s = Session(8, seed=7)
    sh, exact = D.pi_dlap(s, 5)
    assert exact
    t = s.ring.to_signed(s.ring.sum(sh))
    assert abs(int(t)) < 2 ** 20
    s1 = Session(1, seed=7)
    sh1, exact1 = D.pi_dlap(s1, 5)
    assert exact1 and sh1.shape == (1,)          # one party: Polya(1, a) is a geometric


# -- Gaussian-type protocols -----------------------------------------------------------------------
@pytest.mark.parametrize("p", [2, 3, 5])
def test_coin_flip_bits_and_law(p):
    s = Session(p, seed=p)
    coins, batch = 64, 400
    with s.net.phase("noise"):
        ns = D.coin_flip_binomial(s, coins, step=1, shape=(batch,), sensitivity=1, epsilon=1.0)
    N = coins * batch
    rep = s.net.report()["phases"]["noise"]
    assert rep["online"]["bits"] == N * (p - 1) * 40 + 2 * N * p * (p - 1) * 40
    assert rep["online"]["rounds"] == 2
    assert rep["offline"]["bits"] == N * p * 40 + 3 * N * p * 40
    b = s.ring.to_signed(s.ring.sum(ns.shares, axis=0)) + coins // 2
    k = np.arange(coins + 1)
    assert chisq_pvalue(b, k, stats.binom.pmf(k, coins, 0.5)) > ALPHA
    assert 0 < ns.delta < 1 and ns.distribution == "binomial"


@pytest.mark.parametrize("p,mode", [(3, "share"), (4, "local")])
def test_distributed_discrete_gaussian(p, mode):
    s = Session(p, seed=11)
    with s.net.phase("noise"):
        ns = D.distributed_discrete_gaussian(s, 36, shape=(20_000,), mode=mode, sensitivity=1,
                                             delta=1e-6)
    bits = s.net.report()["online"]["bits"]
    assert bits == (20_000 * p * (p - 1) * 40 if mode == "share" else 0)
    z = s.ring.to_signed(s.ring.sum(ns.shares, axis=0))
    # the sum of p N_Z(0, 36/p): compare with the exact convolution of the PMFs
    K = 60
    k = np.arange(-K, K + 1)
    one = S.discrete_gaussian_pmf(k, Fraction(36, p), tail=K)
    pmf = one
    for _ in range(p - 1):
        pmf = np.convolve(pmf, one)
    kk = np.arange(-K * p, K * p + 1)
    sel = (kk >= -K) & (kk <= K)
    assert chisq_pvalue(z, kk[sel], pmf[sel]) > ALPHA
    rho = 1 / (2 * 36)
    assert ns.epsilon == pytest.approx(rho + 2 * math.sqrt(rho * math.log(1e6)), rel=1e-6)


# -- bad input ---------------------------------------------------------------------------------
@pytest.mark.parametrize("kw,exc,msg", [
    (dict(epsilon=math.inf), ValueError, "epsilon must be finite"),
    (dict(epsilon=0.0), ValueError, "epsilon must be finite and > 0"),
    (dict(epsilon=-1.0), ValueError, "epsilon"),
    (dict(epsilon=math.nan), ValueError, "epsilon must be finite"),
    (dict(sensitivity=0.0), ValueError, "sensitivity must be finite and > 0"),
    (dict(sensitivity=-3.0), ValueError, "sensitivity"),
    (dict(threat_model="malicious"), ValueError, "threat_model must be one of"),
    (dict(threat_model="hf", f_h=0.0), ValueError, r"f_h must be in \(0, 1\]"),
    (dict(threat_model="hf", f_h=1.5), ValueError, r"f_h must be in \(0, 1\]"),
    (dict(threat_model="hf", fail=0.0), ValueError, r"fail must be in \(0, 1\)"),
    (dict(parties=np.array([], dtype=np.int64)), ValueError, "at least one party"),
    (dict(parties=np.array([0, 9])), ValueError, "parties must be ids"),
    (dict(parties=np.array([1, 1])), ValueError, "distinct"),
    (dict(parties=[0.5]), TypeError, "parties must be a 1-d integer array"),
])
def test_shared_dlap_noise_errors(kw, exc, msg):
    s = Session(4, seed=1)
    args = dict(epsilon=1.0, sensitivity=1.0)
    args.update(kw)
    eps, sens = args.pop("epsilon"), args.pop("sensitivity")
    with pytest.raises(exc, match=msg):
        D.shared_dlap_noise(s, eps, sens, **args)


def test_other_errors():
    s = Session(3, seed=1)
    with pytest.raises(TypeError, match="Session"):
        D.shared_dlap_noise(object(), 1.0, 1.0)
    with pytest.raises(ValueError, match="n_coins must be >= 1"):
        D.coin_flip_binomial(s, 0)
    with pytest.raises(ValueError, match="multiple of step"):
        D.coin_flip_binomial(s, 10, step=2, sensitivity=3, epsilon=1.0)
    with pytest.raises(ValueError, match="mode"):
        D.distributed_discrete_gaussian(s, 4, mode="x")
    with pytest.raises(ValueError, match="ring too small"):
        D.shared_dlap_noise(Session(2, bits=8, frac_bits=4, seed=1), 1e-3, 1.0)
    with pytest.raises(ValueError, match="does not fit"):
        D.pi_dlap(Session(2, bits=8, frac_bits=4, seed=1), 10 ** 6)


# -- the batched committee (no loop over members) ---------------------------------------------
def _old_committee_outputs(ring, c, n, rng):
    """The per-member protocol literally: member k shares c_k among n parties; party j sums."""
    out = np.zeros(n, dtype=np.uint64)
    for ck in c:
        out = ring.add(out, additive_share(ring, np.array([ck], dtype=np.uint64), n, rng)[:, 0])
    return out


@pytest.mark.slow
def test_batched_committee_has_the_per_member_law():
    """Batched results vs the literal per-member sharing of the same Polya differences.

    Two-sample chi-square on (low 2 bits of party 1, low 2 bits of party 2,
    sign of the total) over 3000 runs each: 32 cells of expected count about
    90, so the chi-square approximation holds; alpha 1e-4 (fixed seeds).
    """
    n, m, scale = 3, 3, Fraction(2)
    ring = Session(n, bits=16, frac_bits=0, seed=21).ring

    def cat(out):
        return (int(out[1]) & 3) * 8 + (int(out[2]) & 3) * 2 + (
            int(ring.to_signed(ring.sum(out))) > 0)

    s = Session(n, bits=16, frac_bits=0, seed=22)
    new = [cat(D.committee_dlap(s, scale, size=m)[0]) for _ in range(3000)]
    rng = CSPRNG(23)
    old = []
    for _ in range(3000):
        c = D._encode_signed(ring, D._polya_differences(Fraction(1, m), scale, m, rng), "c")
        old.append(cat(_old_committee_outputs(ring, c, n, rng)))
    table = np.array([np.bincount(new, minlength=32), np.bincount(old, minlength=32)])
    assert stats.chi2_contingency(table).pvalue > ALPHA
    # and each of those cells is what the law says: uniform low bits, independent of the total
    assert stats.chisquare(np.bincount(np.array(new) // 2, minlength=16)).pvalue > ALPHA


@pytest.mark.parametrize("n,parties", [(40, None), (9, np.array([0, 2, 3, 5, 8]))])
def test_committee_views_path_equals_counted_path(n, parties):
    """record_views materializes the messages: same results, same counts, consistent views."""
    runs = []
    for views in (False, True):
        s = Session(n, seed=31, record_views=views)
        with s.net.phase("noise"):
            out, Z, _exact = D.committee_dlap(s, 7, parties=parties, size=6)
        runs.append((s, out, Z))
    (s0, out0, Z0), (s1, out1, Z1) = runs
    assert np.array_equal(out0, out1) and np.array_equal(Z0, Z1)
    assert s0.net.report() == s1.net.report()
    for a, b in zip(s0.net.party_bits(), s1.net.party_bits()):
        assert np.array_equal(a, b)
    P = np.arange(n) if parties is None else parties
    rep = _online(s0)
    m = Z0.size
    assert rep["messages"] == m * (P.size - 1) and rep["rounds"] == 1
    for j, p in enumerate(P):
        view = s1.net.view(int(p))
        assert len(view) == m - (p in Z0) and {r.sender for r in view} == set(Z0) - {p}
        if p not in Z0:          # a non-member's result is the sum of what it received
            assert int(s1.ring.sum(np.array([r.payload for r in view]))) == int(out1[j])


def test_committee_of_one_party_and_large_batch_counts():
    s = Session(1, seed=3)
    with s.net.phase("noise"):
        out, Z, _ = D.committee_dlap(s, 5, size=4)
    assert out.shape == (1,) and Z.tolist() == [0] and s.net.report()["total_bits"] == 0
    s = Session(20_000, seed=4)
    with s.net.phase("noise"):
        out, Z, _ = D.committee_dlap(s, 5, size=50)
    sent, received = s.net.party_bits()
    assert sent[Z].tolist() == [19_999 * 40] * 50 and sent.sum() == received.sum()
    assert set(np.unique(received[:20_000])) == {49 * 40, 50 * 40}
