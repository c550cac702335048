"""Garbled circuits as a comparison provider of secure values (:mod:`mpc.values`).

``Session(..., comparisons=GarbledCircuits())`` makes ``x < y`` and ``x == y``
on a :class:`mpc.values.SecureArray` held by two parties run Yao's protocol
between them (:func:`mpc.gc.yao.yao`), with oblivious transfer instead of a
dealer. For a two-holder sharing ``z = z_0 + z_1 mod 2^l`` of the
difference of the operands:

1. Holder 0 garbles, holder 1 evaluates, instance by instance (per-instance
   holders allowed). Inputs are the low d bits of each share, d = the
   operands' ``in_bits`` when given (|z| < 2^(d-1), so the low d bits of
   ``z_0 + z_1`` are z's d-bit two's complement), else d = l.
2. The circuit adds them (d - 1 ANDs) and outputs, as an l-bit word, the
   sum's sign bit ("ltz": [z < 0]) or [sum == 0] ("eqz": d - 1 ANDs; the
   garbler enters ``-z_0`` and the circuit compares, no adder).
3. ``output="additive"``: the garbler's share is a uniform r in Z_2^l it fed
   into the circuit, the evaluator decodes ``[.] - r mod 2^l`` (l - 1 more
   ANDs). The result is an additive sharing of the 0/1 bit among the same
   holders, as :meth:`mpc.protocols.providers.Comparisons.compare` asks.

Cost per comparison (n_and = about d + l ANDs): offline 256 n_and bits of
tables, l decoding bits and a correlated OT for d bits (Chou-Orlandi base
OTs below 128 OTs per ordered pair, IKNP above), 1 + 3 rounds; online
128 (d + l) + 129 d bits, 2 rounds. All comparisons of one call are one
batched :func:`~mpc.gc.yao.yao` call, in the caller's phase.

Threat model: semi-honest holders, no dealer (:mod:`mpc.gc.yao`); each
holder's share of the result is uniform on its own.
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import ArrayLike

from mpc.gc.builder import CircuitBuilder
from mpc.gc.gates import EVALUATOR, GARBLER
from mpc.gc.yao import yao
from mpc.protocols.providers import Comparisons

if TYPE_CHECKING:
    from mpc.gc.circuit import Circuit
    from mpc.session import Session

OPS = ("ltz", "eqz")


@functools.lru_cache(maxsize=64)
def comparison_circuit(op: str, d: int, l: int) -> Circuit:
    """Garbler input a, evaluator input b (d bits each); output the l-bit word of
    [a + b < 0] (two's complement in d bits) for "ltz", or [a == b] for "eqz"."""
    if op not in OPS:
        raise ValueError(f"op must be one of {OPS}, got {op!r}")
    b = CircuitBuilder(f"gc-{op}-{d}-{l}")
    x = b.input(d, party=GARBLER)
    y = b.input(d, party=EVALUATOR)
    bit = b.add(x, y).msb if op == "ltz" else b.eq(x, y)
    b.output(b.zext(bit, l))
    return b.build()


def gc_comparison(session: Session, z: ArrayLike, holders: ArrayLike, op: str,
                  in_bits: int | None = None) -> np.ndarray:
    """Additive shares ``uint64 (2, m)`` of ``[z < 0]`` ("ltz") or ``[z == 0]`` ("eqz").

    ``z``: ``uint64 (2, m)`` additive sharing mod 2^l (l = ``session.ring.bits``),
    row j held by ``holders[j]`` (``(2,)`` or per instance ``(2, m)``);
    ``in_bits``: None, or d < l with |z| < 2^(d-1). Holder 0 garbles, holder
    1 evaluates (module docstring for the steps, costs and threat model).
    """
    ring = session.ring
    z = np.asarray(z, dtype=np.uint64)
    h = np.asarray(holders)
    if z.ndim != 2 or z.shape[0] != 2:
        raise ValueError(f"z must be a (2, m) sharing, got shape {z.shape}")
    if h.shape[0] != 2 or h.ndim > 2:
        raise ValueError(f"holders must name 2 holders, (2,) or (2, m); got shape {h.shape}")
    l = ring.bits
    d = l if in_bits is None or in_bits >= l else int(in_bits)
    m = z.shape[1]
    mask = np.uint64((1 << d) - 1) if d < 64 else ~np.uint64(0)
    a, b = z[0] & mask, z[1] & mask
    if op == "eqz":
        a = (np.uint64(0) - a) & mask
    g = np.broadcast_to(h[0], (m,)).astype(np.int64)
    e = np.broadcast_to(h[1], (m,)).astype(np.int64)
    res = yao(session, comparison_circuit(op, d, l), g, e, [a], [b], output="additive",
              phase=session.net.current_phase[0])
    out = np.empty((2, m), dtype=np.uint64)
    assert res.garbler is not None and res.evaluator is not None, "additive: both hold shares"
    out[0], out[1] = res.garbler[0], res.evaluator[0]
    return out & ring.mask



class GarbledCircuits(Comparisons):
    """Comparisons between two holders by Yao's protocol with oblivious transfer (no dealer):
    :func:`gc_comparison` (module docstring for steps, costs and threat model)."""

    name = "gc"
    dealer_free = True
    trust = ("no dealer: garbled circuits between the two holders, oblivious transfer "
             "(computational security, semi-honest holders)")

    def serves(self, holders: int) -> bool:
        return holders == 2

    def compare(self, session: Session, z: np.ndarray, holders: ArrayLike, op: str,
                in_bits: int | None) -> np.ndarray:
        return gc_comparison(session, z, holders, op, in_bits)
