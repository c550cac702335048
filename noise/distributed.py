"""Distributed DP noise: per-party additive shares in Z_2^l of one noise value.

Every protocol returns a :class:`NoiseShares` whose ``shares`` (``uint64``,
party axis first, ``(len(parties), *shape)``) sum mod 2^l to the integer noise
(two's complement) in the fixed-point units the caller asked for, together
with its accounting. Communication goes through ``s.net.send`` (counted, one
round per protocol step); the caller names the phase (``with
s.net.phase("noise")``).

Protocols
---------
* :func:`pi_dlap` -- Protocol B.1 of Sinh & Ramon (Pi_DLap, all-to-all,
  threat model M_Dis), after Balle, Bell, Gascon, Nissim (CCS 2020).
* :func:`committee_dlap` -- the M_HF variant (Sinh & Ramon, Sec. 4): a
  random committee of ceil(log(fail) / log(1 - f_H)) parties draws the noise
  and shares it with everybody.
* :func:`local_dlap` -- Remark B.1: no communication, each party adds its
  Polya difference to a value that is already uniformly masked.
* :func:`coin_flip_binomial` -- Dwork, Kenthapadi, McSherry, Mironov, Naor
  (EUROCRYPT 2006): shared coins XORed with dealer coins via Beaver
  multiplication, summed.
* :func:`distributed_discrete_gaussian` -- each party adds N_Z(0, sigma2/p)
  (Kairouz, Liu, Steinke, ICML 2021).
* :func:`shared_dlap_noise` -- the entry point of the U-MPC layer.

Simulation note: the parties' private draws are made in one batch from a
stream derived from the session's master CSPRNG (``s.rng.derive("noise",
...)`` with a fresh nonce per call), instead of one loop per party over
``s.rng.party(i)``; the distribution and the messages are the same.

Privacy caveat common to the Polya-based protocols (Balle et al. 2020):
the discrete Laplace guarantee holds for the *total* noise against an
observer of the output that does not know individual contributions. A
coalition that knows its own members' Polya draws can subtract them; what
remains is the sum over honest contributors only (an infinitely divisible
"fraction" of the discrete Laplace), which is weaker. For M_HF the committee
guarantees at least one honest member only with probability 1 - fail.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from mpc.beaver import multiply
from mpc.sharing import additive_share

from . import accounting as acc
from .samplers import as_fraction, discrete_gaussian, polya, round_scale_up

__all__ = [
    "NoiseShares", "shared_dlap_noise", "pi_dlap", "committee_dlap", "local_dlap",
    "committee_size", "draw_committee", "coin_flip_binomial", "distributed_discrete_gaussian",
    "pidlap_bits", "committee_bits", "dlap_wrap_probability",
]

THREAT_MODELS = ("dis", "hf", "local")
#: shared_dlap_noise refuses scales whose total noise would wrap mod 2^l more often than this.
MAX_WRAP_PROBABILITY = 2.0 ** -40


@dataclass(frozen=True)
class NoiseShares:
    """Additive shares of a DP noise value, with the accounting that goes with it.

    ``shares``: ``uint64 (len(parties), *shape)`` in ``Z_2^l`` (sum = noise).
    ``scale``: the noise parameter in ring units (discrete Laplace: t with
    a = exp(-1/t); binomial: the coin step; Gaussian: sigma^2 of the total).
    ``sensitivity``: in the caller's real units; ``sensitivity_ring`` in
    ring units. ``epsilon``/``delta``: the guarantee actually provided (for
    the rational parameters actually used). ``committee``: party ids of the
    M_HF committee, else None. ``exact``: whether every draw came from an exact
    integer sampler (always True for the protocols here). ``insecure_seed``: the session
    was seeded (debug).
    """

    shares: np.ndarray
    parties: np.ndarray
    distribution: str
    scale: Fraction | float
    epsilon: float
    sensitivity: float
    threat_model: str
    committee: np.ndarray | None = None
    delta: float = 0.0
    sensitivity_ring: float = 0.0
    exact: bool = True
    insecure_seed: bool = False
    wrap_probability: float = 0.0
    notes: str = ""

    @property
    def account(self) -> acc.MechanismAccount:
        return acc.MechanismAccount(self.distribution, float(self.scale), self.sensitivity_ring,
                                    self.epsilon, self.delta, self.notes)


# -- helpers ---------------------------------------------------------------------------
def _check_session(s):
    for attr in ("ring", "fp", "rng", "net", "dealer"):
        if not hasattr(s, attr):
            raise TypeError(f"s must be an mpc.session.Session, got {type(s).__name__}")
    return s


def _check_parties(s, parties) -> np.ndarray:
    if parties is None:
        return np.arange(s.net.n_parties, dtype=np.int64)
    arr = np.asarray(parties)
    if arr.dtype.kind not in "iu" or arr.ndim != 1:
        raise TypeError("parties must be a 1-d integer array of party ids")
    if arr.size < 1:
        raise ValueError("parties must name at least one party (n >= 1)")
    if arr.min() < 0 or arr.max() >= s.net.n_parties:
        raise ValueError(f"parties must be ids in 0..{s.net.n_parties - 1}")
    if np.unique(arr).size != arr.size:
        raise ValueError("parties must be distinct")
    return arr.astype(np.int64)


def _stream(s, label: str):
    nonce = int(s.rng.uint64())
    return s.rng.derive("noise", label, nonce)


def _encode_signed(ring, values: np.ndarray, what: str) -> np.ndarray:
    lim = 1 << (ring.bits - 1)
    if values.size and (values.min() < -lim or values.max() >= lim):
        raise ValueError(f"{what} does not fit in Z_2^{ring.bits} (|noise| >= 2^{ring.bits - 1}); "
                         "use a larger ring")
    return values.astype(np.int64).astype(np.uint64) & ring.mask


def _shape(shape) -> tuple:
    if isinstance(shape, numbers.Integral) and not isinstance(shape, bool):
        return (int(shape),)
    return tuple(int(x) for x in shape)


def _dlap_params(s, epsilon, sensitivity):
    if isinstance(epsilon, numbers.Real) and not isinstance(epsilon, bool) and math.isinf(float(epsilon)):
        raise ValueError("epsilon must be finite (epsilon = inf means no noise: skip the call)")
    eps = acc.check_epsilon(epsilon)
    sens = acc.check_sensitivity(sensitivity)
    sens_ring = as_fraction(sens, "sensitivity") * s.fp.scale
    scale = round_scale_up(sens_ring / as_fraction(eps, "epsilon"))
    eps_used = acc.discrete_laplace_epsilon(sens_ring, scale)
    return eps_used, sens, float(sens_ring), scale


def dlap_wrap_probability(scale, bits: int) -> float:
    """P(|Z| >= 2^(bits-1)) for Z ~ DLap(a = exp(-1/scale)): the chance the noise wraps mod 2^l."""
    a = math.exp(-1.0 / float(scale))
    k = 1 << (bits - 1)
    return 2.0 * math.exp(k * math.log(a)) / (1.0 + a)


def _polya_differences(r: Fraction, scale: Fraction, m: int, rng) -> np.ndarray:
    """m independent Polya(r, a) - Polya(r, a), a = exp(-1/scale)."""
    x = polya(r, scale, (2, m), rng)
    return x[0] - x[1]


def pidlap_bits(n: int, bits: int, separate_pair: bool = False) -> int:
    """Communication of :func:`pi_dlap`: n (n-1) l bits (2 n (n-1) l with ``separate_pair``)."""
    return (2 if separate_pair else 1) * n * (n - 1) * bits


def committee_bits(n: int, m: int, bits: int) -> int:
    """Communication of :func:`committee_dlap`: m (n-1) l bits (each member shares with all)."""
    return m * (n - 1) * bits


# -- the discrete Laplace protocols -------------------------------------------------------
def pi_dlap(s, scale, *, parties=None, separate_pair: bool = False) -> tuple[np.ndarray, bool]:
    """Pi_DLap (Sinh & Ramon, Protocol B.1; Balle et al. 2020): all-to-all shared discrete Laplace.

    Steps: (1) party P_i draws a_i, b_i ~ Polya(1/n, a), a = exp(-1/scale);
    (2-3) P_i additively shares c_i = a_i - b_i among the n parties and sends
    share j to P_j (with ``separate_pair=True``, a_i and b_i are shared
    separately, exactly as in the paper); (4) P_j sums what it holds.
    The shares sum to sum_i (a_i - b_i) ~ DLap(a) exactly (exact Polya
    draws, see :func:`noise.samplers.polya`).

    Cost: one round, n (n-1) l bits (2 n (n-1) l with ``separate_pair``);
    the paper states n^2 l. Threat model M_Dis (semi-honest, up to n-1
    corrupted; see the module's privacy caveat).
    Returns ``(shares uint64 (n,), exact)``.
    """
    s = _check_session(s)
    P = _check_parties(s, parties)
    scale = as_fraction(scale, "scale")
    ring, net = s.ring, s.net
    n = P.size
    rng = _stream(s, "pi_dlap")
    r = Fraction(1, n)
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
    with net.round():
        for row in secrets:
            sh = additive_share(ring, row, n, rng)        # sh[j, i] = P_j's share of c_i
            net.send_all_to_all(P, sh.T, ring.bits)       # P_i sends sh[j, i] to P_j
            out = ring.add(out, ring.sum(sh, axis=1))
    return out, True


def committee_size(fail, f_h) -> int:
    """ceil(log(fail) / log(1 - f_H)): a committee with an honest member w.p. >= 1 - fail.

    ``fail`` in (0, 1); ``f_h`` (fraction of honest parties) in (0, 1]; f_h = 1
    gives 1. Sinh & Ramon, Sec. 4 (model M_HF).
    """
    fl = float(fail)
    if isinstance(fail, bool) or not (0.0 < fl < 1.0):
        raise ValueError(f"fail must be in (0, 1), got {fail!r}")
    fh = float(f_h)
    if isinstance(f_h, bool) or not (0.0 < fh <= 1.0):
        raise ValueError(f"f_h must be in (0, 1], got {f_h!r}")
    if fh == 1.0:
        return 1
    return max(1, math.ceil(math.log(fl) / math.log1p(-fh) - 1e-12))


def draw_committee(rng, parties: np.ndarray, size: int) -> np.ndarray:
    """``size`` distinct parties drawn uniformly (public coin from ``rng``), in drawn order."""
    parties = np.asarray(parties, dtype=np.int64)
    m = min(int(size), parties.size)
    return parties[rng.choice(parties.size, m)]


def committee_dlap(s, scale, *, parties=None, fail=2.0 ** -40, f_h=0.5):
    """M_HF variant: a random committee draws discrete Laplace noise and shares it with all.

    Steps: (0) a committee Z of m = min(committee_size(fail, f_h), n) parties
    is drawn with public coins (the session CSPRNG; a deployment would use a
    coin-flipping protocol); (1) member k draws c_k = Polya(1/m, a) -
    Polya(1/m, a); (2) member k additively shares c_k among all n parties
    and sends them their shares; (3) every party sums its m shares.
    sum_k c_k ~ DLap(a).

    Cost: one round, m (n-1) l bits (O(n l)). Threat model M_HF: at most a
    (1 - f_H) fraction corrupted, so Z has an honest member except with
    probability (1 - f_H)^m <= fail. Returns ``(shares, committee, exact)``.
    """
    s = _check_session(s)
    P = _check_parties(s, parties)
    m = committee_size(fail, f_h)
    scale = as_fraction(scale, "scale")
    ring, net = s.ring, s.net
    n = P.size
    Z = draw_committee(s.rng.derive("noise", "committee", int(s.rng.uint64())), P, m)
    m = Z.size
    rng = _stream(s, "committee")
    r = Fraction(1, m)
    c = _encode_signed(ring, _polya_differences(r, scale, m, rng), "Polya difference")
    pos = np.searchsorted(np.sort(P), Z)
    order = np.argsort(P)
    pos = order[pos]                                         # index of each member in P
    out = ring.zeros(n)
    with net.round():
        for k in range(m):                                   # loop over ~40 members, vectorized over n
            sh = additive_share(ring, c[k:k + 1], n, rng)[:, 0]
            if n > 1:
                recv = np.delete(np.arange(n), pos[k])
                net.send(int(Z[k]), P[recv], sh[recv], ring.bits)
            out = ring.add(out, sh)
    return out, Z, True


def local_dlap(s, scale, *, parties=None):
    """Remark B.1: each party's own Polya difference, no communication.

    Party P_i outputs c_i = Polya(1/n, a) - Polya(1/n, a) encoded in Z_2^l;
    sum_i c_i ~ DLap(a). This is *not* a secret sharing: c_i is P_i's own
    noise, safe only when added to a value that is already uniformly masked
    (as the local sums of shares in Pi_U-MPC are), so that z_i = y_i + c_i
    stays uniform. Cost: 0 bits, 0 rounds. Threat model as Pi_DLap.
    """
    s = _check_session(s)
    P = _check_parties(s, parties)
    scale = as_fraction(scale, "scale")
    n = P.size
    rng = _stream(s, "local")
    r = Fraction(1, n)
    c = _polya_differences(r, scale, n, rng)
    return _encode_signed(s.ring, c, "Polya difference"), True


def shared_dlap_noise(s, epsilon, sensitivity, *, threat_model="dis", parties=None,
                      fail=2.0 ** -40, f_h=0.5) -> NoiseShares:
    """Shares of discrete Laplace noise for the U-MPC layer (epsilon-DP, delta = 0).

    The noise is integer, in fixed-point units of ``s.fp`` (granularity
    2^-c): discrete Laplace with scale t >= sensitivity 2^c / epsilon, so
    that decoding the total with ``s.fp`` gives Laplace-like noise of scale
    sensitivity / epsilon. ``sensitivity`` is in REAL units.

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
    discrete Laplace for the rational scale actually used.
    """
    s = _check_session(s)
    if threat_model not in THREAT_MODELS:
        raise ValueError(f"threat_model must be one of {THREAT_MODELS}, got {threat_model!r}")
    eps_used, sens, sens_ring, scale = _dlap_params(s, epsilon, sensitivity)
    wrap = dlap_wrap_probability(scale, s.ring.bits)
    if wrap > MAX_WRAP_PROBABILITY:
        raise ValueError(
            f"ring too small for the noise: discrete Laplace of scale {float(scale):.4g} ring units "
            f"wraps mod 2^{s.ring.bits} with probability {wrap:.3g} > {MAX_WRAP_PROBABILITY:.3g}; "
            "use more ring bits, fewer fractional bits, or a larger epsilon")
    P = _check_parties(s, parties)
    committee = None
    if threat_model == "dis":
        shares, exact = pi_dlap(s, scale, parties=P)
    elif threat_model == "hf":
        shares, committee, exact = committee_dlap(s, scale, parties=P, fail=fail, f_h=f_h)
    else:
        shares, exact = local_dlap(s, scale, parties=P)
    return NoiseShares(
        shares=shares, parties=P, distribution="discrete_laplace", scale=scale,
        epsilon=eps_used, sensitivity=sens, threat_model=threat_model, committee=committee,
        delta=0.0, sensitivity_ring=sens_ring, exact=exact, insecure_seed=bool(s.insecure),
        wrap_probability=wrap,
        notes="discrete Laplace a = exp(-1/scale) in ring units, sum of Polya differences")


# -- Gaussian-type protocols ----------------------------------------------------------------
def coin_flip_binomial(s, n_coins, *, step=1, parties=None, shape=(), sensitivity=None,
                       epsilon=None) -> NoiseShares:
    """Coin-flipping binomial noise (Dwork et al. 2006; Sinh & Ramon App. B.2.1).

    Steps: (1) for coin k, party P_{k mod p} draws a bit c_k and additively
    shares it among the p parties (online); (2) the dealer shares a uniform
    bit b_k (offline, the "jointly generated" high-quality bits); (3) the
    parties compute shares of c_k XOR b_k = c_k + b_k - 2 c_k b_k with one
    Beaver multiplication (:func:`mpc.beaver.multiply`, all coins in one
    batch); (4) each party outputs step * sum_k z_k (the public
    -step * floor(n_coins / 2) is added by the first party). The total is
    step (B - floor(n_coins / 2)), B ~ Binomial(n_coins, 1/2) exactly,
    variance step^2 n_coins / 4 (centred for even n_coins), as long as c_k
    or b_k is uniform. The noise lives on the lattice step * Z, so every
    query shift that is a multiple of ``step`` is covered by the accounting
    (noise on a coarser lattice, e.g. step (2 B - n), would give disjoint
    supports, delta = 1, for odd shifts).

    Cost (per noise element, N = n_coins): online N (p-1) l bits for the
    sharings plus 2 N p (p-1) l for the multiplication, 2 rounds; offline
    N p l (bits b) + 3 N p l (triples). Threat model: semi-honest, trusted
    dealer. Accounting: with ``sensitivity`` (ring units, a multiple of
    ``step``; the query must take values in step * Z) and ``epsilon``,
    delta is computed from the binomial privacy profile over every shift
    up to the sensitivity (:func:`noise.accounting.binomial_mechanism_delta`).
    """
    s = _check_session(s)
    P = _check_parties(s, parties)
    n_coins = acc.check_n(n_coins, "n_coins")
    step = acc.check_n(step, "step")
    shape = _shape(shape)
    ring, net = s.ring, s.net
    p = P.size
    rng = _stream(s, "coins")
    size = int(np.prod(shape, dtype=np.int64))
    N = n_coins * size
    c = rng.bits(N).astype(np.uint64)                          # coin k owned by P[k mod p]
    c_sh = additive_share(ring, c, p, rng)                     # (p, N)
    owner = np.arange(N) % p
    if p > 1:
        with net.round():
            for j in range(1, p):                              # loop over share rows (p), vectorized over coins
                recv = (owner + j) % p
                # owner sends row recv[k] of coin k to P[recv[k]]
                net.send(P[owner], P[recv], c_sh[recv, np.arange(N)], ring.bits)
    b = s.dealer.rng.bits(N).astype(np.uint64)
    b_sh = s.dealer.share(P, b) if p > 1 else b[None, :]
    if p > 1:
        cb = multiply(s, c_sh, b_sh, P)
    else:
        cb = ring.mul(c_sh, b_sh)
    z = ring.sub(ring.add(c_sh, b_sh), ring.smul(2, cb))       # shares of c XOR b
    tot = ring.sum(z.reshape(p, size, n_coins), axis=2)        # shares of B
    out = ring.smul(step, tot)
    out[0] = ring.sub(out[0], ring.element(step * (n_coins // 2)))
    eps_out, delta = float("nan"), float("nan")
    sens_ring = float("nan")
    if sensitivity is not None or epsilon is not None:
        if sensitivity is None or epsilon is None:
            raise ValueError("sensitivity and epsilon must be given together")
        sens_ring = acc.check_sensitivity(sensitivity)
        eps_out = acc.check_epsilon(epsilon)
        if sens_ring % step:
            raise ValueError(f"sensitivity must be a multiple of step = {step} ring units, got {sensitivity!r}")
        delta = acc.binomial_mechanism_delta(n_coins, int(sens_ring // step), eps_out)
    return NoiseShares(
        shares=out.reshape((p,) + shape), parties=P, distribution="binomial", scale=step,
        epsilon=eps_out, sensitivity=sens_ring, threat_model="dis", delta=delta,
        sensitivity_ring=sens_ring, exact=True, insecure_seed=bool(s.insecure),
        notes=f"step*(Binomial({n_coins}, 1/2) - {n_coins // 2}), coin flipping")


def distributed_discrete_gaussian(s, sigma2, *, parties=None, shape=(), mode="share",
                                  sensitivity=None, delta=None) -> NoiseShares:
    """Distributed discrete Gaussian: each of the p parties adds N_Z(0, sigma2 / p).

    Steps: P_i draws g_i ~ N_Z(0, sigma2/p) exactly (CKS20 Alg. 3, rational
    sigma2/p); with ``mode="share"`` it additively shares g_i among all
    parties (one round, p (p-1) l bits per element); with ``mode="local"``
    it keeps g_i (no communication; Remark B.1 conditions apply).

    Privacy: the total is NOT a discrete Gaussian. We report
    rho = min(rho_KLS, Delta^2 / (2 sigma2/p)) zCDP
    (:func:`noise.accounting.distributed_discrete_gaussian_rho`: Kairouz, Liu,
    Steinke 2021, and the trivial one-honest-party bound) and
    epsilon = rho + 2 sqrt(rho ln(1/delta)). ``sensitivity`` is the L2
    sensitivity in ring units. Threat model: semi-honest; see the module's
    caveat on colluding parties.
    """
    s = _check_session(s)
    P = _check_parties(s, parties)
    if mode not in ("share", "local"):
        raise ValueError(f"mode must be 'share' or 'local', got {mode!r}")
    s2 = as_fraction(sigma2, "sigma2")
    shape = _shape(shape)
    ring, net = s.ring, s.net
    p = P.size
    each = s2 / p
    rng = _stream(s, "dgauss")
    size = int(np.prod(shape, dtype=np.int64))
    g = _encode_signed(ring, discrete_gaussian(each, (p, size), rng), "discrete Gaussian")
    if mode == "share" and p > 1:
        sh = additive_share(ring, g, p, rng)                  # (j, i, e): P_j's share of g_i[e]
        I, J = np.nonzero(~np.eye(p, dtype=bool))
        with net.round():
            net.send(P[I], P[J], sh[J, I], ring.bits)
        out = ring.sum(sh, axis=1)
    else:
        out = g
    eps_out, rho = float("nan"), float("nan")
    sens = float("nan")
    if sensitivity is not None or delta is not None:
        if sensitivity is None or delta is None:
            raise ValueError("sensitivity and delta must be given together")
        sens = acc.check_sensitivity(sensitivity)
        rho = acc.distributed_discrete_gaussian_rho(sens, float(each), p)
        eps_out = acc.zcdp_to_dp(rho, delta)
    return NoiseShares(
        shares=out.reshape((p,) + shape), parties=P, distribution="discrete_gaussian_sum",
        scale=s2, epsilon=eps_out, sensitivity=sens, threat_model="dis" if mode == "share" else "local",
        delta=float(delta) if delta is not None else float("nan"), sensitivity_ring=sens,
        exact=True, insecure_seed=bool(s.insecure),
        notes=f"sum of {p} iid N_Z(0, {each}); rho = {rho} zCDP")
