import numpy as np
import pytest
from scipy import stats

from mpc.arith.ring import ring
from mpc.arith.rng import CSPRNG, as_rng


def test_seeded_is_reproducible_and_flagged():
    a, b = CSPRNG(7), CSPRNG(7)
    assert a.seeded and b.seeded
    assert np.array_equal(a.uint64(100), b.uint64(100))
    assert not np.array_equal(CSPRNG(8).uint64(10), CSPRNG(7).uint64(10))
    assert CSPRNG().seeded is False
    assert a.derive("x").seeded is True
    assert CSPRNG().derive("x").seeded is False


def test_unseeded_differs():
    assert not np.array_equal(CSPRNG().uint64(4), CSPRNG().uint64(4))


def test_stream_is_position_independent_of_chunking():
    a, b = CSPRNG(1), CSPRNG(1)
    whole = a.bytes_array(200_000)
    parts = np.concatenate([b.bytes_array(n) for n in (1, 15, 100, 70_000, 3, 129_881)])
    assert np.array_equal(whole, parts)


def test_derive_independent_of_consumption_and_labels():
    a, b = CSPRNG(3), CSPRNG(3)
    b.bytes_array(1000)
    assert np.array_equal(a.derive("p", 1).uint64(8), b.derive("p", 1).uint64(8))
    assert not np.array_equal(a.derive("p", 1).uint64(8), a.derive("p", 2).uint64(8))
    assert not np.array_equal(a.derive("p", 1).uint64(8), a.derive("p1").uint64(8))



def test_party_and_pair_accessors_are_gone_with_a_clear_error():
    """The footgun of issue 26: rng.party(i) restarted party i's stream at every call."""
    a = CSPRNG(3)
    with pytest.raises(TypeError, match=r"session.party_rng"):
        a.party(2)
    with pytest.raises(TypeError, match="derive"):
        a.pair(2, 5)


def test_byte_uniformity_chi_square(rng):
    counts = np.bincount(rng.bytes_array(1 << 20), minlength=256)
    assert stats.chisquare(counts).pvalue > 1e-4


def test_bits_and_ring_elements(rng):
    bits = rng.bits((1000, 3))
    assert bits.shape == (1000, 3) and set(np.unique(bits)) <= {0, 1}
    assert abs(bits.mean() - 0.5) < 0.03
    r = ring(13)
    e = rng.ring_elements(r, 50_000)
    assert e.max() < 2**13
    assert stats.chisquare(np.bincount(e >> np.uint64(9), minlength=16)).pvalue > 1e-4


@pytest.mark.parametrize("high", [1, 2, 3, 7, 10, 1000, 2**62 + 1])
def test_integers_range_and_uniformity(rng, high):
    x = rng.integers(high, (20_000,))
    assert x.min() >= 0 and x.max() < high
    if high <= 1000 and high > 1:
        assert stats.chisquare(np.bincount(x, minlength=high)).pvalue > 1e-4


def test_integers_scalar_draw_is_quiet_and_matches_the_array_draw():
    """A single draw (shape ()) gives the first value of the same stream's array draw, with
    no overflow warning from numpy's scalar arithmetic (the mod 2^64 wrap is intended)."""
    import warnings

    for high in (1, 7, 60, 2**63 - 1):
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            one = CSPRNG(f"scalar-{high}").integers(high)
        assert one.shape == () and 0 <= int(one) < high
        assert int(one) == int(CSPRNG(f"scalar-{high}").integers(high, (5,))[0])


@pytest.mark.parametrize("high", [1, 2, 3, 1000, 2**62 + 1, 3 * 2**61, 2**63 - 1])
@pytest.mark.parametrize("shape", [(1,), (7,), (300,), (4, 25)])
def test_one_high_takes_the_same_words_as_an_array_of_highs(high, shape):
    """One ``high`` (its own path) and the same high as an array (the general path) give the
    same integers and leave the stream at the same place, rejections included (3 * 2^61
    rejects a quarter of the words)."""
    a, b = CSPRNG(f"one-{high}"), CSPRNG(f"one-{high}")
    x = a.integers(high, shape)
    y = b.integers(np.full(shape, high), shape)
    assert x.dtype == y.dtype == np.int64 and x.shape == y.shape == shape
    assert np.array_equal(x, y)
    assert np.array_equal(a.uint64(4), b.uint64(4))


def test_integers_array_high(rng):
    high = np.array([1, 2, 5, 1000])
    x = rng.integers(high, (10_000, 4))
    assert np.all(x < high) and np.all(x >= 0)


def test_choice_and_permutation(rng):
    p = rng.permutation(1000)
    assert np.array_equal(np.sort(p), np.arange(1000))
    c = rng.choice(10**9, 1000)
    assert len(np.unique(c)) == 1000 and c.max() < 10**9
    c = rng.choice(10, 10)
    assert np.array_equal(np.sort(c), np.arange(10))
    # first position of a sparse choice is uniform
    firsts = np.array([CSPRNG(i).choice(40, 3)[0] for i in range(2000)])
    assert stats.chisquare(np.bincount(firsts, minlength=40)).pvalue > 1e-4


def test_random_floats(rng):
    u = rng.random(10_000)
    assert u.min() >= 0 and u.max() < 1
    assert stats.kstest(u, "uniform").pvalue > 1e-4


