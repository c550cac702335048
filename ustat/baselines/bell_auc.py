"""Bell, Bellet, Gascon, Kulkarni (AISTATS 2020), Section 4: a locally private AUC.

Hierarchical histograms with a one-bit Hadamard frequency oracle.

Records are (score, label); scores are quantized to d = 2^alpha ordered bins
(``bins``), labels are *public* (the paper's assumption (ii)), so n+ and n-
are known. Steps, on the simulated network:

1. *Public coins* (offline, data independent): the aggregator broadcasts a
   128-bit seed. From it, the members of each class are split by a random
   permutation into alpha groups G_1..G_alpha of near-equal size, and every
   member of G_l gets a uniform row j of the 2^l x 2^l Hadamard matrix H.
2. *Report* (1 round, 2 bits per party): a member of G_l whose leaf is s
   holds the level-l node v = s >> (alpha - l) and sends the bit H[j, v]
   (+-1) kept with probability e^eps / (e^eps + 1), flipped otherwise (exact
   binary randomized response); plus its public label in the clear.
   This is the frequency oracle of the paper's supplement B.2 as we
   reconstruct it (Hadamard response of Bassily et al. 2017 on the levels of
   Kulkarni et al.'s hierarchical histogram, one level per user): one bit,
   epsilon-LDP.
3. *Frequency oracle* (aggregator): for level l, h^_p = (n_c / |G_l|) c_eps
   sum_{i in G_l} y_i H[j_i, p], c_eps = (e^eps + 1) / (e^eps - 1), for all
   nodes p at once by a fast Walsh-Hadamard transform (O(2^l l)). Unbiased;
   E(h^_p - h_p)^2 <= v = n_c^2 c_eps^2 / |G_l| ~ C n_c alpha with C = c_eps^2;
   estimates at one level are uncorrelated and levels are independent
   (properties (i)-(iv) of Theorem 3).
4. *UAUC* (aggregator, level by level): from the root, a node p with
   h~+_p h~-_p < tau (h~ = max(h^, sqrt(a v)/2), tau = a sqrt(v+ v-)) is
   *discarded* and contributes (1/2)(sum_i h^+_{p.i})(sum_i h^-_{p.i});
   otherwise it is *recursed*: it contributes h^+_{p.1} h^-_{p.0} and its
   children are visited. AUC^ = UAUC^ / (n+ n-).

Ties: the paper's UAUC counts s+ > s- only (a leaf contributes 0); with
``ties="half"`` (default) a recursed leaf adds (1/2) h^+ h^-, so the
statistic is the AUC with ties counted 1/2, as the registered ``auc`` kernel,
sklearn's ``roc_auc_score`` and the discarded-node rule count them;
``ties="zero"`` is the paper's strict version.

Threshold ``a`` > 1: by default the value minimizing Theorem 3's MSE bound
C n- n+ alpha^2 (2n + (4a+1) min(n-, n+) + 21 sqrt(2nCa) / (sqrt(a) - 1))
over a (public quantities only).

Privacy off (epsilon = inf): every party sends its leaf (alpha bits) and the
aggregator builds the exact hierarchical histogram: the result is the exact
AUC of the binned scores.

Cost: 2 bits per party online (oracle bit + public label), 128 bits per
party offline (the public seed), 1 online round; server O(n + d log d).
Processes: the labels are public (assumption (ii)): every process knows
them (the groups are drawn from them and agreed coins), the scores only of
its own parties.
Threat model / DP: epsilon-LDP for the scores; labels are public (revealed
to the aggregator); nobody needs to be trusted.
"""

from __future__ import annotations

import math
import numbers
import time
from typing import TYPE_CHECKING, Any

import numpy as np

from . import _common as C  # noqa: N812 - the codebase's short capital module alias
from .options import BITS, FRAC_BITS, Option, choice, resolved
from .result import Released, build_result

if TYPE_CHECKING:
    from collections.abc import Sequence

    from numpy.typing import ArrayLike

    from mpc.arith.rng import CSPRNG
    from mpc.session import Session

    from .result import ProtocolResult
    from .spec import BaselineSpec

