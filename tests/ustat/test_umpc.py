import math
import time

import numpy as np
import pytest
from scipy import stats
from sklearn.metrics import roc_auc_score

from mpc.arith.rng import CSPRNG
from mpc.session import Session
from tests.api import flat_umpc
from ustat import kernels as K
from ustat.sampling import Hypergraph
from ustat.secure import narrow_bits
from ustat.umpc import resolve_edges

L = 40


def _records(g, n, kern):
    X = g.random((n, kern.columns))
    for c in kern.categorical:
        X[:, c] = g.integers(kern.extra.get("levels", {}).get(c, 3), (n,))
    return X


@pytest.mark.parametrize("name", K.names())
def test_no_noise_reproduces_plaintext_exactly(name):
    kern = K.get(name)
    n = 14 if kern.degree == 2 else 8
    g = CSPRNG(hash(name) % 1000)
    X = _records(g, n, kern)
    X[1] = X[0]                               # ties
    res = flat_umpc(X, name, epsilon=math.inf, edges="all", seed=7, evaluate=True)
    ev = res.evaluation
    assert res.edges == math.comb(n, kern.degree)
    assert res.u_hat == pytest.approx(ev["u_incomplete"], abs=1e-12)
    assert ev["u_incomplete"] == pytest.approx(ev["u_complete"], abs=1e-12)
    assert res.estimate == pytest.approx(ev["statistic_complete"], abs=1e-9)
    assert res.insecure_seed and any("NOT differentially private" in s for s in res.notes)


@pytest.mark.parametrize("name", ["gini", "kendall", "duplicate", "triples"])
def test_no_noise_incomplete_sampled_edges(name):
    kern = K.get(name)
    g = CSPRNG(11)
    X = _records(g, 60, kern)
    res = flat_umpc(X, name, epsilon=math.inf, edges="3n", seed=3, evaluate=True, chunk_size=50)
    assert res.edges == 180
    assert res.max_degree == math.ceil(kern.degree * 180 / 60)
    assert res.u_hat == pytest.approx(res.evaluation["u_incomplete"], abs=1e-12)


def test_against_scipy_and_sklearn():
    g = CSPRNG(5)
    n = 25
    # distinct values on the fixed-point grid: no ties, so scipy's tau-b is tau-a
    X = np.column_stack([g.choice(2**14, n), g.choice(2**14, n)]) / 2**14
    res = flat_umpc(X, "kendall", epsilon=math.inf, edges="all", seed=1)
    assert res.estimate == pytest.approx(stats.kendalltau(X[:, 0], X[:, 1]).statistic, abs=1e-12)
    S = np.column_stack([np.round(g.random(n), 1), g.integers(2, (n,))])
    res = flat_umpc(S, "auc", epsilon=math.inf, edges="all", seed=2)
    assert res.estimate == pytest.approx(roc_auc_score(S[:, 1], S[:, 0]), abs=1e-12)
    x = g.random(n)
    res = flat_umpc(x, "gini", epsilon=math.inf, edges="all", seed=3)
    xq = np.sort(x)                 # raw values (gini: 32 fractional bits, a wider ring)
    gmd = 2 * np.sum((2 * np.arange(1, n + 1) - n - 1) * xq) / (n * (n - 1))
    assert res.estimate == pytest.approx(gmd, abs=2.0 ** -32)


@pytest.mark.parametrize("name,k,d", [("gini", 2, 1), ("kendall", 2, 2), ("triples", 3, 1)])
def test_sharing_and_aggregation_bits_match_the_paper(name, k, d):
    n = 30
    X = _records(CSPRNG(1), n, K.get(name))
    res = flat_umpc(X, name, epsilon=1.0, edges="2n", seed=1, threat_model="hf")
    ph = res.communication["phases"]
    m, L = res.edges, res.precision["bits"]         # wider for gini, 40 for order kernels
    assert 40 < L <= 64 if name == "gini" else L == 40
    assert ph["sharing"]["online"]["bits"] == m * k * (k - 1) * d * L
    assert ph["sharing"]["online"]["rounds"] == 1
    assert ph["aggregation"]["online"]["bits"] == n * L
    assert ph["aggregation"]["online"]["rounds"] == 1
    total = sum(p.get("online", {}).get("bits", 0) for p in ph.values())
    assert res.online_bits == total
    assert res.offline_bits > 0


