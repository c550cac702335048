"""Private Hosmer-Lemeshow calibration test (Barczewski, Mawass, Ramon, Section 5.2).

Algorithm 2 with the accounting of Theorem 5.1. Every party holds a
predicted probability p_i in [0, 1] and a 0/1 label y_i.

  1. The tree gets ``TREE_SHARE`` (1/4) of epsilon, the sums the rest, as
     eps' = 3 eps / 16 per unit of their L1 sensitivity 4 (the paper's
     eps' = eps / (L + 9) for both, with ``sensitivity="paper"``). The group
     edges only need to split the records roughly evenly (any edges make a
     valid test: they depend on p alone), the sums carry the test's power.
  2. Group edges t_q = F^^-1(q / Q), q = 1..Q-1, by Algorithm 1 on the
     tree-noise ECDF of p (node scale Delta / (eps / 4): eps / 4-DP, whatever the
     number of searches) on a grid of N thresholds in [0, 1]; t_0 = 0, t_Q = 1
     (sorted: on a noisy ECDF the searches for increasing levels need not
     return increasing edges). The analyst sends the edges' grid indices to
     every party (1 round, n (Q - 1) index_bits bits), so that each party
     finds its own group.
  3. Groups g_q = {i : t_{q-1} < p_i <= t_q} (the first group includes 0):
     half-open so that each record is in exactly one group. The 4 Q sums
     E1_q = sum p_i, E0_q = sum (1 - p_i), O1_q = sum y_i, O0_q = sum (1 - y_i)
     over each group are computed by secure aggregation: each party sends
     additive shares of its (4, Q) contribution vector (zero outside its own
     group, so the servers do not learn the group) to the m servers, which
     add their parts of a discrete Laplace noise of scale 1/eps' per sum
     (E sums in fixed point with 2^c units, scale 2^c / eps') and open to the
     analyst. A record adds (p, 1 - p, y, 1 - y) to one group, a vector of
     L1 norm 2, so replacing it changes the 4Q sums by at most 4 in L1: they
     cost 4 eps' together (the paper counts 8 sums changing by <= 1: 8 eps',
     twice the noise needed; ``sensitivity="paper"`` keeps it).
     With ``verify_keys`` (malicious parties) the servers first check each
     vector on its shares (one group, a 0/1 label, p on the 2^-c grid,
     consistent pairs: :mod:`ustat.ecdf.hl_check`, 64-bit shares, the upload
     plus 2 rounds between the servers) and sum only those that pass; the
     account reports ``inputs_dropped``. In a deployment whose party hosts may
     vanish, the parties whose sum shares did not reach every server are left
     out of the sums (step ``sums``), the noise unchanged: privacy argument
     and cost in :mod:`ustat.ecdf.dropouts`.
  4. The noise-aware statistic T and its p-value under a null that includes
     the DP noise (:mod:`ustat.ecdf.hl_test`); the test refuses before
     anything is computed when the noise dominates (public parameters only).
Total: eps / 4 + 4 eps' = eps (Theorem 5.1's accounting, exact sensitivities).

Cost: the ECDF release of :func:`ustat.ecdf.release.deploy` (its backend)
and ceil(log2 N) batches of Q - 1 queries, the edges to the parties (1
round), then 1 aggregation: m n 4 Q l bits (parties to servers) + m 4 Q l
(to the analyst), 2 rounds (with ``verify_keys``: 64-bit shares with a witness and
triples, 2 more rounds between the servers and 1 to the analyst, :mod:`ustat.ecdf.hl_check`).
Where it runs: as :mod:`ustat.ecdf.release` (any
executor, :func:`hl_program`); only the analyst's process computes the
statistic and its p-value. Threat model: as the chosen backend (semi-honest,
non-colluding servers); ``noise_mode`` as there; malicious parties with
``verify_keys`` (their keys and their step-3 vectors are checked).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from fractions import Fraction
from typing import TYPE_CHECKING, Any

import numpy as np

from mpc.arith.rng import as_rng
from mpc.arith.sharing import additive_share
from noise.samplers import as_fraction, discrete_laplace, polya, round_scale_up

from ..executors import Executor, Place, Program, Simulator
from ..specs.ecdf import ECDFDesign, ECDFExecution, ECDFPrecision, ECDFPrivacy, ECDFSpec, HLSpec
from . import dropouts, hl_check
from .hl_test import chi2_sf, detectable_miscalibration, hl_pvalue, hl_statistic
from .noise_law import NodeNoiseLaw
from .quantiles import live_search, quantiles, search
from .release import _local_only, check_values, deploy, exact_counts, family_program, session_for
from .servers import index_bits, open_to_analyst, server_ids
from .thresholds import grid_rank, regular
from .tree import Tree

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

    from mpc.session import Session

__all__ = [
    "FRAC_BITS",
    "HLResult",
    "chi2_sf",
    "hl_program",
    "hosmer_lemeshow",
    "private_hosmer_lemeshow",
]

#: Share of epsilon for the group edges (the tree); the rest goes to the 4Q sums. Any edges give
#: a valid test (they depend on p only), so the edges need little accuracy and the sums most.
TREE_SHARE = 0.25

#: Fixed-point fractional bits of the expected counts E (rounding <= n 2^-(c+1)).
FRAC_BITS = 16


def hosmer_lemeshow(E1: ArrayLike, E0: ArrayLike, O1: ArrayLike, O0: ArrayLike) -> float:
    """H = sum (O1 - E1)^2 / E1 + (O0 - E0)^2 / E0 over the groups."""
    E1, E0, O1, O0 = (np.asarray(v, np.float64) for v in (E1, E0, O1, O0))
    return float(np.sum((O1 - E1) ** 2 / E1 + (O0 - E0) ** 2 / E0))


@dataclass
class HLResult:
    """The private HL statistic, its p-value, the group table and the accounting.

    ``statistic`` is the noise-aware T of :mod:`ustat.ecdf.hl_test` (the
    classical HL statistic when epsilon = inf), ``p_value`` its tail under
    ``null`` with the DP noise, ``df`` the chi-square degrees of freedom of
    the noise-free null, ``clamped`` the number of noisy E below 0 (taken as
    0 in the variances).
    """

    statistic: float
    p_value: float
    groups: int
    edges: np.ndarray
    table: dict
    account: dict
    communication: dict | None = None
    clamped: int = 0
    exact: dict | None = field(default=None, repr=False)
    df: int = 0
    null: str = "calibrated"
    method: str = ""
    detectable_miscalibration: float = 0.0
    noise_sd: float = 0.0
    released: bool = True               # False in a process of a run without the analyst
    processes: int = 1
    process_costs: list | None = None   # per process: rank, holds, wire counts, seconds
    costs: object = field(default=None, repr=False)   # mpc.comm.costs.Costs of the run
    spec: dict = field(default_factory=dict)    # the HLSpec it ran (HLSpec.from_dict)


def _group_sums(p, y, edges, Q):
    g = np.clip(np.searchsorted(edges[1:-1], p, side="left"), 0, Q - 1)
    return g, np.stack([np.bincount(g, p, Q), np.bincount(g, 1 - p, Q),
                        np.bincount(g, y, Q), np.bincount(g, 1 - y, Q)])


def _edges(dep, session, p, y, tau, Q):
    """Step 2: (edges, each party's group, exact sums for the central backend).

    With servers, the analyst searches the live deployment and sends the
    edges' grid indices to every party (phase ``hl edges``, 1 round); party
    i places itself from the row it received.
    """
    levels = np.arange(1, Q) / Q
    if session is None:
        edges = np.concatenate([[0.0], np.sort(quantiles(dep, levels)), [1.0]])
        g, exact = _group_sums(p, y, edges, Q)
        return edges, g, exact
    idx = np.sort(live_search(dep, levels))
    net = session.net
    told = np.tile(idx, (p.size, 1))               # row i: what party i receives
    with net.phase("hl edges"), net.round():
        net.send(net.role("analyst"), net.parties, told, index_bits(tau.size))
    g = np.minimum((tau[told] < p[:, None]).sum(axis=1), Q - 1)
    return np.concatenate([[0.0], tau[idx], [1.0]]), g, None


def _exact(p, y, tau, Q, df) -> dict:
    """The noise-free pipeline: exact grid quantiles as edges, exact sums (evaluation)."""
    counts = exact_counts(grid_rank(p, tau), tau.size)
    idx = search(lambda i: counts[i], tau.size, p.size * (np.arange(1, Q) / Q))
    edges = np.concatenate([[0.0], tau[idx], [1.0]])
    _, (e1, e0, o1, o0) = _group_sums(p, y, edges, Q)
    H = hosmer_lemeshow(e1, e0, o1, o0)
    return {"statistic": H, "p_value": chi2_sf(H, df), "edges": edges.tolist(),
            "table": {"E1": e1.tolist(), "E0": e0.tolist(), "O1": o1.tolist(), "O0": o0.tolist()}}


def _contributions(p, y, g, Q):
    """The parties' side of step 3: each party's (4, Q) vector (p 2^c, 2^c - p 2^c, y, 1 - y in
    its group g, 0 elsewhere; int64 (n, 4, Q)) and its fixed-point p (int64 (n,))."""
    one, n = 1 << FRAC_BITS, p.size
    pe = np.rint(p * one).astype(np.int64)
    contrib = np.zeros((n, 4, Q), dtype=np.int64)
    rows = np.arange(n)
    contrib[rows, 0, g], contrib[rows, 1, g] = pe, one - pe
    contrib[rows, 2, g], contrib[rows, 3, g] = y, 1 - y
    return contrib, pe


def _aggregate(session, p, y, g, Q, scales, mode, eps_sums=None, verify=False, earlier=None):
    """Step 3: shares of the (4, Q) contributions to the servers, noise parts, open. With
    ``verify`` the servers first check every vector (:mod:`ustat.ecdf.hl_check`) and sum the
    kept ones; in a run that may lose party hosts the servers sum only the parties whose
    shares reached every server (:func:`ustat.ecdf.dropouts.agree_kept`, or within the check:
    :func:`ustat.ecdf.hl_check.verified_shares`; ``earlier``: the tree's ``dropouts``).
    Returns (the opened (4, Q) sums, the noise's delta, the dropped count or None, the
    release's ``dropouts`` or None)."""
    ring, net = session.ring, session.net
    (scale_e, scale_o), sid = scales, server_ids(session)
    m, n = sid.size, p.size
    contrib, pe = _contributions(p, y, g, Q)
    rng = session.rng.derive("ecdf", "hl-shares", int(session.rng.uint64()))
    keep, dropped, lost = np.ones(n, dtype=bool), None, None
    vanish = dropouts.may_vanish(session)
    if verify:
        sh, keep, dropped, count = hl_check.verified_shares(session, contrib, pe, FRAC_BITS, rng,
                                                            vanish)
        if vanish:
            lost = dropouts.outcome(session, count, "sums", earlier)
    else:
        sh = additive_share(ring, ring.element(contrib.reshape(n, 4 * Q)), m, rng)  # (m, n, 4Q)
    sums = np.empty((m, 4 * Q), dtype=np.uint64)
    parts, delta = None, 0.0
    if mode == "mpc" and scale_o is not None:       # the servers sample the 4Q noises in MPC
        from .node_noise import sum_noise_mpc
        parts, delta = sum_noise_mpc(session, [(scale_e, 2 * Q), (scale_o, 2 * Q)], eps_sums)
    with net.phase("hl sums"):
        if not verify:                              # verified: uploaded with the check
            with net.round():
                for j in range(m):                  # loop over the m servers
                    net.send(net.parties, int(sid[j]), sh[j], ring.bits)
    if vanish and not verify:                       # the servers agree whose shares they hold
        keep, lost = dropouts.agree_kept(session, sid, [dropouts.reached(session)] * m,
                                         "hl sums held", "sums", earlier)
    with net.phase("hl sums"):
        for j in range(m):
            if parts is not None:
                noise = parts[j]
            else:
                nrng = session.rng.derive("ecdf", "hl-noise", j, int(session.rng.uint64()))
                noise = np.concatenate([_noise_part(scale_e, 2 * Q, m, mode, nrng),
                                        _noise_part(scale_o, 2 * Q, m, mode, nrng)])
            sums[j] = ring.add(ring.sum(sh[j][keep], axis=0), ring.element(noise))
        opened = open_to_analyst(session, sums).reshape(4, Q).astype(np.float64)
    opened[:2] /= 1 << FRAC_BITS
    return opened, delta, dropped, lost


def _noise_part(scale, size, m, mode, rng):
    if scale is None:
        return np.zeros(size, dtype=np.int64)
    if mode == "split":
        d = polya(Fraction(1, m), scale, (2, size), rng)
        return d[0] - d[1]
    return discrete_laplace(scale, (size,), rng)


@dataclass(frozen=True)
class _Plan:
    """The public plan of a Hosmer-Lemeshow run (n, the spec): the split of epsilon, the
    noise laws of the sums and the test's power, before anything is computed."""

    n: int
    tau: np.ndarray
    delta: int                  # the tree's node sensitivity
    sums_sens: int              # the sums' L1 sensitivity (4; the paper's 8)
    eps_tree: float             # what the tree (the group edges) is asked to spend
    eps1: float                 # epsilon' per unit of the sums' sensitivity
    df: int
    scale_o: Any                # the O sums' noise scale (a Fraction; None: no noise)
    scale_e: Any                # the E sums' (units of 2^-FRAC_BITS)
    o_law: NodeNoiseLaw
    e_law: NodeNoiseLaw
    noise_var: float
    detect: float


def _plan(spec: HLSpec, n: int) -> _Plan:
    """The plan of ``spec`` for n records; ValueError naming ``groups`` when Q does not fit
    n, or when the noise dominates (``max_detectable``, public parameters only)."""
    pr, ex, design = spec.privacy, spec.execution, spec.design
    Q, N = design.groups, design.n_thresholds
    Qmax = min(N, n // 10)
    if not 3 <= Q <= Qmax:
        raise ValueError(f"groups must be in 3..{Qmax} (df = Q - 2 >= 1, at most one group per "
                         f"threshold and 10 records per group on average), got {Q}")
    tau = regular((0.0, 1.0), n=N)
    eps = pr.epsilon
    delta = Tree(tau.size).sensitivity(pr.sensitivity)
    sums_sens = 8 if pr.sensitivity == "paper" else 4
    if pr.sensitivity == "paper":            # the paper's split: eps' per unit of sensitivity
        eps1 = eps / (delta + sums_sens)
        eps_tree_req = eps1 * delta
    else:                                    # the edges only group; the sums carry the test
        eps_tree_req = TREE_SHARE * eps
        eps1 = (eps - eps_tree_req) / sums_sens
    df = Q if spec.null == "calibrated" else Q - 2
    scale_o = None if math.isinf(eps) else round_scale_up(1 / as_fraction(eps1, "epsilon'"))
    scale_e = None if scale_o is None else round_scale_up((1 << FRAC_BITS) * scale_o)
    copies = ex.servers if (ex.backend != "central" and (pr.noise_mode or "each") == "each") \
        else 1
    o_law, e_law = NodeNoiseLaw(scale_o, copies), NodeNoiseLaw(scale_e, copies)
    noise_var = (o_law.variance + e_law.variance / float(1 << FRAC_BITS) ** 2) / 2.0
    detect = detectable_miscalibration(n, Q, noise_var, df)
    if detect > spec.max_detectable:
        raise ValueError(
            f"hl: the DP noise dominates at epsilon {eps:g} with n = {n} and {Q} groups: the "
            f"noise sd per group ({math.sqrt(noise_var):.3g} records) would hide any "
            f"miscalibration below {detect:.2f} in probability (half the time); refusing "
            "rather than report a test without power. Use a larger epsilon, more records or "
            "fewer groups (--groups)")
    return _Plan(n, tau, delta, sums_sens, eps_tree_req if math.isfinite(eps) else eps, eps1,
                 df, scale_o, scale_e, o_law, e_law, noise_var, detect)


def _inputs(probs, labels) -> tuple[np.ndarray, np.ndarray]:
    p = check_values(probs, (0.0, 1.0), name="probabilities (must lie in [0, 1])")
    y = np.asarray(labels)
    if y.shape != p.shape or y.dtype.kind not in "biu" or (y.size and (y.min() < 0 or y.max() > 1)):
        raise ValueError("labels must be 0/1 (one per probability)")
    return p, y.astype(np.int64)    # both classes present is not checked in the clear


def private_hosmer_lemeshow(probs: ArrayLike, labels: ArrayLike, spec: HLSpec,
                            executor: Executor | None = None, *, evaluate: bool = False,
                            session: Session | None = None) -> HLResult:
    """Algorithm 2: the epsilon-DP HL statistic of predicted ``probs`` against 0/1 ``labels``.

    ``spec``: an :class:`~ustat.specs.HLSpec`: epsilon, ``groups`` Q in 3..min(N, n // 10)
    (at least 10 records per group on average; df = Q - 2 >= 1), ``n_thresholds`` N (the
    grid on [0, 1] for the group edges), the backend (``"central"`` computes the sums in
    the clear: the reference), ``null`` (``"calibrated"``: y ~ Bernoulli(p), df Q;
    ``"fitted"``: p fitted on these records, df Q - 2) and ``max_detectable`` (refuse,
    ValueError before anything is computed, when the miscalibration detected half the
    time exceeds it; inf: never; :mod:`ustat.ecdf.hl_test`). ``executor``: where it runs
    (as :func:`ustat.ecdf.release.release`). ``evaluate``: also the noise-free pipeline
    (in the clear, this process only). ``session``: the servers' session to use (from
    :func:`ustat.ecdf.servers.make_session`; the spec's ``bits`` are then its ring's).
    """
    program = hl_program(probs, labels, spec, evaluate=evaluate, session=session)
    return (Simulator() if executor is None else executor).run(program)


def hl_program(probs: ArrayLike, labels: ArrayLike, spec: HLSpec, *, evaluate: bool = False,
               session: Session | None = None) -> Program:
    """:func:`private_hosmer_lemeshow` as one SPMD program (:class:`ustat.executors.Program`):
    the probabilities and labels are the parties' private rows (filler 0). The refusal runs
    here, before any process starts."""
    if not isinstance(spec, HLSpec):
        raise TypeError(f"spec must be a ustat.specs.HLSpec, got {type(spec).__name__} (e.g. "
                        "HLSpec.of(groups=10, epsilon=1.0))")
    p, _ = _inputs(probs, labels)
    _plan(spec, p.size)
    options = {"evaluate": evaluate, "session": session}
    rows = {"probs": (probs, 0.0), "labels": (labels, 0)}
    return family_program("Hosmer-Lemeshow", _hl_main, spec, options, p.size, rows,
                          _local_only(spec, session, evaluate))


def _hl_main(place: Place, spec: HLSpec, options: dict, probs, labels) -> HLResult:
    """The test in one process (:func:`private_hosmer_lemeshow`)."""
    pr, ex = spec.privacy, spec.execution
    p, y = _inputs(probs, labels)
    n, Q, evaluate, seed = p.size, spec.design.groups, options["evaluate"], ex.seed
    plan = _plan(spec, n)
    tau, eps, scale_o, scale_e = plan.tau, pr.epsilon, plan.scale_o, plan.scale_e
    session = session_for(place, spec, options, n)
    tree_spec = ECDFSpec(ECDFPrivacy(plan.eps_tree, pr.noise_mode, pr.sensitivity),
                         ECDFPrecision(spec.precision.bits), ECDFDesign(tuple(tau.tolist())),
                         ECDFExecution(ex.backend, ex.servers, seed, ex.verify_keys))
    dep = deploy(p, tree_spec, session=session)
    edges, g, exact_sums = _edges(dep, session, p, y, tau, Q)
    mode = dep.noise.mode
    sums_delta, dropped, lost = 0.0, None, None
    if session is None:
        rng = as_rng(seed).derive("ecdf", "hl-central-noise")
        sums = exact_sums.copy()
        if scale_o is not None:
            sums[:2] += discrete_laplace(scale_e, (2, Q), rng) / (1 << FRAC_BITS)
            sums[2:] += discrete_laplace(scale_o, (2, Q), rng)
    else:
        sums, sums_delta, dropped, lost = _aggregate(
            session, p, y, g, Q, (scale_e, scale_o), mode,
            plan.sums_sens / float(scale_o) if scale_o is not None else None, ex.verify_keys,
            getattr(dep.answerer, "lost", None))
    E1, E0, O1, O0 = sums
    if not dep.released:            # the analyst runs in another process: nothing to release
        assert session is not None  # unreleased only in a run (which has a session)
        return HLResult(math.nan, math.nan, Q, np.full(Q + 1, np.nan), {}, {},
                        session.net.report(), released=False, processes=dep.processes,
                        costs=session.costs(), spec=spec.to_dict())
    clamped = int(np.sum(E1 < 0) + np.sum(E0 < 0))
    T = hl_statistic(E1, E0, O1, O0, plan.noise_var)
    noise = None if scale_o is None else {"o_law": plan.o_law, "e_law": plan.e_law,
                                          "frac_bits": FRAC_BITS}
    null, df = spec.null, plan.df
    pv = hl_pvalue(T, E1, E0, noise, null)
    eps_tree = dep.noise.epsilon
    eps_sums = plan.sums_sens * (1.0 / float(scale_o)) if scale_o is not None else math.inf
    account = {"epsilon": eps_tree + eps_sums if math.isfinite(eps) else math.inf,
               "epsilon_requested": eps, "epsilon_prime": plan.eps1, "tree_epsilon": eps_tree,
               "sums_epsilon": eps_sums, "sensitivity_nodes": plan.delta,
               "noise_mode": mode, "backend": ex.backend, "sums_sensitivity": plan.sums_sens,
               "sums_noise": {"observed": plan.o_law.to_dict(), "expected": plan.e_law.to_dict(),
                              "expected_units": f"2^-{FRAC_BITS}"},
               "delta": dep.noise.delta + sums_delta} | dep.key_check() | (
                   {} if dropped is None else {"inputs_verified": True, "inputs_dropped": dropped}
               ) | ({"dropouts": lost} if lost and lost["parties_lost"] else {})
    sd = math.sqrt(plan.noise_var)
    tail = "the chi-square tail" if noise is None else "a simulated null"
    law = "y ~ Bernoulli(p)" if null == "calibrated" else "p fitted on these records"
    method = (f"noise-aware HL: T = sum_q D_q^2 / (V_q + s^2) with D_q the two noisy copies of "
              f"O1 - E1 averaged (noise sd s = {sd:.3g} per group) and V_q = "
              f"E1 E0 / n_q; p-value from {tail} (null '{null}': {law}, df {df} without noise) "
              "that includes the DP noise law, released values and public parameters only")
    exact = _exact(p, y, tau, Q, df) if evaluate else None
    table = {"E1": E1.tolist(), "E0": E0.tolist(), "O1": O1.tolist(), "O0": O0.tolist()}
    comm = session.net.report() if session is not None else None
    return HLResult(T, pv, Q, edges, table, account, comm, clamped, exact, df, null, method,
                    plan.detect, sd,
                    processes=1 if session is None else session.placement.n_procs,
                    costs=None if session is None else session.costs(), spec=spec.to_dict())
