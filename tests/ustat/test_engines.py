"""U-MPC chunks on workers and on Dask: bit-identical results, merged accounting, progress line."""

import io
import math
import pickle
import time

import numpy as np
import pytest

from mpc.arith.rng import CSPRNG
from mpc.session import Session
from tests.api import flat_umpc
from ustat import kernels as K
from ustat.umpc import ChunkSpec, engines, run_chunk
from ustat.umpc.engines import run_chunks, warm_up
from ustat.umpc.merge import add_shares, merge_chunk
from ustat.umpc.progress import Progress, StageClock
from ustat.umpc.tasks import ChunkInputs


def _records(name, n, seed=1):
    kern = K.get(name)
    g = CSPRNG(seed)
    X = g.random((n, kern.columns))
    for c in kern.categorical:
        X[:, c] = g.integers(kern.extra.get("levels", {}).get(c, 2), (n,))
    return X


def _run(name, X, **kw):
    kw.setdefault("epsilon", 1.0)
    kw.setdefault("threat_model", "hf")
    return flat_umpc(X, name, seed=21, chunk_size=kw.pop("chunk_size", 9), **kw)


def _same(a, b):
    """Bit-identical releases and identical communication reports."""
    assert a.u_hat == b.u_hat and a.estimate == b.estimate
    assert a.aux["noisy_sums"] == b.aux["noisy_sums"]
    assert a.communication == b.communication
    assert (a.edges, a.max_degree, a.chunks) == (b.edges, b.max_degree, b.chunks)


@pytest.mark.parametrize("name,n", [("kendall", 40), ("auc", 36), ("triples", 21)])
def test_results_do_not_depend_on_the_number_of_workers(name, n):
    X = _records(name, n)
    one = _run(name, X, workers=1)
    assert one.chunks > 3 and one.workers == 1
    for kw in ({"workers": 2}, {"workers": 3}, {"workers": 2, "pool": "threads"}):
        _same(one, _run(name, X, **kw))


def test_chunking_changes_neither_release_nor_accounting():
    """Without noise the release is the exact U-statistic whatever the chunk size, and the
    bits, messages, per-party maxima and rounds are those of one big chunk."""
    X = _records("kendall", 30)
    whole = _run("kendall", X, epsilon=math.inf, chunk_size=10**6, workers=1)
    small = _run("kendall", X, epsilon=math.inf, chunk_size=7, workers=2)
    assert whole.chunks == 1 and small.chunks == math.ceil(small.edges / 7)
    assert whole.u_hat == small.u_hat
    assert whole.communication == small.communication


def test_views_are_merged_in_send_order():
    X = _records("gini", 24)
    views = []
    for workers in (1, 2):
        s = Session(24, seed=3, record_views=True)
        flat_umpc(X, "gini", epsilon=math.inf, session=s, chunk_size=5, workers=workers)
        views.append([[(r.phase, r.round, r.offline, r.sender, np.asarray(r.payload).tobytes())
                       for r in s.net.view(p)] for p in (0, 7, s.net.role("aggregator"))])
    assert views[0] == views[1] and all(len(v) for v in views[0])
    rounds = [r[1] for r in views[0][0]]
    assert rounds == sorted(rounds)


def test_run_chunk_is_a_pure_function_of_spec_index_and_values():
    kern = K.get("gini")
    spec = ChunkSpec(kernel=kern, bits=40, frac_bits=14, input_frac_bits=14,
                     roles=("dealer", "aggregator"), streams=CSPRNG(4).derive("chunks"))
    fp = Session(1).fp
    values = fp.encode(CSPRNG(5).random((9, 2, 1)))
    a = run_chunk(spec, 3, values)
    b = run_chunk(pickle.loads(pickle.dumps(spec)), 3, values)
    assert np.array_equal(a.shares, b.shares) and a.index == 3
    assert not np.array_equal(a.shares, run_chunk(spec, 4, values).shares)
    # the members' shares reconstruct f on the encoded values: |x - y|
    got = fp.decode(np.sum(a.shares, axis=0, dtype=np.uint64) & np.uint64((1 << 40) - 1))
    want = np.abs(fp.decode(values[:, 0, 0]) - fp.decode(values[:, 1, 0]))
    assert np.array_equal(got, want)
    # traffic is kept per member position (every edge sends the same): O(k) integers
    assert a.traffic.period == 2 and a.traffic.n_parties == 18


def test_one_generator_for_two_runs_never_reuses_randomness():
    X = _records("gini", 12)
    g = CSPRNG(8)
    sh = []
    for _ in range(2):
        s = Session(12, seed=g, record_views=True)
        flat_umpc(X, "gini", epsilon=math.inf, edges="all", session=s, workers=1)
        sh.append([np.asarray(r.payload) for r in s.net.view(1) if r.phase == "sharing"])
    assert len(sh[0]) == len(sh[1]) > 0
    assert not any(np.array_equal(a, b) for a, b in zip(*sh))