def test_computing_phase_bits_match_gate_costs():
    """Kendall = 2 sign gates (one round) + 1 Beaver product per edge, by the documented formula."""
    from fss.gates import costs

    n = 20
    X = _records(CSPRNG(2), n, K.get("kendall"))
    res = flat_umpc(X, "kendall", epsilon=math.inf, edges="2n", seed=4)
    comp = res.communication["phases"]["computing"]
    m = res.edges
    sign = costs("sign", L, 2)
    online = m * (2 * 2 * sign["online_sent_key_holder"]   # 2 gates, 2 members
                  + 2 * 2 * L)                            # Beaver: 2 members send 2 elements
    assert comp["online"]["bits"] == online
    assert comp["online"]["rounds"] == sign["online_rounds"] + 1
    offline = m * (2 * 2 * sign["offline_key_holder"] + 2 * 3 * L)
    assert comp["offline"]["bits"] == offline
    assert res.rounds == 1 + 2 + 1       # sharing, sign + product, aggregation
    # k = 3 uses the p-party circuit (mpc.protocols.compare): 3 signs = 6 comparisons per edge
    X3 = _records(CSPRNG(3), 9, K.get("triples"))
    res3 = flat_umpc(X3, "triples", epsilon=math.inf, edges="all", seed=5)
    ands = 2 * (L - 2) - 1
    per_cmp = 3 * 2 * (L + 2 * ands + 1)      # each of 3 members sends to 2 others
    assert res3.communication["phases"]["computing"]["online"]["bits"] == res3.edges * 6 * per_cmp
    assert (res3.communication["phases"]["computing"]["online"]["rounds"]
            == math.ceil(math.log2(L - 1)) + 2)


def test_noise_variance_matches_theory_fixed_edges():
    """With the hypergraph fixed, Var(released) = 2 R (delta_max Delta f / (eps |E|))^2.

    R is the variance factor of the noise split against colluders (1 for the
    paper's split), reported with the noise.
    """
    n, runs = 24, 200
    kern = K.get("gini")
    X = _records(CSPRNG(3), n, kern)
    edges = np.array([[i, (i + 1) % n] for i in range(n)] + [[i, (i + 2) % n] for i in range(n)])
    hg = Hypergraph(edges=np.sort(edges, axis=1), n=n, k=2, name="fixed")
    eps = 2.0
    res = [flat_umpc(X, kern, epsilon=eps, hypergraph=hg, seed=100 + r, threat_model="hf")
           for r in range(runs)]
    vals = np.array([r.u_hat for r in res])
    factor = res[0].aux["noise"]["u"]["variance_factor"]
    exact = flat_umpc(X, kern, epsilon=math.inf, hypergraph=hg, seed=1).u_hat
    b = hg.max_degree * kern.sensitivity / (eps * len(edges))
    var = np.mean((vals - exact) ** 2)
    # discrete Laplace variance on the 2^-14 grid is 2 b^2 up to O(2^-28 / |E|^2)
    ratio = var / (2 * b * b * factor)
    assert 0.7 < ratio < 1.4, ratio
    assert abs(np.mean(vals - exact)) < 4 * math.sqrt(2 * factor) * b / math.sqrt(runs)


