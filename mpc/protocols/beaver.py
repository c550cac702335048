"""Opening shared values and Beaver multiplication (Beaver 1991) on additive shares, and its
boolean twin, the bitwise AND of XOR-shared words (:func:`multiply_xor`).

Shares are ``uint64 (p, *batch)`` additive sharings in Z_2^l held by
``holders`` ((p,) party ids, or (p, *batch) per-instance ids such as the
members of each edge).

Threat model: static semi-honest adversary corrupting up to p-1 of the p
holders; a trusted dealer for the triples (see :mod:`mpc.protocols.dealer`); private,
authenticated channels. The opened values d = x - a and e = y - b are uniform
and independent of x, y because a, b are uniform and unknown to any p-1
holders.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import ArrayLike

from mpc.protocols.dealer import check_holders, send_rows

if TYPE_CHECKING:
    from mpc.arith.ring import Ring
    from mpc.session import Session


def _check_shares(session, x, name: str) -> np.ndarray:
    x = np.asarray(x)
    if x.dtype != np.uint64:
        raise TypeError(f"{name} must be uint64 ring shares, got dtype {x.dtype}")
    if x.ndim < 1:
        raise ValueError(f"{name} must have a leading party axis")
    return x


def exchange(session: Session, shares: ArrayLike, holders: ArrayLike, bits: int) -> np.ndarray:
    """Every holder sends its row of ``shares`` to every other holder (one round).

    ``shares``: ``(p, *batch, ...)`` (ring elements, bits, ...), ``bits`` the
    width of one element. Returns ``shares`` (now known to every holder).
    Cost: one round; each holder sends (p-1) * bits per element.
    """
    net = session.net
    sh = np.asarray(shares)
    if sh.ndim < 1:
        raise ValueError("shares must have a leading party axis")
    h = check_holders(holders, net, sh.shape[1:] if np.ndim(holders) > 1 else None)
    p = sh.shape[0]
    if h.shape[0] != p:
        raise ValueError(f"shares has {p} rows but holders names {h.shape[0]} parties")
    if h.ndim == 1:
        # the same p parties for the whole batch: every holder's row to every other holder
        net.broadcast(h, sh, bits)
        return sh
    with net.round():
        for shift in range(1, p):
            # member j sends its row to member (j + shift) mod p (per instance)
            send_rows(net, h, np.roll(h, -shift, axis=0), sh, bits, sender_per_row=True)
    return sh


def open_shares(session: Session, shares: ArrayLike, holders: ArrayLike) -> np.ndarray:
    """Every holder sends its share to every other holder; all learn the sum.

    Cost: one round; each holder sends (p-1) * l bits per opened element.
    Returns the opened values, shape ``shares.shape[1:]``.
    """
    sh = _check_shares(session, shares, "shares")
    exchange(session, sh, holders, session.ring.bits)
    return session.ring.sum(sh, axis=0)


def multiply(session: Session, x: ArrayLike, y: ArrayLike, holders: ArrayLike,
             triples: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None) -> np.ndarray:
    """Shares of x * y in Z_2^l via a Beaver triple (a, b, c = a b).

    Steps: holders open d = x - a and e = y - b (one round, batched in one
    opening); then z = c + d b + e a + d e (the public term d e added by
    holder 0). Cost online: one round; each holder sends 2 (p-1) l bits per
    product (2 l for p = 2). Offline: 3 p l bits per triple from the dealer.
    """
    ring = session.ring
    x = _check_shares(session, x, "x")
    y = _check_shares(session, y, "y")
    if x.shape != y.shape:
        raise ValueError(f"x and y must have the same shape, got {x.shape} and {y.shape}")
    h = check_holders(holders, session.net, x.shape[1:] if np.ndim(holders) > 1 else None)
    if h.shape[0] != x.shape[0]:
        raise ValueError(f"x has {x.shape[0]} share rows but holders names {h.shape[0]} parties")
    if triples is None:
        triples = session.dealer.beaver_triples(h, x.shape[1:])
    a, b, c = triples
    if a.shape != x.shape or b.shape != x.shape or c.shape != x.shape:
        raise ValueError(f"triples must have the shape of x {x.shape}")
    de_sh = np.stack([ring.sub(x, a), ring.sub(y, b)], axis=-1)   # (p, *batch, 2)
    de = open_shares(session, de_sh, h)
    d, e = de[..., 0], de[..., 1]
    z = ring.add(c, ring.add(ring.mul(d, b), ring.mul(e, a)))
    z[0] = ring.add(z[0], ring.mul(d, e))
    return z


def multiply_xor(session: Session, x: np.ndarray, y: np.ndarray, holders: np.ndarray,
                 ring: Ring) -> np.ndarray:
    """XOR shares of the bitwise AND x & y of XOR-shared words, via a boolean Beaver triple
    (a, b, c = a & b) from the session's trusted dealer.

    ``x``, ``y``: ``uint64 (p, *batch)`` XOR shares of l-bit words (l: ``ring``), row j
    held by ``holders[j]`` (checked by the caller). Steps: the dealer XOR-shares
    (a, b, a & b) among the holders (offline, one round); the holders open d = x ^ a and
    e = y ^ b (one round, batched in one opening); z = c ^ (d & b) ^ (e & a), holder 0
    adds d & e. Cost online: one round; each holder sends 2 (p-1) l bits per word.
    Offline: 3 p l bits per word from the dealer. Threat model: as :func:`multiply` (static
    semi-honest, up to p-1 holders; a trusted dealer).
    """
    h = holders
    p = x.shape[0]
    dealer = session.dealer
    shape = x.shape[1:]
    a = dealer.rng.uint64(shape) & ring.mask
    b = dealer.rng.uint64(shape) & ring.mask
    abc = np.stack([a, b, a & b], axis=-1)
    sh = np.empty((p,) + abc.shape, dtype=np.uint64)
    sh[1:] = dealer.rng.uint64((p - 1,) + abc.shape) & ring.mask
    sh[0] = abc ^ np.bitwise_xor.reduce(sh[1:], axis=0) if p > 1 else abc
    with session.net.round():
        dealer.distribute(h, sh, ring.bits)
    ta, tb, tc = sh[..., 0], sh[..., 1], sh[..., 2]
    de = np.stack([x ^ ta, y ^ tb], axis=-1)
    exchange(session, de, h, ring.bits)
    opened = np.bitwise_xor.reduce(de, axis=0)
    d, e = opened[..., 0], opened[..., 1]
    z = tc ^ (d & tb) ^ (e & ta)
    z[0] ^= d & e
    return z
