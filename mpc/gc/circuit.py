"""Immutable boolean circuits: wires, gates, input/output groups per party.

A :class:`Circuit` is a list of gates over numbered wires, in topological
order (every gate reads wires set before it), with input groups and output
groups of wires, each group an integer written least significant bit first
(wire ``group[i]`` is bit ``i``). Gate types (Bristol Fashion names):

    XOR  out = a ^ b            AND  out = a & b
    INV  out = ~a               EQW  out = a (wire copy)
    EQ   out = c (a constant 0/1; stored in ``in0``)

Each input group belongs to a party for two-party computation
(``GARBLER = 0`` or ``EVALUATOR = 1``; ``None`` when not assigned yet, see
:meth:`Circuit.with_parties`). Circuits are immutable: the gate arrays are
read-only numpy arrays and every transformation returns a new circuit.

Evaluation (plaintext, :mod:`mpc.gc.plain`, or garbled, :mod:`mpc.gc.garble`)
goes through the circuit's :attr:`Circuit.schedule` (:mod:`mpc.gc.schedule`):
AND-depth layers with the free gates grouped into vectorized steps.
"""

from __future__ import annotations

import functools
import numbers
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from mpc.gc.gates import EQ, EQW, GATE_NAMES, INV, PARTY_NAMES
from mpc.gc.schedule import compile_schedule

if TYPE_CHECKING:
    from mpc.gc.schedule import Schedule


class CircuitError(ValueError):
    """A malformed circuit; ``gate`` is the index of the offending gate (or None)."""

    def __init__(self, message: str, gate: int | None = None):
        super().__init__(message)
        self.gate = gate


def _ro(a, dtype=np.int64) -> np.ndarray:
    arr = np.array(a, dtype=dtype).reshape(-1)
    arr.setflags(write=False)
    return arr


@dataclass(frozen=True, eq=False)
class Circuit:
    """A boolean circuit (see the module docstring).

    Parameters
    ----------
    n_wires : int
        Wires are ``0 .. n_wires-1``.
    ops, in0, in1, out : 1-d arrays, one entry per gate
        Gate code (``XOR``, ``AND``, ``INV``, ``EQW``, ``EQ``), input wires
        (``in1 = -1`` for one-input gates; for ``EQ``, ``in0`` is the
        constant) and output wire.
    inputs, outputs : sequences of 1-d wire arrays (LSB first)
    input_parties : sequence of ``GARBLER``/``EVALUATOR``, one per input
        group, or ``None``.
    name : str
    """

    n_wires: int
    ops: np.ndarray
    in0: np.ndarray
    in1: np.ndarray
    out: np.ndarray
    inputs: tuple
    outputs: tuple
    input_parties: tuple | None = None
    name: str = ""

    def __post_init__(self):
        if isinstance(self.n_wires, bool) or not isinstance(self.n_wires, numbers.Integral):
            raise TypeError(f"n_wires must be an integer, got {self.n_wires!r}")
        set_ = functools.partial(object.__setattr__, self)
        set_("n_wires", int(self.n_wires))
        set_("ops", _ro(self.ops, np.uint8))
        for name in ("in0", "in1", "out"):
            set_(name, _ro(getattr(self, name)))
        set_("inputs", tuple(_ro(g) for g in self.inputs))
        set_("outputs", tuple(_ro(g) for g in self.outputs))
        if self.input_parties is not None:
            set_("input_parties", _check_parties(self.input_parties, len(self.inputs)))
        check_structure(self)

    # -- sizes -----------------------------------------------------------------
    @property
    def n_gates(self) -> int:
        return int(self.ops.size)

    @functools.cached_property
    def gate_counts(self) -> dict:
        """Number of gates of each type, e.g. ``{"XOR": 313, "AND": 63}``."""
        counts = np.bincount(self.ops, minlength=len(GATE_NAMES))
        return {GATE_NAMES[i]: int(c) for i, c in enumerate(counts) if c}

    @property
    def n_and(self) -> int:
        """AND gates in the circuit as written (the schedule drops dead ones)."""
        return self.gate_counts.get("AND", 0)

    @property
    def input_widths(self) -> tuple:
        return tuple(int(g.size) for g in self.inputs)

    @property
    def output_widths(self) -> tuple:
        return tuple(int(g.size) for g in self.outputs)

    @property
    def n_input_bits(self) -> int:
        return sum(self.input_widths)

    @property
    def n_output_bits(self) -> int:
        return sum(self.output_widths)

    def party_groups(self, party: int) -> tuple:
        """Indices of the input groups that belong to ``party``."""
        if self.input_parties is None:
            raise ValueError(
                f"circuit {self.name!r} has no input parties: call with_parties((...)) first")
        return tuple(i for i, p in enumerate(self.input_parties) if p == party)

    @functools.cached_property
    def schedule(self) -> Schedule:
        """The compiled evaluation order (:class:`mpc.gc.schedule.Schedule`), cached."""
        return compile_schedule(self)

    # -- transformations --------------------------------------------------------
    def with_parties(self, input_parties: Iterable[int]) -> Circuit:
        """The same circuit with input group ``i`` owned by ``input_parties[i]``."""
        return Circuit(self.n_wires, self.ops, self.in0, self.in1, self.out, self.inputs,
                       self.outputs, tuple(input_parties), self.name)

    def renamed(self, name: str) -> Circuit:
        return Circuit(self.n_wires, self.ops, self.in0, self.in1, self.out, self.inputs,
                       self.outputs, self.input_parties, name)

    def __repr__(self) -> str:
        counts = ", ".join(f"{k} {v}" for k, v in self.gate_counts.items())
        return (f"Circuit({self.name!r}, wires={self.n_wires}, gates={self.n_gates} [{counts}], "
                f"inputs={list(self.input_widths)}, outputs={list(self.output_widths)}, "
                f"parties={self.input_parties})")


