import pickle

import numpy as np
import pytest

from mpc.arith.rng import CSPRNG
from mpc.comm.network import Network


def test_counts_bits_messages_rounds_exactly():
    net = Network(4)
    agg = net.role("aggregator")
    with net.phase("sharing"), net.round():
        net.send(np.array([0, 1, 2]), np.array([1, 2, 3]), np.zeros((3, 5), np.uint64), 40)
        net.send(3, 0, np.zeros(7, np.uint64), 40)
    with net.phase("aggregation"):
        net.send(net.parties, agg, np.zeros(4, np.uint64), 40)
    with net.phase("prep", offline=True):
        net.send_bits(net.role("dealer"), np.array([0, 1]), np.array([100, 300]))
    rep = net.report()
    sh = rep["phases"]["sharing"]["online"]
    assert sh["bits"] == 3 * 5 * 40 + 7 * 40 and sh["messages"] == 4 and sh["rounds"] == 1
    ag = rep["phases"]["aggregation"]["online"]
    assert ag["bits"] == 160 and ag["rounds"] == 1 and ag["messages"] == 4
    assert rep["online"]["rounds"] == 2 and rep["online"]["bits"] == 600 + 280 + 160
    assert rep["offline"]["bits"] == 400 and rep["phases"]["prep"]["offline"]["rounds"] == 1
    assert rep["online"]["roles"]["aggregator"]["received_bits"] == 160
    assert rep["offline"]["roles"]["dealer"]["sent_bits"] == 400
    sent, recv = net.party_bits()
    # party 0: sent 200 (sharing) + 40 (agg), received 280
    assert sent[0] == 240 and recv[0] == 280
    assert rep["online"]["max_party_bits"] == max(sent[i] + recv[i] for i in range(4))
    assert rep["total_bits"] == 1040 + 400


def test_sends_outside_round_blocks_are_rounds():
    net = Network(2)
    for _ in range(3):
        net.send(0, 1, np.zeros(1, np.uint64), 8)
    with net.round():
        with net.round():  # nested blocks belong to the outer one
            net.send(1, 0, np.zeros(1, np.uint64), 8)
        net.send(0, 1, np.zeros(1, np.uint64), 8)
    with net.round():
        pass  # an empty round is not counted
    assert net.report()["online"]["rounds"] == 4


def test_offline_flag_overrides_phase():
    net = Network(2)
    with net.phase("computing"):
        net.send(net.role("dealer"), 0, np.zeros(3, np.uint64), 10, offline=True)
        net.send(0, 1, np.zeros(3, np.uint64), 10)
    ph = net.report()["phases"]["computing"]
    assert ph["offline"]["bits"] == 30 and ph["online"]["bits"] == 30


def test_views_record_what_was_received():
    net = Network(3, record_views=True)
    with net.phase("a"):
        net.send(np.array([0, 1]), np.array([2, 2]), np.array([[1, 2], [3, 4]], np.uint64), 40)
    v = net.view(2)
    assert [r.sender for r in v] == [0, 1]
    assert np.array_equal(v[1].payload, [3, 4]) and v[0].phase == "a"
    assert net.view(0) == []
    with pytest.raises(ValueError, match="record_views"):
        Network(2).view(0)


def test_large_batch_is_fast_enough_to_run():
    n = 10**6
    net = Network(n)
    net.send(net.parties, net.role("aggregator"), np.zeros(n, np.uint64), 40)
    rep = net.report()["online"]
    assert rep["bits"] == 40 * n and rep["max_party_bits"] == 40 and rep["mean_party_bits"] == 40


def test_errors():
    with pytest.raises(ValueError, match="n_parties must be >= 1"):
        Network(0)
    with pytest.raises(TypeError, match="n_parties"):
        Network(2.5)
    net = Network(2)
    with pytest.raises(ValueError, match="unknown role"):
        net.role("server")
    with pytest.raises(ValueError, match="receivers contains an id outside"):
        net.send(0, 9, np.zeros(1), 8)
    with pytest.raises(ValueError, match="payload must have one row per message"):
        net.send(np.array([0, 1]), np.array([1, 0]), np.zeros(3), 8)
    with pytest.raises(ValueError, match="same length"):
        net.send(np.array([0, 1]), np.array([1, 0, 1]), np.zeros(2), 8)
    with pytest.raises(ValueError, match="bits must be a positive"):
        net.send(0, 1, np.zeros(1), 0)
    with pytest.raises(TypeError, match="senders must be integer"):
        net.send(0.5, 1, np.zeros(1), 8)
    with pytest.raises(ValueError, match="distinct"):
        Network(2, roles=("a", "a"))


