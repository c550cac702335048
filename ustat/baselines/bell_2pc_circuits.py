"""Kernel circuits of Bell et al.'s 2PC protocol: f(x_i, x_j) + eta on binned records.

Records enter as the cells of the baselines' bin grid
(:class:`ustat.baselines._common.Grid`: bin index of each numeric column, code
of each categorical column), each column ``ceil(log2 size)`` bits. The kernel
is computed on the bins' representatives exactly, as an integer ``v`` with
``f = v / scale`` and ``v`` in ``[lo, hi]`` (its range width ``hi - lo`` is the
sensitivity Delta of one pair's value in integer units):

=========== =============================================== ======= ============
kernel      integer value v                                 scale   [lo, hi]
=========== =============================================== ======= ============
kendall     sign(a0 - b0) sign(a1 - b1)                     1       [-1, 1]
gini        abs(a0 - b0) (bin units; midpoints differ by that / t)  t    [0, t - 1]
auc         (yd^2 + sign(s_a - s_b) yd), yd = y_a - y_b      2       [0, 2]
duplicate   [a0 == b0] (also renyi2)                        1       [0, 1]
rand        [a0 == b0] == [a1 == b1]                        1       [0, 1]
=========== =============================================== ======= ============

Other kernels (degree 3, user kernels without a circuit here) are refused
with a ValueError. The full circuit (:func:`pair_circuit`): garbler inputs
(its record, its R + 1 coins), evaluator inputs (the same), one signed
output ``v + eta`` of ``width`` bits; without noise (eps = inf) the coins
are absent and the output is ``v``.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import TYPE_CHECKING

from . import _common as C  # noqa: N812 - the codebase's short capital module alias
from .bell_2pc_noise import noise_word

if TYPE_CHECKING:
    from mpc.gc import CircuitBuilder, Word
    from mpc.gc.circuit import Circuit

    from ..kernels import Kernel

SUPPORTED = ("kendall", "gini", "auc", "duplicate", "renyi2", "rand")


@dataclass(frozen=True)
class KernelSpec:
    """How one kernel is computed in the circuit."""

    name: str
    col_bits: tuple         # bits per column (cells of the grid)
    scale: int              # f = v / scale
    lo: int
    hi: int

    @property
    def delta(self) -> int:
        return self.hi - self.lo

    @property
    def record_bits(self) -> int:
        return sum(self.col_bits)


def kernel_spec(kern: Kernel, grid: C.Grid) -> KernelSpec:
    """The integer form of ``kern`` on ``grid``; ValueError if it has no circuit here."""
    if kern.name not in SUPPORTED or kern.degree != 2:
        raise ValueError(f"protocol 'bell-2pc' has kernel circuits for {', '.join(SUPPORTED)}; "
                         f"kernel {kern.name!r} has none (use 'bell-ldp' or 'umpc')")
    bits = tuple(C.index_bits(s) for s in grid.sizes)
    t = grid.bins
    table = {"kendall": (1, -1, 1), "gini": (t, 0, t - 1), "auc": (2, 0, 2),
             "duplicate": (1, 0, 1), "renyi2": (1, 0, 1), "rand": (1, 0, 1)}
    scale, lo, hi = table[kern.name]
    return KernelSpec(kern.name, bits, scale, lo, hi)


def _cols(b, word, col_bits):
    out, at = [], 0
    for w in col_bits:
        out.append(word[at:at + w])
        at += w
    return out


def _sign_diff(b, a, c):
    """sign(a - c) of unsigned words as a 2-bit signed word."""
    w = a.width + 1
    return b.sign(b.sub(b.zext(a, w), b.zext(c, w)))


def kernel_value(b: CircuitBuilder, spec: KernelSpec, rec_g: Word, rec_e: Word) -> Word:
    """The signed integer kernel value v (its own width) from the two records."""
    from mpc.gc import Word
    from mpc.gc.builder import ZERO

    ga, ea = _cols(b, rec_g, spec.col_bits), _cols(b, rec_e, spec.col_bits)
    name = spec.name
    if name == "kendall":
        s0, s1 = _sign_diff(b, ga[0], ea[0]), _sign_diff(b, ga[1], ea[1])
        nz = b.and_bit(s0.wires[0], s1.wires[0])
        neg = b.and_bit(nz, b.xor_bit(s0.wires[1], s1.wires[1]))
        return Word(b, [nz, neg])                          # 01 = 1, 11 = -1, 00 = 0
    if name == "gini":
        w = ga[0].width + 1
        return b.abs(b.sub(b.zext(ga[0], w), b.zext(ea[0], w))).zext(w + 1)
    if name == "auc":
        g = _sign_diff(b, ga[0], ea[0])                     # 2-bit signed
        la, lb = ga[1].wires[0], ea[1].wires[0]
        gneg = b.neg(g.sext(3))
        signed_g = b.mux(Word(b, [la]), g.sext(3), gneg)    # y_a = 1: 1 + g; y_a = 0: 1 - g
        val = b.add(signed_g, b.const(1, 3))
        return b.band(val, Word(b, [b.xor_bit(la, lb)] * 3))
    if name in ("duplicate", "renyi2"):
        return Word(b, [b.eq(ga[0], ea[0]).wires[0], ZERO])
    e0, e1 = b.eq(ga[0], ea[0]).wires[0], b.eq(ga[1], ea[1]).wires[0]
    return Word(b, [b.not_bit(b.xor_bit(e0, e1)), ZERO])   # rand


def output_width(spec: KernelSpec, K: int) -> int:
    """Signed width holding every v + eta, |eta| <= K."""
    m = max(abs(spec.lo - K), abs(spec.hi + K))
    return m.bit_length() + 1


@functools.lru_cache(maxsize=16)
def pair_circuit(spec: KernelSpec, table: tuple | None, noise_bits: int) -> Circuit:
    """The circuit of one pair: inputs (rec_g, [coins_g]) GARBLER, (rec_e, [coins_e]) EVALUATOR."""
    from mpc.gc import EVALUATOR, GARBLER, CircuitBuilder

    b = CircuitBuilder(f"bell-2pc-{spec.name}")
    rec_g = b.input(spec.record_bits, party=GARBLER)
    coins_g = b.input(noise_bits + 1, party=GARBLER) if table else None
    rec_e = b.input(spec.record_bits, party=EVALUATOR)
    coins_e = b.input(noise_bits + 1, party=EVALUATOR) if table else None
    v = kernel_value(b, spec, rec_g, rec_e)
    K = len(table) if table else 0
    w = output_width(spec, K)
    v = v[:w] if v.width >= w else b.sext(v, w)      # v in [lo, hi] fits in w signed bits
    if table:
        assert coins_g is not None and coins_e is not None     # inputs of a table's coins
        v = b.add(v, noise_word(b, coins_g, coins_e, table, w))
    b.output(v)
    return b.build()
