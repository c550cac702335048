"""FedAUC (Sun et al., label-DP AUC in vertical federated learning): FedAUC_RR and FedAUC_Lap.

K clients hold labelled records (score, label); by default every record is
its own client (K = n, our one-record-per-party model); ``clients=K``
assigns the records to K clients, ``partition="iid"`` (uniformly, public
coins) or ``"noniid"`` (contiguous blocks of the score order), as in the
paper's experiments. Scores are *not* private (the paper's threat model:
the server sees them), labels are. Steps, on the simulated network (shared
by both variants, Algorithms 2 and 4):

1. (round 1) every client sends its scores to the server (l-bit fixed point).
2. (round 2) the server ranks all M scores in increasing order (0 .. M-1;
   ties get their mid-rank, so that the formula below counts a tie 1/2, as
   sklearn does) and sends every rank back to its owner (l bits each).
3. (round 3) client k sends localSum_k = sum r_i y_i, localP_k, localN_k
   (three l-bit words), computed from randomized labels (RR) or with noise
   added (Lap).
4. The server sums them: AUC = (globalSum - P(P-1)/2) / (P N), eq. (1).

FedAUC_RR (Algorithms 1-3): each label is flipped with probability
1/(1+e^eps) (exact binary randomized response), and the server debiases the
noisy AUC (Menon et al.): P' = (P(1-rho) - N rho)/(1 - 2 rho), pi' = P'/M,
alpha = (1-pi') rho / (pi'(1-rho) + (1-pi') rho),
beta = pi' rho / (pi' rho + (1-pi')(1-rho)),
AUC = (AUC_noisy - (alpha+beta)/2) / (1 - alpha - beta). epsilon-label-DP.

FedAUC_Lap (Algorithm 4 with the adaptive allocation of Section 5.3): with
u' = mean(r) 1 and v' = r - u' (the ranks of client k split into the part
parallel to the all-ones vector and the orthogonal part), the client
releases localP' = localP + s1 (sensitivity 1, budget beta eps) and
localSum' = mean(r) localP' + <v', y> + s2 (sensitivity |v'|_inf, budget
(1-beta) eps), with beta minimizing the variance of localSum':
beta = a^(2/3) / (a^(2/3) + b^(2/3)) (Laplace), a / (a + b) (Gaussian),
a = mean(r), b = |v'|_inf; a one-record client gets beta = 1 (its localSum
is r localP). ``allocation="fixed"`` is Section 5.2 (eps_sum = alpha eps
with sensitivity max r, eps_P = (1 - alpha) eps).
Noise is exact discrete Laplace (or discrete Gaussian, zCDP converted to
(eps, delta)) on the grid 2^-grid_bits, never floating-point Laplace:
s = 2^-g DLap(scale Delta 2^g / eps). v' is rounded to that grid (the
released localSum is off by at most |Y_k| 2^-(g+1) from the exact one, a
bias below 10^-4 of one rank at g = 14). The per-client beta is rounded
down to a multiple of 1/64 so that clients share few distinct noise scales
(one sampler call per distinct scale).

Cost: per record l bits up (score) and l bits down (rank); 3 l bits per
client up; 3 rounds. Threat model: semi-honest server; it learns every
score and rank in the clear; labels are protected by local label-DP.
"""

from __future__ import annotations

import math
import time
from fractions import Fraction

import numpy as np

from noise.accounting import check_delta, discrete_laplace_scale
from noise.samplers import discrete_gaussian, discrete_laplace, round_scale_up

from . import _common as C
from .result import build_result

TRUST_RR = ("label DP in the local model: each client flips its labels by randomized response "
            "before any statistic leaves it; the scores are NOT protected: the server sees every "
            "score and rank in the clear (the paper's threat model)")
TRUST_LAP = ("label DP in the local model: each client adds exact discrete Laplace (or Gaussian) "
             "noise to its label statistics; the scores are NOT protected: the server sees every "
             "score and rank in the clear (the paper's threat model)")
BETA_STEPS = 64


