"""Tests for ustat.sampling: hypergraph samplers (Sinh & Ramon, Algorithm 1 / Sec. 6.2.3)."""

import itertools
import math

import numpy as np
import pytest
from scipy import stats

from mpc.arith.rng import CSPRNG
from ustat import sampling as S


def rng(seed=0):
    return CSPRNG(f"test-sampling-{seed}")


def check_valid(g, n, k):
    """Edges in range, strictly increasing rows, lexicographic rows, no duplicates."""
    e = g.edges
    assert e.dtype == np.int64 and e.ndim == 2 and e.shape[1] == k
    assert g.n == n and g.k == k
    if e.shape[0] == 0:
        return
    assert e.min() >= 0 and e.max() < n
    assert np.all(e[:, 1:] > e[:, :-1]), "rows must be strictly increasing"
    rows = [tuple(r) for r in e.tolist()]
    assert rows == sorted(rows), "rows must be in lexicographic order"
    assert len(set(rows)) == len(rows), "duplicate edges"


# ---------------------------------------------------------------- all_edges
@pytest.mark.parametrize("n,k", [(n, k) for n in range(2, 9) for k in range(2, n + 1)]
                         + [(30, 3), (17, 5)])
def test_all_edges_matches_itertools(n, k):
    g = S.all_edges(n, k)
    ref = np.array(list(itertools.combinations(range(n), k)), dtype=np.int64)
    assert g.m == math.comb(n, k)
    assert np.array_equal(g.edges, ref)
    assert g.name == "all"
    assert np.all(g.degrees == math.comb(n - 1, k - 1))


def test_all_edges_refuses_large():
    with pytest.raises(ValueError, match="enumeration limit"):
        S.all_edges(10**5, 2)
    with pytest.raises(ValueError, match="enumeration limit"):
        S.all_edges(50, 3, limit=100)


def test_rank_unrank_roundtrip_large_n():
    n, k = 10**6, 3
    N = math.comb(n, k)
    r = np.sort(rng().choice(N, 1000))
    e = S._unrank_lex(r, n, k)
    assert np.all(e[:, 1:] > e[:, :-1])
    assert np.array_equal(S._lex_ranks(e, n, k), r)
    # spot-check against the closed form for the first and last subsets
    ends = S._unrank_lex(np.array([0, N - 1]), n, k)
    assert ends.tolist() == [[0, 1, 2], [n - 3, n - 2, n - 1]]


# ---------------------------------------------------------------- balanced
BALANCED_CASES = [
    (2, 1, 2), (3, 2, 2), (3, 3, 2), (4, 3, 2), (5, 7, 2), (6, 15, 2), (7, 20, 2),
    (10, 23, 2), (10, 44, 2), (10, 45, 2), (11, 30, 2), (50, 99, 2), (101, 1000, 2),
    (1000, 2001, 2), (997, 4999, 2),
    (3, 1, 3), (4, 3, 3), (5, 9, 3), (6, 10, 3), (6, 19, 3), (7, 34, 3), (9, 50, 3),
    (12, 100, 3), (100, 333, 3), (1000, 2500, 3),
    (4, 1, 4), (5, 4, 4), (6, 7, 4), (7, 30, 4), (8, 69, 4), (9, 100, 4), (200, 777, 4),
    (6, 3, 5), (9, 77, 5), (500, 1234, 5), (20, 7, 6),
    (70_000, 50_000, 4), (3000, 20_000, 8),  # rows pack into 2+ words: hashed keys
]


@pytest.mark.parametrize("n,m,k", BALANCED_CASES)
def test_balanced_degree_property(n, m, k):
    g = S.balanced(n, m, k, rng(n * 1000 + m + k))
    check_valid(g, n, k)
    assert g.m == m and g.name == "balanced"
    deg = g.degrees
    assert deg.sum() == k * m
    lo, hi = (k * m) // n, -(-(k * m) // n)
    assert deg.min() >= lo and deg.max() <= hi, (deg.min(), deg.max(), lo, hi)
    assert g.max_degree == hi


def test_balanced_many_small_cases_all_densities():
    # every m from 1 to C(n, k) for a few small (n, k): sparse, dense, complete
    r = rng(7)
    for n, k in [(5, 2), (6, 3), (7, 2), (6, 4)]:
        N = math.comb(n, k)
        for m in range(1, N + 1):
            g = S.balanced(n, m, k, r)
            check_valid(g, n, k)
            assert g.m == m
            deg = g.degrees
            assert deg.max() - deg.min() <= 1 and deg.sum() == k * m


def test_balanced_large_fast():
    import time
    t = time.perf_counter()
    g = S.balanced(200_000, 400_000, 2, rng(3))
    assert time.perf_counter() - t < 5.0
    assert g.m == 400_000
    assert g.degrees.min() == 4 and g.degrees.max() == 4
    e = g.edges
    assert np.all(e[:, 1] > e[:, 0])
    key = e[:, 0] * 200_000 + e[:, 1]
    assert np.unique(key).size == key.size


