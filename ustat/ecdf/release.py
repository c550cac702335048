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

Where it runs: :func:`release` builds one SPMD program (:func:`ecdf_program`,
a :class:`ustat.executors.Program`) and runs it on an executor: the
simulator (default), ``LocalProcesses(P)`` (the parties, the servers and the
analyst spread over P processes on this machine) or a deployment's
participant. Each process holds its own parties' values only (the others'
are a public filler: the lower bound, or 0), every message crosses as bytes,
each server draws its noise in its own process, and the release is the
analyst's (``released``); a seeded spec releases the same bits under every
executor.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

import fss

from ..executors import Executor, Place, Program, Simulator
from ..specs.ecdf import BACKENDS, ECDFSpec, QuantileSpec, check_levels
from .intervals import ecdf_intervals, quantile_intervals
from .noise_law import NodeNoiseLaw
from .pointwise import PointwiseServers
from .servers import FSSServers, check_query, make_session, roles_of
from .thresholds import grid, grid_rank
from .tree import Tree, TreeNoise, best_branching, draw_noise

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

    from mpc.comm.costs import Costs
    from mpc.session import Session

    from ..specs.ecdf import ECDFDesign, HLSpec, ROCSpec

__all__ = [
    "BACKENDS",
    "Deployment",
    "ECDFRelease",
    "branching_for",
    "check_values",
    "deploy",
    "ecdf_program",
    "exact_counts",
    "family_program",
    "release",
    "session_for",
]


def exact_counts(ranks: ArrayLike, n_points: int, weights: ArrayLike | None = None) -> np.ndarray:
    """sum_i w_i 1[x_i <= tau_k] for k = 0..N-1 from the grid ranks (int64; w = 1 by default)."""
    r = np.asarray(ranks, np.int64)
    w = None if weights is None else np.asarray(weights, np.int64)
    c = np.bincount(r, weights=w, minlength=n_points + 1)
    return np.cumsum(c.astype(np.int64))[:n_points]


def check_values(values: ArrayLike, bounds: tuple[float, float] | None = None, clip: bool = False,
                 name: str = "values") -> np.ndarray:
    """float64 (n,) values: finite, n >= 1, inside ``bounds`` unless ``clip``."""
    try:
        x = np.array(values, dtype=np.float64).reshape(-1)
    except (TypeError, ValueError):
        raise TypeError(f"{name} must be numbers") from None
    if x.size == 0:
        raise ValueError(f"{name}: no records (n = 0)")
    bad = np.flatnonzero(~np.isfinite(x))
    if bad.size:
        raise ValueError(f"{name}: row {bad[0] + 1} is NaN or infinite")
    if bounds is not None:
        lo, hi = (float(b) for b in bounds)
        out = (x < lo) | (x > hi)
        if out.any() and not clip:
            raise ValueError(f"{name}: row {int(np.flatnonzero(out)[0]) + 1} is outside the "
                             f"bounds [{lo}, {hi}]; widen the bounds or clip")
        x = np.clip(x, lo, hi)
    return x


class _Central:
    """A trusted curator: exact counts plus the node noise (no network)."""

    def __init__(self, ranks, tree: Tree, noise: TreeNoise, weights=None):
        self.counts = exact_counts(ranks, tree.n_points, weights)
        self.noise = noise

    def query(self, idx: ArrayLike) -> np.ndarray:
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
    session: Any                    # mpc.session.Session (None: the central backend)
    answerer: Any                   # FSSServers, PointwiseServers or the curator
    queries: int = 0

    def query(self, idx: ArrayLike) -> np.ndarray:
        """Noisy counts at threshold indices ``idx`` (int64); no extra epsilon."""
        idx = np.asarray(idx, dtype=np.int64).reshape(-1)
        self.queries += idx.size
        out = self.answerer.query(idx)
        if self.backend == "pointwise":     # its first answer may leave out lost parties
            self.n = self.answerer.counted
        return out

    def communication(self) -> dict | None:
        return None if self.session is None else self.session.net.report()

    def costs(self) -> Costs | None:
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
        } | self.key_check() | self.dropouts()

    def dropouts(self) -> dict:
        """``{"dropouts": {"parties_lost", "step"}}`` when parties were left out because their
        keys did not reach both servers (:mod:`ustat.ecdf.dropouts`), else empty."""
        lost = getattr(self.answerer, "lost", None)
        return {"dropouts": dict(lost)} if lost and lost["parties_lost"] else {}

    def key_check(self) -> dict:
        """``{"keys_verified": True, "keys_dropped": count}`` when the servers checked the
        parties' keys (:mod:`ustat.ecdf.keycheck`), else empty."""
        dropped = getattr(self.answerer, "dropped", None)
        return {} if dropped is None else {"keys_verified": True, "keys_dropped": int(dropped)}


