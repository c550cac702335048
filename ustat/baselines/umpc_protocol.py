"""U-MPC through the registry's interface: the ``umpc`` entry of :data:`~.registry.PROTOCOLS`.

A :class:`ustat.specs.BaselineSpec` of protocol ``umpc`` becomes a
:class:`ustat.specs.UMPCSpec` (:func:`umpc_spec`): its epsilon, seed, auxiliary
share of epsilon, ring and fractional bits, and its ``umpc`` group (threat model,
noise, design, backend, ...; each declared here with U-MPC's own default). The run
is U-MPC's own program (:func:`ustat.umpc.umpc_program`: chunked, on any executor),
whose result the releasing process converts to a
:class:`~ustat.baselines.result.ProtocolResult` (:func:`program`). The delta
reported is the one planned from the public parameters (:func:`planned_delta`), as
for every protocol of the registry.

Threat model: U-MPC's (:mod:`ustat.umpc.protocol`).
"""

from __future__ import annotations

import dataclasses
import math
import time
from typing import TYPE_CHECKING, Any

import numpy as np

from ..executors import Place, Program
from ..specs import umpc as umpc_specs
from ..specs.umpc import UMPCSpec
from ..umpc import umpc_program
from ..umpc.privacy import planned_delta as umpc_planned_delta
from ..umpc.privacy import umpc_trust
from ._common import evaluation, validate_records
from .options import Option
from .result import ProtocolResult

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

    from mpc.session import Session

    from .spec import BaselineSpec

__all__ = [
    "OPTIONS",
    "check_spec",
    "planned_delta",
    "program",
    "run_umpc_protocol",
    "umpc_spec",
]

#: flags of ``ustat estimate`` that set U-MPC's options (field -> flag)
_FLAGS = {"aux_epsilon_fraction": "--aux-epsilon-fraction", "bits": "--bits",
          "frac_bits": "--frac-bits", "threat_model": "--threat-model",
          "noise_method": "--noise-method", "max_colluders": "--max-colluders",
          "committee_size": "--committee-size", "honest_fraction": "--honest-fraction",
          "committee_fail": "--committee-fail", "resolution": "--resolution",
          "edges": "--edges", "sampler": "--sampler", "backend": "--backend",
          "confidence": "--confidence", "tie_aware": "--ties",
          "check_inputs": "--check-inputs"}
#: U-MPC's options by their BaselineSpec field, in UMPCSpec's order of groups
_FIELDS = ("aux_epsilon_fraction", "bits", "frac_bits", "threat_model", "noise_method",
           "max_colluders", "committee_size", "honest_fraction", "committee_fail",
           "check_inputs", "input_frac_bits", "resolution", "bounds", "edges", "sampler", "backend",
           "chunk_size", "confidence", "tie_aware")


def _default(name: str) -> Any:
    """U-MPC's default of field ``name`` (read from UMPCSpec's groups: the one source)."""
    if name == "aux_epsilon_fraction" or name in ("bits", "frac_bits"):
        return None                                 # chosen per kernel and data by U-MPC
    for group in (umpc_specs.Privacy, umpc_specs.Precision, umpc_specs.Design,
                  umpc_specs.Execution, UMPCSpec):
        for f in dataclasses.fields(group):
            if f.name == name and f.default is not dataclasses.MISSING:
                return f.default
    return None


#: the options the umpc entry takes (checked together, as a UMPCSpec: :func:`check_spec`)
OPTIONS = tuple(Option(name, _default(name), None, _FLAGS.get(name),
                       f"U-MPC's {name} (ustat.specs.UMPCSpec)") for name in _FIELDS)


def umpc_spec(spec: BaselineSpec) -> UMPCSpec:
    """The :class:`UMPCSpec` of a ``umpc`` :class:`ustat.specs.BaselineSpec` (its fields of
    the same names; None leaves U-MPC's choice)."""
    flat = {name: getattr(spec.umpc, name) for name in _FIELDS[3:]}
    flat.update(aux_epsilon_fraction=spec.privacy.aux_epsilon_fraction,
                bits=spec.encoding.bits, frac_bits=spec.encoding.frac_bits)
    given = {k: v for k, v in flat.items() if v is not None}
    return UMPCSpec.of(spec.kernel, epsilon=spec.privacy.epsilon, seed=spec.execution.seed,
                       **given)


