"""Random, chosen and correlated OT over many pairs: exact outputs, costs, errors."""

import itertools

import numpy as np
import pytest

from mpc.arith.rng import as_rng
from mpc.ot import DEFAULT_CROSSOVER, base_ot, chosen_ot, correlated_ot, ot_cost, random_ot
from mpc.session import Session

# Pairs with repeats (instances 0, 1 and 5 share the ordered pair (0, 1)) and a
# reversed pair (1, 0): groups of 3, 1, 1, 1 instances.
SENDERS = np.array([0, 0, 1, 2, 3, 0])
RECEIVERS = np.array([1, 1, 0, 3, 4, 1])
METHODS = ["base", "iknp", "auto"]


def _session(n=5, **kw):
    return Session(n, seed=11, **kw)


def _rngs(*tag):
    """Fixed, distinct sender and receiver streams for a test."""
    root = as_rng(2026).derive(*tag)
    return root.derive("sender"), root.derive("receiver")


def _delta(rng, P):
    d = rng.bytes_array(16 * P).reshape(P, 16)
    d[:, 0] |= 1
    return d


def _all_choices(m):
    """Every choice vector of length m, one instance each: (2^m, m)."""
    return np.array(list(itertools.product([0, 1], repeat=m)), dtype=np.uint8)


@pytest.mark.parametrize("method", METHODS)
def test_exhaustive_choices_small_batches(method):
    m = 3
    c = _all_choices(m)                              # 8 instances, every pattern
    P = c.shape[0]
    snd, rcv = np.zeros(P, np.int64), np.ones(P, np.int64)
    snd[4:], rcv[4:] = 2, 1                           # two groups of 4 instances
    rs, rr = _rngs("exh", method)
    s = _session()
    m0, m1, mc = random_ot(s, snd, rcv, c, rng_sender=rs, rng_receiver=rr, method=method)
    assert np.array_equal(mc, np.where(c[..., None] == 1, m1, m0))
    assert not (m0 == m1).all(axis=-1).any()
    x0 = rs.bytes_array(P * m * 5).reshape(P, m, 5)
    x1 = rs.bytes_array(P * m * 5).reshape(P, m, 5)
    got = chosen_ot(s, snd, rcv, c, x0, x1, rng_sender=rs, rng_receiver=rr, method=method)
    assert np.array_equal(got, np.where(c[..., None] == 1, x1, x0))
    d = _delta(rs, P)
    q, t = correlated_ot(s, snd, rcv, c, d, rng_sender=rs, rng_receiver=rr, method=method)
    assert np.array_equal(t, q ^ c[..., None] * d[:, None, :])


@pytest.mark.parametrize("method,m,length", [("iknp", 129, 16), ("iknp", 300, 17),
                                             ("auto", 50, 40), ("base", 20, 1),
                                             ("auto", 127, 33), ("iknp", 1, 16)])
def test_random_and_chosen_ot_randomized(method, m, length):
    rs, rr = _rngs("rand", method, m)
    P = SENDERS.size
    c = rr.bits((P, m))
    s = _session()
    m0, m1, mc = random_ot(s, SENDERS, RECEIVERS, c, rng_sender=rs, rng_receiver=rr,
                           method=method, length=length)
    assert m0.shape == (P, m, length) and m0.dtype == np.uint8
    assert np.array_equal(mc, np.where(c[..., None] == 1, m1, m0))
    x0 = rs.bytes_array(P * m * length).reshape(P, m, length)
    x1 = rs.bytes_array(P * m * length).reshape(P, m, length)
    got = chosen_ot(s, SENDERS, RECEIVERS, c, x0, x1, rng_sender=rs, rng_receiver=rr,
                    method=method)
    assert np.array_equal(got, np.where(c[..., None] == 1, x1, x0))