def midranks(values: np.ndarray) -> np.ndarray:
    """Ranks 0 .. M-1 in increasing order, ties sharing their mean rank (half-integers)."""
    uniq, inverse, counts = np.unique(values, return_inverse=True, return_counts=True)
    start = np.concatenate([[0], np.cumsum(counts)[:-1]])
    return (start + (counts - 1) / 2.0)[inverse]


def assign_clients(scores: np.ndarray, clients, partition: str, coins) -> np.ndarray:
    """owner[i] in [0, K) for every record."""
    M = scores.size
    if clients is None:
        return np.arange(M)
    K = int(clients)
    if partition == "iid":
        order = coins.permutation(M)
    elif partition == "noniid":
        order = np.argsort(scores, kind="stable")
    else:
        raise ValueError(f"partition must be 'iid' or 'noniid', got {partition!r}")
    owner = np.empty(M, dtype=np.int64)
    for k, part in enumerate(np.array_split(order, K)):     # K blocks of the public order
        owner[part] = k
    return owner


def auc_from_sums(global_sum: float, P: float, M: int) -> float:
    """Eq. (1): (globalSum - P(P-1)/2) / (P N), N = M - P."""
    N = M - P
    return (global_sum - P * (P - 1) / 2) / (P * N)


def debias(auc_noisy: float, P_bar: float, N_bar: float, epsilon: float) -> tuple[float, dict]:
    """Algorithm 3: the clean AUC from the noisy one (Menon et al. 2015)."""
    rho = 1.0 / (1.0 + math.exp(epsilon)) if math.isfinite(epsilon) else 0.0
    P_est = (P_bar * (1 - rho) - N_bar * rho) / (1 - 2 * rho)
    M = P_bar + N_bar
    pi = P_est / M
    a = (1 - pi) * rho / (pi * (1 - rho) + (1 - pi) * rho)
    b = pi * rho / (pi * rho + (1 - pi) * (1 - rho))
    return (auc_noisy - (a + b) / 2) / (1 - a - b), {"rho": rho, "P_est": P_est, "pi": pi,
                                                    "alpha": a, "beta": b}


def delta_method_variance(f, mean, cov) -> float:
    """Var f(S, P) ~ grad^T cov grad at the mean (central differences): the formula we test."""
    mean = np.asarray(mean, dtype=np.float64)
    grad = np.empty(2)
    for k in range(2):
        h = 1e-4 * (1.0 + abs(mean[k]))
        e = np.zeros(2)
        e[k] = h
        grad[k] = (f(*(mean + e)) - f(*(mean - e))) / (2 * h)
    return float(grad @ np.asarray(cov) @ grad)


def _exchange(session, owner, X):
    """Rounds 1-2: scores up, mid-ranks down. Returns the ranks the clients hold."""
    net, fp, ring = session.net, session.fp, session.ring
    server = net.role("aggregator")
    with net.phase("scores"), net.round():
        got = net.send(owner, server, fp.encode(X[:, 0]), ring.bits)
    ranks = midranks(fp.decode(got))
    with net.phase("ranks"), net.round():
        back = net.send(np.full(owner.size, server), owner,
                        ring.from_signed((2 * ranks).astype(np.int64)), ring.bits)
    return ring.to_signed(back) / 2.0


def _report(session, stats: np.ndarray):
    """Round 3: every client sends its three statistics (fixed point) to the server."""
    net, fp, ring = session.net, session.fp, session.ring
    with net.phase("statistics"), net.round():
        got = net.send(net.parties, net.role("aggregator"), fp.encode(stats), ring.bits)
    return fp.decode(got).sum(axis=0)


def _setup(records, kernel, protocol, epsilon, clients, partition, seed, session, bits, frac_bits):
    kern = C.check_auc_kernel(kernel, protocol)
    eps = C.check_epsilon(epsilon)
    X = C.validate_records(records, kern)
    M = X.shape[0]
    K = M if clients is None else C.check_int(clients, "clients")
    if K > M:
        raise ValueError(f"clients must be <= the number of records ({M}), got {K}")
    session, run_rng = C.open_session(K, session, seed, label=f"{protocol}-run", bits=bits,
                                      frac_bits=frac_bits)
    owner = assign_clients(X[:, 0], clients, partition, run_rng.derive("partition"))
    return kern, eps, X, owner, K, session, run_rng


