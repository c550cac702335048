import math
from collections import deque
from fractions import Fraction

import numpy as np
import pytest

from mpc.arith.rng import CSPRNG
from noise.samplers import discrete_laplace, discrete_laplace_pmf, round_scale_up
from tests.noise._stats import chisq_pvalue
from ustat.ecdf.sensitivity import brute_force_sensitivity
from ustat.ecdf.tree import Tree, best_branching, dlap_variance, draw_noise, interval_sensitivity


def _bfs_diameter(b, L):
    """Diameter of the boundary graph by BFS from every vertex (independent of the DP)."""
    P = b ** L
    adj = [[] for _ in range(P + 1)]
    for lev in range(L + 1):
        s = b ** lev
        for p in range(0, P, s):
            adj[p].append(p + s)
            adj[p + s].append(p)
    best = 0
    for a in range(P + 1):
        d = [-1] * (P + 1)
        d[a] = 0
        q = deque([a])
        while q:
            u = q.popleft()
            for v in adj[u]:
                if d[v] < 0:
                    d[v] = d[u] + 1
                    q.append(v)
        best = max(best, max(d))
    return best


@pytest.mark.parametrize("b,L", [(2, L) for L in range(7)] + [(3, L) for L in range(5)]
                         + [(4, L) for L in range(4)] + [(5, 3), (7, 2), (16, 2)])
def test_sensitivity_dp_equals_bfs(b, L):
    assert interval_sensitivity(b, L) == _bfs_diameter(b, L)


def test_sensitivity_binary_is_L_and_paper_bound_holds():
    for L in range(1, 25):
        assert interval_sensitivity(2, L) == L <= L + 1
    assert Tree(1000).sensitivity("paper") == 11 and Tree(1000).sensitivity() == 10
    with pytest.raises(ValueError, match="branching 2 only"):
        Tree(100, 4).sensitivity("paper")
    with pytest.raises(ValueError, match="'exact' or 'paper'"):
        Tree(100).sensitivity("loose")


def test_sensitivity_exact_for_every_n_against_bfs():
    """Every N in 1..130 and b in 2..8 (truncated trees included): the DP equals BFS over the
    boundary graph; Bank's age (N = 78) needs 6, not L = 7; never above the full tree's."""
    for b in range(2, 9):
        for N in range(1, 131):
            t = Tree(N, b)
            assert t.sensitivity() == brute_force_sensitivity(N, b), (N, b)
            assert t.sensitivity() <= interval_sensitivity(b, t.levels)
    assert Tree(78).sensitivity() == 6 and Tree(78).levels == 7
    assert Tree(78).sensitivity("paper") == 8


@pytest.mark.parametrize("N,b", [(8, 2), (9, 3), (6, 2), (11, 2), (7, 3)])
def test_flow_equals_minimal_node_representation(N, b):
    """min ||chi||_1 over integer chi with chi . Z = 1[a, c) equals the graph distance (MILP),
    for full and truncated trees."""
    from scipy.optimize import LinearConstraint, milp
    t = Tree(N, b)
    N, M, L = t.n_points, t.n_nodes, t.levels
    Z = np.zeros((N, M))
    Z[np.repeat(np.arange(N), L + 1), t.path(np.arange(N)).ravel()] = 1
    worst = 0
    for a in range(N):
        for c in range(a + 1, N + 1):
            target = ((np.arange(N) >= a) & (np.arange(N) < c)).astype(float)
            A = np.hstack([Z, -Z])                      # chi = u - w, u, w >= 0
            res = milp(np.ones(2 * M), constraints=LinearConstraint(A, target, target),
                       integrality=np.ones(2 * M))
            worst = max(worst, round(res.fun))
    assert worst == t.sensitivity() == brute_force_sensitivity(N, b)


