"""Shared helpers of the fss package: argument checks (internal)."""

from __future__ import annotations

import numbers
import sys
import warnings
from types import FrameType
from typing import Any

import numpy as np

from mpc.arith.rng import CSPRNG, as_rng

_U64 = np.uint64


def check_int(v: Any, name: str, lo: int, hi: int) -> int:
    """An int in [lo, hi], else TypeError/ValueError naming ``name``."""
    if isinstance(v, (bool, np.bool_)) or not isinstance(v, numbers.Integral):
        raise TypeError(f"{name} must be an integer in {lo}..{hi}, got {v!r}")
    v = int(v)
    if not lo <= v <= hi:
        raise ValueError(f"{name} must be in {lo}..{hi}, got {v}")
    return v


def check_party(party: Any) -> int:
    """0 or 1 (an int, or an integer type's 0 or 1), else TypeError/ValueError."""
    if type(party) is int and (party == 0 or party == 1):     # the common case, at once
        return party
    if isinstance(party, (bool, np.bool_)) or not isinstance(party, numbers.Integral):
        raise TypeError(f"party must be 0 or 1, got {party!r}")
    if int(party) not in (0, 1):
        raise ValueError(f"party must be 0 or 1, got {party}")
    return int(party)


class InsecureSeedWarning(UserWarning):
    """FSS keys were generated from an explicit seed: reproducible, not secret."""


def _outside_fss() -> int:
    """The ``stacklevel`` of the first frame, from the caller of this function's caller,
    whose code is not in the fss package (the user's call of ``gen``)."""
    level = 2
    frame: FrameType | None = sys._getframe(2)
    while frame is not None and frame.f_globals.get("__name__", "").split(".")[0] == "fss":
        level, frame = level + 1, frame.f_back
    return level


def check_rng(rng: Any) -> tuple[CSPRNG, bool]:
    """``(generator, insecure)`` for a CSPRNG or a seed.

    A seed (int/str/bytes) gives a reproducible stream: the keys made from it
    are flagged ``insecure`` and an :class:`InsecureSeedWarning` is raised
    (anyone who knows the seed can recompute both keys), pointing at the first
    caller outside :mod:`fss`. A seeded :class:`~mpc.arith.rng.CSPRNG`
    (``rng.seeded``, e.g. a test session's dealer stream) flags the keys the same
    way, without a warning: the seed was already chosen explicitly where the
    generator was made, as in :mod:`mpc.arith.rng`. Only an ``os.urandom``-keyed
    CSPRNG makes secure keys.
    """
    if rng is None:
        raise TypeError("rng must be an mpc.arith.rng.CSPRNG or a seed, got None")
    if isinstance(rng, CSPRNG):
        return rng, bool(rng.seeded)
    try:
        g = as_rng(rng)
    except TypeError:
        raise TypeError(f"rng must be an mpc.arith.rng.CSPRNG or a seed, "
                        f"got {type(rng).__name__}") from None
    warnings.warn("rng is an explicit seed: the FSS keys are reproducible and NOT secure "
                  "(key.insecure is set); pass an mpc.arith.rng.CSPRNG() for real use",
                  InsecureSeedWarning, stacklevel=_outside_fss())
    return g, True


def _integers(x: Any, name: str) -> np.ndarray:
    """``x`` as an integer array (any shape; Python ints of an object array kept exact as
    Python ints in an object array), TypeError naming ``name`` otherwise."""
    if isinstance(x, (bool, np.bool_)):
        raise TypeError(f"{name} must be integers, got bool")
    arr = np.asarray(x)
    if arr.dtype == object:
        for v in arr.ravel():
            if isinstance(v, (bool, np.bool_)) or not isinstance(v, numbers.Integral):
                raise TypeError(f"{name} must be integers, got {type(v).__name__}")
    elif arr.dtype.kind not in "iu":
        raise TypeError(f"{name} must be integers, got dtype {arr.dtype}")
    return arr


def domain_values(x: Any, n_bits: int, name: str) -> np.ndarray:
    """Integers in [0, 2^n_bits) as a ``uint64`` array (any shape); ValueError otherwise."""
    if type(x) is np.ndarray and x.dtype == _U64:           # the common case, checked at once
        if n_bits < 64 and x.size:
            top = max(x.reshape(-1).tolist()) if x.size <= 16 else int(x.max())
            if top >> n_bits:
                raise ValueError(f"{name} must be in [0, 2^{n_bits}), got {top}")
        return x
    if isinstance(x, numbers.Integral) and not isinstance(x, (bool, np.bool_)):
        v = int(x)
        if not 0 <= v < (1 << n_bits):
            raise ValueError(f"{name} must be in [0, 2^{n_bits}), got {v}")
        return np.asarray(v, dtype=_U64)
    arr = _integers(x, name)
    if arr.dtype == object:
        for v in arr.ravel():
            if not 0 <= int(v) < (1 << n_bits):
                raise ValueError(f"{name} must be in [0, 2^{n_bits}), got {int(v)}")
        return np.array([int(v) for v in arr.ravel()], dtype=_U64).reshape(arr.shape)
    if arr.size:
        if arr.dtype.kind == "i" and int(arr.min()) < 0:
            raise ValueError(f"{name} must be in [0, 2^{n_bits}), got a negative value "
                             f"{int(arr.min())}")
        if n_bits < 64 and int(arr.max()) >= (1 << n_bits):
            raise ValueError(f"{name} must be in [0, 2^{n_bits}), got {int(arr.max())}")
    return arr.astype(_U64, copy=False)


def ring_values(x: Any, bits: int, name: str) -> np.ndarray:
    """Integers (any sign) reduced into Z_2^bits as ``uint64``."""
    if isinstance(x, numbers.Integral) and not isinstance(x, (bool, np.bool_)):
        return np.asarray(int(x) % (1 << bits), dtype=_U64)
    arr = _integers(x, name)
    if arr.dtype == object:
        return np.array([int(v) % (1 << bits) for v in arr.ravel()], dtype=_U64).reshape(arr.shape)
    return arr.astype(_U64) & _U64((1 << bits) - 1) if bits < 64 else arr.astype(_U64)


def mask(bits: int) -> np.uint64:
    return _U64((1 << bits) - 1)


def points_per_key(x: np.ndarray, key_shape: tuple) -> int:
    """How many evaluation points per key ``x`` holds: shape ``key_shape`` (1) or
    ``(m, *key_shape)`` (m); ``ValueError`` otherwise."""
    if x.shape == key_shape:
        return 1
    if x.ndim == len(key_shape) + 1 and x.shape[1:] == key_shape:
        return x.shape[0]
    raise ValueError(
        f"x of shape {x.shape} does not match the key batch shape {key_shape} "
        f"(expected {key_shape} or (m, *{key_shape}))"
    )