def test_correlated_ot_large_single_pair_is_exact():
    rs, rr = _rngs("large")
    m = 20000
    c = rr.bits((1, m))
    d = _delta(rs, 1)
    q, t = correlated_ot(_session(2), [0], [1], c, d, rng_sender=rs, rng_receiver=rr)
    assert np.array_equal(t, q ^ c[..., None] * d[:, None, :])
    # q is pseudorandom: about half its bits are set, no two rows equal.
    assert abs(np.unpackbits(q).mean() - 0.5) < 0.01
    assert np.unique(q[0], axis=0).shape[0] == m


@pytest.mark.parametrize("method", METHODS)
def test_correlated_ot_mixed_deltas_within_a_pair(method):
    # Group (0, 1) has three instances: equal deltas in one call (raw IKNP rows),
    # distinct deltas in the other (hashed keys + correction strings).
    rs, rr = _rngs("cot-mixed", method)
    m = 60
    c = rr.bits((SENDERS.size, m))
    for same in (True, False):
        d = _delta(rs, SENDERS.size)
        if same:
            d[[1, 5]] = d[0]
        s = _session()
        q, t = correlated_ot(s, SENDERS, RECEIVERS, c, d, rng_sender=rs, rng_receiver=rr,
                             method=method)
        assert np.array_equal(t, q ^ c[..., None] * d[:, None, :])
        rep = s.net.report()["online"]
        cost = ot_cost(SENDERS, RECEIVERS, m, "correlated", method=method, delta=d)
        assert (rep["bits"], rep["rounds"], rep["messages"]) == \
            (cost["bits"], cost["rounds"], cost["messages"])


def test_base_ot_keys_and_empty_batches():
    rs, rr = _rngs("base")
    c = rr.bits((SENDERS.size, 4))
    k0, k1, kc = base_ot(_session(), SENDERS, RECEIVERS, c, rng_sender=rs, rng_receiver=rr)
    assert kc.shape == (SENDERS.size, 4, 16)
    assert np.array_equal(kc, np.where(c[..., None] == 1, k1, k0))
    s = _session()
    q, _t = correlated_ot(s, SENDERS, RECEIVERS, np.zeros((6, 0), np.uint8),
                         _delta(rs, 6), rng_sender=rs, rng_receiver=rr)
    assert q.shape == (6, 0, 16) and s.net.report()["total_bits"] == 0
    out = random_ot(s, [], [], np.zeros((0, 5), np.uint8), rng_sender=rs, rng_receiver=rr)
    assert out[0].shape == (0, 5, 16) and s.net.report()["total_bits"] == 0


def test_p256_fallback_gives_the_same_outputs_shape_and_cost():
    rs, rr = _rngs("p256")
    c = rr.bits((2, 5))
    s = _session()
    m0, m1, mc = random_ot(s, [0, 1], [1, 2], c, rng_sender=rs, rng_receiver=rr,
                           group="p256")
    assert np.array_equal(mc, np.where(c[..., None] == 1, m1, m0))
    assert s.net.report()["online"]["bits"] == ot_cost([0, 1], [1, 2], 5, "random")["bits"]


# -- communication: measured = formula = hand count -----------------------------------

def test_iknp_correlated_ot_bits_by_hand():
    rs, rr = _rngs("hand")
    m = 1000
    s = _session(2)
    correlated_ot(s, [0], [1], rr.bits((1, m)), _delta(rs, 1), rng_sender=rs,
                  rng_receiver=rr)
    rep = s.net.report()["online"]
    # A (264) + 128 B points (128 * 264) from the base OTs, the u matrix 128 * m.
    assert rep["bits"] == 264 + 128 * 264 + 128 * m
    assert rep["rounds"] == 3 and rep["messages"] == 3
    sent, _recv = s.net.party_bits()
    assert sent[1] == 264 + 128 * m and sent[0] == 128 * 264     # 1 is the extension receiver


