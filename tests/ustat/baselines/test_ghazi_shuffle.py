import math

import numpy as np
import pytest

from mpc.arith.rng import CSPRNG
from tests.api import flat_protocol
from ustat.baselines import ghazi_shuffle as GS

from ._data import correlated_pairs, scored_labels, tau_a


@pytest.mark.parametrize("limit", [0, 1 << 22])          # aggregate shortcut / every share drawn
def test_privacy_off_exact(limit):
    X = correlated_pairs(150)
    r = flat_protocol("ghazi-sm", X, "kendall", epsilon=math.inf, bins=4, seed=1,
                      materialize_limit=limit)
    assert r.params["materialized"] == (limit > 0)
    cells = np.minimum(np.floor(X * 4), 3)
    assert r.estimate == pytest.approx(tau_a(cells[:, 0], cells[:, 1]), abs=1e-12)


def test_privacy_off_auc_with_aux_and_nonconstant_diagonal():
    from sklearn.metrics import roc_auc_score
    S = scored_labels(200)
    r = flat_protocol("ghazi-sm", S, "auc", epsilon=math.inf, bins=8, seed=1)
    assert r.estimate == pytest.approx(roc_auc_score(S[:, 1], np.floor(S[:, 0] * 8)), abs=1e-9)
    # a kernel with a non-constant diagonal gets a third private sum
    from ustat.kernels import Kernel
    sq = Kernel("sq-test", 2, 1, lambda X: X[:, 0, 0] * X[:, 1, 0], None, (0.0, 1.0))
    X = correlated_pairs(120)[:, :1]
    r = flat_protocol("ghazi-sm", X, sq, epsilon=math.inf, bins=8, seed=1)
    mid = (np.minimum(np.floor(X[:, 0] * 8), 7) + 0.5) / 8
    ref = (mid.sum() ** 2 - (mid ** 2).sum()) / (120 * 119)
    assert not r.params["constant_diagonal"] and r.estimate == pytest.approx(ref, abs=1e-9)


def test_bits_and_rounds_are_measured():
    X = correlated_pairs(64)
    r = flat_protocol("ghazi-sm", X, "kendall", epsilon=1.0, bins=4, dim=4, messages=3, seed=2)
    d, m, n, bits = 4, 3, 64, 40
    assert r.rounds == 2
    assert r.max_party_bits == m * 2 * d * bits                 # sent by every party
    shuffler = r.communication["online"]["roles"]["shuffler"]
    assert shuffler["received_bits"] == n * m * 2 * d * bits
    assert shuffler["sent_bits"] == n * m * 2 * d * bits
    assert r.online_bits == 2 * n * m * 2 * d * bits
    assert r.offline_bits == n * 128 and r.dp_model == "shuffle"
    big = flat_protocol("ghazi-sm", X, "kendall", epsilon=1.0, bins=4, dim=4, messages=3, seed=2,
                        materialize_limit=0)
    assert big.online_bits == r.online_bits and big.rounds == 2
    assert any("shortcut" in note for note in big.notes)


def test_default_messages_reproduces_worked_example():
    assert GS.default_messages(10 ** 4, 32, 40) == 12
    assert GS.default_messages(4521, 40, 40) == 15


def test_encode_is_unbiased_randomized_rounding():
    g = CSPRNG(3)
    v = np.full(200000, 0.3)
    e = GS.encode(v, 4, g)
    assert set(np.unique(e)) == {1, 2}
    assert abs(e.mean() - 1.2) < 5 * e.std() / math.sqrt(v.size)
    assert np.array_equal(GS.encode(np.array([0.25, -0.5]), 4, g), [1, -2])


@pytest.mark.slow
def test_unbiased_and_variance_matches_formula():
    # exact factorization, 300 runs: mean within 4 SE of the discretized U; variance within
    # 30% of sum_variance (relative SE of a sample variance about sqrt(2/300) = 8%)
    X = correlated_pairs(50, seed=8)[:, :1]
    runs = [flat_protocol("ghazi-sm", X, "gini", epsilon=3.0, bins=4, factorization="exact",
                          messages=2, materialize_limit=0, seed=s, evaluate=(s == 0))
            for s in range(300)]
    est = np.array([r.estimate_raw for r in runs])
    truth = runs[0].evaluation["u_discretized"]
    var = runs[0].evaluation["variance_given_factorization"]
    assert abs(est.mean() - truth) < 4 * math.sqrt(var / 300)
    assert est.var() == pytest.approx(var, rel=0.3)


def test_materialized_sums_carry_exact_discrete_laplace():
    # every party draws Polya(1/n) differences, splits into shares, the shuffler permutes:
    # the analyzer's sums minus the true sums are iid DLap(scale); 3000 coordinates give the
    # variance 2a/(1-a)^2 within 20% (DLap kurtosis 6: relative SE sqrt(5/3000) = 4%)
    from mpc.session import Session
    from noise.accounting import discrete_laplace_scale

    n, k, sens, eps = 30, 3000, 4, 1.0
    s = Session(n, seed=5, roles=("dealer", "aggregator", "shuffler"))
    vals = CSPRNG(6).integers(5, (n, k))
    src = GS.Contribution(lambda i: vals[i].astype(float), k, 1, CSPRNG(7), n)
    (total,) = GS.private_sums(s, CSPRNG(8), [(src, sens, eps)], 3, True)
    noise = total - vals.sum(axis=0)
    a = math.exp(-1 / float(discrete_laplace_scale(sens, eps)))
    assert abs(noise.mean()) < 5 * noise.std() / math.sqrt(k)
    assert noise.var() == pytest.approx(2 * a / (1 - a) ** 2, rel=0.2)
    rep = s.net.report()["online"]
    assert rep["rounds"] == 2 and rep["max_party_bits"] == 3 * k * 40


def test_wrap_guard():
    X = correlated_pairs(40)
    with pytest.raises(ValueError, match="could wrap around"):
        flat_protocol("ghazi-sm", X, "kendall", epsilon=1.0, bins=4, bits=20, seed=1)
