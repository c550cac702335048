"""Every kernel backend (fss.kernels) against the numpy reference: the same keys, bytes and
shares bit for bit, and the AES rounds of the compiled backend against pycryptodome."""

import numpy as np
import pytest
from Crypto.Cipher import AES

from fss import _keyio, kernels, prg, tree
from fss.keys import DCFParams, DPFParams
from mpc.arith.rng import CSPRNG

U64 = np.uint64
MODES = ["dcf", "arith", "xor"]
# n, l, batch, points per key, Gen block, Eval block: partial lane groups of 8, blocks
# holding whole groups and a padded rest, several blocks, the largest and smallest n and l
CASES = [(1, 1, 1, 1, 5, 7), (7, 13, 9, 1, 5, 7), (33, 40, 17, 2, 5, 11), (64, 64, 8, 3, 5, 15),
         (12, 64, 23, 1, 5, 7), (32, 40, 67, 2, 40, 80), (5, 64, 3, 1, 64, 64),
         (64, 13, 29, 3, 16, 48), (33, 40, 1000, 1, 256, 256), (9, 63, 37, 2, 8, 16),
         (20, 32, 3 * tree.BLOCK + 5, 2, tree.BLOCK, tree.EVAL_BLOCK)]


def _params(mode, n, l):
    return DCFParams(n, l) if mode == "dcf" else DPFParams(n, l, mode)


