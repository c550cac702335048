import numpy as np
import pytest
from scipy import stats

from fss import dpf
from mpc.arith.rng import CSPRNG

U64 = np.uint64


def _mask(l):
    return U64((1 << l) - 1)


def _combine(p, a, b):
    return (a ^ b) if p.group == "xor" else (a + b) & _mask(p.out_bits)


@pytest.mark.parametrize("n", range(1, 9))
@pytest.mark.parametrize("group", ["arith", "xor"])
def test_exhaustive_small_domains(n, group):
    l = [1, 5, 8, 16, 40, 63, 64, 32][n - 1]
    rng = CSPRNG(500 + n)
    N = 1 << n
    alpha = np.repeat(np.arange(N, dtype=U64), N)
    x = np.tile(np.arange(N, dtype=U64), N)
    beta = rng.uint64(alpha.shape) & _mask(l)
    p = dpf.DPFParams(n, l, group)
    k0, k1 = dpf.gen(p, alpha, beta, rng)
    got = _combine(p, dpf.eval(p, 0, k0, x), dpf.eval(p, 1, k1, x))
    assert np.array_equal(got, beta * (x == alpha).astype(U64))


@pytest.mark.parametrize("group", ["arith", "xor"])
def test_eval_all_matches_eval(group, rng):
    n, l = 7, 24
    p = dpf.DPFParams(n, l, group)
    alpha = rng.uint64((2, 3)) >> U64(64 - n)
    beta = rng.uint64((2, 3)) & _mask(l)
    k0, k1 = dpf.gen(p, alpha, beta, rng)
    full = _combine(p, dpf.eval_all(p, 0, k0), dpf.eval_all(p, 1, k1))
    assert full.shape == (2, 3, 1 << n)
    expect = (np.arange(1 << n, dtype=U64)[None, None, :] == alpha[..., None]) * beta[..., None]
    assert np.array_equal(full, expect.astype(U64))
    xs = np.broadcast_to(np.arange(1 << n, dtype=U64)[:, None, None], (1 << n, 2, 3))
    e0 = dpf.eval(p, 0, k0, np.ascontiguousarray(xs))
    assert np.array_equal(np.moveaxis(e0, 0, -1), dpf.eval_all(p, 0, k0))
    with pytest.raises(ValueError, match="eval_all"):
        dpf.eval_all(dpf.DPFParams(30, 8), 0, dpf.gen(dpf.DPFParams(30, 8), 1, 1, rng)[0])


@pytest.mark.parametrize("n,l", [(32, 32), (40, 40), (64, 64), (64, 1)])
@pytest.mark.parametrize("group", ["arith", "xor"])
def test_random_large_domains(n, l, group, rng):
    B = 2000
    p = dpf.DPFParams(n, l, group)
    alpha = rng.uint64(B) >> U64(64 - n)
    x = rng.uint64(B) >> U64(64 - n)
    top = U64((1 << n) - 1)
    x[:500] = alpha[:500]
    x[500:600] = (alpha[500:600] ^ U64(1)) & top
    x[600:700] = (alpha[600:700] ^ (U64(1) << U64(n - 1))) & top
    beta = rng.uint64(B) & _mask(l)
    k0, k1 = dpf.gen(p, alpha, beta, rng)
    got = _combine(p, dpf.eval(p, 0, k0, x), dpf.eval(p, 1, k1, x))
    assert np.array_equal(got, beta * (x == alpha).astype(U64))


def test_key_independent_of_alpha():
    n, l, B = 10, 16, 4000
    p = dpf.DPFParams(n, l)
    for party in (0, 1):
        a = dpf.gen(p, np.zeros(B, U64), 1, CSPRNG(1))[party]
        b = dpf.gen(p, np.full(B, (1 << n) - 1, U64), 1, CSPRNG(2))[party]
        for name in ("cw_t_left", "cw_t_right"):
            z = (getattr(a, name).mean(1) - getattr(b, name).mean(1)) / np.sqrt(0.5 / B)
            assert np.abs(z).max() < 5.5
        for lev in range(n):
            ca = np.bincount((a.cw_seed[lev, :, 1] & U64(255)).astype(np.int64), minlength=256)
            cb = np.bincount((b.cw_seed[lev, :, 1] & U64(255)).astype(np.int64), minlength=256)
            assert stats.chi2_contingency(np.stack([ca, cb]) + 1)[1] > 1e-5
        assert stats.ks_2samp((a.cw_last & U64(255)).astype(int),
                              (b.cw_last & U64(255)).astype(int)).pvalue > 1e-5


@pytest.mark.parametrize("group", ["arith", "xor"])
def test_serialization_and_key_size(group, rng):
    for n, l in ((40, 40), (9, 3), (64, 64)):
        p = dpf.DPFParams(n, l, group)
        assert dpf.key_bits(p) == 128 + 130 * n + l
        wire = 128 * (n + 1) + 16 * ((n + 7) // 8) + 8 * ((l + 7) // 8)
        assert dpf.wire_bits(p) == wire
        k0, k1 = dpf.gen(p, rng.uint64(16) >> U64(64 - n), 1, rng)
        for k in (k0, k1):
            data = dpf.to_bytes(k)
            assert 8 * (len(data) - (16 + 8)) == 16 * wire == k.nbits
            assert dpf.from_bytes(data) == k
            assert dpf.instance_payloads(k).shape == (16, wire // 8)
        with pytest.raises(ValueError, match="truncated"):
            dpf.from_bytes(data[:-1])
        with pytest.raises(ValueError, match="trailing"):
            dpf.from_bytes(data + b"x")


def test_bad_input(rng):
    with pytest.raises(ValueError, match="n_bits"):
        dpf.DPFParams(0)
    with pytest.raises(ValueError, match="n_bits"):
        dpf.DPFParams(65)
    with pytest.raises(ValueError, match="group"):
        dpf.DPFParams(8, 8, "mul")
    p = dpf.DPFParams(8, 8)
    with pytest.raises(ValueError, match="alpha"):
        dpf.gen(p, 300, 1, rng)
    k0, _k1 = dpf.gen(p, np.arange(3), 1, rng)
    with pytest.raises(ValueError, match="x"):
        dpf.eval(p, 0, k0, np.array([1, 2, 256]))
    with pytest.raises(ValueError, match="shape"):
        dpf.eval(p, 0, k0, np.arange(4))
    with pytest.raises(ValueError, match="party"):
        dpf.eval(p, 1, k0, np.arange(3))
    with pytest.raises(ValueError, match="domain"):
        dpf.eval(dpf.DPFParams(8, 8, "xor"), 0, k0, np.arange(3))
