"""Function secret sharing: AES PRG, DPF, DCF and FSS gates on shared ring values.

Modules, bottom up (a lower one never imports a higher one):

- :mod:`fss.prg`     fixed-key AES tree PRG (MMO, domain-separated value blocks), batched
- :mod:`fss._keyio`  key layout checks and the versioned, validated wire format
- :mod:`fss._pool`   worker threads for the block loops (:mod:`mpc.machine.threads`)
- :mod:`fss._aesni`  AES-128 key expansion and the host check for compiled AES rounds
- :mod:`fss._fast`   compiled (numba, optional ``fast`` extra) Gen/Eval level kernels
- :mod:`fss._fast_ni` compiled Gen/Eval with AES on the CPU's AES instructions
- :mod:`fss._tree`   Gen/Eval kernels on one cache block, shared by DPF and DCF (numpy;
  dispatches to :mod:`fss._fast` when numba is installed, bit-identical results)
- :mod:`fss._small`  scalar evaluation path for batches of a few points
- :mod:`fss._warm`   loads the compiled kernels (:func:`warm_up`; the launcher and
  the deployment runner call it while a run's process connects, when given it)
- :mod:`fss._wire_gen` key generation straight into the wire format (``gen_bytes``)
- :mod:`fss.dpf`     distributed point functions (BGI CCS 2016), Z_2^l or XOR outputs
- :mod:`fss.dcf`     distributed comparison functions (Boyle et al. EUROCRYPT 2021)
- :mod:`fss.gates`   masked-input FSS gates on additive shares with a trusted
  dealer (TCC 2019): less_than, greater_than, equal, sign, abs_value,
  in_interval, for two parties or an edge of k > 2 members
- :mod:`fss.provider` :class:`FSSGates`, the gates as a comparison provider of
  secure values (``Session(comparisons=...)``)

Importing :mod:`fss` registers nothing anywhere: a session that should compare
with FSS gates is given :class:`FSSGates`.

Keys made from an explicit seed carry ``insecure=True`` (see :mod:`fss.dcf`).
Depends only on :mod:`mpc` (ring, rng, session, dealer, network, beaver).
"""

from ._util import InsecureSeedWarning
from ._warm import warm as warm_up
from .provider import FSSGates

__all__ = ["FSSGates", "InsecureSeedWarning", "warm_up"]