def _check_parties(parties, n_groups: int) -> tuple:
    parties = tuple(parties)
    if len(parties) != n_groups:
        raise ValueError(
            f"input_parties must give one party per input group ({n_groups}), got {len(parties)}")
    for p in parties:
        if isinstance(p, bool) or p not in PARTY_NAMES:
            raise ValueError(
                f"input_parties entries must be GARBLER (0) or EVALUATOR (1), got {p!r}")
    return tuple(int(p) for p in parties)


def check_structure(c: Circuit) -> None:
    """Validate a circuit; raise :class:`CircuitError` naming the first bad gate.

    Checks: gate codes and arity, wires in range, every wire set once (as an
    input or by one gate), every gate input set by an input or an earlier
    gate (a wire set later or by the gate itself is reported as a cycle or a
    use before set), outputs set. Vectorized over gates.
    """
    n, g = c.n_wires, c.ops.size
    if n < 0:
        raise CircuitError(f"n_wires must be >= 0, got {n}")
    if not (c.in0.size == c.in1.size == c.out.size == g):
        raise CircuitError("ops, in0, in1 and out must have one entry per gate")
    bad = np.flatnonzero(c.ops >= len(GATE_NAMES))
    if bad.size:
        raise CircuitError(f"gate {bad[0]}: unknown gate code {c.ops[bad[0]]}", int(bad[0]))
    unary = (c.ops == INV) | (c.ops == EQW) | (c.ops == EQ)
    bad = np.flatnonzero(unary != (c.in1 < 0))
    if bad.size:
        i = int(bad[0])
        raise CircuitError(f"gate {i}: {GATE_NAMES[c.ops[i]]} has the wrong number of inputs", i)
    is_eq = c.ops == EQ
    bad = np.flatnonzero(is_eq & ((c.in0 < 0) | (c.in0 > 1)))
    if bad.size:
        i = int(bad[0])
        raise CircuitError(f"gate {i}: EQ constant must be 0 or 1, got {c.in0[i]}", i)
    for arr, what, check in ((c.in0, "input", ~is_eq), (c.in1, "input", ~unary),
                             (c.out, "output", True)):
        bad = np.flatnonzero(check & ((arr < 0) | (arr >= n)))
        if bad.size:
            i = int(bad[0])
            raise CircuitError(f"gate {i}: {what} wire {arr[i]} out of range 0..{n - 1}", i)
    in_wires = np.concatenate(c.inputs) if c.inputs else np.zeros(0, np.int64)
    if in_wires.size and (in_wires.min() < 0 or in_wires.max() >= n):
        raise CircuitError(f"input wires must be in 0..{n - 1}")
    _check_single_assignment(c, in_wires, n, g)
    _check_order(c, in_wires, n, g, is_eq)
    out_wires = np.concatenate(c.outputs) if c.outputs else np.zeros(0, np.int64)
    if out_wires.size and (out_wires.min() < 0 or out_wires.max() >= n):
        raise CircuitError(f"output wires must be in 0..{n - 1}")
    setter = _setter(c, in_wires, n)
    unset: np.ndarray | list[int] = \
        np.flatnonzero(setter[out_wires] == _NEVER) if out_wires.size else []
    if len(unset):
        raise CircuitError(f"output wire {out_wires[unset[0]]} is never set")


