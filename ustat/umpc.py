"""Protocol 3.1 (Pi_U-MPC) of Sinh and Ramon: a DP U-statistic of any degree k >= 2.

n parties hold one record each. For a hypergraph E of k-subsets of the
parties (:mod:`ustat.sampling`), the protocol releases

    U_hat = (sum over e in E of f(x_e) + eta) / |E|

where eta is discrete Laplace noise of scale delta_max * Delta f / epsilon
(delta_max: the largest number of edges a party belongs to; Delta f: the
kernel's range), so that U_hat is epsilon-DP with respect to replacing one
party's record.

Steps, all on the simulated network (:class:`mpc.session.Session`), which
counts every bit:

1. *Sharing* (online, 1 round): for every edge e and member j, party e_j
   splits each of its d input columns into k additive shares in Z_2^l and
   sends one to every other member: |E| k (k-1) d l bits.
2. *Computing* (online; the kernel's gate and Beaver rounds): the kernel's
   secure evaluation (:mod:`ustat.kernels`) on all edges at once, streamed in
   chunks of edges that run as parallel lanes (their rounds counted once).
   Each member ends with a share of f(x_e); for k > 2 nothing about f(x_e) is
   revealed unless all k members collude. FSS keys and Beaver triples come
   from the trusted dealer (offline traffic, counted apart).
3. *Noise* (threat model dependent, see :mod:`noise.distributed`):
   ``"dis"`` (M_Dis, default: up to n-1 corrupted parties) runs Pi_DLap,
   n^2 l bits; ``"hf"`` (M_HF: at most a 1 - f_H fraction corrupted) has a
   random committee draw the noise, O(n l) bits.
4. *Aggregation* (online, 1 round): every party sends the sum of its shares
   plus its noise share to the aggregator (n l bits), who releases the sum
   divided by |E|.

Kernels with auxiliary sums (the class counts of the AUC and VUS) aggregate
them in the same round with their own discrete Laplace noise and a share of
epsilon (``aux_epsilon_fraction``); the released statistic is the kernel's
post-processing of the noisy sums.

Threat model: static semi-honest adversary, private authenticated channels,
trusted dealer for preprocessing. Inputs stay hidden from any coalition
allowed by the threat model; the release is DP against the aggregator. A
coalition that colludes with the aggregator can subtract its members' own
noise contributions, so its DP guarantee rests on the honest parties' share
of the noise (see :mod:`noise.distributed`).
"""

from __future__ import annotations

import math
import numbers
import sys
import time
from dataclasses import asdict, dataclass, field
from typing import Optional

import numpy as np

from mpc.session import Session
from mpc.sharing import additive_share

from . import kernels as kernel_registry
from . import sampling
from .secure import SecureOps

THREAT_MODELS = ("dis", "hf")
DEFAULT_THREAT_MODEL = "dis"
DEFAULT_CHUNK = 1 << 17
#: Pi_DLap sends n^2 ring elements; above this n it is refused (use "hf").
PIDLAP_MAX_PARTIES = 20_000


@dataclass
class UMPCResult:
    """What one run of the protocol releases and what it cost."""

    kernel: str
    statistic: str
    estimate: float                 # the released statistic (after post-processing)
    u_hat: float                    # the noisy incomplete U-statistic
    epsilon: float
    n: int
    edges: int
    degree: int
    max_degree: int
    sampler: str
    threat_model: str
    sensitivity: float              # delta_max * Delta f (of the sum)
    noise_scale: float              # Laplace-like scale of eta in the statistic's units
    aux: dict
    online_bits: int
    offline_bits: int
    rounds: int
    max_party_bits: int
    mean_party_bits: float
    seconds: float
    insecure_seed: bool
    communication: dict
    evaluation: Optional[dict] = None
    notes: list = field(default_factory=list)

    def to_dict(self) -> dict:
        return asdict(self)


def _check_epsilon(epsilon) -> float:
    if isinstance(epsilon, bool) or not isinstance(epsilon, numbers.Real):
        raise TypeError(f"epsilon must be a positive number or inf, got {epsilon!r}")
    eps = float(epsilon)
    if math.isnan(eps) or eps <= 0:
        raise ValueError(f"epsilon must be > 0 (or inf for no noise), got {epsilon}")
    return eps


