"""The outcome of an ECDF run that lost parties (:mod:`ustat.ecdf.dropouts`): the bound and
the step, on every loss of a small run; ``hl`` and the pointwise backend in one process with
the loss injected: the two worlds (the release without a lost host is, bit for bit, the
release on the kept parties' rows with the same seed; a host lost at the HL sums leaves the
full run's sums less its records), the bound, and the losses that end a pointwise run
(deployed: tests/ustat/test_deploy_ecdf_dropouts.py)."""

import itertools
from types import SimpleNamespace

import numpy as np
import pytest

from mpc.comm.placement import Placement
from ustat.ecdf import dropouts, hl_check
from ustat.ecdf import hosmer_lemeshow as hl_module
from ustat.ecdf.dropouts import DropoutBoundError, LateDropoutError, may_vanish, outcome, reached
from ustat.ecdf.pointwise import PointwiseServers
from ustat.ecdf.quantiles import private_quantiles
from ustat.ecdf.release import release
from ustat.ecdf.roc import private_roc
from ustat.ecdf.servers import make_session
from ustat.specs import ECDFSpec, HLSpec, QuantileSpec, ROCSpec


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


# -- hl and the pointwise backend: the two worlds, in one process ------------------------------
# The servers' view of a loss is injected (dropouts.may_vanish / reached / absent / units /
# bound: what a deployment's transport and roll call give); the processes of a deployment run
# the same code (tests/ustat/test_deploy_ecdf_dropouts.py runs one of each).

N, PER = 40, 10
_G = np.random.default_rng(36)
P = _G.random(N)
Y = (_G.random(N) < P).astype(np.int64)
HOST = np.arange(10, 20)                        # the "host" lost: parties 10..19
KEPT = np.setdiff1d(np.arange(N), HOST)
HL = HLSpec.of(groups=3, n_thresholds=16, epsilon=40.0, seed="drop", max_detectable=None)
POINTWISE = ECDFSpec.of(thresholds=16, bounds=(0, 1), epsilon=4.0, seed="drop",
                        backend="pointwise", servers=3, noise_mode="split")
QUANTILES = QuantileSpec.of([0.25, 0.5, 0.75], thresholds=16, bounds=(0, 1), epsilon=8.0,
                            seed="drop", backend="pointwise", max_halfwidth=None)


