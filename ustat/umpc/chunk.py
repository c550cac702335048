"""One chunk of edges of Protocol 3.1: steps 1 (share) and 2 (compute), the unit of work.

:func:`run_chunk` is a pure function of (the run's :class:`ChunkSpec`, the
chunk index, the members' encoded inputs of the chunk's edges). It returns
the members' shares of f(x_e) and the chunk's traffic, and is called the same
way by the local loop, the worker pool and the Dask tasks
(:mod:`ustat.umpc.engines`), so the result of a run does not depend on where
or in which order its chunks run:

- *Randomness* (input-sharing masks, the dealer's triples, masks and FSS
  keys) comes from ``spec.streams.derive("chunk", index)``; ``spec.streams``
  is derived from the run's fresh stream (:meth:`mpc.arith.rng.CSPRNG.fresh`).
- *Parties* are local: the chunk's session has one party per (edge, member)
  slot, slot ``e k + j`` being member j of edge e, and the dealer and other
  roles after them. The caller maps slots to global party ids when it merges
  the traffic (:meth:`mpc.comm.network.Network.absorb` with ``edges.ravel()``);
  nothing inside a chunk depends on which party a slot is.

Steps (for the c-th chunk of m_c edges, k members, d columns, l-bit ring):

1. *Sharing* (online, 1 round): member j of edge e splits each of its d
   values into k additive shares and sends one to every other member:
   m_c k (k-1) d l bits.
2. *Computing*: the backend evaluates the kernel on the shares; each member
   ends with a share of f(x_e). Backend ``"dealer"`` (default): FSS gates
   for k = 2, the p-party comparison circuit of :mod:`mpc.protocols.compare` for
   k > 2, Beaver products; preprocessing from a trusted dealer (offline
   traffic). Costs are those of the kernel's gates (:mod:`ustat.secure`).
   Backend ``"gc"`` (:mod:`ustat.umpc.gc_backend`, k = 2 only): Yao's
   protocol between the two members of each edge on the kernel's circuit
   (:mod:`ustat.umpc.circuits`), correlated randomness from oblivious
   transfer between them, no dealer; computational security.

The dealer's part of a chunk does not depend on its inputs: for a kernel of
degree 2 on the dealer backend, :func:`prepare_chunk` deals it (masks, FSS
keys, Beaver triples, by a planning pass of the kernel) and
:func:`finish_chunk` runs the rest when the values exist; together they give
:func:`run_chunk`'s bits (:mod:`ustat.umpc.prefetch` uses them to deal the
first chunks while the run draws its edges).

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

import numbers
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from mpc.arith.ring import FixedPoint, fixed_point
from mpc.arith.rng import CSPRNG
from mpc.arith.sharing import additive_share
from mpc.comm.network import Traffic
from mpc.session import Session

from ..secure import PrepTape, SecureOps
from .gc_backend import GCBackend
from .progress import at_step

if TYPE_CHECKING:
    from mpc.run.routing import Link

    from ..kernels import Kernel


class DealerBackend:
    """Computing f(x_e) from trusted-dealer preprocessing (FSS gates, circuits, Beaver).

    Threat model: static semi-honest adversary corrupting up to k-1 members
    of an edge; the dealer is trusted and sees no input. For k = 2 the FSS
    gates (:mod:`fss.gates`); for k > 2 the p-party masked-opening circuit
    (:mod:`mpc.protocols.compare`), since two colluding FSS key holders would learn
    the compared value.
    """

    name = "dealer"
    trust = "trusted dealer for preprocessing (FSS keys, Beaver triples, masks)"

    def check(self, kernel: Kernel) -> None:
        """Every registered kernel is written from :class:`SecureOps`: nothing to refuse."""

    def compute(self, session: Session, kernel: Kernel, holders: np.ndarray,
                x: Sequence[Sequence[np.ndarray]], input_fp: FixedPoint,
                tape: PrepTape | None = None) -> np.ndarray:
        """``tape``: a replaying :class:`~ustat.secure.PrepTape` (:func:`prepare_chunk`)."""
        ops = SecureOps(session, holders, input_fp=input_fp, tape=tape)
        out = kernel.secure_outputs(ops, x)
        return out[0] if len(out) == 1 else np.stack(out)


#: Computing backends by name (the names of :data:`ustat.specs.umpc.BACKENDS`). A backend
#: has ``name``, ``trust``, ``check(kernel)`` (raise ValueError if it cannot evaluate the
#: kernel) and ``compute(session, kernel, holders, x, input_fp) -> (k, m_c) uint64 shares``
#: (``(1 + a, k, m_c)`` for a kernel with a edge sums, :attr:`ustat.kernels.Kernel.edge_aux_names`),
#: sending everything through ``session.net``: the trusted dealer's (FSS gates, circuits,
#: Beaver triples) and the garbled-circuit 2PC backend for k = 2 (:mod:`.gc_backend`).
BACKENDS: dict[str, DealerBackend | GCBackend] = {"dealer": DealerBackend(), "gc": GCBackend()}


def get_backend(name: str) -> DealerBackend | GCBackend:
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

    kernel: Kernel
    bits: int                   # ring Z_2^bits
    frac_bits: int              # fixed-point bits of the output shares
    input_frac_bits: int        # fixed-point bits the numeric inputs were encoded with
    roles: tuple                # the main network's roles (dealer, aggregator, ...)
    streams: CSPRNG             # the run's chunk stream
    backend: str = "dealer"
    record_views: bool = False
    #: in a run across processes: chunk index -> the chunk network's mpc.run.routing.Link (the
    #: members' and roles' processes); None in the simulator. In-process only (not pickled).
    locate: Callable[[int], Link] | None = None


@dataclass
class ChunkResult:
    """The members' shares of f(x_e) for the chunk's edges and what the chunk sent."""

    index: int
    shares: np.ndarray          # uint64 (k, m_c): row j held by member j of each edge
    traffic: Traffic            # local parties: slot e k + j is member j of edge e
    aux_shares: np.ndarray | None = None    # uint64 (a, k, m_c): the kernel's edge sums


def run_chunk(spec: ChunkSpec, index: int, values: np.ndarray) -> ChunkResult:
    """Steps 1 and 2 of Protocol 3.1 on one chunk: ``values[e, j]`` is member j's record of edge e.

    ``values``: ``(m_c, k, d)`` encoded records, uint64 or a narrower unsigned
    type holding the same words (:meth:`~ustat.umpc.engines.ChunkInputs.of_run`).
    The chunk runs on its own session of m_c k local parties and the spec's
    roles, on the stream ``spec.streams.derive("chunk", index)``, with FSS on
    one thread.
    """
    values = _check_values(values)
    m_c, k, _ = values.shape
    session, holders, rng = _chunk_session(spec, index, m_c)
    _at_step(session, "sharing")
    x = share_inputs(session, holders, values, rng.derive("input-sharing"))
    _at_step(session, "computing")
    out = compute_kernel(session, spec, holders, x)
    shares, aux = _split(out)
    return ChunkResult(int(index), shares, session.net.traffic().compress(k), aux)


@dataclass
class PreparedChunk:
    """A chunk whose dealer preprocessing is dealt (:func:`prepare_chunk`), awaiting its values."""

    spec: ChunkSpec
    index: int
    edges: int                  # m_c
    session: Session
    holders: np.ndarray
    rng: CSPRNG
    tape: PrepTape
    finished: bool = False


def can_prepare(spec: ChunkSpec) -> bool:
    """Whether :func:`prepare_chunk` applies: the dealer backend, k = 2 (FSS gates), no views
    recorded (a view records the round a message was sent in, and dealing ahead moves the
    dealer's rounds before the sharing round)."""
    return spec.backend == "dealer" and spec.kernel.degree == 2 and not spec.record_views


def prepare_chunk(spec: ChunkSpec, index: int, edges: int) -> PreparedChunk:
    """The input-independent part of chunk ``index`` of ``edges`` edges: the dealer's preprocessing.

    Runs the kernel's secure evaluation once as a plan (:class:`~ustat.secure.PrepTape`:
    every gate and product deals its masks, keys and triples, no online work)
    on the chunk's own session and stream. :func:`finish_chunk` then shares the
    values and runs the online part on what was dealt: together they return the
    same bits as :func:`run_chunk` (same streams, draws in the same order, same
    traffic), so a worker can deal a chunk's keys (most of its work for a
    comparison kernel) before the run's edges exist. Needs :func:`can_prepare`.
    Memory: the chunk's preprocessing (see the module docstring), held until
    finished.
    """
    if not can_prepare(spec):
        raise ValueError("prepare_chunk needs the dealer backend, a kernel of degree 2 and "
                         "no recorded views")
    if isinstance(edges, (bool, np.bool_)) or not isinstance(edges, numbers.Integral) \
            or edges < 1:
        raise ValueError(f"edges must be a positive integer, got {edges!r}")
    m_c, k, d = int(edges), spec.kernel.degree, spec.kernel.columns
    session, holders, rng = _chunk_session(spec, index, m_c)
    tape = PrepTape()
    x = [[np.zeros((k, m_c), dtype=np.uint64) for _ in range(d)] for _ in range(k)]
    with session.net.phase("computing"):
        spec.kernel.secure_outputs(SecureOps(session, holders, tape=tape, input_fp=fixed_point(
            spec.bits, spec.input_frac_bits)), x)
    return PreparedChunk(spec, int(index), m_c, session, holders, rng, tape.replay())


def finish_chunk(prepared: PreparedChunk, values: np.ndarray) -> ChunkResult:
    """Steps 1 and 2 of a :func:`prepare_chunk` ed chunk on its ``(m_c, k, d)`` values."""
    p = prepared
    if p.finished:
        raise RuntimeError(f"chunk {p.index} was finished already: its preprocessing is "
                           "used once")
    values = _check_values(values)
    if values.shape != (p.edges, p.spec.kernel.degree, p.spec.kernel.columns):
        raise ValueError(f"chunk {p.index} was prepared for {p.edges} edges of "
                         f"{p.spec.kernel.columns} columns, got values of shape {values.shape}")
    p.finished = True
    _at_step(p.session, "sharing")
    x = share_inputs(p.session, p.holders, values, p.rng.derive("input-sharing"))
    _at_step(p.session, "computing")
    out = compute_kernel(p.session, p.spec, p.holders, x, tape=p.tape)
    if len(p.tape):
        raise RuntimeError(f"kernel {p.spec.kernel.name!r} planned {len(p.tape)} more "
                           "operations than it ran: its secure evaluation is not data-oblivious")
    traffic = p.session.net.traffic().compress(values.shape[1])
    # the cells in the order a single pass creates them (sharing, then computing)
    traffic.cells = dict(sorted(traffic.cells.items(), key=lambda kv: kv[0][0] != "sharing"))
    shares, aux = _split(out)
    return ChunkResult(p.index, shares, traffic, aux)


def _split(out: np.ndarray) -> tuple[np.ndarray, np.ndarray | None]:
    """(f's shares (k, m_c), the edge sums' (a, k, m_c) or None) of compute_kernel's output."""
    return (out, None) if out.ndim == 2 else (out[0], out[1:])


def _check_values(values) -> np.ndarray:
    values = np.asarray(values)
    if values.dtype.kind != "u" or values.ndim != 3:
        raise TypeError(f"values must be (m_c, k, d) unsigned encoded records, got "
                        f"{values.dtype} of shape {values.shape}")
    return values.astype(np.uint64, copy=False)


def _at_step(session: Session, step: str) -> None:
    """A chunk linked to a run's processes starts ``step`` (:func:`ustat.umpc.progress.at_step`)."""
    link = session.net.link
    if link is not None:
        at_step(link.transport, step)


def _chunk_session(spec: ChunkSpec, index: int,
                   m_c: int) -> tuple[Session, np.ndarray, CSPRNG]:
    """Chunk ``index``'s session of m_c k local parties, its holders (k, m_c) and its stream."""
    k = spec.kernel.degree
    rng = spec.streams.derive("chunk", int(index))
    link = None if spec.locate is None else spec.locate(int(index))
    session = Session.derived(m_c * k, rng, bits=spec.bits, frac_bits=spec.frac_bits,
                              roles=spec.roles, record_views=spec.record_views, workers=1,
                              link=link)
    return session, np.arange(m_c * k, dtype=np.int64).reshape(m_c, k).T, rng


def share_inputs(session: Session, holders: np.ndarray, values: np.ndarray,
                 rng: CSPRNG) -> list[list[np.ndarray]]:
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


def compute_kernel(session: Session, spec: ChunkSpec, holders: np.ndarray,
                   x: Sequence[Sequence[np.ndarray]], tape: PrepTape | None = None) -> np.ndarray:
    """Step 2: the backend's secure evaluation of f on the shares, ``(k, m_c)`` uint64 shares;
    ``(1 + a, k, m_c)`` for a kernel with a edge sums (f, then each edge sum:
    :attr:`ustat.kernels.Kernel.edge_aux_names`).

    ``tape``: the dealt preprocessing of a prepared chunk (dealer backend only)."""
    kern = spec.kernel
    k, m_c = holders.shape
    input_fp = fixed_point(spec.bits, spec.input_frac_bits)
    backend = get_backend(spec.backend)
    with session.net.phase("computing"):
        out = backend.compute(session, kern, holders, x, input_fp, **(
            {} if tape is None else {"tape": tape}))
    a = len(kern.edge_aux_names)
    want = (k, m_c) if a == 0 else (1 + a, k, m_c)
    if not isinstance(out, np.ndarray) or out.shape != want or out.dtype != np.uint64:
        raise ValueError(
            f"kernel {kern.name!r} secure evaluation returned {getattr(out, 'shape', type(out))} "
            f"{getattr(out, 'dtype', '')}, expected {want} uint64 shares"
        )
    return out
