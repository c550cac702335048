"""Secret sharing: additive over Z_2^l, XOR over bits, Shamir (t, p) over GF(p).

Shares are plain arrays with the party axis first, ``(n_shares, *batch)``.
Which parties hold the rows is the caller's business: the U-MPC protocol
shares each input among the members of an edge, so sharings over different
party subsets coexist; an additive sharing among any subset of size
``n_shares`` is the same object.

Security (information-theoretic): any ``n_shares - 1`` additive (or XOR)
shares are uniform and independent of the secret; any ``t - 1`` Shamir shares
are uniform and independent of the secret. Randomness comes from the CSPRNG
passed in (``mpc.arith.rng``), so in practice security is computational in AES.
Cost: ``n_shares - 1`` uniform draws per secret; sending a sharing costs
``(n_shares - 1) * l`` bits (counted by the network where it is sent).
"""

from __future__ import annotations

import numbers
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import ArrayLike

from mpc.arith.ring import Ring
from mpc.arith.rng import CSPRNG, ShapeLike

if TYPE_CHECKING:
    from galois import FieldArray


def _check_n(n, name: str, minimum: int = 1) -> int:
    if isinstance(n, bool) or not isinstance(n, numbers.Integral):
        raise TypeError(f"{name} must be an integer, got {n!r}")
    if n < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {n}")
    return int(n)


def _check_rng(rng):
    if not isinstance(rng, CSPRNG):
        raise TypeError(f"rng must be an mpc.arith.rng.CSPRNG, got {type(rng).__name__}")
    return rng


def _check_ring(ring):
    if not isinstance(ring, Ring):
        raise TypeError(f"ring must be an mpc.arith.ring.Ring, got {type(ring).__name__}")
    return ring


# -- additive over Z_2^l ---------------------------------------------------------
def additive_share(ring: Ring, secrets: ArrayLike, n_shares: int, rng: CSPRNG) -> np.ndarray:
    """Additive n-of-n sharing of ring elements: shares sum to the secret mod 2^l.

    ``secrets``: integers in the ring's range, unsigned [0, 2^l) or signed
    [-2^(l-1), 2^(l-1)); anything else (2^50 in a 40-bit ring would share 0)
    raises ValueError: reduce it first (``ring.reduce``) if the wrap is meant.
    Returns ``uint64`` of shape ``(n_shares, *secrets.shape)``.
    """
    _check_ring(ring)
    n = _check_n(n_shares, "n_shares")
    _check_rng(rng)
    _check_in_ring(ring, secrets)
    x = ring.element(secrets)
    shares = np.empty((n,) + x.shape, dtype=np.uint64)
    if n > 1:
        shares[1:] = rng.ring_elements(ring, (n - 1,) + x.shape)
        shares[0] = ring.sub(x, ring.sum(shares[1:], axis=0))
    else:
        shares[0] = x
    return shares


def _check_in_ring(ring: Ring, secrets) -> None:
    """ValueError if a secret is outside [-2^(l-1), 2^l) (it would wrap when reduced)."""
    l = ring.bits
    if isinstance(secrets, np.ndarray) and secrets.dtype == np.uint64:
        if l < 64 and secrets.size and np.any(secrets >> np.uint64(l)):
            raise ValueError(f"secrets hold a value of {int(secrets.max()).bit_length()} bits, "
                             f"outside Z_2^{l}: sharing it would wrap (reduce it with "
                             "ring.reduce first if that is meant)")
        return
    if isinstance(secrets, numbers.Integral) and not isinstance(secrets, (bool, np.bool_)):
        lo, hi = int(secrets), int(secrets)
    else:
        arr = np.asarray(secrets)
        if arr.dtype.kind not in "iuO" or not arr.size:
            return                          # ring.element raises for non-integers
        lo, hi = int(arr.min()), int(arr.max())
    if lo < -(1 << (l - 1)) or hi >= 1 << l:
        bad = hi if hi >= 1 << l else lo
        raise ValueError(f"secret {bad} is outside the range of Z_2^{l} ([-2^{l - 1}, 2^{l})): "
                         "sharing it would wrap (reduce it with ring.reduce first if that is "
                         "meant)")


def additive_reconstruct(ring: Ring, shares: ArrayLike) -> np.ndarray:
    """Sum of the shares along axis 0, mod 2^l."""
    _check_ring(ring)
    sh = np.asarray(shares)
    if sh.ndim < 1 or sh.shape[0] < 1:
        raise ValueError("shares must have a leading party axis with at least one share")
    if sh.dtype != np.uint64:
        raise TypeError(f"shares must be uint64 ring elements, got dtype {sh.dtype}")
    return ring.sum(sh, axis=0)


def zero_sharing(ring: Ring, n_shares: int, shape: ShapeLike, rng: CSPRNG) -> np.ndarray:
    """A uniformly random additive sharing of zero, shape ``(n_shares, *shape)``."""
    return additive_share(ring, np.zeros(shape, np.uint64), n_shares, rng)


def rerandomize(ring: Ring, shares: ArrayLike, rng: CSPRNG) -> np.ndarray:
    """Fresh shares of the same secret (adds a random sharing of zero)."""
    sh = np.asarray(shares)
    if sh.dtype != np.uint64 or sh.ndim < 1:
        raise TypeError("shares must be a uint64 array with a leading party axis")
    return ring.add(sh, zero_sharing(ring, sh.shape[0], sh.shape[1:], rng))