def branching_for(design: ECDFDesign, n_points: int, epsilon: float) -> int:
    """The tree's branching factor of a spec's design: its int, or for ``"auto"`` the one
    with the smallest per-point MSE at N = ``n_points`` and ``epsilon`` (1 when infinite)."""
    if design.branching == "auto":
        return best_branching(n_points, epsilon if math.isfinite(epsilon) else 1.0)
    return int(design.branching)


def deploy(values: ArrayLike, spec: ECDFSpec | QuantileSpec, *, weights: ArrayLike | None = None,
           session: Session | None = None, record_views: bool = False) -> Deployment:
    """Offline phase: parties encode, keys go to the servers, the servers draw node noise.

    ``spec``: an :class:`~ustat.specs.ECDFSpec` (or a :class:`~ustat.specs.QuantileSpec`):
    the grid, epsilon, the noise mode (``"each"`` by default for the server backends,
    ``"split"``, ``"mpc"``: one DLap per node sampled inside MPC by the servers,
    :mod:`ustat.ecdf.node_noise`; the central backend draws one noise per node, see
    :mod:`ustat.ecdf.tree`), the ring Z_2^l of shares and DCF outputs, the backend.
    ``weights``: per-party 0/1 weights (e.g. class labels: the ECDF of one class among all
    parties, hidden from the servers). ``session``: an existing session (its parties,
    servers, ring and network; e.g. the two class ECDFs of a ROC curve share one, and a
    process of a run across processes makes its own with its runtime,
    :func:`session_for`) instead of a new one of this process; rows of ``values`` and
    ``weights`` of parties held by another process are then never read.
    ``record_views``: a new session records what every participant receives (tests).
    With ``spec.execution.verify_keys`` the servers check the keys and drop the malformed
    (:mod:`ustat.ecdf.keycheck`): the deployment's ``n`` is then the parties kept, the
    denominator of the ECDF and the quantiles' target counts; so it is in a deployment that
    lost party hosts before their keys reached both servers (:mod:`ustat.ecdf.dropouts`:
    ``account()["dropouts"]``; the node noise is drawn before and does not depend on n).
    """
    if not isinstance(spec, (ECDFSpec, QuantileSpec)):
        raise TypeError(f"spec must be a ustat.specs.ECDFSpec, got {type(spec).__name__} (e.g. "
                        "ECDFSpec.of(thresholds=tau, epsilon=1.0))")
    pr, prec, ex = spec.privacy, spec.precision, spec.execution
    bounds, backend, epsilon = prec.bounds, ex.backend, pr.epsilon
    tau = grid(spec.design.thresholds, spec.design.grid, bounds)
    x = check_values(values, bounds, prec.clip)
    ranks = grid_rank(x, tau)
    tree = Tree(tau.size, branching_for(spec.design, tau.size, epsilon))
    n = x.size
    if weights is not None:
        weights = np.asarray(weights)
        if weights.shape != (n,) or weights.dtype.kind not in "iub" or \
                (weights.size and (weights.min() < 0 or weights.max() > 1)):
            raise ValueError(f"weights must be {n} values in {{0, 1}}")
        weights = weights.astype(np.int64)
    if backend == "central":
        if session is not None and not session.single_process:
            raise ValueError("backend 'central' is a trusted curator holding every value: it "
                             "has no parties or servers to spread over processes")
        from mpc.arith.rng import as_rng
        rng = as_rng(ex.seed).derive("ecdf", "central-noise")
        noise = draw_noise(tree, epsilon, rng, mode="central", rule=pr.sensitivity)
        return Deployment(tau, tree, noise, backend, n, None,
                          _Central(ranks, tree, noise, weights))
    servers, bits = ex.servers, prec.bits
    mode = pr.noise_mode or "each"
    if session is None:
        session = make_session(n, servers, bits=bits, seed=ex.seed, record_views=record_views)
    elif session.n_parties != n:
        raise ValueError(f"session has {session.n_parties} parties for {n} values")
    bits = session.ring.bits
    if n >= 1 << (bits - 2):
        raise ValueError(f"bits = {bits} is too small for n = {n} parties")
    if mode == "mpc":
        from .node_noise import draw_noise_mpc
        noise = draw_noise_mpc(session, tree, epsilon, rule=pr.sensitivity)
    else:
        rngs = [session.rng.derive("ecdf", "server-noise", s, int(session.rng.uint64()))
                for s in range(servers)]
        noise = draw_noise(tree, epsilon, rngs, servers=servers, mode=mode, rule=pr.sensitivity)
    peak = noise_bound(noise) + n
    if peak >= 1 << (bits - 1):
        raise ValueError(f"bits = {bits}: noisy counts up to {peak} (n plus the noise on a path, "
                         f"exceeded with probability < 2^-40) do not fit in Z_2^{bits}; "
                         "use more bits")
    answerer: FSSServers | PointwiseServers
    if backend == "fss":
        answerer = FSSServers.setup(session, ranks, tree, noise, weights,
                                    verify=ex.verify_keys)
        # the parties counted: those both servers hold (ustat.ecdf.dropouts) less the keys that
        # failed the check (a drop says nothing of honest ones)
        n = answerer.counted
    else:
        answerer = PointwiseServers(session, ranks, tree, noise, weights)
        n = answerer.counted            # less the parties whose hosts never joined
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
    assert law.scale is not None                        # not noiseless
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
    spec: dict = field(default_factory=dict)    # the spec it ran (ECDFSpec.from_dict)
    smoothed: np.ndarray | None = None  # the smoothed ECDF (spec.smooth), else None

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

    def _level(self, confidence: float | None) -> float:
        return float(self.spec.get("confidence", 0.95)) if confidence is None else confidence

    def intervals(self, confidence: float | None = None) -> dict:
        """Pointwise intervals and a simultaneous band for the data's ECDF
        (:func:`ustat.ecdf.intervals.ecdf_intervals`) at ``confidence`` (the spec's level
        by default)."""
        return ecdf_intervals(self.counts, self.n, self.noise_law, self.tree,
                              self._level(confidence))

    def quantile_intervals(self, q: ArrayLike, confidence: float | None = None) -> dict:
        """CIs for the data's grid quantiles at levels ``q``
        (:func:`ustat.ecdf.intervals.quantile_intervals`; the spec's level by default)."""
        return quantile_intervals(self.counts, self.thresholds, self.n, self.noise_law,
                                  self.tree, check_levels(q), self._level(confidence))