_NEVER = np.iinfo(np.int64).max
_INPUT = -1


def _setter(c: Circuit, in_wires: np.ndarray, n: int) -> np.ndarray:
    """For each wire: the index of the gate that sets it, -1 for inputs, _NEVER if unset."""
    setter = np.full(n, _NEVER, dtype=np.int64)
    setter[c.out] = np.arange(c.out.size)
    setter[in_wires] = _INPUT
    return setter


def _check_single_assignment(c, in_wires, n, g):
    counts = np.bincount(in_wires, minlength=n)
    if counts.size and counts.max() > 1:
        w = int(np.argmax(counts > 1))
        raise CircuitError(f"wire {w} appears twice among the circuit inputs")
    both = np.concatenate([in_wires, c.out])
    counts = np.bincount(both, minlength=n) if both.size else np.zeros(n, np.int64)
    dup: np.ndarray | list[int] = np.flatnonzero(counts[c.out] > 1) if g else []
    if len(dup):
        # the second assignment of the wire is the culprit
        w = c.out[dup[0]]
        gates = np.flatnonzero(c.out == w)
        i = int(gates[1]) if gates.size > 1 else int(gates[0])
        what = "an input wire" if counts.size and np.isin(w, in_wires) else "already set"
        raise CircuitError(f"gate {i}: output wire {w} is {what} (duplicate assignment)", i)


def _check_order(c, in_wires, n, g, is_eq):
    if not g:
        return
    setter = _setter(c, in_wires, n)
    idx = np.arange(g)
    srcs = [np.where(valid, setter[np.where(valid, arr, 0)], _INPUT)
            for arr, valid in ((c.in0, ~is_eq), (c.in1, c.in1 >= 0))]
    bad = np.flatnonzero((srcs[0] >= idx) | (srcs[1] >= idx))
    if not bad.size:
        return
    i = int(bad[0])
    j = 0 if srcs[0][i] >= i else 1
    w, s = int((c.in0, c.in1)[j][i]), int(srcs[j][i])
    if s == _NEVER:
        raise CircuitError(f"gate {i}: wire {w} is used but never set", i)
    if s == i or _reaches(c, setter, s, i):
        raise CircuitError(f"gate {i}: cycle: wire {w} depends on the output of gate {i} itself", i)
    raise CircuitError(f"gate {i}: wire {w} is used before it is set (by gate {s})", i)


def _reaches(c, setter, start: int, target: int) -> bool:
    """Does gate ``start`` (transitively) read the output of gate ``target``? (error path)."""
    seen, stack = set(), [start]
    while stack:
        gi = stack.pop()
        if gi == target:
            return True
        if gi in seen or gi < 0 or gi == _NEVER:
            continue
        seen.add(gi)
        for w in (c.in0[gi], c.in1[gi]):
            if w >= 0 and c.ops[gi] != EQ:
                stack.append(int(setter[w]))
    return False