def _run(params, alpha, beta, x, seed):
    """Keys, their bytes (made straight from Gen and read back), shares of the keys read
    back (read-only arrays) at x, and shares of a few keys at a few points (the small path)."""
    keys = tree.gen(params, alpha, beta, CSPRNG(seed), workers=2)
    blobs = tree.gen_bytes(params, alpha, beta, CSPRNG(seed), workers=2)
    back = [_keyio.from_bytes(b, type(params)) for b in blobs]
    ys = [tree.eval(params, p, back[p], x, workers=2) for p in (0, 1)]
    few = max(1, kernels.SMALL // x.shape[0])
    small = [tree.eval(params, p, keys[p].take(slice(0, few)), x[:, :few]) for p in (0, 1)]
    return keys, blobs, back, ys, small


@pytest.mark.parametrize("backend", kernels.NAMES)
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("n,l,B,m,gen_block,eval_block", CASES)
def test_backend_gives_the_reference_bits(monkeypatch, backend, mode, n, l, B, m, gen_block,
                                          eval_block):
    """Keys, serialized keys, parsed keys and shares (blocks of whole lane groups and a padded
    rest, several blocks on two workers, and a few points) equal the numpy reference's word
    for word; the shares reconstruct the function; an over-long value is refused alike."""
    why = kernels.missing(backend)
    if why is not None:
        pytest.skip(f"backend {backend!r} is not available here: {why}")
    monkeypatch.setattr(tree, "BLOCK", gen_block)
    monkeypatch.setattr(tree, "EVAL_BLOCK", eval_block)
    params = _params(mode, n, l)
    rng = CSPRNG(1000 * n + B)
    alpha = rng.uint64(B) >> U64(64 - n)
    beta = rng.uint64(B)
    x = rng.uint64((m, B)) >> U64(64 - n)
    x[0, : B // 2] = alpha[: B // 2]                     # on-path points too
    with kernels.forced("numpy"):
        ref = _run(params, alpha, beta, x, B + n)
    with kernels.forced(backend) as be:
        for op, size in (("gen", B), ("eval", m * B), ("eval", 1), ("codec", None)):
            assert kernels.choose(op, size).name == \
                (backend if be.offers(op, size) else "numpy")
        got = _run(params, alpha, beta, x, B + n)
    (k_ref, b_ref, p_ref, y_ref, s_ref), (k, b, p, y, s) = ref, got
    assert k == k_ref and b == b_ref and p == p_ref
    assert b == tuple(tree.to_bytes(key) for key in k) and p[0] == k[0] and p[1] == k[1]
    assert all(np.array_equal(u, v) for u, v in zip(y + s, y_ref + s_ref))
    mask = U64((1 << l) - 1)
    total = (y[0] ^ y[1]) if mode == "xor" else (y[0] + y[1]) & mask
    hit = (x < alpha) if mode == "dcf" else (x == alpha)
    assert np.array_equal(total, np.where(hit, beta & mask, U64(0)))
    if l % 8:
        bad = bytearray(b[0])
        bad[-1] |= 0x80                  # cw_last of the last key: a bit above 2^l in its top byte
        with kernels.forced(backend), pytest.raises(ValueError, match="cw_last holds a value"):
            _keyio.from_bytes(bytes(bad), type(params))


def test_choose_is_the_one_dispatch():
    """What is picked for which size, the forced backend and its limits, and the refusals."""
    have = kernels.available()
    assert set(have) <= set(kernels.NAMES) and {"numpy", "scalar"} <= set(have)
    fastest = "aesni" if "aesni" in have else "numba" if "numba" in have else "numpy"
    assert kernels.choose("gen", 10**6).name == fastest
    assert kernels.choose("eval", 10**6).name == fastest
    assert kernels.choose("eval", kernels.SMALL).name == ("aesni" if "aesni" in have else "scalar")
    assert kernels.choose("eval", kernels.SMALL + 1).name == fastest
    assert kernels.choose("expand").name == "numpy"         # DPF full domain: numpy only
    with kernels.forced("scalar"):
        assert kernels.choose("eval", kernels.SMALL).name == "scalar"
        assert kernels.choose("eval", kernels.SMALL + 1).name == "numpy"     # beyond its bound
        assert kernels.choose("gen").name == "numpy"                         # not offered
    assert kernels.choose("eval", 1).name != "numpy" or "scalar" not in have
    with pytest.raises(ValueError, match="op"):
        kernels.choose("walk")
    with pytest.raises(ValueError, match="backend"):
        kernels.missing("gpu")
    for name in kernels.NAMES:
        if name not in have:
            assert kernels.missing(name)
            with pytest.raises(ValueError, match="not available"), kernels.forced(name):
                pass


needs_aesni = pytest.mark.skipif(kernels.missing("aesni") is not None,
                                 reason=f"backend 'aesni': {kernels.missing('aesni')}")


@needs_aesni
@pytest.mark.parametrize("W", [1, 2, 4])
@pytest.mark.parametrize("K", [4, 8, 16])
def test_compiled_aes_rounds_equal_pycryptodome(W, K):
    """The MMO rounds at every AES width the CPU has, in array form and (8 blocks) in
    register form, give pycryptodome's blocks."""
    import numba

    from fss.kernels import _host, aesni

    if _host.vector_blocks() < W:
        pytest.skip(f"the CPU has no {W}-block AES instructions")
    mmo = aesni.make_mmo(K, W)

    @numba.njit
    def run(rk, S):
        mmo(rk, S)

    @numba.njit
    def run_tuple(rk, S):                            # the register (tuple) form, 8 blocks
        t = aesni._mmo8t(rk, (S[0, 0], S[0, 1], S[1, 0], S[1, 1], S[2, 0], S[2, 1],
                              S[3, 0], S[3, 1], S[4, 0], S[4, 1], S[5, 0], S[5, 1],
                              S[6, 0], S[6, 1], S[7, 0], S[7, 1]))
        for j in range(16):
            S[j // 2, j % 2] = t[j]

    for seed in range(3):
        S = CSPRNG(100 * K + 10 * W + seed).uint64((K, 2))
        want = np.frombuffer(AES.new(prg.PI.key, AES.MODE_ECB).encrypt(S.tobytes()), dtype=U64)
        got = S.copy()
        run(aesni._RK, got)
        assert np.array_equal(got, want.reshape(K, 2) ^ S)
        if K == 8 and W == aesni.WIDTH:
            got = S.copy()
            run_tuple(aesni._RK, got)
            assert np.array_equal(got, want.reshape(K, 2) ^ S)
