"""The papers' baseline protocols, run for real on the simulated network.

Each protocol takes the same records as :func:`ustat.umpc.run_umpc` (an
(n, d) array, numeric columns normalized to [0, 1] with public bounds,
categorical columns as integer codes) and returns a
:class:`~ustat.baselines.result.ProtocolResult` with measured bits and
rounds, its parameters and its trust model. Modules, one per protocol
family:

- :mod:`.bell_ldp`: Bell et al. (2020) Algorithm 1, quantization + T-ary RR;
- :mod:`.bell_auc`: Bell et al. Section 4, AUC by hierarchical histograms;
- :mod:`.bell_2pc` (with :mod:`.bell_2pc_circuits`, :mod:`.bell_2pc_noise`):
  Bell et al. Section 5, pairs of users by garbled circuits, noise in the circuit;
- :mod:`.factor`, :mod:`.ghazi`: Ghazi et al. (2024), JL factorization + VRand;
- :mod:`.ghazi_shuffle`: GhaziSM, the same in the multi-message shuffle model;
- :mod:`.fedauc`: FedAUC_RR and FedAUC_Lap (Sun et al.), label-DP AUC;
- :mod:`.registry`: ``run_protocol(name, ...)`` and the ``PROTOCOLS`` table
  (``umpc`` maps to :func:`ustat.umpc.run_umpc`).

Layer: imports ``ustat.kernels``, ``ustat.umpc``, ``noise``, ``mpc`` only.
"""

from .registry import PROTOCOLS, ProtocolInfo, planned_delta, register, run_protocol
from .result import ProtocolResult

__all__ = ["PROTOCOLS", "ProtocolInfo", "ProtocolResult", "planned_delta", "register",
           "run_protocol"]
