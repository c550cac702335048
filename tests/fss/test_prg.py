import numpy as np
import pytest
from Crypto.Cipher import AES
from scipy import stats

from fss import prg
from mpc.arith.rng import CSPRNG

U64 = np.uint64


def _ref(lo, hi, x, value):
    """MMO on pycryptodome's public API: (pi(u) ^ u) with u = w ^ x (^ D for value words)."""
    u_lo, u_hi = lo ^ x, hi ^ ((1 << 63) if value else 0)
    block = u_lo.to_bytes(8, "little") + u_hi.to_bytes(8, "little")
    enc = AES.new(prg.PI.key, AES.MODE_ECB).encrypt(block)
    return int.from_bytes(enc[:8], "little") ^ u_lo, int.from_bytes(enc[8:], "little") ^ u_hi


def test_child_and_value_blocks_match_the_definition(rng):
    w = rng.uint64((20, 2))
    x = (np.arange(20) % 2).astype(U64)
    c = prg.child_blocks(w, x)
    v = prg.value_words(w, x)
    for j in range(20):
        lo, hi, xj = int(w[j, 0]), int(w[j, 1]), int(x[j])
        assert (int(c[j, 0]), int(c[j, 1])) == _ref(lo, hi, xj, False)
        assert int(v[j]) == _ref(lo, hi, xj, True)[0]
    assert np.array_equal(prg.child_blocks(w, 1), prg.child_blocks(w, np.ones(20, U64)))


def test_raw_and_public_encrypt_agree(rng):
    buf = rng.uint64((1000, 2))
    a = prg.PI.encrypt(buf, np.empty_like(buf))
    b = np.frombuffer(prg.PI.cipher.encrypt(buf.tobytes()), dtype=U64).reshape(1000, 2)
    assert np.array_equal(a, b)
    ba, out = bytearray(buf.tobytes()), bytearray(16000)
    prg.PI.encrypt_bytes(ba, out)
    assert bytes(out) == a.tobytes()


def test_raw_ecb_fast_path_is_active():
    """Fails loudly when a pycryptodome release moves or changes the private raw ECB entry
    point that ``fss.prg`` uses (through cffi): the code falls back to the public API with the
    same results (next test), but small-batch FSS gets slower; restore the fast path then."""
    from Crypto.Util import _raw_api

    if _raw_api.backend != "cffi":
        pytest.skip(f"pycryptodome runs on its {_raw_api.backend} backend here (no cffi)")
    assert prg.PI.fast_path == "raw ECB (cffi)", (
        f"fss.prg lost pycryptodome's raw ECB fast path: {prg.PI.fast_path}")


def test_public_fallback_gives_the_same_blocks(rng):
    """The public-API path (taken when the fast path is unavailable) encrypts identically."""
    slow = prg.FixedKeyAES(b"tree", fast=False)
    assert slow._raw is None and slow.key == prg.PI.key
    buf = rng.uint64((333, 2))
    assert np.array_equal(slow.encrypt(buf, np.empty_like(buf)),
                          prg.PI.encrypt(buf, np.empty_like(buf)))
    ba, out_slow, out_fast = bytearray(buf.tobytes()), bytearray(buf.nbytes), bytearray(buf.nbytes)
    assert slow.encrypt_bytes(ba, out_slow) == prg.PI.encrypt_bytes(ba, out_fast)
    for aes in (slow, prg.PI):
        inb, outb, run = aes.bytes_encryptor(64)
        inb[:] = bytes(range(64))
        run()
        assert bytes(outb) == AES.new(prg.PI.key, AES.MODE_ECB).encrypt(bytes(range(64)))


def test_expand_children_and_bits(rng):
    s = prg.random_seeds(rng, 500)
    sl, tl, sr, tr, vl, vr = prg.expand(s)
    cl = prg.child_blocks(s, 0)
    assert np.array_equal(tl, cl[:, 0] & U64(1))
    assert np.array_equal(sl[:, 0], cl[:, 0] & prg.LOW_BIT_CLEAR)
    assert np.array_equal(sr[:, 1], prg.child_blocks(s, 1)[:, 1])
    assert np.array_equal(vl, prg.value_words(s, 0)) and np.array_equal(vr, prg.value_words(s, 1))
    assert set(np.unique(tl)) <= {0, 1} and set(np.unique(tr)) <= {0, 1}
    assert np.all(sl[:, 0] & U64(1) == 0)
    # the four blocks of a node are distinct
    assert not np.any(np.all(sl == sr, axis=1)) and not np.any(vl == vr)
    _, _, _, _, nv, _ = prg.expand(s, values=False)
    assert nv is None


def test_outputs_look_uniform():
    s = prg.random_seeds(CSPRNG(5), 4096)
    words = np.concatenate([prg.child_blocks(s, 0).reshape(-1), prg.value_words(s, 1)])
    bits = np.unpackbits(words.view(np.uint8))
    assert abs(bits.mean() - 0.5) < 0.005
    counts = np.bincount(words.view(np.uint8), minlength=256)
    assert stats.chisquare(counts).pvalue > 1e-4


def test_round_keys_match_fips197():
    """FIPS-197 Appendix A.1: the key expansion of 2b7e1516... (first and last round keys)."""
    key = bytes.fromhex("2b7e151628aed2a6abf7158809cf4f3c")
    rk = prg.round_keys(key)
    assert rk.shape == (11, 2) and rk[0].tobytes() == key
    assert rk[10].tobytes() == bytes.fromhex("d014f9a8c9ee2589e13f0cc8b6630ca6")
    with pytest.raises(ValueError, match="16 bytes"):
        prg.round_keys(b"short")


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
        prg.child_blocks(np.zeros((3, 3), U64), 0)
    with pytest.raises(TypeError, match="seeds"):
        prg.child_blocks(np.zeros((3, 2), np.int64), 0)
    with pytest.raises(ValueError, match="x must be 0 or 1"):
        prg.value_words(np.zeros((3, 2), U64), 2)
