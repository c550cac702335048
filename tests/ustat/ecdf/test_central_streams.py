"""The central (trusted-curator) paths draw fresh noise at every call unless seeded.

Before, ``release(..., backend="central", seed=g)`` and the HL central path derived their noise
stream from fixed labels (``as_rng(g).derive(...)``), so the same CSPRNG object passed to two
releases repeated the noise exactly: two releases for the price of one noise draw. A spec's
seed is now a value (an int or a str, reproducible and insecure) or None (fresh secure
randomness at every call); a generator object is refused, naming the field.
"""

import numpy as np
import pytest

from mpc.arith.rng import CSPRNG
from tests.api import flat_hl, flat_release, flat_roc
from ustat.specs import ECDFSpec, HLSpec


def _data(n=400):
    g = CSPRNG(7)
    p = g.random(n)
    return p, (g.random(n) < p).astype(np.int64)


def test_central_ecdf_fresh_noise_unless_seeded():
    x, _ = _data()
    tau = np.linspace(0, 1, 32)
    a = flat_release(x, tau, 1.0, backend="central")
    b = flat_release(x, tau, 1.0, backend="central")
    assert not np.array_equal(a.counts, b.counts)
    again = [flat_release(x, tau, 1.0, backend="central", seed=11).counts for _ in range(2)]
    assert np.array_equal(*again)                   # a seed reproduces
    with pytest.raises(TypeError, match="seed must be an int, a str or None"):
        ECDFSpec.of(thresholds=tau, backend="central", seed=CSPRNG(5))


def test_central_hl_fresh_noise_unless_seeded():
    p, y = _data()
    a = flat_hl(p, y, 4, 1.0, backend="central", n_thresholds=64)
    b = flat_hl(p, y, 4, 1.0, backend="central", n_thresholds=64)
    assert a.statistic != b.statistic
    assert not np.array_equal(np.asarray(a.table["O1"]), np.asarray(b.table["O1"]))
    c, d = (flat_hl(p, y, 4, 1.0, backend="central", seed=6, n_thresholds=64) for _ in range(2))
    assert c.statistic == d.statistic and c.table == d.table
    with pytest.raises(TypeError, match="seed must be"):
        HLSpec.of(groups=4, seed=CSPRNG(6))


def test_central_roc_classes_get_independent_noise():
    """private_roc passed one seed to both class ECDFs, so with a seed (as experiments run)
    both drew the same node noise and the difference of the class counts was exact."""
    p, y = _data(600)
    tau = np.linspace(0, 1, 16)
    r = flat_roc(p, y, tau, 1.0, bounds=(0, 1), backend="central", seed=4, evaluate=True)
    pos, neg = int(y.sum()), int(y.size - y.sum())
    assert r.n_pos - pos != r.n_neg - neg
    again = flat_roc(p, y, tau, 1.0, bounds=(0, 1), backend="central", seed=4)
    assert (again.n_pos, again.n_neg) == (r.n_pos, r.n_neg)      # still reproducible
