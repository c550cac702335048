"""The embedded default data set: records drawn uniformly in [0, 1)^d from the CSPRNG.

The CLI uses it when no CSV file is given; it is already in the kernels'
domain X = [0, 1]^d (no bounds needed). Part of :mod:`ustat.data`.
"""

from __future__ import annotations

import numbers

import numpy as np

from mpc.arith.rng import CSPRNG, as_rng

__all__ = ["synthetic_uniform"]


def synthetic_uniform(n: int, d: int, rng: CSPRNG | int | str | bytes | None = None) -> np.ndarray:
    """The embedded default data set: n records uniform in [0, 1)^d, float64 (n, d).

    Drawn from the CSPRNG (``rng`` a CSPRNG or a seed; 53 random bits per
    value). Cost: 8 n d bytes of AES keystream.
    """
    for name, v in (("n", n), ("d", d)):
        if isinstance(v, bool) or not isinstance(v, numbers.Integral):
            raise TypeError(f"{name} must be an integer, got {v!r}")
        if v < 1:
            raise ValueError(f"{name} must be >= 1, got {v}")
    return as_rng(rng).random((int(n), int(d)))
