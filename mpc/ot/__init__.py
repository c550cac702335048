"""Oblivious transfer for garbled circuits: base OT, IKNP extension, correlated OT.

Layers (bottom up): :mod:`.prg` (fixed-key AES PRG and correlation-robust
hash), :mod:`.transpose` (bit-matrix transpose), :mod:`.group` (curve
backends), :mod:`.base` (Chou-Orlandi base OT), :mod:`.iknp` (IKNP
extension), :mod:`.engine` and :mod:`.protocols` (many pairs at once; the
public API, its cost formulas and threat model are in
:mod:`mpc.ot.protocols`).
"""

from mpc.ot.group import available_groups
from mpc.ot.protocols import (
    DEFAULT_CROSSOVER,
    base_ot,
    chosen_ot,
    correlated_ot,
    ot_cost,
    random_ot,
)
from mpc.ot.transpose import transpose_bits

__all__ = [
    "DEFAULT_CROSSOVER", "available_groups", "base_ot", "chosen_ot", "correlated_ot", "ot_cost",
    "random_ot", "transpose_bits",
]
