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

from mpc.arith.ring import ring as _ring
from mpc.arith.sharing import additive_share

from . import dcf as _dcf

_U64 = np.uint64
_ONE = _U64(1)


def send_keys(s, h, scheme, params, gen_args, batch_shape, workers=None):
    """Make (where the dealer runs) and send the key pair of ``scheme`` to the key holders.

    ``gen_args``: (alpha, beta) for ``scheme.gen``, drawn from the dealer's
    stream by the caller. One message per key holder (or per instance when
    the holders differ per instance), offline, counted at the serialized
    payload size (``key.nbits``: what ``scheme.to_bytes`` writes after its
    header). With ``record_views``, or when a key holder runs in another
    process than the dealer, the payload bytes themselves travel (uint8:
    the batch payload, or one row of ``scheme.instance_payloads`` per
    instance) and are counted from their length, so view tests see exactly
    what a key holder receives; a dealer sending to other processes writes
    the keys straight into their wire format (``scheme.gen_bytes``).

    Call inside the dealer's round block; returns ``finish``: called after
    the round, it gives the key pair as this process holds it: the keys as
    made in the simulator; in a run across processes, each key parsed and
    validated from its bytes where its key holder runs here, None where not.
    """
    net, did = s.net, s.dealer.id
    remote = net.link is not None
    dealer_here = net.is_local(did)
    rec = scheme.wire_bits(params) // 8
    shape = tuple(int(d) for d in np.atleast_1d(batch_shape)) if np.ndim(batch_shape) or \
        isinstance(batch_shape, tuple) else (int(batch_shape),)
    B = int(np.prod(shape, dtype=np.int64))
    keys, payloads = None, [None, None]
    if dealer_here and remote and h.ndim == 1:
        wire = scheme.gen_bytes(params, *gen_args, s.dealer.rng, workers=workers)
        payloads = [np.frombuffer(w, dtype=np.uint8)[len(w) - B * rec:] for w in wire]
    elif dealer_here:
        keys = scheme.gen(params, *gen_args, s.dealer.rng, workers=workers)
    for b in (0, 1):
        key = None if keys is None else keys[b]
        if h.ndim == 1:
            if net.record_views or remote:
                if payloads[b] is None:
                    if key is not None:
                        data = np.frombuffer(scheme.to_bytes(key), dtype=np.uint8)
                        payloads[b] = data[data.size - key.nbits // 8:]   # sent, never written
                    else:
                        payloads[b] = np.zeros(rec * B, dtype=np.uint8)
                net.send_bits(did, int(h[b]), 8 * payloads[b].size, payloads[b], offline=True)
            else:
                net.send_bits(did, int(h[b]), key.nbits, offline=True)
        else:
            if net.record_views or remote:
                payloads[b] = scheme.instance_payloads(key) if key is not None else \
                    np.zeros((B, rec), dtype=np.uint8)
            net.send_bits(did, h[b].reshape(-1), 8 * rec, payloads[b], offline=True)

    def finish():
        if not remote:
            return keys
        out = []
        for b in (0, 1):
            if keys is not None and keys[b] is not None:
                out.append(keys[b])
            elif np.any(net.is_local(h[b])):
                out.append(_parse_keys(s, scheme, params, b, payloads[b], h.ndim > 1, shape))
            else:
                out.append(None)                # no key holder b here: never evaluated here
        return tuple(out)

    return finish


def _parse_keys(s, scheme, params, party, payload, per_instance, shape):
    """The key of ``party`` from the bytes a key holder received (validated by the parser)."""
    from . import _keyio
    dcf = scheme is _dcf
    n, l = params.n_bits, params.out_bits
    if per_instance:
        payload = _keyio.records_payload(payload, dcf, n, l)
    group = "arith" if dcf else params.group
    B = int(np.prod(shape, dtype=np.int64))
    payload.flags.writeable = False          # the key's arrays are views of it from here on
    a = _keyio.parse_arrays(payload, dcf, n, l, B, 0)
    fields = [a["seed"], a["cw_seed"], a["cw_t_left"], a["cw_t_right"]] + \
        ([a["cw_value"]] if dcf else []) + [a["cw_last"]]
    if dcf:
        return _dcf.DCFKey(party, n, l, tuple(shape), *fields, s.insecure)
    return scheme.DPFKey(party, n, l, params.group, tuple(shape), *fields, s.insecure)


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
        finish = send_keys(s, h, _dcf, params, (r & low, beta), batch, workers)
    k0, k1 = finish()
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
        finish = send_keys(s, h, scheme, params, (r, 1), batch, workers)
    k0, k1 = finish()
    return r_sh, w_sh, k0, k1
