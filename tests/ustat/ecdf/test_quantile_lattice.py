"""The acceptance band of the interpolated quantile's interval (ustat.ecdf.intervals,
docs/guides/ecdf.md): between thresholds the noise (1 - w) Z_{i-1} + w Z_i of two neighbouring
leaves' path noises is off the integer lattice, and |.| < q + 1 (q the two-sided pointwise
quantile of one path noise) must hold with probability >= the level. Checked here exactly,
from the node law's pmf, for every split of the path into shared and own nodes."""

import numpy as np
import pytest

from ustat.ecdf.noise_law import NodeNoiseLaw


def _pmf(law, terms, tol=1e-15):
    off, p = law.pmf(terms)
    keep = np.flatnonzero(p > tol)
    return off + keep[0] + np.arange(keep[-1] + 1 - keep[0]), p[keep[0]:keep[-1] + 1]


def _miss(scale, terms, alpha, ws, margin):
    """max over shared-node counts k and w of P(|(1 - w) Z_{i-1} + w Z_i| >= q + margin)
    / alpha (>= for margin 1, the strict test; > for margin 0, the plain pointwise test)."""
    law = NodeNoiseLaw(scale)
    q = law.quantile(alpha, terms)
    worst = 0.0
    for k in range(1, terms):                      # the root is always shared
        s, ps = _pmf(law, k)                       # shared nodes: S
        a, pa = _pmf(law, terms - k)               # each leaf's own nodes: A, B iid
        for w in ws:
            v = ((1 - w) * a[:, None] + w * a[None, :]).ravel()
            pv = (pa[:, None] * pa[None, :]).ravel()
            order = np.argsort(v)
            v, cum = v[order], np.concatenate([[0.0], np.cumsum(pv[order])])
            edge = q + margin + (-1e-9 if margin else 1e-9)
            up = cum[-1] - cum[np.searchsorted(v, edge - s, side="left")]
            down = cum[np.searchsorted(v, -edge - s, side="right")]
            worst = max(worst, float(ps @ (up + down)) / alpha)
    return worst


def _check(scales, terms_list, alphas, ws):
    ratios = [_miss(s, t, a, ws, 1) for s in scales for t in terms_list for a in alphas]
    assert max(ratios) <= 1.0, max(ratios)
    return max(ratios)


def test_lattice_band_q_plus_one_holds_exactly():
    """A corner of the grid of the slow test (largest, smallest scale; 2 and 12 terms)."""
    worst = _check([0.3, 1.0, 6.0], [2, 6, 12], [0.05, 0.1], np.array([0.1, 0.3, 0.5, 0.7]))
    assert worst > 0.8                                  # and not loose either


def test_plain_half_width_is_not_enough_off_the_lattice():
    """Why the extra count: with |.| <= q the interpolated noise misses more than alpha."""
    assert _miss(0.5, 4, 0.05, np.array([0.3, 0.5, 0.7]), 0) > 1.05


@pytest.mark.slow
def test_lattice_band_q_plus_one_holds_exactly_full_grid():
    """docs/guides/ecdf.md's claim: node scales 0.3-6, 2-12 path terms, alpha 0.01-0.1, w
    0.05-0.95: at most 0.94 alpha. Also scale 20 (8 terms) and 36 terms (3 servers' copies
    on 12 levels)."""
    worst = _check([0.3, 0.5, 0.7, 1, 1.5, 2, 3, 4, 6], [2, 3, 4, 6, 8, 12], [0.01, 0.05, 0.1],
                   np.arange(0.05, 0.951, 0.1))
    assert worst <= 0.94
    _check([20.0], [8], [0.05, 0.1], np.array([0.1, 0.3, 0.5, 0.7, 0.9]))
    _check([1.0], [36], [0.05, 0.1], np.array([0.1, 0.3, 0.5, 0.7, 0.9]))
