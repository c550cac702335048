"""Discrete Laplace noise sampled inside a secure computation, from the contributors' coins.

The noise eta is never held by anybody: p contributors run a Boolean GMW
computation (:class:`mpc.protocols.gmw.GMW`) on random coins that each of them draws
alone, and end with additive shares of eta in Z_2^l, ready to be added to
the shares of an aggregate so that only aggregate + eta is ever opened.
Against any coalition lacking one contributor, eta is hidden (the honest
contributor's coins are a one-time pad on every coin; every opened value of
the computation is masked by a triple or daBit); so the release keeps the
central model's law, one discrete Laplace, with no collusion margin.

Sampler (the bitwise method; Dwork, Kenthapadi, McSherry, Mironov, Naor,
EUROCRYPT 2006, Sec. 5; the "folklore" biased coin of Champion, shelat,
Ullman, "Securely sampling biased coins with applications to differential
privacy", CCS 2019):

1. X = G1 - G2 with G1, G2 iid geometric, P(G = g) = (1 - a) a^g,
   a = exp(-1/t), is exactly DLap(a): P(X = x) = (1 - a) / (1 + a) a^|x|.
2. The binary digits of a geometric are independent:
   G = sum_j 2^j B_j with B_j ~ Bernoulli(p_j), p_j = a^(2^j) / (1 + a^(2^j)).
   The sampler keeps j < J (``geometric_bits``).
3. B_j = [U_j < P_j]: U_j uniform on K bits (``coin_bits``), P_j the public
   nearest integer to p_j 2^K. U_j is the XOR of the contributors' K-bit
   coins: a contributor's own coins are its XOR share, so no input round.
4. The comparison with the public P_j is a tree of (less-than, equal) pairs
   over the K bits, most significant first: ceil(log2 K) AND layers and
   :func:`comparison_and_rows` (K) AND gates (95 at K = 50); or, with
   ``depth="linear"`` (the default with OT triples, which cost per gate), a
   ripple from the least significant bit: K - 1 gates in K - 1 layers.
5. The 2J output bits become additive shares in Z_2^l (daBits with the
   dealer, an OT fold without) and eta = sum_j 2^j ([B1_j] - [B2_j]), a
   linear combination: no adder circuit.

Accuracy (truncation and rounding are a delta, reported): a coupling of B_j
with the exact digit gives TV(law of G', Geometric) <= a^(2^J) + sum_j
|P_j / 2^K - p_j|, so TV(law of X', DLap(a)) <= ``tv`` = 2 (that). A mechanism
that adds X' where X gives epsilon-DP is (epsilon, (1 + e^epsilon) tv)-DP
(P[M'(D) in S] <= P[M(D) in S] + tv <= e^eps (P[M'(D') in S] + tv) + tv); a
release with D draws pays D tv. :func:`plan_dlap` picks the smallest J and K
whose delta is at most the target (2^-40 by default), exactly (rational
bounds on every p_j). |X'| < 2^J: no wrap in Z_2^l while J <= l - 1.

Cost per draw (2J instances of one comparison; p contributors): online
2 J rows(K) AND gates, opened through the GMW kings (2 (p - 1) x 2 bits per
gate, 2 rounds per layer; p = 2: 2 x 2 bits, 1 round) plus 2J bit openings
for the conversion; offline (dealer) 3 bits per gate and 1 + l bits per
converted bit and contributor, one round each (OT triples: p (p - 1) OTs
per gate, :mod:`mpc.protocols.gmw`). Rounds do not depend on the number of draws,
which are bit-sliced 64 to a word: at Bank's scale (J = 22, K = 47) 14
online rounds and 2 offline. Measured: benchmarks/umpc_noise.py.

Threat model: static semi-honest adversary corrupting up to p - 1 of the p
contributors (and the aggregator), private channels; ``triples="dealer"``
adds the trusted dealer of the session (it learns nothing about eta: its
triples and daBits are independent of the coins), ``"ot"`` has no dealer.
"""

