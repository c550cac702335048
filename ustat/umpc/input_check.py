"""Inputs validated inside MPC (issue 39): a range check on the shares of every party's input.

The local check of :func:`ustat.umpc.inputs.validate_records` runs on a
party's own host, in the clear; a party that skips it can share any ring
element, and an arithmetic kernel (Gini's |x - y|) then contributes far beyond
its sensitivity. With ``UMPCSpec(privacy=Privacy(check_inputs=True))`` every
input is checked again on its shares before step 1, once per party and
column (not once per edge):

1. *Sharing* (phase ``input-check``, online, 1 round): party i splits each
   encoded column x_i into A_i + B_i and sends B_i to its partner p(i), the
   successor of i on a public random cycle (n d l bits).
2. *Range check*: the pair (i, p(i)) computes shares of
   ``b_i = [lo <= x_i <= hi]`` (signed reading of the ring) for the column's
   public domain (:func:`input_domain`: numeric columns [0, 2^c_in],
   categorical codes [0, levels - 1]; lo = 0 for both) with the run's
   comparison provider: the FSS interval gate (:func:`fss.gates.in_interval`,
   exact on the whole ring, 1 round) for the dealer backend with k = 2; the
   p-party comparison circuit (:func:`mpc.protocols.compare.in_interval`) for
   k > 2; a garbled circuit between i and p(i) (:mod:`ustat.umpc.gc_backend`,
   OT, no dealer) for backend ``gc``.
3. *Return* (1 round): p(i) sends its share of b_i to i (n d l bits), who
   opens b_i and enters ``c_i = b_i x_i`` (x_i = A_i + B_i, the value it
   shared) in its edges' step 1 as before.

Why zero (the domain's lower bound) rather than a clamp to the nearest
bound: both map every ring element into the domain, so the DP argument
(replacing one record moves a sum by at most delta_max Delta f) covers any
input a party supplies, and both are the identity on an in-range (honest)
input. The interval gate reads the whole ring exactly, while a clamp's two
comparisons read x - lo and x - hi, which wrap for ring elements near
2^(l-1). Nothing is opened but b_i to party i (a function of its own input:
1 when it is honest). Opening b_i to i and multiplying there gives i
exactly what a product inside MPC would (c_i, from which i reads b_i), at
half the traffic and one round less. The check consumes its own derived stream, so
the noise and the edges' randomness do not move (a seeded release keeps its
value; its bits and rounds grow by the check's).

Cost (d checked columns, l-bit ring): online 2 n d l bits of sharing and
return plus the gate's (FSS: 2 n d l for the interval gate's opening),
3 rounds; offline one DCF key per input (FSS), OT and garbled tables (gc).
Independent of |E|.

Threat model: what the check neutralizes is a party's *input*: any ring
element it shares. It assumes semi-honest computation otherwise: party i's
host enters c_i in its edges and the pair (i, p(i)) follows the gate; a host
that deviates after the check (shares another value, shifts a share or its
running sum in step 4) is not stopped (docs/security.md, the threat-model
table). Input privacy: x_i stays hidden from p(i) alone (and the dealer
alone, which sees only masks); p(i) colluding with the dealer learns x_i,
as an edge member colluding with the dealer already does.
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING

import numpy as np

from mpc.arith.rng import CSPRNG
from mpc.session import Session

from ..secure import SecureOps

if TYPE_CHECKING:
    from ..kernels import Kernel

__all__ = ["check_inputs", "input_domain", "neutralized", "partners"]

PHASE = "input-check"


def input_domain(kern: Kernel, input_frac_bits: int) -> list:
    """The public interval ``(lo, hi)`` of each encoded column (None: no public domain).

    Numeric columns: [0, 2^input_frac_bits] (records normalized to [0, 1]);
    categorical columns with ``kern.extra["levels"]``: [0, levels - 1]; other
    categorical columns: None (not checked).
    """
    levels = kern.extra.get("levels", {})
    out: list = []
    for c in range(kern.columns):
        if c not in kern.categorical:
            out.append((0, 1 << int(input_frac_bits)))
        elif c in levels:
            out.append((0, int(levels[c]) - 1))
        else:
            out.append(None)
    return out


def neutralized(enc: np.ndarray, domain: list, bits: int) -> np.ndarray:
    """The plain reference of the check: ``(n, d)`` encodings with every value outside its
    column's domain (signed reading of Z_2^bits) replaced by 0."""
    enc = np.asarray(enc, dtype=np.uint64)
    out = enc.copy()
    half = 1 << (bits - 1)
    signed = enc.astype(np.int64) - np.where(enc >= np.uint64(half), 1 << bits, 0) \
        if bits < 64 else enc.view(np.int64)
    for c, iv in enumerate(domain):
        if iv is not None:
            out[:, c] = np.where((signed[:, c] >= iv[0]) & (signed[:, c] <= iv[1]), enc[:, c], 0)
    return out


