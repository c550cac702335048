"""How far an incomplete U-statistic can be from the complete one: a bound on its sampling sd.

The released U-statistic averages the kernel over the |E| = m edges the
sampler drew, not over all N = C(n, k) subsets of the n records. Its error
U_E - U has two parts in Hoeffding's decomposition (finite population):
with g(i) the kernel's mean over the subsets that contain record i,
h1(i) = g(i) - U (sum over i: 0) and zeta_1 = mean_i h1(i)^2,

    U_E - U = (1/m) sum_i deg_E(i) h1(i)  +  (1/m) sum_{e in E} rho(e),

where rho is the degenerate remainder, of variance V_h - k zeta_1 over the
N subsets (V_h = the kernel's variance over them). For any sampler whose
law does not depend on the records' labels (every sampler of
:mod:`ustat.sampling`: its law is invariant under relabelling the parties),
the degrees are a uniformly random assignment of the drawn degree sequence
to the records, so

    Var(U_E - U) ~ (1 - m/N) (V_h - k zeta_1) / m  +  n D2 zeta_1 / m^2,

D2 = sum_i (deg(i) - mean deg)^2 / (n - 1), the degree sequence's variance:
public, since E is. Uniform sampling has D2 ~ k m / n and the formula is the
classical V_h / m. BalancedSamp gives every degree floor or ceil of k m / n,
so D2 ~ 0 and the first-order part cancels: only the remainder is left,
which is why it is more accurate (Sinh and Ramon, Section 6.2.3). The
approximation drops terms of relative order 1/n (measured against the real
sampler in tests/ustat/test_sampling_error.py).

Neither V_h nor zeta_1 may be computed from the records (they are not
released), so :func:`sampling_sd` bounds the variance over every V_h and
zeta_1 the released values allow:

* V_h <= (hi - U)(U - lo) (Bhatia-Davis, for a kernel with values in
  [lo, hi]; equality for two-valued kernels such as the AUC without ties);
* k zeta_1 <= V_h (the first-order part is a projection of the kernel);
* zeta_1 >= the variance of g between classes, for *class kernels*
  (``kernel.extra["one_per_class"]``: AUC, VUS; the kernel is 0 unless its
  k members carry the k different class labels, and lo = 0): every nonzero
  subset holds one member of class c, so g's mean over class c is
  U n / (k n_c), and zeta_1 >= U^2 ((n / k^2) sum_c 1 / n_c - 1) by the law
  of total variance. For the AUC this is r (1 - r) AUC^2 (1 - 2r)^2 with
  r = n+ / n: most of zeta_1 when the classes are unbalanced (Bank: 0.040 of
  0.044), so the bound is 1.08 times the true sampling sd there, against
  1.64 for the Bhatia-Davis bound alone.

The variance is linear in zeta_1, so its maximum over the allowed zeta_1 is
at an end; the maximum over U and the class sizes is taken over the ranges
the caller gives (where the complete statistic can be, from the released
values and the noise laws). Without class counts nothing bounds zeta_1 away
from 0 and the bound is (1 - m/N) V_h / m: exact for Kendall-type kernels
without ties and independent columns up to the factor 1 / (1 - 2/9).

Ties: a kernel with values in {-1, 0, 1} such as Kendall's has V_h = P(h != 0)
- U^2, less than Bhatia-Davis's 1 - U^2 when pairs tie (5-level columns: 0.64
against 1, and the interval 1.5 times too wide). Kendall therefore releases,
with its own small share of epsilon, the mean of h^2 over E (the fraction of
untied pairs, :attr:`ustat.kernels.Kernel.edge_aux_names`), and the bound
uses V_h <= T+ - U^2 with T+ that mean's upper confidence limit
(:func:`second_moment_limit`: its DP tail plus its own edge-sampling spread).
On 5-level columns that brings the interval to about 1.2 times the error's
sd times the normal quantile, the rest being zeta_1, which (U, T) do not
bound away from 0.

Cost: O(grid) arithmetic, no record is read. Threat model: post-processing
of released values and public parameters (n, m, k, the degrees of E).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from statistics import NormalDist
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from ..kernels import Kernel

__all__ = ["Design", "class_sizes", "sampling_sd", "second_moment_limit"]

#: Points of the grid over U's range (the bound is smooth in U).
U_GRID = 201


@dataclass(frozen=True)
class Design:
    """The public facts of the hypergraph that the sampling error depends on."""

    edges: int                  # m
    degree_variance: float      # D2 = sum_i (deg(i) - mean)^2 / (n - 1)
    sampler: str = "unknown"

    @classmethod
    def of_edges(cls, E: np.ndarray, n: int, sampler: str = "unknown") -> Design:
        deg = np.bincount(np.asarray(E).ravel(), minlength=n).astype(np.float64)
        d2 = float(((deg - deg.mean()) ** 2).sum() / max(n - 1, 1))
        return cls(int(np.asarray(E).shape[0]), d2, sampler)

    @classmethod
    def uniform_like(cls, m: int, n: int, k: int) -> Design:
        """Degrees as variable as uniform sampling's (the default when E is not given)."""
        return cls(int(m), k * m / n * (1.0 - k / n), "uniform (assumed)")


