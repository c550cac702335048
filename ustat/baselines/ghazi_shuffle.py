"""GhaziSM: Ghazi et al.'s protocol in the shuffle model, sums by Balle et al. (CCS 2020).

As in Sinh-Ramon's comparison (Section 5, Appendix D.2): the factorization
A ~ L^T R of :mod:`ustat.baselines.ghazi`, but the two vector sums
S_L = sum_i L e_{x_i}, S_R = sum_i R e_{x_i} are computed by private
summation in the multi-message shuffle model (Balle, Bell, Gascon, Nissim
2020, after Ishai et al.'s split-and-mix), which gives *central* DP with no
trusted curator. Steps, on the simulated network:

1. *Public coins* (offline, JL only): 128-bit seed broadcast, as in Ghazi.
2. *Encode and noise* (local): each coordinate of L e_x and R e_x is encoded
   as an integer with precision p = 2^c by randomized rounding
   (floor(p v) + Bernoulli(frac)); each party adds, per coordinate,
   Polya(1/n, a) - Polya(1/n, a), a = exp(-eps'/Delta_1), so that the n
   contributions sum to one discrete Laplace (Balle et al.; Goryczka-Xiong),
   exactly. Delta_1 bounds the L1 change of a party's encoded vector:
   2 max_x (p |v_x|_1 + #non-integer coordinates of p v_x).
3. *Split and shuffle* (round 1): each party splits every noisy coordinate
   into ``messages`` = m additive shares mod 2^l and sends all of them to
   the shuffler: m 2 d l bits per party.
4. *Forward* (round 2): the shuffler permutes the n m messages of each
   coordinate and forwards them to the analyzer (n m 2 d l bits).
5. *Estimate* (analyzer): sums everything mod 2^l, decodes S_L, S_R, and
   releases U^ = (<S_L, S_R> - D) / (n (n-1)), with D = n f(x, x) when the
   kernel's diagonal is constant (all registered degree-2 kernels), else a
   third private sum of A[x_i, x_i] (with ``diag_epsilon_fraction``).
   Kernels with auxiliary sums (the AUC's positive count) add one more
   private sum with ``aux_epsilon_fraction``.

Messages per value m: ``messages`` or by default ceil(2 (sigma + l) / log2 n)
+ 1, a sizing heuristic that reproduces the worked example of Balle, Bell,
Gascon, Nissim, "Improved summation from shuffling" (2019): n = 10^4, 32-bit
values, sigma = 40 -> 12 messages (Sinh-Ramon write r = O(log n + kappa)).

Simulation shortcut: materializing n m 2 d shares is too big for the Bank
run (4521 x 15 x 8192 words), so above ``materialize_limit`` values the
shares and the per-party Polya noise are not drawn one by one: the analyzer's
sum is computed directly as the sum of the encodings plus one exact discrete
Laplace per coordinate, which has exactly the distribution of the sum of the
n Polya differences, and every message is still counted on the network
(``send_bits``, true sizes). Below the limit every share is drawn, sent,
shuffled and summed for real.

Threat model / DP: central (epsilon, delta)-DP against the analyzer
(eps' = eps/2 per vector), provided the shuffler does not collude with it
and hides the message order; a party colluding with the analyzer can remove
its own Polya noise (the honest parties' shares still sum to DLap only if
all are honest: as in U-MPC). Each coordinate is its own split-and-mix
instance with its own shuffle (messages carry one value, not a vector: with
one permutation for whole vectors the n m vectors of a big group Z_q^k would
betray which messages belong together). delta is computed, not assumed
(:func:`shuffle_delta`): for one coordinate, the analyzer's view V is within
total variation (1/2) sqrt(E[q^(c-1)] - 1) of the uniform multiset with the
same sum (collision bound; c is the number of connected components of the
random m-regular bipartite multigraph that two runs' message assignments
form, q = 2^l), and

    E[q^(c-1)] - 1 <= sum_{k=2}^{n} q^(k-1) / k! C(n-1, k-1) ((n)_{k-1})^-(m-2)

(count the partitions of the parties into k closed classes of sizes s with
multinomial(mn; ms) >= multinomial(n; s)^m and multinomial(n; s) >=
(n)_{k-1}; needs m >= 3). A view within total variation t of a
post-processing of the epsilon-DP sum is (epsilon, (1 + e^epsilon) t)-DP,
and the K coordinates' views add their distances: delta = (1 + e^epsilon)
K t. At Bank's n = 4521, m = 15, l = 40: t <= 2^-54 per coordinate.
"""

