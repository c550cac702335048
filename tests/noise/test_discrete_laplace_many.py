"""noise.samplers.discrete_laplace_many: one exact discrete Laplace draw per scale, batched."""

from fractions import Fraction

import numpy as np
import pytest

from noise import samplers as S

from ._stats import chisq_pvalue

ALPHA = 1e-4  # fixed seeds: deterministic; a failure means a real mismatch


def test_each_scale_has_its_law(rng):
    # four scales interleaved in one batch, each checked against its exact PMF
    scales = [(1, 1), (3, 1), (21, 2), (7, 3)]
    t = np.array([a for a, _ in scales] * 60_000)
    s = np.array([b for _, b in scales] * 60_000)
    x = S.discrete_laplace_many(t, s, rng)
    assert x.dtype == np.int64 and x.shape == t.shape
    for a, b in scales:
        sel = (t == a) & (s == b)
        scale = Fraction(a, b)
        K = int(12 * float(scale)) + 6
        k = np.arange(-K, K + 1)
        assert chisq_pvalue(x[sel], k, S.discrete_laplace_pmf(k, scale)) > ALPHA, (a, b)


def test_large_scales_moments(rng):
    # grid-unit scales as FedAUC uses them: numerators up to 2^55, dyadic denominators
    t = np.array([3 << 40, 5 << 30] * 50_000, dtype=np.int64)
    s = np.array([1 << 20, 1 << 12] * 50_000, dtype=np.int64)
    x = S.discrete_laplace_many(t, s, rng)
    for a, b in ((3 << 40, 1 << 20), (5 << 30, 1 << 12)):
        v = x[(t == a) & (s == b)].astype(np.float64)
        q = np.exp(-b / a)
        var = 2 * q / (1 - q) ** 2
        assert abs(v.mean()) < 5 * np.sqrt(var / v.size)
        assert v.var() == pytest.approx(var, rel=5 * np.sqrt(8 / v.size))  # excess kurtosis 3


def test_bad_arguments():
    with pytest.raises(ValueError, match=">= 1"):
        S.discrete_laplace_many(np.array([0]), np.array([1]))
    with pytest.raises(ValueError, match="shape"):
        S.discrete_laplace_many(np.array([1, 2]), np.array([1]))
    with pytest.raises(TypeError, match="integer"):
        S.discrete_laplace_many(np.array([1.5]), np.array([1]))
    with pytest.raises(ValueError, match="round the scales up"):
        S.discrete_laplace_many(np.array([1 << 60]), np.array([1]))
    assert S.discrete_laplace_many(np.zeros(0, np.int64), np.zeros(0, np.int64)).size == 0