def test_direct_chosen_ot_bits_by_hand_and_offline_flag():
    rs, rr = _rngs("hand2")
    m, L = 10, 3
    s = _session(3)
    x = rs.bytes_array(2 * m * L).reshape(2, m, L)
    chosen_ot(s, [0, 0], [1, 2], rr.bits((2, m)), x, x[::-1], rng_sender=rs,
              rng_receiver=rr, offline=True)
    rep = s.net.report()
    assert rep["online"]["bits"] == 0
    # per pair: A, m points B, then y0 and y1 (2 L bytes) per OT.
    assert rep["offline"]["bits"] == 2 * (264 + 264 * m + 16 * L * m)
    assert rep["offline"]["rounds"] == 3 and rep["offline"]["messages"] == 6


def test_caller_phase_decides_online_or_offline():
    rs, rr = _rngs("phase")
    s = _session(2)
    with s.net.phase("gc-ot", offline=True):
        random_ot(s, [0], [1], rr.bits((1, 200)), rng_sender=rs, rng_receiver=rr)
    rep = s.net.report()
    assert rep["online"]["bits"] == 0
    assert rep["phases"]["gc-ot"]["offline"]["bits"] == 264 + 128 * 264 + 128 * 200


@pytest.mark.parametrize("kind", ["random", "chosen", "correlated"])
@pytest.mark.parametrize("m", [1, 40, 128, 131])
def test_measured_cost_equals_formula(kind, m):
    rs, rr = _rngs("cost", kind, m)
    P = SENDERS.size
    c = rr.bits((P, m))
    s = _session()
    if kind == "random":
        random_ot(s, SENDERS, RECEIVERS, c, rng_sender=rs, rng_receiver=rr, length=24)
    elif kind == "chosen":
        x = rs.bytes_array(P * m * 24).reshape(P, m, 24)
        chosen_ot(s, SENDERS, RECEIVERS, c, x, x, rng_sender=rs, rng_receiver=rr)
    else:
        correlated_ot(s, SENDERS, RECEIVERS, c, _delta(rs, P), rng_sender=rs, rng_receiver=rr)
    rep = s.net.report()["online"]
    cost = ot_cost(SENDERS, RECEIVERS, m, kind, length=24,
                   delta=None if kind != "correlated" else np.arange(P)[:, None] * np.ones(16))
    assert (rep["bits"], rep["rounds"], rep["messages"]) == \
        (cost["bits"], cost["rounds"], cost["messages"])
    # The hand formula per group (M = instances * m; groups of 3, 1, 1, 1 instances).
    # Correlated IKNP groups skip the last step when they have one instance (one delta).
    extra = {"random": 0, "chosen": 16 * 24, "correlated": 128}[kind]
    total = 0
    for inst in (3, 1, 1, 1):
        M = inst * m
        if M >= DEFAULT_CROSSOVER:
            last = 0 if kind == "correlated" and inst == 1 else extra * M
            total += 264 + 128 * 264 + 128 * M + last
        else:
            total += 264 + 264 * M + extra * M
    assert rep["bits"] == total


# -- bad inputs -------------------------------------------------------------------------

def _call_cot(**over):
    rs, rr = _rngs("bad")
    args = dict(senders=np.array([0, 1]), receivers=np.array([1, 2]),
                choices=np.zeros((2, 3), np.uint8), delta=_delta(rs, 2))
    args.update(over)
    return correlated_ot(_session(3), args["senders"], args["receivers"], args["choices"],
                         args["delta"], rng_sender=over.get("rng_sender", rs),
                         rng_receiver=rr, **over.get("kw", {}))


