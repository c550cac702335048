"""Cryptographic randomness: an AES-128-CTR keystream (pycryptodome) in bulk.

Every secret in the toolkit (shares, masks, FSS keys, labels, DP noise) comes
from a :class:`CSPRNG`. By default it is keyed from ``os.urandom``. An explicit
seed gives a reproducible stream for tests and experiments; such a generator
is *visibly insecure*: ``rng.seeded`` is True, every stream derived from it
inherits the flag, and protocol results computed from it carry
``insecure_seed=True`` so a debug seed cannot slip into a real release
unnoticed.

Fresh streams: :meth:`CSPRNG.fresh` derives a stream with a nonce (from
``os.urandom``, or from the generator's own stream when it is seeded, so a
seeded run stays reproducible), so that one generator handed to two sessions
or runs never gives them the same masks, triples or keys.

Pickling (worker processes, Dask tasks) carries the key and the stream
position: the copy continues the same stream. A pickled generator is a
secret: it travels only where the simulated parties run.

Security assumption: AES-128 is a pseudorandom permutation, so the CTR
keystream is indistinguishable from uniform, and HMAC-SHA256 keyed with the
parent key is a PRF, so derived streams (per party, per pair of parties) are
independent of each other and of the parent stream. numpy's generators are
never used for secrets.
"""

from __future__ import annotations

import hashlib
import hmac
import numbers
import os
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, NoReturn

import numpy as np
from Crypto.Cipher import AES
from numpy.typing import ArrayLike

if TYPE_CHECKING:
    from mpc.arith.ring import Ring

_BLOCK = 1 << 16  # bytes produced per refill of the internal buffer

#: What :func:`check_shape` accepts: an int or a sequence of non-negative ints.
ShapeLike = int | Sequence[int]


def _seed_key(seed) -> bytes:
    if isinstance(seed, bool):
        raise TypeError("seed must be an int, str or bytes, not bool")
    if isinstance(seed, numbers.Integral):
        data = b"int:" + str(int(seed)).encode()
    elif isinstance(seed, str):
        data = b"str:" + seed.encode()
    elif isinstance(seed, (bytes, bytearray)):
        data = b"bytes:" + bytes(seed)
    else:
        raise TypeError(f"seed must be an int, str or bytes, got {type(seed).__name__}")
    return hashlib.sha256(b"ustat-toolkit seed\x00" + data).digest()[:16]


def _label_bytes(labels) -> bytes:
    parts = []
    for lab in labels:
        if isinstance(lab, bool):
            raise TypeError("derive labels must be str, int or bytes, not bool")
        if isinstance(lab, numbers.Integral):
            parts.append(b"i" + str(int(lab)).encode())
        elif isinstance(lab, str):
            parts.append(b"s" + lab.encode())
        elif isinstance(lab, (bytes, bytearray)):
            parts.append(b"b" + bytes(lab))
        else:
            raise TypeError(f"derive labels must be str, int or bytes, got {type(lab).__name__}")
    return b"\x1f".join(len(p).to_bytes(4, "little") + p for p in parts)