# -- XOR over bits ------------------------------------------------------------------
def xor_share(bits: ArrayLike, n_shares: int, rng: CSPRNG) -> np.ndarray:
    """XOR sharing of a bit array (values 0/1): ``uint8 (n_shares, *shape)``."""
    n = _check_n(n_shares, "n_shares")
    _check_rng(rng)
    b = np.asarray(bits)
    if b.dtype.kind not in "biu" or (b.size and (b.min() < 0 or b.max() > 1)):
        raise ValueError("bits must be an array of 0/1 values")
    b = b.astype(np.uint8)
    shares = np.empty((n,) + b.shape, dtype=np.uint8)
    if n > 1:
        shares[1:] = rng.bits((n - 1,) + b.shape)
        shares[0] = b ^ np.bitwise_xor.reduce(shares[1:], axis=0)
    else:
        shares[0] = b
    return shares


def xor_reconstruct(shares: ArrayLike) -> np.ndarray:
    """XOR of the shares along axis 0."""
    sh = np.asarray(shares)
    if sh.ndim < 1 or sh.shape[0] < 1:
        raise ValueError("shares must have a leading party axis with at least one share")
    return np.bitwise_xor.reduce(sh.astype(np.uint8), axis=0)


# -- Shamir over GF(p) ------------------------------------------------------------------
def shamir_share(field: type[FieldArray], secrets: ArrayLike, t: int, n_shares: int,
                 rng: CSPRNG, xs: ArrayLike | None = None) -> FieldArray:
    """Shamir (t, n) sharing over the prime field ``field`` (a galois class).

    A random polynomial of degree t-1 with constant term the secret is
    evaluated at ``xs`` (default 1..n). Any t shares reconstruct; any t-1
    are uniform. Returns a ``field`` array of shape ``(n_shares, *shape)``.
    Cost: t-1 random field elements per secret, one (n, t) x (t, batch)
    matrix product.
    """
    from mpc.arith.field import random_elements

    n = _check_n(n_shares, "n_shares")
    t = _check_n(t, "t")
    if t > n:
        raise ValueError(f"t must be <= n_shares, got t={t} > n_shares={n}")
    _check_rng(rng)
    p = int(field.characteristic)
    s = np.asarray(secrets)
    if s.dtype.kind not in "iu" and s.dtype != object:
        raise TypeError(f"secrets must be integers in [0, p), got dtype {s.dtype}")
    if s.size and (int(np.min(s)) < 0 or int(np.max(s)) >= p):
        raise ValueError(f"secrets must be field elements in [0, {p})")
    xs = _shamir_points(field, n, xs)
    coeffs = random_elements(field, (t,) + s.shape, rng)
    coeffs[0] = field(s.astype(coeffs.dtype) if s.dtype != object else s)
    shares = _vandermonde(field, xs, t) @ coeffs.reshape(t, -1)
    return shares.reshape((n,) + s.shape)


def _vandermonde(field, xs, t):
    x = field(np.asarray(xs))
    cols = [field(np.ones(len(xs), dtype=x.dtype))]
    for _ in range(1, t):
        cols.append(cols[-1] * x)
    return np.stack(cols, axis=1).view(field)


def _shamir_points(field, n, xs):
    p = int(field.characteristic)
    if xs is None:
        if n >= p:
            raise ValueError(f"n_shares must be < p = {p} for Shamir sharing")
        return np.arange(1, n + 1, dtype=np.int64)
    xs = np.asarray(xs)
    if xs.shape != (n,):
        raise ValueError(f"xs must have shape ({n},), got {xs.shape}")
    if xs.dtype.kind not in "iu" or np.any(xs <= 0) or np.any(xs >= p):
        raise ValueError(f"xs must be distinct nonzero field elements in [1, {p})")
    if len(np.unique(xs)) != n:
        raise ValueError("xs must be distinct")
    return xs.astype(np.int64)


def lagrange_at_zero(field: type[FieldArray], xs: ArrayLike) -> FieldArray:
    """Lagrange coefficients lambda_i with f(0) = sum lambda_i f(x_i)."""
    x = field(np.asarray(xs))
    k = len(x)
    lam = []
    for i in range(k):
        others = np.concatenate([x[:i], x[i + 1:]]).view(field)
        num: Any = np.prod(others) if k > 1 else field(1)
        den: Any = np.prod(others - x[i]) if k > 1 else field(1)
        lam.append(num / den)
    return np.stack(lam).view(field)


def shamir_reconstruct(field: type[FieldArray], shares: ArrayLike, xs: ArrayLike,
                       t: int) -> FieldArray:
    """Reconstruct the secret from at least ``t`` Shamir shares at points ``xs``.

    ``shares``: ``(k, *shape)`` field array, k >= t, rows at evaluation
    points ``xs`` (length k, distinct, nonzero). Uses the first t shares
    (Lagrange interpolation at 0). Returns a field array of ``shape``.
    """
    t = _check_n(t, "t")
    sh = field(np.asarray(shares)) if not isinstance(shares, field) else shares
    xs = np.asarray(xs)
    if sh.ndim < 1 or xs.shape != (sh.shape[0],):
        raise ValueError(f"xs must have one point per share row: shares {sh.shape}, xs {xs.shape}")
    if sh.shape[0] < t:
        raise ValueError(f"need at least t={t} shares to reconstruct, got {sh.shape[0]}")
    if len(np.unique(xs)) != len(xs) or np.any(xs == 0):
        raise ValueError("xs must be distinct and nonzero")
    lam = lagrange_at_zero(field, xs[:t])
    flat = sh[:t].reshape(t, -1)
    return (lam @ flat).reshape(sh.shape[1:])
