import numpy as np
import pytest
from scipy import stats

from fss import dcf, dpf, gates
from mpc.session import Session

from .gate_helpers import assert_costs, open_, session, share

U64 = np.uint64


def _session(n_parties, l, **kw):
    return session(n_parties, l, **kw)


_share, _open = share, open_


def _holders(p, batch_shape=None, per_instance=False, n_parties=None):
    base = np.array([p - 1, 0] + list(range(1, p - 1)))   # key holders need not be parties 0, 1
    if not per_instance:
        return base
    return np.broadcast_to(base.reshape((p,) + (1,) * len(batch_shape)), (p,) + batch_shape).copy()


def _adversarial(l, rng_seed=0):
    lo, hi = -(1 << (l - 1)), (1 << (l - 1)) - 1
    special = np.array([0, 1, -1, 2, -2, lo, lo + 1, hi, hi - 1], dtype=np.int64)
    special = np.unique(special[(special >= lo) & (special <= hi)])
    rng = np.random.default_rng(rng_seed)  # test data only (not secrets)
    rand = rng.integers(lo, hi, size=400, endpoint=True, dtype=np.int64)
    x = np.concatenate([np.repeat(special, len(special)), rand, special, rand[:50]])
    y = np.concatenate([np.tile(special, len(special)), rng.permutation(rand), special, rand[:50]])
    return x, y


CONFIGS = [(2, 8, False), (2, 40, False), (3, 40, True), (2, 64, True), (4, 16, False),
           (3, 2, False)]


@pytest.mark.parametrize("p,l,per_instance", CONFIGS)
def test_comparisons_against_plaintext(p, l, per_instance):
    s = _session(max(p, 3), l)
    x, y = _adversarial(l, l)
    valid = np.array([abs(int(a) - int(b)) < (1 << (l - 1)) for a, b in zip(x, y)])
    X, Y = _share(s, x, p), _share(s, y, p)
    h = _holders(p, x.shape, per_instance)
    with s.net.phase("computing"):
        lt = _open(s, gates.less_than(s, X, Y, h))
        gt = _open(s, gates.greater_than(s, X, Y, h))
        eq = _open(s, gates.equal(s, X, Y, h))
    assert np.array_equal(lt[valid], (x < y)[valid])
    assert np.array_equal(gt[valid], (x > y)[valid])
    assert np.array_equal(eq, (x == y).astype(np.int64))
    assert set(s.net.report()["phases"]) == {"computing"}


@pytest.mark.parametrize("p,l,per_instance", CONFIGS)
def test_sign_abs_interval_against_plaintext(p, l, per_instance):
    s = _session(max(p, 3), l)
    x, y = _adversarial(l, l + 1)
    X = _share(s, x, p)
    h = _holders(p, x.shape, per_instance)
    ok = x != -(1 << (l - 1))
    sg = _open(s, gates.sign(s, X, h))
    assert np.array_equal(sg[ok], np.sign(x)[ok])
    ab = _open(s, gates.abs_value(s, X, h))
    assert np.array_equal(ab[ok], np.abs(x)[ok])
    lo_, hi_ = -(1 << (l - 1)), (1 << (l - 1)) - 1
    for a, b in [(lo_, hi_), (0, 0), (-1, 1), (lo_, lo_), (hi_, hi_),
                 (min(x[0], y[0]), max(x[0], y[0]))]:
        iv = _open(s, gates.in_interval(s, X, a, b, h))
        assert np.array_equal(iv, ((x >= a) & (x <= b)).astype(np.int64)), (a, b)
    # per-instance bounds
    a, b = np.minimum(x, y), np.maximum(x, y)
    iv = _open(s, gates.in_interval(s, X, a, b, h))
    assert np.array_equal(iv, ((x >= a) & (x <= b)).astype(np.int64))


def test_exhaustive_four_bit_ring():
    l = 4
    s = _session(2, l)
    v = np.arange(-8, 8)
    x, y = np.repeat(v, 16), np.tile(v, 16)
    X, Y = _share(s, x, 2), _share(s, y, 2)
    h = np.array([0, 1])
    valid = np.abs(x - y) < 8
    assert np.array_equal(_open(s, gates.less_than(s, X, Y, h))[valid], (x < y)[valid])
    assert np.array_equal(_open(s, gates.equal(s, X, Y, h)), (x == y).astype(int))
    assert np.array_equal(_open(s, gates.sign(s, X, h))[x != -8], np.sign(x)[x != -8])
    # every interval [lo, hi] and every x
    lo, hi = np.meshgrid(v, v, indexing="ij")
    keep = lo <= hi
    lo, hi = lo[keep], hi[keep]
    xs = np.repeat(v, lo.size)
    los, his = np.tile(lo, 16), np.tile(hi, 16)
    iv = _open(s, gates.in_interval(s, _share(s, xs, 2), los, his, h))
    assert np.array_equal(iv, ((xs >= los) & (xs <= his)).astype(int))


