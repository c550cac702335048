"""Issue 40, silent case 4: noise shares carry their unit; wrapped as a secure value they add
the drawn noise in the value's units (not the noise times 2^frac_bits)."""

import math

import numpy as np
import pytest

from mpc.session import Session
from mpc.values import from_shares
from noise.distributed import shared_dlap_noise


@pytest.mark.parametrize("method", ["polya", "mpc"])
def test_noise_shares_are_added_in_the_values_units(method):
    """released - true == the drawn noise (in real units), for integer and fixed-point values."""
    s = Session(2, frac_bits=14, seed=4)
    counts = np.array([[37], [5]])
    x = s.input(counts, by=[0, 1], bound=1000)                     # integers: frac_bits 0
    noise = shared_dlap_noise(s, 1.0, 1.0, parties=[0, 1], method=method)
    assert noise.frac_bits == 14
    drawn = s.ring.to_signed(s.ring.sum(noise.shares, axis=0)) / 2.0 ** 14
    eta = from_shares(s, noise, [0, 1], frac_bits=14)
    assert eta.frac_bits == 14 and eta.bound == math.ceil(noise.bound)
    released = s.output(x.sum() + eta)
    assert released - counts.sum() == pytest.approx(float(drawn), abs=0)
    up = from_shares(s, noise, [0, 1], frac_bits=16)               # going up: exact
    assert s.output(up) == pytest.approx(float(drawn), abs=0)
    with pytest.raises(ValueError, match=r"frac_bits=14.*frac_bits=0"):
        from_shares(s, noise, [0, 1], frac_bits=0)                 # the mistake
