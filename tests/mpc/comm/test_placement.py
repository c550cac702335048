"""Placements: who holds each participant, and the default layout of a run."""

import numpy as np
import pytest

from mpc.comm.placement import Placement, layout


def test_groups_place_parties_and_roles():
    p = Placement.from_groups(5, ("dealer", "aggregator"), [[range(3)], [3, 4, "dealer"],
                                                           ["aggregator"]], rank=1)
    assert p.owner.tolist() == [0, 0, 0, 1, 1, 1, 2]
    assert p.n_procs == 3 and p.is_local(4) and not p.is_local(0)
    assert p.is_local(np.array([0, 3])).tolist() == [False, True]
    assert p.describe(0, 5, ("dealer", "aggregator")) == "process 0 (parties 0-2)"
    assert p.describe(1, 5, ("dealer", "aggregator")) == "process 1 (parties 3-4, dealer)"
    sub = p.sub([4, 0, 5])
    assert sub.owner.tolist() == [1, 0, 1] and sub.rank == 1


@pytest.mark.parametrize("groups, match", [
    ([[0, 1], [1, "dealer"]], "more than one group"),
    ([[0], ["dealer"]], "in no group"),
    ([[0, 1, 7], ["dealer"]], "outside"),
    ([[0, 1], ["boss"]], "unknown role"),
])
def test_bad_groups_are_named(groups, match):
    with pytest.raises(ValueError, match=match):
        Placement.from_groups(2, ("dealer",), groups)


@pytest.mark.parametrize("n, P", [(10, 1), (10, 2), (10, 3), (10, 4), (3, 6), (4521, 4)])
def test_layout_covers_everyone_once_and_gives_roles_their_own_process_when_it_can(n, P):
    roles = ("dealer", "aggregator")
    groups = layout(n, roles, P)
    pl = Placement.from_groups(n, roles, groups)
    assert pl.n_procs == len(groups) <= P
    if len(roles) < P and n >= P - len(roles):
        for r in roles:         # a role never shares a process with a party
            rank = pl.owner[n + roles.index(r)]
            assert not np.any(pl.owner[:n] == rank)
    sizes = np.bincount(pl.owner[:n])
    assert sizes[sizes > 0].max() - sizes[sizes > 0].min() <= 1


def test_the_simulator_is_one_process_holding_everyone():
    p = Placement.single(7)
    assert p.single_process and p.local.all()


@pytest.mark.parametrize("n, roles, P", [(3, ("dealer",), 3), (2, ("dealer", "aggregator"), 3),
                                         (2, ("dealer",), 2), (3, ("dealer", "aggregator"), 4),
                                         (4, ("dealer",), 4)])
def test_each_share_holder_gets_its_own_process_when_there_are_enough(n, roles, P):
    """Issue 40, silent case 7: with n <= P parties every party is alone with respect to the
    other parties (as MPyC's -M P); roles go to the spare processes, else share a party's."""
    groups = layout(n, roles, P)
    pl = Placement.from_groups(n, roles, groups)
    assert pl.n_procs == P
    assert np.unique(pl.owner[:n]).size == n
    if n < P:                                   # spare processes: the roles keep off the parties
        assert not np.isin(pl.owner[n:], pl.owner[:n]).any()