def test_batch_shapes_and_scalar_instances():
    s = _session(3, 40)
    x = np.arange(-6, 6).reshape(3, 4)
    y = np.zeros((3, 4), dtype=np.int64)
    X, Y = _share(s, x, 3), _share(s, y, 3)
    H = _holders(3, (3, 4), per_instance=True)
    out = gates.less_than(s, X, Y, H)
    assert out.shape == (3, 3, 4) and out.dtype == U64
    assert np.array_equal(_open(s, out), (x < 0).astype(int))
    x0 = _share(s, np.array(-5), 2)
    assert x0.shape == (2,)
    assert int(_open(s, gates.sign(s, x0, np.array([1, 2])))) == -1


def test_costs_two_parties():
    l, B = 40, 1000
    s = _session(2, l)
    X, Y = _share(s, np.arange(B), 2), _share(s, np.arange(B)[::-1], 2)
    h = np.array([0, 1])
    with s.net.phase("computing"):
        gates.less_than(s, X, Y, h)
    rep = s.net.report()["phases"]["computing"]
    on, off = rep["online"], rep["offline"]
    assert on["rounds"] == 1
    assert on["max_party_sent_bits"] == l * B == on["max_party_received_bits"]
    assert on["bits"] == 2 * l * B
    kb = dcf.wire_bits(dcf.DCFParams(l - 1, l))
    assert kb == 6800 == gates.costs("less_than", l)["key_bits"]      # serialized, not 6798
    assert gates.costs("less_than", l)["key_info_bits"] == 6798
    assert off["bits"] == B * (2 * kb + 2 * 2 * l)
    assert off["rounds"] == 1
    # sign: same opening and same key material as one comparison
    s2 = _session(2, l)
    with s2.net.phase("computing"):
        gates.sign(s2, X, h)
    assert s2.net.report()["phases"]["computing"]["offline"]["bits"] == off["bits"]
    assert s2.net.report()["phases"]["computing"]["online"]["max_party_sent_bits"] == l * B
    # equality: DPF keys
    s3 = _session(2, l)
    with s3.net.phase("computing"):
        gates.equal(s3, X, Y, h)
    r3 = s3.net.report()["phases"]["computing"]
    assert r3["offline"]["bits"] == B * (2 * dpf.wire_bits(dpf.DPFParams(l, l)) + 4 * l)
    assert r3["online"]["rounds"] == 1 and r3["online"]["max_party_sent_bits"] == l * B
    # abs: one comparison plus one Beaver multiplication (2 rounds online)
    s4 = _session(2, l)
    with s4.net.phase("computing"):
        gates.abs_value(s4, X, h)
    r4 = s4.net.report()["phases"]["computing"]["online"]
    assert r4["rounds"] == 2 and r4["max_party_sent_bits"] == 3 * l * B


def test_costs_k_members_per_instance():
    l, B, p = 16, 200, 4
    s = _session(6, l)
    X, Y = _share(s, np.arange(B), p), _share(s, -np.arange(B), p)
    H = np.stack([np.full(B, 5), np.full(B, 2), np.zeros(B, int), np.ones(B, int)])
    with s.net.phase("computing"):
        gates.less_than(s, X, Y, H)
    sent, recv = s.net.party_bits()
    assert sent[0] == sent[1] == 2 * l * B              # non-key holders send to both key holders
    assert sent[5] == sent[2] == l * B                  # key holders exchange their masked shares
    assert recv[5] == recv[2] == (p - 1) * l * B
    assert s.net.report()["online"]["rounds"] == 1
    # offline: every holder gets its shares of r and of the output mask, key holders the keys
    _offs, offr = s.net.party_bits(offline=True)
    kb = dcf.wire_bits(dcf.DCFParams(l - 1, l))
    assert offr[0] == offr[1] == 2 * l * B
    assert offr[5] == offr[2] == (2 * l + kb) * B


def test_opened_values_are_masked():
    """A key holder's online view is uniform even when every input is 0."""
    l, B = 8, 6000
    s = _session(2, l, record_views=True)
    X = _share(s, np.zeros(B, dtype=np.int64), 2)
    Y = _share(s, np.zeros(B, dtype=np.int64), 2)
    gates.less_than(s, X, Y, np.array([0, 1]))
    online = [m for m in s.net.view(0) if not m.offline]
    assert len(online) == 1 and online[0].sender == 1
    # holder 1 sent x_1 - y_1 + r_1; with holder 0's own part it is z + r = r: uniform
    own = s.ring.sub(X[0], Y[0])
    zhat = s.ring.add(np.asarray(online[0].payload), own)
    # the receiver does not know r_0, so look at what it received combined with its input
    counts = np.bincount(zhat.astype(np.int64) & 255, minlength=256)
    assert stats.chisquare(counts).pvalue > 1e-4


