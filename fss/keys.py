"""Tree keys of DPF and DCF: their parameters and one key type, a struct of batched arrays.

A DPF key (Boyle, Gilboa, Ishai, CCS 2016, Fig. 1) and a DCF key (Boyle et
al., EUROCRYPT 2021, Fig. 1) walk the same binary tree with the same
correction words; the DCF adds a value correction word per level (as
google/distributed_point_functions builds its DCF on its DPF keys). So one
frozen dataclass, :class:`TreeKey`, holds either, batched over B instances
with the level axis first (evaluation reads one contiguous slice per level):

    seed        uint64 (B, 2)     the party's root seed (low bit of the low word 0)
    cw_seed     uint64 (n, B, 2)  seed correction words s_CW (low bit 0)
    cw_t_left   uint8  (n, B)     control-bit corrections t_CW^L
    cw_t_right  uint8  (n, B)     control-bit corrections t_CW^R
    cw_value    uint64 (n, B)     value corrections V_CW in Z_2^l (DCF only, else None)
    cw_last     uint64 (B,)       output correction CW^(n+1) (in Z_2^l, or l-bit XOR)
    insecure    bool              made from an explicit seed (see :mod:`fss.dcf`)

(B = prod(shape)). Which of the two a key is follows from its ``params``:
:class:`DCFParams` (value words, outputs additive in Z_2^l) or
:class:`DPFParams` (``group`` "arith": Z_2^l, "xor": XOR of l-bit strings);
the wire format of :mod:`fss._keyio` follows from the same object. The two
parties' keys share their correction-word arrays; every array is made
read-only when the key is built.

Sizes per key and instance: information ``key_bits = 128 + n (130 + l) + l``
(DCF) or ``128 + 130 n + l`` (DPF); serialized payload ``wire_bits = 128 (n + 1)
+ 16 ceil(n/8) + 8 ceil(l/8) (n + 1)`` (DCF) or ``... + 8 ceil(l/8)`` (DPF).
Nothing here computes on keys: :mod:`fss.tree` makes and evaluates them.
Security: a key's arrays are its holder's secret (one key alone is
pseudorandom, the two together reveal alpha and beta: :mod:`fss.dcf`,
:mod:`fss.dpf`); ``params``, ``shape``, ``party`` and ``insecure`` are public
(they are what the wire format's header carries).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import ClassVar, NamedTuple

import numpy as np

from ._util import check_int, check_party

_U64 = np.uint64


@dataclass(frozen=True)
class TreeParams:
    """A family of tree functions on ``n_bits``-bit inputs (1..64) with ``out_bits``-bit
    outputs (1..64); the subclasses say which (:class:`DPFParams`, :class:`DCFParams`)."""

    n_bits: int
    out_bits: int = 64

    #: value correction words per level (a DCF)
    values: ClassVar[bool] = False
    #: the wire format's magic (:mod:`fss._keyio`)
    magic: ClassVar[bytes] = b""
    #: what error messages call a key of the family
    what: ClassVar[str] = "tree key"
    #: output groups of the family
    groups: ClassVar[tuple[str, ...]] = ("arith",)

    def __post_init__(self) -> None:
        check_int(self.n_bits, "n_bits", 1, 64)
        check_int(self.out_bits, "out_bits", 1, 64)
        if self.group not in self.groups:
            raise ValueError(f"group must be one of {self.groups}, got {self.group!r}")

    @property
    def group(self) -> str:
        """Output group: "arith" (additive shares in Z_2^l) or "xor" (XOR of l-bit strings)."""
        return "arith"

    @property
    def mode(self) -> str:
        """What the kernels compute: "dcf", or the DPF's group ("arith", "xor")."""
        return "dcf" if self.values else self.group

    @property
    def key_bits(self) -> int:
        """Bits of information in one key of one party: 128 + n (130 + l) + l (DCF),
        128 + 130 n + l (DPF)."""
        n, l = self.n_bits, self.out_bits
        return 128 + n * (130 + (l if self.values else 0)) + l

    @property
    def record_bytes(self) -> int:
        """Serialized payload bytes per instance: 16 (n + 1) + 2 ceil(n/8) + ceil(l/8)
        (n + 1) for a DCF, ceil(l/8) for a DPF's last term."""
        n, lb = self.n_bits, (self.out_bits + 7) // 8
        return 16 * (n + 1) + 2 * ((n + 7) // 8) + lb * ((n + 1) if self.values else 1)

    @property
    def wire_bits(self) -> int:
        """Serialized payload bits per instance (what a dealer sends): 8 record_bytes."""
        return 8 * self.record_bytes


@dataclass(frozen=True)
class DPFParams(TreeParams):
    """DPF family: input bits ``n_bits`` (1..64), outputs in Z_2^``out_bits`` or XOR of l bits."""

    group: str = "arith"

    magic: ClassVar[bytes] = b"DPF1"
    what: ClassVar[str] = "DPF key"
    groups: ClassVar[tuple[str, ...]] = ("arith", "xor")


@dataclass(frozen=True)
class DCFParams(TreeParams):
    """Parameters of a DCF family: input bits ``n_bits`` (1..64), output ring Z_2^``out_bits``."""

    values: ClassVar[bool] = True
    magic: ClassVar[bytes] = b"DCF1"
    what: ClassVar[str] = "DCF key"


class TreeArrays(NamedTuple):
    """A key batch's arrays (or a block of them), as the kernels of :mod:`fss.kernels` take
    them: level axis first, batch axis next. In Gen, ``seed`` holds both parties' roots
    (2, B, 2) and the kernel fills the rest."""

    seed: np.ndarray
    cw_seed: np.ndarray
    cw_t_left: np.ndarray
    cw_t_right: np.ndarray
    cw_value: np.ndarray | None
    cw_last: np.ndarray

    def block(self, c0: int, c1: int) -> TreeArrays:
        """Instances c0..c1-1 (views: the batch axis is the last but the words')."""
        v = self.cw_value
        return TreeArrays(self.seed[..., c0:c1, :], self.cw_seed[:, c0:c1],
                          self.cw_t_left[:, c0:c1], self.cw_t_right[:, c0:c1],
                          None if v is None else v[:, c0:c1], self.cw_last[c0:c1])

    @classmethod
    def empty(cls, params: TreeParams, roots: np.ndarray) -> TreeArrays:
        """Output arrays for Gen of B instances from ``roots`` (2, B, 2)."""
        n, B = params.n_bits, roots.shape[1]
        return cls(roots, np.empty((n, B, 2), dtype=_U64), np.empty((n, B), dtype=np.uint8),
                   np.empty((n, B), dtype=np.uint8),
                   np.empty((n, B), dtype=_U64) if params.values else None,
                   np.empty(B, dtype=_U64))


ARRAY_FIELDS = ("seed", "cw_seed", "cw_t_left", "cw_t_right", "cw_value", "cw_last")


@dataclass(frozen=True, eq=False, kw_only=True)
class TreeKey:
    """One party's batch of DPF or DCF keys (struct of arrays, level axis first).

    ``cw_value`` is given exactly when ``params`` is a :class:`DCFParams`. Keys
    compare equal when every field and array is equal (unhashable: arrays).
    """

    party: int
    params: TreeParams
    shape: tuple
    seed: np.ndarray
    cw_seed: np.ndarray
    cw_t_left: np.ndarray
    cw_t_right: np.ndarray
    cw_value: np.ndarray | None = None
    cw_last: np.ndarray
    insecure: bool = False

    def __post_init__(self) -> None:
        _check_key(self)

    @property
    def n_bits(self) -> int:
        return self.params.n_bits

    @property
    def out_bits(self) -> int:
        return self.params.out_bits

    @property
    def group(self) -> str:
        return self.params.group

    @cached_property
    def batch(self) -> int:
        """Instances in the batch: prod(shape)."""
        b = 1
        for d in self.shape:
            b *= int(d)
        return b

    @property
    def nbits(self) -> int:
        """Serialized payload bits of this batch (what sending it costs): batch * wire_bits."""
        return self.batch * self.params.wire_bits

    @cached_property
    def arrays(self) -> TreeArrays:
        """The arrays, as the kernels take them (made once per key: Eval of a few points
        pays for every attribute access)."""
        return TreeArrays(self.seed, self.cw_seed, self.cw_t_left, self.cw_t_right,
                          self.cw_value, self.cw_last)

    def take(self, idx: np.ndarray | slice) -> TreeKey:
        """The keys of instances ``idx`` (flat batch positions: indices or a slice), a batch
        of shape (count,); a slice gives views, indices copies."""
        count = len(range(*idx.indices(self.batch))) if isinstance(idx, slice) else \
            int(np.asarray(idx).size)
        a = self.arrays
        v = a.cw_value
        return TreeKey(party=self.party, params=self.params, shape=(count,), seed=a.seed[idx],
                       cw_seed=a.cw_seed[:, idx], cw_t_left=a.cw_t_left[:, idx],
                       cw_t_right=a.cw_t_right[:, idx],
                       cw_value=None if v is None else v[:, idx], cw_last=a.cw_last[idx],
                       insecure=self.insecure)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, TreeKey):
            return NotImplemented
        if (self.party, self.params, tuple(self.shape), bool(self.insecure)) != \
                (other.party, other.params, tuple(other.shape), bool(other.insecure)):
            return False
        return all(np.array_equal(a, b) if a is not None and b is not None else a is b
                   for a, b in zip(self.arrays, other.arrays))


