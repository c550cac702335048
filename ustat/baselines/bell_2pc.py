"""Bell, Bellet, Gascon, Kulkarni (AISTATS 2020), Section 5: U-statistics by 2PC of user pairs.

Protocol ``bell-2pc``, in one process or several (kernels: kendall, gini,
auc, duplicate, renyi2, rand; :mod:`.bell_2pc_circuits`):

1. *Pairs* (offline, public coins: the aggregator sends every user a
   128-bit seed). Subsampling (``pairs=P``, Theorem 5): P independent
   permutations sigma_p of the users; pairs (sigma_p(2k), sigma_p(2k+1)),
   k < floor(n/2), so every user is in P pairs (n even; with n odd one user
   per permutation sits out). All pairs (``pairs="all"``): every i < j.
2. *2PC* (Yao, :func:`mpc.gc.yao.yao`, all pairs' instances in one batched
   call per memory chunk): the first user of the pair garbles, the second
   evaluates; inputs are both binned records and R + 1 uniform coins of
   each user; the circuit computes the kernel's integer value v and adds
   eta drawn from the XOR of both users' coins (:mod:`.bell_2pc_noise`: a
   table-inverted discrete Laplace, exact pmf known), so neither user knows
   eta. Output mode ``xor``: each user ends with an XOR share of v + eta and
   learns nothing.
3. *Report* (1 round): both users send their shares (w bits each) to the
   aggregator, which opens v + eta.
4. *Estimate*: U^ = mean over the pairs of (v + eta) / scale (= 2/(P n)
   times the sum for n even, Theorem 5); the released statistic is the
   kernel's post-processing (AUC: the positive count from binary
   randomized response with ``aux_epsilon_fraction`` of epsilon).

Privacy: computational DP (the 2PC hides inputs computationally). Per pair
(eps_pair, delta_pair)-DP with delta_pair computed on the implemented noise;
subsampling: eps_pair = eps / P, basic composition, (eps, P delta_pair)-DP;
all pairs: eps_pair from advanced composition over the n - 1 pairs of a
user with ``delta``, total (eps, delta + (n - 1) delta_pair). The result's
``delta`` is that total.

Cost per pair (n_and ANDs, m = record + R + 1 evaluator input bits, g the
same for the garbler, w output bits): offline 256 n_and bits of garbled
tables + correlated OT for m bits (direct Chou-Orlandi base OTs below 128
OTs per ordered pair: 264 + 392 m bits), online 128 g + 129 m bits in 2
rounds, then 2 w bits to the aggregator (1 round); plus 128 bits of public
seed per user offline. ``engine="plain"`` evaluates the *same circuit* on the
same coins in the clear instead of by 2PC (as the paper's experiments did):
identical output, nothing of the 2PC sent or counted; for Monte-Carlo error
studies only.

Processes (``run_protocol(records, spec, LocalProcesses(P))``, or a ``session``
or ``runtime`` of :mod:`mpc.run.runtime` given to :func:`run_bell_2pc`): the
same program in every process; each reads only the records of the users it
holds (the others' rows may be zeros), pairs come from an agreed stream,
every garbler's process garbles, every evaluator's evaluates, and the
release is the aggregator's (the other processes' ``estimate`` means
nothing). Categorical columns then need public ``levels`` (ValueError
otherwise), and ``engine="plain"`` is refused (it reads every record).

Threat model: semi-honest users and aggregator; no dealer (the correlated
randomness comes from OT between the pair's members); the aggregator may
collude with any users: it learns the sampled pairs and their noisy values
v + eta, with eta unknown to each user. Not covered: malicious users (a
garbler can garble another function or bias the noise), collusion of both
members of a pair (they can remove eta).
"""

from __future__ import annotations

import math
import numbers
import time
from typing import TYPE_CHECKING, Any, Literal, cast

import numpy as np

from . import _common as C  # noqa: N812 - the codebase's short capital module alias
from .bell_2pc_circuits import kernel_spec, pair_circuit
from .bell_2pc_noise import (
    DEFAULT_NOISE_BITS,
    advanced_eps0,
    check_noise_bits,
    noise_plan,
)
from .options import AUX_FRACTION, BINS, LEVELS, Option, choice, real, resolved
from .result import Released, build_result

