"""Gaussian-type distributed noise: coin-flipping binomial and summed discrete Gaussians.

Both return :class:`noise.shares.NoiseShares` (also exported by
:mod:`noise.distributed`, where the discrete Laplace protocols live, which
re-exports these two). Their collusion caveat is the one of the module
docstring there: a coalition that
knows its members' contributions subtracts them; these protocols report the
guarantee against the aggregator alone.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import ArrayLike

from mpc.arith.sharing import additive_share
from mpc.protocols.beaver import multiply

from . import accounting as acc
from ._contributions import _check_parties, _check_session, _encode_signed, _shape, _stream
from .samplers import RealLike, as_fraction, discrete_gaussian
from .shares import NoiseShares

if TYPE_CHECKING:
    from mpc.arith.rng import ShapeLike
    from mpc.session import Session

__all__ = ["coin_flip_binomial", "distributed_discrete_gaussian"]


# -- Gaussian-type protocols ----------------------------------------------------------------
def coin_flip_binomial(s: Session, n_coins: int, *, step: int = 1,
                       parties: ArrayLike | None = None, shape: ShapeLike = (),
                       sensitivity: RealLike | None = None,
                       epsilon: RealLike | None = None) -> NoiseShares:
    """Coin-flipping binomial noise (Dwork et al. 2006; Sinh & Ramon App. B.2.1).

    Steps: (1) for coin k, party P_{k mod p} draws a bit c_k and additively
    shares it among the p parties (online); (2) the dealer shares a uniform
    bit b_k (offline, the "jointly generated" high-quality bits); (3) the
    parties compute shares of c_k XOR b_k = c_k + b_k - 2 c_k b_k with one
    Beaver multiplication (:func:`mpc.protocols.beaver.multiply`, all coins in one
    batch); (4) each party outputs step * sum_k z_k (the public
    -step * floor(n_coins / 2) is added by the first party). The total is
    step (B - floor(n_coins / 2)), B ~ Binomial(n_coins, 1/2) exactly,
    variance step^2 n_coins / 4 (centred for even n_coins), as long as c_k
    or b_k is uniform. The noise lives on the lattice step * Z, so every
    query shift that is a multiple of ``step`` is covered by the accounting
    (noise on a coarser lattice, e.g. step (2 B - n), would give disjoint
    supports, delta = 1, for odd shifts).

    Cost (per noise element, N = n_coins): online N (p-1) l bits for the
    sharings plus 2 N p (p-1) l for the multiplication, 2 rounds; offline
    N p l (bits b) + 3 N p l (triples). Threat model: semi-honest, trusted
    dealer. Accounting: with ``sensitivity`` (ring units, a multiple of
    ``step``; the query must take values in step * Z) and ``epsilon``,
    delta is computed from the binomial privacy profile over every shift
    up to the sensitivity (:func:`noise.accounting.binomial_mechanism_delta`).
    """
    s = _check_session(s)
    P = _check_parties(s, parties)
    n_coins = acc.check_n(n_coins, "n_coins")
    step = acc.check_n(step, "step")
    shape = _shape(shape)
    ring, net = s.ring, s.net
    p = P.size
    rng = _stream(s, "coins")
    size = int(np.prod(shape, dtype=np.int64))
    N = n_coins * size
    c = rng.bits(N).astype(np.uint64)                          # coin k owned by P[k mod p]
    c_sh = additive_share(ring, c, p, rng)                     # (p, N)
    owner = np.arange(N) % p
    if p > 1:
        with net.round():
            for j in range(1, p):               # loop over share rows (p), vectorized over coins
                recv = (owner + j) % p
                # owner sends row recv[k] of coin k to P[recv[k]]
                net.send(P[owner], P[recv], c_sh[recv, np.arange(N)], ring.bits)
    b = s.dealer.rng.bits(N).astype(np.uint64)
    b_sh = s.dealer.share(P, b) if p > 1 else b[None, :]
    cb = multiply(s, c_sh, b_sh, P) if p > 1 else ring.mul(c_sh, b_sh)
    z = ring.sub(ring.add(c_sh, b_sh), ring.smul(2, cb))       # shares of c XOR b
    tot = ring.sum(z.reshape(p, size, n_coins), axis=2)        # shares of B
    out = ring.smul(step, tot)
    out[0] = ring.sub(out[0], ring.element(step * (n_coins // 2)))
    eps_out, delta = float("nan"), float("nan")
    sens_ring = float("nan")
    if (given := _together(sensitivity, epsilon, "epsilon")) is not None:
        sens_ring = acc.check_sensitivity(given[0])
        eps_out = acc.check_epsilon(given[1])
        if sens_ring % step:
            raise ValueError(f"sensitivity must be a multiple of step = {step} ring units, "
                             f"got {sensitivity!r}")
        delta = acc.binomial_mechanism_delta(n_coins, int(sens_ring // step), eps_out)
    return NoiseShares(
        shares=out.reshape((p,) + shape), parties=P, distribution="binomial", scale=step,
        epsilon=eps_out, sensitivity=sens_ring, threat_model="dis", delta=delta,
        sensitivity_ring=sens_ring, exact=True, insecure_seed=bool(s.insecure),
        notes=f"step*(Binomial({n_coins}, 1/2) - {n_coins // 2}), coin flipping")


def distributed_discrete_gaussian(s: Session, sigma2: RealLike, *,
                                  parties: ArrayLike | None = None, shape: ShapeLike = (),
                                  mode: str = "share", sensitivity: RealLike | None = None,
                                  delta: RealLike | None = None) -> NoiseShares:
    """Distributed discrete Gaussian: each of the p parties adds N_Z(0, sigma2 / p).

    Steps: P_i draws g_i ~ N_Z(0, sigma2/p) exactly (CKS20 Alg. 3, rational
    sigma2/p); with ``mode="share"`` it additively shares g_i among all
    parties (one round, p (p-1) l bits per element); with ``mode="local"``
    it keeps g_i (no communication; Remark B.1 conditions apply).

    Privacy: the total is NOT a discrete Gaussian. We report
    rho = min(rho_KLS, Delta^2 / (2 sigma2/p)) zCDP
    (:func:`noise.accounting.distributed_discrete_gaussian_rho`: Kairouz, Liu,
    Steinke 2021, and the trivial one-honest-party bound) and
    epsilon = rho + 2 sqrt(rho ln(1/delta)). ``sensitivity`` is the L2
    sensitivity in ring units. Threat model: semi-honest; see the module's
    caveat on colluding parties.
    """
    s = _check_session(s)
    P = _check_parties(s, parties)
    if mode not in ("share", "local"):
        raise ValueError(f"mode must be 'share' or 'local', got {mode!r}")
    s2 = as_fraction(sigma2, "sigma2")
    shape = _shape(shape)
    ring, net = s.ring, s.net
    p = P.size
    each = s2 / p
    rng = _stream(s, "dgauss")
    size = int(np.prod(shape, dtype=np.int64))
    g = _encode_signed(ring, discrete_gaussian(each, (p, size), rng), "discrete Gaussian")
    if mode == "share" and p > 1:
        sh = additive_share(ring, g, p, rng)                  # (j, i, e): P_j's share of g_i[e]
        I, J = np.nonzero(~np.eye(p, dtype=bool))
        with net.round():
            net.send(P[I], P[J], sh[J, I], ring.bits)
        out = ring.sum(sh, axis=1)
    else:
        out = g
    eps_out, rho = float("nan"), float("nan")
    sens = float("nan")
    if (given := _together(sensitivity, delta, "delta")) is not None:
        sens = acc.check_sensitivity(given[0])
        rho = acc.distributed_discrete_gaussian_rho(sens, float(each), p)
        eps_out = acc.zcdp_to_dp(rho, given[1])
    return NoiseShares(
        shares=out.reshape((p,) + shape), parties=P, distribution="discrete_gaussian_sum",
        scale=s2, epsilon=eps_out, sensitivity=sens,
        threat_model="dis" if mode == "share" else "local",
        delta=float(delta) if delta is not None else float("nan"), sensitivity_ring=sens,
        exact=True, insecure_seed=bool(s.insecure),
        notes=f"sum of {p} iid N_Z(0, {each}); rho = {rho} zCDP")


def _together(sensitivity: RealLike | None, other: RealLike | None,
              name: str) -> tuple[RealLike, RealLike] | None:
    """(sensitivity, other) when both are given, None when neither (ValueError for one)."""
    if sensitivity is None and other is None:
        return None
    if sensitivity is None or other is None:
        raise ValueError(f"sensitivity and {name} must be given together")
    return sensitivity, other
