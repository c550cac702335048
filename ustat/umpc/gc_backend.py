"""Dealer-free computing backend ``"gc"`` of U-MPC: each k = 2 edge evaluates f by Yao's protocol.

For the m_c edges of a chunk, member 0 of every edge garbles and member 1
evaluates the kernel's circuit (:func:`ustat.umpc.circuits.circuit_for`,
derived from the kernel's secure definition, widths from the run's
:class:`~ustat.umpc.chunk.ChunkSpec`), edges batched in :func:`mpc.gc.yao.yao`
calls of up to ``MAX_EDGES_PER_CALL`` instances (one axis, no loop over edges;
the calls are parallel lanes of the network, so their rounds count once):

1. *Local* (nothing sent): each member computes its share of every circuit
   operand (a linear form of the two records' columns, e.g. x_i - x_j for
   Gini) from the additive shares it holds after the sharing step, and checks
   its own record against the domain the circuit assumes.
2. *Offline* (input-independent; phase "computing", offline): correlated OT
   for the evaluator's input bits (Chou-Orlandi base OTs when an edge needs
   fewer than 128, which every built-in kernel does: each edge is its own
   pair of parties, so no OT-extension setup is shared), then the garbled
   tables and output decoding bits (1 round).
3. *Online* (2 rounds): the evaluator's choice flips and the garbler's input
   labels, then the label corrections; the evaluator evaluates.
4. *Output*: ``yao(output="additive")``: the garbler's share is a uniform
   r in Z_2^l it fed into the circuit, the evaluator decodes f - r mod 2^l.

Cost per edge (n_and AND gates of the kernel circuit with its additive
output, about l - 1 more than the kernel's; operand widths w_1..w_t,
W = sum w_t; l ring bits): offline 256 n_and + l bits of tables and
decoding bits plus the base OTs, 264 + 392 W bits (264 for the
garbler's point, 264 per OT for the receiver's point, 128 per OT for the
correlation), in 4 rounds (3 OT, 1 tables); online 128 (W + l) + 129 W
bits in 2 rounds. :func:`edge_costs` evaluates these; the network measures
them (tests check equality). Time: dominated by the base OTs (3 elliptic-curve
scalar multiplications per OT, one Python call each).

Processes: on a chunk session linked to the run's processes
(:meth:`mpc.run.routing.Link.sub`) each member's process checks that member's
record, garbles the edges it garbles and evaluates those it evaluates
(:mod:`mpc.gc.yao`); every message carries its bytes.

Threat model: static semi-honest adversary corrupting one member of an edge
(Yao with half-gates and OT: the evaluator's view is simulatable from its
input and output share, the garbler's from its input); **no dealer**: the
correlated randomness comes from OT between the two members; private
authenticated channels. Both members hold uniform additive shares of f(x_e)
and learn nothing else. Computational security (AES-based garbling as a
tweakable circular correlation-robust hash, CDH on secp256k1 with SHA-256 as
a random oracle for the base OT). The dealer backend needs a trusted
dealer instead (FSS keys, masks, Beaver triples).
"""

from __future__ import annotations

from collections.abc import Sequence
from types import SimpleNamespace
from typing import TYPE_CHECKING

import numpy as np

from mpc.ot import DEFAULT_CROSSOVER
from mpc.ot.group import POINT_BITS
from mpc.session import Session

from .circuits import KernelCircuit, Widths, circuit_for

if TYPE_CHECKING:
    from mpc.arith.ring import FixedPoint, Ring

    from ..kernels import Kernel

_U64 = np.uint64
#: Bounds on one Yao call (garbled-table bytes, edges: the base OTs hold Python objects per OT).
TABLE_BYTES = 1 << 27
MAX_EDGES_PER_CALL = 1 << 14


