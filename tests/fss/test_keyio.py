"""Key wire format (validation, fuzzing), insecure keys, workers, key views."""

import struct
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fss import dcf, dpf, gates, tree
from fss._util import InsecureSeedWarning
from mpc.arith.rng import CSPRNG
from mpc.arith.sharing import additive_share
from mpc.session import Session

U64 = np.uint64


def _keys(scheme, n=9, l=13, shape=(5,), seed=1):
    p = dcf.DCFParams(n, l) if scheme is dcf else dpf.DPFParams(n, l, "xor")
    rng = CSPRNG(seed)
    return p, scheme.gen(p, rng.uint64(shape) >> U64(64 - n), 7, rng)


def _header(data, **fields):
    """Rewrite header fields of a serialized key (offsets of fss._keyio)."""
    b = bytearray(data)
    pos = {"version": 4, "party": 5, "n": 6, "l": 7, "group": 8, "flags": 9, "ndim": 10}
    for k, v in fields.items():
        b[pos[k]] = v
    return bytes(b)


# -- header validation -----------------------------------------------------------------------------
@pytest.mark.parametrize("scheme", [dcf, dpf])
def test_every_header_field_is_validated(scheme):
    _, (k0, _) = _keys(scheme)
    data = scheme.to_bytes(k0)
    assert data[4] == 2                                  # the version byte
    cases = [(dict(version=1), "version"), (dict(party=2), "party"), (dict(n=0), "n_bits"),
             (dict(n=65), "n_bits"), (dict(l=0), "out_bits"), (dict(l=70), "out_bits"),
             (dict(group=2), "group"), (dict(flags=2), "flags"), (dict(ndim=33), "ndim")]
    for fields, name in cases:
        with pytest.raises(ValueError, match=name):
            scheme.from_bytes(_header(data, **fields))
    bad = bytearray(data)
    bad[12] = 1
    with pytest.raises(ValueError, match="reserved"):
        scheme.from_bytes(bytes(bad))


@pytest.mark.parametrize("scheme", [dcf, dpf])
def test_shape_overflow_is_a_value_error_naming_the_shape(scheme):
    _, (k0, _) = _keys(scheme)
    data = scheme.to_bytes(k0)
    head, body = data[:16], data[24:]
    # 2^32 x 2^32 used to wrap to a batch of 0; 2^63 used to raise OverflowError
    for shape in ((1 << 32, 1 << 32), (1 << 63,), (2**64 - 1, 0), (1 << 41,)):
        h = _header(head, ndim=len(shape)) + struct.pack(f"<{len(shape)}Q", *shape)
        with pytest.raises(ValueError, match="shape"):
            scheme.from_bytes(h + body)


@pytest.mark.parametrize("scheme", [dcf, dpf])
def test_non_canonical_payload_is_rejected(scheme):
    _p, (k0, _) = _keys(scheme)
    data = bytearray(scheme.to_bytes(k0))
    off = 24
    bad = bytearray(data)
    bad[off] |= 1                                        # control-bit position of root seed 0
    with pytest.raises(ValueError, match="seed"):
        scheme.from_bytes(bytes(bad))
    bad = bytearray(data)
    bad[off + 16 * 5] |= 1                               # first s_CW word
    with pytest.raises(ValueError, match="cw_seed"):
        scheme.from_bytes(bytes(bad))
    bad = bytearray(data)
    tl = off + 16 * 5 + 16 * 9 * 5                       # cw_t_left: 2 rows of 5 bytes, 9 levels
    bad[tl + 5] |= 0x80                                  # level 15 does not exist: padding
    with pytest.raises(ValueError, match="cw_t_left"):
        scheme.from_bytes(bytes(bad))
    bad = bytearray(data)
    bad[-1] |= 0x80                                      # top bit of a 13-bit value in 2 bytes
    with pytest.raises(ValueError, match="cw_last"):
        scheme.from_bytes(bytes(bad))


def _check_parse(scheme, blob):
    try:
        k = scheme.from_bytes(blob)
    except ValueError:
        return
    assert scheme.to_bytes(k) == bytes(blob)             # canonical: round-trips exactly


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), which=st.sampled_from(["dcf", "dpf"]))
def test_fuzz_every_corruption_is_rejected_or_round_trips(data, which):
    scheme = dcf if which == "dcf" else dpf
    n = data.draw(st.integers(1, 12))
    l = data.draw(st.integers(1, 64))
    shape = tuple(data.draw(st.lists(st.integers(0, 3), max_size=2)))
    _, (k0, _) = _keys(scheme, n, l, shape, seed=n * 100 + l)
    blob = bytearray(scheme.to_bytes(k0))
    kind = data.draw(st.sampled_from(["flip", "truncate", "extend", "random", "splice"]))
    if kind == "flip":
        for _ in range(data.draw(st.integers(1, 4))):
            i = data.draw(st.integers(0, len(blob) - 1))
            blob[i] ^= 1 << data.draw(st.integers(0, 7))
    elif kind == "truncate":
        blob = blob[:data.draw(st.integers(0, len(blob) - 1))]
    elif kind == "extend":
        blob += data.draw(st.binary(min_size=1, max_size=40))
    elif kind == "random":
        blob = bytearray(data.draw(st.binary(max_size=200)))
    else:
        i = data.draw(st.integers(0, len(blob)))
        blob[i:i + 8] = data.draw(st.binary(min_size=8, max_size=8))
    _check_parse(scheme, bytes(blob))


