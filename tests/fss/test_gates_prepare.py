"""The offline/online split of the FSS gates: ``fss.gates.prepare`` then ``gate(..., prep=...)``.

For the same session seed, dealing a gate's offline part ahead with
:func:`fss.gates.prepare` and then calling the gate with ``prep=`` gives the
bits of a plain call (same dealer draws in the same order) and the same
traffic (offline and online), and the dealt part does not depend on the
operands.
"""

import pickle

import numpy as np
import pytest

from fss import gates
from mpc.arith.sharing import additive_share
from mpc.protocols import compare as circuit_gates
from mpc.session import Session

L = 16                 # ring bits: small keys, fast tests
N_PARTIES = 6          # parties of the session (per-instance holders pick among them)
NARROW = 9             # in_bits of the narrowed MSB gates

MSB_GATES = ("less_than", "greater_than", "sign", "abs_value")
ALL_GATES = MSB_GATES + ("equal", "in_interval")
INTERVAL = (-3, 5)     # public bounds of in_interval in the scalar-bound cases


# -- helpers ---------------------------------------------------------------------------------------
def _session(seed, **kw):
    return Session(N_PARTIES, bits=L, frac_bits=8, seed=f"prep-{seed}", **kw)


def _share(s, values, p, label):
    return additive_share(s.ring, s.ring.from_signed(np.asarray(values, dtype=np.int64)), p,
                          s.rng.derive("test-shares", label))


def _open(s, shares):
    return s.ring.to_signed(s.ring.sum(shares, axis=0))


def _holders(p, batch, per_instance, seed):
    """(p,) holders (key holders not parties 0, 1) or (p, *batch) holders differing per instance."""
    if not per_instance:
        return np.array([p - 1, 0] + list(range(1, p - 1)), dtype=np.int64)
    g = np.random.default_rng(seed)                       # test data only
    size = int(np.prod(batch, dtype=np.int64))
    h = np.stack([g.choice(N_PARTIES, p, replace=False) for _ in range(size)], axis=1)
    return h.reshape((p,) + tuple(batch)).astype(np.int64)


def _operands(gate, batch, in_bits, seed):
    """Signed test values (x, y) in range for ``gate``: edge cases first, then random ones."""
    d = L if in_bits is None else in_bits
    g = np.random.default_rng(seed)                       # test data only
    size = int(np.prod(batch, dtype=np.int64))
    if gate in ("sign", "abs_value"):
        top = (1 << (d - 1)) - 1                          # |x| < 2^(d-1)
        special = [0, 1, -1, top, -top, 2, -2]
    elif gate in ("less_than", "greater_than"):
        top = (1 << (d - 2)) - 1                          # |x - y| < 2^(d-1)
        special = [0, 1, -1, top, -top - 1, 0, -1]
    else:                                                 # exact for every x
        top = (1 << (L - 1)) - 1
        special = [0, 1, -1, top, -top - 1, -3, 5, 6, -4]
    x = g.integers(-top, top, size=size, endpoint=True)
    y = g.integers(-top, top, size=size, endpoint=True)
    k = min(len(special), size)
    x[:k] = special[:k]
    y[:k] = special[::-1][:k]
    if size > k + 2:
        y[k:k + 2] = x[k:k + 2]                          # some equal pairs
    return x.reshape(batch), y.reshape(batch)


def _expected(gate, x, y, lo, hi):
    return {
        "less_than": lambda: (x < y).astype(np.int64),
        "greater_than": lambda: (x > y).astype(np.int64),
        "sign": lambda: np.sign(x),
        "abs_value": lambda: np.abs(x),
        "equal": lambda: (x == y).astype(np.int64),
        "in_interval": lambda: ((x >= lo) & (x <= hi)).astype(np.int64),
    }[gate]()


def _call(gate, s, X, Y, h, lo, hi, **kw):
    fn = getattr(gates, gate)
    if gate in ("sign", "abs_value"):
        return fn(s, X, h, **kw)
    if gate == "in_interval":
        return fn(s, X, lo, hi, h, **kw)
    return fn(s, X, Y, h, **kw)