def test_engine_arguments_are_checked():
    X = _records("gini", 10)
    with pytest.raises(ValueError, match="workers must be a positive integer"):
        flat_umpc(X, "gini", workers=0)
    with pytest.raises(ValueError, match="pool must be one of"):
        flat_umpc(X, "gini", pool="fibers")
    with pytest.raises(ValueError, match="backend must be one of"):
        flat_umpc(X, "gini", backend="no-such-backend")
    with pytest.raises(ValueError, match="chunk_size must be a positive integer"):
        flat_umpc(X, "gini", chunk_size=0)
    with pytest.raises(TypeError, match="scheduler must be"):
        flat_umpc(X, "gini", scheduler=3, chunk_size=4)


class _Terminal(io.StringIO):
    def isatty(self):
        return True


def test_progress_line_only_on_a_terminal_after_the_delay():
    out = _Terminal()
    with Progress(100, True, stream=out, delay=0.0, interval=0.001) as bar:
        bar.stage("computing")
        bar.advance(40)
        while "40/100" not in out.getvalue():
            pass
    text = out.getvalue()
    assert "40/100 edges" in text and "computing" in text and text.endswith("\r\033[K")
    log = io.StringIO()                         # redirected: one plain line per stage
    with Progress(100, True, stream=log, delay=0.0, interval=0.001) as bar:
        bar.advance(100)
        assert log.getvalue() == ""
        bar.stage("computing")
        bar.stage("aggregation")
    lines = log.getvalue().splitlines()
    assert [line.split(" (")[0] for line in lines] == ["ustat: computing 100 edges",
                                                        "ustat: aggregation 100 edges"]
    assert "\r" not in log.getvalue()
    off = io.StringIO()                         # not asked for: nothing
    with Progress(100, False, stream=off) as bar:
        bar.stage("computing")
    assert off.getvalue() == ""
    quiet = _Terminal()                         # a run shorter than the delay shows nothing
    with Progress(100, True, stream=quiet, delay=60.0):
        pass
    assert quiet.getvalue() == ""


def test_stage_clock_laps_add_up_to_the_total_in_order():
    clock = StageClock()
    for name, pause in (("setup", 0.01), ("computing", 0.0), ("report", 0.02)):
        time.sleep(pause)
        clock.lap(name)
    assert list(clock.laps) == ["setup", "computing", "report"]
    assert clock.laps["setup"] >= 0.01 and clock.laps["report"] >= 0.02
    assert min(clock.laps.values()) >= 0
    assert abs(sum(clock.laps.values()) - clock.total()) < 1e-12


# -- merging chunks -----------------------------------------------------------------------------
@pytest.mark.parametrize("n,m,k", [(10**4, 5000, 2), (50, 4000, 3), (7, 300, 4), (10, 0, 2)])
def test_add_shares_equals_np_add_at_mod_2_64(n, m, k):
    g = CSPRNG(f"add-{n}-{m}-{k}")
    edges = g.integers(n, (m, k))                    # repeated ids accumulate
    shares = g.uint64((k, m)) | np.uint64(1 << 63)   # large words: every sum wraps
    z0 = g.uint64(n)
    want = z0.copy()
    for j in range(k):
        np.add.at(want, edges[:, j], shares[j])
    got = add_shares(z0.copy(), edges, shares)
    assert got.dtype == np.uint64 and np.array_equal(got, want)
    # strided inputs (a column slice of a larger array, a transposed share block)
    wide = np.zeros((m, 2 * k), dtype=np.int64)
    wide[:, ::2] = edges
    assert np.array_equal(add_shares(z0.copy(), wide[:, ::2], np.ascontiguousarray(shares.T).T),
                          want)


def test_add_shares_checks_its_arguments():
    z = np.zeros(5, dtype=np.uint64)
    e = np.array([[0, 1], [2, 4]])
    sh = np.ones((2, 2), dtype=np.uint64)
    with pytest.raises(ValueError, match=r"shares must have shape \(k, m_c\) = \(2, 2\)"):
        add_shares(z, e, sh[:1])
    with pytest.raises(TypeError, match="shares must be uint64"):
        add_shares(z, e, sh.astype(np.int64))
    with pytest.raises(ValueError, match=r"party ids in 0\.\.4"):
        add_shares(z, e + 1, sh)
    with pytest.raises(ValueError, match=r"party ids in 0\.\.4"):
        add_shares(z, e - 1, sh)
    with pytest.raises(TypeError, match="z must be a writable, contiguous 1-d uint64"):
        add_shares(np.zeros(10, dtype=np.uint64)[::2], e, sh)
    with pytest.raises(TypeError, match="z must be a writable, contiguous 1-d uint64"):
        add_shares(z.astype(np.int64), e, sh)