def test_output_shares_are_random():
    s = _session(2, 40)
    X = _share(s, np.full(3000, 5), 2)
    Y = _share(s, np.full(3000, 9), 2)
    out = gates.less_than(s, X, Y, np.array([0, 1]))
    assert len(np.unique(out[0])) > 2900


def test_bad_input():
    s = _session(3, 16)
    X = _share(s, np.arange(5), 2)
    Y = _share(s, np.arange(6), 2)
    h = np.array([0, 1])
    with pytest.raises(ValueError, match="same shape"):
        gates.less_than(s, X, Y, h)
    with pytest.raises(ValueError, match="p >= 2"):
        gates.sign(s, X[:1], np.array([0]))
    with pytest.raises(ValueError, match="holders"):
        gates.sign(s, X, np.array([0, 1, 2]))
    with pytest.raises(ValueError, match="distinct"):
        gates.sign(s, X, np.array([1, 1]))
    with pytest.raises(ValueError, match="holders"):
        gates.sign(s, X, np.zeros((2, 4), dtype=int))
    with pytest.raises(TypeError, match="x"):
        gates.sign(s, X.astype(np.int64), h)
    with pytest.raises(ValueError, match="outside"):
        gates.sign(s, X | U64(1 << 20), h)
    with pytest.raises(TypeError, match="Session"):
        gates.sign(object(), X, h)
    with pytest.raises(ValueError, match="lo must be <= hi"):
        gates.in_interval(s, X, 3, 2, h)
    with pytest.raises(ValueError, match="hi"):
        gates.in_interval(s, X, 0, 1 << 15, h)
    with pytest.raises(ValueError, match="lo"):
        gates.in_interval(s, X, np.array([0, 1]), 5, h)
    s1 = Session(2, bits=1, frac_bits=0, seed=1)
    with pytest.raises(ValueError, match="at least 2 bits"):
        gates.less_than(s1, np.zeros((2, 3), U64), np.zeros((2, 3), U64), h)


@pytest.mark.parametrize("gate", ["less_than", "greater_than", "sign", "equal", "in_interval",
                                  "abs_value"])
@pytest.mark.parametrize("p", [2, 4])
def test_documented_costs_match_measurement(gate, p):
    l, B = 24, 50
    s = _session(6, l)
    X = _share(s, np.arange(B) - 25, p)
    Y = _share(s, 25 - np.arange(B), p)
    h = np.array([4, 1] + [0, 2, 3, 5][: p - 2])
    call = {
        "less_than": lambda: gates.less_than(s, X, Y, h),
        "greater_than": lambda: gates.greater_than(s, X, Y, h),
        "sign": lambda: gates.sign(s, X, h),
        "equal": lambda: gates.equal(s, X, Y, h),
        "in_interval": lambda: gates.in_interval(s, X, -3, 7, h),
        "abs_value": lambda: gates.abs_value(s, X, h),
    }[gate]
    with s.net.phase("computing"):
        call()
    assert_costs(s, h, B, gates.costs(gate, l, p))


def test_costs_bad_arguments():
    with pytest.raises(ValueError, match="gate"):
        gates.costs("max", 40)
    with pytest.raises(ValueError, match="l must"):
        gates.costs("sign", 1)
    with pytest.raises(ValueError, match="p must"):
        gates.costs("sign", 40, 1)


def test_non_key_holders_output_zero_rows_for_msb_gates_p_gt_2():
    """For p > 2 the holders that never see x^ must not need it: their rows are 0."""
    from fss import gates as G
    from mpc.arith.sharing import additive_share
    from mpc.session import Session

    s = Session(4, bits=16, frac_bits=0, seed=77)
    v = np.array([-5, 0, 3, 7], dtype=np.int64)
    x = additive_share(s.ring, s.ring.from_signed(v), 4, s.rng)
    y = additive_share(s.ring, s.ring.from_signed(v[::-1].copy()), 4, s.rng)
    h = np.arange(4)
    for out, want in ((G.less_than(s, x, y, h), v < v[::-1]), (G.sign(s, x, h), np.sign(v))):
        assert np.all(out[2:] == 0)
        assert np.array_equal(s.ring.to_signed(s.ring.sum(out, axis=0)), want.astype(np.int64))
