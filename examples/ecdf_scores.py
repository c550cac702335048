"""Scores for the ECDF examples: a logistic regression on UCI Bank, or synthetic ones.

``bank_scores()`` returns (predicted probabilities, 0/1 labels, source text);
without ../shared or scikit-learn it falls back to synthetic scores. Run it
alone to print a summary.
"""


import _paths

from mpc.arith.rng import CSPRNG

COLUMNS = ["age", "balance", "duration", "campaign", "pdays", "previous", "y"]


def bank_scores():
    try:
        from sklearn.linear_model import LogisticRegression
        from sklearn.preprocessing import StandardScaler
    except ImportError:
        LogisticRegression = None
    if LogisticRegression is not None and _paths.have(_paths.BANK):
        from ustat.data import load_csv
        raw = load_csv(_paths.BANK, columns=COLUMNS, categorical=["y"])[0]   # y: no=0, yes=1
        y = raw[:, -1].astype(int)
        X = StandardScaler().fit_transform(raw[:, :-1])
        p = LogisticRegression(max_iter=1000).fit(X, y).predict_proba(X)[:, 1]
        return p, y, "UCI Bank, logistic regression on 6 numeric columns"
    g = CSPRNG()
    p = g.random(5000)
    y = (g.random(5000) < p).astype(int)               # calibrated by construction
    return p, y, "synthetic calibrated scores"


if __name__ == "__main__":
    p, y, source = bank_scores()
    print(f"{source}: n = {y.size}, positives {y.sum()}, mean score {p.mean():.3f}")
