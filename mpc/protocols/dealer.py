"""The trusted dealer of the offline phase: Beaver triples and share distribution.

Trust assumption: the dealer is a *trusted third party* that is honest, does
not collude with any party and learns nothing of the inputs (it never sees
them). It draws correlated randomness (Beaver triples, FSS keys, masks) from
its own CSPRNG stream and hands each holder its part. In a deployment it is
replaced by an offline protocol (OT/HE-based triple generation or pseudorandom
correlation generators, e.g. Boyle et al. 2020); its traffic is counted as
*offline* communication by the network, in the caller's current phase.

``holders`` names who receives the shares: an int array ``(p,)`` (the same p
parties for the whole batch) or ``(p, *batch)`` (per-instance parties, e.g. the
members of each edge of a hypergraph).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from mpc.arith.ring import Ring
from mpc.arith.rng import CSPRNG, ShapeLike
from mpc.arith.sharing import additive_share
from mpc.comm.network import Network

#: roles that may never hold shares
_NOT_HOLDERS = ("dealer", "aggregator")


def check_holders(holders: ArrayLike, net: Network,
                  batch_shape: tuple[int, ...] | None = None) -> np.ndarray:
    """Validate a holders array ((p,) or (p, *batch)) and return it as int64.

    Per-instance holders ``(p, *batch)`` must match the leading axes of
    ``batch_shape``; trailing axes (several elements per instance) are allowed.
    """
    h = np.asarray(holders)
    if h.dtype.kind not in "iu":
        raise TypeError(f"holders must be integer party ids, got dtype {h.dtype}")
    if h.ndim < 1 or h.shape[0] < 1:
        raise ValueError(f"holders must have shape (p,) or (p, *batch), got {h.shape}")
    if h.size and (h.min() < 0 or h.max() >= net.size):
        raise ValueError(f"holders contains an id outside 0..{net.size - 1}")
    if h.size and h.max() >= net.n_parties:
        for role in _NOT_HOLDERS:
            if role in net.roles and np.any(h == net.role(role)):
                raise ValueError(
                    f"holders names the {role} (id {net.role(role)}): "
                    + ("it deals the preprocessing of these shares and would learn them"
                       if role == "dealer" else "it receives the release and must not hold "
                       "shares of it") + f"; data parties are 0..{net.n_parties - 1}")
    if h.ndim > 1 and batch_shape is not None and h.shape[1:] != tuple(batch_shape)[:h.ndim - 1]:
        raise ValueError(
            f"holders of shape {h.shape} do not match batch shape {tuple(batch_shape)}"
        )
    return h.astype(np.int64, copy=False)


def send_rows(net: Network, senders: int | np.ndarray, holders: np.ndarray, rows: np.ndarray,
              bits: int, *, offline: bool | None = None, sender_per_row: bool = False) -> None:
    """Send ``rows[j]`` (shape ``(*batch, ...)``) to ``holders[j]`` for every j.

    ``senders`` is one id, or (with ``sender_per_row``) an array shaped like
    ``holders`` giving the sender of each row/instance. With (p,) holders each
    row is one message; with (p, *batch) holders each instance is one message.
    Loops over the p rows only (p is small: the members of an edge).
    """
    p = holders.shape[0]
    ids: Any = senders                  # one id, or one per row (sender_per_row)
    for j in range(p):
        src = ids[j] if sender_per_row else ids
        if holders.ndim == 1:
            net.send(int(src) if np.ndim(src) == 0 else src, int(holders[j]), rows[j], bits,
                     offline=offline)
        else:
            dst = holders[j].reshape(-1)
            payload = rows[j].reshape((dst.size, -1))
            s = np.asarray(src).reshape(-1) if np.ndim(src) else int(src)
            net.send(s, dst, payload, bits, offline=offline)


class TrustedDealer:
    """Trusted dealer producing preprocessing material, counted as offline traffic.

    Parameters: ``ring`` (Z_2^l of the shares), ``rng`` (the dealer's own
    CSPRNG stream), ``net`` (the network; the dealer is its role ``"dealer"``).
    """

    def __init__(self, ring: Ring, rng: CSPRNG, net: Network, role: str = "dealer"):
        if not isinstance(ring, Ring):
            raise TypeError("ring must be an mpc.arith.ring.Ring")
        if not isinstance(rng, CSPRNG):
            raise TypeError("rng must be an mpc.arith.rng.CSPRNG")
        if not isinstance(net, Network):
            raise TypeError("net must be an mpc.comm.network.Network")
        self.ring = ring
        self.rng = rng
        self.net = net
        self.id = net.role(role)

    def share(self, holders: ArrayLike, secrets: ArrayLike) -> np.ndarray:
        """Additively share ``secrets`` among ``holders`` and send them (offline)."""
        secrets = np.asarray(secrets, dtype=np.uint64)
        h = check_holders(holders, self.net, secrets.shape)
        shares = additive_share(self.ring, secrets, h.shape[0], self.rng)
        return self.distribute(h, shares, self.ring.bits)

    def distribute(self, holders: ArrayLike, shares: ArrayLike, bits: int) -> np.ndarray:
        """Send row j of ``shares`` (``(p, *batch, ...)``) to ``holders[j]``, offline."""
        shares = np.asarray(shares)
        h = check_holders(holders, self.net)
        if shares.shape[0] != h.shape[0]:
            raise ValueError(
                f"shares has {shares.shape[0]} rows but holders names {h.shape[0]} parties"
            )
        if h.ndim > 1 and shares.shape[1:h.ndim] != h.shape[1:]:
            raise ValueError(f"shares {shares.shape} do not match holders {h.shape}")
        with self.net.round():
            send_rows(self.net, self.id, h, shares, bits, offline=True)
        return shares

    def beaver_triples(self, holders: ArrayLike,
                       shape: ShapeLike) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Additive shares of random (a, b, c = a*b) in Z_2^l among ``holders``.

        Returns ``(a, b, c)``, each ``uint64 (p, *shape)``. Offline cost: the
        dealer sends 3 ring elements per triple to each of the p holders
        (3 p l bits per triple) in one round.
        """
        dims: Any = shape                   # an int, or a sequence of them
        shape = tuple(np.atleast_1d(np.asarray(dims, dtype=np.int64))) if np.ndim(dims) \
            else (int(dims),)
        h = check_holders(holders, self.net, shape)
        p = h.shape[0]
        a = self.rng.ring_elements(self.ring, shape)
        b = self.rng.ring_elements(self.ring, shape)
        c = self.ring.mul(a, b)
        abc = np.stack([a, b, c], axis=-1)          # (*shape, 3)
        shares = additive_share(self.ring, abc, p, self.rng)  # (p, *shape, 3)
        with self.net.round():
            self.distribute(h, shares, self.ring.bits)
        return shares[..., 0], shares[..., 1], shares[..., 2]
