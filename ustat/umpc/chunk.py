"""One chunk of edges of Protocol 3.1: steps 1 (share) and 2 (compute), the unit of work.

:func:`run_chunk` is a pure function of (the run's :class:`ChunkSpec`, the
chunk index, the members' encoded inputs of the chunk's edges). It returns
the members' shares of f(x_e) and the chunk's traffic, and is called the same
way by the local loop, the worker pool and the Dask tasks
(:mod:`ustat.umpc.engines`), so the result of a run does not depend on where
or in which order its chunks run:

- *Randomness* (input-sharing masks, the dealer's triples, masks and FSS
  keys) comes from ``spec.streams.derive("chunk", index)``; ``spec.streams``
  is derived from the run's fresh stream (:meth:`mpc.rng.CSPRNG.fresh`).
- *Parties* are local: the chunk's session has one party per (edge, member)
  slot, slot ``e k + j`` being member j of edge e, and the dealer and other
  roles after them. The caller maps slots to global party ids when it merges
  the traffic (:meth:`mpc.network.Network.absorb` with ``edges.ravel()``);
  nothing inside a chunk depends on which party a slot is.

Steps (for the c-th chunk of m_c edges, k members, d columns, l-bit ring):

1. *Sharing* (online, 1 round): member j of edge e splits each of its d
   values into k additive shares and sends one to every other member:
   m_c k (k-1) d l bits.
2. *Computing*: the backend evaluates the kernel on the shares; each member
   ends with a share of f(x_e). Backend ``"dealer"`` (default): FSS gates
   for k = 2, the p-party comparison circuit of :mod:`mpc.compare` for
   k > 2, Beaver products; preprocessing from a trusted dealer (offline
   traffic). Costs are those of the kernel's gates (:mod:`ustat.secure`).
   Backend ``"gc"`` (:mod:`ustat.umpc.gc_backend`, k = 2 only): Yao's
   protocol between the two members of each edge on the kernel's circuit
   (:mod:`ustat.umpc.circuits`), correlated randomness from oblivious
   transfer between them, no dealer; computational security.

Memory per chunk: the shares (k^2 d m_c words), the backend's preprocessing
for m_c edges (for a k = 2 comparison two DCF keys of about 7,000 bits per
edge and gate, with their l-bit masks), and the traffic counters (two int64
per slot and phase); nothing grows with |E| or n.

Threat model: that of the backend (static semi-honest adversary corrupting
up to k-1 members of an edge; trusted dealer for ``"dealer"``, none for
``"gc"``). A worker that
runs a chunk plays all its members and the dealer: the simulation trusts the
machines it runs on.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from mpc.network import Traffic
from mpc.ring import fixed_point
from mpc.rng import CSPRNG
from mpc.session import Session
from mpc.sharing import additive_share

from ..secure import SecureOps


class DealerBackend:
    """Computing f(x_e) from trusted-dealer preprocessing (FSS gates, circuits, Beaver).

    Threat model: static semi-honest adversary corrupting up to k-1 members
    of an edge; the dealer is trusted and sees no input. For k = 2 the FSS
    gates (:mod:`fss.gates`); for k > 2 the p-party masked-opening circuit
    (:mod:`mpc.compare`), since two colluding FSS key holders would learn
    the compared value.
    """

    name = "dealer"
    trust = "trusted dealer for preprocessing (FSS keys, Beaver triples, masks)"

    def check(self, kernel) -> None:
        """Every registered kernel is written from :class:`SecureOps`: nothing to refuse."""

    def compute(self, session: Session, kernel, holders: np.ndarray, x, input_fp) -> np.ndarray:
        ops = SecureOps(session, holders, input_fp=input_fp)
        return kernel.secure(ops, x)


#: Computing backends by name. A backend has ``name``, ``trust``,
#: ``check(kernel)`` (raise ValueError if it cannot evaluate the kernel) and
#: ``compute(session, kernel, holders, x, input_fp) -> (k, m_c) uint64 shares``,
#: sending everything through ``session.net`` (a garbled-circuit 2PC backend
#: for k = 2 plugs in here).
BACKENDS = {"dealer": DealerBackend()}


def _register_gc() -> None:
    """Add the garbled-circuit backend (``ustat.umpc.gc_backend``) for k = 2 kernels."""
    from .gc_backend import GCBackend
    BACKENDS["gc"] = GCBackend()


_register_gc()


def get_backend(name: str):
    try:
        return BACKENDS[name]
    except (KeyError, TypeError):
        raise ValueError(f"backend must be one of {sorted(BACKENDS)}, got {name!r}") from None


@dataclass(frozen=True)
class ChunkSpec:
    """Everything a chunk needs besides its inputs; the same for every chunk of a run (picklable).

    ``streams`` is secret (it derives every chunk's masks and keys): it goes
    only to the machines that simulate the parties.
    """

    kernel: object              # a ustat.kernels.Kernel
    bits: int                   # ring Z_2^bits
    frac_bits: int              # fixed-point bits of the output shares
    input_frac_bits: int        # fixed-point bits the numeric inputs were encoded with
    roles: tuple                # the main network's roles (dealer, aggregator, ...)
    streams: CSPRNG             # the run's chunk stream
    backend: str = "dealer"
    record_views: bool = False


@dataclass
class ChunkResult:
    """The members' shares of f(x_e) for the chunk's edges and what the chunk sent."""

    index: int
    shares: np.ndarray          # uint64 (k, m_c): row j held by member j of each edge
    traffic: Traffic            # local parties: slot e k + j is member j of edge e


def run_chunk(spec: ChunkSpec, index: int, values: np.ndarray) -> ChunkResult:
    """Steps 1 and 2 of Protocol 3.1 on one chunk: ``values[e, j]`` is member j's record of edge e.

    ``values``: ``(m_c, k, d)`` encoded records, uint64 or a narrower unsigned
    type holding the same words (:meth:`~ustat.umpc.engines.ChunkInputs.of_run`).
    The chunk runs on its own session of m_c k local parties and the spec's
    roles, on the stream ``spec.streams.derive("chunk", index)``, with FSS on
    one thread.
    """
    values = np.asarray(values)
    if values.dtype.kind != "u" or values.ndim != 3:
        raise TypeError(f"values must be (m_c, k, d) unsigned encoded records, got "
                        f"{values.dtype} of shape {values.shape}")
    values = values.astype(np.uint64, copy=False)
    m_c, k, _ = values.shape
    rng = spec.streams.derive("chunk", int(index))
    session = Session.derived(m_c * k, rng, bits=spec.bits, frac_bits=spec.frac_bits,
                              roles=spec.roles, record_views=spec.record_views, workers=1)
    holders = np.arange(m_c * k, dtype=np.int64).reshape(m_c, k).T
    x = share_inputs(session, holders, values, rng.derive("input-sharing"))
    out = compute_kernel(session, spec, holders, x)
    return ChunkResult(int(index), out, session.net.traffic().compress(k))


def share_inputs(session: Session, holders: np.ndarray, values: np.ndarray, rng: CSPRNG):
    """Step 1: every member shares its d values among the k members of its edge (1 round).

    Returns ``x`` with ``x[i][c]`` the ``(k, m_c)`` sharing of column c of
    member i. Cost: m_c k (k-1) d l bits, one round.
    """
    ring, net = session.ring, session.net
    k, d = values.shape[1], values.shape[2]
    with net.phase("sharing"), net.round():
        # S[j, i, c, e]: member j's share of column c of member i of edge e
        S = additive_share(ring, np.moveaxis(values, 0, -1), k, rng)
        for i in range(k):
            for j in range(k):
                if i != j:
                    net.send(holders[i], holders[j], S[j, i].T, ring.bits)
    return [[S[:, i, c, :] for c in range(d)] for i in range(k)]


def compute_kernel(session: Session, spec: ChunkSpec, holders: np.ndarray, x) -> np.ndarray:
    """Step 2: the backend's secure evaluation of f on the shares, ``(k, m_c)`` uint64 shares."""
    kern = spec.kernel
    k, m_c = holders.shape
    input_fp = fixed_point(spec.bits, spec.input_frac_bits)
    with session.net.phase("computing"):
        out = get_backend(spec.backend).compute(session, kern, holders, x, input_fp)
    if not isinstance(out, np.ndarray) or out.shape != (k, m_c) or out.dtype != np.uint64:
        raise ValueError(
            f"kernel {kern.name!r} secure evaluation returned {getattr(out, 'shape', type(out))} "
            f"{getattr(out, 'dtype', '')}, expected ({k}, {m_c}) uint64 shares"
        )
    return out
