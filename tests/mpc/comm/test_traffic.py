"""Per-party counters with member-class patterns (mpc.comm.traffic) against plain dense counting."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mpc.comm import traffic as T
from mpc.comm.network import Network


def test_residue_class_recognizes_exactly_the_member_classes():
    n = 12
    for p in (1, 2, 3, 4, 6, 12):
        for j in range(p):
            ids = np.arange(j, n, p)
            assert T.residue_class(ids, n) == ((p, j) if ids.size >= 2 else None)
    bad = [np.array([0, 2, 4, 6, 8, 11]), np.array([1, 3, 5, 7, 9, 12]),
           np.array([0, 2, 4, 6, 10, 8]), np.arange(0, 12, 2)[::-1], np.array([0, 0]),
           np.arange(5), np.arange(0, 10, 2), np.array([[0, 1], [2, 3]]), np.array([3])]
    for ids in bad:
        assert T.residue_class(ids, n) is None, ids


def _dense_reference(n, size, sends):
    sent, recv = np.zeros(size, np.int64), np.zeros(size, np.int64)
    for which, ids, bits in sends:
        c = sent if which == 0 else recv
        np.add.at(c, np.atleast_1d(ids), np.broadcast_to(bits, np.shape(np.atleast_1d(ids))))
    return sent, recv


def _send(n, size):
    """One send: a member class, arbitrary ids, one party or a role, scalar or per-id bits."""
    divisors = [p for p in range(1, n + 1) if n % p == 0 and n // p >= 2]
    cls = st.sampled_from(divisors).flatmap(
        lambda p: st.integers(0, p - 1).map(lambda j: np.arange(j, n, p)))
    arb = st.lists(st.integers(0, size - 1), min_size=1, max_size=2 * n).map(np.array)
    one = st.integers(0, size - 1)
    return st.tuples(st.sampled_from([0, 1]), st.one_of(cls, cls, arb, one),
                     st.integers(1, 1000))


@settings(max_examples=300, deadline=None)
@given(data=st.data(), n=st.sampled_from([2, 4, 6, 12, 24, 60, 120]))
def test_counts_equal_dense_counting(data, n):
    size = n + 2
    sends = data.draw(st.lists(_send(n, size), max_size=12))
    t = T.Tally(size, n)
    for which, ids, bits in sends:
        if data.draw(st.booleans()) and np.ndim(ids):
            per = np.full(np.size(ids), bits)               # per-id bits: always dense
            t.add(which, ids, per)
        else:
            t.add(which, ids, bits)
        if data.draw(st.integers(0, 9)) == 0:                 # a read in between
            _ = t.sent
    sent, recv = _dense_reference(n, size, sends)
    assert np.array_equal(t.sent, sent) and np.array_equal(t.received, recv)


@settings(max_examples=200, deadline=None)
@given(data=st.data(), k=st.sampled_from([1, 2, 3, 4]), m=st.integers(1, 20))
def test_chunk_traffic_absorbed_equals_dense_absorb(data, k, m):
    """A chunk network's traffic (periodic when its sends are member classes) absorbed into
    a main network gives the same report as the dense counts of the same sends."""
    n_local = m * k
    holders = np.arange(n_local).reshape(m, k).T
    sub = Network(n_local)
    ops = data.draw(st.lists(st.tuples(st.integers(0, k - 1), st.integers(0, k - 1),
                                       st.integers(1, 64), st.booleans()), max_size=6))
    with sub.phase("computing"):
        for a, b, bits, offline in ops:
            sub.send(holders[a], holders[b], np.zeros(m, np.uint64), bits, offline=offline)
            sub.send_bits(sub.role("dealer"), holders[b], 3 * bits, offline=True)
    if data.draw(st.booleans()):
        sub.send(0, 1, np.zeros(1), 7)                          # one party: breaks the pattern
    tr = sub.traffic()
    n_glob = 5 * n_local + 3
    perm = np.array(data.draw(st.permutations(range(n_glob))))[:n_local]
    lazy, dense = Network(n_glob), Network(n_glob)
    lazy.absorb(tr, perm)
    full = T.Traffic(tr.n_parties, tr.roles, {key: c[:3] + tuple(
        np.concatenate([tr.party_counts(a), tr.role_counts(a)]) for a in c[3:])
        for key, c in tr.cells.items()}, tr.round_index)
    dense.absorb(full, perm)
    assert lazy.report() == dense.report() and lazy.report() == _reference_report(sub, perm, n_glob)
    for off in (False, True):
        a, b = lazy.party_bits(off), dense.party_bits(off)
        assert np.array_equal(a[0], b[0]) and np.array_equal(a[1], b[1])


@settings(max_examples=150, deadline=None)
@given(data=st.data(), k=st.sampled_from([1, 2, 3]), m=st.integers(1, 12))
def test_deferred_flush_equals_dense_absorb_with_other_traffic(data, k, m):
    """Several chunks (same or different patterns, symmetric or not) absorbed into a network
    that also counts its own sends before, between and after them, some ids mapped to roles,
    flushed once or several times: the same counters as absorbing the dense traffic."""
    n_local = m * k
    holders = np.arange(n_local).reshape(m, k).T
    n_glob = 3 * n_local + 2
    lazy, dense = Network(n_glob), Network(n_glob)
    size = lazy.size
    for _step in range(data.draw(st.integers(1, 4))):
        if data.draw(st.booleans()):                    # the main network's own sends
            ids = np.array(data.draw(st.lists(st.integers(0, n_glob - 1), min_size=1,
                                              max_size=8)))
            bits = data.draw(st.integers(1, 50))
            phase = data.draw(st.sampled_from(["sharing", "computing"]))
            for net in (lazy, dense):
                with net.phase(phase):
                    net.send(ids, ids[::-1], np.zeros(ids.size), bits)
        sub = Network(n_local)
        ops = data.draw(st.lists(st.tuples(st.integers(0, k - 1), st.integers(0, k - 1),
                                           st.integers(1, 9), st.booleans()), max_size=4))
        with sub.phase(data.draw(st.sampled_from(["sharing", "computing"]))):
            for a, b, bits, offline in ops:
                sub.send(holders[a], holders[b], np.zeros(m, np.uint64), bits, offline=offline)
        tr = sub.traffic()
        ids = np.array(data.draw(st.lists(st.integers(0, size - 1), min_size=n_local,
                                          max_size=n_local)))
        lazy.absorb(tr, ids)
        full = T.Traffic(tr.n_parties, tr.roles, {key: c[:3] + tuple(
            np.concatenate([tr.party_counts(a), tr.role_counts(a)]) for a in c[3:])
            for key, c in tr.cells.items()}, tr.round_index)
        dense.absorb(full, ids)
        if data.draw(st.integers(0, 3)) == 0:
            lazy._flush()
    assert lazy.report() == dense.report()
    for off in (False, True):
        a, b = lazy.party_bits(off), dense.party_bits(off)
        assert np.array_equal(a[0], b[0]) and np.array_equal(a[1], b[1])


def test_summary_with_scratch_equals_without():
    t = T.Tally(7, 5)
    t.add(0, np.array([0, 1, 1, 4, 6]), 3)
    t.add(1, np.arange(5), np.array([1, 2, 3, 4, 5]))
    scratch = np.full(9, -1, np.int64)
    assert t.summary(scratch) == t.summary() == {
        "bits": 0, "messages": 0, "rounds": 0, "max_party_bits": 8, "mean_party_bits": 5.4,
        "max_party_sent_bits": 6, "max_party_received_bits": 5}
    assert T.Tally(3, 0).summary()["mean_party_bits"] == 0.0


def _reference_report(sub, perm, n_glob):
    """The sub-network's own counters mapped to global ids (read after its traffic())."""
    ref = Network(n_glob)
    for key, t in sub._tallies.items():
        r = ref._tally(key)
        r.bits, r.messages, r.rounds = t.bits, t.messages, t.rounds
        for which, arr in ((0, t.sent), (1, t.received)):
            c = r.counter(which)
            np.add.at(c, perm, arr[:sub.n_parties])
            c[n_glob:] += arr[sub.n_parties:]
    ref._round_index = sub._round_index
    return ref.report()


