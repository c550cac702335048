"""The papers' baseline protocols, run for real on the simulated network or across processes.

Each protocol takes the same records as :func:`ustat.umpc.run_umpc` (an
(n, d) array, numeric columns normalized to [0, 1] with public bounds,
categorical columns as integer codes) and a :class:`ustat.specs.BaselineSpec`
(the protocol, the kernel, privacy, encoding, the protocol's own options, the
seed), runs where an executor says (:mod:`ustat.executors`), and returns a
:class:`~ustat.baselines.result.ProtocolResult` with measured bits and rounds,
its parameters, its trust model and the spec it ran::

    run_protocol(records, BaselineSpec.of("ghazi", "kendall", epsilon=1.0, bins=64))

Modules, one per protocol family:

- :mod:`.bell_ldp`: Bell et al. (2020) Algorithm 1, quantization + T-ary RR;
- :mod:`.bell_auc`: Bell et al. Section 4, AUC by hierarchical histograms;
- :mod:`.bell_2pc` (with :mod:`.bell_2pc_circuits`, :mod:`.bell_2pc_noise`):
  Bell et al. Section 5, pairs of users by garbled circuits, noise in the circuit;
- :mod:`.factor`, :mod:`.ghazi`: Ghazi et al. (2024), JL factorization + VRand;
- :mod:`.ghazi_shuffle`: GhaziSM, the same in the multi-message shuffle model;
- :mod:`.fedauc`: FedAUC_RR and FedAUC_Lap (Sun et al.), label-DP AUC;
- :mod:`.umpc_protocol`: ``umpc`` (:func:`ustat.umpc.run_umpc`) through the same interface;
- :mod:`.registry`: the ``PROTOCOLS`` table, each row declaring its options
  (:mod:`.options`); :mod:`.protocol`: ``run_protocol`` and ``planned_delta``.

Layer: imports ``ustat.kernels``, ``ustat.specs``, ``ustat.executors``, ``ustat.umpc``,
``noise``, ``mpc`` only.
"""

from .protocol import planned_delta, protocol_program, run_protocol
from .registry import PROTOCOLS, AcrossProcesses, ProtocolInfo, register
from .result import ProtocolResult
from .spec import BaselineSpec

__all__ = [
           "PROTOCOLS",
           "AcrossProcesses",
           "BaselineSpec",
           "ProtocolInfo",
           "ProtocolResult",
           "planned_delta",
           "protocol_program",
           "register",
           "run_protocol",
]