from __future__ import annotations

import math
import time
from fractions import Fraction
from typing import TYPE_CHECKING, Any

import numpy as np

from mpc.arith.sharing import additive_share
from noise.accounting import discrete_laplace_scale
from noise.samplers import discrete_laplace, polya

from . import _common as C  # noqa: N812 - the codebase's short capital module alias
from .ghazi import options_with, public_factorization, split_budget
from .options import Option, fraction, integer, optional_integer, resolved
from .result import Released, build_result

if TYPE_CHECKING:
    from collections.abc import Sequence

    from numpy.typing import ArrayLike

    from mpc.arith.rng import CSPRNG
    from mpc.session import Session

    from ..kernels import Kernel
    from .factor import Factorization
    from .result import ProtocolResult
    from .spec import BaselineSpec

TRUST = ("shuffle model: each party splits its noisy encoded vectors into additive shares sent "
         "to a shuffler that hides their order; the analyzer learns only the sums with central "
         "DP noise (eps/2 per vector), provided the shuffler does not collude with it")
MATERIALIZE_LIMIT = 1 << 22

#: the options ghazi-sm takes (:class:`ustat.specs.BaselineSpec` fields)
OPTIONS = options_with(
    Option("messages", None, optional_integer("messages"), None,
           "messages m per value (None: ceil(2 (sigma + l) / log2 n) + 1)"),
    Option("sigma", 40, integer("sigma"), None,
           "statistical security parameter of the default number of messages"),
    Option("diag_epsilon_fraction", 0.1, fraction("diag_epsilon_fraction"), None,
           "share of the vectors' epsilon for a non-constant diagonal's private sum"),
    Option("materialize_limit", MATERIALIZE_LIMIT, integer("materialize_limit", 0), None,
           "above n m 2 d values, the analyzer's sums are drawn without the shares "
           "(the simulation shortcut; not across processes)"))


def default_messages(n: int, bits: int, sigma: int = 40) -> int:
    """m = ceil(2 (sigma + l) / log2 n) + 1 (heuristic; see the module docstring)."""
    return int(math.ceil(2 * (sigma + bits) / math.log2(max(n, 2)))) + 1


def log2_collision_excess(n: int, m: int, bits: int) -> float:
    """log2 of the bound on E[q^(c-1)] - 1 in the module docstring (q = 2^bits; -inf when
    n < 2, inf when m < 3). Cost: O(n) logarithms."""
    if n < 2:
        return -math.inf
    if m < 3:
        return math.inf
    k = np.arange(2, n + 1)
    lfact = np.concatenate([[0.0], np.cumsum(np.log(np.arange(1, n + 1, dtype=np.float64)))])
    terms = ((k - 1) * bits * math.log(2) - lfact[k]
             + lfact[n - 1] - lfact[k - 1] - lfact[n - k]        # C(n-1, k-1)
             - (m - 2) * (lfact[n] - lfact[n - k + 1]))          # (n)_{k-1}^-(m-2)
    top = float(terms.max())
    return (top + math.log(float(np.exp(terms - top).sum()))) / math.log(2)