def test_balanced_reproducible_and_seed_dependent():
    a = S.balanced(100, 300, 3, CSPRNG(5)).edges
    b = S.balanced(100, 300, 3, CSPRNG(5)).edges
    c = S.balanced(100, 300, 3, CSPRNG(6)).edges
    assert np.array_equal(a, b)
    assert not np.array_equal(a, c)


def test_balanced_accepts_seed_via_as_rng():
    a = S.balanced(30, 40, 2, 11).edges
    b = S.balanced(30, 40, 2, CSPRNG(11)).edges
    assert np.array_equal(a, b)


def test_balanced_close_to_uniform_small():
    # n = 4, k = 2, m = 2: the balanced graphs are exactly the 3 perfect
    # matchings; each should be drawn about 1/3 of the time.
    r = rng(9)
    counts = {}
    for _ in range(600):
        key = tuple(map(tuple, S.balanced(4, 2, 2, r).edges.tolist()))
        counts[key] = counts.get(key, 0) + 1
    assert set(counts) == {((0, 1), (2, 3)), ((0, 2), (1, 3)), ((0, 3), (1, 2))}
    assert stats.chisquare(list(counts.values())).pvalue > 1e-3


def test_balanced_uniform_over_nonisomorphic_graphs():
    # n = 6, k = 2, m = 6: the 2-regular graphs are 60 six-cycles and 10 pairs
    # of triangles, so a uniform sampler gives two triangles w.p. 1/7. (The
    # plain stub permutation + repair is biased here; the switch chain fixes it.)
    r = rng(10)
    reps, tri = 500, 0
    for _ in range(reps):
        e = S.balanced(6, 6, 2, r).edges
        adj = np.zeros((6, 6), dtype=bool)
        adj[e[:, 0], e[:, 1]] = adj[e[:, 1], e[:, 0]] = True
        a, b = np.flatnonzero(adj[0])
        tri += int(adj[a, b])
    p = 1 / 7
    assert abs(tri / reps - p) < 4 * math.sqrt(p * (1 - p) / reps), tri / reps


# ---------------------------------------------------------------- uniform
@pytest.mark.parametrize("n,m,k", [(5, 10, 2), (6, 1, 3), (7, 35, 3), (30, 100, 2),
                                   (10**4, 5000, 2), (10**6, 3000, 4), (100, 50, 60),
                                   (10**6, 2000, 3)])
def test_uniform_valid(n, m, k):
    g = S.uniform(n, m, k, rng(n + m + k))
    check_valid(g, n, k)
    assert g.m == m and g.name == "uniform"


def test_uniform_complete_when_m_is_all():
    g = S.uniform(7, 21, 2, rng())
    assert np.array_equal(g.edges, S.all_edges(7, 2).edges)


def test_uniform_edge_marginals_chi_square():
    # n = 7, k = 3: 35 subsets, m = 5 per draw; each subset has probability 5/35.
    r = rng(11)
    counts = np.zeros(35, dtype=np.int64)
    reps = 1400
    for _ in range(reps):
        e = S.uniform(7, 5, 3, r).edges
        counts[S._lex_ranks(e, 7, 3)] += 1
    assert counts.sum() == 5 * reps
    assert stats.chisquare(counts).pvalue > 1e-3


def test_uniform_vertex_marginals_large_n_rejection_path():
    # C(n, k) >= 2^61 uses the rejection path: check vertex frequencies.
    n, k, m = 70, 30, 3000
    assert math.comb(n, k) >= 1 << 61
    g = S.uniform(n, m, k, rng(12))
    check_valid(g, n, k)
    assert stats.chisquare(g.degrees).pvalue > 1e-3


# ---------------------------------------------------------------- bernoulli
def test_bernoulli_expected_size_probability():
    r = rng(13)
    n, k, p = 20, 2, 0.3
    N = math.comb(n, k)
    sizes = np.array([S.bernoulli(n, p, k, r).m for _ in range(400)])
    mean, sd = N * p, math.sqrt(N * p * (1 - p))
    assert abs(sizes.mean() - mean) < 4 * sd / math.sqrt(sizes.size)
    assert abs(sizes.std() - sd) < 0.25 * sd


def test_bernoulli_expected_size_m_large_n():
    r = rng(14)
    n, k, m = 10**5, 3, 2000
    sizes = []
    for _ in range(30):
        g = S.bernoulli(n, m, k, r)
        check_valid(g, n, k)
        sizes.append(g.m)
    sizes = np.array(sizes)
    assert abs(sizes.mean() - m) < 4 * math.sqrt(m) / math.sqrt(sizes.size)
    assert g.name == "bernoulli"


def test_bernoulli_edge_marginals_small():
    r = rng(15)
    n, k, p = 5, 2, 0.4
    counts = np.zeros(10, dtype=np.int64)
    reps = 1000
    for _ in range(reps):
        e = S.bernoulli(n, p, k, r).edges
        counts[S._lex_ranks(e, n, k)] += 1
    # each subset is in E with probability p, independently of the others
    assert np.all(np.abs(counts / reps - p) < 4 * math.sqrt(p * (1 - p) / reps))