if TYPE_CHECKING:
    from collections.abc import Sequence

    from numpy.typing import ArrayLike

    from mpc.arith.rng import CSPRNG
    from mpc.gc.circuit import Circuit
    from mpc.session import Session

    from .bell_2pc_circuits import KernelSpec
    from .result import ProtocolResult
    from .spec import BaselineSpec

TRUST = ("computational DP without a trusted curator: each pair of users evaluates "
         "f(x_i, x_j) + eta by Yao's garbled circuits (semi-honest, no dealer: OT between the "
         "two), eta drawn in the circuit from both users' coins so neither knows it; the users "
         "learn nothing (XOR shares), the aggregator learns which users were paired and each "
         "pair's noisy value; secure against the aggregator colluding with any users, not "
         "against both members of a pair colluding")

ENGINES = ("gc", "plain")
#: Garbled-table bytes per Yao call (instances are chunked to stay below).
CHUNK_BYTES = 1 << 27


def check_pairs_option(pairs: Any) -> int | Literal["all"]:
    """``pairs``: a positive integer (pairs per user) or ``"all"``."""
    if pairs == "all":
        return "all"
    if isinstance(pairs, bool) or not isinstance(pairs, numbers.Integral):
        raise TypeError(f"pairs must be a positive integer or 'all', got {pairs!r}")
    if pairs < 1:
        raise ValueError(f"pairs must be >= 1 (pairs per user) or 'all', got {pairs}")
    return int(pairs)


#: the options bell-2pc takes (:class:`ustat.specs.BaselineSpec` fields)
OPTIONS = (BINS,
           Option("pairs", 1, check_pairs_option, "--pairs",
                  "pairs per user (Theorem 5), or 'all' (advanced composition)"),
           Option("delta", 1e-8, real("delta"), "--delta",
                  "with pairs='all': the delta of advanced composition"),
           Option("noise_bits", DEFAULT_NOISE_BITS, check_noise_bits, "--noise-bits",
                  "random bits of the in-circuit noise sampler (8..62)"),
           Option("engine", "gc", choice("engine", ENGINES), "--engine",
                  "gc: garbled circuits; plain: the same circuit in the clear (error studies)"),
           LEVELS, AUX_FRACTION)


def check_spec(spec: BaselineSpec) -> None:
    """bell-2pc's rule between options: with all pairs, delta in (0, 1)."""
    delta = resolved(spec.privacy.delta)
    if spec.options.pairs == "all" and not 0 < delta < 1:
        raise ValueError(f"delta must be in (0, 1) for pairs='all', got {delta!r}")


def across_processes(records: ArrayLike, spec: BaselineSpec) -> str | None:
    """Why this run cannot spread over processes (None: it can)."""
    if spec.options.engine == "plain":
        return ("engine='plain' evaluates every pair in the clear in one process; a run of "
                "several processes needs engine='gc'")
    return None


def make_pairs(n: int, pairs: int | Literal["all"],
               rng: CSPRNG) -> tuple[np.ndarray, np.ndarray]:
    """(garblers, evaluators): P permutations' consecutive pairs, or every i < j."""
    if pairs == "all":
        g, e = np.triu_indices(n, 1)
        return g.astype(np.int64), e.astype(np.int64)
    keys = rng.uint64((pairs, n))
    perm = np.argsort(keys, axis=1, kind="stable")
    m = n // 2
    return perm[:, 0:2 * m:2].ravel(), perm[:, 1:2 * m:2].ravel()


def check_pairs(pairs: Any, n: int) -> int | Literal["all"]:
    """``pairs`` checked (:func:`check_pairs_option`) for a run on n records (n >= 2)."""
    pairs = check_pairs_option(pairs)
    if n < 2:
        raise ValueError(f"bell-2pc needs at least 2 records, got {n}")
    return pairs


def pack_records(cells: np.ndarray, col_bits: Sequence[int]) -> np.ndarray:
    """Each record's cells as one integer, column 0 in the low bits."""
    out = np.zeros(cells.shape[0], dtype=np.uint64)
    at = 0
    for c, w in enumerate(col_bits):
        out |= cells[:, c].astype(np.uint64) << np.uint64(at)
        at += w
    return out