def shuffle_delta(n: int, messages: int, bits: int, coordinates: int, epsilon: float) -> float:
    """The delta the shuffle step adds: (1 + e^epsilon) K (1/2) sqrt(excess), capped at 1;
    0 when epsilon is infinite (no privacy is claimed then)."""
    if not math.isfinite(epsilon):
        return 0.0
    half_log2_t = log2_collision_excess(n, messages, bits) / 2 - 1      # log2 of t
    log2_delta = half_log2_t + math.log2(coordinates) + math.log2(1 + math.exp(min(epsilon, 700)))
    return 1.0 if log2_delta >= 0 else 2.0 ** log2_delta


def encode(values: np.ndarray, p: int, rng: CSPRNG) -> np.ndarray:
    """Randomized rounding at precision p (Balle et al.): floor(p v) + Bernoulli(frac).

    One uniform per value, used or not, so that a party's coins sit at its own positions of
    the stream whatever the other parties' values (the same in every process of a run).
    """
    scaled = values * p
    low = np.floor(scaled)
    u = rng.random(scaled.shape)
    return low.astype(np.int64) + (u < scaled - low)


class Contribution:
    """A party-indexed integer contribution: ``rows(idx)`` encodes parties idx."""

    def __init__(self, values_fn, width: int, p: int, rng, n: int):
        self.values_fn, self.width, self.p, self.rng, self.n = values_fn, width, p, rng, n

    def rows(self, idx: np.ndarray) -> np.ndarray:
        return encode(self.values_fn(idx), self.p, self.rng)

    def total(self, chunk_values: int = 1 << 21) -> np.ndarray:
        """Sum over all parties, encoded chunk by chunk (memory bounded)."""
        out = np.zeros(self.width, dtype=np.int64)
        step = max(1, chunk_values // max(self.width, 1))
        for start in range(0, self.n, step):             # chunks of parties
            out += self.rows(np.arange(start, min(start + step, self.n))).sum(axis=0)
        return out


def l1_sensitivity(abs_l1: np.ndarray, nonint: np.ndarray, p: int) -> int:
    """2 max_x (p |v_x|_1 + #non-integer coordinates of p v_x)."""
    return int(math.ceil(2 * float((p * abs_l1 + nonint).max())))


def private_sums(session: Session, run_rng: CSPRNG, groups: Sequence[tuple], messages: int,
                 materialize: bool) -> list:
    """Shuffle-model sums of integer contributions, all groups in the same two rounds.

    ``groups``: list of (contributions (n, k), L1 sensitivity, epsilon). Each
    group's k sums get discrete Laplace noise of scale sensitivity/epsilon
    (none when epsilon is infinite). Round 1: every party sends m shares of
    each value to the shuffler; round 2: the shuffler forwards the permuted
    pool to the analyzer. Returns the list of integer sum vectors.
    """
    net, ring = session.net, session.ring
    n = groups[0][0].n
    widths = [g[0].width for g in groups]
    k = sum(widths)
    shuffler, agg = net.role("shuffler"), net.role("aggregator")
    rng = run_rng.derive("shuffle-sums")
    scales = [discrete_laplace_scale(sens, eps) if math.isfinite(eps) else None
              for _, sens, eps in groups]
    if materialize:
        cols = []
        for (source, _, _), scale in zip(groups, scales, strict=True):
            noisy = source.rows(np.arange(n))
            if scale is not None:                           # each party's Polya(1/n) difference
                draws = polya(Fraction(1, n), scale, (2,) + noisy.shape, rng)
                noisy += draws[0] - draws[1]
            cols.append(noisy)
        shares = additive_share(ring, ring.from_signed(np.concatenate(cols, axis=1)), messages,
                                rng)                        # (m, n, k)
        with net.phase("shuffle"), net.round():
            for j in range(messages):                       # m is small (messages per value)
                net.send(net.parties, shuffler, shares[j], ring.bits)
        pool = shares.transpose(1, 0, 2).reshape(n * messages, k)
        order = np.argsort(rng.uint64(pool.shape), axis=0)      # one shuffle per coordinate
        pool = np.take_along_axis(pool, order, axis=0)
        with net.phase("analyze"), net.round():
            got = net.send(shuffler, agg, pool, ring.bits)
        total = ring.to_signed(ring.sum(got, axis=0))
        return np.split(total, np.cumsum(widths)[:-1])
    with net.phase("shuffle"), net.round():
        net.send_bits(net.parties, shuffler, messages * k * ring.bits)
    with net.phase("analyze"), net.round():
        net.send_bits(shuffler, agg, n * messages * k * ring.bits)
    out = []
    for (source, _, _), scale in zip(groups, scales, strict=True):
        total = source.total()
        if scale is not None:                               # = the sum of the n Polya differences
            total = total + discrete_laplace(scale, (source.width,), rng)
        out.append(total)
    return out


def sum_variance(fac: Factorization, hist: ArrayLike, scales: Sequence[float | Fraction], p: int,
                 n: int) -> float:
    """Var(U^) given the data and factorization: DLap noise on both sums (rounding ignored).

    With S = mu + noise, noise iid per coordinate of variance s^2:
    Var<S_L, S_R> = s_R^2 |mu_L|^2 + s_L^2 |mu_R|^2 + d s_L^2 s_R^2.
    """
    h = np.asarray(hist, dtype=np.float64)
    occ = np.flatnonzero(h)
    mu_l = h[occ] @ fac.left(occ)
    mu_r = h[occ] @ fac.right(occ)
    var = []
    for scale in scales:
        a = math.exp(-1 / float(scale))
        var.append(2 * a / (1 - a) ** 2 / p ** 2)
    total = var[1] * mu_l @ mu_l + var[0] * mu_r @ mu_r + fac.dim * var[0] * var[1]
    return float(total / (n * (n - 1)) ** 2)


def _check_wrap(session, contributions_bound: float, scale, eps):
    limit = float(1 << (session.ring.bits - 1))
    tail = 28 * float(scale) if math.isfinite(eps) else 0.0
    if contributions_bound + tail >= limit:
        raise ValueError(f"the encoded sums could wrap around mod 2^{session.ring.bits} "
                         f"(|sum| up to {contributions_bound + tail:.3g}): use more ring bits or a "
                         f"smaller precision (frac_bits)")


def vector_sensitivities(fac: Factorization, p: int) -> tuple[int, int]:
    """L1 sensitivities of the encoded L e_x and R e_x (see :func:`l1_sensitivity`)."""
    l_scaled, r_scaled = fac.vals * p, fac.R * p
    sens_l = l1_sensitivity(np.abs(fac.vals).sum(axis=0),
                            (l_scaled != np.round(l_scaled)).sum(axis=0), p)
    sens_r = l1_sensitivity(np.abs(fac.R).sum(axis=0),
                            (r_scaled != np.round(r_scaled)).sum(axis=0), p)
    return sens_l, sens_r


def budgets(eps: float, kern: Kernel, const_diag: bool, aux_fraction: float,
            diag_fraction: float) -> tuple[float, float, float]:
    """(eps_aux, eps per vector, eps_diag): aux share first, the diagonal's from the vectors'."""
    eps_aux, eps_vec = split_budget(eps, kern, aux_fraction)
    if not math.isfinite(eps):
        return eps_aux, eps_vec, math.inf
    if const_diag:
        return eps_aux, eps_vec, 0.0
    if not 0 < diag_fraction < 1:
        raise ValueError(f"diag_epsilon_fraction must be in (0, 1), got {diag_fraction}")
    eps_diag = 2 * eps_vec * diag_fraction
    return eps_aux, eps_vec - eps_diag / 2, eps_diag


def run_ghazi_sm(records: ArrayLike, spec: BaselineSpec, *, session: Session | None = None,
                 evaluate: bool = False, runtime: Any = None) -> ProtocolResult:
    """Run GhaziSM as ``spec`` (a :class:`ustat.specs.BaselineSpec`) says (see the module
    docstring) and return a :class:`ProtocolResult`."""
    t_start = time.perf_counter()
    pre = C.prepare_degree2(records, spec, public_levels=C.several_processes(session, runtime))
    kern, eps, t, X, n, grid, A, notes = (pre.kern, pre.epsilon, pre.bins, pre.X, pre.n,
                                          pre.grid, pre.A, pre.notes)
    opt = spec.options
    bits, frac_bits = resolved(spec.encoding.bits), resolved(spec.encoding.frac_bits)
    sigma, limit = resolved(opt.sigma), resolved(opt.materialize_limit)
    diag_a = np.diagonal(A)
    const_diag = bool(np.all(diag_a == diag_a[0]))
    eps_aux, eps_vec, eps_diag = budgets(eps, kern, const_diag,
                                         resolved(spec.privacy.aux_epsilon_fraction),
                                         resolved(spec.privacy.diag_epsilon_fraction))
    m = default_messages(n, bits, sigma) if opt.messages is None else opt.messages
    session, run_rng = C.open_session(n, session, spec.execution.seed, label="ghazi-sm-run",
                                      roles=("shuffler",), bits=bits, frac_bits=frac_bits,
                                      runtime=runtime)
    ring, fp = session.ring, session.fp
    fac, d_paper = public_factorization(session, run_rng, A, eps_vec, opt.dim,
                                        resolved(opt.sparsity), resolved(opt.factorization),
                                        notes)
    p, d = fp.scale, fac.dim
    cells = grid.index(X)
    sens_l, sens_r = vector_sensitivities(fac, p)
    if math.isfinite(eps):
        bound = n * (p * max(float(np.abs(fac.vals).max()), float(np.abs(fac.R).max())) + 1)
        _check_wrap(session, bound, discrete_laplace_scale(max(sens_l, sens_r), eps_vec), eps)
    materialize = n * m * 2 * d <= limit
    if not (materialize or session.single_process):
        raise ValueError(too_many_values(n * m * 2 * d, limit))
    if not materialize:
        notes.append("simulation shortcut: shares and per-party Polya noise not materialized; "
                     "the analyzer's sums are drawn with the same exact distribution and every "
                     "message is counted (see the module docstring)")
    enc_rng = run_rng.derive("party-encoding")
    groups = [(Contribution(lambda i: fac.left(cells[i]), d, p, enc_rng, n), sens_l, eps_vec),
              (Contribution(lambda i: fac.right(cells[i]), d, p, enc_rng, n), sens_r, eps_vec)]
    lo_d = float(diag_a.min())
    if not const_diag:
        groups.append((Contribution(lambda i: diag_a[cells[i]][:, None] - lo_d, 1, p, enc_rng, n),
                       int(math.ceil((float(diag_a.max()) - lo_d) * p)) + 1, eps_diag))
    if kern.aux is not None:
        n_aux = kern.aux(X[:1]).shape[1]
        groups.append((Contribution(lambda i: kern.aux(X[i]), n_aux, p, enc_rng, n),
                       int(math.ceil(kern.aux_sensitivity * p)) + n_aux, eps_aux))
    coords = sum(g[0].width for g in groups)
    delta = shuffle_delta(n, m, ring.bits, coords, eps)
    if math.isfinite(eps):
        notes.append(f"the release is (epsilon, {delta:.3g})-DP: delta from the shuffle step "
                     f"({coords} values of {m} messages each, computed for n = {n})")
    sums = private_sums(session, run_rng, groups, m, materialize)
    S_L, S_R = sums[0] / p, sums[1] / p
    diag_sum = n * float(diag_a[0]) if const_diag else n * lo_d + float(sums[2][0]) / p
    u_hat = (float(S_L @ S_R) - diag_sum) / (n * (n - 1))
    aux_sums = list(sums[-1] / p) if kern.aux is not None else []
    estimate = kern.release(u_hat, aux_sums, n)
    theory = {"dim": d, "dim_paper": d_paper, "factorization": fac.kind, "messages": m,
              "precision": p, "l1_sensitivity_left": sens_l, "l1_sensitivity_right": sens_r,
              "epsilon_per_vector": eps_vec,
              "noise_scale_left": sens_l / eps_vec / p if math.isfinite(eps) else 0.0,
              "noise_scale_right": sens_r / eps_vec / p if math.isfinite(eps) else 0.0,
              "bits_per_party": m * 2 * d * ring.bits, "shuffled_values": coords,
              "shuffle_delta": delta,
              "log2_tv_per_value": log2_collision_excess(n, m, ring.bits) / 2 - 1}
    ev = None
    if evaluate:
        true_hist = np.bincount(cells, minlength=grid.domain)
        ev = pre.evaluation(cells)
        if math.isfinite(eps):
            ev["variance_given_factorization"] = sum_variance(
                fac, true_hist, [discrete_laplace_scale(sens_l, eps_vec),
                                 discrete_laplace_scale(sens_r, eps_vec)], p, n)
    params = {"bins": t, "domain": grid.domain, "grid": list(grid.sizes), "dim": d,
              "sparsity": int(fac.rows.shape[0]), "factorization": fac.kind, "messages": m,
              "sigma": sigma, "precision_bits": fp.frac_bits, "materialized": materialize,
              "constant_diagonal": const_diag}
    from .ghazi import NO_VARIANCE

    out = Released(estimate, u_hat, params, theory, ev, notes, delta,
                   variance_method=NO_VARIANCE)
    return build_result(session, spec, kern, out, n=n, dp_model="shuffle", trust=TRUST,
                        t_start=t_start)


def too_many_values(values: int, limit: int) -> str:
    """Why a run across processes with ``values`` > materialize_limit is refused."""
    return (f"n m 2 d = {values} values exceed materialize_limit = {limit}: the simulation "
            "shortcut draws the analyzer's sums from every record, which no process of a run "
            "across processes holds; raise materialize_limit (memory: 8 bytes per value) or use "
            "fewer bins or a smaller dim")


def public_plan(records: ArrayLike, spec: BaselineSpec) -> dict:
    """The public planning :func:`run_ghazi_sm` does for ``spec`` on ``records``, before it
    runs: epsilon, n, messages m, dimension d, the shuffled coordinates and the n m 2 d values
    it materializes (grid, kernel matrix, budget split, messages, dimension)."""
    from .ghazi import factor_dimension

    pre = C.prepare_degree2(records, spec)
    opt, bits = spec.options, resolved(spec.encoding.bits)
    diag_a = np.diagonal(pre.A)
    const_diag = bool(np.all(diag_a == diag_a[0]))
    _, eps_vec, _ = budgets(pre.epsilon, pre.kern, const_diag,
                            resolved(spec.privacy.aux_epsilon_fraction),
                            resolved(spec.privacy.diag_epsilon_fraction))
    n = pre.n
    m = default_messages(n, bits, resolved(opt.sigma)) if opt.messages is None else opt.messages
    d, _ = factor_dimension(pre.grid.domain, n, eps_vec, opt.dim, resolved(opt.factorization))
    aux = pre.kern.aux(pre.X[:1]).shape[1] if pre.kern.aux is not None else 0
    return {"epsilon": pre.epsilon, "n": n, "messages": m, "dim": d,
            "coordinates": 2 * d + (0 if const_diag else 1) + aux, "values": n * m * 2 * d}


def planned_delta(records: ArrayLike, spec: BaselineSpec) -> float:
    """The delta :func:`run_ghazi_sm` will report for ``spec`` on ``records``, before running
    it (the same planning, :func:`public_plan`)."""
    plan = public_plan(records, spec)
    return shuffle_delta(plan["n"], plan["messages"], resolved(spec.encoding.bits),
                         plan["coordinates"], plan["epsilon"])


def across_processes(records: ArrayLike, spec: BaselineSpec) -> str | None:
    """Why this run cannot spread over processes (None: it can): above materialize_limit its
    shortcut sums every record."""
    values = public_plan(records, spec)["values"]
    limit = resolved(spec.options.materialize_limit)
    return None if values <= limit else too_many_values(values, limit)
