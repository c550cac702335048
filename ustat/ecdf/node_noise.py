"""Tree noise sampled inside a secure computation between the ECDF servers (noise mode "mpc").

The m >= 2 servers draw every node's discrete Laplace in one dealer-free GMW
computation (:func:`noise.mpc_sampler.secure_dlap` with OT triples: the ECDF
protocol has no dealer) from coins that each server draws alone, and keep
additive shares in Z_2^l; each server adds its shares on a query's path to
its answer, exactly as it adds its own noise in modes "each" and "split".

What it buys: one DLap per node, as a trusted curator would add (half the
variance of mode "each", where every server adds a full DLap, and the same
as "split"), and epsilon holds even against a server that also sees the
output (unlike "split", where that server knows half of the noise): no
server alone learns anything about a node's noise. The price: delta
(truncation and rounding of the sampler, at most 2^-40 for the whole tree,
:func:`noise.mpc_sampler.plan_dlap` with draws = nodes) and the computation,
charged to the phase ``ecdf noise`` (offline: it happens once per
deployment, before any query): at N = 1024 thresholds and epsilon = 1
(2047 nodes), 57 AND gates per comparison, 18 comparisons per node, two
random OTs (IKNP) per gate, about 0.5 Gbit between the two servers and 4 s
here. Threat model: semi-honest servers that do not collude (the ECDF's own
assumption); no dealer.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import TYPE_CHECKING

import numpy as np

from noise.mpc_sampler import plan_dlap, secure_dlap

from .servers import server_ids
from .tree import Tree, TreeNoise, _epsilon, _scale_for

if TYPE_CHECKING:
    from collections.abc import Sequence

    from mpc.session import Session
    from noise.samplers import RealLike

__all__ = ["draw_noise_mpc"]


def draw_noise_mpc(session: Session, tree: Tree, epsilon: float, *,
                   rule: str = "exact") -> TreeNoise:
    """The node noise of one release, sampled inside MPC by the session's servers.

    Scale t = Delta / epsilon rounded up (:func:`ustat.ecdf.tree.draw_noise`'s
    rule); ``epsilon = inf``: zero shares. Returns a :class:`TreeNoise` in
    mode ``"mpc"`` whose ``delta`` is the whole release's.
    """
    if not isinstance(tree, Tree):
        raise TypeError(f"tree must be a Tree, got {type(tree).__name__}")
    eps = _epsilon(epsilon)
    sid = server_ids(session)
    if sid.size < 2:
        raise ValueError(f"noise mode 'mpc' needs at least 2 servers, the session has {sid.size}")
    sens = tree.sensitivity(rule)
    M, bits = tree.n_nodes, session.ring.bits
    if math.isinf(eps):
        return TreeNoise(tree, eps, eps, None, sens, "mpc", np.zeros((sid.size, M), np.int64),
                         bits=bits)
    scale = _scale_for(sens, eps)
    eps_used = float(Fraction(sens) / scale)
    plan = plan_dlap(scale, epsilon=eps_used, draws=M)
    rng = session.rng.derive("ecdf", "mpc-noise", int(session.rng.uint64()))
    with session.net.phase("ecdf noise", offline=True):
        draws = secure_dlap(session, [plan] * M, holders=sid, triples="ot", rng=rng)
    return TreeNoise(tree, eps, eps_used, scale, sens, "mpc", draws.shares.view(np.int64),
                     bits=bits, delta=plan.delta(eps_used, M))


def sum_noise_mpc(session: Session, groups: Sequence[tuple[RealLike, int]],
                  epsilon: float) -> tuple[np.ndarray, float]:
    """Shares of independent DLap noises for sums released together, sampled by the servers.

    ``groups``: (scale, count) pairs (count noises of each scale, in order);
    ``epsilon``: what the released sums spend together (for the delta).
    Returns ``(uint64 (m, total) additive shares in Z_2^l, delta)``; the
    delta of all the noises together is at most 2^-40. Used by the
    Hosmer-Lemeshow group sums (:mod:`ustat.ecdf.hosmer_lemeshow`).
    """
    total = sum(int(c) for _, c in groups)
    plans = []
    for scale, count in groups:
        plans += [plan_dlap(scale, epsilon=epsilon, draws=total)] * int(count)
    rng = session.rng.derive("ecdf", "mpc-sum-noise", int(session.rng.uint64()))
    with session.net.phase("ecdf noise", offline=True):
        draws = secure_dlap(session, plans, holders=server_ids(session), triples="ot", rng=rng)
    delta = sum(p.delta(epsilon) for p in plans)
    return draws.shares, delta
