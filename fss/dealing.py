"""The dealer's side of the FSS gates (:mod:`fss.gates`): masks, output masks and key pairs.

Everything here is offline and input-independent: the trusted dealer
``s.dealer`` draws from its own stream, shares masks p-of-p among the
holders and sends FSS keys to the two key holders, all counted as offline
traffic in the caller's phase. :func:`fss.gates.prepare` calls these ahead
of a gate; the gates call them when not given a ``prep``. Threat model and
costs: :mod:`fss.gates`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from mpc.arith.ring import Ring
from mpc.arith.ring import ring as _ring
from mpc.arith.sharing import additive_share

from . import tree
from .keys import DCFParams, TreeKey, TreeParams

_U64 = np.uint64
_ONE = _U64(1)


def send_keys(s: Any, h: np.ndarray, params: TreeParams, gen_args: tuple, batch_shape: Any,
              workers: int | None = None) -> Callable[[], Any]:
    """Make (where the dealer runs) and send the key pair of the family ``params`` (a DCF or
    a DPF) to the key holders.

    ``gen_args``: (alpha, beta) for :func:`fss.tree.gen`, drawn from the dealer's
    stream by the caller. One message per key holder (or per instance when
    the holders differ per instance), offline, counted at the serialized
    payload size (``key.nbits``: what :func:`fss.tree.to_bytes` writes after its
    header). With ``record_views``, or when a key holder runs in another
    process than the dealer, the payload bytes themselves travel (uint8:
    the batch payload, or one row of :func:`fss.tree.instance_payloads` per
    instance) and are counted from their length, so view tests see exactly
    what a key holder receives; a dealer sending to other processes writes
    the keys straight into their wire format (:func:`fss.tree.gen_bytes`).

    Call inside the dealer's round block; returns ``finish``: called after
    the round, it gives the key pair as this process holds it: the keys as
    made in the simulator; in a run across processes, each key parsed and
    validated from its bytes where its key holder runs here, None where not.
    """
    net, did = s.net, s.dealer.id
    remote = net.link is not None
    dealer_here = net.is_local(did)
    rec = params.record_bytes
    shape = tuple(int(d) for d in np.atleast_1d(batch_shape)) if np.ndim(batch_shape) or \
        isinstance(batch_shape, tuple) else (int(batch_shape),)
    B = int(np.prod(shape, dtype=np.int64))
    keys: tuple[TreeKey, TreeKey] | None = None
    payloads: list[np.ndarray | None] = [None, None]
    alpha, beta = gen_args
    if dealer_here and remote and h.ndim == 1:
        wire = tree.gen_bytes(params, alpha, beta, s.dealer.rng, workers=workers)
        payloads = [np.frombuffer(w, dtype=np.uint8)[len(w) - B * rec:] for w in wire]
    elif dealer_here:
        keys = tree.gen(params, alpha, beta, s.dealer.rng, workers=workers)
    for b in (0, 1):
        key = None if keys is None else keys[b]
        payload = payloads[b]
        if h.ndim == 1:
            if net.record_views or remote:
                if payload is None:
                    if key is not None:
                        data = np.frombuffer(tree.to_bytes(key), dtype=np.uint8)
                        payload = data[data.size - key.nbits // 8:]   # sent, never written
                    else:
                        payload = np.zeros(rec * B, dtype=np.uint8)
                net.send_bits(did, int(h[b]), 8 * payload.size, payload, offline=True)
            else:
                net.send_bits(did, int(h[b]), B * params.wire_bits, offline=True)
        else:
            if net.record_views or remote:
                payload = tree.instance_payloads(key) if key is not None else \
                    np.zeros((B, rec), dtype=np.uint8)
            net.send_bits(did, h[b].reshape(-1), 8 * rec, payload, offline=True)
        payloads[b] = payload

    def finish() -> Any:
        if not remote:
            return keys
        out: list[TreeKey | None] = []
        for b in (0, 1):
            payload = payloads[b]
            if keys is not None:
                out.append(keys[b])
            elif payload is not None and np.any(net.is_local(h[b])):
                out.append(tree.from_payload(payload, params, b, shape, insecure=s.insecure,
                                             per_instance=h.ndim > 1))
            else:
                out.append(None)                # no key holder b here: never evaluated here
        return tuple(out)

    return finish


def deal_msb(s: Any, h: np.ndarray, batch: Any, d: int, workers: int | None = None) -> tuple:
    """The dealer's part of the comparison gates' MSB step on d input bits (offline, one round).

    Returns (shares of the mask r in Z_2^d, the key holders' shares of MSB(r),
    DCF key 0, DCF key 1); nothing here depends on the compared values.
    """
    ring = s.ring
    rd = ring if d == ring.bits else _ring(d)
    params = DCFParams(d - 1, ring.bits)
    low = _U64((1 << (d - 1)) - 1)
    with s.net.round():
        r = s.dealer.rng.ring_elements(rd, batch)
        r_msb = r >> _U64(d - 1)
        # the output is d (1 - 2m) + m with m known to the key holders only, so
        # its mask lives on their two rows (the other holders output 0)
        if d == ring.bits:
            r, r_sh, w_sh = deal_masks_given(s, h, r, r_msb, out_key_holders_only=True)
        else:
            r_sh = deal_shares(s, h, rd, r)
            w_sh = deal_shares(s, h, ring, r_msb, key_holders_only=True)
        beta = np.where(r_msb == 0, _ONE, ring.mask).astype(_U64)   # 1 - 2 MSB(r)
        finish = send_keys(s, h, params, (r & low, beta), batch, workers)
    k0, k1 = finish()
    return r_sh, w_sh, k0, k1


def deal_shares(s: Any, h: np.ndarray, ring: Ring, secret: np.ndarray,
                key_holders_only: bool = False) -> np.ndarray:
    """Share ``secret`` p-of-p in ``ring`` (or, with ``key_holders_only``, between the two
    key holders, the other rows 0) and send row j to holders[j] (offline, ring.bits each)."""
    sh = additive_share(ring, secret, h.shape[0], s.dealer.rng)
    if key_holders_only and h.shape[0] > 2:
        sh[0] = ring.add(sh[0], ring.sum(sh[2:], axis=0))
        sh[2:] = 0
    s.dealer.distribute(h, sh, ring.bits)
    return sh


def deal_masks_given(s: Any, h: np.ndarray, r: np.ndarray, out_secret: np.ndarray,
                     out_key_holders_only: bool = False) -> tuple:
    """Share r p-of-p and ``out_secret`` p-of-p (or, with ``out_key_holders_only``,
    between the two key holders, the other rows 0) and send them (offline)."""
    ring, rng = s.ring, s.dealer.rng
    p = h.shape[0]
    both = np.stack([r, out_secret], axis=-1)
    sh = additive_share(ring, both, p, rng)
    if out_key_holders_only and p > 2:
        sh[0, ..., 1] = ring.add(sh[0, ..., 1], ring.sum(sh[2:, ..., 1], axis=0))
        sh[2:, ..., 1] = 0
    s.dealer.distribute(h, sh, ring.bits)
    return r, sh[..., 0], sh[..., 1]


def deal_masked_keys(s: Any, h: np.ndarray, batch: Any, params: TreeParams,
                     workers: int | None = None) -> tuple:
    """Offline, one round: input mask r (p-of-p), a zero output mask, and the key pair of
    the family ``params`` (a DPF or a DCF) for alpha = r, beta = 1.
    Returns (r shares, output-mask shares, key 0, key 1)."""
    ring = s.ring
    with s.net.round():
        r = s.dealer.rng.ring_elements(ring, batch)
        _, r_sh, w_sh = deal_masks_given(s, h, r, np.zeros(batch, _U64))
        finish = send_keys(s, h, params, (r, 1), batch, workers)
    k0, k1 = finish()
    return r_sh, w_sh, k0, k1
