"""The dealer's side of the FSS gates (:mod:`fss.gates`): masks, output masks and key pairs.

Everything here is offline and input-independent: the trusted dealer
``s.dealer`` draws from its own stream, shares masks p-of-p among the
holders and sends FSS keys to the two key holders, all counted as offline
traffic in the caller's phase. :func:`fss.gates.prepare` calls these ahead
of a gate; the gates call them when not given a ``prep``. Threat model and
costs: :mod:`fss.gates`.
"""

from __future__ import annotations

import numpy as np

from mpc.ring import ring as _ring
from mpc.sharing import additive_share

from . import dcf as _dcf

_U64 = np.uint64
_ONE = _U64(1)


def send_keys(s, h, scheme, keys):
    """Dealer -> key holders, one message per key holder (or per instance), offline.

    Counted at the serialized payload size (``key.nbits``: what
    ``scheme.to_bytes`` writes after its header). With ``record_views`` the
    payload bytes themselves are recorded (uint8: the batch payload, or one
    row of ``scheme.instance_payloads`` per instance) and counted from their
    length, so view tests see exactly what a key holder receives.
    """
    net, did = s.net, s.dealer.id
    for b in (0, 1):
        key = keys[b]
        if h.ndim == 1:
            if net.record_views:
                data = np.frombuffer(scheme.to_bytes(key), dtype=np.uint8)
                payload = data[data.size - key.nbits // 8:]
                net.send_bits(did, int(h[b]), 8 * payload.size, payload, offline=True)
            else:
                net.send_bits(did, int(h[b]), key.nbits, offline=True)
        else:
            rows = scheme.instance_payloads(key) if net.record_views else None
            per = 8 * rows.shape[1] if rows is not None else key.nbits // max(key.batch, 1)
            net.send_bits(did, h[b].reshape(-1), per, rows, offline=True)


def deal_msb(s, h, batch, d, workers=None):
    """The dealer's part of the comparison gates' MSB step on d input bits (offline, one round).

    Returns (shares of the mask r in Z_2^d, the key holders' shares of MSB(r),
    DCF key 0, DCF key 1); nothing here depends on the compared values.
    """
    ring = s.ring
    rd = ring if d == ring.bits else _ring(d)
    params = _dcf.DCFParams(d - 1, ring.bits)
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
        k0, k1 = _dcf.gen(params, r & low, beta, s.dealer.rng, workers=workers)
        send_keys(s, h, _dcf, (k0, k1))
    return r_sh, w_sh, k0, k1


def deal_shares(s, h, ring, secret, key_holders_only=False):
    """Share ``secret`` p-of-p in ``ring`` (or, with ``key_holders_only``, between the two
    key holders, the other rows 0) and send row j to holders[j] (offline, ring.bits each)."""
    sh = additive_share(ring, secret, h.shape[0], s.dealer.rng)
    if key_holders_only and h.shape[0] > 2:
        sh[0] = ring.add(sh[0], ring.sum(sh[2:], axis=0))
        sh[2:] = 0
    s.dealer.distribute(h, sh, ring.bits)
    return sh


def deal_masks_given(s, h, r, out_secret, out_key_holders_only=False):
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


def deal_masked_keys(s, h, batch, scheme, params, workers=None):
    """Offline, one round: input mask r (p-of-p), a zero output mask, and the
    key pair of ``scheme`` (:mod:`fss.dpf` or :mod:`fss.dcf`) for alpha = r, beta = 1.
    Returns (r shares, output-mask shares, key 0, key 1)."""
    ring = s.ring
    with s.net.round():
        r = s.dealer.rng.ring_elements(ring, batch)
        _, r_sh, w_sh = deal_masks_given(s, h, r, np.zeros(batch, _U64))
        k0, k1 = scheme.gen(params, r, 1, s.dealer.rng, workers=workers)
        send_keys(s, h, scheme, (k0, k1))
    return r_sh, w_sh, k0, k1
