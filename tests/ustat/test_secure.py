"""SecureOps: the operand bound that narrows FSS comparisons (``narrow_bits``)."""

import numpy as np
import pytest

from mpc.arith.ring import fixed_point
from mpc.arith.sharing import additive_share
from mpc.session import Session
from ustat.secure import SecureOps, narrow_bits


def test_narrow_bits_values_and_checks():
    assert narrow_bits(32, 1, 59) == 34
    assert narrow_bits(32, 2, 59) == 35
    assert narrow_bits(32, 3, 59) == 36          # ceil(log2 3) = 2
    assert narrow_bits(32, 0.5, 59) == 33
    assert narrow_bits(38, 1, 40) is None        # d = 40 = l: the full ring
    assert narrow_bits(14, None, 40) is None
    assert narrow_bits(0, 2.0 ** -10, 40) == 2   # never below 2 bits
    for bad in (0, -1, float("inf"), float("nan"), True, "1"):
        with pytest.raises(ValueError, match="bound"):
            narrow_bits(14, bad, 40)


@pytest.mark.parametrize("bits,c_in", [(59, 32), (40, 14), (12, 4)])
def test_abs_and_sign_with_bound_on_every_extreme(bits, c_in):
    """Differences of inputs in [0, 1] (encoded with c_in bits), the extremes included:
    exact |x - y| and sign(x - y) through the narrow gate, d bits sent per opening."""
    s = Session(2, bits=bits, frac_bits=c_in, seed=f"secure-{bits}")
    fp = fixed_point(bits, c_in)
    rng = np.random.default_rng(1)     # test data only
    x = np.concatenate([[0.0, 1.0, 1.0, 0.0, 0.5], rng.random(3000)])
    y = np.concatenate([[1.0, 0.0, 1.0, 0.0, 0.5], rng.random(3000)])
    ex, ey = fp.encode(x), fp.encode(y)
    X = additive_share(s.ring, ex, 2, s.rng.derive("x"))
    Y = additive_share(s.ring, ey, 2, s.rng.derive("y"))
    ops = SecureOps(s, np.tile(np.array([[0], [1]]), (1, x.size)), input_fp=fp)
    with s.net.phase("gate"):
        a = ops.abs(ops.sub(X, Y), bound=1)
    d = narrow_bits(c_in, 1, bits)
    opened = s.net.report()["phases"]["gate"]["online"]["bits"]
    # one opening (d bits each way) and one Beaver round (2 l bits each way) per edge
    assert opened == x.size * 2 * ((d or bits) + 2 * bits)
    sg = ops.sign(ops.sub(X, Y), bound=1)
    diff = s.ring.to_signed(ex) - s.ring.to_signed(ey)
    np.testing.assert_array_equal(s.ring.to_signed(s.ring.sum(a, axis=0)), np.abs(diff))
    np.testing.assert_array_equal(s.ring.to_signed(s.ring.sum(sg, axis=0)), np.sign(diff))
