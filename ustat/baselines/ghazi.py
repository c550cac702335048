"""Ghazi, Kamath, Kumar, Manurangsi, Sealfon: non-interactive LDP pairwise statistics.

As described by Sinh and Ramon (Section 1.1, Section 5, Appendix D.1.3):
discretize into t bins per numeric column (T cells), factor the kernel
matrix A ~ L^T R (:mod:`ustat.baselines.factor`; a JL projection of
dimension d), every party sends o^L_i = L e_{x_i} + z^L_i and
o^R_i = R e_{x_i} + z^R_i, and the aggregator combines the sums. Any
degree-2 kernel. Steps, on the simulated network:

1. *Public coins* (offline, JL only): the aggregator broadcasts a 128-bit
   seed; everybody derives G, hence L and R, from it.
2. *Report* (1 round): party i sends C_L VRand_{eps/2}(L e_x / C_L) and
   C_R VRand_{eps/2}(R e_x / C_R) (C_L, C_R: the largest column norms,
   public), each coordinate as an l-bit fixed-point number (c fractional
   bits, unbiased stochastic rounding): 2 d l bits. Kernels with
   auxiliary sums (the AUC's positive count) also send a binary randomized
   response of the aux value with ``aux_epsilon_fraction`` of epsilon.
3. *Estimate* (aggregator): U^ = (<S_L, S_R> - sum_i <o^L_i, o^R_i>) / (n (n-1))
   = sum_{i != j} <o^L_i, o^R_j> / (n (n-1)), with S = sum_i o_i: unbiased
   for h^T L^T R h minus its diagonal, hence for the discretized U-statistic
   averaged over the JL matrix (exactly for the exact factorization).
   (Sinh-Ramon write the inner product of the means, which also counts the
   n diagonal pairs i = j; subtracting them makes the estimate unbiased.)

VRand (the epsilon-LDP randomizer for vectors of the unit ball used by
Ghazi et al., after Blasiok et al. 2019 and Duchi et al. 2013): with v in
the unit ball, u = +-v/|v| with probabilities (1 +- |v|)/2; Z ~ N(0, I_d);
S = sign<u, Z>, kept with probability e^eps/(e^eps+1), flipped otherwise;
output kappa S Z with kappa = sqrt(pi/2) (e^eps+1)/(e^eps-1), so that
E[output] = v and E[output output^T] = kappa^2 I. Privacy rests only on the
sign coin, drawn exactly (:func:`ustat.baselines._common.keep_sign`): the
output kappa S Z is w with density phi(w) (1 + q) or phi(w) (1 - q),
q = tanh(eps/2), depending on the side of w, a ratio e^eps for any two
inputs. Z is a float Gaussian built symmetric (|N(0,1)| by Box-Muller from
CSPRNG uniforms with an independent CSPRNG sign bit), so w and -w are
equally likely and the argument holds on the floats; rounding to the
fixed-point grid is post-processing.

Cost: 2 d l bits per party (plus aux bits), 1 online round; 128 bits per
party offline for the public seed (JL only).
Threat model / DP: epsilon-LDP per record (eps/2 per vector, basic
composition); nobody has to be trusted.
"""

from __future__ import annotations

import math
import time
from typing import TYPE_CHECKING, Any

import numpy as np

from . import _common as C  # noqa: N812 - the codebase's short capital module alias
from . import factor as F  # noqa: N812 - the codebase's short capital module alias
from .options import (
    AUX_FRACTION,
    BINS,
    BITS,
    FRAC_BITS,
    LEVELS,
    Option,
    choice,
    integer,
    optional_integer,
    resolved,
)
from .result import Released, build_result

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

    from mpc.arith.rng import CSPRNG, ShapeLike
    from mpc.session import Session

    from ..kernels import Kernel
    from .result import ProtocolResult
    from .spec import BaselineSpec

