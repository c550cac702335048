import dataclasses

import numpy as np
import pytest
from Crypto.Cipher import AES
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from fss import dcf, prg
from mpc.arith.rng import CSPRNG

U64 = np.uint64


def _mask(l):
    return U64((1 << l) - 1)


def _reconstruct(p, k0, k1, x):
    return (dcf.eval(p, 0, k0, x) + dcf.eval(p, 1, k1, x)) & _mask(p.out_bits)


# -- scalar reference (EUROCRYPT 2021 Fig. 1, literally, one key at a time) ------------------
_AES = AES.new(prg.PI.key, AES.MODE_ECB)     # independent: pycryptodome's public API, ints


def _mmo(lo, hi):
    enc = _AES.encrypt(lo.to_bytes(8, "little") + hi.to_bytes(8, "little"))
    return int.from_bytes(enc[:8], "little") ^ lo, int.from_bytes(enc[8:], "little") ^ hi


def _blocks(lo, hi):
    """[child_L, child_R, (value_L, value_R)] of the node word (lo, hi) (fss.prg docstring)."""
    kids = [_mmo(lo ^ x, hi) for x in (0, 1)]
    vals = tuple(_mmo(lo ^ x, hi ^ (1 << 63))[0] for x in (0, 1))
    return kids + [vals]


def ref_gen(n, l, alpha, beta, root0, root1):
    N = 1 << l
    W = [(int(root0[0]), int(root0[1])), (int(root1[0]) | 1, int(root1[1]))]
    va, cws = 0, []
    for i in range(n):
        ai = (alpha >> (n - 1 - i)) & 1
        t = [W[b][0] & 1 for b in (0, 1)]
        ch = [_blocks(*W[b]) for b in (0, 1)]
        S = [[((c[j][0] >> 1) << 1, c[j][1]) for j in (0, 1)] for c in ch]   # [party][L/R]
        T = [[c[j][0] & 1 for j in (0, 1)] for c in ch]
        V = [[c[2][0], c[2][1]] for c in ch]
        keep, lose = ai, 1 - ai
        scw = (S[0][lose][0] ^ S[1][lose][0], S[0][lose][1] ^ S[1][lose][1])
        sg = -1 if t[1] else 1
        vcw = sg * (V[1][lose] - V[0][lose] - va)
        if lose == 0:
            vcw += sg * beta
        vcw %= N
        va = (va - V[1][keep] + V[0][keep] + sg * vcw) % N
        tcw = [T[0][0] ^ T[1][0] ^ ai ^ 1, T[0][1] ^ T[1][1] ^ ai]
        cws.append((scw, tcw[0], tcw[1], vcw))
        for b in (0, 1):
            s_b = S[b][keep]
            if t[b]:
                s_b = (s_b[0] ^ scw[0], s_b[1] ^ scw[1])
            tb = T[b][keep] ^ (t[b] & tcw[keep])
            W[b] = (s_b[0] | tb, s_b[1])
    sg = -1 if W[1][0] & 1 else 1
    last = (sg * (W[1][1] - W[0][1] - va)) % N
    return cws, last


def ref_eval(n, l, b, seed, cws, last, x):
    N = 1 << l
    W = (int(seed[0]) | b, int(seed[1]))
    v = 0
    for i in range(n):
        xi = (x >> (n - 1 - i)) & 1
        t = W[0] & 1
        blk = _blocks(*W)
        child = blk[xi]
        tc = child[0] & 1
        s = ((child[0] >> 1) << 1, child[1])
        vw = blk[2][xi]
        scw, tl, tr, vcw = cws[i]
        if t:
            s = (s[0] ^ scw[0], s[1] ^ scw[1])
            tc ^= tl if xi == 0 else tr
        v += vw + t * vcw
        W = (s[0] | tc, s[1])
    v += W[1] + (W[0] & 1) * last
    return (-v if b else v) % N


