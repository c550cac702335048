"""FSS gates as a comparison provider of secure values (:mod:`mpc.values`) for two holders.

``Session(..., comparisons=(FSSGates(), CircuitComparisons()))`` makes
``x < y`` on a :class:`mpc.values.SecureArray` held by two parties cost one
online round and l (or the operands' narrower d) bits per party, instead of
the p-party circuit's eight rounds (which still serves more holders).
Threat model: :mod:`fss.gates` (trusted dealer, semi-honest holders).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from mpc.protocols.providers import Comparisons

from . import gates
from ._warm import warm


class FSSGates(Comparisons):
    """Masked-input FSS gates (:mod:`fss.gates`): two holders, one round, a trusted dealer's
    DCF/DPF keys. :meth:`warm_up` loads the compiled kernels (:func:`fss.warm_up`)."""

    name = "fss"
    trust = "trusted dealer for FSS keys and masks (sees no input); semi-honest holders"

    def serves(self, holders: int) -> bool:
        return holders == 2

    def compare(self, session: Any, z: np.ndarray, holders: Any, op: str,
                in_bits: int | None) -> np.ndarray:
        zero = np.zeros_like(z)
        if op == "ltz":
            return gates.less_than(session, z, zero, holders, in_bits=in_bits,
                                   workers=session.workers)
        return gates.equal(session, z, zero, holders, workers=session.workers)

    def warm_up(self) -> None:
        warm()