@pytest.mark.slow
def test_noise_plus_sampling_variance():
    """Var(released) = Var(incomplete U over random edges) + 2 R b^2 (R: see above)."""
    n, runs, eps = 40, 150, 1.0
    X = _records(CSPRNG(4), n, K.get("kendall"))
    rel, inc = [], []
    for r in range(runs):
        res = flat_umpc(X, "kendall", epsilon=eps, edges="2n", seed=500 + r,
                       threat_model="hf", evaluate="incomplete")
        rel.append(res.u_hat)
        inc.append(res.evaluation["u_incomplete"])
    rel, inc = np.array(rel), np.array(inc)
    b2 = (res.max_degree * 2 / (eps * res.edges)) ** 2 * res.aux["noise"]["u"]["variance_factor"]
    dp = np.mean((rel - inc) ** 2) / (2 * b2)
    # Laplace: E X^4 = 24 b^4, so X^2 / (2 b^2) has sd sqrt(20) / 2 and the mean of
    # `runs` of them sd 2.24 / sqrt(runs) (0.18 here; a Polya difference of a larger
    # shape has lighter tails): 3.5 sd either side
    assert abs(dp - 1) < 3.5 * math.sqrt(5 / runs), dp
    total = np.var(rel) / (np.var(inc) + 2 * b2)
    assert 0.65 < total < 1.5, total


@pytest.mark.parametrize("k,name", [(2, "gini"), (3, "triples")])
def test_coalition_view_independent_of_honest_input(k, name):
    """All members of each edge but party 0 collude; their view does not depend on x_0."""
    n_edges = 150
    n = 1 + (k - 1) * n_edges
    others = np.arange(1, n).reshape(n_edges, k - 1)
    edges = np.column_stack([np.zeros(n_edges, np.int64), others])
    hg = Hypergraph(edges=edges, n=n, k=k, name="star")
    samples = {}
    for x0 in (0.05, 0.95):
        X = np.full((n, 1), 0.5)
        X[0, 0] = x0
        s = Session(n, seed=int(x0 * 100), record_views=True)
        # gini's abs gate opens its operand on d < l bits (inputs in [0, 1])
        d = narrow_bits(s.fp.frac_bits, 1, s.ring.bits) if k == 2 else None
        if k == 2:
            assert d is not None and d < L
        flat_umpc(X, name, epsilon=math.inf, hypergraph=hg, session=s)
        ring_vals, bit_vals = [], []
        for p in range(1, n):
            for rec in s.net.view(p):
                if rec.sender == 0 and not rec.offline:
                    payload = np.asarray(rec.payload)
                    if payload.dtype == np.uint64:     # top 3 bits of its width: l, or the
                        w = L if d is None or payload.max() >> np.uint64(d) else d   # gate's d
                        ring_vals.append(payload.ravel() >> np.uint64(w - 3))
                    else:
                        bit_vals.append(payload.ravel())
        samples[x0] = (np.concatenate(ring_vals),
                       np.concatenate(bit_vals) if bit_vals else np.zeros(0, np.uint8))
    (a, bits_a), (b, bits_b) = samples[0.05], samples[0.95]
    assert a.size == b.size and a.size >= 2 * n_edges
    ca = np.bincount(a.astype(np.int64), minlength=8)
    cb = np.bincount(b.astype(np.int64), minlength=8)
    assert stats.chi2_contingency(np.stack([ca, cb]))[1] > 1e-3
    assert stats.chisquare(ca).pvalue > 1e-3
    if k > 2:   # the p-party circuit's masked bits: fair coins whatever x_0 is
        assert bits_a.size == bits_b.size > 1000
        table = [[bits_a.sum(), bits_a.size - bits_a.sum()],
                 [bits_b.sum(), bits_b.size - bits_b.sum()]]
        assert stats.chi2_contingency(np.array(table))[1] > 1e-3
        assert abs(bits_a.mean() - 0.5) < 4 * 0.5 / np.sqrt(bits_a.size)


