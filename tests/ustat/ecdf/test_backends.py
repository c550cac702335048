"""The three backends release the same values; traffic equals the formulas; views are input-free."""

import numpy as np
import pytest
from scipy import stats

from fss import dcf
from mpc.arith.rng import CSPRNG
from tests.api import flat_deploy, flat_release
from ustat.ecdf.release import exact_counts
from ustat.ecdf.sensitivity import brute_force_sensitivity
from ustat.ecdf.servers import domain_bits, index_bits, key_upload_bits

from ._data import bank

INF = float("inf")


@pytest.mark.parametrize("backend", ["central", "fss", "pointwise"])
def test_eps_inf_equals_numpy_ecdf_on_bank(backend):
    x = bank("age")[:, 0]
    tau = np.unique(x)
    r = flat_release(x, tau, INF, backend=backend, seed=1)
    expect = np.searchsorted(np.sort(x), tau, side="right") / x.size     # numpy's ECDF
    assert np.array_equal(r.values, expect)
    assert r.account["mse"] == 0 and r.epsilon == INF


def test_fss_equals_pointwise_with_the_same_noise():
    x = bank("duration")[:1500, 0]
    tau = np.linspace(0, 5000, 300)
    for mode in ("each", "split"):
        a = flat_release(x, tau, 0.5, backend="fss", seed=3, noise_mode=mode, evaluate=True)
        b = flat_release(x, tau, 0.5, backend="pointwise", seed=3, noise_mode=mode)
        assert np.array_equal(a.counts, b.counts)
        assert not np.array_equal(a.counts, a.exact)            # noise was added


def test_repeated_queries_reuse_the_node_noise():
    x = CSPRNG(2).random(200)
    dep = flat_deploy(x, np.linspace(0, 1, 64), 1.0, backend="fss", seed=4)
    first = dep.query(np.arange(64))
    again = dep.query([5, 5, 63, 0])
    assert np.array_equal(again, first[[5, 5, 63, 0]])
    exact = exact_counts(np.searchsorted(np.linspace(0, 1, 64), x, side="left"), 64)
    assert np.array_equal(first - exact, dep.noise.at(np.arange(64)))


def test_pointwise_supports_more_servers_and_fss_refuses():
    x = CSPRNG(5).random(100)
    tau = np.linspace(0, 1, 10)
    r = flat_release(x, tau, INF, backend="pointwise", servers=3, seed=1, evaluate=True)
    assert np.array_equal(r.counts, r.exact) and r.account["servers"] == 3
    r3 = flat_release(x, tau, 1.0, backend="pointwise", servers=3, seed=1, noise_mode="split")
    assert r3.account["noise_mode"] == "split"
    with pytest.raises(ValueError, match="needs servers = 2"):
        flat_deploy(x, tau, 1.0, backend="fss", servers=3)


def test_weights_give_class_counts():
    g = CSPRNG(6)
    x, w = g.random(300), g.integers(2, (300,))
    tau = np.linspace(0, 1, 33)
    for backend in ("central", "fss", "pointwise"):
        r = flat_release(x, tau, INF, backend=backend, weights=w, seed=2)
        assert np.array_equal(r.counts, [(w * (x <= t)).sum() for t in tau])
    with pytest.raises(ValueError, match="weights must be"):
        flat_deploy(x, tau, 1.0, weights=np.full(300, 2))


def test_traffic_equals_the_formulas():
    n, N, Q = 120, 100, 37
    x = CSPRNG(7).random(n)
    tau = np.linspace(0, 1, N)
    dep = flat_deploy(x, tau, 1.0, backend="fss", seed=8)
    rep = dep.communication()
    l, nb = 32, domain_bits(N)
    params = dcf.DCFParams(nb, l)
    one, _ = dcf.gen(params, np.zeros(1, np.uint64), 1, CSPRNG(1))
    K = 8 * dcf.instance_payloads(one)[0].size     # one party's key as uploaded: its record
    assert K == key_upload_bits(N, l) == one.nbits and dcf.key_bits(params) <= K
    assert rep["offline"]["bits"] == 2 * n * K and rep["offline"]["rounds"] == 1
    assert rep["offline"]["max_party_sent_bits"] == 2 * K
    dep.query(np.arange(Q))
    rep = dep.communication()
    assert rep["online"]["bits"] == 2 * Q * (index_bits(N) + l) and rep["online"]["rounds"] == 2
    pw = flat_deploy(x, tau, 1.0, backend="pointwise", seed=8)
    pw.query(np.arange(Q))
    rep = pw.communication()
    assert rep["offline"]["bits"] == 0 and rep["online"]["rounds"] == 3
    assert rep["online"]["bits"] == (n + 2) * Q * index_bits(N) + 2 * n * Q * l + 2 * Q * l