def resolve_edges(edges, n: int, k: int) -> Optional[int]:
    """Number of edges from ``"2n"``-style multiples, an int, or ``"all"`` (None)."""
    total = math.comb(n, k)
    if isinstance(edges, str):
        text = edges.strip().lower()
        if text == "all":
            return None
        if text.endswith("n"):
            coef = text[:-1] or "1"
            try:
                m = int(round(float(coef) * n))
            except (ValueError, OverflowError):
                raise ValueError(f"edges must be like '2n', an integer or 'all', got {edges!r}") from None
        else:
            try:
                m = int(text)
            except ValueError:
                raise ValueError(f"edges must be like '2n', an integer or 'all', got {edges!r}") from None
    elif isinstance(edges, numbers.Integral) and not isinstance(edges, bool):
        m = int(edges)
    else:
        raise TypeError(f"edges must be like '2n', an integer or 'all', got {edges!r}")
    if m < 1:
        raise ValueError(f"edges must be >= 1, got {m}")
    if m > total:
        raise ValueError(f"edges={m} exceeds the number of {k}-subsets of {n} records ({total})")
    return m


def encode_records(session: Session, records: np.ndarray, kernel) -> np.ndarray:
    """Ring encoding of the records: fixed point, categorical columns as integers."""
    enc = np.empty(records.shape, dtype=np.uint64)
    for c in range(records.shape[1]):
        col = records[:, c]
        if c in kernel.categorical:
            if not np.all(col == np.round(col)):
                raise ValueError(f"categorical column {c} must hold integer codes")
            enc[:, c] = session.ring.from_signed(col.astype(np.int64))
        else:
            enc[:, c] = session.fp.encode(col)
    return enc


def decode_records(session: Session, enc: np.ndarray, kernel) -> np.ndarray:
    """The real values the protocol actually computes on (fixed-point rounded)."""
    out = np.empty(enc.shape, dtype=np.float64)
    for c in range(enc.shape[1]):
        if c in kernel.categorical:
            out[:, c] = session.ring.to_signed(enc[:, c]).astype(np.float64)
        else:
            out[:, c] = session.fp.decode(enc[:, c])
    return out


def _validate_records(records, kernel) -> np.ndarray:
    X = np.asarray(records)
    if X.ndim == 1 and kernel.columns == 1:
        X = X[:, None]
    if X.ndim != 2 or X.shape[1] != kernel.columns:
        raise ValueError(
            f"kernel {kernel.name!r} needs records with {kernel.columns} column(s), "
            f"got shape {np.shape(records)}"
        )
    if X.dtype.kind not in "fiub":
        raise TypeError(f"records must be numeric, got dtype {X.dtype}")
    X = X.astype(np.float64)
    bad = ~np.isfinite(X)
    if bad.any():
        row, col = np.argwhere(bad)[0]
        raise ValueError(f"records must be finite: row {row}, column {col} is {X[row, col]}")
    if X.shape[0] < kernel.degree:
        raise ValueError(f"need at least k={kernel.degree} records, got {X.shape[0]}")
    # the kernel's range (hence the DP sensitivity) assumes these domains
    levels = kernel.extra.get("levels", {})
    for c in range(X.shape[1]):
        col = X[:, c]
        if c in kernel.categorical:
            bad = np.flatnonzero(col != np.round(col))
            if bad.size:
                raise ValueError(f"records: categorical column {c} needs integer codes, "
                                 f"row {bad[0]} is {col[bad[0]]}")
            if c in levels:
                bad = np.flatnonzero((col < 0) | (col >= levels[c]))
                if bad.size:
                    raise ValueError(f"records: column {c} of kernel {kernel.name!r} must hold "
                                     f"codes 0..{levels[c] - 1}, row {bad[0]} is {col[bad[0]]}")
        else:
            bad = np.flatnonzero((col < 0) | (col > 1))
            if bad.size:
                raise ValueError(f"records: numeric column {c} must be normalized to [0, 1] "
                                 f"with public bounds (ustat.data.normalize), row {bad[0]} is "
                                 f"{col[bad[0]]}")
    return X


class _Progress:
    def __init__(self, total: int, enabled: bool, label: str = "edges"):
        self.total, self.enabled, self.label = total, enabled, label
        self.t0 = time.perf_counter()

    def update(self, done: int):
        if not self.enabled:
            return
        frac = done / self.total if self.total else 1.0
        bar = "#" * int(30 * frac)
        el = time.perf_counter() - self.t0
        sys.stderr.write(f"\r[{bar:<30}] {done}/{self.total} {self.label}  {el:6.1f}s")
        sys.stderr.flush()
        if done >= self.total:
            sys.stderr.write("\n")