def test_parallel_lanes_count_rounds_once():
    net = Network(3)
    with net.phase("computing"), net.parallel():
        for chunk in range(4):
            with net.lane():
                with net.round():
                    net.send(0, 1, np.zeros(2, np.uint64), 10)
                net.send(1, 2, np.zeros(2, np.uint64), 10)
                if chunk == 2:
                    net.send(2, 0, np.zeros(2, np.uint64), 10)  # this lane has 3 rounds
    rep = net.report()["phases"]["computing"]["online"]
    assert rep["rounds"] == 3 and rep["bits"] == 4 * 2 * 20 + 20
    with pytest.raises(RuntimeError, match="inside a parallel"), net.lane():
        pass


def test_send_all_to_all_matches_pairwise_sends():
    n = 6
    payload = np.arange(n * n * 2, dtype=np.uint64).reshape(n, n, 2)
    a = Network(n + 1, record_views=True)
    P = np.array([0, 2, 3, 4, 5, 6])
    with a.phase("x"):
        a.send_all_to_all(P, payload, 40)
    b = Network(n + 1)
    I, J = np.nonzero(~np.eye(n, dtype=bool))
    with b.phase("x"):
        b.send(P[I], P[J], payload[I, J], 40)
    assert a.report() == b.report()
    got = a.view(2)
    assert len(got) == n - 1 and np.array_equal(got[0].payload, payload[0, 1])
    with pytest.raises(ValueError, match="distinct"):
        a.send_all_to_all(np.array([0, 0]), np.zeros((2, 2)), 8)
    with pytest.raises(ValueError, match="payload must have shape"):
        a.send_all_to_all(P, np.zeros((2, 2)), 8)


def test_empty_batches_take_no_round_and_dealer_rows_one_round():
    from mpc.session import Session

    net = Network(3)
    net.send(np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros((0, 2), np.uint64), 8)
    assert net.report()["online"]["rounds"] == 0
    s = Session(4, seed=1)
    with s.net.phase("prep"):
        s.dealer.share(np.arange(4), np.zeros(5, np.uint64))
    assert s.net.report()["phases"]["prep"]["offline"]["rounds"] == 1


def _sub_network_sends(net, a, b):
    """The same traffic on any network: parties a[i] -> b[i], a dealer, rounds, phases."""
    with net.phase("sharing"), net.round():
        net.send(a, b, np.arange(2 * a.size, dtype=np.uint64).reshape(a.size, 2), 40)
        net.send(b, a, np.zeros(a.size, np.uint64), 40)
    with net.phase("computing"):
        net.send_bits(net.role("dealer"), a, np.arange(1, a.size + 1), offline=True)
        with net.round():
            net.send(a, b, np.ones(a.size, np.uint64), 40)
        net.send(b[0], a[0], np.ones(3, np.uint64), 8)


def test_absorbed_sub_networks_count_like_direct_sends():
    """Two chunks sent on local networks and absorbed as parallel lanes = sent directly."""
    members = [np.array([[4, 1], [2, 5], [1, 2]]), np.array([[0, 3], [5, 4]])]
    direct = Network(6, record_views=True)
    merged = Network(6, record_views=True)
    with direct.parallel():
        for E in members:
            with direct.lane():
                _sub_network_sends(direct, E[:, 0], E[:, 1])
    with merged.parallel():
        for E in members:
            sub = Network(E.size, record_views=True)      # slot e k + j is member j of edge e
            slots = np.arange(E.size).reshape(E.shape)
            _sub_network_sends(sub, slots[:, 0], slots[:, 1])
            with merged.lane():
                merged.absorb(sub.traffic(), E.ravel())
    assert merged.report() == direct.report()
    for p in list(range(6)) + [direct.role("dealer")]:
        assert [(r.phase, r.round, r.offline, r.sender, np.asarray(r.payload).tolist())
                for r in merged.view(p)] == \
               [(r.phase, r.round, r.offline, r.sender, np.asarray(r.payload).tolist())
                for r in direct.view(p)]
    with pytest.raises(ValueError, match="must map the 4 local parties"):
        merged.absorb(sub.traffic(), np.arange(3))