def privacy_plan(eps: float, pairs: int | Literal["all"], n: int, delta: float, spec: KernelSpec,
                 noise_bits: int) -> dict:
    """eps per pair, composition rule, the noise plan and the total delta."""
    if not math.isfinite(eps):
        return {"eps_pair": math.inf, "composition": "none", "noise": None, "delta_total": 0.0}
    if pairs == "all":
        eps0, rule = advanced_eps0(eps, n - 1, delta)
        k = n - 1
    else:
        eps0, rule, k = eps / pairs, "basic", pairs
    plan = noise_plan(eps0, spec.delta, noise_bits)
    dtot = k * plan["delta_pair"] + (delta if rule == "advanced" else 0.0)
    return {"eps_pair": eps0, "composition": rule, "noise": plan, "delta_total": dtot,
            "pairs_per_user": k}


def _coins(rng, count: int, width: int) -> np.ndarray:
    return rng.bits((count, width))


def run_gc(session: Session, circuit: Circuit, g: np.ndarray, e: np.ndarray,
           inputs_g: Sequence[np.ndarray], inputs_e: Sequence[np.ndarray],
           rng: CSPRNG) -> tuple[np.ndarray, dict | None]:
    """All pairs by Yao (output ``xor``), chunked by table memory; shares opened by the aggregator.

    Returns the opened output bits (pairs, w) and the summed Yao cost formulas.
    """
    from mpc.gc.yao import yao

    net = session.net
    agg = net.role("aggregator")
    n_and = circuit.schedule.n_and
    chunk = max(1, CHUNK_BYTES // max(1, 32 * n_and))
    shares_g: list = []
    shares_e: list = []
    costs: dict | None = None
    with net.parallel():
        for at in range(0, g.size, chunk):          # loop over memory chunks, not pairs
            sl = slice(at, at + chunk)
            with net.lane():
                res = yao(session, circuit, g[sl], e[sl], [x[sl] for x in inputs_g],
                          [x[sl] for x in inputs_e], output="xor", phase="bell-2pc-yao",
                          rng_garbler=rng.derive("garblers", at),
                          rng_evaluator=rng.derive("evaluators", at))
            assert res.garbler is not None and res.evaluator is not None   # output "xor"
            shares_g.append(res.garbler[0])
            shares_e.append(res.evaluator[0])
            costs = _add_costs(costs, res.costs)
    sg, se = np.concatenate(shares_g), np.concatenate(shares_e)
    with net.phase("bell-2pc-report"), net.round():          # w bits per user, 1 per element
        rg = net.send(g, np.full(g.size, agg), sg, 1)
        re_ = net.send(e, np.full(e.size, agg), se, 1)
    return rg ^ re_, costs


def _add_costs(acc, c):
    if acc is None:
        return {"n_and": c["n_and"], "garbler_input_bits": c["garbler_input_bits"],
                "evaluator_input_bits": c["evaluator_input_bits"],
                "per_instance": dict(c["per_instance"]), "instances": c["instances"],
                "formula": dict(c["formula"]), "calls": 1}
    acc["instances"] += c["instances"]
    acc["calls"] += 1
    for k in ("offline_bits_without_ot", "online_bits"):
        acc["formula"][k] += c["formula"][k]
    return acc


def run_plain(session: Session, circuit: Circuit, g: np.ndarray, e: np.ndarray,
              inputs_g: Sequence[np.ndarray], inputs_e: Sequence[np.ndarray]) -> np.ndarray:
    """The same circuit in the clear (2PC simulated); each pair's garbler reports the value."""
    from mpc.gc import evaluate

    net = session.net
    out = evaluate(circuit, list(inputs_g) + list(inputs_e))[0]
    with net.phase("bell-2pc-report"), net.round():
        return net.send(g, np.full(g.size, net.role("aggregator")), out, 1)


def theorem5_mse(A: np.ndarray, hist: ArrayLike, n: int, P: int, noise_var: float,
                 scale: float) -> dict:
    """Bell et al. Theorem 5's MSE at the data's zeta_1, zeta_2 (discretized values)."""
    h = np.asarray(hist, dtype=np.float64)
    occ = np.flatnonzero(h)
    Ao = A[np.ix_(occ, occ)]
    ho = h[occ]
    m = n * (n - 1)
    u = (ho @ Ao @ ho - ho @ np.diagonal(Ao)) / m
    g = (Ao @ ho - np.diagonal(Ao)) / (n - 1)                  # mean of f(x, x_j), j != i
    zeta1 = float(ho @ (g - u) ** 2 / n)
    zeta2 = float((ho @ (Ao * Ao) @ ho - ho @ np.diagonal(Ao) ** 2) / m - u * u)
    sub = 2 / (P * n) * (2 * (P - 1) * (1 - 1 / (n - 1)) * zeta1
                         + (1 + (P - 1) / (n - 1)) * zeta2)
    dp = 2 * noise_var / (P * n * scale ** 2)
    return {"zeta1": zeta1, "zeta2": zeta2, "mse_subsampling": sub, "mse_dp": dp,
            "mse_thm5": sub + dp}


def run_bell_2pc(records: ArrayLike, spec: BaselineSpec, *, session: Session | None = None,
                 evaluate: bool = False, runtime: Any = None) -> ProtocolResult:
    """Run Bell et al.'s 2PC protocol as ``spec`` (a :class:`ustat.specs.BaselineSpec`) says;
    returns a :class:`ProtocolResult` (module docstring)."""
    t_start = time.perf_counter()
    engine = spec.options.engine
    pre, kspec, P, R, eps_aux, priv = _plan(records, spec, C.several_processes(session, runtime))
    kern, X, n, grid, notes = pre.kern, pre.X, pre.n, pre.grid, pre.notes
    plan = priv["noise"]
    table = plan["table"] if plan else None

    session, run_rng = C.open_session(n, session, spec.execution.seed, label="bell-2pc-run",
                                      runtime=runtime)
    net = session.net
    if engine == "plain" and not session.single_process:
        raise ValueError("engine='plain' evaluates every pair in the clear in one process; a "
                         "run of several processes needs engine='gc'")
    C.broadcast_seed(session)
    g, e = make_pairs(n, P, session.agreed(run_rng.derive("public-pairing")))
    cells = grid.cells(X)
    rec = pack_records(cells, kspec.col_bits)
    circuit = pair_circuit(kspec, table, R)
    inputs_g, inputs_e = [rec[g]], [rec[e]]
    if table:
        inputs_g.append(_coins(run_rng.derive("garbler-coins"), g.size, R + 1))
        inputs_e.append(_coins(run_rng.derive("evaluator-coins"), e.size, R + 1))
    gc_costs = None
    if engine == "gc":
        out_bits, gc_costs = run_gc(session, circuit, g, e, inputs_g, inputs_e,
                                    run_rng.derive("yao"))
    else:
        out_bits = run_plain(session, circuit, g, e, inputs_g, inputs_e)
        notes.append("engine='plain': the pair circuit was evaluated in the clear on the same "
                     "coins (2PC simulated, as in the paper's experiments); its garbled tables, "
                     "labels and OTs were not sent or counted")
    from mpc.gc import bits_to_int
    # output_width(...) <= 64 bits: an array, not a list of ints
    values = cast(np.ndarray, bits_to_int(out_bits, signed=True)).astype(np.int64)
    total = int(values.sum())
    u_hat = total / (kspec.scale * values.size)

    estimate = kern.release(u_hat, _aux_sums(net, X, kern, eps_aux, run_rng), n)

    theory = _theory(priv, kspec, circuit, values.size, gc_costs)
    ev = _evaluation(pre, g, e, P, plan, kspec) if evaluate else None
    if plan and priv["delta_total"] > 0:
        why = "bounded in-circuit noise" + (
            ", advanced composition" if priv["composition"] == "advanced" else "")
        notes.append(f"the release is (epsilon, {priv['delta_total']:.3g})-DP ({why}), "
                     f"not pure epsilon-DP")
    delta = resolved(spec.privacy.delta)
    params = {"bins": pre.bins, "pairs": P, "n_pairs": int(values.size), "engine": engine,
              "noise_bits": R, "eps_pair": priv["eps_pair"], "composition": priv["composition"],
              "delta_param": float(delta) if P == "all" else None, "noise": "table-inverted "
              "discrete Laplace (exact pmf from the table)", "kernel_scale": kspec.scale,
              "kernel_int_range": [kspec.lo, kspec.hi], "output_bits": int(out_bits.shape[1]),
              "record_bits": kspec.record_bits, "n_and": int(circuit.schedule.n_and),
              "aux_epsilon": eps_aux}
    out = Released(estimate, u_hat, params, theory, ev, notes, priv["delta_total"],
                   variance_method="theory.dp_variance is the in-circuit noise's "
                                   "variance (U units), but the pair-subsampling error depends "
                                   "on the data (Theorem 5's zeta terms), which are private")
    return build_result(session, spec, kern, out, n=n, dp_model="2pc-cdp", trust=TRUST,
                        t_start=t_start)


def _plan(records: ArrayLike, spec: BaselineSpec, public_levels: bool = False) -> tuple:
    """The run's public planning: grid, kernel spec, pairs, noise bits, budget split, privacy."""
    pre = C.prepare_degree2(records, spec, public_levels=public_levels)
    kspec = kernel_spec(pre.kern, pre.grid)
    P = check_pairs(spec.options.pairs, pre.n)
    R = resolved(spec.options.noise_bits)
    from .ghazi import split_budget
    eps, eps_aux = pre.epsilon, 0.0
    if pre.kern.aux is not None:
        eps_aux, _ = split_budget(eps, pre.kern, resolved(spec.privacy.aux_epsilon_fraction))
    eps_pairs = eps - eps_aux if math.isfinite(eps) else eps
    return pre, kspec, P, R, eps_aux, privacy_plan(eps_pairs, P, pre.n,
                                                   resolved(spec.privacy.delta), kspec, R)


def planned_delta(records: ArrayLike, spec: BaselineSpec) -> float:
    """The delta :func:`run_bell_2pc` will report for ``spec`` on ``records``, before running
    it."""
    return _plan(records, spec)[-1]["delta_total"]


def _aux_sums(net, X, kern, eps_aux, run_rng) -> list:
    """A kernel's auxiliary sums (AUC: positive count) by binary RR, one bit per user, 1 round;
    the aggregator estimates them from the reports it received."""
    if kern.aux is None:
        return []
    from .ghazi import aux_estimate, ldp_aux_sums

    _, rep = ldp_aux_sums(X, kern, eps_aux, run_rng.derive("aux-randomizers"))
    with net.phase("bell-2pc-aux"), net.round():
        net.send(net.parties, net.role("aggregator"), rep, 1)
    return list(aux_estimate(rep, eps_aux))


def _evaluation(pre, g, e, P, plan, spec) -> dict:
    """Exact statistics for tests and experiments (reads the records in the clear)."""
    idx = pre.grid.index(pre.X)
    ev = pre.evaluation(idx)
    # A[x, y] = kern.plain on the representatives: independent of the circuit
    ev["u_pairs"] = float(pre.A[idx[g], idx[e]].sum() / g.size)
    if P != "all":
        ev.update(theorem5_mse(pre.A, np.bincount(idx, minlength=pre.grid.domain), pre.n, P,
                               plan["variance"] if plan else 0.0, spec.scale))
    return ev


def _theory(priv, spec, circuit, n_pairs, gc_costs) -> dict:
    plan = priv["noise"]
    out: dict = {"n_and_per_pair": int(circuit.schedule.n_and),
                 "garbled_table_bits_per_pair": 256 * int(circuit.schedule.n_and)}
    if plan:
        out.update({"alpha": plan["alpha"], "noise_table_size": plan["K"],
                    "noise_variance": plan["variance"],
                    "noise_variance_ideal": plan["variance_ideal"],
                    "noise_tv_to_ideal": plan["tv_to_ideal"], "delta_pair": plan["delta_pair"],
                    "dp_variance": plan["variance"] / (spec.scale ** 2 * n_pairs)})
    else:
        out["dp_variance"] = 0.0
    if gc_costs is not None:
        out["yao"] = gc_costs
    return out