TRUST = ("local DP: each party randomizes its two projected vectors itself (VRand, epsilon/2 "
         "each), so nobody has to be trusted; the aggregator sees every party's noisy vectors")
SEED_BITS = 128
#: why the factorization protocols report no noise_std / ci (:class:`.result.Released`)
NO_VARIANCE = ("no public variance formula: the variance of the estimate depends on the data "
               "(the histogram of the discretized records), which is private")
_CHUNK_VALUES = 1 << 21

#: the factorization options of ghazi and ghazi-sm
FACTORIZATION = (Option("dim", None, optional_integer("dim"), None,
                        "JL dimension d (None: the paper's; d >= T: the exact factorization)"),
                 Option("sparsity", 1, integer("sparsity"), None,
                        "non-zeros per column of the JL matrix"),
                 Option("factorization", "jl", choice("factorization", ("jl", "exact")), None,
                        "jl: A ~ L^T R by a JL projection; exact: L = I, R = A"))


def options_with(*own: Option) -> tuple:
    """The options of a protocol on Ghazi et al.'s factorization (:class:`ustat.specs.
    BaselineSpec` fields): the bins and the factorization, the protocol's ``own``, the
    levels, the budget split and the encoding."""
    return (BINS, *FACTORIZATION, *own, LEVELS, AUX_FRACTION, BITS, FRAC_BITS)


#: the options ghazi takes
OPTIONS = options_with()


def vrand_kappa(epsilon: float) -> float:
    """kappa = sqrt(pi/2) (e^eps + 1) / (e^eps - 1) (1 with no privacy)."""
    if not math.isfinite(epsilon):
        return 1.0
    return math.sqrt(math.pi / 2) * (math.exp(epsilon) + 1) / math.expm1(epsilon)


