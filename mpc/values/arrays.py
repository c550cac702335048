"""Array operations on secure values: constants, concatenation, item assignment, secret indexing,
sorting (Batcher's odd-even merge network), shuffling, and numpy's protocols.

Sorting (:func:`sort_by`, :func:`sort`, :func:`argsort`): Batcher's
odd-even merge sort on n values (the network of the next power of two,
comparators that touch a position >= n left out: those positions hold
+infinity). A layer of the network is one batched comparison of all its
pairs (the session's comparison provider) and one Beaver round that swaps
values and payloads together: ceil(log2 n) (ceil(log2 n) + 1) / 2 layers,
n/2 or fewer comparisons per layer. Cost per layer: the provider's rounds
(1 with FSS gates, about 8 with the p-party circuit) plus one round; bits:
one l-bit comparison per pair and 2 (p - 1) l bits per swapped element per
holder. The outputs of a comparator are the min and the max of its inputs,
so the tracked bound of the values never grows.

Shuffling (:func:`shuffle`): sort by keys the trusted dealer draws uniform
in [0, 2^(l-3)) and shares among the holders; the permutation is uniform
(ties, probability below n^2 2^-(l-2), keep the input order) and hidden
from every coalition of holders that does not include the dealer.

Threat model: that of the session's comparisons and products (static
semi-honest holders; a trusted dealer for triples and keys).
"""

from __future__ import annotations

import functools
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import ArrayLike

import mpc.values.fixedpoint as _fp

if TYPE_CHECKING:
    from mpc.values import SecureArray

__all__ = ["argsort", "array_function", "array_ufunc", "batcher_layers", "concatenate",
           "public_like", "setitem", "shuffle", "sort", "sort_by", "stack", "take"]


def public_like(x: SecureArray, value: ArrayLike, frac_bits: int | None = None) -> SecureArray:
    """A secure value of ``x``'s family (session, holders, ring) holding the public ``value``:
    holder 0's share is its encoding, the others 0 (no message). ``frac_bits``: the scale
    (default 0 for integers, the session's for floats); the bound is the value's magnitude."""
    arr = np.asarray(value)
    if arr.dtype.kind not in "iufb":
        raise TypeError(f"value must be numeric, got {arr.dtype}")
    if x.holders.ndim > 1:
        raise ValueError("a constant needs the same holders for every element")
    c = (x.session.fp.frac_bits if arr.dtype.kind == "f" else 0) if frac_bits is None \
        else int(frac_bits)
    zero = x._like(np.zeros((x.p,) + arr.shape, dtype=np.uint64), frac_bits=c, bound=0,
                   kind="additive")
    enc, bound = zero._public(arr, c, "value")
    return zero._like(zero._add_public(enc), bound=bound)


def _aligned_all(values: list) -> list:
    if not values:
        raise ValueError("need at least one secure value")
    first = values[0]
    c = max(v.frac_bits for v in values)
    out = []
    for v in values:
        if type(v) is not type(first):
            raise TypeError(f"cannot join a secure value with {type(v).__name__}: make it one "
                            "with mpc.values.constant")
        first._aligned(v)                                   # same family, or raises
        out.append(v if v.frac_bits == c else v._rescaled(c))
    return out


def concatenate(values: Iterable[SecureArray], axis: int = 0) -> SecureArray:
    """Secure values of one family joined along an existing ``axis`` (as numpy's); scales are
    aligned up exactly; local, no message."""
    vals = _aligned_all(list(values))
    first = vals[0]
    if first.ndim == 0:
        raise ValueError("zero-dimensional secure values cannot be concatenated: use stack")
    ax = int(axis) % first.ndim + 1
    shares = np.concatenate([v._shares for v in vals], axis=ax)
    h = first.holders if first.holders.ndim == 1 else \
        np.concatenate([v.holders for v in vals], axis=ax)
    return first._like(shares, holders=h, frac_bits=vals[0].frac_bits,
                       bound=max(v.bound for v in vals))


def stack(values: Iterable[SecureArray], axis: int = 0) -> SecureArray:
    """Secure values of one shape and family stacked along a new ``axis`` (as numpy's):
    :func:`concatenate` of each with a new axis of length 1; local, no message."""
    vals = list(values)
    if not vals:
        raise ValueError("need at least one secure value")
    ax = int(axis) % (vals[0].ndim + 1)
    return concatenate([v.reshape(v.shape[:ax] + (1,) + v.shape[ax:]) for v in vals], axis=ax)


