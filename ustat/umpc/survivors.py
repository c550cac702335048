"""The survivors' release of a U-MPC run, in any executor (:mod:`ustat.umpc.dropouts`).

:func:`run_with_dropouts` is the computation the protocol defines after
parties vanish: the full run's public E, the surviving design E_S relabelled
onto the survivors S, the noise drawn among S at E_S's sensitivity. Cost:
O(n + k |E|) to find E_S, then a run on |S| parties and m_S edges. Threat
model: the protocol's; vanished parties count as corrupted.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import ArrayLike

from .dropouts import DropoutBoundError, Dropouts, check_bound, surviving_design
from .protocol import UMPCResult, run_umpc
from .setup import public_hypergraph

if TYPE_CHECKING:
    from ..executors import Executor
    from ..sampling import Hypergraph
    from ..specs.umpc import UMPCSpec

__all__ = ["run_with_dropouts"]


def run_with_dropouts(records: ArrayLike, spec: UMPCSpec, dropouts: Dropouts, *,
                      executor: Executor | None = None, max_dropouts: int | None = None,
                      hypergraph: Hypergraph | None = None,
                      evaluate: bool | str = False) -> UMPCResult:
    """The release of a run of ``spec`` on ``records`` ((n, d)) whose parties
    ``dropouts.lost`` vanished at ``dropouts.step``.

    ``hypergraph``: the full run's public E (default: drawn from the spec's
    stream as the full run draws it). Returns the survivors' release (a
    :class:`~ustat.umpc.protocol.UMPCResult` for the |S| survivors' records and
    E_S, noise at the surviving design's sensitivity, sampled among S) with
    ``dropouts = {"parties_lost", "edges_lost", "step"}``. With no party
    lost it is :func:`run_umpc`'s release. :class:`DropoutBoundError` past
    the bound (``max_dropouts``, default :func:`default_max_dropouts`).
    Cost and threat model: the module docstring.
    """
    X = np.asarray(records)
    n = X.shape[0]
    check_bound(len(dropouts.lost), n, max_dropouts)
    if hypergraph is None:
        hypergraph = public_hypergraph(spec, n)
    H, survivors, edges_lost = surviving_design(hypergraph, dropouts.lost)
    if H.edges.shape[0] == 0:
        raise DropoutBoundError("no edge of the design survives: no release")
    res = run_umpc(X[survivors], spec, executor, hypergraph=H, evaluate=evaluate)
    res.dropouts = {"parties_lost": len(dropouts.lost), "edges_lost": edges_lost,
                    "step": dropouts.step}
    return res
