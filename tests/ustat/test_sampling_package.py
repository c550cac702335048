"""ustat.sampling as a package: public names, pinned outputs, and the sort-saving fast paths."""

import hashlib
import importlib

import numpy as np
import pytest

from mpc.arith.rng import CSPRNG
from ustat import sampling as S
from ustat.sampling import balanced_samp
from ustat.sampling import combinatorics as C


def _digest(edges) -> str:
    return hashlib.sha256(np.ascontiguousarray(edges, dtype=np.int64).tobytes()).hexdigest()[:16]


def test_every_public_name_is_importable_from_ustat_sampling():
    mod = importlib.import_module("ustat.sampling")
    for name in mod.__all__:
        assert getattr(mod, name) is not None, name
    assert S.SAMPLERS == ("balanced", "uniform", "bernoulli", "all")
    assert S.ENUMERATION_LIMIT == 10**7
    from ustat.sampling import Hypergraph, balanced, sample  # noqa: F401  (the usual imports)
    assert S.sample("balanced", 20, 30, 2, CSPRNG(1)).name == "balanced"


# sha256 prefixes of the edges the single-module sampler (before the split and the fast
# paths) drew for these arguments and seeds CSPRNG(f"ref-{seed}"): the outputs are unchanged.
PINNED = [
    ('balanced', 1000, 2000, 2, 0, 'bde3e58b9fb85353'),
    ('balanced', 1000, 2000, 2, 1, '58c12dbd1af8644a'),
    ('balanced', 50, 300, 3, 0, '6aa666673e532164'),
    ('balanced', 50, 300, 3, 1, '16fc12c83f7eebfb'),
    ('balanced', 6, 6, 2, 0, '6a72cf9294035ea8'),
    ('balanced', 6, 6, 2, 1, 'a3ca421a1c0789ca'),
    ('balanced', 30, 200, 4, 0, 'b8e33782af7aab4b'),
    ('balanced', 30, 200, 4, 1, '848a5f57174ed072'),
    ('balanced', 12, 40, 2, 0, '71c1a6d65d8db82a'),
    ('balanced', 12, 40, 2, 1, '459bcee07e4b0d18'),
    ('balanced', 200000, 400000, 2, 0, '30147ec3c212f346'),
    ('balanced', 10, 100, 3, 0, 'c0a19f435f288102'),
    ('balanced', 10, 100, 3, 1, 'c18e7867b64b9986'),
    ('balanced', 3000, 9000, 5, 0, 'd5052437e19d66fe'),
    ('balanced', 3000, 9000, 5, 1, 'b6e1ce22e768906e'),
    ('balanced', 4194304, 3000, 3, 0, '662a49988adfa433'),
    ('balanced', 4194304, 3000, 2, 0, 'a6d6d0956e229dab'),
    ('balanced', 7, 30, 3, 0, 'fd75c8617aee6002'),
    ('balanced', 7, 30, 3, 1, '91e78b105e5da826'),
    ('balanced', 1000, 2000, 8, 0, '97445a0c3f9b62e5'),
    ('balanced', 1000, 2000, 8, 1, '2ea1dbd312a77c93'),
    ('uniform', 1000, 2000, 2, 0, '278fd03cd6b3452e'),
    ('uniform', 1000, 2000, 2, 1, '1dc0e6e5ed472d36'),
    ('uniform', 20, 100, 3, 0, '29f63f010af93834'),
    ('uniform', 20, 100, 3, 1, 'ecb84f4b1d46d754'),
    ('bernoulli', 100, 300, 2, 0, 'dcafbead6282ab33'),
    ('bernoulli', 100, 300, 2, 1, 'dc2d82a492f629e4'),
]


@pytest.mark.parametrize("name,n,m,k,seed,digest", PINNED)
def test_outputs_are_those_of_the_previous_implementation(name, n, m, k, seed, digest):
    g = S.sample(name, n, m, k, CSPRNG(f"ref-{seed}"))
    assert _digest(g.edges) == digest


