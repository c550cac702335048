"""Typed frames: packing at the counted width, headers checked before anything is allocated."""

import struct

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mpc.wire import frames as fr

DTYPES = [np.uint8, np.uint16, np.uint32, np.uint64, np.int8, np.int16, np.int32, np.int64]


@st.composite
def arrays_and_widths(draw):
    dt = np.dtype(draw(st.sampled_from(DTYPES)))
    item = dt.itemsize * 8
    bits = draw(st.integers(1, item))
    shape = tuple(draw(st.lists(st.integers(0, 5), min_size=0, max_size=3)))
    count = int(np.prod(shape)) if shape else 1
    vals = draw(st.lists(st.integers(0, (1 << bits) - 1), min_size=count, max_size=count))
    arr = np.array(vals, dtype=np.uint64).astype(dt.newbyteorder("=")).reshape(shape) \
        if count else np.zeros(shape, dtype=dt)
    return arr, bits


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(arrays_and_widths())
def test_pack_unpack_round_trip_at_every_width(case):
    arr, bits = case
    payload = fr.pack(arr, bits)
    count = arr.size if arr.shape else 1
    assert payload.dtype == np.uint8
    assert payload.size == fr.payload_nbytes(count, bits)       # exactly the counted bits
    back = fr.unpack(payload.tobytes(), arr.dtype, bits, arr.shape)
    assert back.dtype == arr.dtype and back.shape == arr.shape
    assert np.array_equal(back, arr)


def test_bool_and_bits_pack_to_one_bit_each():
    b = np.array([1, 0, 1, 1, 0, 0, 0, 1, 1], dtype=np.uint8)
    assert fr.pack(b, 1).size == 2
    assert np.array_equal(fr.unpack(fr.pack(b, 1).tobytes(), np.uint8, 1, b.shape), b)
    t = b.astype(bool)
    assert np.array_equal(fr.unpack(fr.pack(t, 1).tobytes(), np.bool_, 1, t.shape), t)


def test_a_value_wider_than_its_declared_width_is_refused():
    with pytest.raises(ValueError, match="does not fit in the declared 40 bits"):
        fr.pack(np.array([1 << 41], dtype=np.uint64), 40)
    with pytest.raises(ValueError, match="cannot be sent"):
        fr.pack(np.zeros(3, np.uint8), 9)
    with pytest.raises(TypeError, match="integer or bool"):
        fr.dtype_code(np.float64)


def _header(**kw):
    base = dict(kind=fr.DATA, session=7, step=3, sender=1, receiver=0, segment=0,
                dtype=np.uint64, bits=40, shape=(4, 2), nbytes=40)
    base.update(kw)
    return fr.encode_header(base.pop("kind"), base.pop("session"), base.pop("step"),
                            base.pop("sender"), base.pop("receiver"), base.pop("segment"),
                            base.pop("dtype"), base.pop("bits"), base.pop("shape"),
                            base.pop("nbytes"))


def _check(raw, shape=(4, 2), **expect):
    h = fr.decode_fixed(raw[:fr.FIXED_SIZE])
    h["shape"] = fr.decode_shape(raw[fr.FIXED_SIZE:fr.FIXED_SIZE + 8 * h["ndim"]], h["ndim"])
    kw = dict(session=7, step=3, sender=1, receiver=0, segment=0, dtype=np.uint64, bits=40,
              who="process 1 (party 1)")
    kw.update(expect)
    fr.check_header(h, shape, **kw)


def test_the_expected_header_passes():
    _check(_header())


@pytest.mark.parametrize("change, match", [
    (dict(step=4), "it is for step 4"),
    (dict(session=8), "session"),
    (dict(sender=2), "claims sender 2"),
    (dict(segment=1), "segment 1"),
    (dict(dtype=np.uint32, bits=32), "type code"),
    (dict(shape=(1 << 20, 1 << 20)), "shape"),
    (dict(nbytes=41), "payload of 41 bytes"),
    (dict(kind=fr.HELLO), "kind"),
])
def test_a_frame_that_is_not_the_expected_one_names_its_sender(change, match):
    with pytest.raises(fr.FrameError, match=match) as e:
        _check(_header(**change))
    assert "process 1 (party 1)" in str(e.value) and "step 3" in str(e.value)