def test_merge_chunk_equals_absorb_and_add_at():
    """The merge helper gives the network report and sums of the loop it replaces."""
    kern = K.get("gini")
    spec = ChunkSpec(kernel=kern, bits=40, frac_bits=14, input_frac_bits=14,
                     roles=("dealer", "aggregator"), streams=CSPRNG(14).derive("chunks"))
    n, m = 30, 25
    edges = np.sort(CSPRNG(15).integers(n, (m, 2)), axis=1)
    edges[:, 1] = np.where(edges[:, 1] == edges[:, 0], (edges[:, 0] + 1) % n, edges[:, 1])
    values = Session(1).fp.encode(CSPRNG(16).random((m, 2, 1)))
    res = run_chunk(spec, 0, values)
    sessions = [Session(n, seed=1) for _ in range(2)]
    zs = [np.zeros(n, dtype=np.uint64) for _ in range(2)]
    with sessions[0].net.parallel():
        merge_chunk(sessions[0].net, zs[0], edges, res)
    with sessions[1].net.parallel():
        with sessions[1].net.lane():
            sessions[1].net.absorb(res.traffic, edges.ravel())
        for j in range(2):
            np.add.at(zs[1], edges[:, j], res.shares[j])
    assert np.array_equal(zs[0], zs[1])
    assert sessions[0].net.report() == sessions[1].net.report()


def test_chunk_inputs_gather_each_chunk():
    g = CSPRNG(17)
    enc, E = g.uint64((20, 3)), g.integers(20, (23, 2))
    inp = ChunkInputs(enc, E, 5)
    # 23 edges in chunks of at most 5: five chunks of equal size (4 or 5), in order
    assert len(inp) == 5
    assert [inp.bounds(i) for i in range(5)] == [(0, 4), (4, 9), (9, 13), (13, 18), (18, 23)]
    pairs = list(inp)
    assert [i for i, _ in pairs] == list(range(5))
    for i, v in pairs:
        start, stop = inp.bounds(i)
        assert np.array_equal(inp.edges_of(i), E[start:stop])
        assert np.array_equal(v, enc[E[start:stop]])


def test_inputs_narrow_to_32_bits_when_every_word_fits_and_chunks_widen_them_back():
    kern = K.get("gini")
    spec = ChunkSpec(kernel=kern, bits=40, frac_bits=14, input_frac_bits=14,
                     roles=("dealer", "aggregator"), streams=CSPRNG(30).derive("chunks"))
    g = CSPRNG(31)
    E = g.integers(50, (40, 2))
    for top, narrowed in ((1 << 32, True), (1 << 33, False)):
        enc = g.uint64((50, 1)) % np.uint64(top)
        enc[0, 0] = top - 1                                       # the largest word
        inp = ChunkInputs.of_run(enc, E, 16)
        assert inp.enc.dtype == (np.uint32 if narrowed else np.uint64)
        assert np.array_equal(inp.enc, enc)                       # the same words
        for i, v in inp:
            wide = enc[inp.edges_of(i)]
            a, b = run_chunk(spec, i, v), run_chunk(spec, i, wide)
            assert np.array_equal(a.shares, b.shares)
            assert a.traffic.cells.keys() == b.traffic.cells.keys() and all(
                np.array_equal(x, y) for k in a.traffic.cells
                for x, y in zip(a.traffic.cells[k][3:], b.traffic.cells[k][3:]))
    with pytest.raises(TypeError, match="unsigned"):
        run_chunk(spec, 0, enc[E[:4]].astype(np.int64))