from __future__ import annotations

import functools
import math
import numbers
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import ArrayLike

from mpc.protocols.gmw import GMW, TRIPLE_SOURCES, pack_rows

from .samplers import RealLike, as_fraction, exp_neg_bounds

if TYPE_CHECKING:
    from mpc.arith.rng import CSPRNG
    from mpc.session import Session

__all__ = [
    "DEPTHS", "MAX_COIN_BITS", "MAX_DELTA", "DLapSamplerPlan", "SecureDraws", "comparison_and_rows",
    "plan_dlap", "sample_from_coins", "secure_dlap",
]

#: The largest delta a plan may spend (the issue's bound): truncation and rounding together.
MAX_DELTA = 2.0 ** -40
#: Coins per Bernoulli at most (one 64-bit word per threshold).
MAX_COIN_BITS = 64


@dataclass(frozen=True)
class DLapSamplerPlan:
    """What the circuit computes for DLap(a = exp(-1/scale)), and what it costs in accuracy.

    ``thresholds[j]`` = P_j: B_j = [U_j < P_j] with U_j uniform on
    ``coin_bits`` bits, for j < ``geometric_bits``. ``truncation`` >= a^(2^J)
    and ``rounding`` >= sum_j |P_j / 2^K - p_j| are rigorous upper bounds.
    """

    scale: Fraction
    geometric_bits: int
    coin_bits: int
    thresholds: tuple
    truncation: float
    rounding: float

    @property
    def tv(self) -> float:
        """Upper bound on the total variation distance between the output law and DLap(a)."""
        return _up(2.0 * (self.truncation + self.rounding))

    def delta(self, epsilon: float, draws: int = 1) -> float:
        """(1 + e^epsilon) draws tv: the delta of an epsilon-DP release adding ``draws`` of them."""
        return _up((1.0 + math.exp(float(epsilon))) * int(draws) * self.tv * (1.0 + 1e-12))

    @property
    def and_gates(self) -> int:
        """AND gates per draw (2J comparisons)."""
        return 2 * self.geometric_bits * comparison_and_rows(self.coin_bits)

    @property
    def coins(self) -> int:
        """Coin bits per draw and contributor."""
        return 2 * self.geometric_bits * self.coin_bits

    @property
    def max_abs(self) -> int:
        """|X'| <= 2^J - 1."""
        return (1 << self.geometric_bits) - 1

    def geometric_counts(self) -> np.ndarray:
        """Exact law of G': integer counts over the 2^(J K) coin values, g = 0..2^J - 1."""
        J, K = self.geometric_bits, self.coin_bits
        counts = [1]
        for j in range(J):       # digit j: counts(g) *= P_j if bit j of g else 2^K - P_j
            P = self.thresholds[j]
            counts = [c * (1 << K) - c * P for c in counts] + [c * P for c in counts]
        return np.array(counts, dtype=object)

    def pmf(self) -> tuple[np.ndarray, np.ndarray]:
        """``(support, probabilities)`` of X' = G1' - G2' (float64; small J)."""
        total = float(1 << (self.geometric_bits * self.coin_bits))
        g = self.geometric_counts().astype(np.float64) / total
        x = np.convolve(g, g[::-1])
        return np.arange(-(g.size - 1), g.size), x

    def to_dict(self) -> dict:
        return {"geometric_bits": self.geometric_bits, "coin_bits": self.coin_bits,
                "and_gates_per_draw": self.and_gates, "coins_per_draw": self.coins,
                "truncation": self.truncation, "rounding": self.rounding, "tv": self.tv}


DEPTHS = ("log", "linear")


def comparison_and_rows(K: int, depth: str = "log") -> int:
    """AND gates of [U < P] for public P on K bits, as :func:`_less_than_public` builds it.

    ``"log"``: the (lt, eq) tree, ceil(log2 K) layers; ``"linear"``: the
    ripple from the least significant bit, K - 1 gates in K - 1 layers.
    """
    if depth == "linear":
        return K - 1
    total = 0
    while K > 1:
        h = K // 2
        total += h + (h if K % 2 else h - 1)
        K = h + K % 2
    return total


