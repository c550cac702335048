"""Distributed DP noise: per-party additive shares in Z_2^l of one noise value.

Every protocol returns a :class:`NoiseShares` whose ``shares`` (``uint64``,
party axis first, ``(len(parties), *shape)``) sum mod 2^l to the integer noise
(two's complement) in the fixed-point units the caller asked for, together
with its accounting (the type, the calibration and the collusion plan every
method shares are in :mod:`noise.shares`, re-exported here). Communication
goes through ``s.net.send`` (counted, one round per protocol step); the
caller names the phase (``with s.net.phase("noise")``).

Protocols
---------
* :func:`pi_dlap` -- Protocol B.1 of Sinh & Ramon (Pi_DLap, all-to-all,
  threat model M_Dis), after Balle, Bell, Gascon, Nissim (CCS 2020).
* :func:`committee_dlap` (:mod:`noise.committee`) -- the M_HF variant (Sinh &
  Ramon, Sec. 4): a random committee draws the noise and shares it with
  everybody.
* :func:`local_dlap` -- Remark B.1: no communication, each party adds its
  Polya difference to a value that is already uniformly masked.
* :func:`coin_flip_binomial` (:mod:`noise.gaussian_shares`) -- Dwork,
  Kenthapadi, McSherry, Mironov, Naor (EUROCRYPT 2006): shared coins XORed
  with dealer coins via Beaver multiplication, summed.
* :func:`distributed_discrete_gaussian` (:mod:`noise.gaussian_shares`) --
  each party adds N_Z(0, sigma2/p) (Kairouz, Liu, Steinke, ICML 2021).
* :func:`shared_dlap_noise` -- the entry point of the U-MPC layer; with
  ``method="mpc"`` it runs :func:`noise.mpc_noise.mpc_dlap_noises`.

Simulation note: the parties' private draws are made in one batch from a
stream derived from the session's master CSPRNG (``s.rng.derive("noise",
...)`` with a fresh nonce per call), instead of one loop per party over
``s.rng.party(i)``; the distribution and the messages are the same.

Collusion (who must collude to weaken the DP guarantee)
-------------------------------------------------------
A coalition that knows its own members' Polya draws subtracts them from the
release; what protects an honest party is the honest contributors' noise
only. :func:`shared_dlap_noise` therefore sizes every contributor's draw for
a stated coalition (:mod:`noise.collusion`): with ``max_colluders`` t of n
parties (M_Dis, default floor(n/2)) each draws Polya(1/(n - t)) differences,
so any n - t honest parties alone add DLap(a) and the claimed epsilon holds
against the aggregator with up to t colluders, at a variance cost n/(n - t);
the M_HF committee does the same with its guaranteed honest members.
:meth:`NoiseShares.epsilon_against` gives the exact epsilon against a larger
coalition (:mod:`noise.privacy_loss`). The lower-level :func:`pi_dlap`,
:func:`committee_dlap` and :func:`local_dlap` keep the paper's split
(Polya(1/n), every contributor honest) unless given ``honest``. Input
privacy is separate: under M_Dis no coalition of n - 1 parties learns an
honest input, whatever t is.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from fractions import Fraction
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import ArrayLike

from mpc.arith.sharing import additive_share

from ._contributions import (
    _check_parties,
    _check_session,
    _encode_signed,
    _honest_shape,
    _polya_differences,
    _stream,
)
from .collusion import committee_size
from .committee import committee_bits, committee_dlap, draw_committee
from .gaussian_shares import coin_flip_binomial, distributed_discrete_gaussian
from .mpc_noise import mpc_dlap_noises
from .samplers import RealLike, as_fraction, polya
from .shares import THREAT_MODELS, NoiseShares, dlap_params, noise_plan

if TYPE_CHECKING:
    from mpc.session import Session

__all__ = [
    "NoiseShares", "coin_flip_binomial", "committee_bits", "committee_dlap", "committee_size",
    "distributed_discrete_gaussian", "dlap_wrap_probability", "draw_committee", "local_dlap",
    "noise_plan", "noise_tail_bound", "noise_tail_probability", "pi_dlap", "pidlap_bits",
    "shared_dlap_noise", "shared_dlap_noises",
]

#: shared_dlap_noise refuses scales whose total noise would wrap mod 2^l more often than this.
MAX_WRAP_PROBABILITY = 2.0 ** -40


def noise_tail_probability(k: float, scale: RealLike, variance_factor: float = 1) -> float:
    """P(|Z| >= k) for the total noise Z (an upper bound when ``variance_factor`` R > 1).

    Z ~ DLap(a), a = exp(-1/scale): exactly 2 a^k / (1 + a). For R > 1 (Z = X - Y,
    X, Y ~ Polya(R, a), the total of a collusion-aware split) the Chernoff bound
    2 min_s E[e^(sX)] e^(-sk) = 2 ((1-a)(k+R)/R)^R (k/((k+R) a))^(-k) (1 when
    k/(k+R) <= a). Computed in log space (no underflow for tiny scales).
    """
    k = float(k)
    inv = 1.0 / float(scale)                                 # -ln a
    R = float(variance_factor)
    if R <= 1.0:
        return min(1.0, 2.0 * math.exp(-k * inv) / (1.0 + math.exp(-inv)))
    if k <= 0 or math.log(k / (k + R)) <= -inv:
        return 1.0
    log1ma = math.log(-math.expm1(-inv))
    log_b = R * (log1ma + math.log((k + R) / R)) - k * inv + k * math.log1p(R / k)
    return min(1.0, 2.0 * math.exp(min(log_b, 0.0)))


def noise_tail_bound(scale: RealLike, variance_factor: float = 1,
                     probability: float = MAX_WRAP_PROBABILITY) -> float:
    """Smallest k (to 1e-9 relative, rounded up) with :func:`noise_tail_probability` <= probability.

    For the aggregate's wrap-around check: |noise| < k except with that
    probability. DLap: about scale * ln(2 / probability) (27.7 scales at 2^-40).
    """
    lo, hi = 0.0, float(scale)
    while noise_tail_probability(hi, scale, variance_factor) > probability:
        lo, hi = hi, 2.0 * hi
    while hi - lo > 1e-9 * hi:
        mid = (lo + hi) / 2.0
        if noise_tail_probability(mid, scale, variance_factor) > probability:
            lo = mid
        else:
            hi = mid
    return hi


def dlap_wrap_probability(scale: RealLike, bits: int, variance_factor: float = 1) -> float:
    """P(|Z| >= 2^(bits-1)): the chance the noise wraps mod 2^l (:func:`noise_tail_probability`)."""
    return noise_tail_probability(1 << (bits - 1), scale, variance_factor)


def pidlap_bits(n: int, bits: int, separate_pair: bool = False) -> int:
    """Communication of :func:`pi_dlap`: n (n-1) l bits (2 n (n-1) l with ``separate_pair``)."""
    return (2 if separate_pair else 1) * n * (n - 1) * bits


# -- the discrete Laplace protocols -------------------------------------------------------
def pi_dlap(s: Session, scale: RealLike, *, parties: ArrayLike | None = None,
            separate_pair: bool = False, honest: int | None = None) -> tuple[np.ndarray, bool]:
    """Pi_DLap (Sinh & Ramon, Protocol B.1; Balle et al. 2020): all-to-all shared discrete Laplace.

    Steps: (1) party P_i draws a_i, b_i ~ Polya(1/h, a), a = exp(-1/scale),
    h = ``honest`` (default n, the paper's split); (2-3) P_i additively
    shares c_i = a_i - b_i among the n parties and sends share j to P_j
    (with ``separate_pair=True``, a_i and b_i are shared separately, exactly
    as in the paper); (4) P_j sums what it holds. Any h of the c_i sum to
    DLap(a) exactly (exact Polya draws, :func:`noise.samplers.polya`); all
    n sum to Polya(n/h) - Polya(n/h) (variance factor n/h).

    Cost: one round, n (n-1) l bits (2 n (n-1) l with ``separate_pair``);
    the paper states n^2 l. Threat model M_Dis (semi-honest, up to n-1
    corrupted for input privacy; epsilon holds against the aggregator with
    up to n - h colluders, see :mod:`noise.collusion`).
    Returns ``(shares uint64 (n,), exact)``.
    """
    s = _check_session(s)
    P = _check_parties(s, parties)
    scale = as_fraction(scale, "scale")
    ring, net = s.ring, s.net
    n = P.size
    r = _honest_shape(honest, n)
    rng = _stream(s, "pi_dlap")
    if separate_pair:
        ab = polya(r, scale, (2, n), rng)
        secrets = np.stack([_encode_signed(ring, ab[0], "Polya draw"),
                            _encode_signed(ring, -ab[1], "Polya draw")])  # (2, n): a_i, -b_i
    else:
        c = _polya_differences(r, scale, n, rng)
        secrets = _encode_signed(ring, c, "Polya difference")[None, :]      # (1, n)
    out = ring.zeros(n)
    if n == 1:
        return ring.sum(secrets, axis=0), True
    sharings = [additive_share(ring, row, n, rng) for row in secrets]   # sh[j, i]: P_j's of c_i
    with net.round():
        for sh in sharings:
            net.send_all_to_all(P, sh.T, ring.bits)       # P_i sends sh[j, i] to P_j
    for sh in sharings:                                   # what each P_j holds after the round
        out = ring.add(out, ring.sum(sh, axis=1))
    return out, True


def local_dlap(s: Session, scale: RealLike, *, parties: ArrayLike | None = None,
               honest: int | None = None) -> tuple[np.ndarray, bool]:
    """Remark B.1: each party's own Polya difference, no communication.

    Party P_i outputs c_i = Polya(1/h, a) - Polya(1/h, a) (h = ``honest``,
    default n) encoded in Z_2^l; any h of the c_i sum to DLap(a). This is
    *not* a secret sharing: c_i is P_i's own noise, safe only when added to
    a value that is already uniformly masked (as the local sums of shares in
    Pi_U-MPC are), so that z_i = y_i + c_i stays uniform. Cost: 0 bits, 0
    rounds. Threat model as Pi_DLap.
    """
    s = _check_session(s)
    P = _check_parties(s, parties)
    scale = as_fraction(scale, "scale")
    n = P.size
    r = _honest_shape(honest, n)
    rng = _stream(s, "local")
    c = _polya_differences(r, scale, n, rng)
    return _encode_signed(s.ring, c, "Polya difference"), True


def shared_dlap_noises(s: Session, specs: Iterable[tuple[RealLike, RealLike]],
                       **kw: Any) -> list[NoiseShares]:
    """The noises of one release, ``specs`` = [(epsilon, sensitivity), ...] (U, then its aux sums).

    ``method="polya"`` (default): :func:`shared_dlap_noise` per spec, in order
    (the same draws as separate calls); ``"mpc"``: one secure computation
    draws them all (:func:`noise.mpc_noise.mpc_dlap_noises`). Keywords as
    :func:`shared_dlap_noise`.
    """
    if kw.get("method", "polya") == "mpc":
        kw = {k: v for k, v in kw.items() if k != "method"}
        return mpc_dlap_noises(s, specs, **kw)
    return [shared_dlap_noise(s, eps, sens, **kw) for eps, sens in specs]


def shared_dlap_noise(s: Session, epsilon: RealLike, sensitivity: RealLike, *,
                      threat_model: str = "dis", parties: ArrayLike | None = None,
                      fail: float | Fraction = 2.0 ** -40, f_h: float | Fraction = 0.5,
                      max_colluders: int | str | None = None, committee_size: int | None = None,
                      method: str = "polya", triples: str = "dealer") -> NoiseShares:
    """Shares of discrete Laplace noise for the U-MPC layer (epsilon-DP, delta = 0 for Polya).

    ``method``: ``"polya"`` (below: per-contributor Polya shares sized for a
    tolerated coalition) or ``"mpc"`` (one discrete Laplace sampled inside a
    secure computation among the contributors, :mod:`noise.mpc_noise`:
    epsilon against all but one contributor, variance x1, a delta <= 2^-40
    for the sampler's truncation; ``triples`` "dealer" or "ot").

    The noise is integer, in fixed-point units of ``s.fp`` (granularity
    2^-c): discrete Laplace with scale t >= sensitivity 2^c / epsilon, so
    that decoding the total with ``s.fp`` gives Laplace-like noise of scale
    sensitivity / epsilon. ``sensitivity`` is in REAL units.

    Collusion: the noise is split per :func:`noise_plan` so that epsilon holds
    against the aggregator together with ``max_colluders`` parties (M_Dis and
    local; default floor(n/2), an honest majority of the contributors: the
    variance cost n/(n - t) stays <= 2 while a coalition of up to half the
    parties gains nothing; t = n - 1 would cost n times the variance, and
    t = 0, the paper's split, leaves epsilon ~15 against n - 1 colluders at
    n = 50), or with all but the guaranteed honest members of the M_HF
    committee (default size in :func:`noise.collusion.committee_plan`). The
    total noise is then Polya(R) - Polya(R), R = ``variance_factor`` >= 1:
    epsilon against the aggregator alone is still ``epsilon`` (pure DP is
    decided in the tails). ``collusion``, :meth:`NoiseShares.guarantee` and
    :meth:`NoiseShares.epsilon_against` report it.

    Rationalization: sensitivity and epsilon are converted to the exact
    rationals of their floats; the scale sensitivity 2^c / epsilon is
    computed exactly and rounded UP to a dyadic rational with a < 48-bit
    numerator (:func:`noise.samplers.round_scale_up`); the guarantee
    reported (``epsilon``) is Delta_ring / t <= the requested epsilon and
    holds for that rational. The fixed-point encoding of the caller's
    values may change the encoded query by rounding; ``sensitivity`` must
    bound the sensitivity of the *encoded* query divided by 2^c.

    threat_model: ``"dis"`` -> :func:`pi_dlap` (M_Dis, n(n-1) l bits),
    ``"hf"`` -> :func:`committee_dlap` (M_HF, m(n-1) l bits),
    ``"local"`` -> :func:`local_dlap` (Remark B.1, no communication).
    ``epsilon = inf`` is rejected (the caller skips the noise), and so is a
    scale whose noise would wrap mod 2^l with probability > 2^-40 (the
    paper's "noise must remain below 2^l"); ``wrap_probability`` reports it.
    Exactness: every draw is an exact integer sampler
    (:func:`noise.samplers.polya`), so the reconstructed noise is exactly
    the stated Polya difference for the rational scale actually used.
    """
    if method == "mpc":
        return mpc_dlap_noises(s, [(epsilon, sensitivity)], threat_model=threat_model,
                               parties=parties, fail=fail, f_h=f_h, max_colluders=max_colluders,
                               committee_size=committee_size, triples=triples)[0]
    if method != "polya":
        raise ValueError(f"method must be 'mpc' or 'polya', got {method!r}")
    s = _check_session(s)
    if threat_model not in THREAT_MODELS:
        raise ValueError(f"threat_model must be one of {THREAT_MODELS}, got {threat_model!r}")
    eps_used, sens, sens_ring, scale = dlap_params(s, epsilon, sensitivity)
    P = _check_parties(s, parties)
    plan = noise_plan(threat_model, P.size, max_colluders=max_colluders,
                      committee_size=committee_size, fail=fail, f_h=f_h)
    wrap = dlap_wrap_probability(scale, s.ring.bits, plan.variance_factor)
    if wrap > MAX_WRAP_PROBABILITY:
        raise ValueError(
            f"ring too small for the noise: discrete Laplace of scale {float(scale):.4g} "
            "ring units "
            f"(variance factor {plan.variance_factor:.3g}) wraps mod 2^{s.ring.bits} with "
            f"probability {wrap:.3g} > {MAX_WRAP_PROBABILITY:.3g}; "
            "use more ring bits, fewer fractional bits, or a larger epsilon")
    committee = None
    if threat_model == "dis":
        shares, exact = pi_dlap(s, scale, parties=P, honest=plan.honest)
    elif threat_model == "hf":
        shares, committee, exact = committee_dlap(s, scale, parties=P, fail=fail, f_h=f_h,
                                                  size=plan.contributors, honest=plan.honest)
    else:
        shares, exact = local_dlap(s, scale, parties=P, honest=plan.honest)
    return NoiseShares(
        shares=shares, parties=P, distribution="discrete_laplace", scale=scale,
        epsilon=eps_used, sensitivity=sens, threat_model=threat_model, committee=committee,
        delta=0.0, sensitivity_ring=sens_ring, exact=exact, insecure_seed=bool(s.insecure),
        wrap_probability=wrap, collusion=plan, frac_bits=s.fp.frac_bits,
        bound=noise_tail_bound(scale, plan.variance_factor),
        notes=(f"discrete Laplace a = exp(-1/scale) in ring units for any {plan.honest} honest "
               f"contributors; total Polya({plan.variance_factor:.4g}) difference"))

