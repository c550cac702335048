"""Goodness-of-fit helpers for the noise tests (chi-square with merged tails)."""

import numpy as np
from scipy import stats


def chisq_pvalue(samples, support, pmf, min_expected=5.0):
    """Chi-square p-value of integer ``samples`` against ``pmf`` on ``support``.

    Bins with small expectation are merged from both ends inward; everything
    outside ``support`` goes to the outer bins together with the PMF mass
    outside it (the tails are tested, not dropped).
    """
    samples = np.asarray(samples).ravel()
    n = samples.size
    support = np.asarray(support)
    p = np.asarray(pmf, dtype=np.float64)
    lo, hi = support[0], support[-1]
    counts = np.array([np.sum(samples == k) for k in support], dtype=np.float64) \
        if support.size < 64 else _count(samples, lo, hi)
    below, above = np.sum(samples < lo), np.sum(samples > hi)
    exp = p * n
    # tail masses outside the support are put into the end bins
    tail_mass = max(0.0, 1.0 - p.sum())
    counts[0] += below
    counts[-1] += above
    exp[0] += tail_mass * n / 2 if lo < 0 else 0.0
    exp[-1] += tail_mass * n / 2 if lo < 0 else tail_mass * n
    # merge small bins from the left and from the right
    c_bins, e_bins = [], []
    acc_c = acc_e = 0.0
    for c, e in zip(counts, exp):
        acc_c += c
        acc_e += e
        if acc_e >= min_expected:
            c_bins.append(acc_c)
            e_bins.append(acc_e)
            acc_c = acc_e = 0.0
    if acc_e > 0 or acc_c > 0:
        c_bins[-1] += acc_c
        e_bins[-1] += acc_e
    c_bins, e_bins = np.array(c_bins), np.array(e_bins)
    e_bins *= c_bins.sum() / e_bins.sum()
    return stats.chisquare(c_bins, e_bins).pvalue


def _count(samples, lo, hi):
    inside = samples[(samples >= lo) & (samples <= hi)]
    counts = np.bincount((inside - lo).astype(np.int64), minlength=int(hi - lo + 1))
    return counts.astype(np.float64)