class _Loss:
    """What the servers' transport says: the parties of hosts that never joined (``absent``),
    of hosts lost so far (``lost``), and the run's bound."""

    def __init__(self, monkeypatch, bound=None):
        self.absent = np.zeros(N, dtype=bool)
        self.lost = np.zeros(N, dtype=bool)
        self.bound = bound
        monkeypatch.setattr(dropouts, "may_vanish", lambda s: True)
        monkeypatch.setattr(dropouts, "reached", lambda s: ~(self.lost | self.absent))
        monkeypatch.setattr(dropouts, "absent", lambda s: self.absent.copy())
        monkeypatch.setattr(dropouts, "units", lambda s: np.arange(s.n_parties) // PER)
        monkeypatch.setattr(dropouts, "bound", lambda s: self.bound)

    def lose(self, parties=HOST):
        self.lost[parties] = True


def _hl(p, y, spec):
    return hl_module.private_hosmer_lemeshow(p, y, spec)


def _fixed(p):
    return np.rint(p * (1 << hl_module.FRAC_BITS)) / (1 << hl_module.FRAC_BITS)


@pytest.mark.parametrize("verify", [False, True])
def test_hl_without_a_host_that_never_joined_is_hl_on_the_kept_rows(monkeypatch, verify):
    spec = HL.replace(verify_keys=verify)
    want = _hl(P[KEPT], Y[KEPT], spec)
    loss = _Loss(monkeypatch)
    loss.absent[HOST] = True
    got = _hl(P, Y, spec)
    assert got.account["dropouts"] == {"parties_lost": 10, "step": "start"}
    assert got.table == want.table and np.array_equal(got.edges, want.edges)
    assert got.statistic == want.statistic and got.p_value == want.p_value
    assert got.account.get("inputs_dropped", 0) == 0 and got.account.get("keys_dropped", 0) == 0


@pytest.mark.parametrize("verify", [False, True])
def test_hl_with_a_host_lost_at_the_sums_leaves_it_out_of_the_sums_only(monkeypatch, verify):
    """Lost after the group edges (its keys counted in the tree): the edges are the full run's,
    the sums are the full run's less what the lost parties added (same seed: same noise)."""
    spec = HL.replace(verify_keys=verify)
    full = _hl(P, Y, spec)
    loss = _Loss(monkeypatch, bound=10)
    edges = hl_module._edges
    monkeypatch.setattr(hl_module, "_edges", lambda *a: (edges(*a), loss.lose())[0])
    _is_full_less_the_host(_hl(P, Y, spec), full)


def test_hl_a_loss_seen_only_within_the_checked_upload_is_left_out(monkeypatch):
    """The servers' transports may notice the loss only while they wait for the lost host's
    upload (a deployment: the host died long before): what they lack is read after it."""
    spec = HL.replace(verify_keys=True)
    full = _hl(P, Y, spec)
    loss = _Loss(monkeypatch)
    coin = hl_check.coin                # the first thing the servers do after the upload
    monkeypatch.setattr(hl_check, "coin", lambda *a: (coin(*a), loss.lose())[0])
    _is_full_less_the_host(_hl(P, Y, spec), full)


def _is_full_less_the_host(got, full):
    assert got.account["dropouts"] == {"parties_lost": 10, "step": "sums"}
    assert np.array_equal(got.edges, full.edges)
    g = np.minimum(np.searchsorted(full.edges[1:-1], P[HOST], side="left"), 2)
    ph = _fixed(P[HOST])
    for col, v in (("E1", ph), ("E0", 1 - ph), ("O1", Y[HOST]), ("O0", 1 - Y[HOST])):
        less = np.array(full.table[col]) - np.bincount(g, v, 3)
        assert np.array_equal(np.array(got.table[col]), less), col
    assert got.account.get("inputs_dropped", 0) == 0


def test_hl_loses_no_more_than_the_bound(monkeypatch):
    loss = _Loss(monkeypatch, bound=9)
    edges = hl_module._edges
    monkeypatch.setattr(hl_module, "_edges", lambda *a: (edges(*a), loss.lose())[0])
    with pytest.raises(DropoutBoundError, match="10 of 40 parties' HL sums did not reach every "
                                                "server, more than max_dropouts = 9"):
        _hl(P, Y, HL)


@pytest.mark.parametrize("when", ["start", "query"])
def test_a_pointwise_ecdf_without_a_lost_host_is_the_ecdf_of_the_kept_rows(monkeypatch, when):
    want = release(P[KEPT], POINTWISE)
    loss = _Loss(monkeypatch, bound=10)
    (loss.absent if when == "start" else loss.lost)[HOST] = True
    got = release(P, POINTWISE)
    assert got.account["dropouts"] == {"parties_lost": 10, "step": when}
    assert np.array_equal(got.counts, want.counts) and got.n == want.n == 30
    assert np.array_equal(got.values, want.values)


def test_pointwise_quantiles_without_a_host_lost_at_the_first_query(monkeypatch):
    """The targets n q follow the kept n from the first answer on."""
    want = private_quantiles(P[KEPT], QUANTILES)
    loss = _Loss(monkeypatch)
    loss.lose()
    got = private_quantiles(P, QUANTILES)
    assert np.array_equal(got.quantiles, want.quantiles)
    assert got.ecdf.account["dropouts"] == {"parties_lost": 10, "step": "query"}


def test_a_pointwise_host_lost_after_an_answer_was_opened_ends_the_run(monkeypatch):
    loss = _Loss(monkeypatch)
    query = PointwiseServers.query

    def later(self, idx):           # lost once the first answers are opened
        out = query(self, idx)
        loss.lose()
        return out

    monkeypatch.setattr(PointwiseServers, "query", later)
    with pytest.raises(LateDropoutError, match="no release"):
        private_quantiles(P, QUANTILES)


def test_the_steps_of_losses_at_successive_steps():
    for absent_hosts in range(3):
        s = _session(range(absent_hosts), None)
        a = 3 * absent_hosts
        for first in range(a, 13):
            earlier = outcome(s, first)
            for lost in range(first, 13):
                got = outcome(s, lost, "sums", earlier)
                want = [w for w, hit in (("start", a > 0), ("upload", first > a),
                                         ("sums", lost > max(first, a))) if hit]
                assert got == {"parties_lost": lost, "step": ", ".join(want) or "sums"}


ROC = ROCSpec.of(thresholds=12, bounds=(0, 1), epsilon=16.0, seed="drop", backend="pointwise",
                 max_auc_halfwidth=None)


def test_a_pointwise_roc_without_a_host_lost_at_the_first_answers(monkeypatch):
    want = private_roc(P[KEPT], Y[KEPT], ROC)
    loss = _Loss(monkeypatch)
    loss.lose()
    got = private_roc(P, Y, ROC)
    assert got.account["dropouts"] == {"parties_lost": 10, "step": "query"}
    assert got.auc == want.auc and np.array_equal(got.tpr, want.tpr)
    assert np.array_equal(got.fpr, want.fpr)


def test_a_pointwise_roc_host_lost_between_the_classes_ends_the_run(monkeypatch):
    loss = _Loss(monkeypatch)
    query = PointwiseServers.query
    calls = []

    def second(self, idx):          # lost at the negative class's answers
        calls.append(1)
        if len(calls) == 2:
            loss.lose()
        return query(self, idx)

    monkeypatch.setattr(PointwiseServers, "query", second)
    with pytest.raises(LateDropoutError, match="after the positive class's answers were opened"):
        private_roc(P, Y, ROC)


def test_a_pointwise_run_loses_no_more_than_the_bound(monkeypatch):
    loss = _Loss(monkeypatch, bound=9)
    loss.lose()
    with pytest.raises(DropoutBoundError, match="10 of 40 parties' answers did not reach every "
                                                "server, more than max_dropouts = 9"):
        release(P, POINTWISE)
