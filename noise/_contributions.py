"""Shared checks and draws of the distributed noise protocols (internal).

Used by :mod:`noise.distributed` and :mod:`noise.committee`: session and
party-list validation, per-call noise streams with a fresh nonce, signed
encoding into Z_2^l, and the contributors' Polya differences.
"""

from __future__ import annotations

import numbers
from fractions import Fraction

import numpy as np

from .samplers import polya


def _check_session(s):
    for attr in ("ring", "fp", "rng", "net", "dealer"):
        if not hasattr(s, attr):
            raise TypeError(f"s must be an mpc.session.Session, got {type(s).__name__}")
    return s


def _check_parties(s, parties) -> np.ndarray:
    if parties is None:
        return np.arange(s.net.n_parties, dtype=np.int64)
    arr = np.asarray(parties)
    if arr.dtype.kind not in "iu" or arr.ndim != 1:
        raise TypeError("parties must be a 1-d integer array of party ids")
    if arr.size < 1:
        raise ValueError("parties must name at least one party (n >= 1)")
    if arr.min() < 0 or arr.max() >= s.net.n_parties:
        raise ValueError(f"parties must be ids in 0..{s.net.n_parties - 1}")
    # O(n_parties) occupancy count (no sort): 10^6 ids in a few ms
    if np.bincount(arr, minlength=s.net.n_parties).max() > 1:
        raise ValueError("parties must be distinct")
    return arr.astype(np.int64)


def _shape(shape) -> tuple:
    if isinstance(shape, numbers.Integral) and not isinstance(shape, bool):
        return (int(shape),)
    return tuple(int(x) for x in shape)


def _stream(s, label: str):
    nonce = int(s.rng.uint64())
    return s.rng.derive("noise", label, nonce)


def _encode_signed(ring, values: np.ndarray, what: str) -> np.ndarray:
    lim = 1 << (ring.bits - 1)
    if values.size and (values.min() < -lim or values.max() >= lim):
        raise ValueError(f"{what} does not fit in Z_2^{ring.bits} (|noise| >= 2^{ring.bits - 1}); "
                         "use a larger ring")
    return values.astype(np.int64).astype(np.uint64) & ring.mask


def _polya_differences(r: Fraction, scale: Fraction, m: int, rng) -> np.ndarray:
    """m independent Polya(r, a) - Polya(r, a), a = exp(-1/scale) (the contributors' own noise)."""
    x = polya(r, scale, (2, m), rng)
    return x[0] - x[1]


def _honest_shape(honest: int | None, m: int) -> Fraction:
    """The Polya shape 1/h of each of m contributors (h = m, the paper's split, if None)."""
    if honest is None:
        return Fraction(1, m)
    if isinstance(honest, bool) or not isinstance(honest, numbers.Integral) or not 1 <= honest <= m:
        raise ValueError(f"honest must be an integer in 1..{m} (the contributors), got {honest!r}")
    return Fraction(1, int(honest))
