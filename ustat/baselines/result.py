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

As U-MPC's (:mod:`ustat.umpc.release`), the release is clamped into the statistic's valid
range (:attr:`ustat.kernels.Kernel.release_range`; ``estimate_raw`` is the unclamped
value) and reported with ``noise_std`` (the sd of its error in the statistic's units,
from the protocol's public variance formula at the released values) and an interval
``ci`` at level ``confidence`` (``ci_method`` says how; a normal approximation around the
raw estimate, clamped into the range). A protocol without a public variance formula
reports ``noise_std`` and ``ci`` as None and ``ci_method`` says why. All of it is
post-processing of the released values and public parameters: no privacy cost.
"""

from __future__ import annotations

import math
import time
from dataclasses import asdict, dataclass, field
from statistics import NormalDist
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from mpc.session import Session

    from ..kernels import Kernel
    from .spec import BaselineSpec


#: the start of the note of a release clamped into its range
CLAMPED = "the raw estimate lies outside the statistic's range"


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
    estimate_raw: float = math.nan  # the release before the clamp into the statistic's range
    noise_std: float | None = None  # sd of the release's error, statistic units (None: unknown)
    confidence: float = 0.95        # level of ci
    ci: list | None = None          # [lo, hi] (None: no public variance formula)
    ci_method: str = ""             # how ci and noise_std were derived, or why they were not

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
    (``delta``: the release's, 0 for pure epsilon-DP; ``variance``: of the estimate's error
    in the statistic's units from public parameters and released values only, None when the
    protocol has no such formula; ``variance_method``: how it was derived or why not)."""

    estimate: float
    u_hat: float | None
    params: dict
    theory: dict = field(default_factory=dict)
    evaluation: dict | None = None
    notes: list = field(default_factory=list)
    delta: float = 0.0
    variance: float | None = None
    variance_method: str = ""


def interval(kern: Kernel, raw: float, variance: float | None,
             confidence: float = 0.95) -> tuple[float, float | None, list | None]:
    """(estimate clamped into ``kern.release_range``, noise std, normal ``confidence``
    interval around ``raw`` clamped into the range); std and interval None when the variance
    is None or not finite. Post-processing only."""
    lo, hi = kern.release_range
    est = min(max(raw, lo), hi) if math.isfinite(raw) else raw
    if variance is None or not math.isfinite(variance) or not math.isfinite(raw):
        return est, None, None
    sd = math.sqrt(max(variance, 0.0))
    z = NormalDist().inv_cdf(0.5 + confidence / 2)
    return est, sd, [min(max(raw - z * sd, lo), hi), min(max(raw + z * sd, lo), hi)]


def delta_variance(kern: Kernel, u: float, aux: list, n: int, var_u: float,
                   var_aux: list) -> float:
    """First-order delta method: Var release(U, A) ~ (d/dU)^2 var_u + sum (d/dA_i)^2 var_aux_i,
    derivatives by central differences of the kernel's post-processing at the released
    values (NaN where it is undefined there)."""
    def f(v: float, a: list) -> float:
        try:
            return float(kern.release(v, a, n))
        except (ArithmeticError, ValueError):
            return math.nan

    h = max(math.sqrt(var_u) * 1e-3, 1e-9)
    total = ((f(u + h, aux) - f(u - h, aux)) / (2 * h)) ** 2 * var_u
    for i, va in enumerate(var_aux):
        step = max(math.sqrt(va) * 1e-3, 1e-6)
        up, down = list(aux), list(aux)
        up[i] += step
        down[i] -= step
        total += ((f(u, up) - f(u, down)) / (2 * step)) ** 2 * va
    return float(total)


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
    raw, u_hat = (float(out.estimate), out.u_hat) if released else (math.nan, math.nan)
    estimate, sd, ci = interval(kern, raw, out.variance if released else None)
    if estimate != raw and math.isfinite(raw):
        lo, hi = kern.release_range
        notes.append(f"{CLAMPED} [{lo:g}, {hi:g}]: released clamped (estimate_raw is the raw "
                     "value)")
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
        processes=session.placement.n_procs, spec=spec.to_dict(), costs=session.costs(),
        estimate_raw=raw, noise_std=sd, ci=ci,
        ci_method=(f"normal approximation around estimate_raw, clamped into the range; "
                   f"{out.variance_method}" if ci is not None else
                   out.variance_method or "no public variance formula for this protocol"))