def _bounds(gate, batch, per_instance_bounds, seed):
    if gate != "in_interval" or not per_instance_bounds:
        return INTERVAL
    g = np.random.default_rng(seed + 1000)
    a = g.integers(-40, 40, size=batch)
    b = a + g.integers(0, 30, size=batch)
    return a, b


def _traffic_fingerprint(s):
    """Everything the network measured: the report, per-party bits on both sides, the Traffic."""
    return (s.net.report(), [a.tolist() for a in s.net.party_bits()],
            [a.tolist() for a in s.net.party_bits(offline=True)], pickle.dumps(s.net.traffic()))


def _plain_and_prepared(gate, p, batch, per_instance, in_bits, seed, interval_arrays=False):
    """Run the gate plainly and prepare-then-gate in two sessions of one seed."""
    h = _holders(p, batch, per_instance, seed)
    x, y = _operands(gate, batch, in_bits, seed)
    lo, hi = _bounds(gate, batch, interval_arrays, seed)
    kw = {} if in_bits is None else {"in_bits": in_bits}
    results = []
    for prepared in (False, True):
        s = _session(seed)
        with s.net.phase("computing"):
            prep = gates.prepare(getattr(gates, gate), s, h, batch, **kw) if prepared else None
            X, Y = _share(s, x, p, "x"), _share(s, y, p, "y")
            out = _call(gate, s, X, Y, h, lo, hi, prep=prep, **kw)
        results.append((s, out))
    return results[0], results[1], (x, y, lo, hi)


# -- prepare-then-gate equals the plain gate -------------------------------------------------------
CASES = (
    [(g, p, pi, ib) for g in MSB_GATES for p in (2, 3) for pi in (False, True)
     for ib in (None, NARROW)]
    + [(g, p, pi, None) for g in ("equal", "in_interval") for p in (2, 3) for pi in (False, True)]
)


@pytest.mark.parametrize("gate,p,per_instance,in_bits", CASES)
def test_prepare_then_gate_equals_plain_gate(gate, p, per_instance, in_bits):
    for trial in range(2):
        seed = 100 * trial + 7 * p + (3 if per_instance else 0) + (in_bits or 0)
        batch = (23 + 5 * trial,)
        (sa, plain), (sb, prepped), (x, y, lo, hi) = _plain_and_prepared(
            gate, p, batch, per_instance, in_bits, seed)
        assert prepped.shape == plain.shape == (p,) + batch and prepped.dtype == np.uint64
        assert np.array_equal(prepped, plain), "output shares differ"
        assert _traffic_fingerprint(sa) == _traffic_fingerprint(sb), "traffic differs"
        want = _expected(gate, x, y, lo, hi)
        assert np.array_equal(_open(sa, plain), want)
        assert np.array_equal(_open(sb, prepped), want)
        if p > 2 and gate in MSB_GATES and gate != "abs_value":
            # outputs on the key holders' rows only (module docstring)
            assert not prepped[2:].any()


@pytest.mark.parametrize("gate", ALL_GATES)
def test_prepare_on_two_dimensional_batches(gate):
    batch = (3, 5)
    in_bits = NARROW if gate in ("less_than", "abs_value") else None
    (sa, plain), (sb, prepped), (x, y, lo, hi) = _plain_and_prepared(
        gate, 2, batch, True, in_bits, seed=11, interval_arrays=True)
    assert prepped.shape == (2,) + batch
    assert np.array_equal(prepped, plain)
    assert _traffic_fingerprint(sa) == _traffic_fingerprint(sb)
    assert np.array_equal(_open(sb, prepped), _expected(gate, x, y, lo, hi))


def test_in_interval_per_instance_bounds_with_prepare():
    (sa, plain), (sb, prepped), (x, _y, lo, hi) = _plain_and_prepared(
        "in_interval", 3, (40,), False, None, seed=5, interval_arrays=True)
    assert np.array_equal(prepped, plain)
    assert _traffic_fingerprint(sa) == _traffic_fingerprint(sb)
    want = ((x >= lo) & (x <= hi)).astype(np.int64)
    assert 0 < want.sum() < want.size                    # both outcomes occur
    assert np.array_equal(_open(sb, prepped), want)


