"""Pointwise ECDF queries by secure aggregation (Barczewski, Mawass, Ramon, Section 4.1).

Every query is a fresh secure sum of the parties' indicators 1[x_i <= tau_k]
(Eq. (4): F^(tau_k) is the U-statistic of phi_{<= tau_k} plus the node noise
of k's path). The aggregation here is additive secret sharing towards m >= 2
non-colluding servers, the same trust as the FSS backend, so that the two
backends release *the same values* given the same node noise and differ only
in cost:

Per batch of Q queries k_1..k_Q (phase ``ecdf pointwise``, 3 rounds):
  1. the analyst sends the indices to every party (n Q index_bits bits; in
     chunks of ``QUERY_CHUNK // n`` queries, one message per party and
     chunk, the chunks' steps 1-2 running side by side: 2 rounds for all)
     and, in the same round, to every server (m Q index_bits bits: a server
     adds its noise on the paths actually asked);
  2. party i computes its Q indicators beta_i 1[alpha_i <= k_q] from its grid
     rank (beta_i = 1, or its 0/1 label for a class ECDF),
     splits them into m additive shares in Z_2^l and sends share s to
     server s (m n Q l bits);
  3. server s sums what it received, adds its part of the node noise on each
     k_q's path and sends the Q sums to the analyst (m Q l bits), who adds them.
Cost: O(n |B|) bits for |B| queries, every party online for every query.

Threat model: static semi-honest, private channels. Any m - 1 servers see
uniformly random shares (independent of every value); a server colluding
with parties learns nothing more about the others. All m servers together
learn every indicator. Noise: as :mod:`ustat.ecdf.servers` (modes ``each``
and ``split``, the node noise drawn once per release and reused).
m > 2 servers: supported (shares and noise parts for every server).

Simulation note: the parties' share randomness is one batched draw from a
stream derived for the parties, as in :mod:`noise.distributed` (the same
draws in every process of a run: each party's rows are its own, computed
from the indices it received; a server adds what it received).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from mpc.arith.sharing import additive_share

from .servers import (
    QUERY_CHUNK,
    check_query,
    index_bits,
    noise_share_ring,
    open_to_analyst,
    server_ids,
)
from .tree import Tree, TreeNoise

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

__all__ = ["PointwiseServers"]


class PointwiseServers:
    """m servers answering each query by a fresh secure aggregation of the parties' indicators."""

    def __init__(self, session, ranks, tree: Tree, noise: TreeNoise, weights=None):
        ranks = np.asarray(ranks, dtype=np.int64)
        if ranks.size != session.n_parties:
            raise ValueError(f"ranks: {ranks.size} values for {session.n_parties} parties")
        m = server_ids(session).size
        if noise.servers != m:
            raise ValueError(f"noise has parts for {noise.servers} servers, the session has {m}")
        self.session, self.tree, self.noise, self.ranks = session, tree, noise, ranks
        self.weights = (np.ones(ranks.size, np.uint64) if weights is None
                        else session.ring.element(np.asarray(weights, np.int64)))

    def query(self, idx: ArrayLike) -> np.ndarray:
        """Noisy counts at threshold indices ``idx`` (int64), steps 1-3."""
        s, ring, net = self.session, self.session.ring, self.session.net
        idx = check_query(idx, self.tree.n_points)
        sid = server_ids(s)
        m, n, Q = sid.size, self.ranks.size, idx.size
        parties = net.parties
        analyst, ib = net.role("analyst"), index_bits(self.tree.n_points)
        told = np.tile(idx, (m, 1))              # row j: the indices server j receives
        with net.phase("ecdf pointwise"), net.parallel():
            sums = np.zeros((m, Q), dtype=np.uint64)
            rng = s.rng.derive("ecdf", "pointwise-shares", int(s.rng.uint64()))
            step = max(1, QUERY_CHUNK // max(n, 1))
            for q0 in range(0, Q, step):            # chunks of queries (memory bound), side by side
                q1 = min(Q, q0 + step)
                with net.lane():
                    asked = np.tile(idx[q0:q1], (n, 1))     # row i: what party i receives
                    with net.round():
                        net.send(analyst, parties, asked, ib)
                        if q0 == 0:                 # the servers add noise on the asked paths
                            net.send(analyst, sid, told, ib)
                    ind = (self.ranks[:, None] <= asked) * self.weights[:, None]
                    sh = additive_share(ring, ind, m, rng)                          # (m, n, q)
                    with net.round():
                        for j in range(m):          # loop over the m servers
                            net.send(parties, int(sid[j]), sh[j], ring.bits)
                    sums[:, q0:q1] = ring.sum(sh, axis=1)
        for j in range(m):
            if net.is_local(int(sid[j])):
                sums[j] = ring.add(sums[j], noise_share_ring(s, self.noise, j, told[j]))
        with net.phase("ecdf pointwise"):
            return open_to_analyst(s, sums)
