"""The 8-lane compiled DCF kernels (fss._fast_ni.make_gen_step / make_eval_step) against numpy:
blocks holding whole groups of 8 keys plus a padded partial group, and every AES width."""

import numpy as np
import pytest
from Crypto.Cipher import AES

from fss import _aesni, _fast, _tree, dcf, prg
from mpc.arith.rng import CSPRNG

U64 = np.uint64
needs_aesni = pytest.mark.skipif(not _fast.AESNI, reason="numba or the CPU's AES instructions missing")


@needs_aesni
@pytest.mark.parametrize("W", [1, 2, 4])
@pytest.mark.parametrize("K", [4, 8, 16])
def test_mmo_at_every_width_equals_pycryptodome(W, K):
    """The rounds split into W-block instructions give pycryptodome's blocks (if the CPU has them)."""
    import numba

    from fss import _fast_ni

    if W > _aesni.vector_blocks():
        pytest.skip(f"the CPU has no {W}-block AES instructions")
    mmo = _fast_ni.make_mmo(K, W)

    @numba.njit
    def run(rk, S):
        mmo(rk, S)

    S = CSPRNG(K + W).uint64((K, 2))
    want = np.frombuffer(AES.new(prg.PI.key, AES.MODE_ECB).encrypt(S.tobytes()), dtype=U64)
    run(_fast_ni._RK, S2 := S.copy())
    assert np.array_equal(S2, want.reshape(K, 2) ^ S)


@needs_aesni
@pytest.mark.parametrize("n,l,B,m,block", [(32, 40, 8, 1, 64), (32, 40, 67, 2, 40), (5, 64, 3, 1, 64),
                                           (64, 13, 29, 3, 16), (33, 40, 1000, 1, 256)])
def test_lane_kernels_are_bit_identical_to_numpy(monkeypatch, n, l, B, m, block):
    """Gen and Eval in blocks of whole lane groups and a padded rest: same correction words
    and shares as numpy, and the shares reconstruct [x < alpha] beta."""
    rng = CSPRNG(n * 1000 + B)
    alpha = rng.uint64(B) >> U64(64 - n)
    beta = rng.uint64(B)
    roots = prg.random_seeds(rng, 2 * B).reshape(2, B, 2)
    x = rng.uint64((m, B)) >> U64(64 - n)
    x[0, : B // 3] = alpha[: B // 3]
    got = []
    for enabled in (True, False):
        monkeypatch.setattr(_fast, "ENABLED", enabled)
        cws = _tree.gen_batch(n, l, "dcf", alpha, beta, roots, block=block)
        keys = [dcf.DCFKey(p, n, l, (B,), roots[p], *cws) for p in (0, 1)]
        ys = [_tree.eval_batch("dcf", n, l, p, keys[p], x, block=block * m) for p in (0, 1)]
        got.append((cws, ys))
    (c1, y1), (c0, y0) = got
    assert all(np.array_equal(a, b) for a, b in zip(c1, c0))
    assert all(np.array_equal(a, b) for a, b in zip(y1, y0))
    total = (y1[0] + y1[1]) & U64((1 << l) - 1)
    assert np.array_equal(total, np.where(x < alpha, beta & U64((1 << l) - 1), U64(0)))