def _evaluation(kern, X, fp):
    Xq = np.column_stack([fp.decode(fp.encode(X[:, 0])), X[:, 1]])
    return C.evaluation(kern, X, Xq)


def run_fedauc_rr(records, kernel="auc", *, epsilon=1.0, clients=None, partition: str = "iid",
                  seed=None, session=None, evaluate=False, bits: int = 40, frac_bits: int = 14):
    """FedAUC_RR (Algorithms 1-3): randomized labels, noisy AUC, debiasing."""
    t_start = time.perf_counter()
    kern, eps, X, owner, K, session, run_rng = _setup(records, kernel, "fedauc-rr", epsilon,
                                                      clients, partition, seed, session, bits,
                                                      frac_bits)
    M = X.shape[0]
    y = X[:, 1].astype(np.int64)
    y_flip = C.k_rr(y, 2, eps, run_rng.derive("label-randomizers"))        # Algorithm 1
    ranks = _exchange(session, owner, X)
    stats = np.zeros((K, 3))
    np.add.at(stats, owner, np.column_stack([ranks * y_flip, y_flip, 1 - y_flip]))
    g_sum, P_bar, N_bar = _report(session, stats)
    notes = []
    if P_bar < 1 or N_bar < 1:
        notes.append("all flipped labels fell in one class: the noisy AUC is undefined (nan)")
        auc_noisy = math.nan
    else:
        auc_noisy = auc_from_sums(g_sum, P_bar, M)
    auc, info = debias(auc_noisy, P_bar, N_bar, eps)
    rho = info["rho"]
    n_pos, n_neg = int(y.sum()), int(M - y.sum())
    ey = rho + (1 - 2 * rho) * y
    v = rho * (1 - rho)
    cov = v * np.array([[np.sum(ranks ** 2), np.sum(ranks)], [np.sum(ranks), M]])
    theory = {**info, "auc_noisy": auc_noisy,
              "variance_paper_eq7": (math.exp(eps) / (1 + math.exp(eps)) ** 2
                                     * M * (M - 1) * (2 * M - 1) / 6 / (n_pos * n_neg) ** 2
                                     if math.isfinite(eps) else 0.0),
              "variance_delta_method": delta_method_variance(
                  lambda S, P: debias(auc_from_sums(S, P, M), P, M - P, eps)[0],
                  [ranks @ ey, ey.sum()], cov) if math.isfinite(eps) else 0.0} \
        if session.single_process else {**info, "auc_noisy": auc_noisy}  # variances: all labels
    ev = _evaluation(kern, X, session.fp) if evaluate else None
    params = {"clients": K, "partition": partition if clients is not None else "one record each",
              "flip_probability": rho}
    return build_result(session, protocol="fedauc-rr", kern=kern, estimate=auc, u_hat=None,
                        epsilon=eps, n=M, params=params, dp_model="label-local", trust=TRUST_RR,
                        t_start=t_start, theory=theory, evaluation=ev, notes=notes)