def _up(x: float) -> float:
    return math.nextafter(float(x), math.inf)


def _check_draws(draws) -> int:
    if isinstance(draws, bool) or not isinstance(draws, numbers.Integral) or draws < 1:
        raise ValueError(f"draws must be a positive integer, got {draws!r}")
    return int(draws)


def plan_dlap(scale: RealLike, *, epsilon: float, draws: int = 1,
              delta: float = MAX_DELTA) -> DLapSamplerPlan:
    """The cheapest (J, K) whose ``plan.delta(epsilon, draws)`` is at most ``delta``.

    ``scale``: t in the noise's integer units (exact rational, as the
    samplers take it); ``epsilon``: the guarantee the ideal DLap gives (for
    (1 + e^epsilon)); ``draws``: how many of these noises one release adds.
    ValueError when K would exceed 64 bits (epsilon too large for 2^-40).
    """
    t = as_fraction(scale, "scale")
    eps = float(epsilon)
    if not math.isfinite(eps) or eps <= 0:
        raise ValueError(f"epsilon must be finite and > 0, got {epsilon!r}")
    draws = _check_draws(draws)
    d = float(delta)
    if not 0.0 < d < 1.0:
        raise ValueError(f"delta must be in (0, 1), got {delta!r}")
    if eps > 50:             # 1 + e^eps > 2^72: no 64-bit sampler reaches any useful delta
        raise ValueError(_TOO_MANY_BITS.format(tv=d / math.inf if eps > 700 else
                                               d / (1 + math.exp(eps)) / draws))
    plan = _plan(t, Fraction(d) / (Fraction(1 + math.exp(eps)) * draws * (1 + Fraction(1, 10**9))))
    if plan.delta(eps, draws) > d:            # pragma: no cover (the budget has slack)
        raise AssertionError("plan exceeds its delta")
    return plan


_TOO_MANY_BITS = (f"the in-MPC sampler would need more than {MAX_COIN_BITS} coin bits per digit "
                  "for a total variation of {tv:.3g}; use a smaller epsilon, fewer draws or the "
                  "Polya method")


@functools.lru_cache(maxsize=128)
def _plan(t: Fraction, tv_budget: Fraction) -> DLapSamplerPlan:
    """Smallest J with 2 a^(2^J) <= budget / 2, then smallest K with the whole tv <= budget."""
    quarter = tv_budget / 4
    J = 1
    while exp_neg_bounds(Fraction(1 << J) / t, 80)[1] > quarter:
        J += 1
    trunc = exp_neg_bounds(Fraction(1 << J) / t, 80)[1]
    bounds = [_digit_bounds(t, j) for j in range(J)]
    need = tv_budget / 2 - trunc                      # what rounding may use
    K = max(2, int(math.log2(J / float(need))))
    while True:
        if K > MAX_COIN_BITS:
            raise ValueError(_TOO_MANY_BITS.format(tv=float(tv_budget)))
        thresholds, err = _round_digits(bounds, K)
        if err <= need:
            break
        K += 1
    return DLapSamplerPlan(t, J, K, tuple(thresholds), _up(float(trunc)), _up(float(err)))


def _digit_bounds(t: Fraction, j: int) -> tuple[Fraction, Fraction]:
    """Rational bounds on p_j = x / (1 + x), x = exp(-2^j / t), to 2^-100."""
    lo, hi = exp_neg_bounds(Fraction(1 << j) / t, 100)
    return lo / (1 + lo), hi / (1 + hi)


def _round_digits(bounds, K: int):
    """P_j = nearest integer to p_j 2^K (from the midpoint) and sum_j |P_j / 2^K - p_j| (bound)."""
    scale = 1 << K
    out, err = [], Fraction(0)
    for lo, hi in bounds:
        mid = (lo + hi) / 2
        P = int(mid * scale + Fraction(1, 2))
        q = Fraction(P, scale)
        err += max(abs(q - lo), abs(hi - q))
        out.append(P)
    return out, err


