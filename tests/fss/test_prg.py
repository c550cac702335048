import numpy as np
import pytest
from scipy import stats

from fss import prg
from mpc.rng import CSPRNG

U64 = np.uint64


def test_hash_blocks_shapes_and_determinism(rng):
    s = prg.random_seeds(rng, 37)
    a = prg.hash_blocks(s, [0, 1, 2])
    b = prg.hash_blocks(s.copy(), [0, 1, 2])
    assert a.shape == (37, 3, 2) and a.dtype == U64
    assert np.array_equal(a, b)
    # per-seed tweaks pick the same blocks as the fixed tweak columns
    tw = (np.arange(37) % 3).astype(U64)
    c = prg.hash_blocks(s, tw[:, None])[:, 0]
    assert np.array_equal(c, a[np.arange(37), tw.astype(int)])
    # distinct tweaks give distinct blocks
    assert not np.any(np.all(a[:, 0] == a[:, 1], axis=1))


def test_hash_is_mmo_with_orthomorphism():
    from Crypto.Cipher import AES

    s = np.array([[0x1234, 0xABCDEF]], dtype=U64)
    lo, hi = 0x1234, 0xABCDEF
    sig = (lo ^ hi ^ 2, lo)
    block = sig[0].to_bytes(8, "little") + sig[1].to_bytes(8, "little")
    enc = AES.new(prg._FIXED_KEY, AES.MODE_ECB).encrypt(block)
    want = (int.from_bytes(enc[:8], "little") ^ sig[0], int.from_bytes(enc[8:], "little") ^ sig[1])
    got = prg.hash_blocks(s, 2)[0, 0]
    assert (int(got[0]), int(got[1])) == want


def test_one_encrypt_call_per_hash(rng, monkeypatch):
    calls = []
    real = prg.aes_ecb_inplace

    def counting(buf, out):
        calls.append(buf.size)
        return real(buf, out)

    monkeypatch.setattr(prg, "aes_ecb_inplace", counting)
    prg.expand(prg.random_seeds(rng, 1000))
    assert len(calls) == 1 and calls[0] == 1000 * 3 * 2


def test_expand_children_and_bits(rng):
    s = prg.random_seeds(rng, 500)
    sl, tl, sr, tr, vl, vr = prg.expand(s)
    blocks = prg.hash_blocks(s, [0, 1, 2])
    assert np.array_equal(tl, blocks[:, 0, 0] & U64(1))
    assert np.array_equal(sl[:, 0], blocks[:, 0, 0] & prg.LOW_BIT_CLEAR)
    assert np.array_equal(sr[:, 1], blocks[:, 1, 1])
    assert np.array_equal(vl, blocks[:, 2, 0]) and np.array_equal(vr, blocks[:, 2, 1])
    assert set(np.unique(tl)) <= {0, 1} and set(np.unique(tr)) <= {0, 1}
    assert np.all(sl[:, 0] & U64(1) == 0)
    _, _, _, _, nv, _ = prg.expand(s, values=False)
    assert nv is None


def test_outputs_look_uniform():
    s = prg.random_seeds(CSPRNG(5), 4096)
    words = prg.hash_blocks(s, [0, 1, 2]).reshape(-1)
    bits = np.unpackbits(words.view(np.uint8))
    assert abs(bits.mean() - 0.5) < 0.005
    counts = np.bincount(words.view(np.uint8), minlength=256)
    assert stats.chisquare(counts).pvalue > 1e-4


def test_convert():
    w = np.array([0xFFFFFFFFFFFFFFFF, 5], dtype=U64)
    assert np.array_equal(prg.convert(w, 3), np.array([7, 5], dtype=U64))
    assert np.array_equal(prg.convert(w, 64), w)
    with pytest.raises(ValueError, match="bits"):
        prg.convert(w, 0)
    with pytest.raises(TypeError, match="words"):
        prg.convert(np.array([1, 2]), 8)


def test_bad_seeds():
    with pytest.raises(ValueError, match="seeds"):
        prg.hash_blocks(np.zeros((3, 3), U64), 0)
    with pytest.raises(TypeError, match="seeds"):
        prg.hash_blocks(np.zeros((3, 2), np.int64), 0)
    with pytest.raises(ValueError, match="tweaks"):
        prg.hash_blocks(np.zeros((3, 2), U64), np.zeros((2, 2), U64))