def test_scalar_instance_batch():
    """batch == (): one instance, shares of shape (p,)."""
    outs = []
    for prepared in (False, True):
        s = _session("scalar")
        h = np.array([1, 2])
        prep = gates.prepare(gates.sign, s, h, ()) if prepared else None
        X = _share(s, np.array(-5), 2, "x")
        outs.append((s, gates.sign(s, X, h, prep=prep)))
    (sa, a), (sb, b) = outs
    assert a.shape == b.shape == (2,) and np.array_equal(a, b)
    assert int(_open(sb, b)) == -1
    assert _traffic_fingerprint(sa) == _traffic_fingerprint(sb)


@pytest.mark.parametrize("gate", ALL_GATES)
def test_prepare_costs_only_the_offline_part(gate):
    """prepare alone sends exactly the plain gate's offline traffic and nothing online; the
    call with prep= adds exactly the plain gate's online traffic and no offline traffic."""
    batch, h = (17,), np.array([2, 4])
    x, y = _operands(gate, batch, None, 3)
    plain = _session("cost")
    _call(gate, plain, _share(plain, x, 2, "x"), _share(plain, y, 2, "y"), h, *INTERVAL)
    rep = plain.net.report()
    s = _session("cost")
    prep = gates.prepare(getattr(gates, gate), s, h, batch)
    after_prep = s.net.report()
    assert after_prep["online"]["bits"] == 0 and after_prep["online"]["rounds"] == 0
    assert after_prep["offline"] == rep["offline"]
    assert after_prep["offline"]["bits"] > 0
    _call(gate, s, _share(s, x, 2, "x"), _share(s, y, 2, "y"), h, *INTERVAL, prep=prep)
    final = s.net.report()
    assert final["offline"] == rep["offline"]          # nothing dealt online
    assert final == rep


def test_several_preparations_used_in_order_equal_sequential_plain_calls():
    """Deal the offline parts of three gates ahead, then run them: the bits of three plain calls."""
    batch, h = (19,), np.array([0, 1])
    x, y = _operands("less_than", batch, None, 8)
    seq = [("less_than", {}), ("equal", {}), ("abs_value", {"in_bits": NARROW})]
    runs = []
    for prepared in (False, True):
        s = _session("seq")
        preps = ([gates.prepare(getattr(gates, g), s, h, batch, **kw) for g, kw in seq]
                 if prepared else [None] * len(seq))
        X, Y = _share(s, x, 2, "x"), _share(s, y, 2, "y")
        small = _share(s, np.clip(x, -200, 200), 2, "small")
        outs = [gates.less_than(s, X, Y, h, prep=preps[0]),
                gates.equal(s, X, Y, h, prep=preps[1]),
                gates.abs_value(s, small, h, in_bits=NARROW, prep=preps[2])]
        runs.append((s, outs))
    (sa, a), (sb, b) = runs
    for u, v in zip(a, b):
        assert np.array_equal(u, v)
    assert _traffic_fingerprint(sa) == _traffic_fingerprint(sb)
    assert np.array_equal(_open(sb, b[0]), (x < y).astype(np.int64))
    assert np.array_equal(_open(sb, b[1]), (x == y).astype(np.int64))
    assert np.array_equal(_open(sb, b[2]), np.abs(np.clip(x, -200, 200)))


@pytest.mark.parametrize("gate", ALL_GATES)
@pytest.mark.parametrize("p", [2, 3])
def test_prepared_part_does_not_depend_on_the_operands(gate, p):
    """Deal before any operand exists, in two identical sessions; use on two operand sets."""
    batch = (21,)
    h = _holders(p, batch, False, 0)
    outs = []
    for seed in (1, 2):
        s = _session("indep")
        prep = gates.prepare(getattr(gates, gate), s, h, batch)
        x, y = _operands(gate, batch, None, seed)
        out = _call(gate, s, _share(s, x, p, "x"), _share(s, y, p, "y"), h, *INTERVAL, prep=prep)
        assert np.array_equal(_open(s, out), _expected(gate, x, y, *INTERVAL))
        outs.append((x, out))
    (x1, _o1), (x2, _o2) = outs
    assert not np.array_equal(x1, x2)


