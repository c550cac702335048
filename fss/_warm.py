"""The FSS gates' warm-up (:func:`fss.warm_up`; :meth:`fss.FSSGates.warm_up`).

Calls every kernel the gates use (key generation as arrays and straight
into bytes, parsing, block and few-point evaluation, for DCF and both DPF
groups) once on a few instances of throw-away data, so that numba loads the
compiled ones from its cache now rather than inside a run's first gate
(with the numpy kernels this costs milliseconds and loads nothing). Nothing
here is secret: the keys are made from this process's own fresh stream and
discarded.
"""

from __future__ import annotations

import numpy as np

from mpc.arith.rng import CSPRNG

from . import _keyio, tree
from .keys import DCFParams, DPFParams, TreeParams


def warm() -> None:
    """Run every kernel once on throw-away keys (see the module docstring)."""
    rng = CSPRNG()
    n = 8
    x = np.arange(2 * tree.SMALL + 1, dtype=np.uint64)
    families: tuple[TreeParams, ...] = (DCFParams(n, 40), DPFParams(n, 40, "arith"),
                                        DPFParams(n, 1, "xor"))
    for params in families:
        k0, _ = tree.gen(params, x, 1, rng)
        b0, _ = tree.gen_bytes(params, x, 1, rng)
        k = _keyio.from_bytes(b0, type(params))
        tree.eval(params, 0, k0, x)
        tree.eval(params, 0, k, x)
        small, _ = tree.gen(params, x[:2], 1, rng)
        tree.eval(params, 0, small, x[:2])       # the few-points path