def setitem(x: SecureArray, index: Any, value: SecureArray | ArrayLike) -> None:
    """``x[index] = value`` in place (a secure value of x's family, or a public number encoded
    at x's scale, widened to the session's when a float needs it). Scales align up
    exactly; the bound becomes the larger of the two. Local, no message."""
    x._additive("item assignment")
    idx = (slice(None),) + (index if isinstance(index, tuple) else (index,))
    if x.holders.ndim > 1:
        raise ValueError("item assignment needs the same holders for every element")
    if isinstance(value, type(x)):
        a, v = x._aligned(value)
        sh, bound = v._shares, v.bound
    else:
        a = _fp.widen_for(x, value)
        enc, bound = a._public(value, a.frac_bits, "assigned value")
        sh = np.zeros((a.p,) + np.shape(enc), dtype=np.uint64)
        sh[0] = enc
    new = a._shares.copy()
    new[idx] = sh
    x._shares, x.frac_bits, x.bound = new, a.frac_bits, max(a.bound, bound)


def take(x: SecureArray, index: SecureArray) -> SecureArray:
    """``x[index]`` for a 1-d secure ``x`` of length n and a secure integer ``index`` (any
    shape, 0 <= index < n; others give 0): the one-hot vector [index == j] by n equality
    comparisons per index (one batched comparison) dotted with x (one Beaver round).
    Cost: m n comparisons and products for m indices. The result has index's shape."""
    if x.ndim != 1:
        raise ValueError(f"take indexes a 1-d secure value, got shape {x.shape}")
    if index.frac_bits:
        raise TypeError("a secret index must be an integer value (scale 0)")
    n = x.shape[0]
    ish = index._shares[..., None]
    rep = index._like(np.ascontiguousarray(np.broadcast_to(ish, ish.shape[:-1] + (n,))))
    hot = rep == np.arange(n)
    xs = np.ascontiguousarray(np.broadcast_to(x._shares.reshape((x.p,) + (1,) * index.ndim
                                                                 + (n,)), hot._shares.shape))
    return (hot * x._like(xs)).sum(axis=-1)


