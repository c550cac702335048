"""The private ECDF release: thresholds in, noisy counts out, through a chosen backend.

Barczewski, Mawass, Ramon, Eq. (2) / Theorem 3.1 (tree noise) answered by
one of three backends with the same release semantics:

* ``"fss"`` -- two FSS servers holding party-generated DCF keys
  (:mod:`ustat.ecdf.servers`, Section 4.2): O(n + m |B|) bits;
* ``"pointwise"`` -- one secure aggregation per query towards m >= 2
  servers (:mod:`ustat.ecdf.pointwise`, Section 4.1): O(n |B|) bits;
* ``"central"`` -- a trusted curator that sees the values (no MPC; the
  reference for tests and accuracy studies).

:func:`deploy` runs the offline part (keys, node noise) and returns a
:class:`Deployment` whose ``query`` answers any batch of threshold indices,
at no extra epsilon; :func:`release` queries all N thresholds (or a subset)
and packages the result with its accounting (:class:`ECDFRelease`).

Adjacency: replace one record (n public; the servers see n keys anyway).
The counts are also epsilon-DP under add/remove (the change is a suffix
interval, covered by the same sensitivity), but dividing by n then needs n.

Processes: ``release(..., processes=P)`` runs the parties, the servers and
the analyst as one program in P processes on this machine
(:mod:`ustat.ecdf.processes`); ``runtime=`` is the same call inside one
process of such a run. Each process holds its own parties' values only
(the others' are a public filler), every message crosses as bytes, each
server draws its noise in its own process, and the release is the
analyst's (``released``); a seeded run releases the same bits for any
number of processes.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from .intervals import ecdf_intervals, quantile_intervals
from .noise_law import NodeNoiseLaw
from .pointwise import PointwiseServers
from .servers import FSSServers, check_query, make_session
from .thresholds import check_thresholds, grid_rank
from .tree import Tree, TreeNoise, draw_noise

__all__ = ["BACKENDS", "Deployment", "ECDFRelease", "deploy", "release", "exact_counts",
           "check_values"]

BACKENDS = ("fss", "pointwise", "central")


def exact_counts(ranks, n_points: int, weights=None) -> np.ndarray:
    """sum_i w_i 1[x_i <= tau_k] for k = 0..N-1 from the grid ranks (int64; w = 1 by default)."""
    r = np.asarray(ranks, np.int64)
    w = None if weights is None else np.asarray(weights, np.int64)
    c = np.bincount(r, weights=w, minlength=n_points + 1)
    return np.cumsum(c.astype(np.int64))[:n_points]


def check_values(values, bounds=None, clip: bool = False, name: str = "values") -> np.ndarray:
    """float64 (n,) values: finite, n >= 1, inside ``bounds`` unless ``clip``."""
    try:
        x = np.array(values, dtype=np.float64).reshape(-1)
    except (TypeError, ValueError):
        raise TypeError(f"{name} must be numbers") from None
    if x.size == 0:
        raise ValueError(f"{name}: no records (n = 0)")
    bad = np.flatnonzero(~np.isfinite(x))
    if bad.size:
        raise ValueError(f"{name}: row {bad[0] + 1} is NaN or infinite ({bad.size} such row(s))")
    if bounds is not None:
        lo, hi = (float(b) for b in bounds)
        out = (x < lo) | (x > hi)
        if out.any() and not clip:
            raise ValueError(f"{name}: {int(out.sum())} of {x.size} row(s) outside the bounds "
                             f"[{lo}, {hi}] (first: row {int(np.flatnonzero(out)[0]) + 1}); "
                             "widen the bounds or clip")
        x = np.clip(x, lo, hi)
    return x


class _Central:
    """A trusted curator: exact counts plus the node noise (no network)."""

    def __init__(self, ranks, tree: Tree, noise: TreeNoise, weights=None):
        self.counts = exact_counts(ranks, tree.n_points, weights)
        self.noise = noise

    def query(self, idx) -> np.ndarray:
        idx = check_query(idx, self.counts.size)
        return self.counts[idx] + self.noise.at(idx)


@dataclass
class Deployment:
    """A live private ECDF: thresholds, node noise and the servers that answer queries."""

    thresholds: np.ndarray
    tree: Tree
    noise: TreeNoise
    backend: str
    n: int
    session: object
    answerer: object
    queries: int = 0

    def query(self, idx) -> np.ndarray:
        """Noisy counts at threshold indices ``idx`` (int64); no extra epsilon."""
        idx = np.asarray(idx, dtype=np.int64).reshape(-1)
        self.queries += idx.size
        return self.answerer.query(idx)

    def communication(self) -> dict | None:
        return None if self.session is None else self.session.net.report()

    def costs(self):
        """What the session sent so far (:class:`mpc.comm.costs.Costs`); None without a session."""
        return None if self.session is None else self.session.costs()

    @property
    def released(self) -> bool:
        """Whether this process holds the analyst (the answers of :meth:`query` are junk in
        the other processes of a run across processes)."""
        return self.session is None or bool(self.session.is_local("analyst"))

    @property
    def processes(self) -> int:
        return 1 if self.session is None else self.session.placement.n_procs

    def account(self) -> dict:
        nz = self.noise
        return {
            "epsilon": nz.epsilon, "epsilon_requested": nz.epsilon_requested,
            "noise": "discrete_laplace" if nz.scale is not None else "none",
            "node_scale": None if nz.scale is None else float(nz.scale),
            "sensitivity_nodes": nz.sensitivity, "levels": nz.tree.levels + 1,
            "branching": nz.tree.branching, "nodes": nz.tree.n_nodes, "noise_mode": nz.mode,
            "servers": nz.servers if nz.mode != "central" else 0,
            "mse_counts": nz.mse_counts, "mse": nz.mse(self.n), "node_noise": nz.law.to_dict(),
            "epsilon_vs_server_seeing_output": nz.coalition_epsilon(),
            "delta": nz.delta,
        }


def deploy(values, thresholds, epsilon, *, backend: str = "fss", servers: int = 2,
           branching: int = 2, noise_mode: str | None = None, sensitivity: str = "exact",
           bounds=None, clip: bool = False, bits: int = 32, seed=None,
           record_views: bool = False, weights=None, session=None, runtime=None) -> Deployment:
    """Offline phase: parties encode, keys go to the servers, the servers draw node noise.

    ``noise_mode``: ``"each"`` (default for the server backends), ``"split"``,
    ``"mpc"`` (one DLap per node sampled inside MPC by the servers,
    :mod:`ustat.ecdf.node_noise`) or ``"central"`` (forced for backend
    ``"central"``); see :mod:`ustat.ecdf.tree`. ``bits``: the ring Z_2^l of shares and DCF outputs.
    ``weights``: per-party 0/1 weights (e.g. class labels: the ECDF of one
    class among all parties, hidden from the servers). ``session``: reuse an
    existing session (its parties, servers and network; e.g. the two class
    ECDFs of a ROC curve) instead of making one. ``runtime``: this process's
    :class:`mpc.run.runtime.Runtime` in a run across processes (the session is
    made with it; rows of ``values`` and ``weights`` of parties held
    elsewhere are ignored).
    """
    if backend not in BACKENDS:
        raise ValueError(f"backend must be one of {BACKENDS}, got {backend!r}")
    tau = check_thresholds(thresholds, bounds)
    x = check_values(values, bounds, clip)
    ranks = grid_rank(x, tau)
    tree = Tree(tau.size, branching)
    n = x.size
    if weights is not None:
        weights = np.asarray(weights)
        if weights.shape != (n,) or weights.dtype.kind not in "iub" or \
                (weights.size and (weights.min() < 0 or weights.max() > 1)):
            raise ValueError(f"weights must be {n} values in {{0, 1}}")
        weights = weights.astype(np.int64)
    if backend == "central":
        if runtime is not None or (session is not None and not session.single_process):
            raise ValueError("backend 'central' is a trusted curator holding every value: it "
                             "has no parties or servers to spread over processes")
        from mpc.arith.rng import as_rng
        g = as_rng(seed)        # a generator passed in draws fresh noise at every call
        rng = g.fresh("ecdf", "central-noise") if g is seed else g.derive("ecdf", "central-noise")
        noise = draw_noise(tree, epsilon, rng, mode="central", rule=sensitivity)
        return Deployment(tau, tree, noise, backend, n, None,
                          _Central(ranks, tree, noise, weights))
    if backend == "fss" and servers != 2:
        raise ValueError(f"backend 'fss' needs servers = 2, got {servers} (two-key DCF does not "
                         "extend to m > 2; use backend 'pointwise')")
    mode = noise_mode or "each"
    if mode == "central":
        raise ValueError("noise_mode 'central' needs backend 'central'")
    if n >= 1 << (bits - 2):
        raise ValueError(f"bits = {bits} is too small for n = {n} parties")
    if session is None:
        session = make_session(n, servers, bits=bits, seed=seed, record_views=record_views,
                               runtime=runtime)
    elif session.n_parties != n:
        raise ValueError(f"session has {session.n_parties} parties for {n} values")
    bits = session.ring.bits
    if mode == "mpc":
        from .node_noise import draw_noise_mpc
        noise = draw_noise_mpc(session, tree, epsilon, rule=sensitivity)
    else:
        rngs = [session.rng.derive("ecdf", "server-noise", s, int(session.rng.uint64()))
                for s in range(servers)]
        noise = draw_noise(tree, epsilon, rngs, servers=servers, mode=mode, rule=sensitivity)
    peak = noise_bound(noise) + n
    if peak >= 1 << (bits - 1):
        raise ValueError(f"bits = {bits}: noisy counts up to {peak} (n plus the noise on a path, "
                         f"exceeded with probability < 2^-40) do not fit in Z_2^{bits}; "
                         "use more bits")
    if backend == "fss":
        answerer = FSSServers.setup(session, ranks, tree, noise, weights)
    else:
        answerer = PointwiseServers(session, ranks, tree, noise, weights)
    return Deployment(tau, tree, noise, backend, n, session, answerer)


def noise_bound(noise: TreeNoise) -> int:
    """A public bound on |noise| of every point: (L + 1) copies k, with k exceeded by one node's
    DLap with probability below 2^-40 / (nodes x copies) (P(|X| >= k) <= 2 e^(-k / scale)).

    Public parameters only (no server knows the total noise): whether the noisy counts fit in
    the ring is decided before any is computed, the same in every process.
    """
    law = noise.law
    if law.noiseless:
        return 0
    c, nodes = int(law.copies), noise.tree.n_nodes
    k = math.ceil(float(law.scale) * (40 * math.log(2) + math.log(2 * nodes * c)))
    return (noise.tree.levels + 1) * c * k


@dataclass
class ECDFRelease:
    """Noisy counts at the thresholds, with the accounting and the traffic of the release."""

    thresholds: np.ndarray
    counts: np.ndarray
    n: int
    backend: str
    account: dict
    communication: dict | None = None
    insecure_seed: bool = False
    exact: np.ndarray | None = field(default=None, repr=False)
    released: bool = True           # False in a process of a run where the analyst is not
    processes: int = 1              # processes the run's participants were spread over
    process_costs: list | None = None   # per process: rank, holds, wire counts, seconds
    costs: object = field(default=None, repr=False)   # mpc.comm.costs.Costs (None: no session)

    @property
    def values(self) -> np.ndarray:
        """The noisy ECDF F^(tau_k) = noisy count / n."""
        return self.counts / float(self.n)

    @property
    def epsilon(self) -> float:
        return self.account["epsilon"]

    @property
    def tree(self) -> Tree:
        return Tree(self.thresholds.size, self.account["branching"])

    @property
    def noise_law(self) -> NodeNoiseLaw:
        """The node-noise law the release carries (``account["node_noise"]``)."""
        return NodeNoiseLaw.from_dict(self.account.get("node_noise"))

    def intervals(self, confidence: float = 0.95) -> dict:
        """Pointwise intervals and a simultaneous band for the data's ECDF
        (:func:`ustat.ecdf.intervals.ecdf_intervals`)."""
        return ecdf_intervals(self.counts, self.n, self.noise_law, self.tree, confidence)

    def quantile_intervals(self, q, confidence: float = 0.95) -> dict:
        """CIs for the data's grid quantiles at levels ``q``
        (:func:`ustat.ecdf.intervals.quantile_intervals`)."""
        from .quantiles import check_levels
        return quantile_intervals(self.counts, self.thresholds, self.n, self.noise_law,
                                  self.tree, check_levels(q), confidence)


def release(values, thresholds, epsilon, *, evaluate: bool = False, processes=None,
            runtime=None, timeout=None, **kwargs) -> ECDFRelease:
    """The noisy ECDF at every threshold: :func:`deploy`, then one batch of N queries.

    ``evaluate=True`` also stores the exact counts (reads the data in the
    clear: evaluation only). ``processes``: spread the parties, the servers
    and the analyst over this many processes on this machine (``timeout``:
    seconds an exchange may wait); ``runtime``: this process's runtime in
    such a run (see the module docstring). Other keyword arguments go to
    :func:`deploy`.
    """
    if processes is not None and runtime is None:
        from .processes import across
        return across("release", {"values": values, "weights": kwargs.pop("weights", None)},
                      dict(thresholds=thresholds, epsilon=epsilon, evaluate=evaluate, **kwargs),
                      processes=processes, timeout=timeout)
    if evaluate and runtime is not None:
        raise ValueError("evaluate reads every value in the clear: not in a run across processes")
    dep = deploy(values, thresholds, epsilon, runtime=runtime, **kwargs)
    counts = dep.query(np.arange(dep.tree.n_points))
    exact = None
    if evaluate:
        x = check_values(values, kwargs.get("bounds"), kwargs.get("clip", False))
        exact = exact_counts(grid_rank(x, dep.thresholds), dep.tree.n_points, kwargs.get("weights"))
    insecure = (bool(dep.session.insecure) if dep.session is not None
                else kwargs.get("seed") is not None)
    released = dep.released
    return ECDFRelease(dep.thresholds, counts if released else np.full(counts.size, np.nan),
                       dep.n, dep.backend, dep.account(), dep.communication(), insecure, exact,
                       released, dep.processes, costs=dep.costs())