@pytest.mark.parametrize("k", [1, 2, 3, 4, 5])
def test_sort_rows_equals_np_sort(k):
    g = CSPRNG(f"rows-{k}")
    for m in (0, 5, 63, 64, 1000):
        e = g.integers(6, (m, k))                     # many ties inside rows
        want = np.sort(e, axis=1)
        got = C._sort_rows(e.copy())
        assert np.array_equal(got, want)
    # the network sorts every input: all k-tuples over {0, 1, 2} (0-1 principle and ties)
    if k <= 3:
        tuples = np.array(np.meshgrid(*[np.arange(3)] * k)).reshape(k, -1).T.copy()
        tuples = np.tile(tuples, (64 // len(tuples) + 1, 1))
        assert np.array_equal(C._sort_rows(tuples.copy()), np.sort(tuples, axis=1))


@pytest.mark.parametrize("n,k", [(10**6, 2), (1000, 3), (2**20, 3)])
def test_canonical_from_sorted_keys_equals_the_sorting_path(n, k):
    g = CSPRNG(f"canon-{n}-{k}")
    e = np.sort(g.integers(n, (5000, k)), axis=1)
    assert C._one_word(n, k)
    keys = np.sort(C._row_key(e, n))
    assert np.array_equal(C._canonical(e.copy(), n, sorted_words=keys), C._canonical(e.copy(), n))


def test_one_word_packing_bound():
    assert C._one_word(2**31, 2) and not C._one_word(2**31 + 1, 2)
    assert C._one_word(2**21, 3) and not C._one_word(2**21 + 1, 3)
    assert C._one_word(1000, 6) and not C._one_word(1000, 7)


@pytest.mark.parametrize("n,m,k", [(6, 6, 2), (5, 9, 2), (7, 30, 3), (12, 40, 2), (40, 300, 2),
                                   (1000, 2000, 8)])
def test_switch_state_keys_equal_the_two_sort_definition(n, m, k):
    """One sort gives the duplicate mask and the valid keys of the former two-sort code."""
    for seed in range(5):
        rng = CSPRNG(f"switch-{n}-{m}-{k}-{seed}")
        q, r = divmod(k * m, n)
        deg = np.full(n, q, dtype=np.int64)
        if r:
            deg[rng.choice(n, r)] += 1
        stubs = np.repeat(np.arange(n, dtype=np.int64), deg)
        edges = np.sort(stubs[rng.permutation(stubs.size)].reshape(m, k), axis=1)
        st = balanced_samp._SwitchState(edges.copy(), n)
        keys = C._row_key(edges, n)
        rep = C._repeat_mask(edges)
        bad = rep | (C._key_dup_mask(np.where(rep, np.uint64(0), keys)) & ~rep)
        assert np.array_equal(st.is_bad, bad)
        assert np.array_equal(st.valid, np.sort(keys[~bad]))


def test_distinct_sorted_equals_np_unique():
    g = CSPRNG(3)
    for size in (0, 1, 2, 100):
        s = np.sort(g.integers(10, (size,)).astype(np.uint64))
        assert np.array_equal(C._distinct_sorted(s), np.unique(s))


def test_key_dup_mask_with_the_callers_sorted_keys():
    keys = np.array([5, 3, 5, 9, 3, 5], dtype=np.uint64)
    want = np.array([False, False, True, False, True, True])
    assert np.array_equal(C._key_dup_mask(keys), want)
    assert np.array_equal(C._key_dup_mask(keys, np.sort(keys)), want)



def test_key_dup_mask_few_and_many_repeated_values():
    """Both ways of locating the repeated values (one comparison pass per value for at most
    _FEW_REPEATS of them, binary search beyond) mark every copy but the first."""
    g = CSPRNG("dup-mask")
    repeated_counts = set()
    for distinct in (3, 40):
        for _ in range(20):
            size = int(g.integers(60)) + 1
            keys = g.integers(distinct, (size,)).astype(np.uint64) * np.uint64(7919)
            want = np.zeros(size, dtype=bool)
            seen = set()
            for i, v in enumerate(keys.tolist()):
                want[i] = v in seen
                seen.add(v)
            assert np.array_equal(C._key_dup_mask(keys), want)
            repeated_counts.add(np.unique(keys[want]).size)
    assert any(0 < c <= C._FEW_REPEATS for c in repeated_counts)
    assert any(c > C._FEW_REPEATS for c in repeated_counts)