def release(values: ArrayLike, spec: ECDFSpec, executor: Executor | None = None, *,
            weights: ArrayLike | None = None, evaluate: bool = False,
            session: Session | None = None, record_views: bool = False) -> ECDFRelease:
    """The noisy ECDF at every threshold of ``spec`` (an :class:`~ustat.specs.ECDFSpec`):
    :func:`deploy`, then one batch of N queries, then ``spec.smooth`` (post-processing).

    ``executor``: where it runs (:mod:`ustat.executors`; default the simulator;
    ``LocalProcesses(P)``: the parties, the servers and the analyst in P processes on this
    machine, the analyst's process releasing). ``weights``: per-party 0/1 weights (as
    :func:`deploy`). ``evaluate=True`` also stores the exact counts (reads the data in the
    clear: evaluation only, in this process). ``session``: an existing session of this
    process (as :func:`deploy`). ``record_views``: as :func:`deploy`.
    """
    program = ecdf_program(values, spec, weights=weights, evaluate=evaluate, session=session,
                           record_views=record_views)
    return (Simulator() if executor is None else executor).run(program)


def ecdf_program(values: ArrayLike, spec: ECDFSpec, *, weights: ArrayLike | None = None,
                 evaluate: bool = False, session: Session | None = None,
                 record_views: bool = False) -> Program:
    """:func:`release` as one SPMD program (:class:`ustat.executors.Program`): ``values``
    (and ``weights``) are the parties' private rows."""
    if not isinstance(spec, ECDFSpec):
        raise TypeError(f"spec must be a ustat.specs.ECDFSpec, got {type(spec).__name__} (e.g. "
                        "ECDFSpec.of(thresholds=tau, epsilon=1.0))")
    options = {"evaluate": evaluate, "session": session, "record_views": record_views}
    return column_program("ECDF", _release_main, spec, values, weights, options)


