"""Argument checks at the public boundary of :mod:`mpc.ot` (errors name the parameter)."""

from __future__ import annotations

import numbers
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import ArrayLike

from mpc.arith.rng import CSPRNG, RngLike, as_rng

if TYPE_CHECKING:
    from mpc.comm.network import Network

METHODS = ("auto", "base", "iknp")


def check_rng(rng: RngLike, name: str) -> CSPRNG:
    """A :class:`~mpc.arith.rng.CSPRNG`, or a seed / ``None`` turned into one."""
    if rng is None or (isinstance(rng, (CSPRNG, numbers.Integral, str, bytes, bytearray))
                       and not isinstance(rng, bool)):
        return as_rng(rng)
    raise TypeError(f"{name} must be a CSPRNG (mpc.arith.rng), a seed or None, "
                    f"got {type(rng).__name__}")


def check_pairs(net: Network, senders: ArrayLike,
                receivers: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    """``senders``/``receivers`` as int64 ``(P,)`` arrays of distinct-per-row party ids."""
    out = []
    for arr, name in ((senders, "senders"), (receivers, "receivers")):
        a = np.asarray(arr)
        if a.size == 0 and a.dtype.kind == "f":
            a = a.astype(np.int64)                      # [] is an empty id list
        if a.dtype.kind not in "iu":
            raise TypeError(f"{name} must be an integer array of party ids, got dtype {a.dtype}")
        if a.ndim != 1:
            raise ValueError(f"{name} must be a 1-d array (P,), got shape {a.shape}")
        if a.size and (a.min() < 0 or a.max() >= net.size):
            bad = int(np.flatnonzero((a < 0) | (a >= net.size))[0])
            raise ValueError(f"{name}[{bad}] = {int(a[bad])} is not a party id on the network "
                             f"(0..{net.size - 1})")
        out.append(a.astype(np.int64, copy=False))
    s, r = out
    if s.size != r.size:
        raise ValueError(f"senders and receivers must have the same length P, got {s.size} "
                         f"and {r.size}")
    same = np.flatnonzero(s == r)
    if same.size:
        raise ValueError(f"senders and receivers must differ in every row; row {int(same[0])} "
                         f"has both = {int(s[same[0]])}")
    return s, r


def check_choices(choices: ArrayLike, P: int) -> np.ndarray:
    """``choices`` as uint8 ``(P, m)`` with values in {0, 1}."""
    c = np.asarray(choices)
    if c.dtype.kind not in "biu":
        raise TypeError(f"choices must be an integer or bool array, got dtype {c.dtype}")
    if c.ndim != 2 or c.shape[0] != P:
        raise ValueError(f"choices must have shape (P, m) with P = {P} (the number of sender/"
                         f"receiver rows), got shape {c.shape}")
    if c.size and (c.min() < 0 or c.max() > 1):
        bad = np.argwhere((c < 0) | (c > 1))[0]
        raise ValueError(f"choices must be 0/1, got {int(c[tuple(bad)])} at row {int(bad[0])}, "
                         f"column {int(bad[1])}")
    return c.astype(np.uint8, copy=False)


def check_delta(delta: ArrayLike, P: int) -> np.ndarray:
    """``delta`` as uint8 ``(P, 16)`` with its lsb (bit 0 of byte 0) set in every row."""
    d = np.asarray(delta)
    if d.dtype != np.uint8:
        raise TypeError(f"delta must be a uint8 array (P, 16), got dtype {d.dtype}")
    if d.shape != (P, 16):
        raise ValueError(f"delta must have shape (P, 16) = ({P}, 16), got {d.shape}")
    bad = np.flatnonzero((d[:, 0] & 1) == 0) if P else np.empty(0, np.int64)
    if bad.size:
        raise ValueError(f"delta must have its lsb (delta[p, 0] & 1) set for point-and-permute; "
                         f"row {int(bad[0])} has lsb 0 ({bad.size} rows in all)")
    return np.ascontiguousarray(d)


def check_messages(m0: ArrayLike, m1: ArrayLike, P: int,
                   m: int) -> tuple[np.ndarray, np.ndarray]:
    """``m0``, ``m1`` as uint8 ``(P, m, L)`` of one shape, L >= 1."""
    out = []
    for arr, name in ((m0, "m0"), (m1, "m1")):
        a = np.asarray(arr)
        if a.dtype != np.uint8:
            raise TypeError(f"{name} must be a uint8 array (P, m, L), got dtype {a.dtype}")
        if a.ndim != 3 or a.shape[:2] != (P, m) or a.shape[2] < 1:
            raise ValueError(f"{name} must have shape (P, m, L) = ({P}, {m}, L >= 1), "
                             f"got {a.shape}")
        out.append(a)
    if out[0].shape != out[1].shape:
        raise ValueError(f"m0 and m1 must have the same shape, got {out[0].shape} and "
                         f"{out[1].shape}")
    return out[0], out[1]


def check_method(method: str, crossover: int) -> tuple[str, int]:
    if method not in METHODS:
        raise ValueError(f"method must be one of {METHODS}, got {method!r}")
    if isinstance(crossover, bool) or not isinstance(crossover, numbers.Integral) \
            or crossover < 1:
        raise ValueError(f"crossover must be a positive integer (OTs per pair), got {crossover!r}")
    return method, int(crossover)


def check_length(length: int) -> int:
    if isinstance(length, bool) or not isinstance(length, numbers.Integral) or length < 1:
        raise ValueError(f"length must be a positive integer (bytes per message), got {length!r}")
    return int(length)


def check_offline(offline: bool | None) -> bool | None:
    if offline is not None and not isinstance(offline, bool):
        raise TypeError(f"offline must be None or a bool, got {offline!r}")
    return offline