def _allocation(a: np.ndarray, b: np.ndarray, mechanism: str) -> np.ndarray:
    """Section 5.3: the beta minimizing Var(localSum'), rounded down to 1/64 (1 when b = 0)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        if mechanism == "laplace":
            beta = a ** (2 / 3) / (a ** (2 / 3) + b ** (2 / 3))
        else:
            beta = a / (a + b)
    beta = np.where(b == 0, 1.0, np.nan_to_num(beta, nan=1.0))
    q = np.floor(beta * BETA_STEPS) / BETA_STEPS
    q = np.where(b == 0, 1.0, np.clip(q, 1.0 / BETA_STEPS, 1 - 1.0 / BETA_STEPS))
    return q


def _noise(values_grid_sens: np.ndarray, budget: np.ndarray, mechanism: str, eps_total, delta,
           rng) -> tuple[np.ndarray, np.ndarray]:
    """Integer noise (grid units) per client and its variance: DLap(sens/eps_k) or N_Z for rho_k.

    One sampler call per distinct noise scale.

    ``budget`` is the fraction of the total budget each client's query gets.
    Laplace: epsilon_k = budget eps. Gaussian: rho_k = budget rho(eps, delta).
    """
    out = np.zeros(values_grid_sens.size, dtype=np.int64)
    var = np.zeros(values_grid_sens.size)
    active = budget > 0
    keys = np.stack([values_grid_sens, budget], axis=1)
    uniq, inv = np.unique(keys[active], axis=0, return_inverse=True)
    idx = np.flatnonzero(active)
    if mechanism == "laplace":
        for j, (sens, frac) in enumerate(uniq):          # one call per distinct noise scale
            sel = idx[inv.ravel() == j]
            scale = discrete_laplace_scale(float(sens), eps_total * float(frac))
            out[sel] = discrete_laplace(scale, (sel.size,), rng)
            a = math.exp(-1 / float(scale))
            var[sel] = 2 * a / (1 - a) ** 2
    else:
        L = math.log(1 / delta)
        rho = (math.sqrt(L + eps_total) - math.sqrt(L)) ** 2
        for j, (sens, frac) in enumerate(uniq):
            sel = idx[inv.ravel() == j]
            sigma2 = round_scale_up(Fraction(float(sens) ** 2 / (2 * rho * float(frac))))
            out[sel] = discrete_gaussian(sigma2, (sel.size,), rng)
            var[sel] = float(sigma2)
    return out, var


def _client_statistics(owner, ranks, y, K, gamma, allocation, alpha, mechanism, eps, delta,
                       rng):
    """Each client's (localSum', localP') and the noise covariance of their sums (Section 5)."""
    size = np.bincount(owner, minlength=K).astype(np.float64)
    local_p = np.bincount(owner, weights=y, minlength=K)
    local_sum = np.bincount(owner, weights=ranks * y, minlength=K)
    finite = math.isfinite(eps)
    zeros = (np.zeros(K, dtype=np.int64), np.zeros(K))
    if allocation == "fixed":                                   # Section 5.2
        r_max = np.zeros(K)
        np.maximum.at(r_max, owner, ranks)
        (s1, v1), (s2, v2) = zeros, zeros
        if finite:
            s1, v1 = _noise(np.full(K, 1.0 / gamma), np.full(K, 1 - alpha), mechanism, eps,
                            delta, rng)
            s2, v2 = _noise(np.maximum(r_max, 0.5) / gamma, np.full(K, alpha), mechanism, eps,
                            delta, rng)
        cov = gamma ** 2 * np.array([[np.sum(v2), 0.0], [0.0, np.sum(v1)]])
        return local_sum + gamma * s2, local_p + gamma * s1, size, cov, {"alpha": alpha}
    mean_r = np.bincount(owner, weights=ranks, minlength=K) / size   # Section 5.3
    vq = np.rint((ranks - mean_r[owner]) / gamma)                      # v' on the grid (units)
    bq = np.zeros(K)
    np.maximum.at(bq, owner, np.abs(vq))
    q2 = np.bincount(owner, weights=vq * y, minlength=K)               # <v', y> in grid units
    beta = _allocation(mean_r, bq * gamma, mechanism)
    (s1, v1), (s2, v2) = zeros, zeros
    if finite:
        s1, v1 = _noise(np.full(K, 1.0 / gamma), beta, mechanism, eps, delta, rng)
        s2, v2 = _noise(np.where(bq > 0, bq, 1.0), np.where(bq > 0, 1 - beta, 0.0), mechanism,
                        eps, delta, rng)
    p_rel = local_p + gamma * s1
    # privacy off: the exact statistics (no rounding of v' to the grid)
    sum_rel = mean_r * p_rel + gamma * (q2 + s2) if finite else local_sum
    cov = gamma ** 2 * np.array([[np.sum(mean_r ** 2 * v1 + v2), np.sum(mean_r * v1)],
                                 [np.sum(mean_r * v1), np.sum(v1)]])
    return sum_rel, p_rel, size, cov, {"beta_mean": float(beta.mean()),
                                       "beta_min": float(beta.min())}