def check_inputs(session: Session, enc: np.ndarray, kern: Kernel, input_frac_bits: int,
                 backend: str, rng: CSPRNG) -> np.ndarray:
    """Each party's ``(n, d)`` encoded inputs, range-checked on shares (module docstring).

    ``session``: the run's session (its ring; its network counts the check,
    phase ``input-check``); ``kern``: the kernel (its columns' domains, its
    degree picks the dealer's comparison provider); ``backend``: ``"dealer"``
    or ``"gc"``; ``rng``: a stream for the check alone (masks, keys, labels).
    Returns what each party's edges use: ``enc`` where in range, 0 elsewhere.
    Cost: module docstring (3 rounds, 4 n d l online bits with FSS).
    """
    enc = np.asarray(enc, dtype=np.uint64)
    n, d = enc.shape
    domain = input_domain(kern, input_frac_bits)
    cols = [c for c in range(d) if domain[c] is not None]
    if not cols:
        return enc
    net, ring = session.net, session.ring
    roles = tuple(net.roles)
    link = net.link
    sub = Session.derived(n, rng.derive("session"), bits=ring.bits,
                          frac_bits=session.fp.frac_bits, roles=roles,
                          record_views=net.record_views, workers=getattr(session, "workers", None),
                          link=None if link is None else link.sub(np.concatenate(
                              [np.arange(n), [net.role(r) for r in roles]])))
    partner = partners(session, rng, n)
    x = enc[:, cols]
    lo = np.array([domain[c][0] for c in cols], dtype=np.int64)
    hi = np.array([domain[c][1] for c in cols], dtype=np.int64)
    with sub.net.phase(PHASE):
        mine = rng.derive("shares").ring_elements(ring, x.shape)         # A_i, kept by i
        theirs = sub.net.send(np.arange(n), partner, ring.sub(x, mine), ring.bits)  # B_i
        holders = np.stack([np.arange(n), partner])
        if backend == "gc":
            b0, b1 = _gc_check(sub, holders, mine, theirs, lo, hi)
        else:
            b0, b1 = _dealer_check(sub, holders, mine, theirs, lo, hi, kern.degree)
        b1 = sub.net.send(partner, np.arange(n), np.ascontiguousarray(b1), ring.bits)
    net.absorb(sub.net.traffic(), np.arange(n))
    out = enc.copy()
    out[:, cols] = np.where(ring.add(b0, b1) == 1, x, np.uint64(0))   # b_i x_i at party i
    return out


def partners(session: Session, rng: CSPRNG, n: int) -> np.ndarray:
    """The public random cycle of the check: ``partner[i]`` = p(i), the party that holds
    B_i (``rng``: the stream :func:`check_inputs` is given; every process agrees)."""
    order = session.agreed(rng.derive("cycle")).permutation(n)
    partner = np.empty(n, dtype=np.int64)
    partner[order] = np.roll(order, -1)
    return partner


def _dealer_check(sub, holders, a, b, lo, hi, degree):
    """Shares of [lo <= x <= hi] on the pairs' shares: FSS (k = 2 runs) or the p-party
    circuit, one interval gate for all n d inputs at once; (i's, p(i)'s) halves (n, d)."""
    n, d = a.shape
    ops = SecureOps(sub, np.tile(holders, (1, d)), "fss" if degree == 2 else "circuit")
    x = np.stack([a.T.ravel(), b.T.ravel()])                     # column-major batch (2, d n)
    inside = ops.in_interval(x, np.repeat(lo, n), np.repeat(hi, n))  # type: ignore[arg-type]
    return inside[0].reshape(d, n).T, inside[1].reshape(d, n).T


def _gc_check(sub, holders, a, b, lo, hi):
    """The same on a garbled circuit between i (garbler) and p(i) (evaluator), no dealer."""
    from .chunk import get_backend

    n, d = a.shape
    kern = _check_kernel(tuple(int(v) for v in lo), tuple(int(v) for v in hi))
    zero = np.zeros(n, dtype=np.uint64)
    x = [[np.stack([a[:, c], zero]) for c in range(d)],          # "record" 0: A_i, held by i
         [np.stack([zero, b[:, c]]) for c in range(d)]]          # "record" 1: B_i, by p(i)
    out = get_backend("gc").compute(sub, kern, holders, x, sub.fp)
    out = out.reshape(d, 2, n)
    return out[:, 0].T, out[:, 1].T


@functools.lru_cache(maxsize=16)
def _check_kernel(lo: tuple, hi: tuple) -> Kernel:
    """The check as a k = 2 'kernel' on (A, B) for the circuit tracer (one output per column;
    columns marked categorical without levels: the circuit assumes nothing about them)."""
    from ..kernels import Kernel

    d = len(lo)

    def secure_all(ops, x):
        outs = []
        for c in range(d):
            v = ops.add(x[0][c], x[1][c])
            outs.append(ops.in_interval(v, lo[c], hi[c]))
        return outs

    def plain(X):
        raise NotImplementedError("the input check has no plain kernel")

    return Kernel(f"input-check-{d}-{lo}-{hi}", 2, d, plain,
                  lambda ops, x: secure_all(ops, x)[0], (0.0, 1.0),
                  categorical=tuple(range(d)),
                  edge_aux_names=tuple(f"column-{c}" for c in range(1, d)),
                  secure_with_aux=secure_all if d > 1 else None,
                  edge_aux_plain=plain if d > 1 else None)