def _check_key(key: TreeKey) -> None:
    """Validate a key's fields against its params and shape; make its arrays read-only."""
    check_party(key.party)
    if not isinstance(key.params, TreeParams) or type(key.params) is TreeParams:
        raise TypeError(f"params must be a DCFParams or DPFParams, got {type(key.params).__name__}")
    if not isinstance(key.insecure, (bool, np.bool_)):
        raise TypeError(f"insecure must be a bool, got {key.insecure!r}")
    try:
        shape = tuple(int(d) for d in key.shape)
    except TypeError:
        raise TypeError(f"key shape must be a tuple of ints, got {key.shape!r}") from None
    B = 1
    for d in shape:
        if d < 0:
            raise ValueError(f"key shape must have non-negative axes, got {shape}")
        B *= d
    n = key.params.n_bits
    want = {"seed": ((B, 2), _U64), "cw_seed": ((n, B, 2), _U64),
            "cw_t_left": ((n, B), np.uint8), "cw_t_right": ((n, B), np.uint8),
            "cw_value": ((n, B), _U64), "cw_last": ((B,), _U64)}
    if not key.params.values:
        if key.cw_value is not None:
            raise ValueError(f"key field cw_value must be None for a {key.params.what}")
        del want["cw_value"]
    for name, (shp, dt) in want.items():
        arr = getattr(key, name)
        if not isinstance(arr, np.ndarray) or arr.dtype != dt or arr.shape != shp:
            got = f"{arr.dtype} {arr.shape}" if isinstance(arr, np.ndarray) else type(arr).__name__
            raise ValueError(f"key field {name} must be {np.dtype(dt)} {shp} for n={n}, "
                             f"batch {shape}; got {got}")
        if arr.flags.writeable:
            arr.flags.writeable = False