def test_a_frame_claiming_2_to_the_40_elements_is_refused_before_allocation():
    raw = _header(shape=(1 << 40,), nbytes=5 << 40)
    with pytest.raises(fr.FrameError, match="shape"):
        _check(raw, shape=(4, 2))


def test_garbage_is_not_a_frame():
    with pytest.raises(fr.FrameError, match="magic"):
        fr.decode_fixed(b"XX" + bytes(fr.FIXED_SIZE - 2))
    with pytest.raises(fr.FrameError, match="truncated"):
        fr.decode_fixed(b"UF" + bytes(3))
    bad = bytearray(_header())
    bad[2] = 99
    with pytest.raises(fr.FrameError, match="version"):
        fr.decode_fixed(bytes(bad[:fr.FIXED_SIZE]))
    bad = bytearray(_header())
    struct.pack_into("<B", bad, 32, 99)         # ndim
    with pytest.raises(fr.FrameError, match="dimensions"):
        fr.decode_fixed(bytes(bad[:fr.FIXED_SIZE]))


@pytest.mark.slow
@settings(max_examples=10_000, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.binary(min_size=0, max_size=fr.FIXED_SIZE + 80))
def test_fuzz_the_header_parser_raises_only_frame_errors(data):
    """Any byte string: either the expected frame or a FrameError (10^4 cases)."""
    try:
        h = fr.decode_fixed(data[:fr.FIXED_SIZE])
        tail = data[fr.FIXED_SIZE:fr.FIXED_SIZE + 8 * h["ndim"]]
        if len(tail) != 8 * h["ndim"]:
            raise fr.FrameError("truncated shape")
        h["shape"] = fr.decode_shape(tail, h["ndim"])
        fr.check_header(h, (4, 2), session=7, step=3, sender=1, receiver=0, segment=0,
                        dtype=np.uint64, bits=40, who="process 1")
    except fr.FrameError:
        pass


@pytest.mark.slow
@settings(max_examples=10_000, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.binary(min_size=0, max_size=120), st.integers(0, 3))
def test_fuzz_the_relay_framing_raises_only_its_documented_errors(data, cut):
    """Relay envelopes (any 30 bytes: an envelope or ValueError) and sealed frames (any bytes
    under a pair's key: E2EError, a ValueError); 10^4 cases."""
    from mpc.wire import relay
    from mpc.wire.e2e import E2EError

    if _PAIR[0] is None:
        pytest.skip("cryptography is not installed")
    head = data[:relay.ENVELOPE_SIZE]
    if len(head) == relay.ENVELOPE_SIZE:
        try:
            h = relay.parse(head)
            assert h["kind"] in relay.KINDS
        except ValueError:
            pass
    with pytest.raises(E2EError, match="fails authentication"):
        _PAIR[1].open(0, 3 + cut, 0, data)


def _pair():
    """Two endpoints of a deployment made once (keys and certificates in a temporary dir)."""
    import tempfile

    pytest.importorskip("cryptography")
    from mpc.wire import tls
    from mpc.wire.e2e import Endpoint

    d = tempfile.mkdtemp(prefix="ustat-fuzz-")
    creds = tls.make_deployment(d, ["host-0", "host-1"], "fuzz")
    a = Endpoint(creds["host-0"], ["host-0", "host-1"], 0, 7)
    b = Endpoint(creds["host-1"], ["host-0", "host-1"], 1, 7)
    a.accept(1, b.announcement())
    b.accept(0, a.announcement())
    a.confirm(1, b.confirmation(0))
    b.confirm(0, a.confirmation(1))
    return a, b


try:
    _PAIR = _pair()
except Exception:                       # no cryptography: the test skips
    _PAIR = (None, None)


def test_a_sealed_frame_opens_only_at_its_step_segment_and_receiver():
    a, b = _PAIR
    if a is None:
        pytest.skip("cryptography is not installed")
    sealed = a.seal(1, 5, 2, b"frame bytes")
    assert b.open(0, 5, 2, sealed) == b"frame bytes"
    from mpc.wire.e2e import E2EError
    for step, seg in ((6, 2), (5, 1)):
        with pytest.raises(E2EError):
            b.open(0, step, seg, sealed)
    flipped = bytearray(sealed)
    flipped[3] ^= 0x10
    with pytest.raises(E2EError):
        b.open(0, 5, 2, bytes(flipped))
    with pytest.raises(E2EError, match="does not verify"):       # a key not signed by host-0
        b.accept(0, b.announcement())
