"""OT building blocks: bit transpose, fixed-key AES PRG / hash, curve backends, base OT."""

import hashlib

import numpy as np
import pytest
from Crypto.Cipher import AES

from mpc.arith.rng import as_rng
from mpc.ot import available_groups, prg, transpose_bits
from mpc.ot.group import POINT_BYTES, get_group, kdf
from mpc.ot.iknp import Layout, prg_matrix
from mpc.ot.transpose import transpose_bits_reference


@pytest.mark.parametrize("shape", [(8, 1), (8, 9), (16, 7), (24, 5), (128, 1), (128, 3),
                                   (128, 125), (128, 2000)])
def test_transpose_matches_naive_reference(shape):
    mat = as_rng(7).derive("tr", *shape).bytes_array(shape[0] * shape[1]).reshape(shape)
    before = mat.copy()
    assert np.array_equal(transpose_bits(mat), transpose_bits_reference(mat))
    assert np.array_equal(mat, before)          # input untouched


def test_transpose_every_single_bit_of_a_tile():
    # All 8 x 8 positions one at a time, checked against the definition itself.
    for i in range(16):
        for j in range(16):
            mat = np.zeros((16, 2), np.uint8)
            mat[i, j // 8] = 1 << (j % 8)
            out = transpose_bits(mat)
            expect = np.zeros((16, 2), np.uint8)
            expect[j, i // 8] = 1 << (i % 8)
            assert np.array_equal(out, expect), (i, j)


def test_transpose_rejects_bad_shapes():
    with pytest.raises(ValueError, match="mat must be a uint8"):
        transpose_bits(np.zeros((7, 2), np.uint8))
    with pytest.raises(ValueError, match="mat must be a uint8"):
        transpose_bits(np.zeros((8, 2), np.uint16))


def _aes_ref(x16: bytes, tweak_lo: int, tweak_hi: int) -> bytes:
    """F(x, w) = pi(sigma(x) ^ w) ^ sigma(x) ^ w on raw bytes with pycryptodome."""
    lo, hi = int.from_bytes(x16[:8], "little"), int.from_bytes(x16[8:], "little")
    s = ((lo ^ hi ^ tweak_lo).to_bytes(8, "little") + (lo ^ tweak_hi).to_bytes(8, "little"))
    enc = AES.new(prg._FIXED_KEY, AES.MODE_ECB).encrypt(s)
    return bytes(a ^ b for a, b in zip(enc, s))


def test_prg_matrix_and_hash_match_an_independent_aes_reference():
    rng = as_rng("prg")
    seeds = rng.bytes_array(2 * 128 * 16).reshape(2, 128, 16)
    layout = Layout(np.array([200, 130]))           # 2 + 2 blocks
    mat = prg_matrix(seeds, layout).view(np.uint8).reshape(128, 4, 16)
    for i in (0, 5, 127):
        for e, (g, c) in enumerate([(0, 0), (0, 1), (1, 0), (1, 1)]):
            assert mat[i, e].tobytes() == _aes_ref(seeds[g, i].tobytes(), c, 0)
    x = rng.bytes_array(5 * 16).reshape(5, 16)
    idx = np.array([3, 9, 10, 11, 40], np.uint64)
    h = prg.hash_rows(x.view(np.uint64), idx).view(np.uint8).reshape(5, 16)
    for k in range(5):
        assert h[k].tobytes() == _aes_ref(x[k].tobytes(), int(idx[k]), 1)
    long = prg.expand_keys(x, 20, idx)
    assert long.shape == (5, 20)
    assert long[1].tobytes() == (_aes_ref(x[1].tobytes(), 9, 1 << 32)
                                 + _aes_ref(x[1].tobytes(), 9, (1 << 32) + 1))[:20]
    assert np.array_equal(prg.expand_keys(x, 7, idx), x[:, :7])


def test_kdf_is_sha256_of_the_transcript_and_the_ot_index():
    a, b, p = bytes(range(33)), bytes(range(1, 34)), bytes(range(2, 35))
    for index in (0, 1, 2 ** 40 + 3):
        ref = hashlib.sha256(b"ustat-toolkit mpc.gc.ot Chou-Orlandi v1"
                             + index.to_bytes(8, "little") + a + b + p).digest()[:16]
        assert kdf(a, b, p, index) == ref
    assert kdf(a, b, p, 0) != kdf(a, b, p, 1)


@pytest.mark.parametrize("name", available_groups())
def test_group_backend_chou_orlandi_keys(name):
    g = get_group(name)
    raw = as_rng(7).derive("grp", name).bytes_array(40 * 9)
    a = g.scalar(raw[:40].tobytes())
    A, a_enc, neg = g.setup(a)
    assert len(a_enc) == POINT_BYTES and a_enc[0] in (2, 3)
    for k in range(8):
        b = g.scalar(raw[40 * (k + 1):40 * (k + 2)].tobytes())
        c = k % 2
        b_enc, kc = g.choose(A, a_enc, b, c, k)
        k0, k1 = g.keys(a, a_enc, neg, b_enc, k)
        assert kc == (k1 if c else k0) and k0 != k1 and len(kc) == 16
        # a receiver replaying B_k at another OT index gets unrelated keys there
        assert not {k0, k1} & set(g.keys(a, a_enc, neg, b_enc, k + 100))


@pytest.mark.parametrize("name", available_groups())
def test_group_backend_rejects_b_equal_to_a(name):
    """B = A makes aB - aA the point at infinity (k1 = H(.., infinity), known to anyone):
    both curves refuse it with the same ValueError (secp256k1 used to by accident)."""
    g = get_group(name)
    a = g.scalar(as_rng(8).derive("grp", name).bytes_array(40).tobytes())
    _, a_enc, neg = g.setup(a)
    with pytest.raises(ValueError, match="B equals A"):
        g.keys(a, a_enc, neg, a_enc, 0)


def test_groups_agree_on_encoding_size_and_unknown_name_is_refused():
    assert "p256" in available_groups()
    with pytest.raises(ValueError, match="group must be one of"):
        get_group("curve25519")


@pytest.mark.skipif("secp256k1" not in available_groups(), reason="coincurve not installed")
def test_secp256k1_points_are_the_library_encoding():
    from coincurve import PrivateKey
    g = get_group("secp256k1")
    a = g.scalar(bytes(40))                        # scalar 1 -> A = generator
    _, a_enc, _ = g.setup(a)
    assert a_enc == PrivateKey(a).public_key.format(compressed=True)
    assert a == (1).to_bytes(32, "big")


def test_p256_uses_public_pycryptodome_api_only():
    """The P-256 backend takes G and the order from public calls (``ECC.construct``), not
    ``ECC._curves``: its generator encodes as SEC1's, and a private-attribute change in a
    pycryptodome release cannot break it. The point encodings match the library's own."""
    import inspect

    from Crypto.PublicKey import ECC

    from mpc.ot import group
    assert "_curves" not in inspect.getsource(group)
    g = get_group("p256")
    _, a_enc, _ = g.setup(1)                           # scalar 1 -> A = generator
    lib = ECC.construct(curve="P-256", d=1).public_key().export_key(format="SEC1",
                                                                     compress=True)
    assert a_enc == lib and g.order == group.P256_ORDER