@pytest.mark.parametrize("m", [1, 2, 5, 6, 7, 23, 100, 131073])
@pytest.mark.parametrize("size", [1, 3, 5, 1 << 17])
def test_chunks_cover_the_edges_in_equal_sizes(m, size):
    inp = ChunkInputs(np.zeros((1, 1), np.uint64), np.zeros((m, 2), np.int64), size)
    b = np.array([inp.bounds(i) for i in range(len(inp))])
    sizes = b[:, 1] - b[:, 0]
    assert len(inp) == -(-m // size) and b[0, 0] == 0 and b[-1, 1] == m
    assert np.array_equal(b[1:, 0], b[:-1, 1])                 # contiguous, in order
    assert sizes.max() <= size and sizes.max() - sizes.min() <= 1


@pytest.mark.parametrize("kw", [{"workers": 1}, {"workers": 2}, {"workers": 2, "pool": "threads"}])
def test_chunk_inputs_and_value_tasks_give_the_same_results(kw):
    kern = K.get("kendall")
    spec = ChunkSpec(kernel=kern, bits=40, frac_bits=14, input_frac_bits=14,
                     roles=("dealer", "aggregator"), streams=CSPRNG(18).derive("chunks"))
    enc = Session(1).fp.encode(CSPRNG(19).random((15, 2)))
    E = np.array([[a, b] for a in range(15) for b in range(a + 1, 15)][:40])
    inp = ChunkInputs(enc, E, 6)
    lazy = list(run_chunks(spec, inp, len(inp), **kw))
    eager = list(run_chunks(spec, iter(list(inp)), len(inp), workers=1))
    assert [r.index for r in lazy] == list(range(len(inp)))
    for a, b in zip(lazy, eager):
        assert np.array_equal(a.shares, b.shares)
        assert a.traffic.cells.keys() == b.traffic.cells.keys()


def test_warm_up_runs_once_and_leaves_tasks_and_results_alone(monkeypatch):
    kern = K.get("gini")
    spec = ChunkSpec(kernel=kern, bits=40, frac_bits=14, input_frac_bits=14,
                     roles=("dealer", "aggregator"), streams=CSPRNG(20).derive("chunks"))
    values = Session(1).fp.encode(CSPRNG(21).random((9, 2, 1)))
    before = run_chunk(spec, 0, values)
    monkeypatch.setattr(engines, "_WARM", set())
    calls = []
    real = engines.run_chunk
    monkeypatch.setattr(engines, "run_chunk", lambda *a: calls.append(a) or real(*a))
    tasks = warm_up(spec, iter([(0, values), (1, values)]))
    assert [i for i, _ in tasks] == [0, 1] and len(calls) == 1
    assert calls[0][0].streams is not spec.streams and calls[0][2].shape[0] == 9
    warmed = list(warm_up(spec, iter([(0, values)])))
    assert warmed[0][0] == 0 and len(calls) == 1
    assert list(warm_up(spec, iter([]))) == []
    assert np.array_equal(run_chunk(spec, 0, values).shares, before.shares)


def test_gini_release_is_the_same_with_chunk_inputs_and_two_processes():
    """End to end with a forked pool that is warmed up in the parent (a fresh kernel key)."""
    X = _records("gini", 40)
    one = _run("gini", X, workers=1)
    engines._WARM.clear()
    _same(one, _run("gini", X, workers=2))


# -- Dask ---------------------------------------------------------------------------------------
# Real worker processes (processes=True, as on a cluster: everything crosses a pickle
# boundary); the cluster starts once for the module, in a few seconds.
def _need_dask():
    pytest.importorskip("distributed", reason="the [dask] extra is not installed")


@pytest.fixture(scope="module")
def client():
    _need_dask()
    from ustat.umpc.dask_runner import connect

    with connect("local", 2) as c:          # the cluster scheduler="local" makes
        yield c


@pytest.mark.parametrize("name,n", [("kendall", 40), ("triples", 21)])
def test_dask_matches_a_local_run(client, name, n):
    X = _records(name, n)
    local = _run(name, X, workers=1)
    remote = _run(name, X, scheduler=client)
    _same(local, remote)
    assert remote.scheduler == "Client"


def test_dask_custom_kernel_and_views(client):
    near = K.Kernel("near_test", 2, 1,
                    lambda X: (np.abs(X[:, 0, 0] - X[:, 1, 0]) <= 0.25).astype(float),
                    lambda ops, x: ops.to_fixed(ops.in_interval(
                        ops.abs(ops.sub(x[0][0], x[1][0])), 0, int(0.25 * ops.fp.scale))),
                    (0.0, 1.0))
    X = _records("gini", 20)
    res = []
    for kw in ({"workers": 1}, {"scheduler": client}):
        s = Session(20, seed=6, record_views=True)
        r = flat_umpc(X, near, epsilon=math.inf, session=s, chunk_size=9, evaluate="incomplete",
                     **kw)
        res.append((r.u_hat, [np.asarray(v.payload).tobytes() for v in s.net.view(3)]))
        assert r.u_hat == pytest.approx(r.evaluation["u_incomplete"], abs=1e-12)
    assert res[0] == res[1]


def test_dask_local_cluster_workers_run_without_the_profiler(client):
    import dask

    from ustat.umpc.dask_runner import LOCAL_CLUSTER_CONFIG
    assert LOCAL_CLUSTER_CONFIG == {"distributed.worker.profile.enabled": False}
    seen = client.run(lambda: dask.config.get("distributed.worker.profile.enabled"))
    assert len(seen) == 2 and set(seen.values()) == {False}
    assert dask.config.get("distributed.worker.profile.enabled") is True   # caller's untouched


def test_dask_local_cluster_from_the_scheduler_argument():
    _need_dask()
    X = _records("gini", 30)
    local = _run("gini", X, workers=1)
    remote = _run("gini", X, scheduler="local", workers=2)
    _same(local, remote)
    assert remote.scheduler == "local"