def test_bernoulli_p_one_and_huge_N():
    assert S.bernoulli(6, 1.0, 3).m == 20
    g = S.bernoulli(10**6, 1e-19, 4, rng(16))  # C(n,4) ~ 4e22, E[|E|] ~ 4170
    check_valid(g, 10**6, 4)
    assert 3700 < g.m < 4700


def test_binomial_sampler_distribution():
    r = rng(17)
    draws = np.array([S._binomial(12, 0.25, r) for _ in range(3000)])
    obs = np.bincount(draws, minlength=13)
    exp = stats.binom.pmf(np.arange(13), 12, 0.25) * draws.size
    keep = exp > 5
    obs2 = np.append(obs[keep], obs[~keep].sum())
    exp2 = np.append(exp[keep], exp[~keep].sum())
    assert stats.chisquare(obs2, exp2 * obs2.sum() / exp2.sum()).pvalue > 1e-3


# ---------------------------------------------------------------- Hypergraph, dispatch
def test_hypergraph_properties_and_chunks():
    g = S.sample("balanced", 10, 12, 3, rng(18))
    assert g.m == 12 and len(g) == 12
    assert g.degrees.dtype == np.int64 and g.degrees.shape == (10,)
    assert g.max_degree == g.degrees.max()
    chunks = list(g.iter_chunks(5))
    assert [c.shape[0] for c in chunks] == [5, 5, 2]
    assert np.array_equal(np.concatenate(chunks), g.edges)
    with pytest.raises(ValueError, match="size"):
        list(g.iter_chunks(0))
    with pytest.raises((AttributeError, Exception)):
        g.n = 3
    with pytest.raises(ValueError):
        g.edges[0, 0] = 1  # read-only


@pytest.mark.parametrize("name", ["balanced", "uniform", "bernoulli"])
def test_sample_dispatch(name):
    g = S.sample(name, 40, 60, 2, rng(19))
    assert g.name == name
    check_valid(g, 40, 2)


def test_sample_all_and_unknown():
    assert S.sample("all", 6, None, 3).m == 20
    assert S.sample("all", 6, 20, 3).m == 20
    with pytest.raises(ValueError, match="C\\(n, k\\) = 20"):
        S.sample("all", 6, 5, 3)
    with pytest.raises(ValueError, match="balanced, uniform, bernoulli, all"):
        S.sample("stratified", 6, 5, 3)


# ---------------------------------------------------------------- validation
@pytest.mark.parametrize("fn", [S.balanced, S.uniform, S.bernoulli])
def test_validation_errors(fn):
    with pytest.raises(ValueError, match="n must be >= k"):
        fn(2, 1, 3)
    with pytest.raises(ValueError, match="k must be >= 2"):
        fn(5, 1, 1)
    with pytest.raises(ValueError, match="m must be <= C\\(n, k\\)"):
        fn(5, 11, 2)
    with pytest.raises(TypeError, match="n must be an integer"):
        fn(5.0, 3, 2)
    with pytest.raises(TypeError, match="k must be an integer"):
        fn(5, 3, 2.0)
    with pytest.raises(TypeError, match="n must be an integer"):
        fn(True, 1, 2)


@pytest.mark.parametrize("fn", [S.balanced, S.uniform])
def test_validation_m(fn):
    with pytest.raises(ValueError, match="m must be >= 1"):
        fn(5, 0, 2)
    with pytest.raises(TypeError, match="m must be an integer"):
        fn(5, 2.5, 2)
    # numpy integers are integers
    assert fn(np.int64(5), np.int32(3), np.int64(2), rng()).m == 3


def test_bernoulli_validation():
    with pytest.raises(ValueError, match="p_or_m"):
        S.bernoulli(5, 1.5, 2)
    with pytest.raises(ValueError, match="p_or_m"):
        S.bernoulli(5, 0.0, 2)
    with pytest.raises(ValueError, match="m must be >= 1"):
        S.bernoulli(5, 0, 2)
    with pytest.raises(TypeError, match="p_or_m"):
        S.bernoulli(5, "0.5", 2)


def test_all_edges_validation():
    with pytest.raises(ValueError, match="n must be >= k"):
        S.all_edges(3, 4)
    with pytest.raises(TypeError, match="k must be an integer"):
        S.all_edges(5, "2")


def test_random_ksubsets_dense_case_is_uniform():
    """k^2 > n: the k smallest of n random words (argpartition) give uniform k-subsets."""
    from ustat.sampling import _lex_ranks, _random_ksubsets

    rows = _random_ksubsets(8, 3, 11_200, CSPRNG(44))
    assert np.all(rows[:, 1:] > rows[:, :-1])
    counts = np.bincount(_lex_ranks(rows, 8, 3), minlength=56)
    assert stats.chisquare(counts).pvalue > 1e-4
