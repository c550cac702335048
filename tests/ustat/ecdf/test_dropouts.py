"""The outcome of an ECDF run that lost parties (:mod:`ustat.ecdf.dropouts`): the bound and
the step, on every loss of a small run (deployed: tests/ustat/test_deploy_ecdf_dropouts.py)."""

import itertools
from types import SimpleNamespace

import pytest

from mpc.comm.placement import Placement
from ustat.ecdf.dropouts import DropoutBoundError, may_vanish, outcome, reached
from ustat.ecdf.servers import make_session


def _session(gone, max_lost, hosts=4, per=3):
    groups = [[range(h * per, (h + 1) * per)] for h in range(hosts)] + \
        [["server0"], ["server1"], ["analyst", "dealer"]]
    n = hosts * per
    placement = Placement.from_groups(n, ("server0", "server1", "analyst", "dealer"), groups)
    runtime = SimpleNamespace(gone=frozenset(gone), max_lost=max_lost,
                              transport=SimpleNamespace(gone=set(gone), may_vanish={0, 1, 2, 3}))
    return SimpleNamespace(n_parties=n, placement=placement, runtime=runtime)


@pytest.mark.parametrize("bound", [0, 3, 7])
def test_the_bound_and_the_step_of_every_loss(bound):
    for k in range(3):
        for gone in itertools.combinations(range(4), k):
            s = _session(gone, bound)
            absent = 3 * len(gone)
            for lost in range(absent, 13):          # the absent hosts' parties are always lost
                if lost > bound:
                    with pytest.raises(DropoutBoundError, match=f"more than max_dropouts = "
                                                                f"{bound}: no release"):
                        outcome(s, lost)
                    continue
                got = outcome(s, lost)
                assert got["parties_lost"] == lost
                want = [w for w, hit in (("start", absent > 0), ("upload", lost > absent)) if hit]
                assert got["step"] == (", ".join(want) or "upload")


def test_a_run_in_one_process_never_loses_a_party():
    s = make_session(5, bits=32, seed=1)
    assert not may_vanish(s)
    assert outcome(s, 0) == {"parties_lost": 0, "step": "upload"}
    assert reached(s).all()