def test_result_fields_and_rounds():
    X = _records(CSPRNG(6), 50, K.get("gini"))
    res = flat_umpc(X, "gini", epsilon=1.0, seed=2)
    d = res.to_dict()
    for key in ("kernel", "estimate", "epsilon", "n", "edges", "max_degree", "online_bits",
                "offline_bits", "rounds", "seconds", "threat_model", "communication"):
        assert key in d
    assert res.threat_model == "dis" and res.edges == 100 and res.max_degree == 4
    assert res.communication["phases"]["noise"]["online"]["bits"] > 0


def test_stage_seconds_split_the_whole_call():
    """``seconds`` covers the whole call (the report included) and ``stage_seconds`` adds up to
    it, in the order the stages ran; ``evaluation`` appears only when asked for."""
    X = _records(CSPRNG(6), 60, K.get("gini"))
    t0 = time.perf_counter()
    res = flat_umpc(X, "gini", epsilon=1.0, seed=2, threat_model="hf", workers=1)
    wall = time.perf_counter() - t0
    assert list(res.stage_seconds) == ["setup", "computing", "aggregation", "report"]
    assert all(v >= 0 for v in res.stage_seconds.values())
    assert math.isclose(sum(res.stage_seconds.values()), res.seconds, rel_tol=1e-9)
    assert 0 < res.seconds <= wall
    ev = flat_umpc(X, "gini", epsilon=1.0, seed=2, threat_model="hf", workers=1,
                  evaluate="incomplete")
    assert list(ev.stage_seconds) == ["setup", "computing", "aggregation", "evaluation", "report"]
    assert math.isclose(sum(ev.stage_seconds.values()), ev.seconds, rel_tol=1e-9)


def test_auc_counts_are_private_and_masked():
    g = CSPRNG(8)
    n = 40
    S = np.column_stack([g.random(n), g.integers(2, (n,))])
    s = Session(n, seed=3, record_views=True)
    res = flat_umpc(S, "auc", epsilon=1.0, edges="all", session=s, threat_model="hf")
    from ustat import kernels
    from ustat.umpc.release import choose_aux_fraction
    share = choose_aux_fraction(kernels.get("auc"), n, 780, 39)     # all 780 pairs, degree 39
    assert res.aux_epsilon_fraction == share
    assert res.aux["names"] == ["n_pos"] and res.aux["epsilon"] == pytest.approx(share)
    agg = s.net.role("aggregator")
    got = [r.payload for r in s.net.view(agg) if r.phase == "aggregation"]
    labels_sent = np.array([int(p[1]) for p in got])
    # what reaches the aggregator is not the label (0 or 2^14)
    assert np.mean(np.isin(labels_sent, [0, 1 << 14])) < 0.1


def test_resolve_edges():
    assert resolve_edges("2n", 10, 2) == 20
    assert resolve_edges("0.5n", 10, 2) == 5
    assert resolve_edges(7, 10, 2) == 7
    assert resolve_edges("all", 10, 2) is None
    with pytest.raises(ValueError, match="exceeds the number of 2-subsets"):
        resolve_edges(46, 10, 2)
    with pytest.raises(ValueError, match="edges must be like"):
        resolve_edges("lots", 10, 2)
    with pytest.raises(ValueError, match="edges must be >= 1"):
        resolve_edges(0, 10, 2)


def test_bad_input():
    X = np.random.default_rng(0).random((10, 1))
    with pytest.raises(ValueError, match="epsilon must be > 0"):
        flat_umpc(X, "gini", epsilon=0)
    with pytest.raises(ValueError, match="epsilon must be > 0"):
        flat_umpc(X, "gini", epsilon=float("nan"))
    with pytest.raises(ValueError, match="at least k=3 records"):
        flat_umpc(X[:2], "triples")
    with pytest.raises(ValueError, match="row 3, column 0"):
        Y = X.copy()
        Y[3, 0] = np.nan
        flat_umpc(Y, "gini")
    with pytest.raises(ValueError, match="2 column"):
        flat_umpc(X, "kendall")
    with pytest.raises(ValueError, match="unknown kernel"):
        flat_umpc(X, "nope")
    with pytest.raises(ValueError, match="threat_model"):
        flat_umpc(X, "gini", threat_model="x")
    with pytest.raises(ValueError, match="use threat_model='hf'"):
        flat_umpc(np.zeros((20_001, 1)), "gini", edges=10, noise_method="polya")
    with pytest.raises(ValueError, match="use threat_model='hf'"):
        flat_umpc(np.zeros((100_001, 1)), "gini", edges=10)          # in-MPC noise among all
    with pytest.raises(ValueError, match="noise_method must be"):
        flat_umpc(X, "gini", noise_method="laplace")
    with pytest.raises(ValueError, match="exceeds"):
        flat_umpc(X, "gini", edges=46)