# -- the secure computation ----------------------------------------------------------------
@dataclass(frozen=True)
class SecureDraws:
    """Additive shares ``uint64 (p, draws)`` in Z_2^l of the noises, and the computation's cost."""

    shares: np.ndarray
    holders: np.ndarray
    plans: tuple
    triples: str
    and_gates: int          # AND gates evaluated (all instances)
    and_layers: int         # AND layers (each one opening)
    openings: int


def _instances(plans, K: int, ring):
    """Per instance (draw d, geometric g, digit j): K-bit threshold, weight +-2^j; draw starts."""
    thr, wts, starts = [], [], []
    pos = 0
    cache = {}
    for plan in plans:
        key = id(plan)
        if key not in cache:
            J = plan.geometric_bits
            P = np.array([p << (K - plan.coin_bits) for p in plan.thresholds], dtype=np.uint64)
            w = np.array([1 << j for j in range(J)], dtype=np.uint64)
            cache[key] = (np.concatenate([P, P]), np.concatenate([w, ring.neg(w)]))
        t, w = cache[key]
        thr.append(t)
        wts.append(w)
        starts.append(pos)
        pos += t.size
    return np.concatenate(thr), np.concatenate(wts) & ring.mask, np.array(starts, dtype=np.int64)


def _public_bits(thresholds: np.ndarray, K: int) -> np.ndarray:
    """``uint64 (K, W)``: bit K-1-k of every threshold in row k (row 0 the most significant)."""
    shifts = np.arange(K - 1, -1, -1, dtype=np.uint64)
    bits = ((thresholds[None, :] >> shifts[:, None]) & np.uint64(1)).astype(np.uint8)
    return pack_rows(bits)


def _less_than_public(ctx: GMW, u: np.ndarray, pub: np.ndarray, depth: str = "log") -> np.ndarray:
    """XOR shares ``(p, 1, W)`` of [U < P]; ``u`` (p, K, W) shares of U's bits, ``pub`` P's bits.

    Rows are most significant first. Leaves: lt_k = P_k AND NOT u_k and
    eq_k = NOT (u_k XOR P_k), both local. A pair (high H, low L) combines to
    lt = lt_H XOR (eq_H AND lt_L), eq = eq_H AND eq_L (disjoint events, so XOR
    is OR); the last node of a level is never a high half, so its eq is not
    computed (a zero placeholder keeps the rows aligned).
    """
    lt = ctx.not_(u) & pub
    eq = u.copy()
    eq[0] ^= ~pub & ctx.mask
    if depth == "linear":                # r = lt_k XOR (eq_k AND r), least significant first
        r = lt[:, -1:]
        for k in range(lt.shape[1] - 2, -1, -1):
            r = lt[:, k:k + 1] ^ ctx.and_(eq[:, k:k + 1], r)
        return r
    while lt.shape[1] > 1:
        K = lt.shape[1]
        h = K // 2
        need = h if K % 2 else h - 1
        eq_h = eq[:, 0:2 * h:2]
        prod = ctx.and_(np.concatenate([eq_h, eq_h[:, :need]], axis=1),
                        np.concatenate([lt[:, 1:2 * h:2], eq[:, 1:2 * need:2]], axis=1))
        new_lt = lt[:, 0:2 * h:2] ^ prod[:, :h]
        new_eq = prod[:, h:]
        if K % 2:
            new_lt = np.concatenate([new_lt, lt[:, -1:]], axis=1)
            new_eq = np.concatenate([new_eq, eq[:, -1:]], axis=1)
        else:
            new_eq = np.concatenate([new_eq, np.zeros_like(new_eq[:, :1])], axis=1)
        lt, eq = new_lt, new_eq
    return lt