def column_program(name: str, main: Callable[..., Any], spec: ECDFSpec | QuantileSpec,
                   values: ArrayLike, weights: ArrayLike | None, options: dict) -> Program:
    """The program of a statistic of one column of values (the ECDF, its quantiles): the
    parties' rows are the values (checked against the spec's bounds) and their weights;
    ``options``: the call's own (evaluate, session, record_views)."""
    x = check_values(values, spec.precision.bounds, spec.precision.clip)
    rows = {"values": (values, _filler(spec))}
    if weights is not None:
        rows["weights"] = (weights, 0)
    return family_program(name, main, spec, options, x.size, rows,
                          _local_only(spec, options["session"], options["evaluate"]))


def _release_main(place: Place, spec: ECDFSpec, options: dict, values, weights=None):
    """The release in one process (:func:`release`)."""
    evaluate = options["evaluate"]
    session = session_for(place, spec, options, np.asarray(values).reshape(-1).size)
    dep = deploy(values, spec, weights=weights, session=session)
    counts = dep.query(np.arange(dep.tree.n_points))
    return _curve(dep, spec, counts, values, weights, evaluate)


def _curve(dep: Deployment, spec, counts: np.ndarray, values, weights, evaluate: bool):
    """The :class:`ECDFRelease` of ``counts`` (all N points of ``dep``), smoothed as the spec
    says in the analyst's process, with the exact counts when ``evaluate``."""
    prec = spec.precision
    exact = None
    if evaluate:
        x = check_values(values, prec.bounds, prec.clip)
        exact = exact_counts(grid_rank(x, dep.thresholds), dep.tree.n_points, weights)
    insecure = (bool(dep.session.insecure) if dep.session is not None
                else spec.execution.seed is not None)
    released = dep.released
    out = ECDFRelease(dep.thresholds, counts if released else np.full(counts.size, np.nan),
                      dep.n, dep.backend, dep.account(), dep.communication(), insecure, exact,
                      released, dep.processes, costs=dep.costs(), spec=spec.to_dict())
    if spec.smooth is not None and released:
        from .smoothing import smooth
        out.smoothed = smooth(out.values, dep.tree, spec.smooth)
    return out


# -- what the statistics of the family share as programs ----------------------------------------
def family_program(name: str, main: Callable[..., Any],
                   spec: ECDFSpec | QuantileSpec | ROCSpec | HLSpec, options: dict, n: int,
                   rows: dict, local_only: str | None) -> Program:
    """The program of a statistic of the ECDF family: the parties, the servers
    server0..server{m-1} and the analyst (the session's dealer, which the family never uses,
    shares the analyst's process); ``main(place, spec, options, **rows)``."""
    return Program(name=name, main=main, n=int(n), roles=roles_of(spec.execution.servers)
                   + ("dealer",), args=(spec, options), rows=rows, idle={"dealer": "analyst"},
                   warm_up=(fss.warm_up,), local_only=local_only)


def session_for(place: Place, spec: ECDFSpec | QuantileSpec | ROCSpec | HLSpec, options: dict,
                n: int) -> Session | None:
    """The session a program runs on: the one given (``options["session"]``), else a new one
    with this process's runtime (None for the central backend, which has none)."""
    session = options.get("session")
    if options.get("evaluate") and place.runtime is not None:
        raise ValueError("evaluate reads every record in the clear: not in a run across "
                         "processes")
    if spec.execution.backend == "central":
        if session is not None:
            raise ValueError("backend 'central' is a trusted curator holding every value: it "
                             "has no parties, servers or session")
        return None
    if session is not None:
        return session
    bits = spec.precision.bits
    if n >= 1 << (bits - 2):
        raise ValueError(f"bits = {bits} is too small for n = {n} parties")
    return make_session(n, spec.execution.servers, bits=bits, seed=spec.execution.seed,
                        record_views=options.get("record_views", False), runtime=place.runtime)


def _filler(spec) -> float:
    """The public value of the rows a process does not hold: the lower bound, or 0."""
    bounds = getattr(spec.precision, "bounds", None)
    return 0.0 if bounds is None else float(bounds[0])


def _local_only(spec, session, evaluate: bool) -> str | None:
    """Why a program cannot run across processes (None: it can)."""
    if session is not None:
        return "each process of a run makes its own session: do not pass session="
    if evaluate:
        return "evaluate reads every value in the clear"
    if spec.execution.backend == "central":
        return ("backend 'central' is a trusted curator holding every value: it has no "
                "parties or servers to spread over processes")
    return None