def run_umpc(records, kernel, *, epsilon=1.0, edges="2n", sampler="balanced",
             threat_model: str = DEFAULT_THREAT_MODEL, session: Optional[Session] = None,
             seed=None, bits: int = 40, frac_bits: int = 14, chunk_size: int = DEFAULT_CHUNK,
             evaluate=False, progress: bool = False, hypergraph=None,
             fail: float = 2.0**-40, f_h: float = 0.5, aux_epsilon_fraction: float = 0.1,
             record_views: bool = False) -> UMPCResult:
    """Run Protocol 3.1 and return the release with its measured costs.

    Parameters
    ----------
    records : (n, d) array, numeric columns normalized to [0, 1] (public
        bounds), categorical columns as integer codes.
    kernel : a registered kernel name or a :class:`ustat.kernels.Kernel`.
    epsilon : the DP budget (> 0); ``math.inf`` releases without noise
        (evaluation only: not private).
    edges : ``"2n"`` (default), ``"<c>n"``, an integer, or ``"all"``.
    sampler : ``"balanced"`` (BalancedSamp, default), ``"uniform"``,
        ``"bernoulli"``, or ``"all"``.
    threat_model : ``"dis"`` (M_Dis, Pi_DLap, default) or ``"hf"`` (M_HF,
        committee noise with parameters ``fail`` and ``f_h``).
    session : an existing :class:`mpc.session.Session` with n parties (else
        one is made from ``seed``, ``bits``, ``frac_bits``).
    evaluate : also compute the exact incomplete and complete U-statistics
        on the encoded inputs (tests and experiments only: it reads every
        record in the clear); ``"incomplete"`` skips the complete one.
    hypergraph : a precomputed :class:`ustat.sampling.Hypergraph`.

    Cost: see the module docstring; every figure in the result is measured.
    """
    t_start = time.perf_counter()
    kern = kernel_registry.get(kernel)
    X = _validate_records(records, kern)
    n, k = X.shape[0], kern.degree
    eps = _check_epsilon(epsilon)
    if threat_model not in THREAT_MODELS:
        raise ValueError(f"threat_model must be one of {THREAT_MODELS}, got {threat_model!r}")
    if isinstance(chunk_size, bool) or not isinstance(chunk_size, numbers.Integral) or chunk_size < 1:
        raise ValueError(f"chunk_size must be a positive integer, got {chunk_size!r}")
    if not 0 < aux_epsilon_fraction < 1:
        raise ValueError(f"aux_epsilon_fraction must be in (0, 1), got {aux_epsilon_fraction}")
    if math.isfinite(eps) and threat_model == "dis" and n > PIDLAP_MAX_PARTIES:
        raise ValueError(
            f"threat model 'dis' (Pi_DLap) sends n^2 = {n * n:.3g} ring elements for n = {n}; "
            f"use threat_model='hf' (committee noise) above {PIDLAP_MAX_PARTIES} parties"
        )
    if session is None:
        session = Session(n, bits=bits, frac_bits=frac_bits, seed=seed,
                          record_views=record_views)
    elif session.n_parties != n:
        raise ValueError(f"session has {session.n_parties} parties but there are {n} records")
    ring, net = session.ring, session.net
    # a fresh stream per run (a nonce from the session's stream): two runs on
    # one session never reuse masks or shares
    run_rng = session.rng.derive("umpc-run", session.rng.random_bytes(16))

    # -- hypergraph ----------------------------------------------------------------
    if hypergraph is None:
        if sampler == "all":
            hypergraph = sampling.all_edges(n, k)
        else:
            m = resolve_edges(edges, n, k)
            if m is None:
                hypergraph = sampling.all_edges(n, k)
            else:
                hypergraph = sampling.sample(sampler, n, m, k, run_rng.derive("hypergraph"))
    E = np.asarray(hypergraph.edges, dtype=np.int64)
    if E.ndim != 2 or E.shape[1] != k:
        raise ValueError(f"hypergraph edges must have shape (m, {k}), got {E.shape}")
    m = E.shape[0]
    if m == 0:
        raise ValueError("the hypergraph has no edges (a Bernoulli sample can be empty): "
                         "ask for more edges")
    if E.min() < 0 or E.max() >= n:
        raise ValueError(f"hypergraph edges must hold party ids in 0..{n - 1}")
    Es = np.sort(E, axis=1)
    if np.any(Es[:, 1:] == Es[:, :-1]):
        raise ValueError("hypergraph edges must have k distinct members")
    degrees = np.bincount(E.ravel(), minlength=n)
    delta_max = int(degrees.max())

    _check_no_wrap(session, kern, m, n, delta_max, eps, aux_epsilon_fraction)
    enc = encode_records(session, X, kern)
    d = X.shape[1]
    z = np.zeros(n, dtype=np.uint64)            # each party's running sum of shares
    share_rng = run_rng.derive("input-sharing")
    n_chunks = -(-m // chunk_size)
    bar = _Progress(m, progress and n_chunks > 1)

    # -- sharing + computing, streamed over chunks of edges (parallel lanes) --------
    with net.parallel():
        for ci in range(n_chunks):
            Ec = E[ci * chunk_size:(ci + 1) * chunk_size]
            mc = Ec.shape[0]
            holders = Ec.T                                     # (k, mc)
            with net.lane():
                with net.phase("sharing"), net.round():
                    # S[j, i, c, e]: member j's share of column c of member i of edge e
                    vals = enc[Ec]                                 # (mc, k, d)
                    S = additive_share(ring, np.moveaxis(vals, 0, -1), k, share_rng)
                    for i in range(k):
                        for j in range(k):
                            if i != j:
                                net.send(Ec[:, i], Ec[:, j], S[j, i].T, ring.bits)
                with net.phase("computing"):
                    ops = SecureOps(session, holders)
                    x = [[S[:, i, c, :] for c in range(d)] for i in range(k)]
                    out = kern.secure(ops, x)
                    if out.shape != (k, mc) or out.dtype != np.uint64:
                        raise ValueError(
                            f"kernel {kern.name!r} secure evaluation returned {out.shape} "
                            f"{out.dtype}, expected ({k}, {mc}) uint64 shares"
                        )
                for j in range(k):
                    np.add.at(z, Ec[:, j], out[j])
            bar.update(min(m, (ci + 1) * chunk_size))
    z &= ring.mask

    # -- noise ------------------------------------------------------------------------
    sens_sum = delta_max * kern.sensitivity
    aux_values = kern.aux(X) if kern.aux is not None else np.zeros((n, 0))
    n_aux = aux_values.shape[1]
    eps_u, eps_aux = eps, 0.0
    if n_aux and math.isfinite(eps):
        eps_aux = eps * aux_epsilon_fraction
        eps_u = eps - eps_aux
    noise_info = {}
    aux_z = np.zeros((n, n_aux), dtype=np.uint64)
    if n_aux:
        aux_z[:] = _mask_aux(session, session.fp.encode(aux_values), run_rng)
    if math.isfinite(eps):
        from noise.distributed import shared_dlap_noise

        with net.phase("noise"):
            noise = shared_dlap_noise(session, eps_u, sens_sum, threat_model=threat_model,
                                      fail=fail, f_h=f_h)
            z[noise.parties] = ring.add(z[noise.parties], noise.shares)
            noise_info["u"] = _noise_summary(noise)
            for a in range(n_aux):
                nz = shared_dlap_noise(session, eps_aux, kern.aux_sensitivity,
                                       threat_model=threat_model, fail=fail, f_h=f_h)
                aux_z[nz.parties, a] = ring.add(aux_z[nz.parties, a], nz.shares)
                noise_info[kern.aux_names[a]] = _noise_summary(nz)

    # -- aggregation ----------------------------------------------------------------
    aggregator = net.role("aggregator")
    with net.phase("aggregation"):
        payload = np.concatenate([z[:, None], aux_z], axis=1)
        net.send(net.parties, aggregator, payload, ring.bits)
        totals = ring.sum(payload, axis=0)
    u_hat = float(session.fp.decode(totals[0])) / m
    aux_sums = [float(session.fp.decode(t)) for t in totals[1:]]
    estimate = kern.release(u_hat, aux_sums, n)

    evaluation = None
    if evaluate:
        Xq = decode_records(session, enc, kern)
        vals = np.concatenate([kern.plain(Xq[E[i:i + chunk_size]])
                               for i in range(0, m, chunk_size)])
        u_inc = float(vals.mean())
        u_com = None if evaluate == "incomplete" else kernel_registry.complete_u(kern, Xq)
        exact_aux = list(aux_values.sum(axis=0)) if n_aux else []
        evaluation = {
            "u_incomplete": u_inc,
            "u_complete": u_com,
            "statistic_incomplete": kern.release(u_inc, exact_aux, n),
            "statistic_complete": None if u_com is None else kern.release(u_com, exact_aux, n),
            "aux_exact": exact_aux,
        }

    rep = net.report()
    notes = []
    if not math.isfinite(eps):
        notes.append("epsilon = inf: no noise was added; the release is NOT differentially private")
    if session.insecure:
        notes.append("seeded run: randomness is reproducible and NOT secure")
    if any(not info["exact"] for info in noise_info.values()):
        notes.append("noise: a component was not drawn by an exact integer sampler, so "
                     "its distribution is approximate")
    return UMPCResult(
        kernel=kern.name, statistic=kern.statistic, estimate=float(estimate), u_hat=u_hat,
        epsilon=eps, n=n, edges=m, degree=k, max_degree=delta_max, sampler=hypergraph.name,
        threat_model=threat_model, sensitivity=sens_sum,
        noise_scale=(sens_sum / eps_u / m) if math.isfinite(eps) else 0.0,
        aux={"names": list(kern.aux_names), "noisy_sums": aux_sums, "epsilon": eps_aux,
             "noise": noise_info},
        online_bits=rep["online"]["bits"], offline_bits=rep["offline"]["bits"],
        rounds=rep["online"]["rounds"], max_party_bits=rep["online"]["max_party_bits"],
        mean_party_bits=rep["online"]["mean_party_bits"],
        seconds=time.perf_counter() - t_start, insecure_seed=session.insecure,
        communication=rep, evaluation=evaluation, notes=notes,
    )


def _check_no_wrap(session, kern, m, n, delta_max, eps, aux_fraction):
    """Refuse runs whose aggregate could wrap mod 2^l (the release would be wrong).

    Bound: |sum of kernel values| <= m max(|lo|, |hi|) 2^c, plus a discrete
    Laplace tail of 28 scales (probability below 2^-40); aux sums <= n 2^c
    (values in [0, 1]) plus their noise tail. Must stay below 2^(l-1).
    """
    scale = session.fp.scale
    lo, hi = kern.output_range
    bound = m * max(abs(lo), abs(hi)) * scale
    aux_bound = n * scale if kern.aux is not None else 0.0
    if math.isfinite(eps):
        eps_u = eps * (1 - aux_fraction) if kern.aux is not None else eps
        bound += 28 * delta_max * kern.sensitivity * scale / eps_u
        if kern.aux is not None:
            aux_bound += 28 * kern.aux_sensitivity * scale / (eps * aux_fraction)
    limit = float(1 << (session.ring.bits - 1))
    if max(bound, aux_bound) >= limit:
        raise ValueError(
            f"the aggregate could wrap around mod 2^{session.ring.bits} (|sum| up to "
            f"{max(bound, aux_bound):.3g} ring units >= 2^{session.ring.bits - 1}): use more ring "
            f"bits, fewer fractional bits, fewer edges or a larger epsilon")


def _mask_aux(session: Session, values: np.ndarray, rng) -> np.ndarray:
    """2-of-2 share each party's aux values with its successor on a random cycle.

    Party i keeps v_i - r_i and sends r_i to its successor (one round in the
    sharing phase, n * a * l bits), so the value each party sends to the
    aggregator is uniform unless it colludes with its predecessor. The cycle
    is public (drawn from the session's randomness).
    """
    n = values.shape[0]
    ring, net = session.ring, session.net
    order = rng.derive("aux-cycle").permutation(n)
    succ = np.empty(n, dtype=np.int64)
    succ[order] = np.roll(order, -1)
    r = rng.derive("aux-masks").ring_elements(ring, values.shape)
    with net.phase("sharing"):
        net.send(np.arange(n), succ, r, ring.bits)
    out = ring.sub(values, r)
    np.add.at(out, succ, r)
    return out & ring.mask


def _noise_summary(noise) -> dict:
    """The accounting of one noise draw, as JSON-friendly values."""
    out = {"distribution": noise.distribution, "scale_ring_units": float(noise.scale),
           "epsilon": float(noise.epsilon), "sensitivity": float(noise.sensitivity),
           "threat_model": noise.threat_model, "exact": bool(noise.exact)}
    if noise.committee is not None:
        out["committee_size"] = int(np.size(noise.committee))
    return out
