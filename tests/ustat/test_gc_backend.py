"""The dealer-free "gc" backend of U-MPC (ustat.umpc.gc_backend): exactness, costs, trust, views."""

from __future__ import annotations

import math
from types import SimpleNamespace

import numpy as np
import pytest

import ustat.kernels as K
from mpc.arith.ring import fixed_point
from mpc.arith.rng import CSPRNG
from mpc.comm.network import Network
from tests.api import flat_umpc
from ustat.umpc.chunk import BACKENDS, ChunkSpec, get_backend, run_chunk
from ustat.umpc.gc_backend import GCBackend, edge_costs

K2 = ["gini", "kendall", "auc", "duplicate", "renyi2", "rand"]


def records(name, n, seed):
    kern = K.get(name)
    g = np.random.default_rng(seed)
    X = g.random((n, kern.columns))
    X[:, :] = np.round(X * 8) / 8                     # ties in every numeric column
    for c in kern.categorical:
        X[:, c] = g.integers(0, kern.extra.get("levels", {}).get(c, 4), n)
    X[0] = [1.0 if c not in kern.categorical else X[0, c] for c in range(kern.columns)]
    X[1, 0] = 0.0 if 0 not in kern.categorical else X[1, 0]
    return X


def test_registered():
    assert isinstance(get_backend("gc"), GCBackend)
    assert BACKENDS["gc"].name == "gc"
    assert "no dealer" in BACKENDS["gc"].trust


@pytest.mark.parametrize("name", K2)
def test_no_noise_release_equals_dealer_exactly(name):
    X = records(name, 24, 5)
    kw = dict(epsilon=math.inf, edges="2n", seed=9, workers=1, chunk_size=20)
    dealer = flat_umpc(X, name, backend="dealer", **kw)
    gc = flat_umpc(X, name, backend="gc", evaluate="incomplete", **kw)
    assert gc.estimate == dealer.estimate
    assert gc.u_hat == dealer.u_hat
    assert gc.u_hat == pytest.approx(gc.evaluation["u_incomplete"], abs=1e-12)
    assert (gc.backend, dealer.backend) == ("gc", "dealer")
    assert gc.backend_trust == BACKENDS["gc"].trust
    assert gc.chunks == 3


@pytest.mark.parametrize("name", ["gini", "auc", "rand"])
def test_measured_costs_equal_formula_and_no_dealer_traffic(name):
    X = records(name, 20, 2)
    res = flat_umpc(X, name, epsilon=math.inf, edges="2n", seed=1, workers=1, backend="gc")
    prec = getattr(res, "precision", None) or dict(bits=40, frac_bits=14, input_frac_bits=14)
    sp = SimpleNamespace(**{k: prec[k] for k in ("bits", "frac_bits", "input_frac_bits")})
    f = edge_costs(K.get(name), sp)
    ph = res.communication["phases"]["computing"]
    assert ph["offline"]["bits"] == res.edges * f["offline_bits"]
    assert ph["online"]["bits"] == res.edges * f["online_bits"]
    assert (ph["offline"]["rounds"], ph["online"]["rounds"]) == (f["offline_rounds"],
                                                                 f["online_rounds"])
    for off in ("online", "offline"):
        assert res.communication[off]["roles"]["dealer"] == {"sent_bits": 0, "received_bits": 0}
    assert res.offline_bits == res.edges * f["offline_bits"]
    assert BACKENDS["gc"].edge_costs(K.get(name), sp) == f


def _chunk_spec(name, backend="gc", record_views=False, bits=40, frac=14, in_frac=14):
    return ChunkSpec(kernel=K.get(name), bits=bits, frac_bits=frac, input_frac_bits=in_frac,
                     roles=("dealer", "aggregator"), streams=CSPRNG(seed=4).derive("chunks"),
                     backend=backend, record_views=record_views)


def _encoded(name, m, seed, bits=40, in_frac=14):
    kern = K.get(name)
    fp = fixed_point(bits, in_frac)
    X = records(name, 2 * m, seed)
    enc = np.empty(X.shape, np.uint64)
    for c in range(kern.columns):
        enc[:, c] = (fp.ring.from_signed(X[:, c].astype(np.int64)) if c in kern.categorical
                     else fp.encode(X[:, c]))
    return enc.reshape(m, 2, kern.columns)


