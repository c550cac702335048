"""Compile a circuit into vectorized steps over a small set of label slots.

The evaluators (plaintext, garbling, garbled evaluation) all run the same
:class:`Schedule`: a list of *steps*, each a batch of gates of one kind
evaluated with one numpy expression over all its gates and all instances.

Compilation (once per circuit, cached on :attr:`Circuit.schedule`):

1. **Canonical gates.** ``EQW`` and ``EQ`` become aliases (the output wire
   shares the input's, or the constant's, slot); ``INV a`` becomes
   ``XOR(a, ONE)`` where the constant wire ``ONE`` carries the label
   ``Delta`` on the garbler's side and ``0`` on the evaluator's (free-XOR
   makes NOT free). Only XOR and AND remain.
2. **Layers.** Each gate gets its AND depth ``d`` (ANDs on the longest path
   ending at it) and, for a free gate, its XOR sublevel among the free gates
   of the same depth. The order is: free gates of depth 0 (by sublevel),
   AND gates of depth 1, free gates of depth 1, ... so every AND layer is one
   step (one AES call per layer when garbling) and free gates between two
   AND layers run in as many steps as their XOR depth.
3. **Dead gates** (not reaching an output) are dropped.
4. **Slots.** Wires are mapped to reusable storage slots (a wire's slot is
   freed after the last step that reads it), so a batch of P instances needs
   ``n_slots * P`` labels, not ``n_wires * P`` (aes_128: see
   ``Schedule.n_slots``). Slot 0 holds the constant ZERO, slot 1 ONE.

Computing depths walks the gate list once in Python (O(gates), compile time
only); evaluation loops over steps, never over gates or instances.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from mpc.gc.gates import AND, EQ, EQW, INV, XOR

if TYPE_CHECKING:
    from mpc.gc.circuit import Circuit

STEP_XOR, STEP_AND = 0, 1
ZERO_SLOT, ONE_SLOT = 0, 1


@dataclass(frozen=True)
class Step:
    """One vectorized step: ``slot[o] = slot[a] (op) slot[b]`` for all its gates.

    ``t0``: for an AND step, the index of its first AND gate in table order
    (gate ``j`` of the step uses table row ``t0 + j`` and tweak ``t0 + j``).
    ``ab``: ``a`` then ``b`` (both operands gathered by one call).
    """

    kind: int
    a: np.ndarray
    b: np.ndarray
    o: np.ndarray
    t0: int = 0

    @property
    def ab(self) -> np.ndarray:
        ab = self.__dict__.get("_ab")
        if ab is None:
            ab = np.concatenate([self.a, self.b])
            object.__setattr__(self, "_ab", ab)
        return ab

    @property
    def size(self) -> int:
        return int(self.o.size)


@dataclass(frozen=True)
class Schedule:
    """A compiled circuit (see the module docstring).

    ``input_slots``/``output_slots``: slot of every input/output bit, in the
    order of the circuit's groups concatenated. ``n_and``: AND gates kept
    (= garbled tables); ``and_depth``: number of AND layers.
    """

    n_slots: int
    input_slots: np.ndarray
    output_slots: np.ndarray
    steps: tuple
    n_and: int
    n_xor: int
    and_depth: int

    @property
    def n_steps(self) -> int:
        return len(self.steps)


def compile_schedule(c: Circuit) -> Schedule:
    """Compile ``c`` (see the module docstring)."""
    n = c.n_wires
    zero, one = n, n + 1
    rep = _aliases(c, zero, one)
    keep = (c.ops == XOR) | (c.ops == AND) | (c.ops == INV)
    ops = c.ops[keep]
    a = rep[c.in0[keep]]
    b = np.where(ops == INV, one, rep[np.maximum(c.in1[keep], 0)])
    o = c.out[keep]
    is_and = ops == AND
    phase, sub = _layers(is_and, a, b, o, n + 2)
    in_wires = rep[np.concatenate(c.inputs)] if c.inputs else np.zeros(0, np.int64)
    out_wires = rep[np.concatenate(c.outputs)] if c.outputs else np.zeros(0, np.int64)
    order = np.lexsort((sub, phase))
    bounds = np.flatnonzero(np.diff(np.stack([phase[order], sub[order]]), axis=1).any(axis=0)) + 1
    groups = np.split(order, bounds) if order.size else []
    groups = _drop_dead(groups, a, b, o, out_wires, n + 2)
    wsteps = [(STEP_AND if is_and[g[0]] else STEP_XOR, a[g], b[g], o[g]) for g in groups]
    n_xor = sum(w[3].size for w in wsteps if w[0] == STEP_XOR)
    return _allocate(wsteps, in_wires, out_wires, n + 2, zero, one, n_xor)


def _aliases(c: Circuit, zero: int, one: int) -> np.ndarray:
    """Representative wire of every wire (EQW copies and EQ constants resolved)."""
    rep = np.arange(c.n_wires + 2, dtype=np.int64)
    eq = np.flatnonzero(c.ops == EQ)
    rep[c.out[eq]] = np.where(c.in0[eq] == 1, one, zero)
    eqw = np.flatnonzero(c.ops == EQW)
    src, dst = c.in0[eqw], c.out[eqw]
    while eqw.size:  # chains of copies: a few passes
        new = rep[src]
        if np.array_equal(rep[dst], new):
            break
        rep[dst] = new
    return rep


def _layers(is_and, a, b, o, n_wires):
    """Sort keys ``(phase, sub)`` per gate: the layering with fewer steps.

    AND-depth layering: phase ``2d - 1`` for an AND of depth ``d``, ``2d`` for
    a free gate of depth ``d``, ``sub`` its XOR sublevel (one AES call per AND
    layer). Plain layering: phase ``2 * level + is_and`` with the gate's full
    depth ``level`` (fewer steps when long XOR chains sit beside the critical
    path, e.g. multipliers). One pass over the gates in topological order.
    """
    d = [0] * n_wires
    s = [-1] * n_wires
    lv = [0] * n_wires
    m = is_and.size
    gd, gs, gl = [0] * m, [0] * m, [0] * m
    for i, (x, y, z, land) in enumerate(zip(a.tolist(), b.tolist(), o.tolist(),
                                            is_and.tolist())):
        dx, dy = d[x], d[y]
        lz = (lv[x] if lv[x] > lv[y] else lv[y]) + 1
        lv[z] = gl[i] = lz
        if land:
            dz = (dx if dx > dy else dy) + 1
            d[z], s[z], gd[i], gs[i] = dz, -1, dz, 0
        else:
            dz = dx if dx > dy else dy
            sx = s[x] if dx == dz else -1
            sy = s[y] if dy == dz else -1
            sz = (sx if sx > sy else sy) + 1
            d[z], s[z], gd[i], gs[i] = dz, sz, dz, sz
    depth, sub, level = (np.array(v, dtype=np.int64) for v in (gd, gs, gl))
    phase_a = np.where(is_and, 2 * depth - 1, 2 * depth)
    phase_b = 2 * level + is_and
    steps_a = np.unique(np.stack([phase_a, sub]), axis=1).shape[1] if m else 0
    steps_b = np.unique(phase_b).size
    if steps_b < steps_a:
        return phase_b, np.zeros(m, dtype=np.int64)
    return phase_a, sub


def _drop_dead(groups, a, b, o, out_wires, n_wires):
    """Remove gates whose output reaches no circuit output (reverse pass over steps)."""
    needed = np.zeros(n_wires, dtype=bool)
    needed[out_wires] = True
    kept = []
    for g in reversed(groups):
        g = g[needed[o[g]]]
        if g.size:
            needed[a[g]] = True
            needed[b[g]] = True
            kept.append(g)
    kept.reverse()
    return kept


def _allocate(wsteps, in_wires, out_wires, n_wires, zero, one, n_xor):
    """Map wires to reusable slots; build the steps."""
    n_steps = len(wsteps)
    last = np.full(n_wires, -1, dtype=np.int64)
    for t, (_, a, b, _) in enumerate(wsteps):
        last[a] = t              # steps are in increasing t: the last write wins
        last[b] = t
    last[out_wires] = n_steps
    last[[zero, one]] = n_steps
    # wires freed at step t (read for the last time there, or never read)
    free_at = np.argsort(last, kind="stable")
    free_bounds = np.searchsorted(last[free_at], np.arange(n_steps + 1), side="right")
    slot = np.full(n_wires, -1, dtype=np.int64)
    slot[zero], slot[one] = ZERO_SLOT, ONE_SLOT
    uniq_in = np.unique(in_wires[(in_wires != zero) & (in_wires != one)])
    slot[uniq_in] = 2 + np.arange(uniq_in.size)
    n_slots = 2 + uniq_in.size
    pool = np.zeros(0, dtype=np.int64)
    steps, t_and, start = [], 0, 0
    for t, (kind, a, b, o) in enumerate(wsteps):
        dying = free_at[start:free_bounds[t]]
        start = free_bounds[t]
        dying = dying[slot[dying] >= 2]
        pool = np.concatenate([pool, slot[dying]])
        k = o.size
        take = min(k, pool.size)
        new = np.empty(k, dtype=np.int64)
        new[:take] = pool[pool.size - take:]
        pool = pool[:pool.size - take]
        new[take:] = n_slots + np.arange(k - take)
        n_slots += k - take
        aa, bb = slot[a], slot[b]
        slot[o] = new
        steps.append(Step(kind, aa, bb, new, t_and if kind == STEP_AND else 0))
        if kind == STEP_AND:
            t_and += k
    depth = sum(1 for s in steps if s.kind == STEP_AND)
    return Schedule(int(n_slots), slot[in_wires], slot[out_wires], tuple(steps), t_and, n_xor,
                    depth)
