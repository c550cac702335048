"""The threshold last round of a run whose hosts may vanish (issue 36 item 5): the host sums'
Shamir reshare and the aggregator's interpolation, in process (the deployed cells are
tests/ustat/test_deploy_dropout_steps.py)."""

import itertools
from collections import Counter

import numpy as np
import pytest

from mpc.arith.rng import CSPRNG
from ustat.umpc.dropouts import DropoutBoundError
from ustat.umpc.last_round import (
    PRIME,
    LastRound,
    _from_words,
    _to_words,
    open_sum,
    random_field,
    share_evaluations,
    threshold_degree,
    vanishing_hosts,
)

SIZES = [12, 5, 7, 12, 9]            # five party hosts of unequal sizes


def _reshare(values, t, ranks, rng):
    """What reshare computes for the hosts at ``ranks`` (values (L, c) in [0, 2^l)):
    each host's S(x_g), through the wire words."""
    xs = np.asarray(ranks) + 1
    evals = share_evaluations(values.astype(object), random_field(rng, (len(ranks), t,
                                                                        values.shape[1])), xs)
    got, present = _from_words(_to_words(evals))
    assert present.all()
    return got.sum(axis=0) % PRIME


@pytest.mark.parametrize("bits", [1, 40, 64])
def test_the_sum_is_recovered_mod_2_to_the_l_for_every_loss_within_the_bound(bits):
    """Exhaustive over which hosts vanish in the final send (every subset the bound allows),
    values at the edges of Z_2^l: S(0) mod 2^l is the hosts' integer sum mod 2^l."""
    rng = CSPRNG(seed=b"last-round")
    bound = 21                                   # lets 3 of the 5 hosts vanish (5 + 7 + 9)
    t = threshold_degree(SIZES, bound)
    assert (vanishing_hosts(SIZES, bound), t) == (3, 1)
    top = (1 << bits) - 1
    edge = np.array([[top, 0, top], [top, 1, 1 << (bits - 1)], [top, top, 0],
                     [top, 0, top], [top, top, top]], dtype=np.uint64)
    for values in (edge, rng.uint64((5, 3)) & np.uint64(top)):
        want = values.astype(object).sum(axis=0) % (1 << bits)
        ranks = np.array([3, 4, 5, 6, 8])
        lr = LastRound(t, ranks, np.array(SIZES), np.arange(5))
        S = _reshare(values, t, ranks, rng)
        checked = 0
        for k in range(6):
            for gone in itertools.combinations(range(5), k):
                here = np.ones(5, dtype=bool)
                here[list(gone)] = False
                lost = sum(SIZES[g] for g in gone)
                got = np.where(here[:, None], S, 0)        # a vanished host's words: zeros
                if lost > bound or here.sum() < t + 1:
                    with pytest.raises(DropoutBoundError, match=f"max_dropouts = {bound}"):
                        open_sum(lr, got, here, bound, None, top)
                    continue
                totals, drop = open_sum(lr, got, here, bound, None, top)
                assert [int(v) for v in totals] == list(want)
                assert drop == (None if not gone else
                                {"parties_lost": lost, "edges_lost": 0, "step": "aggregation"})
                checked += 1
        assert checked == 1 + 5 + 9 + 1           # the subsets of at most 21 parties


def test_a_loss_beyond_the_bound_ends_the_run_naming_it_with_earlier_losses_counted():
    lr = LastRound(2, np.array([1, 2, 3, 4]), np.array([12, 12, 12, 12]), np.arange(1, 4))
    here = np.array([True, True, False])
    with pytest.raises(DropoutBoundError) as e:
        open_sum(lr, np.zeros((3, 1), dtype=object), here, 15,
                 {"parties_lost": 12, "edges_lost": 30, "step": "noise"}, (1 << 40) - 1)
    assert "24 parties vanished, more than max_dropouts = 15" in str(e.value)
    assert "needs 3" in str(e.value) and "no release" in str(e.value)


@pytest.mark.parametrize(("t", "hosts"), [(1, 3), (2, 4)])
def test_any_t_hosts_views_are_independent_of_another_hosts_sum(t, hosts):
    """Exact, on GF(7): for every secret and every t hosts other than the sharer, the
    evaluations they receive over all p^t coefficient vectors take every value of GF(7)^t
    exactly once (uniform, whatever the secret)."""
    p = 7
    xs = np.arange(1, hosts + 1)
    coeffs = np.array(list(itertools.product(range(p), repeat=t)), dtype=object)
    for secret in range(p):
        secrets = np.full((coeffs.shape[0], 1), secret, dtype=object)
        evals = share_evaluations(secrets, coeffs[:, :, None], xs, p)    # (p^t, hosts, 1)
        for viewers in itertools.combinations(range(1, hosts), t):       # host 0 shares
            views = Counter(tuple(int(v) for v in row) for row in evals[:, viewers, 0])
            assert len(views) == p ** t and set(views.values()) == {1}


def test_the_aggregators_view_depends_on_the_hosts_sums_only_through_their_total():
    """Exact, on GF(7), three hosts, t = 1: over every coefficient of every host, the
    aggregator's three evaluations of S have the same law for two splits of the same total
    (the law of S(0) and one uniform coefficient)."""
    p, t, xs = 7, 1, np.arange(1, 4)
    coeffs = np.array(list(itertools.product(range(p), repeat=3)), dtype=object)  # (343, 3)
    laws = []
    for split in ([1, 2, 3], [6, 0, 0], [0, 5, 1]):
        views = Counter()
        for co in coeffs:                        # every host's coefficient
            ev = share_evaluations(np.array(split, dtype=object)[:, None],
                                   np.array(co, dtype=object)[:, None, None], xs, p)
            views[tuple(int(v) for v in ev.sum(axis=0)[:, 0] % p)] += 1
        laws.append(views)
    assert laws[0] == laws[1] == laws[2]
    assert len(laws[0]) == p ** t and set(laws[0].values()) == {p ** 2}


def test_the_degree_is_refused_when_the_bound_leaves_no_colluding_host():
    assert threshold_degree([12, 12, 12, 12], 15) == 2
    assert threshold_degree([5, 5, 5, 5], 13) == 1
    with pytest.raises(DropoutBoundError, match="lets 3 of the 4 party hosts vanish"):
        threshold_degree([5, 5, 5, 5], 18)
    with pytest.raises(DropoutBoundError, match="t >= 1"):
        threshold_degree([10, 10], 10)


def test_words_carry_127_bits_and_mark_presence():
    v = np.array([0, 1, PRIME - 1, (1 << 64) - 1, 1 << 64], dtype=object)
    w = _to_words(v)
    assert w.dtype == np.uint64 and w.shape == (5, 2)
    back, present = _from_words(w)
    assert list(back) == list(v) and present.all()
    _, absent = _from_words(np.zeros_like(w))
    assert not absent.any()