@pytest.mark.parametrize("n,l", [(1, 1), (5, 13), (12, 40), (64, 64)])
def test_batched_keys_equal_scalar_reference(n, l):
    rng = CSPRNG(11)
    B = 3
    alpha = rng.uint64(B) >> U64(64 - n)
    beta = rng.uint64(B) & _mask(l)
    p = dcf.DCFParams(n, l)
    k0, k1 = dcf.gen(p, alpha, beta, rng)
    xs = np.concatenate([alpha, rng.uint64(B) >> U64(64 - n)])
    for j in range(B):
        cws, last = ref_gen(n, l, int(alpha[j]), int(beta[j]), k0.seed[j], k1.seed[j])
        assert [int(c[3]) for c in cws] == [int(v) for v in k0.cw_value[:, j]]
        assert [c[0] for c in cws] == [(int(a), int(b)) for a, b in k0.cw_seed[:, j]]
        assert [c[1] for c in cws] == [int(v) for v in k0.cw_t_left[:, j]]
        assert [c[2] for c in cws] == [int(v) for v in k0.cw_t_right[:, j]]
        assert last == int(k0.cw_last[j])
        for x in xs[[j, B + j]]:
            xx = np.full(B, x, dtype=U64)
            for b, k in ((0, k0), (1, k1)):
                want = ref_eval(n, l, b, k.seed[j], cws, last, int(x))
                assert want == int(dcf.eval(p, b, k, xx)[j])


@pytest.mark.parametrize("n", range(1, 9))
def test_exhaustive_small_domains(n):
    """Every alpha, every x, for n <= 8, with varying output rings and random betas."""
    l = [1, 7, 8, 16, 33, 40, 63, 64][n - 1]
    rng = CSPRNG(100 + n)
    N = 1 << n
    alpha = np.repeat(np.arange(N, dtype=U64), N)
    x = np.tile(np.arange(N, dtype=U64), N)
    beta = rng.uint64(alpha.shape) & _mask(l)
    p = dcf.DCFParams(n, l)
    k0, k1 = dcf.gen(p, alpha, beta, rng)
    got = _reconstruct(p, k0, k1, x)
    assert np.array_equal(got, dcf.eval_plain(alpha, beta, x, l))


def test_awkward_batch_shapes_and_multi_point_eval(rng):
    p = dcf.DCFParams(6, 10)
    alpha = (rng.uint64((3, 7)) >> U64(58))
    k0, k1 = dcf.gen(p, alpha, 5, rng)
    assert k0.shape == (3, 7) and k0.seed.shape == (21, 2) and k0.cw_seed.shape == (6, 21, 2)
    xs = np.arange(64, dtype=U64)[:, None, None] * np.ones((1, 3, 7), U64)
    got = _reconstruct(p, k0, k1, xs)
    assert got.shape == (64, 3, 7)
    assert np.array_equal(got, (xs < alpha[None]).astype(U64) * U64(5))
    # a scalar instance (0-d batch)
    k0, k1 = dcf.gen(p, 17, -1, rng)
    assert k0.shape == ()
    assert int(_reconstruct(p, k0, k1, 3)) == (1 << 10) - 1
    assert int(_reconstruct(p, k0, k1, 17)) == 0


def test_block_boundaries(rng):
    """Batches larger than the cache block and not a multiple of it."""
    p = dcf.DCFParams(9, 16)
    B = dcf.BLOCK + 123
    alpha = rng.uint64(B) >> U64(55)
    x = rng.uint64(B) >> U64(55)
    k0, k1 = dcf.gen(p, alpha, 3, rng)
    assert np.array_equal(_reconstruct(p, k0, k1, x), (x < alpha).astype(U64) * U64(3))
    xs = np.stack([x, alpha, alpha - U64(1) & U64(511)])
    assert np.array_equal(_reconstruct(p, k0, k1, xs), (xs < alpha).astype(U64) * U64(3))


@pytest.mark.parametrize("n,l", [(32, 32), (40, 40), (64, 64), (64, 1), (33, 17)])
def test_random_large_domains(n, l, rng):
    B = 3000
    p = dcf.DCFParams(n, l)
    alpha = rng.uint64(B) >> U64(64 - n)
    x = rng.uint64(B) >> U64(64 - n)
    # adversarial points: x = alpha, alpha +- 1, 0, max
    top = U64((1 << n) - 1)
    x[:5] = [0, top, 0, top, 1]
    alpha[:5] = [0, top, top, 0, 0]
    x[5:10] = alpha[5:10]
    x[10:15] = alpha[10:15] - U64(1) & top
    x[15:20] = alpha[15:20] + U64(1) & top
    beta = rng.uint64(B) & _mask(l)
    k0, k1 = dcf.gen(p, alpha, beta, rng)
    assert np.array_equal(_reconstruct(p, k0, k1, x), dcf.eval_plain(alpha, beta, x, l))