class CSPRNG:
    """AES-128-CTR keystream generator producing bytes, words, ring elements, bits.

    Parameters
    ----------
    seed : int | str | bytes | None
        ``None`` (default): a fresh key from ``os.urandom`` (secure).
        Anything else: a reproducible, insecure stream (``seeded`` is True).

    Cost: one AES block per 16 output bytes, produced in bulk buffers.
    """

    __slots__ = ("_buf", "_cipher", "_key", "_made", "_pos", "seeded")

    def __init__(self, seed=None, *, _key: bytes | None = None, _seeded: bool = False):
        if _key is not None:
            self._key = _key
            self.seeded = _seeded
        elif seed is None:
            self._key = os.urandom(16)
            self.seeded = False
        else:
            self._key = _seed_key(seed)
            self.seeded = True
        self._cipher = AES.new(self._key, AES.MODE_CTR, nonce=b"", initial_value=0)
        self._buf = np.empty(0, dtype=np.uint8)
        self._pos = 0
        self._made = 0          # keystream bytes produced by the cipher so far

    def __repr__(self) -> str:
        return f"CSPRNG(seeded={self.seeded})"

    def __reduce__(self):
        consumed = self._made - (self._buf.size - self._pos)
        return _restore, (self._key, self.seeded, consumed)

    # -- streams --------------------------------------------------------------
    def derive(self, *labels: str | int | bytes) -> CSPRNG:
        """An independent generator for ``labels`` (e.g. ``("party", 3)``).

        Deterministic in (this generator's key, labels) and independent of how
        much of this stream has been consumed. Inherits the ``seeded`` flag.
        """
        if not labels:
            raise ValueError("derive needs at least one label")
        key = hmac.new(self._key, _label_bytes(labels), hashlib.sha256).digest()[:16]
        return CSPRNG(_key=key, _seeded=self.seeded)

    def fresh(self, *labels: str | int | bytes) -> CSPRNG:
        """A new stream for ``labels`` that no earlier call returned: ``derive(*labels, nonce)``.

        The nonce is 16 bytes of ``os.urandom``, or, for a seeded generator,
        the next 16 bytes of this stream (a per-generator counter in effect:
        reproducible from the seed, different at every call). Sessions and
        protocol runs take their streams from here, so a generator passed to
        two of them never makes them reuse masks, triples or FSS keys.
        """
        nonce = self.random_bytes(16) if self.seeded else os.urandom(16)
        return self.derive(*labels, nonce)

    def party(self, i: int) -> NoReturn:
        """Removed: it looked like an accessor but derived a new generator at the start of party
        i's stream on every call, so two calls gave the same masks. Raises TypeError naming the
        right calls."""
        raise TypeError("CSPRNG.party(i) was removed: it restarted party i's stream at every call "
                        "(masks repeated). Use session.party_rng(i), one stateful stream per "
                        "party, or rng.derive('party', i) once and keep the generator")

    def pair(self, i: int, j: int) -> NoReturn:
        """Removed with :meth:`party` (same reason); raises TypeError."""
        raise TypeError("CSPRNG.pair(i, j) was removed: it restarted the pair's stream at every "
                        "call. Use rng.derive('pair', min(i, j), max(i, j)) once and keep it")

    def derived_keys(self, label: str | int | bytes, ids: ArrayLike) -> np.ndarray:
        """The 128-bit keys of ``derive(label, i)`` for each i in ``ids``: ``uint64 (len(ids), 2)``.

        For seeds of many participants at once (one HMAC each, no cipher set
        up): participant i's key is the one its own ``derive(label, i)``
        stream would use, so a process holding i computes it alone.
        """
        ids = np.asarray(ids).reshape(-1)
        if ids.size and ids.dtype.kind not in "iu":
            raise TypeError(f"ids must be integers, got dtype {ids.dtype}")
        head = _label_bytes((label,)) + b"\x1f"          # _label_bytes((label, i)), i appended
        key = self._key
        digests = b"".join(
            hmac.digest(key, head + (len(d) + 1).to_bytes(4, "little") + b"i" + d, "sha256")[:16]
            for d in (str(i).encode() for i in ids.tolist()))   # one HMAC per participant
        return np.frombuffer(digests, dtype=np.uint64).reshape(ids.size, 2).copy()

    # -- raw output -------------------------------------------------------------
    def _keystream(self, n: int) -> np.ndarray:
        out = np.zeros(n, dtype=np.uint8)
        if n:
            self._cipher.encrypt(out.data, output=out.data)   # in place (out.data: a memoryview)
            self._made += n
        return out

    def bytes_array(self, n: int) -> np.ndarray:
        """``n`` uniform bytes as a ``uint8`` array."""
        n = _check_count(n, "n")
        avail = self._buf.size - self._pos
        if n <= avail:
            out = self._buf[self._pos:self._pos + n].copy()
            self._pos += n
            return out
        if n >= _BLOCK:
            head = self._buf[self._pos:]
            self._buf, self._pos = np.empty(0, np.uint8), 0
            return np.concatenate([head, self._keystream(n - head.size)])
        head = self._buf[self._pos:].copy()
        self._buf = self._keystream(_BLOCK)
        self._pos = n - head.size
        return np.concatenate([head, self._buf[:self._pos]])

    def random_bytes(self, n: int) -> bytes:
        """``n`` uniform bytes as ``bytes``."""
        return self.bytes_array(n).tobytes()

    def uint64(self, shape: ShapeLike = ()) -> np.ndarray:
        """Uniform 64-bit words of the given shape."""
        shape = check_shape(shape)
        count = int(np.prod(shape, dtype=np.int64))
        return self.bytes_array(8 * count).view(np.uint64).reshape(shape)

    def ring_elements(self, ring: Ring, shape: ShapeLike = ()) -> np.ndarray:
        """Uniform elements of ``ring`` (Z_2^l) with the given shape."""
        return self.uint64(shape) & ring.mask

    def bits(self, shape: ShapeLike = ()) -> np.ndarray:
        """Uniform bits (``uint8`` 0/1) of the given shape."""
        shape = check_shape(shape)
        count = int(np.prod(shape, dtype=np.int64))
        raw = self.bytes_array((count + 7) // 8)
        return np.unpackbits(raw, count=count, bitorder="little").reshape(shape)

    def integers(self, high: ArrayLike, shape: ShapeLike = ()) -> np.ndarray:
        """Uniform integers in [0, high) (``int64``), exact by rejection sampling.

        ``high`` may be a positive int below 2^63 or an array of them
        broadcastable to ``shape``.
        """
        shape = check_shape(shape)
        high_arr = np.asarray(high)
        if high_arr.dtype.kind not in "iu":
            raise TypeError(f"high must be an integer or integer array, got {high!r}")
        if high_arr.size and (high_arr.min() < 1 or int(high_arr.max()) > (1 << 63) - 1):
            raise ValueError(f"high must be in 1..2^63-1, got {high!r}")
        if high_arr.ndim == 0:
            return self._integers_below(int(high_arr), shape)
        high_u = np.broadcast_to(high_arr.astype(np.uint64), shape)
        # Rejection: draw w in [0, 2^64), accept w < 2^64 - (2^64 mod high).
        with np.errstate(over="ignore"):     # mod 2^64 on purpose (numpy warns for scalars)
            limit = np.uint64(0) - (np.uint64(0) - high_u) % high_u  # = 2^64 - (2^64 mod high)
        out = np.empty(shape, dtype=np.uint64)
        todo = np.ones(shape, dtype=bool)
        while True:
            idx = np.flatnonzero(todo)
            if idx.size == 0:
                break
            w = self.uint64(idx.size)
            lim = limit.ravel()[idx]
            ok = (w < lim) | (lim == 0)
            flat_out = out.reshape(-1)
            flat_out[idx[ok]] = w[ok] % high_u.ravel()[idx[ok]]
            todo.reshape(-1)[idx[ok]] = False
        return out.astype(np.int64)

    def _integers_below(self, high: int, shape: tuple) -> np.ndarray:
        """:meth:`integers` for one ``high``: the same words, rounds and results, with a
        fraction of the numpy calls (most calls draw a few hundred integers)."""
        count = int(np.prod(shape, dtype=np.int64))
        w = self.uint64(count)
        h = np.uint64(high)
        limit = (1 << 64) - (1 << 64) % high
        out = w % h
        if limit < 1 << 64:
            todo = np.flatnonzero(w >= np.uint64(limit))
            while todo.size:
                w = self.uint64(todo.size)
                ok = w < np.uint64(limit)
                out[todo[ok]] = w[ok] % h
                todo = todo[~ok]
        return out.astype(np.int64).reshape(shape)

    def random(self, shape: ShapeLike = ()) -> np.ndarray:
        """Uniform floats in [0, 1) with 53 random bits (not for secrets' noise)."""
        return (self.uint64(shape) >> np.uint64(11)).astype(np.float64) * (1.0 / (1 << 53))

    def permutation(self, n: int) -> np.ndarray:
        """A uniform random permutation of range(n) (``int64``).

        Sorts n random words whose low ``bit_length(n - 1)`` bits hold the
        index (one ``np.sort`` of uint64, several times faster than an
        argsort); elements whose random high parts tie are put in a uniformly
        random order with fresh words, so the permutation is exactly uniform.
        Cost: 8n keystream bytes, one sort of n words, O(n).
        """
        n = _check_count(n, "n")
        if n < 2:
            return np.arange(n, dtype=np.int64)
        return self._sorted_by_random_words(np.arange(n, dtype=np.uint64))

    def shuffled(self, values: np.ndarray) -> np.ndarray:
        """``values[self.permutation(values.size)]`` for sorted values, without the gather.

        ``values``: a non-decreasing 1-d array of integers in
        ``[0, 2^bit_length(size - 1))`` (e.g. ``np.repeat(np.arange(n), degrees)``
        when every degree is at least 1). The values themselves ride in the
        low bits of the sorted random words instead of their indices: since
        the values are non-decreasing in the index, the sorted order gives the
        same sequence of values, and the same keystream is read, so the result
        (``int64``) is exactly ``values[self.permutation(size)]`` drawn from the
        same stream position, without a random gather over the whole array
        (the gather cost 0.6 s of BalancedSamp's 3 s at 4 x 10^7 stubs). Any
        other array is shuffled by that gather.
        """
        values = np.asarray(values)
        if values.ndim != 1 or values.dtype.kind not in "iu":
            raise TypeError(f"values must be a 1-d integer array, got {values.dtype} "
                            f"of shape {values.shape}")
        n = values.size
        if n < 2:
            return values.astype(np.int64)
        top = 1 << (n - 1).bit_length()
        if not (values[0] >= 0 and values[-1] < top and np.all(values[1:] >= values[:-1])):
            return values[self.permutation(n)].astype(np.int64, copy=False)
        return self._sorted_by_random_words(values)

    def _sorted_by_random_words(self, low_values: np.ndarray) -> np.ndarray:
        """``low_values`` (non-decreasing, below 2^bit_length(n - 1)) in uniformly random order."""
        n = low_values.size
        shift = np.uint64((n - 1).bit_length())
        low = (np.uint64(1) << shift) - np.uint64(1)
        keys = self.uint64(n)
        keys &= ~low
        keys |= (low_values.view(np.uint64) if low_values.dtype.itemsize == 8
                 else low_values.astype(np.uint64))
        keys.sort()
        out = np.bitwise_and(keys, low).view(np.int64)
        keys >>= shift
        tie = keys[1:] == keys[:-1]
        if tie.any():
            self._shuffle_tied_runs(out, tie)
        return out

    def _shuffle_tied_runs(self, out: np.ndarray, tie: np.ndarray) -> None:
        """Put every run of tied entries of ``out`` in a uniformly random order, in place."""
        member = np.zeros(out.size, dtype=bool)
        member[1:] |= tie
        member[:-1] |= tie
        pos = np.flatnonzero(member)
        starts = np.ones(pos.size, dtype=bool)
        starts[1:] = ~tie[pos[1:] - 1]
        run = np.cumsum(starts)
        while True:
            words = self.uint64(pos.size)
            order = np.lexsort((words, run))
            w, r = words[order], run[order]
            if not np.any((w[1:] == w[:-1]) & (r[1:] == r[:-1])):
                break
        out[pos] = out[pos][order]

    def choice(self, n: int, size: int) -> np.ndarray:
        """``size`` distinct uniform elements of range(n), in random order."""
        n = _check_count(n, "n")
        size = _check_count(size, "size")
        if size > n:
            raise ValueError(f"size must be <= n, got size={size} > n={n}")
        if size * 4 < n:
            # Sparse case: draw with replacement, keep first occurrences, top up.
            chosen = np.empty(0, dtype=np.int64)
            while chosen.size < size:
                extra = self.integers(n, (2 * (size - chosen.size) + 16,))
                merged = np.concatenate([chosen, extra])
                _, first = np.unique(merged, return_index=True)
                chosen = merged[np.sort(first)]
            return chosen[:size]
        return self.permutation(n)[:size].astype(np.int64)


def _check_count(n, name: str) -> int:
    if isinstance(n, bool) or not isinstance(n, numbers.Integral):
        raise TypeError(f"{name} must be a non-negative integer, got {n!r}")
    if n < 0:
        raise ValueError(f"{name} must be non-negative, got {n}")
    return int(n)


def check_shape(shape: ShapeLike) -> tuple[int, ...]:
    """Normalize an int or a tuple of non-negative ints to a shape tuple."""
    # numbers.Integral does not narrow for a type checker: dims is whatever iterates
    dims: Any = (shape,) if isinstance(shape, numbers.Integral) and not isinstance(shape, bool) \
        else shape
    try:
        out = tuple(int(s) for s in dims)
    except TypeError:
        raise TypeError(f"shape must be an int or a tuple of ints, got {shape!r}") from None
    if any(s < 0 for s in out):
        raise ValueError(f"shape must have non-negative dimensions, got {out}")
    return out


def _restore(key: bytes, seeded: bool, consumed: int) -> CSPRNG:
    """Unpickle a :class:`CSPRNG` at stream position ``consumed`` (bytes)."""
    g = CSPRNG(_key=key, _seeded=seeded)
    g._cipher = AES.new(key, AES.MODE_CTR, nonce=b"", initial_value=consumed // 16)
    g._made = consumed - consumed % 16
    g._keystream(consumed % 16)
    return g


#: What :func:`as_rng` accepts: a :class:`CSPRNG`, a seed (int, str or bytes: insecure, for
#: reproducible tests) or None (a fresh generator seeded from ``os.urandom``).
RngLike = CSPRNG | int | str | bytes | None


def as_rng(rng: RngLike = None) -> CSPRNG:
    """Accept a :class:`CSPRNG`, a seed (int/str/bytes: insecure) or ``None``."""
    if isinstance(rng, CSPRNG):
        return rng
    if rng is None:
        return CSPRNG()
    return CSPRNG(rng)
