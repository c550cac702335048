"""The in-circuit noise of bell-2pc: exact pmf, the circuit's samples, DP calibration,
composition."""

import itertools
import math

import numpy as np
import pytest
from scipy import stats

from mpc.arith.rng import CSPRNG
from mpc.gc import bits_to_int, evaluate
from ustat.baselines import _common as C
from ustat.baselines.bell_2pc_circuits import kernel_spec, pair_circuit
from ustat.baselines.bell_2pc_noise import (
    advanced_eps0,
    hockey_stick_delta,
    ideal_pmf,
    noise_plan,
    noise_pmf,
    thresholds,
)
from ustat.kernels import get


def test_pmf_is_symmetric_normalized_and_close_to_discrete_laplace():
    plan = noise_plan(0.5, 2, 40)                      # Delta = 2 (kendall): alpha = e^(-1/4)
    q, K = plan["pmf"], plan["K"]
    assert q.size == 2 * K + 1 and np.all(q > 0)
    assert math.isclose(q.sum(), 1.0, rel_tol=0, abs_tol=1e-15)
    np.testing.assert_array_equal(q, q[::-1])
    ideal = ideal_pmf(plan["alpha"], K)
    # every probability is the ideal one rounded to 2^-41, except the last, which holds the tail
    assert np.max(np.abs(q - ideal)[1:-1]) <= 2.0 ** -41 * 1.01
    assert plan["tv_to_ideal"] < 1e-10
    assert plan["variance"] == pytest.approx(plan["variance_ideal"], rel=1e-9)


def test_table_thresholds_are_strictly_increasing_and_exact_integers():
    T = thresholds(math.exp(-0.25), 20)
    assert all(isinstance(t, int) for t in T)
    assert all(0 < a < b < 2 ** 20 for a, b in itertools.pairwise(T))
    q = noise_pmf(T, 20)
    # Pr[eta = 0] = T_1 / 2^R exactly, Pr[eta = 1] = (T_2 - T_1) / 2^(R+1)
    K = len(T)
    assert q[K] == T[0] / 2 ** 20 and q[K + 1] == (T[1] - T[0]) / 2 ** 21


def _noise_samples(kernel, cells_g, cells_e, count, eps_pair, noise_bits, seed):
    """Outputs v + eta of the pair circuit (plaintext evaluator) on CSPRNG coins."""
    kern = get(kernel)
    grid = C.Grid((4, 4), (True, True), 4)
    spec = kernel_spec(kern, grid)
    plan = noise_plan(eps_pair, spec.delta, noise_bits)
    c = pair_circuit(spec, plan["table"], noise_bits)
    g = CSPRNG(seed)
    rec_g = np.full(count, cells_g[0] | cells_g[1] << 2, dtype=np.uint64)
    rec_e = np.full(count, cells_e[0] | cells_e[1] << 2, dtype=np.uint64)
    cg, ce = g.bits((count, noise_bits + 1)), g.bits((count, noise_bits + 1))
    out = bits_to_int(evaluate(c, [rec_g, cg, rec_e, ce])[0], signed=True)
    return out.astype(np.int64), plan


def test_circuit_noise_has_the_claimed_distribution():
    """Chi-square of 200 000 circuit samples (v = 0) against the exact pmf, bins >= 20 expected."""
    n = 200_000
    out, plan = _noise_samples("kendall", (1, 1), (1, 1), n, 1.0, 40, seed=11)   # equal -> v = 0
    K = plan["K"]
    assert np.abs(out).max() <= K
    obs = np.bincount(out + K, minlength=2 * K + 1).astype(float)
    exp = plan["pmf"] * n
    keep = exp >= 20
    o = np.append(obs[keep], obs[~keep].sum())
    e = np.append(exp[keep], exp[~keep].sum())
    p = stats.chisquare(o, e).pvalue
    assert p > 1e-3, p                                  # fixed seed; fails at 1e-3 for a wrong law
    # and the sign is uniform, mean 0 (4 sigma)
    sd = math.sqrt(plan["variance"] / n)
    assert abs(out.mean()) < 4 * sd