def check_spec(spec: BaselineSpec) -> None:
    """The umpc entry's options checked together: the UMPCSpec they make (errors name the
    field)."""
    umpc_spec(spec)


def program(records: ArrayLike, spec: BaselineSpec, *, session: Session | None = None,
            evaluate: bool = False) -> Program:
    """U-MPC's program (:func:`ustat.umpc.umpc_program`) for ``spec``, releasing a
    :class:`ProtocolResult`."""
    inner = umpc_program(records, umpc_spec(spec), session=session, evaluate=evaluate)
    return dataclasses.replace(inner, main=_main, args=(spec, evaluate, inner.main, inner.args),
                               finish=_finish)


def run_umpc_protocol(records: ArrayLike, spec: BaselineSpec, *, session: Session | None = None,
                      evaluate: bool = False, runtime: Any = None) -> ProtocolResult:
    """:func:`ustat.umpc.run_umpc` of :func:`umpc_spec` in this process (``runtime``: this
    process's in a run of several), its result converted to a :class:`ProtocolResult`."""
    p = program(records, spec, session=session, evaluate=evaluate)
    place = Place(runtime, None if runtime is None else 1)
    return p.main(place, *p.args, **{k: a for k, (a, _) in p.rows.items()})


def planned_delta(records: ArrayLike, spec: BaselineSpec) -> float:
    """The delta a U-MPC run of ``spec`` on ``records`` spends
    (:func:`ustat.umpc.privacy.planned_delta`), known before it runs."""
    return umpc_planned_delta(umpc_spec(spec), int(np.shape(records)[0]))


def _main(place: Place, spec: BaselineSpec, evaluate: bool, main: Any, args: tuple,
          records: Any) -> ProtocolResult:
    """One process: U-MPC's own program, then its result as a ProtocolResult."""
    t_start = time.perf_counter()
    r = main(place, *args, records=records)
    kern = spec.kern
    ev = None
    if evaluate:
        X = validate_records(records, kern)
        ev = evaluation(kern, X)
        enc = r.evaluation or {}
        ev["u_discretized"] = enc.get("u_complete")
        ev["statistic_discretized"] = enc.get("statistic_complete")
        ev["u_incomplete"] = enc.get("u_incomplete")
        ev["statistic_incomplete"] = enc.get("statistic_incomplete")
    given = {name: getattr(spec.umpc, name) for name in _FIELDS[3:]}
    given.update(aux_epsilon_fraction=spec.privacy.aux_epsilon_fraction,
                 bits=spec.encoding.bits, frac_bits=spec.encoding.frac_bits)
    used = {**{k: v for k, v in given.items() if isinstance(v, (int, float, str, bool))},
            "edges": r.edges, "sampler": r.sampler, "threat_model": r.threat_model,
            "max_degree": r.max_degree}
    theory = {"sensitivity": r.sensitivity, "noise_scale": r.noise_scale,
              "dp_variance": 2 * r.noise_scale ** 2 if math.isfinite(r.epsilon) else 0.0}
    return ProtocolResult(
        protocol="umpc", kernel=r.kernel, statistic=r.statistic, estimate=r.estimate,
        u_hat=r.u_hat, epsilon=r.epsilon, delta=planned_delta(records, spec), n=r.n,
        params=used, dp_model="central", trust=umpc_trust(r.threat_model, r.noise_method),
        online_bits=r.online_bits, offline_bits=r.offline_bits, rounds=r.rounds,
        max_party_bits=r.max_party_bits, mean_party_bits=r.mean_party_bits,
        seconds=time.perf_counter() - t_start, insecure_seed=r.insecure_seed,
        communication=r.communication, theory=theory, evaluation=ev, notes=list(r.notes),
        released=r.released, processes=r.processes, process_costs=r.process_costs or None,
        spec=spec.to_dict(), costs=r.costs, estimate_raw=r.estimate_raw,
        noise_std=r.noise_std, confidence=r.confidence, ci=list(r.ci) or None,
        ci_method=r.ci_method)


def _finish(res: ProtocolResult, costs: list, seconds: float) -> ProtocolResult:
    """After a run across processes: every process's costs, the whole run's wall time."""
    res.process_costs = costs
    res.seconds = seconds
    return res