TRUST = ("local DP for the scores: each party sends one randomized Hadamard bit of its score's "
         "node at one tree level (epsilon-LDP), so nobody has to be trusted for the scores; the "
         "labels are public (sent in the clear, the paper's assumption) and the aggregator learns "
         "them and the class sizes")
SEED_BITS = 128


def _threshold(a):
    if isinstance(a, bool) or not isinstance(a, numbers.Real) or not float(a) > 1:
        raise ValueError(f"threshold a must be a number > 1, got {a!r}")
    return a


#: the options bell-auc takes (:class:`ustat.specs.BaselineSpec` fields)
OPTIONS = (Option("bins", 64, lambda t: C.check_bins(t, power_of_two=True), "--bins",
                  "ordered bins d = 2^alpha of the scores (a power of two)"),
           Option("threshold", None, _threshold, None,
                  "UAUC's threshold a > 1 (None: minimizes Theorem 3's bound)"),
           Option("ties", "half", choice("ties", ("half", "zero")), None,
                  "half: ties count 1/2 (sklearn's AUC); zero: the paper's strict UAUC"),
           BITS, FRAC_BITS)


def fwht(x: np.ndarray) -> np.ndarray:
    """Walsh-Hadamard transform H x on the last axis (length 2^l), H[j, v] = (-1)^(j . v)."""
    y = np.array(x, dtype=np.float64, copy=True)
    m = y.shape[-1]
    h = 1
    while h < m:
        y = y.reshape(*y.shape[:-1], m // (2 * h), 2, h)
        a, b = y[..., 0, :].copy(), y[..., 1, :].copy()
        y[..., 0, :], y[..., 1, :] = a + b, a - b
        y = y.reshape(*y.shape[:-3], m)
        h *= 2
    return y


def hadamard_entry(j: np.ndarray, v: np.ndarray) -> np.ndarray:
    """H[j, v] = (-1)^popcount(j & v), elementwise, as int64 +-1."""
    bits = np.bitwise_count(np.asarray(j, np.uint64) & np.asarray(v, np.uint64))
    return 1 - 2 * (bits.astype(np.int64) & 1)


def oracle_constant(epsilon: float) -> float:
    """c_eps = (e^eps + 1) / (e^eps - 1): the debiasing factor of binary RR."""
    return 1.0 if not math.isfinite(epsilon) else (math.exp(epsilon) + 1) / math.expm1(epsilon)


def theorem3_bound(n_pos: int, n_neg: int, alpha: int, c_const: float,
                   a: ArrayLike) -> float | np.ndarray:
    """Bell et al. Theorem 3: MSE of UAUC^ (unnormalized; divide by (n+ n-)^2 for the AUC).

    ``a`` may be an array (the bound is evaluated elementwise).
    """
    n = n_pos + n_neg
    a = np.asarray(a, dtype=np.float64)
    out = (c_const * n_neg * n_pos * alpha ** 2
           * (2 * n + (4 * a + 1) * min(n_pos, n_neg)
              + 21 * np.sqrt(2 * n * c_const * a) / (np.sqrt(a) - 1)))
    return float(out) if out.ndim == 0 else out


def default_threshold(n_pos: int, n_neg: int, alpha: int, c_const: float) -> float:
    """The a > 1 minimizing :func:`theorem3_bound` (grid search on 1 + 10^[-3, 4])."""
    grid = 1.0 + np.logspace(-3, 4, 4000)
    return float(grid[int(np.argmin(theorem3_bound(n_pos, n_neg, alpha, c_const, grid)))])


def level_groups(members: np.ndarray, alpha: int, coins: CSPRNG) -> list:
    """Random partition of ``members`` into alpha near-equal groups (public coins)."""
    perm = members[coins.permutation(members.size)]
    return np.array_split(perm, alpha)


def oracle_estimates(groups: Sequence[np.ndarray], reports: np.ndarray, rows: np.ndarray,
                     n_c: float, alpha: int, epsilon: float) -> list:
    """h^ per level l = 1..alpha (list of arrays of length 2^l) from the one-bit reports."""
    c_eps = oracle_constant(epsilon)
    out = []
    for lvl in range(1, alpha + 1):
        g = groups[lvl - 1]
        w = np.bincount(rows[g], weights=reports[g], minlength=1 << lvl)
        out.append((n_c / g.size) * c_eps * fwht(w))
    return out


def exact_levels(leaves: np.ndarray, alpha: int) -> list:
    """The exact hierarchical histogram, levels 1..alpha."""
    return [np.bincount(leaves >> (alpha - lvl), minlength=1 << lvl).astype(np.float64)
            for lvl in range(1, alpha + 1)]


def uauc(hp: list, hn: list, n_pos: int, n_neg: int, v_pos: float, v_neg: float, a: float,
         ties: str = "half") -> tuple[float, dict]:
    """UAUC^ by the level-by-level recursion with threshold a (the paper's estimator, eq. (10))."""
    alpha = len(hp)
    levels_p = [np.array([float(n_pos)])] + list(hp)
    levels_n = [np.array([float(n_neg)])] + list(hn)
    floor_p, floor_n = math.sqrt(a * v_pos) / 2, math.sqrt(a * v_neg) / 2
    tau = a * math.sqrt(v_pos * v_neg)
    frontier = np.array([0], dtype=np.int64)
    total, discarded, recursed = 0.0, 0, 0
    for m in range(alpha):
        if frontier.size == 0:
            break
        tp = np.maximum(levels_p[m][frontier], floor_p)
        tn = np.maximum(levels_n[m][frontier], floor_n)
        drop = tp * tn < tau
        left, right = 2 * frontier, 2 * frontier + 1
        cp, cn = levels_p[m + 1], levels_n[m + 1]
        d = drop
        total += 0.5 * float(((cp[left[d]] + cp[right[d]]) * (cn[left[d]] + cn[right[d]])).sum())
        k = ~drop
        total += float((cp[right[k]] * cn[left[k]]).sum())
        discarded += int(d.sum())
        recursed += int(k.sum())
        frontier = np.concatenate([left[k], right[k]])
    if ties == "half" and frontier.size:
        total += 0.5 * float((levels_p[alpha][frontier] * levels_n[alpha][frontier]).sum())
    return total, {"discarded_nodes": discarded, "recursed_nodes": recursed,
                   "tau": tau, "leaves_reached": int(frontier.size)}


def _private_levels(session, run_rng, leaves, labels, pos, neg, alpha, eps):
    """Steps 1-3: public coins, one-bit reports (1 round), oracle estimates per class and level."""
    net = session.net
    agg = net.role("aggregator")
    n = leaves.size
    C.broadcast_seed(session, SEED_BITS)
    coins = session.agreed(run_rng.derive("public-coins"))
    rows = np.zeros(n, dtype=np.int64)
    level_of = np.zeros(n, dtype=np.int64)
    per_class = {}
    for cls, members in (("pos", pos), ("neg", neg)):
        groups = level_groups(members, alpha, coins)
        for lvl, g in enumerate(groups, start=1):      # alpha levels
            level_of[g] = lvl
            rows[g] = coins.integers(1 << lvl, (g.size,))
        per_class[cls] = groups
    node = leaves >> (alpha - level_of)
    bit = hadamard_entry(rows, node) * C.keep_sign(n, eps, run_rng.derive("party-randomizers"))
    minus = (bit < 0).astype(np.uint8)                    # the +-1 bit on the wire: 1 for -1
    with net.phase("report"), net.round():
        net.send(net.parties, agg, minus, 1)
        net.send(net.parties, agg, labels, 1)              # public labels, in the clear
    got = 1 - 2 * minus.astype(np.int64)                  # what the aggregator received
    c_const = oracle_constant(eps) ** 2
    est_p = oracle_estimates(per_class["pos"], got, rows, pos.size, alpha, eps)
    est_n = oracle_estimates(per_class["neg"], got, rows, neg.size, alpha, eps)
    v_pos = max(pos.size ** 2 * c_const / g.size for g in per_class["pos"])
    v_neg = max(neg.size ** 2 * c_const / g.size for g in per_class["neg"])
    return est_p, est_n, c_const, v_pos, v_neg


def run_bell_auc(records: ArrayLike, spec: BaselineSpec, *, session: Session | None = None,
                 evaluate: bool = False, runtime: Any = None) -> ProtocolResult:
    """Run Bell et al.'s hierarchical-histogram AUC protocol as ``spec`` (a
    :class:`ustat.specs.BaselineSpec`) says (see the module docstring)."""
    t_start = time.perf_counter()
    kern, eps, t = spec.kern, spec.privacy.epsilon, resolved(spec.encoding.bins)
    threshold, ties = spec.options.threshold, resolved(spec.options.ties)
    bits, frac_bits = resolved(spec.encoding.bits), resolved(spec.encoding.frac_bits)
    X = C.validate_records(records, kern)
    n = X.shape[0]
    alpha = t.bit_length() - 1
    leaves = np.minimum(np.floor(X[:, 0] * t), t - 1).astype(np.int64)
    labels = X[:, 1].astype(np.int64)
    pos, neg = np.flatnonzero(labels == 1), np.flatnonzero(labels == 0)
    if min(pos.size, neg.size) < alpha:
        # the class sizes are not printed (the labels are public to the aggregator in this
        # protocol, not to whoever reads the error)
        raise ValueError(f"bell-auc needs at least alpha = log2(bins) = {alpha} records in each "
                         "class; use fewer --bins")
    session, run_rng = C.open_session(n, session, spec.execution.seed, label="bell-auc-run",
                                      bits=bits, frac_bits=frac_bits, runtime=runtime)
    net = session.net
    agg = net.role("aggregator")
    private = math.isfinite(eps)
    if private:
        est_p, est_n, c_const, v_pos, v_neg = _private_levels(session, run_rng, leaves, labels,
                                                             pos, neg, alpha, eps)
        a = (default_threshold(pos.size, neg.size, alpha, c_const) if threshold is None
             else threshold)
    else:
        with net.phase("report"), net.round():
            got_leaves = net.send(net.parties, agg, leaves, alpha)
            got_labels = net.send(net.parties, agg, labels, 1)
        est_p = exact_levels(got_leaves[got_labels == 1], alpha)
        est_n = exact_levels(got_leaves[got_labels == 0], alpha)
        c_const, v_pos, v_neg, a = 1.0, 0.0, 0.0, 2.0 if threshold is None else threshold
    total, info = uauc(est_p, est_n, pos.size, neg.size, v_pos, v_neg, float(a), ties)
    auc = total / (pos.size * neg.size)
    u_hat = total / math.comb(n, 2)
    theory = {"alpha": alpha, "C": c_const, "v_pos": v_pos, "v_neg": v_neg, "threshold_a": a,
              "mse_bound_thm3_auc": (theorem3_bound(pos.size, neg.size, alpha, c_const, float(a))
                                     / (pos.size * neg.size) ** 2) if private else 0.0,
              "bits_per_party": 2 if private else alpha + 1, **info}
    ev = None
    if evaluate:
        hp = np.bincount(leaves[pos], minlength=t).astype(np.float64)
        hn = np.bincount(leaves[neg], minlength=t).astype(np.float64)
        below = np.concatenate([[0.0], np.cumsum(hn)[:-1]])
        exact = float(hp @ below + (0.5 * hp @ hn if ties == "half" else 0.0))
        Xq = np.column_stack([(leaves + 0.5) / t, labels])
        ev = C.evaluation(kern, X, Xq, u_discretized=exact / math.comb(n, 2))
        ev["auc_discretized"] = exact / (pos.size * neg.size)
    params = {"bins": t, "alpha": alpha, "threshold_a": a, "ties": ties,
              "labels": "public", "message_bits": 2 if private else alpha + 1}
    out = Released(auc, u_hat, params, theory, ev,
                   variance=theory["mse_bound_thm3_auc"],
                   variance_method="variance: Theorem 3's MSE bound on the AUC (public "
                                   "parameters and the class sizes, public in this protocol; an "
                                   "upper bound, so conservative)")
    return build_result(session, spec, kern, out, n=n, dp_model="local", trust=TRUST,
                        t_start=t_start)