def test_traffic_compression_keeps_the_counts():
    sub = Network(6)
    slots = np.arange(6).reshape(3, 2)
    _sub_network_sends(sub, slots[:, 1], slots[:, 0])
    full = sub.traffic()
    assert full.compress(2) is full            # the last send breaks the period: kept as is
    sub = Network(6)
    with sub.phase("x"):
        sub.send(slots[:, 0], slots[:, 1], np.zeros((3, 4), np.uint64), 40)
        sub.send_bits(sub.role("dealer"), slots[:, 1], 7, offline=True)
    packed = sub.traffic().compress(2)
    assert packed.period == 2 and all(c[3].size == 2 + 2 for c in packed.cells.values())
    a, b = Network(9), Network(9)
    ids = np.array([3, 8, 8, 1, 0, 3])
    a.absorb(sub.traffic(), ids)
    b.absorb(pickle.loads(pickle.dumps(packed)), ids)
    assert a.report() == b.report() and np.array_equal(a.party_bits()[0], b.party_bits()[0])


def test_accounting_touches_only_the_parties_of_a_send():
    """Linear in what is sent: 2000 small sends on 10^7 parties allocate no per-party array
    per send (the counters are zero pages until touched), so the run stays in kilobytes."""
    import tracemalloc

    net = Network(10**7)
    ids = np.arange(0, 10**7, 10**5)
    tracemalloc.start()
    with net.phase("computing"):
        for i in range(2000):
            net.send(ids, ids[::-1], np.zeros(ids.size, np.uint64), 40)
            net.send_bits(net.role("dealer"), ids, 100 + i % 3, offline=True)
    current, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    # the two lazily zeroed counter pairs (online, offline) are the only O(n) allocations
    assert peak - current < 4 * 10**6 and current < 4 * 8 * 10**7 + 10**6
    rep = net.report()["phases"]["computing"]
    assert rep["online"]["bits"] == 2000 * 100 * 40
    assert rep["online"]["max_party_bits"] == 2 * 2000 * 40
    assert rep["offline"]["messages"] == 2000 * 100


def test_deferred_periodic_traffic_with_several_patterns():
    """Absorbed periodic chunks of two patterns, and a flush forced by volume, count exactly."""
    def chunk(width):
        sub = Network(6)
        slots = np.arange(6).reshape(3, 2)
        with sub.phase("x"):
            sub.send(slots[:, 0], slots[:, 1], np.zeros((3, width), np.uint64), 40)
        return sub.traffic()

    g = CSPRNG(3)
    n = 50
    lazy, eager = Network(n), Network(n)
    lazy._defer_slack = 0                 # count every 4 n + 1 ids, not only at report()
    for i in range(2000):
        ids = g.choice(n, 6)
        t = chunk(1 + i % 2)
        lazy.absorb(t.compress(2), ids)
        eager.absorb(t, ids)
    assert lazy.report() == eager.report()
    assert np.array_equal(lazy.party_bits()[1], eager.party_bits()[1])


def _opened_by_a_protocol(net):
    with net.round():                                       # a round block
        net.send(0, 1, np.zeros(2, np.uint64), 8)


def _sent_alone(net):                                       # rounds of their own
    net.send(np.array([0, 1]), np.array([1, 2]), np.zeros((2, 1), np.uint64), 8)
    net.send_bits(0, 2, 16, np.zeros(2, np.uint8))
    net.broadcast(np.array([0, 1, 2]), np.zeros((3, 1), np.uint64), 8)
    net.send_all_to_all(np.array([0, 1, 2]), np.zeros((3, 3), np.uint64), 8)


def test_a_round_is_named_for_the_protocol_function_not_a_part_of_the_network():
    """caller_op (the name frames carry) skips every module the Network is made of, through
    each way of sending: what a view records is the protocol function's name."""
    net = Network(3, record_views=True)
    _opened_by_a_protocol(net)
    _sent_alone(net)
    ops = [r.op for p in range(3) for r in net.view(p)]
    assert set(ops) == {"_opened_by_a_protocol", "_sent_alone"}, ops
    assert net.view(1)[0].op == "_opened_by_a_protocol"