def test_single_key_shares_look_uniform(rng):
    p = dcf.DCFParams(16, 16)
    k0, _k1 = dcf.gen(p, np.full(4000, 1000, U64), 1, rng)
    y0 = dcf.eval(p, 0, k0, np.full(4000, 5, U64))
    counts = np.bincount((y0 & U64(255)).astype(np.int64), minlength=256)
    assert stats.chisquare(counts).pvalue > 1e-4


# -- security: a single key is independent of alpha ---------------------------------------------
def _key_features(k, l):
    """Bits of seeds and correction words, per level, of a batch of keys (one party)."""
    seed_bits = np.unpackbits(k.seed.view(np.uint8), axis=1)              # (B, 128)
    cw_bits = np.unpackbits(np.ascontiguousarray(k.cw_seed.transpose(1, 0, 2)).view(np.uint8)
                            .reshape(k.batch, -1), axis=1)                # (B, 128 n)
    return seed_bits, cw_bits


@pytest.mark.parametrize("party", [0, 1])
def test_key_seeds_and_cws_pass_uniformity(party):
    rng = CSPRNG(77)
    n, l, B = 12, 16, 4000
    p = dcf.DCFParams(n, l)
    keys = dcf.gen(p, np.full(B, 0xABC, U64), 1, rng)
    k = keys[party]
    seed_bits, cw_bits = _key_features(k, l)
    # every seed bit but the cleared control-bit slot is a fair coin
    for bits in (seed_bits[:, 8:], cw_bits.reshape(B, n, 128)[:, :, 8:].reshape(B, -1)):
        freq = bits.mean(axis=0)
        z = (freq - 0.5) / np.sqrt(0.25 / B)
        assert np.abs(z).max() < 5.5
    for arr in (k.cw_t_left, k.cw_t_right):
        z = (arr.mean(axis=1) - 0.5) / np.sqrt(0.25 / B)
        assert np.abs(z).max() < 5.5
    vals = (k.cw_value & U64(255)).reshape(-1).astype(np.int64)
    assert stats.chisquare(np.bincount(vals, minlength=256)).pvalue > 1e-4


@pytest.mark.parametrize("party", [0, 1])
def test_key_distribution_does_not_depend_on_alpha(party):
    """Two-sample tests (fixed seeds): keys for alpha = 0 vs alpha = 2^n - 1 vs random alpha."""
    n, l, B = 10, 12, 4000
    p = dcf.DCFParams(n, l)
    ks = [dcf.gen(p, np.full(B, a, U64), 7, CSPRNG(300 + a))[party] for a in (0, (1 << n) - 1)]
    kr = dcf.gen(p, CSPRNG(9).uint64(B) >> U64(64 - n), 7, CSPRNG(301))[party]
    feats = []
    for k in ks + [kr]:
        feats.append({
            "t_left": k.cw_t_left.mean(axis=1),
            "t_right": k.cw_t_right.mean(axis=1),
            "cw_seed_lsb8": (k.cw_seed[:, :, 0] >> U64(1) & U64(255)).astype(np.int64),
            "cw_value": (k.cw_value & U64(255)).astype(np.int64),
            "cw_last": (k.cw_last & U64(255)).astype(np.int64),
        })
    for i, j in ((0, 1), (0, 2), (1, 2)):
        a, b = feats[i], feats[j]
        # control-bit corrections: per-level frequencies agree
        for name in ("t_left", "t_right"):
            z = (a[name] - b[name]) / np.sqrt(0.5 / B)
            assert np.abs(z).max() < 5.5, name
        # byte histograms per level: chi-square two-sample test
        for name in ("cw_seed_lsb8", "cw_value"):
            for lev in range(n):
                ca = np.bincount(a[name][lev], minlength=256)
                cb = np.bincount(b[name][lev], minlength=256)
                pval = stats.chi2_contingency(np.stack([ca, cb]) + 1)[1]
                assert pval > 1e-5, (name, lev)
        assert stats.ks_2samp(a["cw_last"], b["cw_last"]).pvalue > 1e-5


# -- serialization and key size --------------------------------------------------------------------
@pytest.mark.parametrize("n,l,shape", [(32, 40, (8,)), (7, 13, (3, 5)), (64, 64, ()),
                                       (1, 1, (16,))])
