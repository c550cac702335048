"""Dropouts mid-run with class counts and edge sums (issue 36 item 5).

The whole program (:func:`ustat.umpc.protocol._main`) runs in this process as one
process of a deployment of four party hosts would: a fake runtime whose transport
says which host vanished (while computing, or when the noise step starts), the
roll calls agreeing it, the threshold last round among the hosts. The release is
compared with the simulator's survivors' release
(:func:`ustat.umpc.survivors.run_with_dropouts`): the same surviving design, the
same epsilon split and noise scales, the same bits where no noise is drawn
(epsilon = inf), and no bit of it depends on the vanished parties' records.
"""

import math

import numpy as np
import pytest

from ustat.executors import Place
from ustat.specs import UMPCSpec
from ustat.umpc.dropouts import Dropouts
from ustat.umpc.protocol import _main
from ustat.umpc.setup import public_hypergraph
from ustat.umpc.survivors import run_with_dropouts

N = 24
HOST = range(12, 18)            # host-2 of four hosts of 6 parties


class _Transport:
    """What the dropout steps read of a transport: who may vanish, who is gone, the step
    hook (``at``: the step at which host-2 vanishes; "computing": before the roll call
    after the chunks)."""

    def __init__(self, at):
        self.may_vanish = frozenset(range(4))
        self.gone = {2} if at == "computing" else set()
        self.at = at

    def on_step(self, step):
        if step == self.at:
            self.gone.add(2)

    def describe(self, r):
        return f"host-{r}"


class _Runtime:
    """One process that holds every participant of a 4-host deployment (a simulated
    network: no link), whose roll calls agree what the transport saw."""

    def __init__(self, at):
        self.groups = [range(6 * h, 6 * h + 6) for h in range(4)] + [["dealer", "aggregator"]]
        self.transport = _Transport(at)
        self.gone: frozenset = frozenset()
        self.max_lost = 7

    def roll_call(self, absent):
        self.gone = frozenset(absent) | self.gone
        return self.gone

    def link(self, n, roles):
        return None

    def next_session(self):
        return 0


def _deployed(X, spec, at):
    options = dict(session=None, hypergraph=None, evaluate=False, progress=False,
                   record_views=False)
    return _main(Place(runtime=_Runtime(at), workers=1), spec, options, X)


def _auc_records(seed=0):
    rng = np.random.default_rng(seed)
    return np.c_[rng.random(N), rng.integers(0, 2, N)]


def _kendall_records(seed=0):
    return np.random.default_rng(seed).integers(0, 3, (N, 2)) / 2.0     # ties


def _other(X, records):
    """X with host-2's records replaced by other ones of the same kind."""
    Y = X.copy()
    Y[list(HOST)] = records(9)[list(HOST)]
    return Y


def _surviving_edges(spec):
    """E_S in the original party ids (the full run's public E without host-2's edges)."""
    E = public_hypergraph(spec, N).edges
    return E[~np.isin(E, HOST).any(axis=1)]


def _same_design(got, want, step):
    assert got.dropouts == want.dropouts
    assert got.dropouts["step"] == step and got.dropouts["parties_lost"] == 6
    assert (got.n, got.edges, got.max_degree) == (want.n, want.edges, want.max_degree)
    assert got.sensitivity == want.sensitivity
    assert got.epsilon_split == want.epsilon_split
    assert got.noise_scale == want.noise_scale              # the surviving design's
    for name in ("aux", "edge_aux"):
        g, w = getattr(got, name), getattr(want, name)
        assert g.get("names") == w.get("names") and g.get("epsilon") == w.get("epsilon")
        for key, info in w.get("noise", {}).items():
            assert g["noise"][key]["epsilon"] == info["epsilon"]
            assert g["noise"][key]["sensitivity"] == info["sensitivity"]


@pytest.mark.parametrize(("kernel", "at"), [("auc", "computing"), ("auc", "noise"),
                                            ("vus", "computing")])
