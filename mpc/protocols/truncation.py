"""Probabilistic truncation of additive shares in Z_2^l: shares of x / 2^m, rounded at random.

The fixed-point product of two values at scale c is at scale 2c; it is
brought back to c by dividing by 2^c. Locally shifting shares is wrong
with more than two holders (and wrong with large probability with two);
this module does it with one opening of a masked value, as SPDZ2k-style
``TruncPr`` (Escudero, Ghosh, Keller, Rachuri, Scholl, "Improved
primitives for MPC over mixed arithmetic-binary circuits", CRYPTO 2020,
section 5; MPyC's ``trunc`` and CrypTen's TTP truncation do the same with
a statistical mask in a field / with the dealer's wrap count).

Protocol (:func:`truncate`), for |x| < 2^(l-2):

1. Offline, the dealer draws r uniform in Z_2^l and shares r, floor(r / 2^m)
   and the top bit r_{l-1} of r among the holders.
2. The holders open c = y + r mod 2^l, y = x + 2^(l-2) (so 0 <= y < 2^(l-1)).
3. y + r wrapped iff r_{l-1} = 1 and c_{l-1} = 0 (y has a 0 top bit), so
   w = r_{l-1} (1 - c_{l-1}) is a linear function of the shared bit, and
   floor(y / 2^m) = floor(c / 2^m) - floor(r / 2^m) + w 2^(l-m) - b with
   b = [c mod 2^m < r mod 2^m]. The protocol leaves b out.

Result: shares of floor(x / 2^m) + u with u in {0, 1} and P(u = 1) =
(x mod 2^m) / 2^m: stochastic rounding, so the expected result is x / 2^m
exactly and the error is below one unit of the result's last place.

Security: c is y plus a uniform element of Z_2^l, independent of y:
perfectly hiding (no statistical margin needed). Static semi-honest
holders, any p - 1 of p colluding; a trusted dealer that sees no input.
Cost: offline 3 p l bits per element (one dealer round); online one round,
each holder sends (p - 1) l bits per element.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import ArrayLike

from mpc.arith.sharing import additive_share
from mpc.protocols.beaver import open_shares
from mpc.protocols.dealer import check_holders

if TYPE_CHECKING:
    from mpc.session import Session

__all__ = ["truncate"]


def truncate(session: Session, x: ArrayLike, holders: ArrayLike, m: int) -> np.ndarray:
    """Additive shares of x / 2^m (stochastically rounded) from shares ``x`` of |x| < 2^(l-2).

    ``x``: ``uint64 (p, *shape)`` in the session's ring, row j held by
    ``holders[j]`` (``(p,)`` or per instance ``(p, *shape)``); ``m``: bits to
    drop, 0 <= m < l - 1. Returns ``uint64 (p, *shape)`` among the same
    holders: floor(x / 2^m) + u, u in {0, 1} with P(u = 1) = (x mod 2^m) / 2^m.
    The caller guarantees |x| < 2^(l-2) (a larger x gives a wrong result);
    :class:`mpc.values.SecureArray` checks it on its tracked bound.
    Cost, threat model: module docstring (one online round, one dealer round).
    """
    ring = session.ring
    l = ring.bits
    sh = np.asarray(x)
    if sh.dtype != np.uint64 or sh.ndim < 1:
        raise TypeError(f"x must be uint64 shares (p, *shape), got {sh.dtype} {sh.shape}")
    m = int(m)
    if not 0 <= m < l - 1:
        raise ValueError(f"m must be in 0..{l - 2} for Z_2^{l}, got {m}")
    if m == 0:
        return sh.copy()
    h = check_holders(holders, session.net, sh.shape[1:] if np.ndim(holders) > 1 else None)
    shape = sh.shape[1:]
    dealer = session.dealer
    r = dealer.rng.ring_elements(ring, shape)
    pre = np.stack([r, r >> np.uint64(m), r >> np.uint64(l - 1)], axis=-1)
    pre_sh = additive_share(ring, pre, sh.shape[0], dealer.rng)
    dealer.distribute(h, pre_sh, l)
    r_sh, hi_sh, top_sh = pre_sh[..., 0], pre_sh[..., 1], pre_sh[..., 2]
    offset = np.uint64(1 << (l - 2))
    with np.errstate(over="ignore"):                       # uint64 wraparound is the ring's
        masked = (sh + r_sh) & ring.mask
        masked[0] = (masked[0] + offset) & ring.mask
        c = open_shares(session, masked, h)
        keep = np.uint64(1) - (c >> np.uint64(l - 1))          # 1 - c_{l-1}, public
        out = ((top_sh * keep) << np.uint64(l - m)) - hi_sh
        out[0] += (c >> np.uint64(m)) - (offset >> np.uint64(m))
    return out & ring.mask