def test_tree_paths_follow_the_paper():
    t = Tree(13)
    assert t.levels == 4 and list(t.level_sizes) == [13, 7, 4, 2, 1] and t.n_nodes == 27
    P = t.path(np.arange(13))
    for i in range(1, 14):                                  # eta_{ceil(i/2^l), l}, 1-based
        for lev in range(5):
            assert P[i - 1, lev] == t.offsets[lev] + math.ceil(i / 2 ** lev) - 1
    assert Tree(1).levels == 0 and Tree(1).sensitivity() == 1
    assert Tree(9, 3).levels == 2 and Tree(10, 3).levels == 3
    with pytest.raises(ValueError, match="indices"):
        t.path([13])
    with pytest.raises(ValueError, match="n_points"):
        Tree(0)


def test_variance_formula_and_branching_choice():
    for t in (0.5, 1, 10, 1000):
        a = math.exp(-1 / t)
        k = np.arange(-200 * max(t, 1), 200 * max(t, 1) + 1)
        assert dlap_variance(t) == pytest.approx(float(np.sum(k ** 2 * discrete_laplace_pmf(k, t))),
                                                 rel=1e-9)
        assert dlap_variance(t) == pytest.approx(2 * a / (1 - a) ** 2, rel=1e-12)
        assert dlap_variance(t) < 2 * t * t
    assert best_branching(1024, 1.0) == 2
    nz = draw_noise(Tree(1024), 1.0, CSPRNG(1), mode="central", rule="paper")
    # the paper's 2 (L+1)^3 / eps^2 is the continuous value in counts
    assert nz.mse_counts == pytest.approx(2 * 11 ** 3, rel=2e-3) and nz.mse_counts < 2 * 11 ** 3
    assert nz.mse(100) == nz.mse_counts / 1e4


def test_noise_modes_and_accounting():
    t = Tree(50)
    nz = draw_noise(t, 0.7, [CSPRNG(1), CSPRNG(2)], mode="split")
    assert nz.shares.shape == (2, t.n_nodes) and nz.epsilon <= 0.7
    assert nz.scale == round_scale_up(Fraction(t.sensitivity()) / Fraction(0.7))
    assert nz.epsilon == float(Fraction(t.sensitivity()) / nz.scale)
    assert nz.coalition_epsilon() > nz.epsilon             # halves are weaker
    each = draw_noise(t, 0.7, CSPRNG(3), mode="each")
    assert each.coalition_epsilon() == each.epsilon
    assert each.mse_counts == pytest.approx(2 * nz.mse_counts)
    off = draw_noise(t, math.inf, CSPRNG(1))
    assert off.scale is None and not off.shares.any() and off.mse_counts == 0
    with pytest.raises(ValueError, match="epsilon must be > 0"):
        draw_noise(t, 0, CSPRNG(1))
    with pytest.raises(ValueError, match="noise mode"):
        draw_noise(t, 1, CSPRNG(1), mode="half")
    with pytest.raises(ValueError, match="one generator per server"):
        draw_noise(t, 1, [CSPRNG(1)], servers=2)


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["split", "central"])
def test_node_noise_is_discrete_laplace(mode):
    """The node noise (sum of the servers' parts) has the DLap(a = exp(-1/t)) law (chi-square)."""
    t = Tree(4096)
    nz = draw_noise(t, 1.0, CSPRNG(7), mode=mode)
    s = float(nz.scale)
    k = np.arange(-int(12 * s), int(12 * s) + 1)
    assert chisq_pvalue(nz.total, k, discrete_laplace_pmf(k, s)) > 1e-3


@pytest.mark.slow
def test_per_point_mse_matches_derivation():
    """Mean squared path noise over 600 releases of N = 1024 vs (L+1) 2a/(1-a)^2.

    Points of one release share nodes, so the tolerance is 5 standard errors of
    the per-release means (computed from the runs themselves).
    """
    t = Tree(1024)
    g = CSPRNG(11)
    nz = draw_noise(t, 1.0, g, mode="central")
    eta = discrete_laplace(nz.scale, (600, t.n_nodes), g)          # 600 releases
    per_run = np.mean(eta[:, t.path(np.arange(1024))].sum(axis=2).astype(np.float64) ** 2, axis=1)
    se = per_run.std(ddof=1) / math.sqrt(per_run.size)
    assert abs(per_run.mean() - nz.mse_counts) < 5 * se
    assert abs(per_run.mean() / nz.mse_counts - 1) < 0.1
