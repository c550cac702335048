"""The FSS gates' warm-up (:func:`fss.warm_up`; :meth:`fss.FSSGates.warm_up`).

Calls every compiled kernel the gates use (key generation as arrays and
straight into bytes, parsing, block and scalar evaluation, for DCF and
both DPF groups) once on a few instances of throw-away data, so that numba
loads them from its cache now rather than inside a run's first gate.
Nothing here is secret: the keys are made from this process's own fresh
stream and discarded.
"""

from __future__ import annotations

import numpy as np

from mpc.arith.rng import CSPRNG

from . import _fast, dcf, dpf


def warm() -> None:
    if not _fast.ENABLED:           # the numpy path: nothing to load
        return
    rng = CSPRNG()
    n = 8
    x = np.arange(2 * dcf.SMALL + 1, dtype=np.uint64)
    for mod, params in ((dcf, dcf.DCFParams(n, 40)), (dpf, dpf.DPFParams(n, 40, "arith")),
                        (dpf, dpf.DPFParams(n, 1, "xor"))):
        k0, _ = mod.gen(params, x, 1, rng)
        b0, _ = mod.gen_bytes(params, x, 1, rng)
        k = mod.from_bytes(b0)
        mod.eval(params, 0, k0, x)
        mod.eval(params, 0, k, x)
        small, _ = mod.gen(params, x[:2], 1, rng)
        mod.eval(params, 0, small, x[:2])       # the scalar path of a few points