def run_fedauc_lap(records, kernel="auc", *, epsilon=1.0, mechanism: str = "laplace",
                   delta: float = 1e-6, allocation: str = "adaptive", alpha: float = 0.5,
                   grid_bits: int = 14, clients=None, partition: str = "iid", seed=None,
                   session=None, evaluate=False, bits: int = 40, frac_bits: int = 14):
    """FedAUC_Lap (Algorithm 4, Section 5.3): noisy label statistics, adaptive budget allocation."""
    t_start = time.perf_counter()
    if mechanism not in ("laplace", "gaussian"):
        raise ValueError(f"mechanism must be 'laplace' or 'gaussian', got {mechanism!r}")
    if allocation not in ("adaptive", "fixed"):
        raise ValueError(f"allocation must be 'adaptive' or 'fixed', got {allocation!r}")
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must be in (0, 1), got {alpha!r}")
    g = C.check_int(grid_bits, "grid_bits", lo=1)
    kern, eps, X, owner, K, session, run_rng = _setup(records, kernel, "fedauc-lap", epsilon,
                                                      clients, partition, seed, session, bits,
                                                      frac_bits)
    if mechanism == "gaussian" and math.isfinite(eps):
        check_delta(delta)
    M = X.shape[0]
    y = X[:, 1].astype(np.int64)
    ranks = _exchange(session, owner, X)
    gamma = 2.0 ** -g
    sum_rel, p_rel, size, cov, theory_alloc = _client_statistics(
        owner, ranks, y, K, gamma, allocation, alpha, mechanism, eps, delta,
        run_rng.derive("client-noise"))
    g_sum, P_bar, N_bar = _report(session, np.column_stack([sum_rel, p_rel, size - p_rel]))
    notes = []
    if not 0 < P_bar < M:
        notes.append("the noisy positive count fell outside (0, M): the AUC is undefined (nan)")
        auc = math.nan
    else:
        auc = auc_from_sums(g_sum, P_bar, M)
    n_pos, n_neg = int(y.sum()), int(M - y.sum())
    theory = {**theory_alloc, "grid": gamma, "mechanism": mechanism,
              "variance_delta_method": delta_method_variance(
                  lambda S, P: auc_from_sums(S, P, M), [ranks @ y, float(n_pos)], cov),
              "variance_paper_eq9_one_record": (K * (K - 1) * (2 * K - 1) / 3
                                                / (n_pos * n_neg) ** 2 / eps ** 2
                                                if math.isfinite(eps) else 0.0)} \
        if session.single_process else {**theory_alloc, "grid": gamma, "mechanism": mechanism}
    ev = _evaluation(kern, X, session.fp) if evaluate else None
    params = {"clients": K, "partition": partition if clients is not None else "one record each",
              "mechanism": mechanism, "allocation": allocation, "grid_bits": g,
              "delta": delta if mechanism == "gaussian" else 0.0}
    return build_result(session, protocol="fedauc-lap", kern=kern, estimate=auc, u_hat=None,
                        epsilon=eps, delta=params["delta"], n=M, params=params,
                        dp_model="label-local", trust=TRUST_LAP, t_start=t_start, theory=theory,
                        evaluation=ev, notes=notes)


def planned_delta(records, kernel="auc", *, epsilon=1.0, mechanism: str = "laplace",
                  delta: float = 1e-6, **_) -> float:
    """The delta :func:`run_fedauc_lap` will report: ``delta`` for the Gaussian mechanism at a
    finite epsilon, else 0 (discrete Laplace is pure DP)."""
    gaussian = mechanism == "gaussian" and math.isfinite(float(epsilon))
    return float(check_delta(delta)) if gaussian else 0.0