def test_member_class_sends_leave_the_chunk_counters_untouched():
    """A chunk whose sends are member classes packs its traffic as one period, without
    expanding it (the counters of its parties are never written)."""
    m, k = 1000, 2
    holders = np.arange(m * k).reshape(m, k).T
    net = Network(m * k)
    with net.phase("sharing"), net.round():
        net.send(holders[0], holders[1], np.zeros(m, np.uint64), 40)
        net.send(holders[1], holders[0], np.zeros(m, np.uint64), 40)
    net.send_bits(net.role("dealer"), net.parties, 100, offline=True)
    tr = net.traffic()
    assert tr.period == 2 and tr.compress(2) is tr
    for t in net._tallies.values():
        assert not t.dense and not t._counts[0][:m * k].any()
    cell = tr.cells[("sharing", False)]
    assert list(cell[3][:2]) == [40, 40] and list(cell[4][:2]) == [40, 40]
    assert net.report()["online"]["max_party_bits"] == 80


def test_long_periods_go_to_the_counters():
    n = 10 ** 4
    t = T.Tally(n + 2, n)
    ids = np.arange(0, n, n // 10)                               # period 1000 > MAX_PERIOD
    t.add(0, ids, 5)
    assert t.period == 0 and t.dense
    t2 = T.Tally(n + 2, n)
    t2.add(0, np.arange(0, n, 40), 1)
    t2.add(0, np.arange(0, n, 50), 1)                            # lcm 200 > 64: dense
    assert t2.period == 40 and t2.dense
    ref = np.zeros(n + 2, np.int64)
    ref[0:n:40] += 1
    ref[0:n:50] += 1
    assert np.array_equal(t2.sent, ref)
    with pytest.raises(ValueError, match="period"):
        t2.periodic(40)
