"""The compiled Gen/Eval kernels (optional ``fast`` extra) against the numpy kernels."""

import numpy as np
import pytest
from Crypto.Cipher import AES

from fss import _aesni, _fast, _tree, dcf, dpf, prg
from mpc.arith.rng import CSPRNG

U64 = np.uint64
needs_numba = pytest.mark.skipif(not _fast.AVAILABLE, reason="numba (the 'fast' extra) not installed")
needs_aesni = pytest.mark.skipif(not _fast.AESNI, reason="numba or the CPU's AES instructions missing")


def test_round_keys_match_fips197():
    """FIPS-197 Appendix A.1: the key expansion of 2b7e1516... (first and last round keys)."""
    key = bytes.fromhex("2b7e151628aed2a6abf7158809cf4f3c")
    rk = _aesni.round_keys(key)
    assert rk.shape == (11, 2) and rk[0].tobytes() == key
    assert rk[10].tobytes() == bytes.fromhex("d014f9a8c9ee2589e13f0cc8b6630ca6")
    with pytest.raises(ValueError, match="16 bytes"):
        _aesni.round_keys(b"short")


@needs_aesni
@pytest.mark.parametrize("K", [4, 8])
def test_compiled_aes_rounds_equal_pycryptodome(K):
    import numba

    from fss import _fast_ni

    mmo = _fast_ni._mmo8 if K == 8 else _fast_ni._mmo4

    @numba.njit
    def run(rk, S):
        mmo(rk, S)

    @numba.njit
    def run_tuple(rk, S):                            # the register (tuple) form, 8 blocks
        t = _fast_ni._mmo8t(rk, (S[0, 0], S[0, 1], S[1, 0], S[1, 1], S[2, 0], S[2, 1],
                                 S[3, 0], S[3, 1], S[4, 0], S[4, 1], S[5, 0], S[5, 1],
                                 S[6, 0], S[6, 1], S[7, 0], S[7, 1]))
        for j in range(16):
            S[j // 2, j % 2] = t[j]

    for seed in range(3):
        S = CSPRNG(seed).uint64((K, 2))
        want = np.frombuffer(AES.new(prg.PI.key, AES.MODE_ECB).encrypt(S.tobytes()), dtype=U64)
        got = S.copy()
        run(_fast_ni._RK, got)
        assert np.array_equal(got, want.reshape(K, 2) ^ S)
        if K == 8:
            got = S.copy()
            run_tuple(_fast_ni._RK, got)
            assert np.array_equal(got, want.reshape(K, 2) ^ S)


def _paths():
    out = [("numpy", False, False)]
    if _fast.AVAILABLE:
        out.append(("numba+pycryptodome", True, False))
    if _fast.AESNI:
        out.append(("numba+aesni", True, True))
    return out


def _run(monkeypatch, enabled, aesni, mode, n, l, B, m):
    monkeypatch.setattr(_fast, "ENABLED", enabled)
    monkeypatch.setattr(_fast, "AESNI", aesni)
    rng = CSPRNG(1000 * n + B)
    alpha = rng.uint64(B) >> U64(64 - n)
    beta = rng.uint64(B)
    roots = prg.random_seeds(rng, 2 * B).reshape(2, B, 2)
    x = rng.uint64((m, B)) >> U64(64 - n)
    x[0, : B // 2] = alpha[: B // 2]                     # on-path points too
    cws = _tree.gen_batch(n, l, mode, alpha, beta, roots, block=5)
    if mode == "dcf":
        keys = [dcf.DCFKey(p, n, l, (B,), roots[p], *cws) for p in (0, 1)]
    else:
        keys = [dpf.DPFKey(p, n, l, mode, (B,), roots[p], *cws[:3], cws[4]) for p in (0, 1)]
    ys = [_tree.eval_batch(mode, n, l, p, keys[p], x, block=4 * m + 3) for p in (0, 1)]
    return cws, ys, (alpha, beta, x)


@needs_numba
@pytest.mark.parametrize("mode", ["dcf", "arith", "xor"])
@pytest.mark.parametrize("n,l,B,m", [(1, 1, 1, 1), (7, 13, 9, 1), (33, 40, 17, 2),
                                     (64, 64, 8, 3), (12, 64, 23, 1)])
def test_compiled_paths_are_bit_identical_to_numpy(monkeypatch, mode, n, l, B, m):
    """Keys and shares from every kernel path agree word for word (blocks of 5 keys and
    4m + 3 points: partial lane groups), and reconstruct the function."""
    runs = {name: _run(monkeypatch, e, a, mode, n, l, B, m) for name, e, a in _paths()}
    (ref_cws, ref_ys, (alpha, beta, x)), *others = runs.values()
    for cws, ys, _ in others:
        for a, b in zip(cws, ref_cws):
            assert (a is None and b is None) or np.array_equal(a, b)
        assert np.array_equal(ys[0], ref_ys[0]) and np.array_equal(ys[1], ref_ys[1])
    mask = U64((1 << l) - 1)
    if mode == "xor":
        total = ref_ys[0] ^ ref_ys[1]
    else:
        total = (ref_ys[0] + ref_ys[1]) & mask
    hit = (x < alpha) if mode == "dcf" else (x == alpha)
    assert np.array_equal(total, np.where(hit, beta & mask, U64(0)))


@needs_numba
def test_public_api_uses_the_compiled_path_with_serialized_keys(monkeypatch):
    """dcf.gen/eval with keys read back from bytes (read-only arrays): same shares either way."""
    p = dcf.DCFParams(20, 32)
    B = 3 * dcf.BLOCK + 5
    alpha = CSPRNG(7).uint64(B) >> U64(44)
    x = CSPRNG(8).uint64((2, B)) >> U64(44)
    got = []
    for enabled in (True, False):
        monkeypatch.setattr(_fast, "ENABLED", enabled)
        k0, k1 = dcf.gen(p, alpha, 5, CSPRNG(9), workers=2)
        k0 = dcf.from_bytes(dcf.to_bytes(k0))
        got.append((dcf.to_bytes(k1), dcf.eval(p, 0, k0, x, workers=2), dcf.eval(p, 1, k1, x)))
    assert got[0][0] == got[1][0]
    assert np.array_equal(got[0][1], got[1][1]) and np.array_equal(got[0][2], got[1][2])


@needs_numba
@pytest.mark.parametrize("l", [1, 13, 40, 63, 64])
def test_serialization_is_identical_with_and_without_numba(monkeypatch, l):
    """The compiled word packing/unpacking of to_bytes/from_bytes equals numpy's, and rejects
    the same over-long values."""
    p = dcf.DCFParams(9, l)
    alpha = CSPRNG(l).uint64(37) >> U64(55)
    k0, _ = dcf.gen(p, alpha, 3, CSPRNG(l + 1))
    blobs, keys = [], []
    for enabled in (True, False):
        monkeypatch.setattr(_fast, "ENABLED", enabled)
        blobs.append(dcf.to_bytes(k0))
        keys.append(dcf.from_bytes(blobs[-1]))
    assert blobs[0] == blobs[1] and keys[0] == keys[1] == k0
    if l % 8:
        bad = bytearray(blobs[0])
        bad[-1] |= 0x80                               # cw_last of the last key gets bit 7 of its top byte
        for enabled in (True, False):
            monkeypatch.setattr(_fast, "ENABLED", enabled)
            with pytest.raises(ValueError, match="cw_last holds a value"):
                dcf.from_bytes(bytes(bad))
