"""The U-MPC protocol (Protocol 3.1 of Sinh and Ramon), streamed in chunks of edges.

- :mod:`.protocol`: :func:`run_umpc` (a :class:`ustat.specs.UMPCSpec` run by an
  executor of :mod:`ustat.executors`), :func:`umpc_program` (the protocol as one
  SPMD program), the four steps (share, compute, noise, aggregate) and
  :class:`UMPCResult`;
- :mod:`.chunk`: steps 1-2 on one chunk of edges (:func:`run_chunk`, the unit
  of work) and the computing backends;
- :mod:`.engines`: where chunks run (in process, worker pool);
  :mod:`.dask_runner`: on a Dask cluster (optional extra);
- :mod:`.inputs`: argument checks and the ring encoding of the records;
- :mod:`.precision`: the encoding widths chosen per kernel;
- :mod:`.release`: post-processing of the release (clamp, noise_std, ci,
  warnings, epsilon split); :mod:`.evaluation`: the exact statistics of
  evaluation mode (raw and encoded);
- :mod:`.merge`: merging a chunk's shares and traffic into the run;
- :mod:`.gc_backend` and :mod:`.circuits`: the dealer-free garbled-circuit
  backend ``"gc"`` and the kernels' Boolean circuits;
- :mod:`.progress`: the progress line.
"""

from .chunk import BACKENDS, ChunkResult, ChunkSpec, run_chunk
from .inputs import decode_records, encode_records, resolve_edges
from .protocol import (
                       DEFAULT_CHUNK,
                       DEFAULT_THREAT_MODEL,
                       PIDLAP_MAX_PARTIES,
                       THREAT_MODELS,
                       UMPCResult,
                       run_umpc,
                       umpc_program,
)

__all__ = [
                       "BACKENDS",
                       "DEFAULT_CHUNK",
                       "DEFAULT_THREAT_MODEL",
                       "PIDLAP_MAX_PARTIES",
                       "THREAT_MODELS",
                       "ChunkResult",
                       "ChunkSpec",
                       "UMPCResult",
                       "decode_records",
                       "encode_records",
                       "resolve_edges",
                       "run_chunk",
                       "run_umpc",
                       "umpc_program",
]