def test_output_distribution_respects_epsilon_between_neighbours():
    """v = 1 versus v = -1 (kendall, Delta = 2): empirical log-ratios stay within eps_pair.

    Bins with >= 2000 samples on both sides: the log-ratio's standard error is
    below sqrt(2/2000) = 0.032, so 4 sigma = 0.13.
    """
    eps_pair = 1.0
    n = 200_000
    plus, plan = _noise_samples("kendall", (3, 3), (0, 0), n, eps_pair, 40, seed=12)
    minus, _ = _noise_samples("kendall", (3, 0), (0, 3), n, eps_pair, 40, seed=13)
    lo = min(plus.min(), minus.min())
    hp = np.bincount(plus - lo)
    hm = np.bincount(minus - lo, minlength=hp.size)[:hp.size]
    hp = hp[:hm.size]
    ok = (hp >= 2000) & (hm >= 2000)
    assert ok.sum() >= 5
    ratio = np.abs(np.log(hp[ok] / hm[ok]))
    assert ratio.max() <= eps_pair + 0.13
    # the exact pmf: where probabilities are >= 1e-6 (rounding error 2^-41 relative < 1e-6) the
    # worst ratio at the largest shift is eps_pair (alpha^-Delta); the tail's rounding and
    # truncation are what delta_pair pays for
    q = plan["pmf"]
    a, b = q[2:], q[:-2]
    bulk = (a >= 1e-6) & (b >= 1e-6)
    assert np.max(np.abs(np.log(a[bulk] / b[bulk]))) == pytest.approx(eps_pair, abs=1e-5)
    tail_excess = np.maximum(a - math.exp(eps_pair) * b, 0)[~bulk].sum()
    assert 0 < tail_excess <= plan["delta_pair"] < 1e-10


def test_hockey_stick_delta_against_a_direct_sum():
    plan = noise_plan(0.3, 3, 16)
    q, K = plan["pmf"], plan["K"]
    e = math.exp(0.3)
    direct = 0.0
    for d in range(1, 4):
        tot = 0.0
        for k in range(-K, K + d + 1):
            a = q[k + K] if -K <= k <= K else 0.0
            b = q[k - d + K] if -K <= k - d <= K else 0.0
            tot += max(0.0, a - e * b)
        direct = max(direct, tot)
    assert plan["delta_pair"] == pytest.approx(direct, rel=1e-12)
    assert 0 < plan["delta_pair"] < 1e-3
    # more bits, smaller delta; the ideal (unbounded) Laplace has none
    assert noise_plan(0.3, 3, 32)["delta_pair"] < plan["delta_pair"]
    assert hockey_stick_delta(ideal_pmf(math.exp(-0.1), 400), 0.3, 3) < 1e-15


def test_advanced_composition_inverts_drv():
    eps, k, delta = 1.0, 999, 1e-8
    e0, rule = advanced_eps0(eps, k, delta)
    assert rule == "advanced"
    total = math.sqrt(2 * k * math.log(1 / delta)) * e0 + k * e0 * math.expm1(e0)
    assert total == pytest.approx(eps, rel=1e-9) and total <= eps
    # with few compositions basic composition is better and is used
    assert advanced_eps0(1.0, 3, 1e-8) == (pytest.approx(1 / 3), "basic")
    with pytest.raises(ValueError, match="delta must be in"):
        advanced_eps0(1.0, 10, 0.0)


def test_noise_errors():
    with pytest.raises(ValueError, match="noise_bits must be in"):
        noise_plan(1.0, 2, 4)
    with pytest.raises(TypeError, match="noise_bits must be an integer"):
        noise_plan(1.0, 2, 20.0)
    with pytest.raises(ValueError, match="more than"):
        thresholds(math.exp(-1e-7), 40)


def test_chi_square_detects_a_slightly_wrong_scale():
    """Power check of the distribution test: the same samples reject eps_pair = 1.1 for 1.0."""
    n = 200_000
    out, plan = _noise_samples("kendall", (1, 1), (1, 1), n, 1.0, 40, seed=11)
    wrong = noise_plan(1.1, 2, 40)
    K = max(plan["K"], wrong["K"])
    obs = np.bincount(out + K, minlength=2 * K + 1).astype(float)
    exp = np.zeros(2 * K + 1)
    exp[K - wrong["K"]:K + wrong["K"] + 1] = wrong["pmf"] * n
    keep = exp >= 20
    o = np.append(obs[keep], obs[~keep].sum())
    e = np.append(exp[keep], exp[~keep].sum())
    assert stats.chisquare(o, e).pvalue < 1e-6