@functools.lru_cache(maxsize=64)
def batcher_layers(n: int) -> tuple[tuple[np.ndarray, np.ndarray], ...]:
    """The comparators of Batcher's odd-even merge sort for n values, layer by layer: pairs
    (lo, hi) of index arrays, lo < hi; comparators touching a position >= n left out."""
    size = 1 << max(0, (n - 1).bit_length())
    layers = []
    p = 1
    while p < size:
        k = p
        while k >= 1:
            j = np.arange(k % p, size - k, 2 * k)
            i = np.arange(k)
            a = (i[None, :] + j[:, None]).ravel()
            ok = (np.broadcast_to(i[None, :], (j.size, k)).ravel()
                  < np.broadcast_to((size - j - k)[:, None], (j.size, k)).ravel())
            a = a[ok]
            b = a + k
            keep = (a // (2 * p) == b // (2 * p)) & (b < n)
            if keep.any():
                layers.append((a[keep], b[keep]))
            k //= 2
        p *= 2
    return tuple(layers)


def sort_by(keys: SecureArray, *payloads: SecureArray, axis: int = 0) -> tuple:
    """``keys`` sorted ascending along ``axis`` and each payload (a value of the keys' shape
    and family, any scale) moved with them: ``(sorted keys, *moved payloads)``.

    Batcher's network (module docstring): per layer one batched comparison
    and one Beaver round for all swaps. The keys' bound and every payload's
    bound are kept (a comparator outputs its inputs' min and max).
    """
    keys._additive("sort")
    if keys.ndim == 0:
        raise ValueError("a zero-dimensional secure value has nothing to sort")
    if keys.holders.ndim > 1:
        raise ValueError("sorting needs the same holders for every element")
    vals = [keys] + list(payloads)
    for v in payloads:
        keys._aligned(v)
        if v.shape != keys.shape:
            raise ValueError(f"a payload of shape {v.shape} cannot move with keys of shape "
                             f"{keys.shape}")
    ax = int(axis) % max(keys.ndim, 1) + 1
    cols = [np.moveaxis(v._shares, ax, 1).copy() for v in vals]
    ring = keys.ring
    for lo, hi in batcher_layers(keys.shape[ax - 1]):
        a = [col[:, lo] for col in cols]
        b = [col[:, hi] for col in cols]
        swap = keys._like(b[0]) < keys._like(a[0])
        diff = np.concatenate([(bb - aa) & ring.mask for aa, bb in zip(a, b)], axis=1)
        cond = swap._like(np.concatenate([swap._shares] * len(cols), axis=1))
        prod = (cond * keys._like(diff, frac_bits=0, bound=1))._shares   # exact: cond is 0/1
        for q, col in enumerate(cols):
            d = prod[:, q * lo.size:(q + 1) * lo.size]
            col[:, lo] = (a[q] + d) & ring.mask
            col[:, hi] = (b[q] - d) & ring.mask
    return tuple(v._like(np.moveaxis(col, 1, ax)) for v, col in zip(vals, cols))


def sort(x: SecureArray, axis: int = 0) -> SecureArray:
    """``x`` sorted ascending along ``axis``: :func:`sort_by` with no payload."""
    return sort_by(x, axis=axis)[0]


def argsort(x: SecureArray, axis: int = 0) -> SecureArray:
    """Secret indices that sort ``x`` along ``axis`` (integer values, scale 0): the positions
    moved as a payload of :func:`sort_by`. Ties keep an order fixed by the network, not
    necessarily numpy's stable order."""
    n = x.shape[int(axis) % x.ndim]
    shape = [1] * x.ndim
    shape[int(axis) % x.ndim] = n
    pos = np.broadcast_to(np.arange(n).reshape(shape), x.shape)
    idx = public_like(x, pos)
    return sort_by(x, idx, axis=axis)[1]


def shuffle(x: SecureArray, axis: int = 0) -> SecureArray:
    """``x`` permuted along ``axis`` by a uniform permutation nobody but the trusted dealer
    knows: sorted by keys the dealer draws in [0, 2^(l-3)) (module docstring). Cost: the
    dealer's share of n keys (offline), then a sort."""
    if x.holders.ndim > 1:
        raise ValueError("shuffling needs the same holders for every element")
    ring = x.ring
    dealer = x.session.dealer
    keys = dealer.rng.ring_elements(ring, x.shape) >> np.uint64(3)
    sh = dealer.share(x.holders, keys & ring.mask)
    k = x._like(sh, frac_bits=0, bound=1 << (ring.bits - 3))
    return sort_by(k, x._like(x._shares), axis=axis)[1]


# -- numpy's protocols ---------------------------------------------------------------------------
_ADVICE = {
    "max": "x.max(axis)", "min": "x.min(axis)", "amax": "x.max(axis)", "amin": "x.min(axis)",
    "argmax": "x.argmax(axis)", "argmin": "x.argmin(axis)", "dot": "x.dot(y)",
    "median": "mpc.values.arrays.sort (then index the middle)",
    "take": "mpc.values.arrays.take(x, index)",
    "reshape": "x.reshape(shape)", "clip": "mpc.values.where with comparisons",
}


_GENERIC = "the SecureArray methods (mpc.values, mpc.values.arrays, mpc.values.fixedpoint)"


def array_function(func: Any, args: tuple, kwargs: dict) -> Any:
    """numpy functions on secure values: concatenate, stack, sum, mean, var, where, sort,
    argsort run securely; any other raises TypeError naming what to use (never an object
    array)."""
    table: dict[Any, Any] = {
        np.concatenate: concatenate, np.stack: stack, np.sort: sort, np.argsort: argsort,
        np.where: lambda c, a, b: c.if_else(a, b), np.mean: _fp.mean, np.var: _fp.var,
        np.sum: lambda a, axis=None: a.sum(axis),
    }
    fn = table.get(func)
    if fn is None:
        name = getattr(func, "__name__", str(func))
        raise TypeError(f"numpy.{name} does not run on secure values: use "
                        f"{_ADVICE.get(name, _GENERIC)}, or open the value with session.output")
    return fn(*args, **kwargs)


_UFUNCS = {
    "add": "__add__", "subtract": "__sub__", "multiply": "__mul__", "true_divide": "__truediv__",
    "negative": "__neg__", "absolute": "__abs__", "less": "__lt__", "less_equal": "__le__",
    "greater": "__gt__", "greater_equal": "__ge__", "equal": "__eq__",
    "bitwise_xor": "__xor__", "bitwise_and": "__and__",
}
_REFLECTED = {"add": "__radd__", "subtract": "__rsub__", "multiply": "__rmul__",
              "true_divide": "__rtruediv__", "less": "__gt__", "less_equal": "__ge__",
              "greater": "__lt__", "greater_equal": "__le__", "equal": "__eq__",
              "bitwise_xor": "__rxor__", "bitwise_and": "__rand__"}


def array_ufunc(cls: type, ufunc: Any, method: str, inputs: tuple, kwargs: dict) -> Any:
    """numpy ufuncs on secure values (of class ``cls``): arithmetic, comparisons, abs, sqrt,
    exp as the operators and :mod:`mpc.values.fixedpoint` do them; others raise TypeError."""
    name = ufunc.__name__
    if method == "__call__" and not kwargs:
        if name in ("sqrt", "exp") and len(inputs) == 1:
            return getattr(_fp, name)(inputs[0])
        if name in _UFUNCS:
            first = inputs[0]
            if isinstance(first, cls):
                return getattr(first, _UFUNCS[name])(*inputs[1:])
            return getattr(inputs[1], _REFLECTED[name])(first)
    raise TypeError(f"numpy.{name} ({method}) does not run on secure values: use the operators "
                    "and mpc.values.fixedpoint (abs, sqrt, exp, sigmoid, reciprocal), or open the "
                    "value with session.output")