class GCBackend:
    """Computing f(x_e) for k = 2 edges by Yao's garbled circuits (module docstring)."""

    name = "gc"
    trust = ("no dealer: semi-honest members; each edge's two members run Yao's garbled "
             "circuits with oblivious transfer between them (computational security)")

    def check(self, kernel: Kernel) -> None:
        """Raise ValueError unless ``kernel`` has degree 2 and a circuit (traced at l = 40)."""
        if getattr(kernel, "degree", None) != 2:
            raise ValueError(f"backend 'gc' evaluates k = 2 kernels only; kernel "
                             f"{getattr(kernel, 'name', kernel)!r} has degree "
                             f"{getattr(kernel, 'degree', None)} (use backend 'dealer')")
        circuit_for(kernel, SimpleNamespace(bits=40, frac_bits=14, input_frac_bits=14))

    def edge_costs(self, kernel: Kernel, spec: Widths) -> dict:
        """Per-edge bits, rounds, ANDs and base OTs under ``spec``'s widths (:func:`edge_costs`)."""
        return edge_costs(kernel, spec)

    def compute(self, session: Session, kernel: Kernel, holders: np.ndarray,
                x: Sequence[Sequence[np.ndarray]], input_fp: FixedPoint) -> np.ndarray:
        """Members' additive shares ``(2, m_c)`` of f(x_e), by Yao over all edges at once
        (``(1 + a, 2, m_c)``: f and its a edge sums, for a kernel with ``edge_aux_names``).

        Each call takes its garbler and evaluator streams from ``session.rng.fresh``: two
        calls on one session never reuse Delta, a label, an OT secret or the output mask.
        """
        from mpc.gc.yao import yao

        self.check(kernel)
        holders = np.asarray(holders, dtype=np.int64)
        if holders.ndim != 2 or holders.shape[0] != 2:
            raise ValueError(f"holders must have shape (2, m), got {holders.shape}")
        kc = circuit_for(kernel, _widths(session, input_fp))
        cols = np.stack([np.asarray(x[i][c], dtype=_U64) for i in range(2)
                         for c in range(kernel.columns)], axis=1)        # (2 members, 2 d, m)
        check_domain(kc, cols, session.ring, session.net.is_local(holders))
        net = session.net
        g_in, e_in = kc.operand_shares(cols[0], 0), kc.operand_shares(cols[1], 1)
        m = holders.shape[1]
        step = max(1, min(MAX_EDGES_PER_CALL, TABLE_BYTES // (32 * max(1, kc.n_and))))
        groups = 1 + len(kernel.edge_aux_names)
        out = np.empty((groups, 2, m), dtype=_U64)
        call = session.rng.fresh("gc-backend")    # a new stream per call: Delta, labels, OT
        with net.parallel():                 # sub-batches bound memory; their rounds count once
            for at in range(0, m, step):     # loop over memory blocks, not edges
                sl = slice(at, at + step)
                with net.lane():
                    res = yao(session, kc.circuit, holders[0, sl], holders[1, sl],
                              [v[sl] for v in g_in], [v[sl] for v in e_in],
                              output="additive", phase=net.current_phase[0],
                              rng_garbler=call.derive("garblers", at),
                              rng_evaluator=call.derive("evaluators", at))
                garbler, evaluator = res.garbler, res.evaluator
                assert garbler is not None and evaluator is not None   # additive: both hold one
                for g in range(groups):
                    out[g, 0, sl], out[g, 1, sl] = garbler[g], evaluator[g]
        out &= session.ring.mask
        return out[0] if groups == 1 else out


def _widths(session: Session, input_fp: FixedPoint) -> SimpleNamespace:
    return SimpleNamespace(bits=session.ring.bits, frac_bits=session.fp.frac_bits,
                           input_frac_bits=input_fp.frac_bits)


def check_domain(kc: KernelCircuit, cols: np.ndarray, ring: Ring,
                 local: bool | np.ndarray = True) -> None:
    """Each member checks its own encoded record against the circuit's domain (local).

    ``cols``: ``(2, 2 d, m)`` shares; ``local``: ``(2, m)`` mask of the
    members that run in this process (True: all). Member i split its record
    into both shares itself (the sharing step), so its process holds both
    and checks it; a member elsewhere is checked there.
    """
    d = len(kc.domain) // 2
    local = np.broadcast_to(np.asarray(local, dtype=bool), (2, cols.shape[2]))
    for c, iv in enumerate(kc.domain):
        if iv is None:
            continue
        v = ring.to_signed((cols[0, c] + cols[1, c]) & ring.mask)
        bad = np.flatnonzero(((v < iv[0]) | (v > iv[1])) & local[c // d])
        if bad.size:
            raise ValueError(
                f"records: column {c % d} of member {c // d} of edge {bad[0]} encodes to "
                f"{int(v[bad[0]])}, outside [{iv[0]}, {iv[1]}] which the gc circuit of kernel "
                f"{kc.kernel!r} assumes (numeric columns in [0, 1], categorical codes "
                f"within their levels)")


def edge_costs(kernel: Kernel, spec: Widths) -> dict:
    """Per-edge cost formula of the gc backend (bits, rounds) for ``kernel`` under ``spec``.

    Offline: garbled tables of the additive-output circuit, l decoding
    bits per output word (f, and each edge sum of the kernel), base OTs (or
    IKNP at >= 128 OTs per edge); online: labels, choice flips and
    corrections. Per-edge figures (the garbler's A point is one per edge
    here, since every edge's garbler is its own party slot).
    """
    from mpc.gc.yao import additive_circuit

    kc = circuit_for(kernel, spec)
    l = int(spec.bits) * (1 + len(kernel.edge_aux_names))      # output bits (one word each)
    W = sum(op.width for op in kc.operands)
    n_and = int(additive_circuit(kc.circuit).schedule.n_and)    # + the output's subtractor
    if W < DEFAULT_CROSSOVER:
        ot_bits = POINT_BITS + (POINT_BITS + 128) * W
    else:
        ot_bits = POINT_BITS + 128 * POINT_BITS + 128 * W
    return {
        "and_gates": n_and, "evaluator_input_bits": W, "garbler_input_bits": W + l,
        "offline_bits": 256 * n_and + l + ot_bits, "offline_ot_bits": ot_bits,
        "offline_rounds": 4, "online_bits": 128 * (W + l) + 129 * W, "online_rounds": 2,
        "base_ots": W if W < DEFAULT_CROSSOVER else 128,
    }
