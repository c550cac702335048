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

Steps 3-4 on the ranks are :func:`rr_release` and :func:`lap_release`
(:mod:`.fedauc_release`): the same code, callable without the network for
Monte Carlo studies of the release (the experiments), with the ranks the
server computes (:func:`ranks_of`).

FedAUC_RR (Algorithms 1-3): each label is flipped with probability
1/(1+e^eps) (exact binary randomized response), and the server debiases the
noisy AUC (Menon et al., Algorithm 3). epsilon-label-DP.

FedAUC_Lap (Algorithm 4): ``allocation`` is

* ``"adaptive"`` (Section 5.3, default): the ranks of client k split into
  u' = mean(r) 1 and v' = r - u'; localP' = localP + s1 (sensitivity 1,
  budget beta eps), localSum' = mean(r) localP' + <v', y> + s2 (sensitivity
  |v'|_inf, budget (1-beta) eps), beta minimizing Var(localSum'):
  a^(2/3) / (a^(2/3) + b^(2/3)) (Laplace), a / (a + b) (Gaussian), a = mean(r),
  b = |v'|_inf, rounded down to 1/64; a one-record client gets beta = 1;
* ``"orthogonal"``: the same decomposition with one ``beta`` for every client
  (the paper's "Orthogonal" of Figs. 1c and 6);
* ``"fixed"``: Section 5.2, the paper's LocalLaplace ("Naive" in Fig. 1c):
  eps_localSum = alpha eps with sensitivity max_i r_i of the client,
  eps_localP = (1 - alpha) eps;
* ``"global"``: the paper's GlobalLaplace (Section 6.2.2): as ``"fixed"`` but
  every client uses the sensitivity M - 1.

``exact_counts=True`` (``"fixed"`` and ``"global"`` only) is the analysis
setting of the paper's Table 2 and eqs. (8)-(9): localP is released exactly
and the whole epsilon goes to localSum. The positive count is then NOT
private (the result says so); it exists to reproduce that table.
Noise is exact discrete Laplace (or discrete Gaussian, zCDP converted to
(eps, delta)) on the grid 2^-grid_bits (rank units), never floating-point
Laplace: s = 2^-g DLap(scale Delta 2^g / eps), one batched draw for all
clients (each scale rounded up by at most a relative 2^-23). v' is rounded
to that grid (the released localSum is off by at most |Y_k| 2^-(g+1) from
the exact one, a bias below 10^-4 of one rank at g = 14). The adaptive beta
is rounded down to a multiple of 1/64.

Cost: per record l bits up (score) and l bits down (rank); 3 l bits per
client up; 3 rounds. The ring width l is 40 bits, or wider when the rank sums
of M records need it (:func:`ring_bits`: 49 bits at M = 10^5). Threat model:
semi-honest server; it learns every score and rank in the clear; labels are
protected by local label-DP.

What the result reports beside the AUC (``theory``) is post-processing of the released
sums (globalSum, P, N), the ranks (public in this model) and public parameters only: the
paper's variance formulas take the released (debiased, for RR) positive count where the
paper writes the true P, and the delta method is evaluated at the released sums. No field
is computed from the true labels or class counts (issue 37: they could be solved for the
exact positive count). An empty class is therefore not a special case: it is private, so
it is neither checked nor refused (a refusal would reveal it); the clients draw their
noise, the run is charged, and the release is whatever the noisy sums give (nan with a
note when the noisy positive count falls outside (0, M)).
"""

from __future__ import annotations

import math
import time
from typing import TYPE_CHECKING, Any

import numpy as np

from noise.accounting import check_delta

from . import _common as C  # noqa: N812 - the codebase's short capital module alias
from .fedauc_release import (  # noqa: F401 - BETA_STEPS, delta_method_variance: re-exported
    ALLOCATIONS,
    BETA_STEPS,
    LapNoise,
    adaptive_betas,
    auc_from_sums,
    debias,
    delta_method_variance,
    lap_release,
    lap_statistics,
    rr_release,
    rr_statistics,
)
from .options import FRAC_BITS, Option, boolean, choice, integer, optional_integer, real, resolved
from .result import Released, build_result

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

    from mpc.arith.rng import CSPRNG
    from mpc.session import Session

    from .result import ProtocolResult
    from .spec import BaselineSpec

__all__ = [
    "ALLOCATIONS",
    "OPTIONS_LAP",
    "OPTIONS_RR",
    "TRUST_LAP",
    "TRUST_RR",
    "LapNoise",
    "across_processes",
    "adaptive_betas",
    "assign_clients",
    "auc_from_sums",
    "check_lap",
    "debias",
    "lap_release",
    "lap_statistics",
    "midranks",
    "planned_delta",
    "ranks_of",
    "ring_bits",
    "rr_release",
    "rr_statistics",
    "run_fedauc_lap",
    "run_fedauc_rr",
]

TRUST_RR = ("label DP in the local model: each client flips its labels by randomized response "
            "before any statistic leaves it; the scores are NOT protected: the server sees every "
            "score and rank in the clear (the paper's threat model)")
TRUST_LAP = ("label DP in the local model: each client adds exact discrete Laplace (or Gaussian) "
             "noise to its label statistics; the scores are NOT protected: the server sees every "
             "score and rank in the clear (the paper's threat model)")
#: the options of both variants (:class:`ustat.specs.BaselineSpec` fields)
_CLIENTS = (Option("clients", None, optional_integer("clients"), None,
                   "K clients holding the records (None: every record its own client)"),
            Option("partition", "iid", choice("partition", ("iid", "noniid")), None,
                   "how records go to the K clients: iid (public coins) or noniid (score "
                   "order)"),
            Option("bits", None, lambda b: None if b is None else integer("bits", 2, 64)(b),
                   "--bits", "ring bits l (None: the smallest >= 40 the rank sums need)"),
            FRAC_BITS)
OPTIONS_RR = _CLIENTS
OPTIONS_LAP = (Option("mechanism", "laplace", choice("mechanism", ("laplace", "gaussian")),
                      "--mechanism", "discrete Laplace (pure DP) or Gaussian noise"),
               Option("delta", 1e-6, real("delta"), "--delta",
                      "the Gaussian mechanism's delta"),
               Option("allocation", "adaptive", choice("allocation", ALLOCATIONS), None,
                      "the budget allocation (Sections 5.2-6.2)"),
               Option("alpha", 0.5, real("alpha"), None,
                      "fixed, global: epsilon share of localSum"),
               Option("beta", 0.5, real("beta"), None, "orthogonal: epsilon share of localP"),
               Option("exact_counts", False, boolean("exact_counts"), None,
                      "the paper's Table 2 setting: localP released exactly (NOT private)"),
               Option("grid_bits", 14, integer("grid_bits"), None,
                      "the noise grid 2^-grid_bits (rank units)"),
               *_CLIENTS)
TRUST_EXACT = ("NOT label-DP as a whole: localP is released exactly (the paper's Table 2 analysis "
               "setting, 'accurate P and N'); only localSum carries noise; scores are seen by the "
               "server in the clear")


def midranks(values: np.ndarray) -> np.ndarray:
    """Ranks 0 .. M-1 in increasing order, ties sharing their mean rank (half-integers)."""
    _, inverse, counts = np.unique(values, return_inverse=True, return_counts=True)
    start = np.concatenate([[0], np.cumsum(counts)[:-1]])
    return (start + (counts - 1) / 2.0)[inverse]


def ranks_of(scores: ArrayLike, frac_bits: int = 14) -> np.ndarray:
    """The mid-ranks the server computes in step 2: of the scores at ``frac_bits`` fixed point.

    Scores travel as l-bit fixed point with ``frac_bits`` fractional bits, so
    scores closer than 2^-frac_bits may tie; these are the ranks every client
    holds after round 2 (the tests check it against the protocol).
    """
    s = np.asarray(scores, dtype=np.float64).reshape(-1)
    return midranks(np.round(s * 2.0 ** frac_bits))


def assign_clients(scores: np.ndarray, clients: int | None, partition: str,
                   coins: CSPRNG) -> np.ndarray:
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
    q, r = divmod(M, K)                 # K blocks of the public order, as np.array_split
    sizes = np.full(K, q, dtype=np.int64)
    sizes[:r] += 1
    owner = np.empty(M, dtype=np.int64)
    owner[order] = np.repeat(np.arange(K), sizes)
    return owner


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


def ring_bits(M: int, frac_bits: int, bits: int | None = None) -> int:
    """The ring width l: ``bits`` if given (checked), else the smallest l >= 40 that carries
    every statistic exactly (a localSum is at most M (M - 1) / 2 ranks, with ``frac_bits``
    fractional bits and a sign, plus a margin of one bit for the noise)."""
    need = (M * (M - 1) // 2 + 1).bit_length() + frac_bits + 2
    if bits is None:
        if need > 64:
            raise ValueError(f"{M} records need a {need}-bit ring for their rank sums; at most "
                             "64 bits: use fewer frac_bits")
        return max(40, need)
    l = C.check_int(bits, "bits", lo=2)
    if l < need:
        raise ValueError(f"bits={l} is too small for {M} records: their rank sums need a "
                         f"{need}-bit ring (frac_bits={frac_bits}); leave bits=None to choose it")
    return l


def _setup(records: ArrayLike, spec: BaselineSpec, session: Session | None,
           runtime: Any) -> tuple:
    kern, eps, opt = spec.kern, spec.privacy.epsilon, spec.options
    frac_bits = resolved(spec.encoding.frac_bits)
    X = C.validate_records(records, kern)
    M = X.shape[0]
    # the ring a new session gets (an existing session keeps its own)
    bits = ring_bits(M, frac_bits, spec.encoding.bits) if session is None else session.ring.bits
    K = M if opt.clients is None else opt.clients
    if K > M:
        raise ValueError(f"clients must be <= the number of records ({M}), got {K}")
    session, run_rng = C.open_session(K, session, spec.execution.seed,
                                      label=f"{spec.protocol}-run", bits=bits,
                                      frac_bits=frac_bits, runtime=runtime)
    owner = assign_clients(X[:, 0], opt.clients, resolved(opt.partition),
                           run_rng.derive("partition"))
    return kern, eps, X, owner, K, session, run_rng


def _evaluation(kern, X, fp):
    Xq = np.column_stack([fp.decode(fp.encode(X[:, 0])), X[:, 1]])
    return C.evaluation(kern, X, Xq)


def _variance(v: float) -> dict:
    """The release's variance for :class:`Released`: the delta method at the released sums."""
    if math.isfinite(v):
        return {"variance": v, "variance_method": "variance: the delta method at the released "
                "sums (plug-in), with the law of the clients' noise (theory)"}
    return {"variance": None, "variance_method": "no interval: the released positive count is "
            "outside (0, M), where the AUC and its variance are undefined"}


def _params(K, clients, partition, **more):
    return {"clients": K, "partition": partition if clients is not None else "one record each",
            **more}


def run_fedauc_rr(records: ArrayLike, spec: BaselineSpec, *, session: Session | None = None,
                  evaluate: bool = False, runtime: Any = None) -> ProtocolResult:
    """FedAUC_RR (Algorithms 1-3) as ``spec`` (a :class:`ustat.specs.BaselineSpec`) says:
    randomized labels, noisy AUC, debiasing."""
    t_start = time.perf_counter()
    kern, eps, X, owner, K, session, run_rng = _setup(records, spec, session, runtime)
    y = X[:, 1].astype(np.int64)
    ranks = _exchange(session, owner, X)
    stats = rr_statistics(ranks, y, owner, K, eps, run_rng.derive("label-randomizers"))
    # the server's release: from the summed statistics and the public ranks only
    out = rr_release(ranks, eps, sums=_report(session, stats))
    notes = [out.pop("note")] if out.get("note") else []
    ev = _evaluation(kern, X, session.fp) if evaluate else None
    params = _params(K, spec.options.clients, spec.options.partition,
                     flip_probability=out["rho"])
    released = Released(out.pop("auc"), None, params, out, ev, notes,
                        **_variance(out["variance_delta_method"]))
    return build_result(session, spec, kern, released, n=X.shape[0], dp_model="label-local",
                        trust=TRUST_RR, t_start=t_start)


def run_fedauc_lap(records: ArrayLike, spec: BaselineSpec, *, session: Session | None = None,
                   evaluate: bool = False, runtime: Any = None) -> ProtocolResult:
    """FedAUC_Lap (Algorithm 4) as ``spec`` (a :class:`ustat.specs.BaselineSpec`) says: noisy
    label statistics; the allocations of Sections 5.2-6.2.

    ``allocation``: ``"adaptive"`` (default), ``"orthogonal"`` (shared ``beta``),
    ``"fixed"`` (LocalLaplace, ``alpha``) or ``"global"`` (GlobalLaplace,
    ``alpha``); ``exact_counts``: the paper's Table 2 setting (see the module
    docstring).
    """
    t_start = time.perf_counter()
    noise = LapNoise.of(spec)
    kern, eps, X, owner, K, session, run_rng = _setup(records, spec, session, runtime)
    y = X[:, 1].astype(np.int64)
    ranks = _exchange(session, owner, X)
    stats, theory = lap_statistics(ranks, y, owner, K, eps, rng=run_rng.derive("client-noise"),
                                   noise=noise)
    # the server's release: from the summed statistics, the public ranks and the noise's law
    out = lap_release(ranks, eps, sums=_report(session, stats), theory=theory)
    notes = [out.pop("note")] if out.get("note") else []
    ev = _evaluation(kern, X, session.fp) if evaluate else None
    gaussian = noise.mechanism == "gaussian"
    params = _params(K, spec.options.clients, spec.options.partition,
                     mechanism=noise.mechanism, allocation=noise.allocation,
                     grid_bits=noise.grid_bits, delta=noise.delta if gaussian else 0.0,
                     exact_counts=bool(noise.exact_counts),
                     **({"alpha": noise.alpha} if noise.allocation in ("fixed", "global")
                        else {}),
                     **({"beta": noise.beta} if noise.allocation == "orthogonal" else {}))
    released = Released(out.pop("auc"), None, params, out, ev, notes, params["delta"],
                        **_variance(out["variance_delta_method"]))
    return build_result(session, spec, kern, released, n=X.shape[0], dp_model="label-local",
                        trust=TRUST_EXACT if noise.exact_counts else TRUST_LAP,
                        t_start=t_start)


def check_lap(spec: BaselineSpec) -> None:
    """fedauc-lap's rules between options: the allocation's parameters, and the Gaussian
    mechanism's delta in (0, 1) at a finite epsilon."""
    o = spec.options
    LapNoise.of(spec)
    if o.mechanism == "gaussian" and math.isfinite(spec.privacy.epsilon):
        # None (no --delta) is the mistake check_delta names: the check takes what was given
        check_delta(spec.privacy.delta)  # type: ignore[arg-type]


def planned_delta(records: ArrayLike, spec: BaselineSpec) -> float:
    """The delta :func:`run_fedauc_lap` will report: ``delta`` for the Gaussian mechanism at a
    finite epsilon, else 0 (discrete Laplace is pure DP)."""
    gaussian = spec.options.mechanism == "gaussian" and math.isfinite(spec.privacy.epsilon)
    # None is refused by check_delta itself, naming delta
    return float(check_delta(spec.privacy.delta)) if gaussian else 0.0  # type: ignore[arg-type]


def across_processes(records: ArrayLike, spec: BaselineSpec) -> str | None:
    """Why this FedAUC run cannot spread over processes (None: it can)."""
    if spec.options.clients is not None:
        return ("clients= assigns records to clients inside the run, which the launcher cannot "
                "hand out ahead of it: across processes every record is its own client (leave "
                "clients=None)")
    if spec.options.allocation == "fixed":
        return ("allocation='fixed' scales each client's noise by its largest rank: a client's "
                "draws would depend on the others' ranks; across processes use "
                "allocation='adaptive'")
    return None
