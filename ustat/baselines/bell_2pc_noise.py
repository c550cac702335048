"""The noise of Bell et al.'s 2PC protocol, drawn inside the garbled circuit, and its DP accounting.

Distribution (exact, for the integer-valued kernels of :mod:`.bell_2pc_circuits`):
a *table-inverted discrete Laplace*. Ideal target: the discrete Laplace
``DLap(alpha)`` on the integers, ``Pr[eta = k] = (1 - alpha)/(1 + alpha) alpha^|k|``,
``alpha = exp(-eps_pair / Delta)`` (Delta the kernel's integer range width), so
that ``Pr[eta = k] <= e^(eps_pair) Pr[eta = k + d]`` for every shift |d| <= Delta.

Sampler in the circuit (``R`` = ``noise_bits``):

1. Both users feed ``R + 1`` uniform bits; the circuit XORs them (free), so the
   uniform ``U`` (R bits) and the sign bit ``s`` are unknown to either user.
2. Magnitude by inversion on a public table of thresholds
   ``T_k = round(2^R F(k - 1))``, k = 1..K, with ``F(m) = 1 - 2 alpha^(m+1)/(1+alpha)``
   the CDF of |eta|; the table stops before a threshold that would repeat the
   previous one or reach 2^R (so every magnitude 0..K has positive mass; the
   mass of the ideal tail beyond K lands on K). ``|eta| = #{k : U >= T_k}``:
   the comparisons form a thermometer code, turned into binary by XORs only.
   Each comparison against a constant is computed MSB first; comparisons
   sharing a prefix of the thresholds share its gates (the builder's
   structural hashing), 1 AND per distinct prefix.
3. ``eta = s ? -|eta| : |eta|`` (conditional negation, w - 1 ANDs).

So, exactly: ``Pr[eta = 0] = T_1 / 2^R`` and ``Pr[eta = +-k] = (T_(k+1) - T_k) / 2^(R+1)``
(``T_(K+1) = 2^R``), :func:`noise_pmf`. It is not the ideal discrete Laplace:
rounding moves each probability by at most 2^-(R+1) and the support is
bounded, so the per-pair mechanism is (eps_pair, delta_pair)-DP with the
delta_pair that :func:`hockey_stick_delta` computes *on the implemented pmf*
(the largest hockey-stick divergence over the shifts 1..Delta; float64 on
exact rationals, error far below 2^-R). No delta is hidden: the run reports
it.

Composition (per user, whose record enters several pairs):

- subsampling (Bell et al. Theorem 5): P pairs per user, eps_pair = eps / P,
  basic composition: (eps, P delta_pair)-DP;
- all pairs: n - 1 pairs per user, eps_pair from advanced composition
  (Dwork, Rothblum, Vadhan 2010, Thm III.3: k-fold composition of
  (eps0, delta0) is (sqrt(2k ln(1/delta')) eps0 + k eps0 (e^eps0 - 1),
  k delta0 + delta')), :func:`advanced_eps0`, or basic composition when that
  allows a larger eps0; total delta = delta' + (n - 1) delta_pair.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from mpc.gc import CircuitBuilder, Word

#: Default bits R of the uniform variable the magnitude is inverted from.
DEFAULT_NOISE_BITS = 40
#: Largest table of thresholds (K): beyond it the circuit would be very large.
MAX_TABLE = 1 << 16


def check_noise_bits(bits: Any) -> int:
    if isinstance(bits, bool) or not isinstance(bits, (int, np.integer)):
        raise TypeError(f"noise_bits must be an integer in [8, 62], got {bits!r}")
    if not 8 <= bits <= 62:
        raise ValueError(f"noise_bits must be in [8, 62], got {bits}")
    return int(bits)


@functools.lru_cache(maxsize=32)
def thresholds(alpha: float, noise_bits: int) -> tuple:
    """The public table (T_1 < ... < T_K) of the magnitude's inversion (module docstring)."""
    if not 0.0 < alpha < 1.0:
        raise ValueError(f"alpha must be in (0, 1), got {alpha}")
    R = check_noise_bits(noise_bits)
    top = 1 << R
    out, prev, k = [], 0, 1
    c = 2.0 / (1.0 + alpha)
    while True:
        tail = c * alpha ** k                 # 1 - F(k - 1)
        t = top - round(tail * top)
        if t <= prev or t >= top:
            break
        out.append(t)
        prev, k = t, k + 1
        if len(out) > MAX_TABLE:
            raise ValueError(f"the noise table would need more than {MAX_TABLE} entries "
                             f"(alpha = {alpha:.6g}): epsilon per pair is too small for a circuit")
    if not out:
        raise ValueError(f"noise_bits = {R} cannot represent the noise of alpha = {alpha:.6g}")
    return tuple(out)


def noise_pmf(table: Sequence[int], noise_bits: int) -> np.ndarray:
    """Exact pmf of eta on [-K, K] (index k + K), as float64 from the integer table."""
    R = check_noise_bits(noise_bits)
    T = np.array((0,) + tuple(table) + (1 << R,), dtype=object)
    mass = np.diff(T)                          # Pr[|eta| = k] * 2^R, k = 0..K (exact ints)
    K = len(table)
    two = float(1 << (R + 1))
    pmf = np.zeros(2 * K + 1)
    pmf[K] = float(mass[0] * 2) / two
    half = np.array([float(m) for m in mass[1:]]) / two
    pmf[K + 1:] = half
    pmf[:K] = half[::-1]
    return pmf


