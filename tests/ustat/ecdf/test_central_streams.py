"""The central (trusted-curator) paths draw fresh noise from a generator passed in twice.

Before, ``release(..., backend="central", seed=g)`` and the HL central path derived their noise
stream from fixed labels (``as_rng(g).derive(...)``), so the same CSPRNG object passed to two
releases repeated the noise exactly: two releases for the price of one noise draw.
"""

import numpy as np

from mpc.arith.rng import CSPRNG
from ustat.ecdf import release
from ustat.ecdf.hosmer_lemeshow import private_hosmer_lemeshow


def _data(n=400):
    g = CSPRNG(7)
    p = g.random(n)
    return p, (g.random(n) < p).astype(np.int64)


def test_central_ecdf_same_generator_twice_new_noise():
    x, _ = _data()
    tau = np.linspace(0, 1, 32)
    for g in (CSPRNG(5), CSPRNG()):                  # seeded and secure generators
        a = release(x, tau, 1.0, backend="central", seed=g)
        b = release(x, tau, 1.0, backend="central", seed=g)
        assert not np.array_equal(a.counts, b.counts)
    again = [release(x, tau, 1.0, backend="central", seed=11).counts for _ in range(2)]
    assert np.array_equal(*again)                   # a seed (not a generator) still reproduces


def test_central_hl_same_generator_twice_new_noise():
    p, y = _data()
    g = CSPRNG(6)
    a = private_hosmer_lemeshow(p, y, 4, 1.0, backend="central", seed=g, n_thresholds=64)
    b = private_hosmer_lemeshow(p, y, 4, 1.0, backend="central", seed=g, n_thresholds=64)
    assert a.statistic != b.statistic
    assert not np.array_equal(np.asarray(a.table["O1"]), np.asarray(b.table["O1"]))


def test_central_roc_classes_get_independent_noise():
    """private_roc passed one seed to both class ECDFs, so with a seed (as experiments run)
    both drew the same node noise and the difference of the class counts was exact."""
    from ustat.ecdf import private_roc

    p, y = _data(600)
    tau = np.linspace(0, 1, 16)
    r = private_roc(p, y, tau, 1.0, bounds=(0, 1), backend="central", seed=4, evaluate=True)
    pos, neg = int(y.sum()), int(y.size - y.sum())
    assert r.n_pos - pos != r.n_neg - neg
    again = private_roc(p, y, tau, 1.0, bounds=(0, 1), backend="central", seed=4)
    assert (again.n_pos, again.n_neg) == (r.n_pos, r.n_neg)      # still reproducible
