"""Dropouts (issue 36 item 5): the survivors' release of U-MPC without the parties that vanished.

The bound and the surviving design are checked exhaustively on small
domains; the survivors' computation against a run on the survivors' data
(two worlds: the vanished parties' records cannot change a bit of it); the
noise law and the interval's coverage statistically over 200 unseeded runs.
"""

import itertools
import math

import numpy as np
import pytest
from scipy import stats

from ustat.sampling import Hypergraph, all_edges
from ustat.specs import UMPCSpec
from ustat.umpc import run_umpc
from ustat.umpc.dropouts import (
    STEPS,
    DropoutBoundError,
    Dropouts,
    check_bound,
    default_max_dropouts,
    surviving_design,
)
from ustat.umpc.setup import public_hypergraph
from ustat.umpc.survivors import run_with_dropouts

HOST = range(6, 12)         # one of four hosts of 6 parties


def _records(n=24, seed=0):
    return np.random.default_rng(seed).random((n, 2))


def test_the_bound_is_a_third_and_a_loss_beyond_it_ends_the_run():
    for n in range(2, 40):
        assert default_max_dropouts(n) == (n - 1) // 3
        for lost in range(n + 1):
            for given in (None, 0, 1, n // 2):
                bound = (n - 1) // 3 if given is None else given
                if lost > bound or n - lost < 2:
                    with pytest.raises(DropoutBoundError):
                        check_bound(lost, n, given)
                else:
                    assert check_bound(lost, n, given) == bound
    with pytest.raises(DropoutBoundError, match="more than max_dropouts = 7"):
        run_with_dropouts(_records(), UMPCSpec.of("kendall", epsilon=1.0, seed=1),
                          Dropouts(range(8)))


def test_the_survivors_run_has_no_last_round_step_its_release_is_the_full_designs():
    # a host lost in the last round leaves the full design's release (ustat.umpc.last_round)
    with pytest.raises(DropoutBoundError, match="last round leaves the full design's"):
        Dropouts((1,), "aggregation")
    with pytest.raises(ValueError, match="step must be one of"):
        Dropouts((1,), "later")


@pytest.mark.parametrize("k", [2, 3])
def test_the_surviving_design_keeps_exactly_the_edges_inside_the_survivors(k):
    n = 6
    H = all_edges(n, k)
    for size in range(n - 1):
        for lost in itertools.combinations(range(n), size):
            HS, S, edges_lost = surviving_design(H, lost)
            want = [e for e in map(tuple, H.edges) if not set(e) & set(lost)]
            assert [tuple(S[e]) for e in HS.edges] == want
            assert list(S) == [i for i in range(n) if i not in lost]
            assert HS.n == n - size and edges_lost == len(H.edges) - len(want)


def test_without_a_loss_the_release_is_the_full_runs_bits():
    X, spec = _records(), UMPCSpec.of("kendall", epsilon=1.0, seed=4)
    a, b = run_umpc(X, spec), run_with_dropouts(X, spec, Dropouts(()))
    assert (a.estimate, a.u_hat, a.ci, a.edges) == (b.estimate, b.u_hat, b.ci, b.edges)
    assert b.dropouts == {"parties_lost": 0, "edges_lost": 0, "step": "computing"}


ENGINES = [{}, {"threat_model": "hf"}, {"backend": "gc"}, {"backend": "gc", "threat_model": "hf"}]


@pytest.mark.parametrize(("step", "engine"), [(s, ENGINES[i % 4]) for i, s in enumerate(STEPS)]
                         + [("computing", e) for e in ENGINES[1:]])
def test_two_worlds_the_survivors_release_is_a_run_on_the_survivors_data(step, engine):
    X, spec = _records(), UMPCSpec.of("kendall", epsilon=1.0, seed=7, **engine)
    E = public_hypergraph(spec, len(X)).edges
    res = run_with_dropouts(X, spec, Dropouts(HOST, step))
    keep = ~np.isin(E, HOST).any(axis=1)
    S = np.setdiff1d(np.arange(len(X)), HOST)
    HS = Hypergraph(np.searchsorted(S, E[keep]), len(S), 2, "balanced")
    want = run_umpc(X[S], spec, hypergraph=HS)
    assert (res.estimate, res.u_hat, res.ci) == (want.estimate, want.u_hat, want.ci)
    assert res.dropouts == {"parties_lost": 6, "edges_lost": int((~keep).sum()), "step": step}
    delta_s = int(np.bincount(HS.edges.ravel(), minlength=len(S)).max())
    assert (res.n, res.edges, res.max_degree) == (18, int(keep.sum()), delta_s)
    assert res.sensitivity == delta_s * 2.0                     # Kendall: Delta f = 2
    assert math.isclose(res.noise_scale, delta_s * 2.0 / 1.0 / res.edges)
    if spec.privacy.threat_model == "dis":
        assert res.noise_guarantee["contributors"] == 18        # survivors' coins only
    # the vanished parties' records cannot change a bit of the release
    Y = X.copy()
    Y[list(HOST)] = np.random.default_rng(1).random((6, 2))
    other = run_with_dropouts(Y, spec, Dropouts(HOST, step))
    assert (other.estimate, other.u_hat, other.ci) == (res.estimate, res.u_hat, res.ci)


def _dlap_pit(d, t, rng):
    """Randomized probability integral transform of integers d under DLap(t): uniform iff
    d follows DLap(t)."""
    p = np.exp(-1.0 / np.asarray(t, dtype=np.float64))

    def cdf(x):       # P(D <= x)
        x = np.asarray(x, dtype=np.float64)
        return np.where(x < 0, p ** (-x) / (1 + p), 1 - p ** (x + 1) / (1 + p))
    lo, hi = cdf(d - 1), cdf(d)
    return lo + rng.random(d.shape) * (hi - lo)


def test_dp_audit_and_coverage_of_releases_with_a_dropout():
    """300 seeded runs (dis and hf, noise sampled inside MPC; one fixed seed per run, so the
    statistical checks below are decided once, not at random on every run of the suite)
    losing one host of four: the
    released sum minus the survivors' exact sum follows the central DLap of the surviving
    design (randomized PIT, KS; its scale is delta_S Delta f 2^f / epsilon exactly); the
    estimate is within 4 noise sd of the survivors' U-statistic and the interval covers it
    at 0.93-0.99 (about 3 s)."""
    X = _records(24, seed=2)
    tms = ("dis", "hf")
    H = all_edges(24, 2)
    rng = np.random.default_rng(3)
    runs = 300
    d, scales, covered, within = [], [], 0, 0
    for i, step in enumerate(itertools.islice(itertools.cycle(STEPS), runs)):
        spec = UMPCSpec.of("kendall", epsilon=1.0, threat_model=tms[i % 2], sampler="all",
                           seed=7_000 + i)
        res = run_with_dropouts(X, spec, Dropouts(HOST, step), hypergraph=H,
                                evaluate="incomplete")
        u_s = res.evaluation["u_incomplete"]            # the survivors' U (complete design)
        f = res.precision["frac_bits"]
        noise = (res.u_hat - u_s) * res.edges * 2.0 ** f
        assert abs(noise - round(noise)) < 1e-6
        d.append(round(noise))
        scales.append(res.aux["noise"]["u"]["scale_ring_units"])
        assert scales[-1] == pytest.approx(res.max_degree * 2.0 * 2.0 ** f, rel=1e-9)
        assert res.max_degree == 17                     # delta_S: 18 survivors, all pairs
        covered += res.ci[0] <= u_s <= res.ci[1]
        within += abs(res.estimate - u_s) <= 4 * res.noise_std
    pit = _dlap_pit(np.array(d), np.array(scales), rng)
    assert stats.kstest(pit, "uniform").pvalue > 1e-3
    assert within == runs
    assert 0.93 * runs <= covered <= 0.99 * runs


class _Transport:
    def __init__(self):
        self.gone: set = set()

    def describe(self, r):
        return f"host-{r} (parties {3 * r}-{3 * r + 2})"


class _Runtime:
    """What the dropout steps read of a run's runtime: four hosts of 3 parties and the roles
    (the roll call: every process agrees what the transport saw)."""

    def __init__(self):
        self.groups = [range(3 * h, 3 * h + 3) for h in range(4)] + [["dealer", "aggregator"]]
        self.transport = _Transport()
        self.gone: frozenset = frozenset()
        self.max_lost = 3
        self.roll_calls = 0

    def roll_call(self, absent):
        self.roll_calls += 1
        self.gone = frozenset(absent) | self.gone
        return self.gone


def _kept_run(seed=3):
    """A simulator run of Kendall on 12 records, its per-edge shares (kept) and z."""
    from ustat.umpc.merge import add_shares
    from ustat.umpc.setup import prepare_run

    spec = UMPCSpec.of("kendall", epsilon=1.0, seed=seed)
    run = prepare_run(_records(12, seed), spec, None, None,
                      {"workers": 1, "pool": None, "scheduler": None, "record_views": False,
                       "noise_method": "polya", "runtime": None})
    ring = run.session.ring
    shares = np.random.default_rng(seed).integers(0, 1 << 40, (2, run.m), dtype=np.uint64)
    z = np.zeros(run.n, dtype=np.uint64)
    add_shares(z, run.E, shares)
    return run, [(run.E, shares, None)], z & ring.mask


@pytest.mark.parametrize("lost_in_computing", [False, True])
def test_a_loss_in_the_noise_step_discards_the_draw_and_draws_again_among_the_survivors(
        lost_in_computing):
    """host-2 vanishes while the noise is drawn (host-1 before, while computing, or not):
    the draw is discarded (z holds no trace of it), host-2's edges leave the sums, and the
    noise is drawn again on the new survivors' design; nothing is drawn a third time."""
    from ustat.umpc.dropouts import noise_among_survivors

    run, kept, z = _kept_run()
    ring = run.session.ring
    z_start = z.copy()
    rt = _Runtime()
    if lost_in_computing:
        rt.transport.gone.add(1)
        rt.max_lost = 6
    calls = []

    def draw(survivors, senders):
        calls.append((survivors.n, None if senders is None else list(senders)))
        ids = np.arange(run.n) if senders is None else senders
        z[ids] = ring.add(z[ids], np.uint64(1000 + len(calls)))     # this draw's "noise"
        if len(calls) == 1:
            rt.transport.gone.add(2)                                # vanishes mid-noise
        return len(calls)

    out, senders, dropouts, value, draws = noise_among_survivors(run, rt, kept, z, draw, None)
    lost = np.r_[np.arange(3, 6) if lost_in_computing else [], np.arange(6, 9)]
    H, S, edges_lost = surviving_design(run.hypergraph, lost)
    assert (draws, value) == (2, 2) and list(senders) == list(S)
    assert calls[1] == (S.size, list(S))                    # drawn again among the survivors
    assert np.array_equal(out.E, H.edges) and out.n == S.size
    assert dropouts == {"parties_lost": lost.size, "edges_lost": edges_lost,
                        "step": "computing, noise" if lost_in_computing else "noise"}
    # z: the start, minus every lost edge's shares, plus the second draw only
    E, shares, _ = kept[0]
    want = z_start.copy()
    out_edges = np.isin(E, lost).any(axis=1)
    for j in range(2):
        np.subtract.at(want, E[out_edges, j], shares[j, out_edges])
    want[S] += np.uint64(1002)
    assert np.array_equal(z[S], want[S] & ring.mask)
    assert rt.roll_calls == 3              # after the chunks, then after each draw


def test_a_loss_in_the_noise_step_beyond_the_bound_ends_the_run():
    from ustat.umpc.dropouts import noise_among_survivors

    run, kept, z = _kept_run()
    rt = _Runtime()
    rt.max_lost = 2                     # a host holds 3 parties

    def draw(survivors, senders):
        rt.transport.gone.add(0)
    with pytest.raises(DropoutBoundError, match="more than max_dropouts = 2"):
        noise_among_survivors(run, rt, kept, z, draw, None)


def test_a_loss_in_the_last_round_names_the_host_and_the_step():
    from ustat.umpc.dropouts import check_no_new_loss

    rt = _Runtime()
    check_no_new_loss(rt, frozenset(), "aggregation")       # nobody lost: nothing to say
    rt.transport.gone.add(2)
    with pytest.raises(DropoutBoundError) as e:
        check_no_new_loss(rt, frozenset(), "aggregation")
    assert "host-2 (parties 6-8) vanished during the aggregation step" in str(e.value)
    assert "no release" in str(e.value) and "budget stays charged" in str(e.value)
