"""Views: the receiver's is independent of m_{1-c}, the sender's of the choice bits.

Two-world tests with fixed seeds: both worlds use the same CSPRNG streams and
differ only in the secret under test, so (1) every part of the view that
should not depend on it is compared *exactly*, and (2) the parts that are
masked by it are tested for uniformity in each world and for equality of
distribution across worlds (chi-square over byte values, 256 bins, >= 19,000
bytes per world so that each bin expects >= 75). The threshold p > 1e-4 is
fixed in advance; with fixed seeds each test is deterministic, and a leak
(a constant or input-correlated byte) drives p to ~0.
"""

import numpy as np
import pytest
from scipy import stats

from mpc.arith.rng import as_rng
from mpc.ot import chosen_ot, correlated_ot, random_ot
from mpc.session import Session

P_MIN = 1e-4


def _uniform_bytes(data: np.ndarray) -> float:
    counts = np.bincount(np.asarray(data, np.uint8).ravel(), minlength=256)
    return stats.chisquare(counts).pvalue


def _same_distribution(a: np.ndarray, b: np.ndarray) -> float:
    table = np.stack([np.bincount(np.asarray(x, np.uint8).ravel(), minlength=256)
                      for x in (a, b)])
    return stats.chi2_contingency(table).pvalue


def _streams(tag):
    root = as_rng(99).derive(tag)
    return root.derive("sender"), root.derive("receiver")


def _views(session, party):
    return [(r.sender, r.round, np.asarray(r.payload)) for r in session.net.view(party)]


@pytest.mark.parametrize("method,m", [("base", 300), ("iknp", 300)])
def test_receiver_view_independent_of_the_other_message(method, m):
    P, L = 2, 32
    choice = as_rng(5).bits((P, m))
    mc = as_rng(6).bytes_array(P * m * L).reshape(P, m, L)
    worlds = []
    for fill in (0x00, 0xFF):
        other = np.full((P, m, L), fill, np.uint8)
        m0 = np.where(choice[..., None] == 0, mc, other)
        m1 = np.where(choice[..., None] == 1, mc, other)
        s = Session(3, seed=1, record_views=True)
        rs, rr = _streams(method)
        got = chosen_ot(s, [0, 0], [1, 1], choice, m0, m1, rng_sender=rs, rng_receiver=rr,
                        method=method, crossover=1)
        assert np.array_equal(got, mc)
        worlds.append(_views(s, 1))
    v0, v1 = worlds
    assert len(v0) == len(v1)
    y0, y1 = v0[-1][2], v1[-1][2]                       # the last message: (y_0, y_1)
    for a, b in zip(v0[:-1], v1[:-1]):                  # everything before it: identical
        assert a[:2] == b[:2] and np.array_equal(a[2], b[2])
    c = choice.reshape(-1)                              # one group: instances back to back
    idx = np.arange(c.size)
    assert np.array_equal(y0[idx, c], y1[idx, c])       # the chosen ciphertexts agree
    hidden0, hidden1 = y0[idx, 1 - c], y1[idx, 1 - c]
    assert _uniform_bytes(hidden0) > P_MIN and _uniform_bytes(hidden1) > P_MIN
    assert _same_distribution(hidden0, hidden1) > P_MIN


@pytest.mark.parametrize("method,m", [("base", 600), ("iknp", 4096)])
def test_sender_view_independent_of_the_choices(method, m):
    worlds = []
    for bit in (0, 1):
        s = Session(3, seed=1, record_views=True)
        rs, rr = _streams("sender-view")
        random_ot(s, [0], [1], np.full((1, m), bit, np.uint8), rng_sender=rs, rng_receiver=rr,
                  method=method)
        worlds.append(_views(s, 0))
    payloads = []
    for view in worlds:
        if method == "base":                        # one message to the sender: the B points
            (sender, _, pts), = view
            assert sender == 1 and pts.shape == (m, 33)
            assert _uniform_bytes(pts[:, 1:]) > P_MIN                 # x coordinates
            assert abs(np.mean(pts[:, 0] == 3) - 0.5) < 5 * 0.5 / np.sqrt(m)  # y parity
            payloads.append(pts)
        else:                                       # A (from R), then the IKNP matrix u
            (_, _, a), (_, _, u) = view
            assert a.shape == (33,) and u.shape == (128, m // 8)
            assert _uniform_bytes(u) > P_MIN
            payloads.append(u)
    assert _same_distribution(payloads[0][..., 1:], payloads[1][..., 1:]) > P_MIN


def test_iknp_matrix_columns_uncorrelated_with_the_choices():
    # One world with random choices: split the columns of u by r_j; the ones they
    # hold must be distributed alike (a leak of r_j into column j would split them).
    m = 8192
    s = Session(2, seed=3, record_views=True)
    rs, rr = _streams("columns")
    r = rr.derive("choices").bits((1, m))
    delta = np.ones((1, 16), np.uint8)
    q, t = correlated_ot(s, [0], [1], r, delta, rng_sender=rs, rng_receiver=rr)
    assert np.array_equal(t, q ^ r[..., None] * delta[:, None])
    u = np.asarray(s.net.view(0)[-1].payload)
    ones = np.unpackbits(u, axis=1, bitorder="little")[:, :m].sum(axis=0)   # per column
    a, b = ones[r[0] == 0], ones[r[0] == 1]
    assert stats.mannwhitneyu(a, b).pvalue > P_MIN
    assert abs(ones.mean() / 128 - 0.5) < 5 * np.sqrt(0.25 / (128 * m))
