"""The public setup of a U-MPC run, before step 1: checks, streams, E, precision, encoding.

:func:`prepare_run` checks the arguments of :func:`ustat.umpc.protocol.run_umpc`,
makes the run's stream, draws the hypergraph E, chooses the ring and the
encoding (:mod:`ustat.umpc.precision`), makes the session and the chunks'
:class:`~ustat.umpc.chunk.ChunkSpec`, and encodes the records: a
:class:`Run` that the protocol's four steps read. With BalancedSamp the ring
and the spec are known before E (its largest degree is ceil(k |E| / n)), so
the kept workers start dealing the first chunks' preprocessing while E is
drawn (:mod:`ustat.umpc.prefetch`); the results are the same bits either way.
Cost: drawing E (:mod:`ustat.sampling`), a degree count and the encoding,
O(n + k |E|) time and memory.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import ArrayLike

from mpc.arith.rng import CSPRNG, as_rng
from mpc.session import Session, agreed_stream
from noise.mpc_noise import MPC_DIS_MAX_PARTIES

from .. import kernels as kernel_registry
from .. import sampling
from ..specs.umpc import UMPCSpec
from .chunk import ChunkSpec, get_backend
from .engines import start_prefetch
from .inputs import check_edges, check_no_wrap, encode_records, resolve_edges, validate_records
from .precision import Precision, Shares, check_bounds, choose_precision, input_fp, scale_records
from .release import choose_aux_fraction, choose_edge_fraction, without_edge_aux

if TYPE_CHECKING:
    from ..kernels import Kernel
    from ..sampling import Hypergraph
    from .prefetch import Prefetch

#: Pi_DLap sends n^2 ring elements; above this n it is refused (use "hf").
PIDLAP_MAX_PARTIES = 20_000


@dataclass
class Run:
    """The public setup every step reads (records, session, edges, encoding)."""

    kern: Kernel
    X: np.ndarray                   # records in [0, 1] (scaled from raw with bounds)
    eps: float
    session: Session
    rng: CSPRNG                     # the run's fresh stream
    hypergraph: Hypergraph
    E: np.ndarray
    delta_max: int
    enc: np.ndarray
    precision: Precision
    X_raw: np.ndarray               # the records as the caller gave them (exact_raw evaluation)
    bounds: list | None = None
    spec: ChunkSpec | None = None    # what every chunk needs besides its inputs
    prefetch: Prefetch | None = None  # chunks dealt while E was drawn (ustat.umpc.prefetch)
    aux_fraction: float = 0.1       # class-count share of epsilon (resolved when auto)
    edge_fraction: float = 0.0      # the kernel's edge sums' share of epsilon (0: not drawn)
    aux_given: bool = False         # aux_fraction was the spec's (else chosen from the design)

    @property
    def n(self) -> int:
        return self.X.shape[0]

    @property
    def m(self) -> int:
        return self.E.shape[0]


def prepare_run(records: ArrayLike, spec: UMPCSpec, session: Session | None,
                hypergraph: Hypergraph | None, engine: dict) -> Run:
    """Check the records against ``spec``, make the run's stream, draw E, choose the
    precision, encode.

    The precision depends on E only through |E| and the largest degree, which
    BalancedSamp fixes in advance (ceil(k |E| / n)): then the ring, the session
    and the chunk spec come first, and the kept workers start dealing the
    first chunks' preprocessing (:mod:`ustat.umpc.prefetch`) while E is drawn.
    ``engine``: run_chunks' engine keywords plus ``record_views``, ``noise_method``
    (as resolved) and ``runtime``.
    """
    pr, pc, ds, ex = spec.privacy, spec.precision, spec.design, spec.execution
    kernel, epsilon, edges, sampler = spec.kernel, pr.epsilon, ds.edges, ds.sampler
    threat_model, seed, chunk_size = pr.threat_model, ex.seed, ex.chunk_size
    aux_fraction, backend = pr.aux_epsilon_fraction, ex.backend
    enc_kw: dict[str, Any] = dict(bits=pc.bits, frac_bits=pc.frac_bits,
                                  input_frac_bits=pc.input_frac_bits,
                                  resolution=pc.resolution, bounds=pc.bounds)
    kern = kernel_registry.get(kernel)
    bounds = check_bounds(enc_kw.pop("bounds"), kern)
    X = validate_records(scale_records(records, bounds, kern), kern)
    X_raw = X if bounds is None else np.asarray(records, dtype=np.float64).reshape(X.shape)
    n, k = X.shape[0], kern.degree
    eps = epsilon
    engine = dict(engine)
    noise_method = engine.pop("noise_method", "polya")
    given_fraction = aux_fraction
    edge_fraction = 0.0
    if math.isfinite(eps) and threat_model == "dis" and noise_method == "polya" \
            and n > PIDLAP_MAX_PARTIES:
        raise ValueError(
            f"threat model 'dis' (Pi_DLap) sends n^2 = {n * n:.3g} ring elements for n = {n}; "
            f"use threat_model='hf' (committee noise) above {PIDLAP_MAX_PARTIES} parties, "
            f"or noise_method='mpc' (up to {MPC_DIS_MAX_PARTIES} parties)"
        )
    if math.isfinite(eps) and threat_model == "dis" and noise_method == "mpc" \
            and n > MPC_DIS_MAX_PARTIES:
        raise ValueError(
            f"threat model 'dis' with noise sampled inside MPC among all n = {n} parties is served "
            f"up to {MPC_DIS_MAX_PARTIES} parties (memory: about 4 kB per party); "
            "use threat_model='hf' (a committee samples the noise)"
        )
    if session is not None and session.n_parties != n:
        raise ValueError(f"session has {session.n_parties} parties but there are {n} records")
    # the session's stream exists before the session, whose ring depends on E (the same
    # streams as Session(seed=...)); a fresh stream per run: runs never reuse masks
    session_rng = as_rng(seed).fresh("session") if session is None else session.rng
    rng = session_rng.fresh("umpc-run")
    record_views = engine.pop("record_views")
    runtime = engine.pop("runtime", None)
    if session is not None and runtime is None:
        runtime = session.runtime

    def ring_and_spec(m, delta_max):
        nonlocal aux_fraction, kern, edge_fraction
        if given_fraction is None:      # from public parameters (ustat.umpc.release)
            aux_fraction = choose_aux_fraction(kern, n, m, delta_max) if kern.aux_names else 0.1
        assert aux_fraction is not None
        edge_fraction = choose_edge_fraction(kern, n, m, delta_max, eps) if spec.tie_aware else 0.0
        if kern.edge_aux_names and edge_fraction == 0.0:   # not worth drawing: not computed
            kern = without_edge_aux(kern)
        prec = choose_precision(kern, m=m, n=n, delta_max=delta_max, eps=eps,
                                shares=Shares(aux_fraction, edge_fraction),
                                bounds=bounds, **enc_kw,
                                session_widths=None if session is None else
                                (session.ring.bits, session.fp.frac_bits))
        s = session if session is not None else Session.derived(
            n, session_rng, bits=prec.bits, frac_bits=prec.frac_bits, record_views=record_views,
            runtime=runtime)
        return prec, s, _chunk_spec(kern, s, rng, prec, backend, record_views)

    early, prefetch = None, None        # (m, delta_max, prec, session, spec) known before E
    m = resolve_edges(edges, n, k) if hypergraph is None and sampler == "balanced" and \
        runtime is None else None
    if m is not None:
        delta_max = -(-k * m // n)      # BalancedSamp: every degree is floor or ceil of k m / n
        early = (m, delta_max) + ring_and_spec(m, delta_max)
        prefetch = start_prefetch(early[-1], _chunk_sizes(m, chunk_size), **engine)
    try:
        if hypergraph is None:
            hypergraph = _sample(sampler, edges, n, k,
                                 agreed_stream(runtime, rng.derive("hypergraph"), "hypergraph"))
        E = check_edges(hypergraph.edges, n, k)
        delta_max = int(np.bincount(E.ravel(), minlength=n).max())
        if early is None:
            prec, session, chunk_spec = ring_and_spec(E.shape[0], delta_max)
        elif early[:2] != (E.shape[0], delta_max):
            raise RuntimeError(f"BalancedSamp drew {E.shape[0]} edges of largest degree "
                               f"{delta_max}, not the {early[0]} and {early[1]} it guarantees")
        else:
            prec, session, chunk_spec = early[2:]
        assert aux_fraction is not None     # resolved by ring_and_spec
        check_no_wrap(session, kern, E.shape[0], n, delta_max, eps, aux_fraction, edge_fraction)
        return Run(kern, X, eps, session, rng, hypergraph, E, delta_max,
                   encode_records(session, X, kern, input_fp(prec)), prec, X_raw, bounds,
                   chunk_spec, prefetch, aux_fraction, edge_fraction,
                   aux_given=given_fraction is not None)
    except BaseException:
        if prefetch is not None:
            prefetch.close()
        raise


def surviving_run(run: Run, hypergraph: Hypergraph, survivors: np.ndarray) -> Run:
    """``run`` on the surviving design (``hypergraph``: E_S relabelled onto ``survivors``, the
    ids of the parties kept): their records, E_S, delta_S, and the epsilon split a run on E_S
    would choose from its public parameters (:func:`prepare_run`: the class counts' share
    unless the spec gave it, the edge sums' share). The edge sums were computed for the full
    design, so their share stays positive (the full run's if E_S's would be 0: they are
    summed, so they must be noised). The ring stays the full run's (checked not to wrap).
    O(n + k |E_S|)."""
    n, m = int(survivors.size), int(hypergraph.edges.shape[0])
    delta = int(np.bincount(hypergraph.edges.ravel(), minlength=n).max())
    kern, aux_fraction, edge_fraction = run.kern, run.aux_fraction, run.edge_fraction
    if kern.aux_names and not run.aux_given:
        aux_fraction = choose_aux_fraction(kern, n, m, delta)
    if edge_fraction > 0:
        edge_fraction = choose_edge_fraction(kern, n, m, delta, run.eps) or edge_fraction
    check_no_wrap(run.session, kern, m, n, delta, run.eps, aux_fraction, edge_fraction)
    return replace(run, X=run.X[survivors], X_raw=run.X_raw[survivors], E=hypergraph.edges,
                   delta_max=delta, hypergraph=hypergraph, aux_fraction=aux_fraction,
                   edge_fraction=edge_fraction)


def public_hypergraph(spec: UMPCSpec, n: int, runtime: Any = None) -> Hypergraph:
    """The E a run of ``spec`` on n parties draws (the same stream as :func:`prepare_run`
    without a session: a seeded spec gives the same E; across processes, ``runtime``'s
    agreed stream, the same in every process). O(k |E|)."""
    ds = spec.design
    rng = as_rng(spec.execution.seed).fresh("session").fresh("umpc-run")
    return _sample(ds.sampler, ds.edges, n, spec.kern.degree,
                   agreed_stream(runtime, rng.derive("hypergraph"), "hypergraph"))


def _chunk_sizes(m: int, chunk_size: int) -> list:
    """``(index, m_c)`` of the chunks of m edges (:meth:`ChunkInputs.bounds`)."""
    count = -(-m // chunk_size)
    return [(i, (i + 1) * m // count - i * m // count) for i in range(count)]


def _sample(sampler, edges, n, k, rng):
    if sampler == "all":
        return sampling.all_edges(n, k)
    m = resolve_edges(edges, n, k)
    return sampling.all_edges(n, k) if m is None else sampling.sample(sampler, n, m, k, rng)


def _chunk_spec(kern, s: Session, rng, prec: Precision, backend: str,
                record_views: bool) -> ChunkSpec:
    get_backend(backend).check(kern)
    return ChunkSpec(kernel=kern, bits=s.ring.bits, frac_bits=s.fp.frac_bits,
                     input_frac_bits=prec.input_frac_bits, roles=s.net.roles,
                     streams=rng.derive("chunks"), backend=backend,
                     record_views=bool(record_views or s.net.record_views))
