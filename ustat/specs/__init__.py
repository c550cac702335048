"""Run specs: what a statistic computes, frozen, typed, validated once, printable and
serializable (:mod:`ustat.specs.base`).

- :mod:`ustat.specs.umpc`: :class:`UMPCSpec` (privacy and threat model, precision,
  sampling design, execution options) for :func:`ustat.umpc.run_umpc`.
- :mod:`ustat.specs.baselines`: :class:`BaselineSpec` (protocol, kernel, privacy,
  encoding, each protocol's own options, seed) for :func:`ustat.baselines.run_protocol`.

Where a run executes is an executor's business (:mod:`ustat.executors`).
"""

from .base import Spec
from .baselines import BaselineSpec
from .umpc import Design, Execution, Precision, Privacy, UMPCSpec

__all__ = ["Spec", "UMPCSpec", "Privacy", "Precision", "Design", "Execution", "BaselineSpec"]