def test_serialization_round_trip(n, l, shape, rng):
    p = dcf.DCFParams(n, l)
    alpha = rng.uint64(shape) >> U64(64 - n)
    k0, k1 = dcf.gen(p, alpha, rng.uint64(shape), rng)
    for k in (k0, k1):
        data = dcf.to_bytes(k)
        back = dcf.from_bytes(data)
        assert back == k
        x = rng.uint64(shape) >> U64(64 - n)
        assert np.array_equal(dcf.eval(p, k.party, back, x), dcf.eval(p, k.party, k, x))


def test_key_size_matches_formula(rng):
    for n, l in ((32, 40), (39, 40), (5, 8), (64, 64), (7, 13)):
        p = dcf.DCFParams(n, l)
        assert dcf.key_bits(p) == 128 + n * (128 + 2 + l) + l == p.key_bits
        wire = 128 * (n + 1) + 16 * ((n + 7) // 8) + 8 * ((l + 7) // 8) * (n + 1)
        assert dcf.wire_bits(p) == wire >= dcf.key_bits(p)
        for B in (1, 5, 16):
            k0, _ = dcf.gen(p, rng.uint64(B) >> U64(64 - n), 1, rng)
            header = 16 + 8
            assert 8 * (len(dcf.to_bytes(k0)) - header) == B * wire == k0.nbits
            assert dcf.serialized_payload_bits(k0) == B * wire
            rows = dcf.instance_payloads(k0)
            assert rows.shape == (B, wire // 8)
    assert dcf.key_bits(dcf.DCFParams(32, 40)) == 5608 == dcf.wire_bits(dcf.DCFParams(32, 40))
    assert dcf.key_bits(dcf.DCFParams(40, 40)) == 6968
    assert dcf.key_bits(dcf.DCFParams(39, 40)) == 6798      # the less-than gate at l = 40
    assert dcf.wire_bits(dcf.DCFParams(39, 40)) == 6800     # sent: two 39-bit t fields padded


def test_instance_payloads_are_single_key_payloads(rng):
    p = dcf.DCFParams(11, 21)
    k0, k1 = dcf.gen(p, rng.uint64(6) >> U64(53), 3, rng)
    for k in (k0, k1):
        rows = dcf.instance_payloads(k)
        for j in range(k.batch):
            one = k.take(slice(j, j + 1))
            single = dataclasses.replace(one, shape=())
            data = dcf.to_bytes(single)
            assert data[16:] == rows[j].tobytes()          # ndim 0: 16-byte header


def test_truncated_and_malformed_keys(rng):
    p = dcf.DCFParams(8, 8)
    k0, _ = dcf.gen(p, np.arange(4, dtype=U64), 1, rng)
    data = dcf.to_bytes(k0)
    for cut in (0, 3, 10, 20, len(data) - 1):
        with pytest.raises(ValueError, match=r"truncated|magic"):
            dcf.from_bytes(data[:cut])
    with pytest.raises(ValueError, match="trailing"):
        dcf.from_bytes(data + b"\0")
    with pytest.raises(ValueError, match="magic"):
        dcf.from_bytes(b"XXXX" + data[4:])
    with pytest.raises(TypeError, match="data"):
        dcf.from_bytes("not bytes")


# -- bad input -------------------------------------------------------------------------------------
def test_bad_parameters_and_inputs(rng):
    for bad in (0, 65, -1):
        with pytest.raises(ValueError, match="n_bits"):
            dcf.DCFParams(bad, 8)
    with pytest.raises(ValueError, match="out_bits"):
        dcf.DCFParams(8, 0)
    with pytest.raises(TypeError, match="n_bits"):
        dcf.DCFParams(8.0, 8)
    p = dcf.DCFParams(8, 8)
    with pytest.raises(ValueError, match="alpha"):
        dcf.gen(p, 256, 1, rng)
    with pytest.raises(ValueError, match="alpha"):
        dcf.gen(p, np.array([-1, 3]), 1, rng)
    with pytest.raises(TypeError, match="alpha"):
        dcf.gen(p, np.array([1.5]), 1, rng)
    with pytest.raises(ValueError, match="beta"):
        dcf.gen(p, np.arange(4), np.arange(3), rng)
    with pytest.raises(TypeError, match="params"):
        dcf.gen((8, 8), 3, 1, rng)
    with pytest.raises(TypeError, match="rng"):
        dcf.gen(p, 3, 1, None)
    k0, k1 = dcf.gen(p, np.arange(4), 1, rng)
    with pytest.raises(ValueError, match="x"):
        dcf.eval(p, 0, k0, np.array([0, 1, 2, 256]))
    with pytest.raises(ValueError, match="shape"):
        dcf.eval(p, 0, k0, np.arange(5))
    with pytest.raises(ValueError, match="party 1"):
        dcf.eval(p, 0, k1, np.arange(4))
    with pytest.raises(ValueError, match="party"):
        dcf.eval(p, 2, k0, np.arange(4))
    with pytest.raises(ValueError, match="domain"):
        dcf.eval(dcf.DCFParams(9, 8), 0, k0, np.arange(4))
    with pytest.raises(TypeError, match="key"):
        dcf.eval(p, 0, "key", np.arange(4))
    # n = 64 accepts the full uint64 range
    p64 = dcf.DCFParams(64, 8)
    k0, k1 = dcf.gen(p64, np.array([2**64 - 1], dtype=U64), 1, rng)
    assert int(_reconstruct(p64, k0, k1, np.array([2**64 - 2], dtype=U64))[0]) == 1


# -- property test over random parameters ----------------------------------------------------------


@settings(max_examples=40, deadline=None)
@given(n=st.integers(1, 64), l=st.integers(1, 64), seed=st.integers(0, 2**32),
       data=st.data())
def test_property_random_parameters(n, l, seed, data):
    alpha = data.draw(st.lists(st.integers(0, 2**n - 1), min_size=1, max_size=5))
    x = data.draw(st.lists(st.integers(0, 2**n - 1), min_size=len(alpha), max_size=len(alpha)))
    beta = data.draw(st.integers(-(2**63), 2**64 - 1))
    p = dcf.DCFParams(n, l)
    a = np.array(alpha, dtype=U64)
    xx = np.array(x, dtype=U64)
    k0, k1 = dcf.gen(p, a, beta, CSPRNG(seed))
    want = np.where(xx < a, U64(beta % (1 << l)), U64(0))
    assert np.array_equal(_reconstruct(p, k0, k1, xx), want)


def test_key_fields_are_validated_and_read_only(rng):
    p = dcf.DCFParams(8, 8)
    k0, _ = dcf.gen(p, np.arange(4), 1, rng)
    assert not k0.cw_seed.flags.writeable
    with pytest.raises(ValueError, match="cw_value"):
        dataclasses.replace(k0, cw_value=np.zeros((7, 4), U64))
    with pytest.raises(ValueError, match="party"):
        dataclasses.replace(k0, party=2)


def test_gen_only_makes_the_full_batchs_keys_of_those_instances(rng):
    """A process that runs some key owners makes exactly their keys of the whole batch."""
    p = dcf.DCFParams(10, 24)
    alpha = rng.uint64(37) >> U64(54)
    for only in (np.arange(37) % 3 == 1, np.zeros(37, bool), np.ones(37, bool)):
        full = dcf.gen(p, alpha, np.arange(37), CSPRNG(5))
        part = dcf.gen(p, alpha, np.arange(37), CSPRNG(5), only=only)
        for f, k in zip(full, part):
            assert k.shape == (int(only.sum()),)
            assert np.array_equal(dcf.instance_payloads(k), dcf.instance_payloads(f)[only])


def test_keys_parse_back_from_their_instance_payloads(rng):
    p = dcf.DCFParams(9, 30)
    k0, k1 = dcf.gen(p, rng.uint64(11) >> U64(55), 7, CSPRNG(4))
    for k in (k0, k1):
        rows = dcf.instance_payloads(k)
        back = dcf.from_instance_payloads(rows, k.party, p, insecure=True)
        assert back == k and not back.seed.flags.writeable
    bad = dcf.instance_payloads(k0)
    bad[3, -1] = 0xFF                       # cw_last above 2^30: not a canonical key
    with pytest.raises(ValueError, match="cw_last"):
        dcf.from_instance_payloads(bad, 0, p)
    with pytest.raises(ValueError, match="instance records"):
        dcf.from_instance_payloads(bad[:, :-1], 0, p)
    with pytest.raises(TypeError, match="uint8"):
        dcf.from_instance_payloads(bad.astype(np.int64), 0, p)
