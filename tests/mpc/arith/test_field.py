import subprocess
import sys

import numpy as np
import pytest

from mpc.arith.field import binary_field, field_order_bits, prime_field, random_elements


def test_galois_is_imported_lazily():
    code = ("import sys, mpc.session, mpc.arith.sharing, mpc.protocols.beaver, mpc.comm.network; "
            "print('galois' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_prime_field_cached_and_uniform(rng):
    GF = prime_field(101)
    assert prime_field(101) is GF
    x = random_elements(GF, (20_000,), rng)
    counts = np.bincount(np.asarray(x, dtype=np.int64), minlength=101)
    assert counts.min() > 100 and field_order_bits(GF) == 7


def test_binary_field_addition_is_xor():
    GF = binary_field(8)
    a, b = GF([3, 200]), GF([5, 100])
    assert np.array_equal(np.asarray(a + b), [3 ^ 5, 200 ^ 100])


def test_field_errors():
    with pytest.raises(ValueError, match="p must be a prime >= 3"):
        prime_field(2)
    with pytest.raises(TypeError, match="p must be an integer"):
        prime_field(7.0)
    with pytest.raises(ValueError, match=r"m must be in 1..64"):
        binary_field(65)
