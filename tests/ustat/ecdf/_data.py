"""Shared data for the ECDF tests: UCI Bank columns and a logistic-regression score."""

import functools

import numpy as np

from tests.conftest import shared_data


@functools.cache
def _bank_cached(columns: tuple):
    from ustat.data import load_csv
    raw, _ = load_csv(shared_data("bank", "bank.csv"), columns=list(columns),
                      categorical=["y"] if "y" in columns else False)
    return raw


def bank(*columns) -> np.ndarray:
    """Columns of bank.csv (skips the test when ../shared is absent); y coded no=0, yes=1."""
    return _bank_cached(tuple(columns)).copy()


@functools.cache
def _scores():
    from sklearn.linear_model import LogisticRegression
    from sklearn.preprocessing import StandardScaler
    raw = bank("age", "balance", "duration", "campaign", "pdays", "previous", "y")
    y = raw[:, -1].astype(np.int64)
    X = StandardScaler().fit_transform(raw[:, :-1])
    p = LogisticRegression(max_iter=1000).fit(X, y).predict_proba(X)[:, 1]
    return p, y


def bank_scores(n=None):
    """(probabilities, labels) of a logistic regression on Bank (first n records)."""
    p, y = _scores()
    return (p.copy(), y.copy()) if n is None else (p[:n].copy(), y[:n].copy())