def test_round_trip_of_zero_copy_and_buffer_inputs():
    p, (_k0, k1) = _keys(dcf, 20, 40, (4, 3))
    data = dcf.to_bytes(k1)
    for blob in (data, bytearray(data), memoryview(data), np.frombuffer(data, np.uint8)):
        back = dcf.from_bytes(blob)
        assert back == k1 and not back.seed.flags.writeable
        x = np.arange(12, dtype=U64).reshape(4, 3)
        assert np.array_equal(dcf.eval(p, 1, back, x), dcf.eval(p, 1, k1, x))


# -- insecure keys ---------------------------------------------------------------------------------
@pytest.mark.parametrize("scheme", [dcf, dpf])
def test_int_seed_flags_keys_insecure_and_warns(scheme):
    p = dcf.DCFParams(8, 8) if scheme is dcf else dpf.DPFParams(8, 8)
    with pytest.warns(InsecureSeedWarning, match="NOT secure"):
        k0, k1 = scheme.gen(p, np.arange(4), 1, 12345)
    assert k0.insecure and k1.insecure
    back = scheme.from_bytes(scheme.to_bytes(k0))
    assert back.insecure and back == k0
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        s0, _ = scheme.gen(p, np.arange(4), 1, CSPRNG(7))          # seeded stream: flag only
        u0, _ = scheme.gen(p, np.arange(4), 1, CSPRNG())           # os.urandom: secure
    assert s0.insecure and not u0.insecure
    assert not scheme.from_bytes(scheme.to_bytes(u0)).insecure
    assert scheme.to_bytes(u0)[9] == 0 and scheme.to_bytes(s0)[9] == 1


def test_gate_keys_follow_the_session_seed(monkeypatch):
    seen = []
    real = tree.gen

    def spy(*a, **kw):
        keys = real(*a, **kw)
        seen.append(keys[0].insecure)
        return keys

    monkeypatch.setattr(tree, "gen", spy)
    for seed, want in ((3, True), (None, False)):
        s = Session(2, bits=16, seed=seed)
        x = additive_share(s.ring, np.arange(4, dtype=U64), 2, s.rng)
        gates.sign(s, x, np.array([0, 1]))
        assert seen[-1] is want


# -- workers and the small-batch path --------------------------------------------------------------
@pytest.mark.parametrize("scheme", [dcf, dpf])
def test_results_identical_for_any_number_of_workers(scheme):
    n = 12
    p = dcf.DCFParams(n, 24) if scheme is dcf else dpf.DPFParams(n, 24)
    B = 2 * dcf.BLOCK + 77
    alpha = CSPRNG(4).uint64(B) >> U64(64 - n)
    x = CSPRNG(5).uint64((2, B)) >> U64(64 - n)
    ref = None
    for w in (1, 2, 3):
        k0, k1 = scheme.gen(p, alpha, 9, CSPRNG(6), workers=w)
        out = (scheme.eval(p, 0, k0, x, workers=w), scheme.eval(p, 1, k1, x, workers=w))
        if ref is None:
            ref = (k0, k1, out)
            total = (out[0] + out[1]) & U64((1 << 24) - 1)
            want = (x < alpha) if scheme is dcf else (x == alpha)
            assert np.array_equal(total, want.astype(U64) * U64(9))
        else:
            assert k0 == ref[0] and k1 == ref[1]
            assert np.array_equal(out[0], ref[2][0]) and np.array_equal(out[1], ref[2][1])
    with pytest.raises(ValueError, match="workers"):
        scheme.gen(p, alpha[:3], 1, CSPRNG(1), workers=0)
    with pytest.raises(TypeError, match="workers"):
        scheme.eval(p, 0, k0, x, workers=1.5)


# -- key traffic and recorded views ----------------------------------------------------------------
@pytest.mark.parametrize("per_instance", [False, True])
def test_views_hold_the_serialized_keys_and_traffic_is_their_size(per_instance):
    l, B = 16, 6
    s = Session(3, bits=l, seed=9, record_views=True)
    v = np.arange(B) - 3
    X = additive_share(s.ring, s.ring.from_signed(v), 2, s.rng)
    Y = additive_share(s.ring, np.zeros(B, U64), 2, s.rng)
    h = np.array([2, 0])
    if per_instance:
        h = np.repeat(h[:, None], B, axis=1)
    out = gates.less_than(s, X, Y, h)
    assert np.array_equal(s.ring.to_signed(s.ring.sum(out, axis=0)), (v < 0).astype(np.int64))
    dealer = s.net.role("dealer")
    p = dcf.DCFParams(l - 1, l)
    wire = dcf.wire_bits(p) // 8
    _, offr = s.net.party_bits(offline=True)
    for party in (2, 0):
        keys = [r.payload for r in s.net.view(party)
                if r.sender == dealer and isinstance(r.payload, np.ndarray)
                and r.payload.dtype == np.uint8]
        got = np.concatenate([k.reshape(-1) for k in keys])
        assert got.size == B * wire                                  # exactly the payloads
        assert offr[party] == 8 * got.size + 2 * l * B              # counted = what was recorded
        # the recorded bytes are the key: parse them back and evaluate
        party_id = 0 if party == 2 else 1
        if per_instance:
            head = struct.pack("<4sBBBBBBB5s", b"DCF1", 2, party_id, l - 1, l, 0, 1, 0, bytes(5))
            ks = [dcf.from_bytes(head + row.tobytes()) for row in keys]
            assert all(k.shape == () and k.insecure for k in ks)
        else:
            head = struct.pack("<4sBBBBBBB5sQ", b"DCF1", 2, party_id, l - 1, l, 0, 1, 1,
                               bytes(5), B)
            k = dcf.from_bytes(head + got.tobytes())
            assert k.batch == B and k.party == party_id