def test_chunk_traffic_lands_on_garbler_and_evaluator():
    """Per slot: member 0 (garbler) and member 1 (evaluator) send what the formulas say."""
    name = "gini"
    spec = _chunk_spec(name)
    values = _encoded(name, 12, 3)
    res = run_chunk(spec, 0, values)
    t = res.traffic
    assert t.period == 2                       # every edge the same pattern
    f = edge_costs(K.get(name), spec)
    W, l = f["evaluator_input_bits"], 40
    n_and = f["and_gates"]
    off = t.cells[("computing", True)]
    on = t.cells[("computing", False)]
    assert list(t.party_counts(off[3])[:2]) == [264 + 256 * n_and + l + 128 * W, 264 * W]
    assert list(t.party_counts(off[4])[:2]) == [264 * W, 264 + 256 * n_and + l + 128 * W]
    assert list(t.party_counts(on[3])[:2]) == [128 * (W + l) + 128 * W, W]
    assert t.role_counts(off[3]).sum() == 0 and t.role_counts(on[3]).sum() == 0
    # absorbed with the edges' global ids: each party is charged for its role
    edges = np.array([[2 * e + 1, 2 * e] if e % 2 else [2 * e, 2 * e + 1] for e in range(12)])
    net = Network(24)
    net.absorb(t, edges.ravel())
    sent, _ = net.party_bits(offline=True)
    assert sent[edges[:, 0]].tolist() == [264 + 256 * n_and + l + 128 * W] * 12
    assert sent[edges[:, 1]].tolist() == [264 * W] * 12


def test_chunk_shares_match_dealer_and_are_uniform():
    name = "kendall"
    values = _encoded(name, 40, 6)
    gc = run_chunk(_chunk_spec(name), 0, values).shares
    dl = run_chunk(_chunk_spec(name, "dealer"), 0, values).shares
    mask = np.uint64((1 << 40) - 1)
    np.testing.assert_array_equal((gc[0] + gc[1]) & mask, (dl[0] + dl[1]) & mask)
    assert gc.dtype == np.uint64 and gc.shape == (2, 40)
    assert len(np.unique(gc[0])) == 40                 # the garbler's share is a uniform mask


def test_bad_kernels_refused():
    with pytest.raises(ValueError, match="k = 2"):
        flat_umpc(np.random.default_rng(0).random((10, 1)), "triples", epsilon=math.inf,
                 seed=1, backend="gc", workers=1)

    def secure(ops, x):
        return ops.session.ring.add(x[0][0], x[1][0])

    bad = K.Kernel("gc-bad-test", 2, 1, lambda X: X[:, 0, 0], secure, (0.0, 1.0))
    with pytest.raises(ValueError, match="no garbled circuit"):
        GCBackend().check(bad)


def test_out_of_domain_record_refused():
    """The circuit assumes the validated domain; a member's out-of-domain record is refused."""
    values = _encoded("auc", 6, 1)
    values[3, 1, 1] = np.uint64(2)                    # label 2 for a 2-level column
    with pytest.raises(ValueError, match="column 1 of member 1 of edge 3"):
        run_chunk(_chunk_spec("auc"), 0, values)


@pytest.mark.slow
def test_evaluator_view_independent_of_garbler_input():
    """Two worlds (garbler records all 0 / all 1, same evaluator records): the evaluator's
    received labels have uniform permute bits and its output share a uniform top bit.

    m = 300 edges, 16 garbler labels each (4800 permute bits, sd 0.0072): tolerance 0.04
    (5.5 sd); 300 output shares: top-bit mean within 0.5 +- 0.12 (4 sd).
    """
    name = "gini"
    m = 300
    means = []
    for world in (0.0, 1.0):
        values = _encoded(name, m, 8)
        values[:, 0, 0] = fixed_point(40, 14).encode(np.full(m, world))
        spec = _chunk_spec(name, record_views=True)
        res = run_chunk(spec, 0, values)
        labels = _evaluator_labels(spec, values, res)
        lsb = (labels[..., 0] & np.uint64(1)).astype(float)
        assert abs(lsb.mean() - 0.5) < 0.04
        top = (res.shares[1] >> np.uint64(39)).astype(float)
        assert abs(top.mean() - 0.5) < 0.12
        means.append(lsb.mean(axis=0))
    assert np.all(np.abs(means[0] - means[1]) < 0.2)