def class_sizes(kern: Kernel, aux: Iterable[float], n: int) -> list[float]:
    """The class sizes of a class kernel from its released counts (AUC: n+, and n - n+)."""
    aux = [float(a) for a in aux]
    return aux + [n - sum(aux)] if len(aux) == kern.degree - 1 else aux


def _between_factor(kern, n, aux_box) -> float:
    """min over the class sizes allowed of (n / k^2) sum_c 1 / n_c - 1 (0 without classes).

    Each class size is replaced by the largest it can be (its box's upper end,
    at most n), which makes the sum smaller: a valid lower bound."""
    if not kern.extra.get("one_per_class") or not aux_box or kern.output_range[0] != 0:
        return 0.0
    k = kern.degree
    his = [hi for _, hi in aux_box]
    if len(aux_box) == k - 1:                       # the last class is n minus the others
        his.append(n - sum(lo for lo, _ in aux_box))
    his = [min(max(h, 1.0), float(n)) for h in his]
    return max(0.0, n / k ** 2 * sum(1.0 / h for h in his) - 1.0)


def sampling_sd(kern: Kernel, n: int, design: Design, u_range: Sequence[float],
                aux_box: Sequence[tuple[float, float]] = (),
                second_moment: float | None = None) -> float:
    """Upper bound on the sd of U_E - U (U units) over U in ``u_range`` and class sizes in
    ``aux_box`` (one (lo, hi) per aux sum), by the module docstring's formula.

    ``second_moment``: an upper bound on the kernel's mean square over the C(n, k)
    subsets (Kendall: the fraction of untied pairs, from its released edge sum,
    :func:`second_moment_limit`); then V_h <= second_moment - U^2 too."""
    k = kern.degree
    m = design.edges
    total = math.comb(n, k)
    if m >= total:
        return 0.0
    fpc = 1.0 - m / total
    lo, hi = kern.output_range
    u = np.linspace(max(lo, u_range[0]), min(hi, max(u_range[1], u_range[0])), U_GRID)
    v_h = np.maximum((hi - u) * (u - lo), 0.0)
    if second_moment is not None:
        v_h = np.minimum(v_h, np.maximum(float(second_moment) - u ** 2, 0.0))
    z_hi = v_h / k
    z_lo = np.minimum(_between_factor(kern, n, aux_box) * u ** 2, z_hi)
    slope = -k * fpc / m + n * design.degree_variance / m ** 2     # d variance / d zeta_1

    def var(z):
        return fpc * (v_h - k * z) / m + n * design.degree_variance * z / m ** 2

    worst = var(z_lo) if slope <= 0 else var(z_hi)
    return math.sqrt(max(float(worst.max()), 0.0))


def second_moment_limit(kern: Kernel, n: int, design: Design, released: float, dp_tail: float,
                        prob: float) -> float:
    """Upper confidence limit on the kernel's mean square over the C(n, k) subsets, from
    ``released``: its noisy mean over E (an edge sum of values g in [0, 1], e.g. Kendall's
    h^2), ``dp_tail``: its DP noise's one-sided tail at ``prob`` (mean units).

    The edge-sampling error of that mean is bounded as U's (module docstring) with
    V_g <= 1/4 (g in [0, 1]) and zeta_1 anywhere in [0, V_g / k]: sd <= sqrt(V_g
    max(fpc / m, n D2 / (k m^2))), at the normal quantile 1 - ``prob``. The result
    is at most max(lo^2, hi^2) of the kernel's range."""
    k, m = kern.degree, design.edges
    lo, hi = kern.output_range
    top = max(lo * lo, hi * hi)
    total = math.comb(n, k)
    spread = 0.0
    if m < total:
        fpc = 1.0 - m / total
        spread = math.sqrt(0.25 * max(fpc / m, n * design.degree_variance / (k * m * m)))
    limit = released + dp_tail + NormalDist().inv_cdf(1.0 - prob) * spread
    return float(min(max(limit, 0.0), top))
