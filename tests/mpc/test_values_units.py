"""Issue 40, silent case 4: constants and inputs carry their unit (frac_bits); mixing units
converts exactly going up, or raises (noise shares: tests/noise/test_noise_units.py)."""

import numpy as np
import pytest

from mpc.session import Session
from mpc.values import constant, from_shares


def test_raw_shares_need_their_unit_and_constants_take_theirs():
    s = Session(3, frac_bits=10, seed=1)
    sh = np.zeros((3, 4), np.uint64)
    with pytest.raises(TypeError):
        from_shares(s, sh, [0, 1, 2])                               # type: ignore[call-arg]
    c = constant(s, [0.5, -1.25, 3, 0], [0, 1, 2], frac_bits=4)
    assert c.frac_bits == 4 and c.bound == 3 * 16
    np.testing.assert_array_equal(s.output(c), [0.5, -1.25, 3, 0])
    with pytest.raises(ValueError, match="not exact at 4 fractional bits"):
        constant(s, 0.01, [0, 1, 2], frac_bits=4)
    k = constant(s, 7, [0, 1, 2], frac_bits=0)
    assert s.output(k) == 7 and k.shape == ()


def test_public_floats_are_not_rounded_to_an_integer_values_scale():
    """x (integers) + 0.5 and x < 2.5: the value converts up to the session's scale, exactly."""
    s = Session(2, frac_bits=14, seed=2)
    v = np.arange(-3, 5)
    x = s.input(v[None], by=[0], holders=[0, 1], bound=100)[0]
    np.testing.assert_array_equal(s.output(x + 0.5), v + 0.5)
    np.testing.assert_array_equal(s.output(x < 2.5), (v < 2.5).astype(int))
    np.testing.assert_array_equal(s.output(x >= -0.5), (v >= -0.5).astype(int))
    np.testing.assert_array_equal(s.output(x + 2.0), v + 2)       # exact at its own scale
    assert (x + 2.0).frac_bits == 0