def uniform24(m: int, rng: CSPRNG) -> np.ndarray:
    """m uniforms on the grid 2^-24 in [0, 1) (exact in float32), two per CSPRNG word."""
    w = rng.uint64((m + 1) // 2).view(np.uint32)[:m] >> np.uint32(8)
    return w.astype(np.float32) * np.float32(2.0 ** -24)


def symmetric_gaussian(shape: ShapeLike, rng: CSPRNG) -> np.ndarray:
    """N(0, 1) floats (float32 precision) with P(z) = P(-z) exactly.

    Box-Muller magnitude from 32-bit CSPRNG uniforms and an independent CSPRNG
    sign bit. The values need not be precise (privacy rests on the sign coin
    of VRand and on this symmetry only).
    """
    m = int(np.prod(shape))
    half = (m + 1) // 2
    u = uniform24(2 * half, rng)
    r = np.sqrt(np.float32(-2.0) * np.log(np.float32(1.0) - u[:half]))     # 1 - u in (0, 1]
    theta = np.float32(2 * math.pi) * u[half:]
    z = np.abs(np.concatenate([r * np.cos(theta), r * np.sin(theta)])[:m])
    sign = np.float32(1.0) - np.float32(2.0) * rng.bits(m).astype(np.float32)
    return (sign * z).reshape(shape)


def vrand(V: np.ndarray, epsilon: float, rng: CSPRNG) -> np.ndarray:
    """VRand of every row of V (rows in the unit ball): unbiased, epsilon-LDP (module docstring)."""
    if not math.isfinite(epsilon):
        return np.array(V, dtype=np.float64)
    m, d = V.shape
    norm = np.linalg.norm(V, axis=1)
    if np.any(norm > 1 + 1e-9):
        raise ValueError("VRand inputs must lie in the unit ball")
    norm = np.minimum(norm, 1.0)
    U = np.zeros_like(V)
    ok = norm > 0
    U[ok] = V[ok] / norm[ok, None]
    U[~ok, 0] = 1.0
    flip = rng.random(m) >= (1 + norm) / 2            # unbiasedness only, not privacy-bearing
    U[flip] = -U[flip]
    Z = symmetric_gaussian((m, d), rng)
    side = np.where(np.einsum("ij,ij->i", U, Z) >= 0, 1.0, -1.0)
    S = side * C.keep_sign(m, epsilon, rng)
    return (vrand_kappa(epsilon) * S)[:, None] * Z.astype(np.float64)


def stochastic_round(values: np.ndarray, scale: int, limit: int, rng: CSPRNG) -> np.ndarray:
    """Fixed-point integers round(values * scale), unbiased randomized rounding (post-processing).

    Returned as int64 two's-complement values of the l-bit ring (|v| < ``limit``).
    """
    scaled = values * scale
    low = np.floor(scaled)
    up = uniform24(scaled.size, rng).reshape(scaled.shape) < (scaled - low)
    out = (low + up).astype(np.int64)
    if out.size and np.abs(out).max() >= limit:
        raise ValueError("a VRand output exceeds the fixed-point range: use more ring bits")
    return out


def public_factorization(session: Session, run_rng: CSPRNG, A: np.ndarray, eps_vector: float,
                         dim: int | None, sparsity: int, kind: str,
                         notes: list) -> tuple[F.Factorization, float]:
    """The factorization the run uses and the paper's d; a JL matrix comes from a public seed."""
    fac, d_paper = choose_factorization(A, session.n_parties, eps_vector, dim, sparsity, kind,
                                        session.agreed(run_rng.derive("public-coins")), notes)
    if fac.kind == "jl":
        C.broadcast_seed(session, SEED_BITS)
    return fac, d_paper


def factor_dimension(T: int, n: int, eps_vector: float, dim: int | None, kind: str) -> tuple:
    """(d the run uses, the paper's d): the JL dimension, or T for the exact factorization
    (asked for, or when the JL dimension would not compress). Public parameters only."""
    d_paper = F.paper_dimension(T, n, eps_vector)
    if kind not in ("jl", "exact"):
        raise ValueError(f"factorization must be 'jl' or 'exact', got {kind!r}")
    if kind == "exact":
        return T, d_paper
    d = d_paper if dim is None else C.check_int(dim, "dim")
    return (T if d >= T else int(d)), d_paper


def choose_factorization(A: np.ndarray, n: int, eps_vector: float, dim: int | None,
                         sparsity: int, kind: str, coins: CSPRNG,
                         notes: list) -> tuple[F.Factorization, float]:
    """The factorization the run uses (see :mod:`ustat.baselines.factor`) and the paper's d."""
    T = A.shape[0]
    d, d_paper = factor_dimension(T, n, eps_vector, dim, kind)
    if kind == "exact":
        return F.exact_factorization(A), d_paper
    if d == T:
        asked = d_paper if dim is None else dim
        notes.append(f"JL dimension d = {asked} >= T = {T} would not compress: the exact "
                     f"factorization L = I, R = A (d = T) is used")
        return F.exact_factorization(A), d_paper
    return F.jl_factorization(A, d, C.check_int(sparsity, "sparsity"), coins), d_paper


def conditional_variance(hist: np.ndarray, fac: F.Factorization, c_left: float, c_right: float,
                         kappa: float) -> float:
    """Var(U^) given the data and the factorization (independent VRand noise; rounding ignored).

    Messages m_i have mean L e_x (R e_x) and covariance C^2 kappa^2 I - mean mean^T.
    Var(sum_{i != j} <m^L_i, m^R_j>) = sum_i (W_i^R Cov^L_i W_i^R + W_i^L Cov^R_i W_i^L)
    + sum_{i != j} tr(Cov^L_i Cov^R_j), W^R_i = R (h - e_{x_i}).
    """
    h = np.asarray(hist, dtype=np.float64)
    n = h.sum()
    occ = np.flatnonzero(h)
    hx = h[occ]
    Lm, Rm = fac.left(occ), fac.right(occ)                   # (|O|, d)
    sL, sR = hx @ Lm, hx @ Rm
    kl, kr = (c_left * kappa) ** 2, (c_right * kappa) ** 2
    WR, WL = sR[None, :] - Rm, sL[None, :] - Lm
    lin = (kl * (WR * WR).sum(1) - ((Lm * WR).sum(1)) ** 2
           + kr * (WL * WL).sum(1) - ((Rm * WL).sum(1)) ** 2)
    nl, nr = (Lm * Lm).sum(1), (Rm * Rm).sum(1)
    B = Lm @ Rm.T
    d = fac.dim
    full = (n * n * d * kl * kr - n * kl * (hx @ nr) - n * kr * (hx @ nl) + hx @ (B * B) @ hx)
    diag = hx @ (d * kl * kr - kl * nr - kr * nl + np.diagonal(B) ** 2)
    return float((hx @ lin + full - diag) / (n * (n - 1)) ** 2)


def ldp_aux_sums(X: np.ndarray, kern: Kernel, epsilon: float,
                 rng: CSPRNG) -> tuple[np.ndarray, np.ndarray]:
    """Unbiased LDP estimates of a kernel's auxiliary sums (values in [0, 1]).

    Each value is rounded to {0, 1} by randomized rounding and sent with binary
    randomized response at epsilon / (number of aux values). Returns
    (estimates, reports (n, a) in {0, 1}).
    """
    assert kern.aux is not None         # called for kernels with auxiliary sums only
    vals = kern.aux(X)
    a = vals.shape[1]
    bit = (rng.random(vals.shape) < vals).astype(np.int64)
    if not math.isfinite(epsilon):
        return aux_estimate(bit, epsilon), bit
    rep = C.k_rr(bit.ravel(), 2, epsilon / a, rng).reshape(bit.shape)
    return aux_estimate(rep, epsilon), rep


def aux_estimate(rep: np.ndarray, epsilon: float) -> np.ndarray:
    """The aggregator's unbiased estimates of the aux sums from the reports ``(n, a)``
    (:func:`ldp_aux_sums`; epsilon infinite: the bits themselves)."""
    if not math.isfinite(epsilon):
        return rep.sum(axis=0).astype(float)
    keep = math.exp(epsilon / rep.shape[1])
    keep = keep / (keep + 1)
    return (rep.sum(axis=0) - rep.shape[0] * (1 - keep)) / (2 * keep - 1)


def split_budget(eps: float, kern: Kernel, aux_fraction: float) -> tuple[float, float]:
    """(epsilon for the aux sums, epsilon per vector): eps_aux = f eps, the rest split in two."""
    if not 0 < aux_fraction < 1:
        raise ValueError(f"aux_epsilon_fraction must be in (0, 1), got {aux_fraction}")
    if not math.isfinite(eps):
        return math.inf, math.inf
    eps_aux = eps * aux_fraction if kern.aux is not None else 0.0
    return eps_aux, (eps - eps_aux) / 2


def run_ghazi(records: ArrayLike, spec: BaselineSpec, *, session: Session | None = None,
              evaluate: bool = False, runtime: Any = None) -> ProtocolResult:
    """Run Ghazi et al.'s non-interactive LDP protocol as ``spec`` (a
    :class:`ustat.specs.BaselineSpec`) says (see the module docstring)."""
    t_start = time.perf_counter()
    pre = C.prepare_degree2(records, spec, public_levels=C.several_processes(session, runtime))
    kern, eps, t, X, n, grid, A, notes = (pre.kern, pre.epsilon, pre.bins, pre.X, pre.n,
                                          pre.grid, pre.A, pre.notes)
    opt, aux_fraction = spec.options, resolved(spec.privacy.aux_epsilon_fraction)
    bits, frac_bits = resolved(spec.encoding.bits), resolved(spec.encoding.frac_bits)
    eps_aux, eps_vec = split_budget(eps, kern, aux_fraction)
    session, run_rng = C.open_session(n, session, spec.execution.seed, label="ghazi-run",
                                      bits=bits, frac_bits=frac_bits, runtime=runtime)
    net, fp, ring = session.net, session.fp, session.ring
    agg = net.role("aggregator")
    fac, d_paper = public_factorization(session, run_rng, A, eps_vec, opt.dim,
                                        resolved(opt.sparsity), resolved(opt.factorization),
                                        notes)
    c_left = float(fac.left_norms()[0].max())
    c_right = float(np.linalg.norm(fac.R, axis=0).max()) or 1.0
    cells = grid.index(X)
    noise_rng = run_rng.derive("party-randomizers")      # one stream per chunk of parties
    mine = np.asarray(net.is_local(net.parties), dtype=bool)
    d = fac.dim
    S_L, S_R, diag = np.zeros(d), np.zeros(d), 0.0
    chunk = max(1, _CHUNK_VALUES // d)
    aux_sums = []
    with net.phase("report"), net.parallel():
        for start in range(0, n, chunk):                  # chunks of parties, side by side
            idx = np.arange(start, min(start + chunk, n))
            payload = np.zeros((idx.size, 2 * d), dtype=np.uint64)
            if np.any(mine[idx]):                         # a chunk of this process's parties
                crng, cx = noise_rng.derive("chunk", start), cells[idx]
                oL = c_left * vrand(fac.left(cx) / c_left, eps_vec, crng)
                oR = c_right * vrand(fac.right(cx) / c_right, eps_vec, crng)
                payload[:] = ring.from_signed(stochastic_round(
                    np.concatenate([oL, oR], axis=1), fp.scale, 1 << (ring.bits - 1), crng))
            with net.lane(), net.round():
                net.send(idx, agg, payload, ring.bits)
            if net.is_local(agg):
                got = ring.to_signed(payload) / fp.scale   # what the aggregator received
                gL, gR = got[:, :d], got[:, d:]
                S_L += gL.sum(axis=0)
                S_R += gR.sum(axis=0)
                diag += float(np.einsum("ij,ij->", gL, gR))
        if kern.aux is not None:
            _, rep = ldp_aux_sums(X, kern, eps_aux, run_rng.derive("aux-randomizers"))
            with net.lane(), net.round():
                net.send(net.parties, agg, rep, 1)
            aux_sums = list(aux_estimate(rep, eps_aux))
    u_hat = (float(S_L @ S_R) - diag) / (n * (n - 1))
    estimate = kern.release(u_hat, aux_sums, n)
    kappa = vrand_kappa(eps_vec)
    theory = {"dim": d, "dim_paper": d_paper, "factorization": fac.kind, "kappa": kappa,
              "C_left": c_left, "C_right": c_right, "gamma2_upper": c_left * c_right,
              "epsilon_per_vector": eps_vec, "bits_per_party": 2 * d * ring.bits
              + (kern.aux(X[:1]).shape[1] if kern.aux is not None else 0)}
    ev = None
    if evaluate:
        true_hist = np.bincount(cells, minlength=grid.domain)
        ev = pre.evaluation(cells)
        ev["variance_given_factorization"] = (conditional_variance(true_hist, fac, c_left, c_right,
                                                                   kappa)
                                              if math.isfinite(eps) else 0.0)
    params = {"bins": t, "domain": grid.domain, "grid": list(grid.sizes), "dim": d,
              "sparsity": int(fac.rows.shape[0]), "factorization": fac.kind,
              "message_bits": ring.bits, "frac_bits": fp.frac_bits,
              "aux_epsilon_fraction": aux_fraction if kern.aux is not None else 0.0}
    out = Released(estimate, u_hat, params, theory, ev, notes, variance_method=NO_VARIANCE)
    return build_result(session, spec, kern, out, n=n, dp_model="local", trust=TRUST,
                        t_start=t_start)
