"""The OT engine behind :mod:`mpc.ot.protocols`: grouping, the rounds, the last step.

See :mod:`mpc.ot.protocols` for the protocol, its costs and threat model.
Each step sends inside its round block and the receivers read what arrived
after the block (their payload arrays are filled in place in a run of
several processes); work whose party runs elsewhere is skipped where it is
expensive (curve operations, the IKNP matrices).
Inputs here are already validated; outputs are in *grouped flat order* (the
instances sorted by ordered pair, then their m OTs) and
:meth:`_Plan.unflat` puts them back in the caller's (P, m) order. A call is
:func:`run` with the pairs and their randomness, a :class:`Request` (what
the call computes: the kind of OT and its inputs) and :class:`Options` (how
it runs: method, crossover, curve group, offline counting).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from mpc.ot.base import BaseOTBatch
from mpc.ot.group import SCALAR_RAW_BYTES, get_group
from mpc.ot.iknp import KAPPA, Layout, receiver_matrix, rows, send_u, sender_matrix
from mpc.ot.messages import Landing, send_groups
from mpc.ot.prg import expand_keys, hash_rows

if TYPE_CHECKING:
    from mpc.arith.rng import CSPRNG
    from mpc.session import Session

_U64 = np.uint64


@dataclass(frozen=True)
class Request:
    """What one call computes: the ``kind`` of OT and the inputs that kind needs.

    ``kind``: "random", "chosen" or "correlated"; ``length``: bytes per
    message (random and chosen OT); ``delta`` (uint8 ``(P, 16)``) and
    ``distinct_deltas`` (None, or True when every instance has its own delta):
    correlated OT; ``m0``, ``m1`` (uint8 ``(P, m, L)``): chosen OT.
    """

    kind: str
    length: int = 16
    delta: np.ndarray | None = None
    distinct_deltas: bool | None = None
    m0: np.ndarray | None = None
    m1: np.ndarray | None = None


@dataclass(frozen=True)
class Options:
    """How one call runs: ``method`` ("auto", "base" or "iknp"), the IKNP
    ``crossover`` (OTs per pair), the base OT's curve ``group`` (None: the
    default backend) and ``offline`` (None: the caller's phase decides)."""

    method: str
    crossover: int
    group: str | None = None
    offline: bool | None = None


class _Plan:
    """Grouping of the P instances by ordered pair and the method per group."""

    def __init__(self, net, senders, receivers, m, method, crossover):
        key = senders * net.size + receivers
        uniq, inv, cnt = np.unique(key, return_inverse=True, return_counts=True)
        self.order = np.argsort(inv, kind="stable")
        self.gs, self.gr = uniq // net.size, uniq % net.size
        self.M = cnt.astype(np.int64) * m
        self.m = m
        if method == "auto":
            self.iknp = crossover <= self.M
        else:
            self.iknp = np.full(uniq.size, method == "iknp")
        self.cnt = cnt
        self.first_inst = np.concatenate([[0], np.cumsum(cnt)[:-1]])
        self.ot_iknp = np.repeat(self.iknp, self.M)          # per OT, grouped flat order

    def flat(self, arr: np.ndarray) -> np.ndarray:
        """Instance-axis array ``(P, m, ...)`` in grouped flat order ``(P m, ...)``."""
        return arr[self.order].reshape((-1,) + arr.shape[2:])

    def unflat(self, flat: np.ndarray) -> np.ndarray:
        """Grouped flat order back to the caller's ``(P, m, ...)``."""
        if self.order.size == 1 or np.array_equal(self.order, np.arange(self.order.size)):
            return flat.reshape((self.order.size, self.m) + flat.shape[1:])
        out = np.empty((self.order.size, self.m) + flat.shape[1:], dtype=flat.dtype)
        out[self.order] = flat.reshape((self.order.size, self.m) + flat.shape[1:])
        return out

    def uniform_delta(self, delta: np.ndarray, distinct: bool | None = None) -> np.ndarray:
        """Per group: do all its instances share one delta?

        ``distinct=True``: every instance has its own delta, so only groups of
        one instance share one (public: no delta value read); None: read
        from ``delta``, which must then hold the same pattern in every process.
        """
        if distinct:
            return self.cnt == 1
        d = delta[self.order]
        same = np.all(d == d[np.repeat(self.first_inst, self.cnt)], axis=1)
        return np.logical_and.reduceat(same, self.first_inst)


def _draw_scalars(rng, count):
    return rng.bytes_array(count * SCALAR_RAW_BYTES).reshape(count, SCALAR_RAW_BYTES)


def _contiguous(idx: np.ndarray):
    """A sorted index array as a slice when it is a run of consecutive positions."""
    if idx.size and int(idx[-1]) - int(idx[0]) + 1 == idx.size:
        return slice(int(idx[0]), int(idx[-1]) + 1)
    return idx


def run(session: Session, senders: np.ndarray, receivers: np.ndarray, choices: np.ndarray,
        rng_sender: CSPRNG, rng_receiver: CSPRNG, request: Request,
        options: Options) -> tuple[_Plan, _Outputs]:
    """The protocol for validated inputs; returns ``(plan, outputs)`` in grouped flat order."""
    kind, length, delta = request.kind, request.length, request.delta
    offline = options.offline
    net = session.net
    plan = _Plan(net, senders, receivers, choices.shape[1], options.method, options.crossover)
    c = plan.flat(choices)
    dg, ig = np.flatnonzero(~plan.iknp), np.flatnonzero(plan.iknp)
    D, I = np.flatnonzero(~plan.ot_iknp), np.flatnonzero(plan.ot_iknp)
    # IKNP correlation s per IKNP group: delta itself where a correlated OT allows it.
    raw_groups = np.zeros(ig.size, dtype=bool)
    s_bytes = rng_sender.bytes_array(16 * ig.size).reshape(ig.size, 16)
    if kind == "correlated" and ig.size:
        assert delta is not None, "a correlated OT has its deltas"
        raw_groups = plan.uniform_delta(delta, request.distinct_deltas)[ig]
        s_bytes[raw_groups] = delta[plan.order[plan.first_inst[ig[raw_groups]]]]
    s_bits = np.unpackbits(s_bytes, axis=1, bitorder="little")
    k0_base, k1_base, kc_base = _base_ots(net, plan, get_group(options.group), dg, ig, c[D],
                                          s_bits, rng_sender, rng_receiver, offline)
    out = _Outputs(kind, c.size, length)
    ctx = dict(net=net, plan=plan, kind=kind, offline=offline, delta=delta, m0=request.m0,
               m1=request.m1, length=length, out=out)
    nd = D.size
    landing, received = Landing(), None
    with net.round():
        if ig.size:
            layout = Layout(plan.M[ig])
            t_mat, u = _receiver_step(net, plan.gr[ig], k0_base[nd:], k1_base[nd:], c[I], layout)
            send_u(net, plan.gr[ig], plan.gs[ig], u, layout, offline=offline, landing=landing)
        if nd:
            received = _finish(ctx, D, dg, c[D], k0_base[:nd], k1_base[:nd], kc_base[:nd],
                               landing)
    landing.land()
    if received is not None:
        received()
    if ig.size:
        if np.any(net.is_local(plan.gs[ig])):         # S's step 3, from the u it received
            q_mat = sender_matrix(kc_base[nd:].reshape(-1, KAPPA, 16), s_bits, u, layout)
            q = rows(q_mat, layout)
        else:
            q = np.zeros((I.size, 16), dtype=np.uint8)
        _iknp_outputs(ctx, c, I, ig, raw_groups, s_bytes, q, rows(t_mat, layout))
    return plan, out


def _receiver_step(net, receivers, k0, k1, r, layout):
    """R's step 2 (t, u) where an IKNP receiver runs here; zeros (u to be received) elsewhere."""
    if np.any(net.is_local(receivers)):
        return receiver_matrix(k0.reshape(-1, KAPPA, 16), k1.reshape(-1, KAPPA, 16), r, layout)
    shape = (KAPPA, layout.n_blocks, 2)
    return np.zeros(shape, dtype=_U64), np.zeros(shape, dtype=_U64)


def _base_ots(net, plan, grp, dg, ig, c_direct, s_bits, rng_sender, rng_receiver, offline):
    """Rounds 1-2: one Chou-Orlandi batch for the direct groups (S -> R, the real
    choices) and the IKNP groups (R -> S, choices s); returns ``(k0, k1, kc)``."""
    base = BaseOTBatch(grp, np.concatenate([plan.gs[dg], plan.gr[ig]]),
                       np.concatenate([plan.gr[dg], plan.gs[ig]]),
                       np.concatenate([2 * plan.gs[dg], 2 * plan.gr[ig] + 1]),
                       np.concatenate([plan.M[dg], np.full(ig.size, KAPPA, np.int64)]))
    raw_a = np.empty((base.n_senders, SCALAR_RAW_BYTES), dtype=np.uint8)
    odd = base.sender_roles == 1                  # base senders that are OT receivers
    raw_a[~odd] = _draw_scalars(rng_sender, int((~odd).sum()))
    raw_a[odd] = _draw_scalars(rng_receiver, int(odd.sum()))
    with net.round():
        base.send_a(net, raw_a, offline)
    raw_b = np.concatenate([_draw_scalars(rng_receiver, c_direct.size),
                            _draw_scalars(rng_sender, ig.size * KAPPA)])
    with net.round():
        kc = base.choose(net, np.concatenate([c_direct, s_bits.reshape(-1)]), raw_b, offline)
    k0, k1 = base.sender_keys()                   # from the B points received
    return k0, k1, kc


def _iknp_outputs(ctx, c, I, ig, raw_groups, s_bytes, q, t):
    """IKNP rows to outputs: raw rows (correlated, one delta) or hashed keys + last step."""
    plan, out, net = ctx["plan"], ctx["out"], ctx["net"]
    if raw_groups.all():
        sel = _contiguous(I)
        out.a[sel], out.b[sel] = q, t
        return
    if raw_groups.any():
        raw_ot = np.repeat(raw_groups, plan.M[ig])
        out.a[I[raw_ot]], out.b[I[raw_ot]] = q[raw_ot], t[raw_ot]
        keyed = ~raw_ot
        idx, q, t = I[keyed], q[keyed], t[keyed]
        s_ot = np.repeat(s_bytes[~raw_groups], plan.M[ig[~raw_groups]], axis=0)
    else:
        idx = I
        s_ot = s_bytes if ig.size == 1 else np.repeat(s_bytes, plan.M[ig], axis=0)
    qw = np.ascontiguousarray(q).view(_U64)
    k0 = hash_rows(qw, idx).view(np.uint8).reshape(-1, 16)
    k1 = hash_rows(qw, idx, offset=s_ot.view(_U64)).view(np.uint8).reshape(-1, 16)
    kc = hash_rows(np.ascontiguousarray(t).view(_U64), idx).view(np.uint8).reshape(-1, 16)
    landing = Landing()
    with net.round():
        received = _finish(ctx, idx, ig[~raw_groups], c[idx], k0, k1, kc, landing)
    landing.land()
    if received is not None:
        received()


class _Outputs:
    """Flat output buffers: (a, b, c) = (m0, m1, m_c) / (-, -, m_c) / (q, t, -)."""

    def __init__(self, kind, n, length):
        width = 16 if kind == "correlated" else length
        # which buffers exist depends on the kind (None: not an output of it)
        self.a: Any = np.empty((n, width), np.uint8) if kind != "chosen" else None
        self.b: Any = np.empty((n, width), np.uint8) if kind != "chosen" else None
        self.c: Any = np.empty((n, width), np.uint8) if kind != "correlated" else None


def _finish(ctx, idx, groups, c, k0, k1, kc, landing):
    """Last step for the OTs ``idx`` (of the groups ``groups``) from their keys.

    Sends the sender's message inside the caller's round and returns the
    receiver's part, to run after the round (None when nothing is sent).
    """
    net, plan, kind, out = ctx["net"], ctx["plan"], ctx["kind"], ctx["out"]
    counts = plan.M[groups]
    sel = _contiguous(idx)
    L = ctx["length"]
    if kind == "random":
        out.a[sel], out.b[sel] = expand_keys(k0, L, idx), expand_keys(k1, L, idx)
        out.c[sel] = expand_keys(kc, L, idx)
        return None
    inst = plan.order[idx // plan.m]
    if kind == "correlated":
        d = k0 ^ k1 ^ ctx["delta"][inst]
        send_groups(net, plan.gs[groups], plan.gr[groups], d, counts, offline=ctx["offline"],
                    landing=landing)
        out.a[sel] = k0

        def received():
            out.b[sel] = kc ^ (d * c[:, None])
        return received
    j = idx % plan.m
    y = np.empty((idx.size, 2, L), dtype=np.uint8)
    np.bitwise_xor(ctx["m0"][inst, j], expand_keys(k0, L, idx), out=y[:, 0])
    np.bitwise_xor(ctx["m1"][inst, j], expand_keys(k1, L, idx), out=y[:, 1])
    send_groups(net, plan.gs[groups], plan.gr[groups], y, counts, offline=ctx["offline"],
                landing=landing)

    def received_chosen():
        out.c[sel] = y[np.arange(idx.size), c] ^ expand_keys(kc, L, idx)
    return received_chosen
