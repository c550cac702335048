"""Yao's two-party protocol, batched over P instances, in one process or several.

Instance ``p`` is run between garbler ``garblers[p]`` and evaluator
``evaluators[p]`` (many instances may share a pair; a party may garble some
instances and evaluate others). Threat model: **semi-honest** garbler and
evaluator, **no dealer** (the correlated randomness comes from oblivious
transfer between the two), private authenticated channels (the network's).
Security: the evaluator's view is simulatable from its input and output
(half-gates privacy, :mod:`mpc.gc.garble`, plus OT receiver security); the
garbler's view (OT sender's view, choice flips ``d = y ^ b`` with uniform
``b``) is independent of the evaluator's input.

Protocol (evaluator input bits ``y``, m per instance; garbler input bits ``x``):

Offline (input-independent, phase ``phase`` with ``offline=True``):
  1. The garbler draws ``Delta_p`` (lsb 1) per instance.
  2. Random correlated OT (:func:`mpc.ot.correlated_ot`, garbler = OT
     sender): the evaluator picks uniform choice bits ``b`` and gets
     ``t = q ^ b Delta``; the garbler gets ``q``.
  3. The garbler garbles the circuit (:func:`mpc.gc.garble.garble`) and
     sends the tables (1 round); for outputs the evaluator decodes, the
     decoding bits go in the same round.
Online:
  4. Round 1: the evaluator sends ``d = y ^ b`` (1 bit per input bit); the
     garbler sends its active input labels ``X0 ^ x Delta`` (128 bits each).
  5. Round 2: the garbler sends ``e = Y0 ^ q ^ d Delta`` (128 bits per
     evaluator input bit); the evaluator's label is ``t ^ e = Y0 ^ y Delta``
     (Beaver's OT precomputation applied to labels).
  6. The evaluator evaluates; outputs (``output=``):
       "evaluator": decoded with the offline decoding bits (no round);
       "garbler":   the evaluator sends the permute bits (1 bit each, round 3);
       "both":      the evaluator decodes and sends the bits (round 3);
       "xor":       XOR shares: the garbler keeps the decoding bits, the
                    evaluator the permute bits (no message);
       "additive":  shares in Z_2^w per output group of width w <= 64: the
                    circuit is extended (:func:`additive_circuit`) with a
                    garbler input ``r`` (uniform) and outputs ``f - r mod 2^w``
                    to the evaluator; the garbler's share is ``r``
                    (w - 1 more ANDs and w more garbler labels per group).

Processes (:mod:`mpc.run.runtime`): every message carries its payload (tables
and labels as ``uint64`` words, choice flips and output bits as bits, the
OT's bytes) and is read after its round. The garbler's process draws Delta,
the labels and r and garbles its instances (:mod:`mpc.gc.local`); the
evaluator's gets the tables, decoding bits and labels in placeholder arrays
and evaluates its instances. In a process, the outputs of a party held
elsewhere are meaningless; each party's own are exact.

Cost per instance (n_and AND gates, g garbler / m evaluator input bits, o
output bits): offline 256 n_and bits of tables + o decoding bits (modes
evaluator/both/additive) + the OT's traffic for m correlated OTs (as the OT
code sends it), 1 round + the OT's rounds; online 128 g + 129 m bits, 2
rounds (+ o bits and 1 round for "garbler"/"both"). Computation: 8 AES
blocks per AND to garble, 4 to evaluate, on ``session.workers`` threads
(None: all cores for large batches; :func:`mpc.gc.garble.garble`).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import ArrayLike

from mpc.comm.costs import Costs, Meter
from mpc.gc.builder import CircuitBuilder
from mpc.gc.circuit import Circuit
from mpc.gc.encoding import bits_to_int, group_bits, int_to_bits
from mpc.gc.garble import as_labels, garble, label_bytes, lsb, random_delta, xor_where
from mpc.gc.gates import EVALUATOR, GARBLER
from mpc.gc.local import evaluate_local, garble_local

if TYPE_CHECKING:
    from mpc.arith.rng import CSPRNG
    from mpc.session import Session

#: A correlated-OT function with the signature of :func:`mpc.ot.correlated_ot`.
OTFunction = Callable[..., tuple[np.ndarray, np.ndarray]]

OUTPUT_MODES = ("evaluator", "garbler", "both", "xor", "additive")
_ZERO = {"bits": 0, "messages": 0, "rounds": 0}
_U64 = np.uint64


@dataclass(frozen=True)
class YaoResult:
    """Outputs of P instances and the costs of the call.

    ``garbler``/``evaluator``: one entry per output group with what that
    party ends with (``None`` if nothing): bits ``uint8 (P, w)`` for decoded
    outputs and XOR shares, ``uint64 (P,)`` for additive shares in Z_2^w.
    ``costs``: a :class:`mpc.comm.costs.Costs` of this call (what it added to the
    network: bits, messages, rounds, per party, wall time), with in
    ``costs.extra`` (also ``costs[key]``) ``formula`` (bits per item, from
    the sizes), ``per_instance`` and ``measured`` (bits and rounds, OT apart).
    """

    output: str
    garbler: list | None
    evaluator: list | None
    costs: Costs = field(default_factory=lambda: Costs(0, _ZERO, _ZERO, {}, 0))

    def value(self, group: int = 0, *, signed: bool = False) -> np.ndarray | list[int]:
        """The output of ``group`` as integers: decoded bits, XOR or additive shares combined."""
        g, e = self.garbler, self.evaluator
        if self.output == "additive":
            assert g is not None and e is not None, "additive shares go to both"
            w = self.widths[group]
            mask = _U64((1 << w) - 1) if w < 64 else ~_U64(0)
            v = (g[group] + e[group]) & mask
            if signed:
                return bits_to_int(int_to_bits(v, w), signed=True)
            return v
        if self.output == "xor":
            assert g is not None and e is not None, "XOR shares go to both"
            bits = g[group] ^ e[group]
        else:
            held = e or g
            assert held is not None, "a decoded output goes to one party at least"
            bits = held[group]
        return bits_to_int(bits, signed=signed)

    @property
    def widths(self) -> tuple:
        return self.costs.get("output_widths", ())


def yao(session: Session, circuit: Circuit, garblers: ArrayLike, evaluators: ArrayLike,
        garbler_inputs: ArrayLike | Sequence[ArrayLike] = (),
        evaluator_inputs: ArrayLike | Sequence[ArrayLike] = (), *, output: str = "evaluator",
        phase: str = "yao", ot: OTFunction | None = None, rng_garbler: CSPRNG | None = None,
        rng_evaluator: CSPRNG | None = None) -> YaoResult:
    """Run P instances of ``circuit`` by Yao's protocol (see the module docstring).

    Parameters
    ----------
    session : mpc.session.Session
    circuit : Circuit with ``input_parties`` set (``Circuit.with_parties``)
    garblers, evaluators : int arrays ``(P,)`` of party ids, ``garblers[p] != evaluators[p]``
    garbler_inputs, evaluator_inputs : one value per input group of that
        party, in circuit order: bits ``(P, w)`` or integers ``(P,)`` (w <= 64)
    output : one of ``OUTPUT_MODES``
    phase : network phase name (offline traffic under the same name, offline)
    ot : correlated-OT function with the signature of
        ``mpc.ot.correlated_ot`` (default: that function)
    rng_garbler, rng_evaluator : CSPRNGs of the garblers / evaluators
        (default: fresh streams derived from ``session.rng``)

    Returns a :class:`YaoResult`. Threat model: semi-honest garbler and
    evaluator, no dealer (OT between the two). Cost: module docstring;
    measured in ``result.costs["measured"]``.
    """
    if output not in OUTPUT_MODES:
        raise ValueError(f"output must be one of {OUTPUT_MODES}, got {output!r}")
    if not isinstance(circuit, Circuit):
        raise TypeError(f"circuit must be a Circuit, got {type(circuit).__name__}")
    g_ids, e_ids = _check_pairs(session, garblers, evaluators)
    P = g_ids.size
    g_groups, e_groups = circuit.party_groups(GARBLER), circuit.party_groups(EVALUATOR)
    x_bits, _ = group_bits(garbler_inputs, [circuit.input_widths[i] for i in g_groups],
                           "garbler_inputs", P)
    y_bits, _ = group_bits(evaluator_inputs, [circuit.input_widths[i] for i in e_groups],
                           "evaluator_inputs", P)
    if ot is None:
        from mpc.ot import correlated_ot
        ot = functools.partial(correlated_ot, distinct_deltas=True)   # a Delta per instance
    tag = session.rng.random_bytes(16)
    rng_g = rng_garbler if rng_garbler is not None else session.rng.derive("yao-garbler", tag)
    rng_e = rng_evaluator if rng_evaluator is not None else session.rng.derive("yao-evaluator",
                                                                               tag)
    run_circuit = circuit
    if output == "additive":
        if max(circuit.output_widths, default=0) > 64:
            raise ValueError("output='additive' needs output groups of at most 64 bits")
        run_circuit = additive_circuit(circuit)
        r = [rng_g.uint64(P) & _U64((1 << w) - 1 if w < 64 else ~_U64(0))
             for w in circuit.output_widths]
        x_bits = x_bits + [int_to_bits(v, w) for v, w in zip(r, circuit.output_widths)]
        g_groups = run_circuit.party_groups(GARBLER)
    run = _Run(session, run_circuit, g_ids, e_ids, g_groups, e_groups, phase)
    with Meter(session.net, session.placement.n_procs) as meter:
        run.offline(y_bits, ot, rng_g, rng_e, decode_to_evaluator=output in
                    ("evaluator", "both", "additive"))
        out_labels = run.online(x_bits, y_bits)
        garb, evl = run.outputs(out_labels, output)
    if output == "additive":
        assert evl is not None, "additive outputs reach the evaluator"
        garb = r
        evl = [bits_to_int(b) for b in evl]
    costs = meter.costs
    costs.extra = run.costs(output, circuit.output_widths)
    costs.extra["measured"] = costs.since(Costs(0, _ZERO, _ZERO, {}, 0))
    costs.extra["measured"]["ot"] = run.ot_measured
    return YaoResult(output, garb, evl, costs)


class _Run:
    """One batched execution: the garbler's and evaluator's state between the steps."""

    def __init__(self, session, circuit, g_ids, e_ids, g_groups, e_groups, phase):
        self.s, self.net, self.c = session, session.net, circuit
        self.g, self.e = g_ids, e_ids
        self.g_groups, self.e_groups = g_groups, e_groups
        self.phase = phase
        self.P = g_ids.size
        self.m = sum(circuit.input_widths[i] for i in e_groups)

    def offline(self, y_bits: list[np.ndarray], ot: OTFunction, rng_g: CSPRNG, rng_e: CSPRNG,
                decode_to_evaluator: bool) -> None:
        net, P, m = self.net, self.P, self.m
        self.delta = random_delta(rng_g, P)
        before = _totals(net)
        with net.phase(self.phase, offline=True):
            if m:
                self.b = rng_e.bits((P, m))
                q, t = ot(self.s, self.g, self.e, self.b, label_bytes(self.delta),
                          rng_sender=rng_g, rng_receiver=rng_e)
                self.q = _check_ot(q, (P, m), "q")
                self.t = _check_ot(t, (P, m), "t")
            after = _totals(net)
            self.ot_measured = {k: after["offline"][k] - before["offline"][k]
                                for k in after["offline"]}
            self.garbled, self.keys = garble_local(self.c, self.delta, rng_g,
                                                   net.is_local(self.g), workers=self.s.workers,
                                                   garble_fn=garble)
            with net.round():
                net.send(self.g, self.e, self.garbled.per_instance(), 64)
                if decode_to_evaluator:
                    self.decode_e = net.send(self.g, self.e, self.keys.decode_bits, 1)

    def online(self, x_bits: list[np.ndarray], y_bits: list[np.ndarray]) -> np.ndarray:
        net, keys = self.net, self.keys
        with net.phase(self.phase):
            with net.round():
                x_lab = [net.send(self.g, self.e, keys.encode(gi, xb), 64)
                         for gi, xb in zip(self.g_groups, x_bits)]
                if self.m:
                    y = np.concatenate(y_bits, axis=1)
                    d = net.send(self.e, self.g, y ^ self.b, 1)
            if self.m:
                y0 = np.concatenate([keys.group_zero(gi) for gi in self.e_groups], axis=1)
                e = xor_where(y0, d, self.delta)
                np.bitwise_xor(e, self.q, out=e)
                with net.round():
                    net.send(self.g, self.e, e, 64)
                y_lab = self.t ^ e
                widths = [self.c.input_widths[i] for i in self.e_groups]
                y_parts = np.split(y_lab, np.cumsum(widths)[:-1], axis=1)
            else:
                y_parts = []
        labels: list[Any] = [None] * len(self.c.inputs)
        for gi, lab in zip(self.g_groups, x_lab):
            labels[gi] = lab
        for gi, lab in zip(self.e_groups, y_parts):
            labels[gi] = lab
        return evaluate_local(self.garbled, labels, net.is_local(self.e),
                              workers=self.s.workers)

    def outputs(self, out_labels: np.ndarray, mode: str) -> tuple[list | None, list | None]:
        net, widths = self.net, self.c.output_widths
        perm = lsb(out_labels)
        split = functools.partial(_split, widths=widths)
        if mode == "xor":
            return split(self.keys.decode_bits), split(perm)
        if mode in ("evaluator", "both", "additive"):
            bits = perm ^ self.decode_e
            if mode == "both":
                with net.phase(self.phase), net.round():
                    net.send(self.e, self.g, bits, 1)
                return split(bits), split(bits)
            return None, split(bits)
        with net.phase(self.phase), net.round():
            sent = net.send(self.e, self.g, perm, 1)
        return split(sent ^ self.keys.decode_bits), None

    def costs(self, mode: str, widths: Sequence[int]) -> dict[str, Any]:
        P, sched = self.P, self.c.schedule
        n_out = self.c.n_output_bits
        g_bits = sum(self.c.input_widths[i] for i in self.g_groups)
        per = {
            "tables": 256 * sched.n_and,
            "decoding_bits": n_out if mode in ("evaluator", "both", "additive") else 0,
            "garbler_labels": 128 * g_bits,
            "choice_flips": self.m,
            "label_corrections": 128 * self.m,
            "output_bits": n_out if mode in ("garbler", "both") else 0,
        }
        return {
            "instances": P, "n_and": sched.n_and, "garbler_input_bits": g_bits,
            "evaluator_input_bits": self.m, "output_widths": tuple(widths),
            "per_instance": per,
            "formula": {
                "offline_bits_without_ot": P * (per["tables"] + per["decoding_bits"]),
                "online_bits": P * (per["garbler_labels"] + per["choice_flips"]
                                    + per["label_corrections"] + per["output_bits"]),
                "online_rounds": (0 if P == 0 else (1 if g_bits or self.m else 0)
                                  + (1 if self.m else 0) + (1 if per["output_bits"] else 0)),
            },
        }


@functools.lru_cache(maxsize=64)
def additive_circuit(circuit: Circuit) -> Circuit:
    """``circuit`` with one more garbler input ``r_j`` per output group j and outputs ``f_j - r_j``.

    Used by ``output="additive"``: decoding ``f_j - r_j`` to the evaluator
    leaves additive shares ``(r_j, f_j - r_j)`` of ``f_j`` in Z_2^w (w the
    group's width). Costs w - 1 ANDs per group (the subtractor).
    """
    if circuit.input_parties is None:
        raise ValueError("circuit must have input parties (Circuit.with_parties)")
    b = CircuitBuilder(circuit.name + "-additive")
    ins = [b.input(w, party=p) for w, p in zip(circuit.input_widths, circuit.input_parties)]
    outs = b.embed(circuit, *ins)
    rs = [b.input(o.width, party=GARBLER) for o in outs]
    for o, r in zip(outs, rs):
        b.output(o - r)
    return b.build()


def _split(bits, widths):
    return np.split(bits, np.cumsum(widths)[:-1], axis=1) if len(widths) else []


def _check_pairs(session, garblers, evaluators):
    g = np.asarray(garblers)
    e = np.asarray(evaluators)
    for arr, name in ((g, "garblers"), (e, "evaluators")):
        if arr.dtype.kind not in "iu" or arr.ndim != 1:
            raise ValueError(f"{name} must be a 1-d integer array of party ids")
        if arr.size and (arr.min() < 0 or arr.max() >= session.net.size):
            raise ValueError(f"{name} contains an id outside 0..{session.net.size - 1}")
    if g.shape != e.shape:
        raise ValueError(f"garblers and evaluators must have the same length, "
                         f"got {g.size} and {e.size}")
    if np.any(g == e):
        raise ValueError("garblers[p] and evaluators[p] must differ in every instance")
    return g.astype(np.int64), e.astype(np.int64)


def _check_ot(x, shape, name):
    lab = as_labels(x, f"OT output {name}")
    if lab.shape != shape + (2,):
        raise ValueError(f"OT output {name} must have shape {shape + (16,)}, got {np.shape(x)}")
    return lab


def _totals(net) -> dict:
    rep = net.report()
    return {k: {"bits": rep[k]["bits"], "rounds": rep[k]["rounds"]}
            for k in ("online", "offline")}
