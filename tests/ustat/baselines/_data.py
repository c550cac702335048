"""Small seeded data sets for the baseline tests (CSPRNG-drawn; no secrets involved)."""

import numpy as np

from mpc.arith.rng import CSPRNG


def correlated_pairs(n: int, seed: int = 1) -> np.ndarray:
    """(n, 2) records in [0, 1]^2 with a positive rank correlation."""
    g = CSPRNG(seed)
    a = g.random(n)
    b = np.clip(0.6 * a + 0.4 * g.random(n), 0.0, 1.0)
    return np.column_stack([a, b])


def scored_labels(n: int, seed: int = 2) -> np.ndarray:
    """(n, 2) records (score in [0, 1], label 0/1) with AUC about 0.7."""
    g = CSPRNG(seed)
    s = g.random(n)
    y = (g.random(n) < 0.15 + 0.5 * s).astype(np.float64)
    return np.column_stack([s, y])


def tau_a(x: np.ndarray, y: np.ndarray) -> float:
    """Kendall's tau-a from scipy's tau-b and the tie counts (sign(0) = 0 convention)."""
    from scipy.stats import kendalltau

    n = x.size
    n0 = n * (n - 1) / 2
    _, cx = np.unique(x, return_counts=True)
    _, cy = np.unique(y, return_counts=True)
    n1 = float((cx * (cx - 1) / 2).sum())
    n2 = float((cy * (cy - 1) / 2).sum())
    tb = kendalltau(x, y).statistic
    return float(tb * np.sqrt((n0 - n1) * (n0 - n2)) / n0)
