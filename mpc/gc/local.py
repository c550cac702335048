"""Garbling and evaluation of the instances whose garbler / evaluator runs in this process.

In a run of several processes (:mod:`mpc.run.runtime`) the garbler's process
garbles and the evaluator's evaluates; a process that holds neither side
of an instance does neither. What a process does not compute is a
placeholder of the right shape: the tables and decoding bits an evaluator
receives land in it at the end of the round that carries them
(:mod:`mpc.run.routing`).

Randomness: Delta and every input zero-label are drawn for all P instances
in every process, in the order :func:`mpc.gc.garble.garble` draws them, and
an instance is garbled with its own tweak, so the garbler's tables and keys
are the same bits whichever instances are garbled here (the simulator, where
every instance is local, calls :func:`~mpc.gc.garble.garble` itself).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import ArrayLike

from mpc.gc.garble import GarbledCircuit, GarblerKeys, _input_zero, evaluate_garbled, garble

if TYPE_CHECKING:
    from mpc.arith.rng import CSPRNG
    from mpc.gc.circuit import Circuit

_U64 = np.uint64


def garble_local(circuit: Circuit, delta: np.ndarray, rng: CSPRNG, local: ArrayLike, *,
                 workers: int | None = None,
                 garble_fn: Callable[..., tuple[GarbledCircuit, GarblerKeys]] = garble,
                 ) -> tuple[GarbledCircuit, GarblerKeys]:
    """``(GarbledCircuit, GarblerKeys)`` of P instances, garbled where ``local`` (a ``(P,)`` mask).

    ``delta``: ``uint64 (P, 2)``. Tables and decoding bits of the other
    instances are zeros (to be received, or never used here); their zero-labels
    are drawn all the same (the stream stays aligned) and mean nothing.
    ``garble_fn``: the garbling function (:func:`~mpc.gc.garble.garble`'s signature).
    """
    local = np.asarray(local, dtype=bool)
    if local.all():
        return garble_fn(circuit, delta, rng=rng, workers=workers)
    P = delta.shape[0]
    sched = circuit.schedule
    zero = _input_zero(circuit, P, None, rng)
    tables = np.zeros((sched.n_and, 2, P, 2), dtype=_U64)
    decode = np.zeros((P, sched.output_slots.size), dtype=np.uint8)
    idx = np.flatnonzero(local)
    if idx.size:
        off = np.concatenate([[0], np.cumsum(circuit.input_widths)])
        preset = {g: zero[idx, off[g]:off[g + 1]] for g in range(len(circuit.input_widths))}
        part, keys = garble_fn(circuit, delta[idx], input_zero=preset, tweaks=idx.astype(_U64),
                               workers=workers)
        tables[:, :, idx] = part.tables
        decode[idx] = keys.decode_bits
    return (GarbledCircuit(circuit, tables, np.arange(P, dtype=_U64)),
            GarblerKeys(circuit, delta, zero, decode))


def evaluate_local(garbled: GarbledCircuit, labels: Sequence[np.ndarray], local: ArrayLike, *,
                   workers: int | None = None) -> np.ndarray:
    """Active output labels ``uint64 (P, n_out, 2)`` of the instances where ``local``; zeros
    elsewhere. ``labels``: one ``(P, width, 2)`` array per input group."""
    local = np.asarray(local, dtype=bool)
    if local.all():
        return evaluate_garbled(garbled, labels, workers=workers)
    P = garbled.n_instances
    out = np.zeros((P, garbled.circuit.schedule.output_slots.size, 2), dtype=_U64)
    idx = np.flatnonzero(local)
    if idx.size:
        part = GarbledCircuit(garbled.circuit, garbled.tables[:, :, idx], garbled.tweaks[idx])
        out[idx] = evaluate_garbled(part, [lab[idx] for lab in labels], workers=workers)
    return out
