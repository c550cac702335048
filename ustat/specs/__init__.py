"""Run specs: what a statistic computes, frozen, typed, validated once, printable and
serializable (:mod:`ustat.specs.base`).

- :mod:`ustat.specs.umpc`: :class:`UMPCSpec` (privacy and threat model, precision,
  sampling design, execution options) for :func:`ustat.umpc.run_umpc`.
- :mod:`ustat.specs.ecdf`: :class:`ECDFSpec`, :class:`QuantileSpec`, :class:`ROCSpec` and
  :class:`HLSpec` (privacy, precision, the threshold grid, execution options) for
  :mod:`ustat.ecdf`.
- the baselines' spec, :class:`ustat.baselines.BaselineSpec` (protocol, kernel, privacy,
  encoding, each protocol's own options, seed), lives with the protocols whose declared
  options it checks (:mod:`ustat.baselines.spec`).

Where a run executes is an executor's business (:mod:`ustat.executors`).
"""

from .base import Spec
from .ecdf import (
                   ECDFDesign,
                   ECDFExecution,
                   ECDFPrecision,
                   ECDFPrivacy,
                   ECDFSpec,
                   HLDesign,
                   HLPrecision,
                   HLSpec,
                   QuantileSpec,
                   ROCSpec,
)
from .umpc import Design, Execution, Precision, Privacy, UMPCSpec

__all__ = [
                   "Design",
                   "ECDFDesign",
                   "ECDFExecution",
                   "ECDFPrecision",
                   "ECDFPrivacy",
                   "ECDFSpec",
                   "Execution",
                   "HLDesign",
                   "HLPrecision",
                   "HLSpec",
                   "Precision",
                   "Privacy",
                   "QuantileSpec",
                   "ROCSpec",
                   "Spec",
                   "UMPCSpec",
]
