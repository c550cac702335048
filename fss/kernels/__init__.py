"""The kernels of the DPF/DCF tree walk, and the one place that picks among them.

Every backend computes the same keys and shares bit for bit (same PRG,
:mod:`fss.prg`; same arithmetic mod 2^64), so the choice is one of speed only
(``tests/fss/test_kernels.py`` runs each one available here against the
reference):

- ``"numpy"``  (:mod:`.reference`): the reference; numpy passes around one
  pycryptodome AES call per level and block. Gen, Eval, codec, and the
  breadth-first full-domain Eval of DPF keys (``expand``).
- ``"scalar"`` (:mod:`.scalar`): Eval of at most :data:`SMALL` points with
  Python integers (numpy's per-call overhead dominates there).
- ``"numba"``  (:mod:`.passes`): one compiled pass per level around the
  pycryptodome call (numba installed; the optional ``fast`` extra). Gen, Eval,
  and the compiled codec.
- ``"aesni"``  (:mod:`.aesni`): the whole walk of a block in one compiled call,
  AES on the CPU's AES instructions (numba and a CPU with them). Gen, Eval
  (any batch, one point included), the compiled codec.

A backend offers ``gen_block(params, alpha, beta, out)`` (fills the correction
words of ``out``, a :class:`fss.keys.TreeArrays` whose ``seed`` holds both
parties' roots), ``eval_block(params, party, key, x)`` (shares at x (m, B) of
the B keys of a :class:`~fss.keys.TreeArrays`), ``expand_block(params, party,
key)`` (a DPF's shares at every point of the domain) and a :class:`Codec` (the
packing of the wire format, :mod:`fss._keyio`), or None for what it lacks.
:func:`choose` picks one for an operation from what is installed and enabled
(:mod:`._host`: numba, ``USTAT_FSS_NUMBA=0``, the host's AES instructions,
its byte order) and the batch size; nothing else in :mod:`fss` decides.
:func:`forced` makes it pick a given backend (tests, the numpy peer of
``benchmarks/fss.py``). Costs: the AES blocks of the constructions (DCF Gen
8 n per instance, Eval 2 n per point; DPF half), whatever the backend.
Security: a kernel is a deterministic function of what it is given (root
seeds drawn by :mod:`fss.tree` from the caller's CSPRNG, or a key); no
backend draws randomness or keeps state between calls, so none changes the
constructions' guarantees (:mod:`fss.dcf`, :mod:`fss.dpf`).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np

from ..keys import TreeArrays, TreeParams
from . import _host, reference, scalar
from ._host import cache_cold
from .scalar import SMALL

#: ``gen_block(params, alpha, beta, out)``: fills ``out``'s correction words
GenKernel = Callable[[TreeParams, np.ndarray, np.ndarray, TreeArrays], None]
#: ``eval_block(params, party, key, x)``: the shares at x (m, B) of the B keys
EvalKernel = Callable[[TreeParams, int, TreeArrays, np.ndarray], np.ndarray]
#: ``expand_block(params, party, key)``: a DPF's shares at every x, (B, 2^n)
ExpandKernel = Callable[[TreeParams, int, TreeArrays], np.ndarray]

__all__ = ["NAMES", "SMALL", "Backend", "Codec", "available", "cache_cold", "choose", "codec",
           "eval_kernel", "expand_kernel", "forced", "gen_kernel", "missing"]


class Codec(NamedTuple):
    """The packing of the wire format: words to l-bit fields and back, control bits to
    level-packed bytes and back, and the canonical-seed check (contracts in
    :mod:`fss.kernels.reference`)."""

    put_words: Callable[..., Any]
    get_words: Callable[..., Any]
    pack_levels: Callable[..., Any]
    unpack_levels: Callable[..., Any]
    any_low_bit: Callable[..., Any]


@dataclass(frozen=True)
class Backend:
    """One backend: its name, the operations it offers (None: not offered) and the most
    points one Eval call may take (None: any number)."""

    name: str
    gen_block: GenKernel | None
    eval_block: EvalKernel | None
    codec: Codec | None
    max_points: int | None = None
    expand_block: ExpandKernel | None = None

    def offers(self, op: str, size: int | None = None) -> bool:
        """Whether it offers ``op`` ("gen", "eval", "expand" or "codec") on ``size`` points."""
        if op == "eval" and self.max_points is not None and (size is None or
                                                             size > self.max_points):
            return False
        return {"gen": self.gen_block, "eval": self.eval_block, "expand": self.expand_block,
                "codec": self.codec}[op] is not None


#: every backend, slowest first (the order of preference is the reverse)
NAMES = ("numpy", "scalar", "numba", "aesni")
_OPS = ("gen", "eval", "expand", "codec")


def _codec(mod: Any) -> Codec:
    return Codec(mod.put_words, mod.get_words, mod.pack_levels, mod.unpack_levels,
                 mod.any_low_bit)


def _load() -> tuple[dict[str, Backend], dict[str, str]]:
    """The backends this host runs, and why each other one is missing."""
    have = {"numpy": Backend("numpy", reference.gen_block, reference.eval_block,
                             _codec(reference), expand_block=reference.expand_block),
            "scalar": Backend("scalar", None, scalar.eval_block, None, SMALL)}
    why = {}
    if _host.NUMBA:
        from . import passes

        compiled = _codec(passes) if _host.LITTLE else None   # native-order views inside
        have["numba"] = Backend("numba", passes.gen_block, passes.eval_block, compiled)
        if _host.AESNI:
            from . import aesni

            have["aesni"] = Backend("aesni", aesni.gen_block, aesni.eval_block, compiled)
        else:
            why["aesni"] = "the CPU (or NUMBA_CPU_FEATURES) has no AES instructions"
    else:
        why["numba"] = why["aesni"] = "numba (the 'fast' extra) not installed, or " \
                                      "USTAT_FSS_NUMBA=0"
    return have, why


def _best(op: str, size: int | None) -> Backend:
    """The preferred backend of ``op`` on ``size`` points among those loaded."""
    for name in ("aesni", "scalar", "numba"):
        be = _HAVE.get(name)
        if be is not None and be.offers(op, size):
            return be
    return _HAVE["numpy"]


_HAVE, _WHY = _load()
#: the choice for each operation, made once: (any size, at most SMALL points)
_PICK = {op: (_best(op, None), _best(op, SMALL)) for op in _OPS}
_forced: Backend | None = None


def available() -> dict[str, Backend]:
    """The backends this host runs, by name."""
    return dict(_HAVE)


def missing(name: str) -> str | None:
    """Why backend ``name`` is not available here, or None if it is."""
    if name not in NAMES:
        raise ValueError(f"backend must be one of {NAMES}, got {name!r}")
    return _WHY.get(name)


def choose(op: str, size: int | None = None) -> Backend:
    """The backend for ``op`` ("gen", "eval", "expand" or "codec") on ``size`` points (Eval) or
    instances (Gen), the one place in :mod:`fss` that decides.

    AES in registers wherever the host has it (one compiled call is fastest at every
    size, one point included); else a few points (at most :data:`SMALL`) take the
    scalar walk, and larger batches the compiled passes when numba is enabled, numpy
    otherwise. The codec is compiled whenever numba is enabled (on a little-endian
    host). Under :func:`forced`, the forced backend for what it offers, the reference
    for the rest.
    """
    pick = _PICK.get(op)
    if pick is None:
        raise ValueError(f"op must be one of {_OPS}, got {op!r}")
    if _forced is not None:
        return _forced if _forced.offers(op, size) else _HAVE["numpy"]
    return pick[1] if size is not None and size <= SMALL else pick[0]


def gen_kernel(size: int | None = None) -> GenKernel:
    """The Gen kernel of the backend :func:`choose` picks for ``size`` instances."""
    fn = choose("gen", size).gen_block
    assert fn is not None                   # choose picks a backend that offers it
    return fn


def eval_kernel(size: int | None = None) -> EvalKernel:
    """The Eval kernel of the backend :func:`choose` picks for ``size`` points."""
    fn = choose("eval", size).eval_block
    assert fn is not None
    return fn


def expand_kernel() -> ExpandKernel:
    """The full-domain Eval kernel of DPF keys of the backend :func:`choose` picks."""
    fn = choose("expand").expand_block
    assert fn is not None
    return fn


def codec() -> Codec:
    """The codec of the backend :func:`choose` picks."""
    c = choose("codec").codec
    assert c is not None
    return c


@contextlib.contextmanager
def forced(name: str) -> Iterator[Backend]:
    """Within the block, :func:`choose` picks backend ``name`` (for every operation and
    size it offers; the numpy reference for the others). Process-wide: for tests and benchmarks,
    not for code that runs beside other FSS work."""
    global _forced
    why = missing(name)
    if why is not None:
        raise ValueError(f"backend {name!r} is not available here: {why}")
    before, _forced = _forced, _HAVE[name]
    try:
        yield _forced
    finally:
        _forced = before
