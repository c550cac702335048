"""FSS gates as the comparison engine of secure values (:mod:`mpc.values`) for two holders.

Importing :mod:`fss` registers them for the ``"dealer"`` backend, so that
``x < y`` on a :class:`mpc.values.SecureArray` held by two parties costs one
online round and l (or the operands' narrower d) bits per party, instead of
the p-party circuit's eight rounds. Threat model: :mod:`fss.gates` (trusted
dealer, semi-honest holders).
"""

from __future__ import annotations

import numpy as np

from mpc.values import register_comparison

from . import gates


def _fss_comparison(session, z, holders, op, in_bits):
    zero = np.zeros_like(z)
    if op == "ltz":
        return gates.less_than(session, z, zero, holders, in_bits=in_bits,
                               workers=session.workers)
    return gates.equal(session, z, zero, holders, workers=session.workers)


register_comparison("dealer", 2, _fss_comparison)