def _evaluator_labels(spec, values, res):
    """The garbler's 16 operand labels each evaluator received (sent in round 1, before the
    16 label corrections of round 2, which have the same shape)."""
    views = res.traffic.views
    out = []
    for receiver, rec in views:
        if receiver % 2 == 1 and rec.phase == "computing" and not rec.offline:
            p = np.asarray(rec.payload)
            if p.dtype == np.uint64 and p.ndim == 2 and p.shape[1] == 2 and p.shape[0] == 16:
                out.append(p)
    m = values.shape[0]
    assert len(out) == 2 * m
    return np.stack(out[:m])


def test_sub_batches_change_nothing(monkeypatch):
    """Yao calls split into memory blocks: same release, bits, rounds (blocks run in parallel)."""
    import ustat.umpc.gc_backend as G

    X = records("gini", 30, 4)
    kw = dict(epsilon=math.inf, seed=2, backend="gc", workers=1)
    whole = flat_umpc(X, "gini", **kw)
    monkeypatch.setattr(G, "MAX_EDGES_PER_CALL", 7)
    split = flat_umpc(X, "gini", **kw)
    assert split.estimate == whole.estimate
    assert (split.online_bits, split.offline_bits, split.rounds) == (
        whole.online_bits, whole.offline_bits, whole.rounds)
    assert split.communication["offline"]["rounds"] == whole.communication["offline"]["rounds"]


@pytest.mark.parametrize("name,bits,frac", [("gini", 48, 20), ("auc", 32, 10)])
def test_other_ring_widths_equal_dealer(name, bits, frac):
    """Widths come from the run (ChunkSpec), not assumed 40/14."""
    X = records(name, 16, 7)
    kw = dict(epsilon=math.inf, seed=4, workers=1, bits=bits, frac_bits=frac)
    assert (flat_umpc(X, name, backend="gc", **kw).estimate
            == flat_umpc(X, name, backend="dealer", **kw).estimate)


@pytest.mark.parametrize("pool", ["processes", "threads"])
def test_garbling_on_workers_changes_nothing(pool):
    """The gc backend's chunks (each garbles its edges) on 2 workers: the same release, noise,
    costs and per-party traffic as on one (the chunk's garbling itself stays on one thread)."""
    X = records("kendall", 40, 6)
    kw = dict(epsilon=1.0, threat_model="hf", seed=3, backend="gc", chunk_size=13)
    one = flat_umpc(X, "kendall", workers=1, **kw)
    two = flat_umpc(X, "kendall", workers=2, pool=pool, **kw)
    assert one.chunks > 2 and two.workers == 2
    assert (two.estimate, two.u_hat, two.online_bits, two.offline_bits, two.rounds,
            two.max_party_bits) == (one.estimate, one.u_hat, one.online_bits, one.offline_bits,
                                    one.rounds, one.max_party_bits)
    assert two.communication == one.communication


def test_two_calls_on_one_session_draw_fresh_garbling_randomness():
    """GCBackend.compute called twice on one session (the API allows it) must not reuse Delta,
    the labels, the OT secrets or the output mask r: the garbler's output share (r) differs
    between the calls, and so does every label the evaluator receives. (Before: the streams
    were derived from fixed labels, so both calls garbled with the same Delta and r.)"""
    from ustat.umpc.chunk import _chunk_session, compute_kernel, share_inputs

    name, m = "gini", 16
    spec = _chunk_spec(name, record_views=True)
    values = _encoded(name, m, 3)
    session, holders, rng = _chunk_session(spec, 0, m)
    x = share_inputs(session, holders, values, rng)
    first = compute_kernel(session, spec, holders, x)
    second = compute_kernel(session, spec, holders, x)
    mask = np.uint64((1 << 40) - 1)
    np.testing.assert_array_equal((first[0] + first[1]) & mask, (second[0] + second[1]) & mask)
    assert not np.any(first[0] == second[0])            # a fresh r per call
    labels = [np.asarray(rec.payload) for rec in session.net.view(1)      # edge 0's evaluator
              if rec.phase == "computing" and not rec.offline
              and np.asarray(rec.payload).dtype == np.uint64 and np.asarray(rec.payload).ndim == 2]
    half = len(labels) // 2
    assert half and not any(np.array_equal(a, b) for a, b in zip(labels[:half], labels[half:]))