def test_two_runs_on_one_session_use_fresh_randomness():
    X = _records(CSPRNG(9), 12, K.get("gini"))
    s = Session(12, seed=5, record_views=True)
    flat_umpc(X, "gini", epsilon=math.inf, edges="all", session=s)
    first = [np.asarray(r.payload).copy() for r in s.net.view(1) if r.phase == "sharing"]
    s.net.reset()
    flat_umpc(X, "gini", epsilon=math.inf, edges="all", session=s)
    second = [np.asarray(r.payload) for r in s.net.view(1) if r.phase == "sharing"]
    assert len(first) == len(second) > 0
    assert not any(np.array_equal(a, b) for a, b in zip(first, second))


def test_inputs_outside_the_kernel_domain_are_refused():
    with pytest.raises(ValueError, match=r"normalized to \[0, 1\].*row 2"):
        flat_umpc(np.array([0.1, 0.5, 100.0, 0.3]), "gini")
    with pytest.raises(ValueError, match=r"codes 0\.\.1, row 1"):
        flat_umpc(np.array([[0.1, 0], [0.2, 5], [0.3, 1]]), "auc")
    with pytest.raises(ValueError, match="integer codes, row 0"):
        flat_umpc(np.array([[0.5], [1.0], [2.0]]), "duplicate")


def test_wrap_around_is_refused():
    X = np.linspace(0, 1, 400)
    with pytest.raises(ValueError, match="wrap around mod 2\\^20"):
        flat_umpc(X, "gini", epsilon=math.inf, bits=20, frac_bits=14, seed=1)


def test_empty_and_invalid_hypergraphs():
    X = np.linspace(0, 1, 6)
    empty = Hypergraph(edges=np.zeros((0, 2), np.int64), n=6, k=2, name="empty")
    with pytest.raises(ValueError, match="no edges"):
        flat_umpc(X, "gini", hypergraph=empty)
    with pytest.raises(ValueError, match=r"ids in 0\.\.5"):
        flat_umpc(X, "gini", hypergraph=Hypergraph(edges=np.array([[0, 9]]), n=10, k=2, name="x"))


@pytest.mark.parametrize("k", [2, 3, 4, 5, 6])
def test_edges_with_a_repeated_member_are_refused(k):
    """Every position pair, for the column comparisons (k <= 4) and the sorted path (k > 4)."""
    from ustat.umpc.inputs import check_edges

    base = np.tile(np.arange(k), (7, 1)) + np.arange(7)[:, None]
    assert check_edges(base, 20, k) is not None
    for i in range(k):
        for j in range(i + 1, k):
            bad = base.copy()
            bad[4, j] = bad[4, i]
            with pytest.raises(ValueError, match="k distinct members"):
                check_edges(bad, 20, k)


def test_vus_rounds_count_the_comparison_circuit():
    g = CSPRNG(12)
    n = 9
    X = np.column_stack([g.random(n), g.integers(3, (n,))])
    res = flat_umpc(X, "vus", epsilon=math.inf, edges="all", seed=2)
    comp = res.communication["phases"]["computing"]["online"]["rounds"]
    assert comp == (math.ceil(math.log2(L - 1)) + 2) + 3     # one comparison batch + 3 products
