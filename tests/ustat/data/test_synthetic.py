"""ustat.data.synthetic: the synthetic default data set."""

import numpy as np
import pytest

from mpc.arith.rng import CSPRNG
from ustat import data as D


def test_synthetic_uniform():
    a = D.synthetic_uniform(2000, 3, CSPRNG(1))
    b = D.synthetic_uniform(2000, 3, 1)
    assert a.shape == (2000, 3) and a.dtype == np.float64
    assert np.array_equal(a, b)
    assert a.min() >= 0 and a.max() < 1
    assert np.all(np.abs(a.mean(axis=0) - 0.5) < 0.03)
    with pytest.raises(ValueError, match="n must be >= 1"):
        D.synthetic_uniform(0, 2)
    with pytest.raises(TypeError, match="d must be an integer"):
        D.synthetic_uniform(5, 2.0)
