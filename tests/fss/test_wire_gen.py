"""dcf.gen_bytes / dpf.gen_bytes: the bytes of to_bytes(gen(...)) without the key arrays."""

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fss import dcf, dpf, tree
from fss._util import InsecureSeedWarning
from mpc.arith.rng import CSPRNG

U64 = np.uint64
MODES = ["dcf", "arith", "xor"]


def _scheme(mode, n, l):
    if mode == "dcf":
        return dcf, dcf.DCFParams(n, l)
    return dpf, dpf.DPFParams(n, l, mode)


def _inputs(n, l, shape, seed):
    rng = CSPRNG(seed)
    return rng.uint64(shape) >> U64(64 - n), rng.uint64(shape) >> U64(64 - l)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("n,l", [(1, 1), (7, 13), (8, 8), (9, 40), (32, 40), (64, 64)])
def test_equals_to_bytes_of_gen(mode, n, l):
    """Every field (seeds, level-major words, packed bits, l-bit words) and the header, over
    several cache blocks with a short last one, for any number of workers."""
    scheme, p = _scheme(mode, n, l)
    B = 2 * tree.BLOCK + 77
    alpha, beta = _inputs(n, l, (B,), n + l)
    ref = [scheme.to_bytes(k) for k in scheme.gen(p, alpha, beta, CSPRNG(3))]
    for w in (1, 2, 3):
        got = scheme.gen_bytes(p, alpha, beta, CSPRNG(3), workers=w)
        assert all(type(b) is bytes for b in got)
        assert got[0] == ref[0] and got[1] == ref[1]


@settings(max_examples=60, deadline=None)
@given(mode=st.sampled_from(MODES), n=st.integers(1, 64), l=st.integers(1, 64),
       shape=st.lists(st.integers(0, 9), min_size=0, max_size=3), seed=st.integers(0, 2**32))
def test_random_shapes_round_trip_to_the_keys_of_gen(mode, n, l, shape, seed):
    scheme, p = _scheme(mode, n, l)
    alpha, beta = _inputs(n, l, tuple(shape), seed)
    keys = scheme.gen(p, alpha, beta, CSPRNG(seed))
    got = scheme.gen_bytes(p, alpha, beta, CSPRNG(seed))
    for party in (0, 1):
        assert got[party] == scheme.to_bytes(keys[party])
        assert scheme.from_bytes(got[party]) == keys[party]


def test_keys_from_the_bytes_compute_the_comparison():
    p = dcf.DCFParams(16, 40)
    alpha = np.arange(0, 1 << 16, 97, dtype=U64)
    b0, b1 = dcf.gen_bytes(p, alpha, -3, CSPRNG())
    k0, k1 = dcf.from_bytes(b0), dcf.from_bytes(b1)
    assert not k0.insecure and not k1.insecure
    for x in (alpha - U64(1), alpha, alpha + U64(1)):
        x = x & U64(0xFFFF)
        y = (dcf.eval(p, 0, k0, x) + dcf.eval(p, 1, k1, x)) & U64((1 << 40) - 1)
        assert np.array_equal(y, np.where(x < alpha, U64((1 << 40) - 3), U64(0)))


@pytest.mark.parametrize("scheme", [dcf, dpf])
def test_same_checks_and_insecure_flag_as_gen(scheme):
    p = dcf.DCFParams(8, 8) if scheme is dcf else dpf.DPFParams(8, 8)
    with pytest.warns(InsecureSeedWarning, match="NOT secure") as rec:
        b0, _ = scheme.gen_bytes(p, np.arange(4), 1, 12345)
    assert rec[0].filename == __file__                   # points at the caller
    assert b0[9] == 1 and scheme.from_bytes(b0).insecure
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        u0, _ = scheme.gen_bytes(p, np.arange(4), 1, CSPRNG())
    assert u0[9] == 0
    with pytest.raises(ValueError, match="alpha"):
        scheme.gen_bytes(p, [256], 1, CSPRNG())
    with pytest.raises(ValueError, match="broadcast"):
        scheme.gen_bytes(p, np.arange(4), np.arange(3), CSPRNG())
    with pytest.raises(TypeError, match="params"):
        scheme.gen_bytes((8, 8), np.arange(4), 1, CSPRNG())
    with pytest.raises(ValueError, match="workers"):
        scheme.gen_bytes(p, np.arange(4), 1, CSPRNG(), workers=0)


@pytest.mark.parametrize("fn", ["gen", "gen_bytes"])
def test_bad_workers_are_refused_before_the_stream_is_read(fn):
    p = dcf.DCFParams(8, 8)
    rng = CSPRNG(4)
    with pytest.raises(ValueError, match="workers"):
        getattr(dcf, fn)(p, np.arange(4), 1, rng, workers=0)
    assert rng.uint64(2).tolist() == CSPRNG(4).uint64(2).tolist()