def test_errors(rng):
    with pytest.raises(ValueError, match="n must be non-negative"):
        rng.bytes_array(-1)
    with pytest.raises(TypeError, match="seed"):
        CSPRNG(1.5)
    with pytest.raises(ValueError, match="high"):
        rng.integers(0, 3)
    with pytest.raises(ValueError, match="size must be <= n"):
        rng.choice(3, 4)
    with pytest.raises(ValueError, match="label"):
        rng.derive()
    with pytest.raises(ValueError, match="shape"):
        rng.uint64((-1,))


def test_as_rng():
    g = CSPRNG(1)
    assert as_rng(g) is g
    assert as_rng(5).seeded and not as_rng(None).seeded


def test_permutation_is_uniform_on_small_n():
    g = CSPRNG(31)
    codes = [tuple(g.permutation(4)) for _ in range(4800)]
    perms = {p: i for i, p in enumerate(sorted(set(codes)))}
    assert len(perms) == 24
    counts = np.bincount([perms[c] for c in codes], minlength=24)
    assert stats.chisquare(counts).pvalue > 1e-4
    p = g.permutation(100_003)
    assert p.dtype == np.int64 and np.array_equal(np.sort(p), np.arange(p.size))


def test_tied_runs_are_shuffled_uniformly():
    """Entries whose random words tie are reordered with fresh words: each run uniformly,
    the rest untouched (the path taken when two of the n sort keys collide)."""
    g = CSPRNG(32)
    tie = np.array([True, True, False, True, False, False])    # runs {0,1,2}, {3,4}; 5 alone
    seen = []
    for _ in range(3000):
        out = np.arange(7)
        g._shuffle_tied_runs(out, tie)
        assert sorted(out[:3]) == [0, 1, 2] and sorted(out[3:5]) == [3, 4]
        assert out[5] == 5 and out[6] == 6
        seen.append(int(out[0]) * 3 + int(out[1]) + 10 * int(out[3]))
    first = np.bincount([s % 10 for s in seen])
    assert stats.chisquare(first[first > 0]).pvalue > 1e-4
    assert abs(np.mean([s // 10 == 3 for s in seen]) - 0.5) < 4 * 0.5 / np.sqrt(3000)


def _shuffle_cases():
    g = CSPRNG(40)
    deg = g.integers(4, (300,)) + 1                       # every vertex appears: ids < size
    yield np.repeat(np.arange(300), deg)                   # BalancedSamp's stubs
    yield np.repeat(np.arange(5), [1, 2, 3, 4, 5])
    yield np.zeros(17, np.int64)
    yield np.arange(33, dtype=np.uint32)
    yield np.array([7])
    yield np.array([], dtype=np.int64)
    yield np.repeat(np.arange(0, 300, 7), 2)               # values above bit_length(size - 1)
    yield g.integers(50, (40,))                            # not sorted
    yield np.array([-1, 0, 0, 3])                          # negative


@pytest.mark.parametrize("values", list(_shuffle_cases()), ids=lambda v: f"size{v.size}")
def test_shuffled_is_the_gather_of_a_permutation_from_the_same_stream(values):
    """shuffled(v) == v[permutation(v.size)] bit for bit, and the stream continues alike."""
    a, b = CSPRNG(41), CSPRNG(41)
    got = a.shuffled(values)
    want = values[b.permutation(values.size)].astype(np.int64)
    assert got.dtype == np.int64 and np.array_equal(got, want)
    assert np.array_equal(a.uint64(4), b.uint64(4))


def test_shuffled_takes_the_tie_path_like_permutation(monkeypatch):
    """Sort words with 2 random high bits force long tied runs: still the same result."""
    sizes = np.repeat(np.arange(40), 3)
    words, calls = CSPRNG.uint64, []

    def few_bits(self, shape=()):          # the sort's words; the tie-breaking words are whole
        calls.append(shape)
        w = words(self, shape)
        return w if len(calls) % 2 == 0 else (w >> np.uint64(62)) << np.uint64(62)

    a, b = CSPRNG(42), CSPRNG(42)
    monkeypatch.setattr(CSPRNG, "uint64", few_bits, raising=True)
    got, want = a.shuffled(sizes), sizes[b.permutation(sizes.size)]
    assert np.array_equal(got, want)
    assert np.array_equal(np.sort(got), sizes)


def test_shuffled_rejects_non_integer_arrays():
    with pytest.raises(TypeError, match="1-d integer array"):
        CSPRNG(1).shuffled(np.zeros(4))
    with pytest.raises(TypeError, match="1-d integer array"):
        CSPRNG(1).shuffled(np.zeros((2, 2), np.int64))


def test_pickled_generator_continues_the_same_stream():
    import pickle

    g = CSPRNG(9)
    g.bytes_array(37)
    g.uint64(9000)
    h = pickle.loads(pickle.dumps(g))
    assert h.seeded and np.array_equal(g.uint64(1000), h.uint64(1000))
    u = CSPRNG()
    assert not pickle.loads(pickle.dumps(u)).seeded


def test_fresh_streams_never_repeat():
    g = CSPRNG(10)
    a, b = g.fresh("run"), g.fresh("run")
    assert a.seeded and not np.array_equal(a.uint64(4), b.uint64(4))
    # seeded: reproducible from the seed
    assert np.array_equal(CSPRNG(10).fresh("run").uint64(4), CSPRNG(10).fresh("run").uint64(4))
    s = CSPRNG()
    assert not s.fresh("run").seeded
    assert not np.array_equal(s.fresh("run").uint64(4), s.fresh("run").uint64(4))
