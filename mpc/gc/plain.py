"""Plaintext circuit evaluation batched over instances (the oracle for the GC tests).

Instances are bit-sliced: every wire holds one ``uint64`` word per 64
instances, so one numpy XOR/AND per schedule step evaluates all its gates
for all instances (``ceil(P/64)`` words per wire). Loops run over schedule
steps only.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numpy.typing import ArrayLike

from mpc.gc.circuit import Circuit
from mpc.gc.encoding import group_bits
from mpc.gc.schedule import ONE_SLOT, STEP_AND, ZERO_SLOT


def evaluate(circuit: Circuit, inputs: ArrayLike | Sequence[ArrayLike]) -> list[np.ndarray]:
    """Evaluate ``circuit`` on a batch of inputs.

    Parameters
    ----------
    inputs : one value per input group: a bit array ``uint8 (P, width)``
        (LSB first) or, for width <= 64, an integer array ``(P,)``.

    Returns one ``uint8 (P, width)`` bit array per output group.
    """
    if not isinstance(circuit, Circuit):
        raise TypeError(f"circuit must be a Circuit, got {type(circuit).__name__}")
    groups, P = group_bits(inputs, circuit.input_widths, "inputs")
    sched = circuit.schedule
    words = (P + 63) // 64
    vals = np.zeros((sched.n_slots, words), dtype=np.uint64)
    if groups:
        vals[sched.input_slots] = pack_instances(np.concatenate(groups, axis=1))
    vals[ZERO_SLOT] = 0
    vals[ONE_SLOT] = ~np.uint64(0)
    for st in sched.steps:
        if st.kind == STEP_AND:
            vals[st.o] = vals[st.a] & vals[st.b]
        else:
            vals[st.o] = vals[st.a] ^ vals[st.b]
    out = unpack_instances(vals[sched.output_slots], P)
    return np.split(out, np.cumsum(circuit.output_widths)[:-1], axis=1)


def pack_instances(bits: np.ndarray) -> np.ndarray:
    """Bits ``uint8 (P, n)`` -> words ``uint64 (n, ceil(P/64))`` (bit p % 64 of word p // 64)."""
    P, n = bits.shape
    words = (P + 63) // 64
    packed = np.zeros((n, words * 8), dtype=np.uint8)
    packed[:, :(P + 7) // 8] = np.packbits(bits.T, axis=1, bitorder="little")
    return packed.view("<u8").astype(np.uint64, copy=False)


def unpack_instances(words: np.ndarray, P: int) -> np.ndarray:
    """Inverse of :func:`pack_instances`: ``uint64 (n, W)`` -> ``uint8 (P, n)``."""
    raw = np.ascontiguousarray(words).astype("<u8", copy=False).view(np.uint8)
    return np.unpackbits(raw, axis=1, count=P, bitorder="little").T.copy()
