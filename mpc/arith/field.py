"""Prime fields GF(p) (and GF(2^m)) via ``galois``, imported lazily.

``galois`` (and numba behind it) takes about a second to import, so it is
loaded on the first call of :func:`prime_field` or :func:`binary_field`, never
at ``import mpc``. Fields are cached: the same ``p`` gives the same class.

The default prime for Shamir sharing is the Mersenne prime 2^31 - 1, whose
elements galois stores as ``uint32`` and multiplies without object arrays.
Primes up to 2^32 keep vectorized fixed-width arithmetic; larger primes make
galois fall back to Python-object arrays (correct but slow), so they are
accepted but not recommended on a hot path.
"""

from __future__ import annotations

import functools
import numbers
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from galois import FieldArray

    from mpc.arith.rng import CSPRNG, ShapeLike

DEFAULT_PRIME = (1 << 31) - 1


def _galois():
    import galois  # lazy: heavy import

    return galois


@functools.cache
def _prime_field(p: int):
    galois = _galois()
    if not galois.is_prime(p):
        raise ValueError(f"p must be prime, got {p}")
    return galois.GF(p)


def prime_field(p: int = DEFAULT_PRIME) -> type[FieldArray]:
    """The (cached) galois class GF(p) for a prime ``p`` >= 3."""
    if isinstance(p, bool) or not isinstance(p, numbers.Integral):
        raise TypeError(f"p must be an integer prime, got {p!r}")
    if p < 3:
        raise ValueError(f"p must be a prime >= 3, got {p}")
    return _prime_field(int(p))


@functools.cache
def _binary_field(m: int):
    return _galois().GF(2 ** m)


def binary_field(m: int) -> type[FieldArray]:
    """The (cached) galois class GF(2^m), 1 <= m <= 64 (XOR is its addition)."""
    if isinstance(m, bool) or not isinstance(m, numbers.Integral):
        raise TypeError(f"m must be an integer, got {m!r}")
    if not 1 <= m <= 64:
        raise ValueError(f"m must be in 1..64, got {m}")
    return _binary_field(int(m))


def random_elements(field: type[FieldArray], shape: ShapeLike, rng: CSPRNG) -> np.ndarray:
    """Uniform elements of a prime field ``field`` from the CSPRNG ``rng`` (exact)."""
    p = int(field.characteristic)
    if field.degree != 1:
        raise ValueError("random_elements supports prime fields only")
    values = rng.integers(p, shape)
    dtype = field.dtypes[-1]
    return field(values.astype(object if dtype == np.object_ else dtype))


def field_order_bits(field: type[FieldArray]) -> int:
    """Bits needed to send one element of ``field`` (ceil(log2 order))."""
    return int(field.order - 1).bit_length()