def ideal_pmf(alpha: float, K: int) -> np.ndarray:
    """The discrete Laplace DLap(alpha) on [-K, K] (not renormalized)."""
    k = np.abs(np.arange(-K, K + 1))
    return (1 - alpha) / (1 + alpha) * alpha ** k


def hockey_stick_delta(pmf: np.ndarray, eps: float, max_shift: int) -> float:
    """max over shifts d = 1..max_shift of sum_k max(0, q(k) - e^eps q(k - d)).

    The delta of the mechanism v + eta for integer v changing by at most
    ``max_shift`` (q symmetric, so negative shifts give the same values).
    """
    q = np.asarray(pmf, dtype=np.float64)
    worst = 0.0
    e = math.exp(eps)
    for d in range(1, int(max_shift) + 1):     # loop over shifts (<= Delta), vectorized in k
        a = np.concatenate([q, np.zeros(d)])
        b = np.concatenate([np.zeros(d), q])
        worst = max(worst, float(np.maximum(a - e * b, 0.0).sum()))
    return worst


def advanced_eps0(eps: float, k: int, delta: float) -> tuple[float, str]:
    """Largest per-pair eps0 whose k-fold composition is (eps, delta')-DP (and the rule used).

    Advanced composition (Dwork-Rothblum-Vadhan 2010) solved by bisection, or
    basic composition eps / k when it is larger (small k).
    """
    if not 0.0 < delta < 1.0:
        raise ValueError(f"delta must be in (0, 1), got {delta}")
    basic = eps / k

    def total(e0):
        return math.sqrt(2 * k * math.log(1 / delta)) * e0 + k * e0 * math.expm1(e0)

    lo, hi = 0.0, eps
    for _ in range(200):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if total(mid) <= eps else (lo, mid)
    return (lo, "advanced") if lo > basic else (basic, "basic")


def noise_plan(eps_pair: float, kernel_delta: int, noise_bits: int) -> dict:
    """alpha, table, exact pmf, its variance and delta_pair for one pair's noise."""
    alpha = math.exp(-eps_pair / kernel_delta)
    table = thresholds(alpha, noise_bits)
    pmf = noise_pmf(table, noise_bits)
    K = len(table)
    ks = np.arange(-K, K + 1)
    ideal = ideal_pmf(alpha, K)
    tv = 0.5 * (np.abs(pmf - ideal).sum() + (1 - ideal.sum()))
    return {"alpha": alpha, "table": table, "pmf": pmf, "K": K,
            "variance": float(pmf @ (ks * ks)),
            "variance_ideal": 2 * alpha / (1 - alpha) ** 2,
            "tv_to_ideal": float(tv),
            "delta_pair": hockey_stick_delta(pmf, eps_pair, kernel_delta)}


# -- the sampler as a circuit fragment -------------------------------------------------------
def ge_const_bits(b: CircuitBuilder, U: Word, table: Sequence[int]) -> list:
    """Wires [U >= T_k] for the sorted constants T_k (MSB first, shared prefixes, 1 AND per node).

    Walking from the MSB with ``eq`` (U's prefix equals T's) and ``gt`` (U's
    prefix exceeds T's): at a bit where T has 0, ``gt ^= eq & U_i`` and
    ``eq &= ~U_i`` (= eq ^ (eq & U_i), the same AND); where T has 1,
    ``eq &= U_i``. Below T's lowest set bit the answer is ``gt | eq = gt ^ eq``.
    """
    from mpc.gc.builder import ONE, ZERO

    R = U.width
    out = []
    for t in table:                        # loop over the public table (circuit construction)
        eq, gt = ONE, ZERO
        low = (t & -t).bit_length() - 1 if t else R
        for i in range(R - 1, low - 1, -1):
            u = U.wires[i]
            a = b.and_bit(eq, u)
            if (t >> i) & 1:
                eq = a
            else:
                gt = b.xor_bit(gt, a)
                eq = b.xor_bit(eq, a)
        out.append(b.xor_bit(gt, eq))
    return out


def noise_word(b: CircuitBuilder, coins_g: Word, coins_e: Word, table: Sequence[int],
               width: int) -> Word:
    """The signed ``width``-bit noise eta from both users' coins (module docstring, steps 1-3)."""
    from mpc.gc import Word
    from mpc.gc.builder import ZERO

    R = coins_g.width - 1
    u = b.bxor(coins_g, coins_e)                 # free
    U, s = u[:R], u.wires[R]
    therm = ge_const_bits(b, U, table)
    K = len(table)
    mag = [ZERO] * width
    for k in range(1, K + 1):                    # one-hot -> binary, XORs only
        onehot = b.xor_bit(therm[k - 1], therm[k]) if k < K else therm[K - 1]
        for j in range(width):
            if (k >> j) & 1:
                mag[j] = b.xor_bit(mag[j], onehot)
    flipped = Word(b, [b.xor_bit(w, s) for w in mag])
    return b.add(flipped, Word(b, [s] + [ZERO] * (width - 1)))
