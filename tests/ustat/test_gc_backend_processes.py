"""The gc backend's chunk with its members in separate processes (a linked chunk session).

A chunk of U-MPC edges between six parties runs its sharing and computing
steps (:func:`ustat.umpc.chunk.share_inputs`, :func:`~ustat.umpc.chunk.compute_kernel`)
on a chunk session whose link spreads the members over processes
(:meth:`mpc.run.routing.Link.sub`): the simulator's shares, report and views with
one debug seed at P = 2 and 3; without a seed, correct shares of f and socket
bytes equal to the counted bits / 8. Then a whole ``flat_umpc(backend="gc",
processes=3)``.
"""

from dataclasses import replace

import numpy as np
import pytest

from mpc.run.launch import launch
from mpc.session import Session
from tests.api import flat_umpc
from tests.process_helpers import (
    assert_same_as_simulator,
    assert_socket_bytes,
    local_rows,
    result,
    wire_mark,
)
from tests.ustat.test_gc_backend import _chunk_spec, _encoded
from ustat.umpc.chunk import compute_kernel, run_chunk, share_inputs

N = 6
KERNELS = ("gini", "auc")
EDGES = np.array([[0, 3], [4, 1], [2, 5], [3, 1], [0, 1], [5, 4], [2, 0]])   # two within a group
CROSSING = np.array([[0, 3], [4, 1], [2, 5], [3, 1], [5, 0], [1, 4]])
MASK = np.uint64((1 << 40) - 1)


def _chunk(parent, kernel, edges, values, views):
    spec = replace(_chunk_spec(kernel, record_views=views), streams=parent.rng.derive("chunks"))
    m_c, k = edges.shape
    ids = np.concatenate([edges.ravel(), [parent.net.role(r) for r in spec.roles]])
    link = None if parent.net.link is None else parent.net.link.sub(ids)
    rng = spec.streams.derive("chunk", 0)                     # as run_chunk derives it
    cs = Session.derived(m_c * k, rng, bits=spec.bits, frac_bits=spec.frac_bits,
                         roles=spec.roles, record_views=views, workers=1, link=link)
    holders = np.arange(m_c * k).reshape(m_c, k).T
    local = np.asarray(cs.net.is_local(holders))              # (k, m_c): members here
    mine = np.where(local.T[:, :, None], values, np.uint64(0))   # only local records
    mark = wire_mark(cs)
    x = share_inputs(cs, holders, mine, rng.derive("input-sharing"))
    out = compute_kernel(cs, spec, holders, x)
    return spec, cs, result(cs, {"shares": local_rows(cs, holders.ravel(), out.ravel())}, mark)


def program(rt, edges, values, seed, views=True):
    parent = Session(N, seed=seed, runtime=rt)
    return {kernel: _chunk(parent, kernel, edges, values[kernel], views)[2]
            for kernel in KERNELS}


def _values(edges):
    return {kernel: _encoded(kernel, edges.shape[0], 3) for kernel in KERNELS}


@pytest.fixture(scope="module")
def runs():
    vals, crossing = _values(EDGES), _values(CROSSING)
    return {"values": vals, "crossing": crossing, "sim": program(None, EDGES, vals, 5),
            2: launch(program, EDGES, vals, 5, groups=[[0, 1, 2, "aggregator"],
                                                       [3, 4, 5, "dealer"]]),
            3: launch(program, EDGES, vals, 5, groups=[[0, 1, 2], [3, 4, 5],
                                                       ["dealer", "aggregator"]]),
            "secure": launch(program, CROSSING, crossing, None, False,
                             groups=[[0, 1, 2, "aggregator"], [3, 4, 5, "dealer"]])}


def test_program_is_the_chunk_of_run_chunk(runs):
    """In the simulator the program's chunk is run_chunk's, bit for bit."""
    parent = Session(N, seed=5)
    for kernel in KERNELS:
        spec, _, res = _chunk(parent, kernel, EDGES, runs["values"][kernel], True)
        want = run_chunk(spec, 0, runs["values"][kernel]).shares
        np.testing.assert_array_equal(res["outputs"]["shares"][1], want.ravel())
        np.testing.assert_array_equal(runs["sim"][kernel]["outputs"]["shares"][1], want.ravel())


@pytest.mark.parametrize("procs", [2, 3])
def test_processes_give_the_simulators_bits(runs, procs):
    for kernel in KERNELS:
        assert_same_as_simulator(runs["sim"][kernel], [_Part(r, kernel) for r in runs[procs]])


def test_secure_shares_are_f_and_bytes_are_the_counted_bits(runs):
    sec = runs["secure"]
    for kernel in KERNELS:
        m_c = CROSSING.shape[0]
        shares = np.zeros(2 * m_c, np.uint64)
        for r in sec:
            idx, rows = r.value[kernel]["outputs"]["shares"]
            shares[idx] = rows
        total = (shares.reshape(2, m_c)[0] + shares.reshape(2, m_c)[1]) & MASK
        dealer = run_chunk(_chunk_spec(kernel, "dealer"), 0, runs["crossing"][kernel]).shares
        np.testing.assert_array_equal(total, (dealer[0] + dealer[1]) & MASK)   # the same f
        assert_socket_bytes([_Part(r, kernel) for r in sec],
                            sec[0].value[kernel]["report"]["total_bits"])


class _Part:
    """One kernel's part of a process's result, shaped as a launch result."""

    def __init__(self, run, kernel):
        self.rank, self.value = run.rank, run.value[kernel]


def test_whole_run_across_processes():
    """flat_umpc(backend="gc", processes=3): the simulator's release and traffic with a seed;
    without one (edges "all", no noise) the exact complete statistic."""
    X = np.random.default_rng(1).random((12, 1))
    kw = dict(epsilon=np.inf, workers=1, backend="gc")
    sim = flat_umpc(X, "gini", edges="2n", seed=3, **kw)
    three = flat_umpc(X, "gini", edges="2n", seed=3, processes=3, **kw)
    assert three.estimate == sim.estimate and three.communication == sim.communication
    secure = flat_umpc(X, "gini", edges="all", processes=3, **kw)
    exact = flat_umpc(X, "gini", edges="all", seed=3, **kw)
    assert secure.estimate == exact.estimate
    assert exact.estimate == pytest.approx(np.abs(X[:, None, 0] - X[None, :, 0]).sum() / 132,
                                           abs=1e-9)