def test_class_counts_without_noise_release_the_survivors_bits(kernel, at):
    """epsilon = inf (nothing drawn, so the two runs' different streams cannot matter):
    the release, class counts included, is the simulator's survivors' release bit for bit."""
    X = _auc_records()
    if kernel == "vus":
        X[:, 1] = np.arange(N) % 3
    spec = UMPCSpec.of(kernel, epsilon=math.inf, seed=3)
    got = _deployed(X, spec, at)
    want = run_with_dropouts(X, spec, Dropouts(HOST, at))
    _same_design(got, want, at)
    S = np.setdiff1d(np.arange(N), HOST)
    counts = [float(c) for c in np.bincount(X[S, 1].astype(int), minlength=3)]
    assert got.aux["noisy_sums"] == want.aux["noisy_sums"] == \
        (counts[1:2] if kernel == "auc" else counts)
    assert (got.estimate, got.u_hat, got.ci) == (want.estimate, want.u_hat, want.ci)


@pytest.mark.parametrize(("kernel", "at"), [("auc", "computing"), ("auc", "noise"),
                                            ("kendall", "computing"), ("kendall", "noise")])
def test_class_counts_and_edge_sums_leave_the_lost_host_out(kernel, at):
    """With noise (AUC's n_pos; tie-aware Kendall's untied pairs): the surviving design's
    split and scales, the survivors' statistic and class count within 4 noise sd, a loss
    during the noise redrawn once, and the vanished host's records change no bit."""
    if kernel == "auc":
        records, spec = _auc_records, UMPCSpec.of("auc", epsilon=1.0, seed=6)
    else:
        records = _kendall_records
        spec = UMPCSpec.of("kendall", epsilon=10.0, seed=6, tie_aware=True)
    X = records(0)
    got = _deployed(X, spec, at)
    want = run_with_dropouts(X, spec, Dropouts(HOST, at), evaluate="incomplete")
    _same_design(got, want, at)
    u_sd = math.sqrt(2) * got.noise_scale      # DLap of scale b: sd below sqrt(2) b
    assert abs(got.u_hat - want.evaluation["u_incomplete"]) <= 4 * u_sd
    if kernel == "auc":
        S = np.setdiff1d(np.arange(N), HOST)
        info = got.aux["noise"]["n_pos"]
        sd = math.sqrt(2) * info["sensitivity"] / info["epsilon"]
        assert abs(got.aux["noisy_sums"][0] - X[S, 1].sum()) <= 4 * sd
    else:
        assert got.edge_aux["names"] == ["untied_pairs"]
        info = got.edge_aux["noise"]["untied_pairs"]
        sd = math.sqrt(2) * info["sensitivity"] / info["epsilon"] / got.edges
        ES = _surviving_edges(spec)
        untied = np.mean((X[ES[:, 0]] != X[ES[:, 1]]).all(axis=1))
        assert abs(got.edge_aux["noisy_means"][0] - untied) <= 4 * sd
    redrawn = [t for t in got.notes if "drawn again among the survivors" in t]
    assert len(redrawn) == (at == "noise")
    other = _deployed(_other(X, records), spec, at)
    assert (other.estimate, other.u_hat, other.ci, other.aux["noisy_sums"],
            other.edge_aux.get("noisy_means")) == \
        (got.estimate, got.u_hat, got.ci, got.aux["noisy_sums"],
         got.edge_aux.get("noisy_means"))


def test_a_loss_during_the_noise_masks_the_survivors_counts_again_with_fresh_masks(
        monkeypatch):
    """The class counts' masking runs after the roll call (the first draw: every party, host-2
    vanishing within it), and the draw it discards is redone through the survivors only with
    masks never used before."""
    from ustat.umpc import noise_step

    calls = []
    mask = noise_step._mask_aux

    def spy(session, values, rng, ids):
        calls.append((list(ids), rng.derive("aux-masks").uint64(4).tolist()))
        return mask(session, values, rng, ids)

    monkeypatch.setattr(noise_step, "_mask_aux", spy)
    _deployed(_auc_records(), UMPCSpec.of("auc", epsilon=1.0, seed=6), "noise")
    survivors = [i for i in range(N) if i not in HOST]
    assert [ids for ids, _ in calls] == [list(range(N)), survivors]
    assert calls[0][1] != calls[1][1]
