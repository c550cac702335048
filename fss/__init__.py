"""Function secret sharing: AES PRG, DPF, DCF and FSS gates on shared ring values.

Modules, bottom up (a lower one never imports a higher one):

- :mod:`fss.prg`     fixed-key AES tree PRG (MMO, domain-separated value blocks), batched,
  and the AES-128 key schedule the compiled rounds use
- :mod:`fss._util`   argument checks (domain and ring values, parties, the CSPRNG)
- :mod:`fss._pool`   worker threads for the block loops (:mod:`mpc.machine.threads`)
- :mod:`fss.keys`    the parameters (:class:`~fss.keys.DPFParams`,
  :class:`~fss.keys.DCFParams`) and the one key type :class:`~fss.keys.TreeKey`:
  a DPF key, or a DCF key (the same fields plus value correction words)
- :mod:`fss.kernels` the tree-walk kernels (Gen and Eval of a cache block, the
  wire codec) and :func:`fss.kernels.choose`, the one place that picks among them:
  ``reference`` (numpy), ``scalar`` (a few points, Python integers), ``passes``
  (numba, optional ``fast`` extra), ``aesni`` (numba, AES on the CPU's AES
  instructions); ``_host`` says what this host runs; all give the same bits
- :mod:`fss._keyio`  the versioned, validated wire format, driven by the key's params
- :mod:`fss.tree`    Gen, Eval, Gen straight into bytes and parsing for either key:
  the block loops over the batch on ``workers`` threads
- :mod:`fss.dpf`     distributed point functions (BGI CCS 2016), Z_2^l or XOR outputs
- :mod:`fss.dcf`     distributed comparison functions (Boyle et al. EUROCRYPT 2021)
- :mod:`fss._warm`   loads the compiled kernels (:func:`warm_up`; the launcher and
  the deployment runner call it while a run's process connects, when given it)
- :mod:`fss.dealing` the dealer's side of the gates: masks and key pairs, sent
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