def secure_dlap(session: Session, plans: Sequence[DLapSamplerPlan], *, holders: ArrayLike,
                triples: str = "dealer", rng: CSPRNG | None = None,
                depth: str | None = None) -> SecureDraws:
    """Draw one noise per plan in ``plans`` inside GMW among ``holders``; additive shares out.

    ``plans``: a sequence of :class:`DLapSamplerPlan` (one per draw; repeat a
    plan for many draws of one law). ``holders``: the p contributors (party
    ids). ``triples``: ``"dealer"`` (the session's trusted dealer) or ``"ot"``
    (dealer-free). ``rng``: the computation's stream (default: a fresh one
    derived from the session's). ``depth``: the comparison circuit, ``"log"``
    (ceil(log2 K) AND layers, about 2K gates; the default with the dealer)
    or ``"linear"`` (K - 1 gates in K - 1 layers: half the gates, the
    default with OT triples, whose cost is per gate). Traffic is counted in
    the caller's phase.
    Returns :class:`SecureDraws`; shares sum mod 2^l to the signed noise.
    Steps and cost: module docstring.
    """
    plans = tuple(plans)
    if not plans or not all(isinstance(p, DLapSamplerPlan) for p in plans):
        raise TypeError("plans must be a non-empty sequence of DLapSamplerPlan")
    if triples not in TRIPLE_SOURCES:
        raise ValueError(f"triples must be one of {TRIPLE_SOURCES}, got {triples!r}")
    ring = session.ring
    J = max(p.geometric_bits for p in plans)
    if ring.bits - 1 < J:
        raise ValueError(f"ring too small for the noise: the sampler's |noise| < 2^{J} needs at "
                         f"least {J + 1} ring bits, the session has {ring.bits}")
    K = max(p.coin_bits for p in plans)
    depth = depth or ("log" if triples == "dealer" else "linear")
    if depth not in DEPTHS:
        raise ValueError(f"depth must be one of {DEPTHS}, got {depth!r}")
    if rng is None:
        rng = session.rng.derive("noise", "mpc-sampler", int(session.rng.uint64()))
    thr, weights, starts = _instances(plans, K, ring)
    ctx = GMW(session, holders, thr.size, rng, triples=triples)
    coins = ctx.holder_words("coins", K)            # each contributor's coins: its XOR share of U
    shares = _noise_from_coins(ctx, coins, thr, weights, starts, depth)
    layers = (K - 1 if depth == "linear" else math.ceil(math.log2(K))) if K > 1 else 0
    return SecureDraws(shares, ctx.h, plans, triples, ctx.and_rows * thr.size, layers,
                       ctx.openings)


def _noise_from_coins(ctx: GMW, coins, thr, weights, starts, depth) -> np.ndarray:
    """Steps 4-5 on given coin shares ``(p, K, W)``: additive shares ``(p, draws)`` of the noises.

    The triples of every comparison gate are prepared first, in one go.
    """
    ring = ctx.ring
    ctx.reserve(comparison_and_rows(coins.shape[1], depth))
    bits = _less_than_public(ctx, coins, _public_bits(thr, coins.shape[1]), depth)
    arith = ctx.to_arith(bits)[:, 0, :]              # (p, I)
    terms = ring.mul(arith, weights[None, :])
    return np.add.reduceat(terms, starts, axis=1) & ring.mask


def sample_from_coins(plan: DLapSamplerPlan, coins: np.ndarray) -> np.ndarray:
    """The plaintext function the circuit computes: X' from coins ``uint64 (..., 2, J)``.

    ``coins[..., g, j]`` is U_j of geometric g (K-bit integers).
    """
    P = np.array(plan.thresholds, dtype=np.uint64)
    B = (np.asarray(coins, dtype=np.uint64) < P).astype(np.int64)
    w = np.int64(1) << np.arange(plan.geometric_bits, dtype=np.int64)
    G = (B * w).sum(axis=-1)
    return G[..., 0] - G[..., 1]
