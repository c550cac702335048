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

Dropouts (:mod:`ustat.ecdf.dropouts`; in a deployment whose party hosts may
vanish): the parties of hosts that never joined are left out from the start
(every process agreed them at start-up: n is then the parties present, before
the first query sets the quantiles' targets). In each batch, the servers keep
their sums per host until its shares are in, then agree K_t = the parties
whose shares reached every server (1 round, phase ``ecdf pointwise held``:
each server's set, one bit per party, to every other server and to the
analyst) and open the sums over K_t only: the shares of the others are
discarded unopened. The first batch fixes K (n = |K|; the quantile search's
targets n q follow it). A party of K lost at a later batch ends the run with
no release (:class:`~ustat.ecdf.dropouts.LateDropoutError`): its indicators
are already in opened answers, and answers at the same nodes without it
would open what it added, up to the node noise they share. Privacy: the node
noise is drawn once per release, independent of n; a party outside K enters
no opened sum, a party of K enters every one, so the release is the release
on K's data (epsilon-DP for everyone, the vanished included); the servers
exchange only which parties' shares they hold, which the transport shows
anyway. Cost: 1 round and m^2 n bits per batch (each server's n bits to the
m - 1 others and the analyst), offline; per-host sums, O(hosts Q) words per
server.

Simulation note: the parties' share randomness is one batched draw from a
stream derived for the parties, as in :mod:`noise.distributed` (the same
draws in every process of a run: each party's rows are its own, computed
from the indices it received; a server adds what it received).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from mpc.arith.sharing import additive_share

from . import dropouts
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
        vanish = dropouts.may_vanish(session)
        #: may vanish: the parties counted (those present at start until the first batch)
        self.kept: np.ndarray | None = ~dropouts.absent(session) if vanish else None
        self.lost: dict | None = None           # may vanish: the release's ``dropouts``
        self.opened = False                     # an answer counting ``kept`` was opened

    @property
    def counted(self) -> int:
        """The parties the answers count (all, less those left out as dropouts)."""
        return self.ranks.size if self.kept is None else int(self.kept.sum())

    def query(self, idx: ArrayLike) -> np.ndarray:
        """Noisy counts at threshold indices ``idx`` (int64), steps 1-3."""
        s, ring, net = self.session, self.session.ring, self.session.net
        idx = check_query(idx, self.tree.n_points)
        sid = server_ids(s)
        m, n, Q = sid.size, self.ranks.size, idx.size
        parties = net.parties
        analyst, ib = net.role("analyst"), index_bits(self.tree.n_points)
        told = np.tile(idx, (m, 1))              # row j: the indices server j receives
        # may vanish: each server's sums per host (unit), until the servers agree who is in
        unit = np.zeros(0, np.int64) if self.kept is None else \
            np.unique(dropouts.units(s), return_inverse=True)[1].astype(np.int64)
        parts = None if self.kept is None else np.zeros((m, int(unit.max()) + 1, Q), np.uint64)
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
                    if parts is None:
                        sums[:, q0:q1] = ring.sum(sh, axis=1)
                    else:
                        for j in range(m):          # loop over the m servers
                            np.add.at(parts[j, :, q0:q1], unit, sh[j])
        if parts is not None:
            sums = self._kept_sums(parts, unit, sid)
        for j in range(m):
            if net.is_local(int(sid[j])):
                sums[j] = ring.add(sums[j], noise_share_ring(s, self.noise, j, told[j]))
        with net.phase("ecdf pointwise"):
            out = open_to_analyst(s, sums)
        self.opened = True
        return out

    def _kept_sums(self, parts: np.ndarray, unit: np.ndarray, sid: np.ndarray) -> np.ndarray:
        """May vanish: the servers agree whose shares every one received (phase ``ecdf
        pointwise held``), fix K at the first batch (:class:`LateDropoutError` on a loss of
        K's parties after an answer was opened) and sum the hosts of K only: uint64 (m, Q)."""
        s = self.session
        held = dropouts.reached(s)
        kept, lost = dropouts.agree_kept(s, sid, [held] * sid.size, "ecdf pointwise held",
                                         "query")
        assert self.kept is not None
        kept &= self.kept
        if self.opened and (self.kept & ~kept).any():
            raise dropouts.LateDropoutError(
                f"{int((self.kept & ~kept).sum())} parties' answers did not reach every server "
                "after answers counting them were opened (pointwise backend): no release")
        self.kept, self.lost = kept, lost
        whole = np.zeros(parts.shape[1], dtype=bool)    # the hosts whose parties are all kept
        whole[np.unique(unit[kept])] = True
        whole[np.unique(unit[~kept])] = False
        return s.ring.sum(parts[:, whole], axis=1)