@pytest.mark.parametrize("over,exc,match", [
    (dict(receivers=np.array([1, 2, 0])), ValueError, "same length P"),
    (dict(senders=np.array([[0, 1]])), ValueError, "senders must be a 1-d"),
    (dict(senders=np.array([0.0, 1.0])), TypeError, "senders must be an integer"),
    (dict(receivers=np.array([1, 9])), ValueError, r"receivers\[1\] = 9"),
    (dict(receivers=np.array([0, 2])), ValueError, "row 0 has both"),
    (dict(choices=np.zeros((3, 3), np.uint8)), ValueError, "choices must have shape"),
    (dict(choices=np.zeros(3, np.uint8)), ValueError, "choices must have shape"),
    (dict(choices=np.array([[0, 1, 2], [0, 0, 0]])), ValueError, "choices must be 0/1"),
    (dict(choices=np.zeros((2, 3), np.float64)), TypeError, "choices must be an integer"),
    (dict(delta=np.zeros((2, 16), np.uint8)), ValueError, "lsb"),
    (dict(delta=np.ones((2, 15), np.uint8)), ValueError, r"delta must have shape \(P, 16\)"),
    (dict(delta=np.ones((3, 16), np.uint8)), ValueError, r"delta must have shape \(P, 16\)"),
    (dict(delta=np.ones((2, 16), np.int64)), TypeError, "delta must be a uint8"),
    (dict(kw=dict(method="fast")), ValueError, "method must be one of"),
    (dict(kw=dict(crossover=0)), ValueError, "crossover must be"),
    (dict(kw=dict(offline="yes")), TypeError, "offline must be"),
    (dict(rng_sender=3.5), TypeError, "rng_sender must be"),
])
def test_bad_inputs_name_the_parameter(over, exc, match):
    with pytest.raises(exc, match=match):
        _call_cot(**over)


def test_bad_messages_and_length():
    rs, rr = _rngs("bad2")
    c = np.zeros((2, 3), np.uint8)
    x = np.zeros((2, 3, 4), np.uint8)
    s = _session(3)
    with pytest.raises(ValueError, match="m0 and m1 must have the same shape"):
        chosen_ot(s, [0, 1], [1, 2], c, x, np.zeros((2, 3, 5), np.uint8), rng_sender=rs,
                  rng_receiver=rr)
    with pytest.raises(ValueError, match=r"m1 must have shape \(P, m, L\)"):
        chosen_ot(s, [0, 1], [1, 2], c, x, np.zeros((2, 4, 4), np.uint8), rng_sender=rs,
                  rng_receiver=rr)
    with pytest.raises(TypeError, match="m0 must be a uint8"):
        chosen_ot(s, [0, 1], [1, 2], c, x.astype(np.int32), x, rng_sender=rs, rng_receiver=rr)
    with pytest.raises(ValueError, match="length must be a positive"):
        random_ot(s, [0, 1], [1, 2], c, rng_sender=rs, rng_receiver=rr, length=0)
    with pytest.raises(ValueError, match="kind must be"):
        ot_cost([0], [1], 3, "oblivious")
    with pytest.raises(ValueError, match="group must be one of"):
        random_ot(s, [0, 1], [1, 2], c, rng_sender=rs, rng_receiver=rr, group="x25519")
    with pytest.raises(TypeError, match="session must have a network"):
        random_ot(object(), [0, 1], [1, 2], c, rng_sender=rs, rng_receiver=rr)


def test_distinct_deltas_is_a_public_pattern():
    """distinct_deltas=True reads no delta: a pair's several instances take the last step (as
    with distinct values), a lone instance does not; the outputs stay exact."""
    rs, rr = _rngs("cot-distinct")
    m = 60
    c = rr.bits((SENDERS.size, m))
    d = _delta(rs, SENDERS.size)
    d[[1, 5]] = d[0]                         # equal values: None would skip the last step
    runs = {}
    for flag in (None, True):
        s = _session()
        q, t = correlated_ot(s, SENDERS, RECEIVERS, c, d, rng_sender=rs, rng_receiver=rr,
                             method="iknp", distinct_deltas=flag)
        assert np.array_equal(t, q ^ c[..., None] * d[:, None, :])
        runs[flag] = s.net.report()["online"]["rounds"]
    assert runs == {None: 3, True: 4}
    with pytest.raises(TypeError, match="distinct_deltas must be None or a bool"):
        correlated_ot(_session(), [0], [1], c[:1], d[:1], rng_sender=rs, rng_receiver=rr,
                      distinct_deltas="yes")
