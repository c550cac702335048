"""Two worlds: the view of all contributors but one does not tell eta = a from eta = b.

The coalition (every contributor but the honest one, plus the aggregator, who
receives nothing during the noise step) keeps its own coins fixed; the honest
contributor's coins are chosen so that the sampled noise is a in world A and
b in world B. Everything else (the dealer's triples and daBits, the OT
randomness, the honest contributor's other draws) is fresh in every run, as
it is for a real coalition. The coalition's view is every message its members
received (the dealer's shares included) plus its members' shares of eta. In
both worlds each view bit must have the same frequency (two-proportion z
tests over all bits, Bonferroni) and random parities of the view and the top
bits of the coalition's share sum must agree. A negative control adds the
honest contributor's share to the view (the view then holds eta): the same
test must tell the worlds apart, so it has power.
"""

import numpy as np
import pytest
from scipy import stats

from mpc.arith.rng import CSPRNG
from mpc.protocols.gmw import GMW
from mpc.session import Session
from noise import mpc_sampler as MS

A, B = -2, 5


def _coins_for(plan, target: int) -> np.ndarray:
    """Coin values U (2, J) with sample_from_coins = target (G1 - G2 = target)."""
    J, K = plan.geometric_bits, plan.coin_bits
    g1, g2 = max(target, 0), max(-target, 0)
    top = (1 << K) - 1
    U = np.array([[0 if (g >> j) & 1 else top for j in range(J)] for g in (g1, g2)],
                 dtype=np.uint64)
    assert MS.sample_from_coins(plan, U) == target
    return U


def _run(p, honest, triples, depth, target, run):
    """One run: (the coalition's view as bits, the honest coins' bits, top 3 bits of the
    coalition's share sum, top 3 bits of all shares' sum)."""
    plan = MS.plan_dlap(4, epsilon=1.0)
    K = plan.coin_bits
    s = Session(p, seed=f"world-{target}-run-{run}-{triples}", record_views=True)
    thr, w, starts = MS._instances([plan], K, s.ring)
    ctx = GMW(s, np.arange(p), thr.size, s.rng.derive("run"), triples=triples)
    coins = ctx.holder_words("coins", K)
    fixed = CSPRNG(f"coalition-coins-{p}").uint64((p, K, ctx.W)) & ctx.mask
    coal = [j for j in range(p) if j != honest]
    coins[coal] = fixed[coal]                  # the coalition's coins: the same in both worlds
    U = MS._public_bits(_coins_for(plan, target).reshape(-1), K)
    coins[honest] = U ^ np.bitwise_xor.reduce(coins[coal], axis=0)
    shares = MS._noise_from_coins(ctx, coins, thr, w, starts, depth)
    ring = s.ring
    assert ring.to_signed(ring.sum(shares, axis=0))[0] == target
    parts = [np.ascontiguousarray(np.asarray(r.payload)).view(np.uint8).ravel()
             for j in coal for r in s.net.view(j)]
    parts.append(shares[coal].view(np.uint8).ravel())
    top = ring.bits - 3
    return (np.unpackbits(np.concatenate(parts)), np.unpackbits(coins[honest].view(np.uint8)),
            int(ring.sum(shares[coal], axis=0)[0]) >> top, int(ring.sum(shares, axis=0)[0]) >> top)


def _worlds(p, honest, triples, depth, runs):
    return [list(zip(*[_run(p, honest, triples, depth, t, r) for r in range(runs)]))
            for t in (A, B)]


def _bits_pvalue(va: np.ndarray, vb: np.ndarray) -> float:
    """Per-bit frequencies and 64 parities of 24 random view bits each, two worlds (Bonferroni)."""
    R, L = va.shape
    fa, fb = va.mean(axis=0), vb.mean(axis=0)
    pooled = (fa + fb) / 2
    var = pooled * (1 - pooled) * 2 / R
    z = np.where(var > 0, np.abs(fa - fb) / np.sqrt(np.maximum(var, 1e-300)), 0.0)
    p_bits = min(1.0, L * 2 * stats.norm.sf(z.max()))
    idx = CSPRNG("parities").integers(L, (64, 24))
    pa = va[:, idx].sum(axis=2) % 2                             # (R, 64) parities
    pb = vb[:, idx].sum(axis=2) % 2
    p_par = min(stats.fisher_exact([[x.sum(), R - x.sum()], [y.sum(), R - y.sum()]])[1]
                for x, y in zip(pa.T, pb.T))
    return min(p_bits, min(1.0, 64 * float(p_par)))


def _sum_pvalue(ta, tb) -> float:
    """Chi-square of the two worlds' histograms of a share sum's top 3 bits."""
    table = np.array([np.bincount(ta, minlength=8), np.bincount(tb, minlength=8)])
    table = table[:, table.sum(axis=0) > 0]
    return 1.0 if table.shape[1] < 2 else float(stats.chi2_contingency(table)[1])


@pytest.mark.parametrize("p,honest,triples,depth,runs", [
    (3, 1, "dealer", "log", 100),        # M_Dis at n = 3: n - 1 parties collude
    (4, 3, "dealer", "log", 100),        # M_HF: a committee of 4, all but one colluding
    (2, 0, "ot", "linear", 25),          # dealer-free (the ECDF servers, backend gc)
])
def test_coalition_view_does_not_distinguish_the_noise(p, honest, triples, depth, runs):
    (va, _ca, sa, _), (vb, _cb, sb, _) = _worlds(p, honest, triples, depth, runs)
    va, vb = np.stack(va), np.stack(vb)
    assert va.shape == vb.shape                        # the view's shape does not depend on eta
    assert _bits_pvalue(va, vb) > 1e-3
    assert _sum_pvalue(sa, sb) > 1e-3


def test_the_test_has_power():
    """Negative controls: with the honest contributor's coins in the view, or its share in the
    sum (the sum is then eta itself), both tests tell the worlds apart."""
    (va, ca, _sa, alla), (vb, cb, _sb, allb) = _worlds(3, 1, "dealer", "log", 30)
    with_coins = [np.concatenate([v, c]) for v, c in zip(va, ca)], \
        [np.concatenate([v, c]) for v, c in zip(vb, cb)]
    assert _bits_pvalue(np.stack(with_coins[0]), np.stack(with_coins[1])) < 1e-6
    assert _sum_pvalue(alla, allb) < 1e-6


def test_noise_phase_reaches_only_the_contributors():
    """U-MPC under hf: parties outside the committee and the aggregator receive nothing in the
    noise phase (the noise stays in the committee's shares); the shares of the rest are 0."""
    from noise.distributed import shared_dlap_noise

    s = Session(30, seed=2, record_views=True)
    with s.net.phase("noise"):
        nz = shared_dlap_noise(s, 1.0, 1.0, threat_model="hf", method="mpc", committee_size=5,
                               f_h=0.9)
    members = set(nz.committee.tolist())
    assert len(members) == 5
    for j in range(30):
        got = [r for r in s.net.view(j) if r.phase == "noise"]
        assert (len(got) > 0) == (j in members)
        if j not in members:
            assert nz.shares[j] == 0
    assert not [r for r in s.net.view(s.net.role("aggregator")) if r.phase == "noise"]