def _server0_bytes(values, N):
    dep = flat_deploy(values, np.arange(N, dtype=float), 1.0, backend="fss", seed=9,
                      record_views=True)
    dep.query(np.arange(N))
    view = dep.session.net.view(dep.session.net.role("server0"))
    keys = [m.payload for m in view if m.offline]
    queries = [np.asarray(m.payload) for m in view if not m.offline]
    return np.concatenate(keys), queries, {k.shape for k in keys}


def test_fss_server_view_is_independent_of_the_values():
    """Two worlds (every value below the grid / above it): server 0's keys have the same law."""
    n, N = 400, 200
    lo, q_lo, shape_lo = _server0_bytes(np.full(n, -1.0), N)
    hi, q_hi, shape_hi = _server0_bytes(np.full(n, 1e9), N)
    assert shape_lo == shape_hi and len(shape_lo) == 1                      # one record each
    assert all(np.array_equal(a, b) for a, b in zip(q_lo, q_hi))            # public queries
    table = np.stack([np.bincount(lo, minlength=256), np.bincount(hi, minlength=256)])
    table = table[:, table.sum(axis=0) > 0]
    assert stats.chi2_contingency(table)[1] > 1e-3


def test_pointwise_server_view_is_uniform_for_any_values():
    tops = []
    for v in (-1.0, 1e9):
        dep = flat_deploy(np.full(300, v), np.arange(50, dtype=float), 1.0, backend="pointwise",
                          seed=10, record_views=True)
        dep.query(np.arange(50))
        view = dep.session.net.view(dep.session.net.role("server1"))
        shares = np.concatenate([np.asarray(m.payload).ravel() for m in view
                                 if m.sender < 300])
        tops.append(np.bincount((shares >> np.uint64(28)).astype(np.int64), minlength=16))
    assert stats.chi2_contingency(np.stack(tops))[1] > 1e-3


def test_bad_inputs():
    x = np.array([0.1, 0.5, 2.0])
    with pytest.raises(ValueError, match="outside the bounds"):
        flat_deploy(x, [0.0, 1.0], 1.0, bounds=(0, 1))
    r = flat_release(x, [0.0, 1.0], INF, bounds=(0, 1), clip=True, backend="central")
    assert list(r.counts) == [0, 3]
    with pytest.raises(ValueError, match="epsilon must be > 0"):
        flat_deploy(x, [0.0, 1.0], 0.0)
    with pytest.raises(ValueError, match="epsilon must be > 0"):
        flat_deploy(x, [0.0, 1.0], -1.0)
    with pytest.raises(ValueError, match="backend must be"):
        flat_deploy(x, [0.0, 1.0], 1.0, backend="cloud")
    with pytest.raises(ValueError, match=r"do not fit in Z_2\^8"):
        flat_deploy(x, [0.0, 1.0], 1e-6, bits=8, backend="fss")
    with pytest.raises(ValueError, match="N = 0"):
        flat_deploy(x, [], 1.0)
    with pytest.raises(ValueError, match="no records"):
        flat_deploy([], [0.0], 1.0)
    with pytest.raises(ValueError, match="indices"):
        flat_deploy(x, [0.0, 1.0], 1.0, backend="fss").query([2])


def test_other_branching_factors():
    x = CSPRNG(12).random(150)
    tau = np.linspace(0, 1, 40)
    for b in (3, 4):
        r = flat_release(x, tau, INF, backend="fss", branching=b, seed=1, evaluate=True)
        assert np.array_equal(r.counts, r.exact)
        r = flat_release(x, tau, 1.0, backend="central", branching=b, seed=1)
        L = r.account["levels"] - 1
        assert r.account["branching"] == b and int(np.ceil(np.log(40) / np.log(b))) == L
        full = 2 * L if b == 3 else 3 * L - 1          # the full tree of b^L leaves
        assert r.account["sensitivity_nodes"] == brute_force_sensitivity(40, b) <= full
