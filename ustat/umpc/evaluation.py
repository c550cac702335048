"""Evaluation mode of a U-MPC run: the exact statistics next to the release (tests only).

It reads every record in the clear, so it is for tests and experiments,
never part of a private release. Cost: O(|E| + C(n, k)) kernel evaluations
(the complete statistic only up to :func:`ustat.kernels.complete_u`'s limit).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from .. import kernels as kernel_registry
from .inputs import decode_records
from .precision import input_fp, reference_records

if TYPE_CHECKING:
    from .setup import Run


def evaluate_run(run: Run, aux_values: np.ndarray, evaluate: bool | str,
                 chunk_size: int) -> dict:
    """Exact statistics on the raw and on the encoded records (reads them in the clear).

    ``exact_raw`` / ``exact_encoded``: the complete statistic (None if
    ``evaluate == "incomplete"`` or C(n, k) is too large) on the records as
    given (:func:`ustat.umpc.precision.reference_records`) and as encoded;
    ``encoding_error`` their difference; ``*_incomplete``: the same on E.
    """
    kern = run.kern
    Xq = decode_records(run.session, run.enc, kern, input_fp(run.precision))
    Xr = reference_records(run.X_raw, run.bounds, kern)
    exact_aux = list(aux_values.sum(axis=0)) if aux_values.shape[1] else []
    out: dict[str, Any] = {"aux_exact": exact_aux}
    for label, X in (("encoded", Xq), ("raw", Xr)):
        vals = np.concatenate([kern.plain(X[run.E[i:i + chunk_size]])
                               for i in range(0, run.m, chunk_size)])
        u_inc = float(vals.mean())
        u_com = None if evaluate == "incomplete" else kernel_registry.complete_u(kern, X)
        out[label] = (u_inc, u_com, kern.release(u_inc, exact_aux, run.n),
                      None if u_com is None else kern.release(u_com, exact_aux, run.n))
    (u_inc, u_com, s_inc, s_com), raw = out.pop("encoded"), out.pop("raw")
    out.update({
        "u_incomplete": u_inc, "u_complete": u_com,
        "statistic_incomplete": s_inc, "statistic_complete": s_com,
        "exact_encoded": s_com, "exact_raw": raw[3],
        "encoding_error": None if s_com is None else s_com - raw[3],
        "exact_encoded_incomplete": s_inc, "exact_raw_incomplete": raw[2],
        "encoding_error_incomplete": s_inc - raw[2],
        "u_raw_incomplete": raw[0], "u_raw_complete": raw[1],
    })
    return out