@pytest.mark.parametrize("gate", ALL_GATES)
def test_prepare_is_deterministic_in_the_session_seed(gate):
    """Two sessions of one seed deal bit-identical masks (and keys that evaluate alike)."""
    batch, h = (9,), np.array([0, 1])

    def arrays(obj):
        if isinstance(obj, np.ndarray):
            return [obj]
        if isinstance(obj, (tuple, list)):
            return [a for o in obj for a in arrays(o)]
        return []

    a = arrays(gates.prepare(getattr(gates, gate), _session("det"), h, batch))
    b = arrays(gates.prepare(getattr(gates, gate), _session("det"), h, batch))
    c = arrays(gates.prepare(getattr(gates, gate), _session("other"), h, batch))
    assert len(a) == len(b) >= 2
    assert all(np.array_equal(u, v) for u, v in zip(a, b))
    assert not all(np.array_equal(u, v) for u, v in zip(a, c))


# -- errors ----------------------------------------------------------------------------------------
@pytest.mark.parametrize("bad", [circuit_gates.less_than, gates.costs, "less_than", None,
                                 lambda *a, **k: None])
def test_prepare_rejects_what_is_not_a_gate(bad):
    s = _session("err")
    with pytest.raises(ValueError, match="no offline part"):
        gates.prepare(bad, s, np.array([0, 1]), (4,))
    assert s.net.report()["total_bits"] == 0


@pytest.mark.parametrize("gate", [gates.equal, gates.in_interval])
@pytest.mark.parametrize("in_bits", [8, L])
def test_prepare_rejects_in_bits_for_equal_and_in_interval(gate, in_bits):
    s = _session("err")
    with pytest.raises(ValueError, match="in_bits"):
        gates.prepare(gate, s, np.array([0, 1]), (4,), in_bits=in_bits)
    assert s.net.report()["total_bits"] == 0               # nothing dealt


@pytest.mark.parametrize("in_bits", [0, 1, L + 1, True, 3.0])
def test_prepare_rejects_bad_in_bits_for_msb_gates(in_bits):
    with pytest.raises(ValueError, match="in_bits"):
        gates.prepare(gates.less_than, _session("err"), np.array([0, 1]), (4,), in_bits=in_bits)


def test_prepare_checks_holders():
    s = _session("err")
    with pytest.raises(ValueError, match="distinct"):
        gates.prepare(gates.sign, s, np.array([1, 1]), (4,))
    with pytest.raises(ValueError, match="shape"):
        gates.prepare(gates.sign, s, np.zeros((2, 5), dtype=np.int64) + [[0], [1]], (4,))
    with pytest.raises(ValueError):
        gates.prepare(gates.sign, s, np.array([0, N_PARTIES + 5]), (4,))
    with pytest.raises(TypeError):
        gates.prepare(gates.sign, object(), np.array([0, 1]), (4,))


def test_prep_of_another_batch_shape_or_width_is_refused():
    h = np.array([0, 1])
    x = np.array([1, -2, 3, -4, 5])
    s = _session("mismatch")
    prep = gates.prepare(gates.less_than, s, h, (3,))
    with pytest.raises(ValueError):
        gates.less_than(s, _share(s, x, 2, "x"), _share(s, 0 * x, 2, "y"), h, prep=prep)
    s = _session("mismatch")
    prep = gates.prepare(gates.less_than, s, h, (5,), in_bits=NARROW)
    with pytest.raises(ValueError):
        gates.less_than(s, _share(s, x, 2, "x"), _share(s, 0 * x, 2, "y"), h, prep=prep)


@pytest.mark.parametrize("prep_kw", [{"batch": (1,)}, {"batch": (5,), "in_bits": 6}])
def test_a_mismatched_prep_is_refused_before_anything_is_opened(prep_kw):
    h = np.array([0, 1])
    x = np.array([1, -2, 3, -4, 5])
    s = _session("mismatch-early")
    kw = dict(prep_kw)
    prep = gates.prepare(gates.less_than, s, h, kw.pop("batch"), **kw)
    X, Y = _share(s, x, 2, "x"), _share(s, 0 * x, 2, "y")
    with pytest.raises(ValueError):
        gates.less_than(s, X, Y, h, prep=prep)
    assert s.net.report()["online"]["bits"] == 0          # nothing opened with the wrong mask
