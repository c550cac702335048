"""The result every baseline protocol returns: the release, its measured costs and its trust model.

Mirrors :class:`ustat.umpc.UMPCResult` where a field makes sense for every
protocol, and adds ``protocol``, ``params`` (every parameter the run used,
defaults resolved), ``dp_model`` (``"local"``, ``"shuffle"``, ``"central"``,
``"label-local"``, ``"2pc-cdp"``: computational DP of pairwise 2PC), ``trust`` (a plain
sentence: who learns what, who must be trusted, which DP model) and ``spec`` (the
:class:`ustat.specs.BaselineSpec` it ran, as ``to_dict`` writes it). Every cost comes from
the session's network.

A runner assembles its result with :func:`build_result` from the session, the spec and
what it computed (:class:`Released`).
"""

from __future__ import annotations

import math
import time
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from mpc.session import Session

    from ..kernels import Kernel
    from .spec import BaselineSpec


@dataclass
class ProtocolResult:
    """What one run of a baseline protocol releases and what it cost."""

    protocol: str
    kernel: str
    statistic: str
    estimate: float                 # the released statistic (after post-processing)
    u_hat: float | None          # the estimated U-statistic (None if not estimated on its own)
    epsilon: float
    delta: float
    n: int
    params: dict
    dp_model: str
    trust: str
    online_bits: int
    offline_bits: int
    rounds: int
    max_party_bits: int
    mean_party_bits: float
    seconds: float
    insecure_seed: bool
    communication: dict
    theory: dict = field(default_factory=dict)      # the paper's formulas at these parameters
    evaluation: dict | None = None
    notes: list = field(default_factory=list)
    offline_rounds: int = 0         # rounds of the input-independent phase (``rounds`` is online)
    released: bool = True           # False in a process of a run where the aggregator is not
    processes: int = 1              # processes the run's participants were spread over
    process_costs: list | None = None    # per process: rank, holds, wire counts, seconds
    spec: dict = field(default_factory=dict)    # the BaselineSpec it ran (BaselineSpec.from_dict)
    costs: object = field(default=None, repr=False)     # mpc.comm.costs.Costs of the run

    def to_dict(self) -> dict:
        """Every field as JSON values (``costs`` is ``communication`` with wall times: left out);
        the processes fields only for a run across processes."""
        costs, self.costs = self.costs, None
        try:
            out = asdict(self)
        finally:
            self.costs = costs
        out.pop("costs")
        if self.processes == 1:
            for key in ("released", "processes", "process_costs"):
                out.pop(key)
        return _jsonable(out)


def _jsonable(obj):
    """Floats stay floats (inf becomes the string "inf"), numpy scalars become Python numbers."""
    if isinstance(obj, dict):
        return {str(k): _jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_jsonable(v) for v in obj]
    if hasattr(obj, "item") and callable(obj.item):
        obj = obj.item()
    if isinstance(obj, float) and not math.isfinite(obj):
        return "inf" if obj > 0 else ("-inf" if obj < 0 else "nan")
    return obj


@dataclass
class Released:
    """What a runner computed: the release, its parameters and what it reports beside it
    (``delta``: the release's, 0 for pure epsilon-DP)."""

    estimate: float
    u_hat: float | None
    params: dict
    theory: dict = field(default_factory=dict)
    evaluation: dict | None = None
    notes: list = field(default_factory=list)
    delta: float = 0.0


def build_result(session: Session, spec: BaselineSpec, kern: Kernel, out: Released, *, n: int,
                 dp_model: str, trust: str, t_start: float) -> ProtocolResult:
    """A :class:`ProtocolResult` of protocol ``spec.protocol`` from the session's
    communication report and what the runner computed (``out``).

    In a run across processes only the aggregator's process releases: elsewhere the estimate
    and u_hat are NaN (what that process computed from the rows it holds means nothing).
    """
    rep = session.net.report()
    notes = list(out.notes)
    released = bool(session.is_local("aggregator"))
    estimate, u_hat = (out.estimate, out.u_hat) if released else (math.nan, math.nan)
    epsilon = spec.privacy.epsilon
    if not math.isfinite(epsilon):
        notes.append("epsilon = inf: no noise was added; the release is NOT differentially private")
    if session.insecure:
        notes.append("seeded run: randomness is reproducible and NOT secure")
    return ProtocolResult(
        protocol=spec.protocol, kernel=kern.name, statistic=kern.statistic,
        estimate=float(estimate), u_hat=None if u_hat is None else float(u_hat),
        epsilon=float(epsilon), delta=float(out.delta), n=int(n), params=dict(out.params),
        dp_model=dp_model, trust=trust,
        online_bits=rep["online"]["bits"], offline_bits=rep["offline"]["bits"],
        rounds=rep["online"]["rounds"], max_party_bits=rep["online"]["max_party_bits"],
        mean_party_bits=rep["online"]["mean_party_bits"],
        seconds=time.perf_counter() - t_start, insecure_seed=session.insecure,
        communication=rep, theory=dict(out.theory), evaluation=out.evaluation, notes=notes,
        offline_rounds=rep["offline"]["rounds"], released=released,
        processes=session.placement.n_procs, spec=spec.to_dict(), costs=session.costs())
