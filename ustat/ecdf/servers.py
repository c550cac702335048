"""FSS servers answering private ECDF queries (Barczewski, Mawass, Ramon, Section 4.2).

Roles on the network: the n parties, ``server0``, ``server1`` and the
``analyst``. Comparison keys: the DCF of Boyle et al. (EUROCRYPT 2021,
:mod:`fss.dcf`), f(x) = beta [x < alpha'], on the reversed grid index
x = D - 2 - k with alpha' = D - 1 - alpha (D = 2^n_bits >= N + 2), so that
f = beta 1[alpha <= k] = beta 1[x_i <= tau_k]. beta is the party's weight:
1 for an ECDF, its 0/1 label for the class ECDFs of a ROC curve (so the
servers do not learn which class a party is in).

Protocol
--------
Offline, once (phase ``ecdf keys``, 1 round):
  1. party i computes its grid rank alpha_i = #{tau_k < x_i}
     (:func:`ustat.ecdf.thresholds.grid_rank`) and *itself* generates a DCF
     key pair for f_i(k) = beta_i 1[alpha_i <= k] with its own CSPRNG (no
     dealer);
  2. it uploads key b to server b (b = 0, 1): n * 2 keys, each as its wire
     record (:func:`fss.dcf.instance_payloads`: K = ``dcf.wire_bits`` bits,
     the key's fields only; the header of :func:`fss.dcf.to_bytes` would
     carry public parameters the server knows); server b parses the n
     records it received (:func:`fss.dcf.from_instance_payloads`, every
     field validated).
  3. each server draws its part of every tree node's noise from its own
     stream (:func:`ustat.ecdf.tree.draw_noise`), once; no traffic.
Online, per batch of queries k_1..k_Q (2 rounds):
  4. the analyst sends the indices to both servers (Q * index_bits each);
  5. server b evaluates all n keys at every k_q (one batched DCF eval),
     sums (a share of count(x <= tau_k) = sum_i beta_i 1[alpha_i <= k]),
     adds its noise part on k's path (L + 1 nodes) and sends the Q shares
     to the analyst (Q * l bits);
  6. the analyst adds the two shares: the noisy count.
Key check (``verify``, :mod:`ustat.ecdf.keycheck`), offline after step 3: each
server evaluates its keys at all N thresholds (keeping the sums at every
threshold, which then answer step 5 without evaluating again), the servers
open u then z (2 rounds, phase ``ecdf key check``), drop the failing keys
(their values taken off the sums) and server0 sends the count to the analyst
(phase ``ecdf key check report``).
Dropouts (:mod:`ustat.ecdf.dropouts`): in a deployment whose party hosts may
vanish, the parties whose keys did not reach both servers are left out after
step 2 (the servers agree which, within the key check's exchanges or, unverified,
in one round of their own, phase ``ecdf keys held``), their keys discarded
unopened; the node noise of step 3 does not depend on n, so it is unchanged.
Cost: offline n * 2 * K bits (K = dcf.wire_bits, 128 + n_bits (130 + l) + l rounded up to
bytes); online per query 2 (index_bits + l) bits: O(n + m |B|) in all.
Server work per query: one DCF eval per key (2 n_bits AES blocks).

Threat model (static, semi-honest; private authenticated channels)
------------------------------------------------------------------
* One server alone sees n keys, each computationally independent of its
  alpha (DCF security, EUROCRYPT 2021 Thm 3.2), the public queries and its
  own noise: it learns nothing about any value (tested: its view has the
  same law for any inputs).
* A server colluding with parties learns those parties' own values only;
  the other parties' keys stay pseudorandom to it.
* A server that also sees the output knows its own noise part: with noise
  mode ``"each"`` (default: every server adds a full DLap per node) the
  other server's noise alone gives epsilon; with ``"split"`` (Polya halves,
  the sum exactly DLap, half the variance) the remaining half gives the
  weaker :meth:`TreeNoise.coalition_epsilon` -- use it only when the output
  goes to an analyst that colludes with no server.
* Both servers together reconstruct every alpha from the key pairs: the
  two servers must not collude. The analyst learns the DP release only.
* Malicious parties: without ``verify`` a malformed key biases the counts by
  an arbitrary amount (privacy of the others is unaffected); with ``verify``
  (:mod:`ustat.ecdf.keycheck`) the servers check every key pair on the N
  thresholds and drop those that are not one step of weight one (a 0/1 label),
  before any sum: one party then moves each count by at most one. Not covered:
  malicious servers.
m > 2 servers: not supported here (``ValueError``); two-key DCF does not
extend to m > 2 for free (the known m-party DCF has keys of size
O(2^(m/2))). The pointwise backend (:mod:`ustat.ecdf.pointwise`) supports any
m >= 2.

Processes (:mod:`mpc.run.runtime`): the same code in every process. A process
generates the keys of its own parties only (one batched ``dcf.gen`` with
``only=``, from a stream derived for the parties' key generation:
``session.rng.derive("ecdf", "party-keygen", nonce)``, private to the
process in a secure run, so each party's keys come from its own process;
the same bits as in the simulator in a seeded run), uploads them as bytes,
and only a server's own process parses and evaluates its keys. In the
simulator the servers use the keys as made (no serialization unless views
are recorded).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, cast

import numpy as np

from fss import dcf
from mpc.session import Session

from . import dropouts, keycheck
from .tree import Tree, TreeNoise

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

    from mpc.arith.rng import RngLike
    from mpc.run.runtime import Runtime

__all__ = [
    "QUERY_CHUNK",
    "FSSServers",
    "check_query",
    "domain_bits",
    "index_bits",
    "key_upload_bits",
    "make_session",
    "open_to_analyst",
    "roles_of",
    "server_ids",
]

#: Key-evaluations per chunk of a query batch (bounds the memory of a batch).
QUERY_CHUNK = 1 << 22


def roles_of(servers: int) -> tuple:
    """The roles of an ECDF session: server0..server{m-1}, analyst (the session adds a dealer,
    which the ECDF protocols never use)."""
    return tuple(f"server{s}" for s in range(servers)) + ("analyst",)


def make_session(n: int, servers: int = 2, *, bits: int = 32, seed: RngLike = None,
                 record_views: bool = False, runtime: Runtime | None = None) -> Session:
    """A session with n parties and the roles server0..server{m-1}, analyst; ``runtime``: this
    process's :class:`mpc.run.runtime.Runtime` in a run of several processes."""
    return Session(n, bits=bits, frac_bits=min(14, bits - 2), seed=seed, roles=roles_of(servers),
                   record_views=record_views, runtime=runtime)


def server_ids(session: Session) -> np.ndarray:
    roles = [r for r in session.net.roles if r.startswith("server")]
    return np.array([session.net.role(r) for r in roles], dtype=np.int64)


def index_bits(n_points: int) -> int:
    """Bits of one query index in 0..N-1."""
    return max(1, (int(n_points) - 1).bit_length())


def domain_bits(n_points: int) -> int:
    """DCF input bits: D = 2^bits >= N + 2 (reversed index encoding)."""
    return max(1, (int(n_points) + 1).bit_length())


def key_upload_bits(n_points: int, out_bits: int) -> int:
    """Bits of one party's key for one server, as uploaded (its wire record)."""
    return dcf.wire_bits(dcf.DCFParams(domain_bits(n_points), out_bits))


def check_query(idx: ArrayLike, n_points: int) -> np.ndarray:
    """Query indices as a new int64 array (Q,), each in 0..N-1 (a copy: in a run across
    processes the indices a server receives are written into it)."""
    idx = np.array(idx, dtype=np.int64).reshape(-1)
    if idx.size and (idx.min() < 0 or idx.max() >= n_points):
        raise ValueError(f"query indices must be in 0..{n_points - 1}")
    return idx


def open_to_analyst(session: Session, shares: np.ndarray) -> np.ndarray:
    """Servers send their (Q,) shares to the analyst (one round); returns the signed sums (the
    analyst's: junk in a process where the analyst does not run)."""
    ring, net = session.ring, session.net
    sid = server_ids(session)
    aid = net.role("analyst")
    with net.round():
        for s in range(sid.size):                  # loop over the m servers
            net.send(int(sid[s]), aid, shares[s], ring.bits)
    return ring.to_signed(ring.sum(shares, axis=0)).astype(np.int64)


def noise_share_ring(session: Session, noise: TreeNoise, server: int,
                     idx: np.ndarray) -> np.ndarray:
    """Server ``server``'s noise part on the paths of ``idx``, in Z_2^l."""
    return session.ring.element(noise.share_at(server, idx))


class FSSServers:
    """Two FSS servers holding the parties' DCF keys and their parts of the tree noise.

    Build with :meth:`setup` (the offline phase); :meth:`query` answers any
    batch of threshold indices (the online phase), reusing the node noise.
    """

    def __init__(self, session, tree: Tree, noise: TreeNoise, params: dcf.DCFParams,
                 keys: tuple, n: int):
        self.session, self.tree, self.noise = session, tree, noise
        self.params, self.keys, self.n = params, keys, int(n)
        self.workers: int | None = getattr(session, "workers", None)
        self.sums: list[Any] = [None, None]     # verified: each server's sums at every threshold
        self.dropped: int | None = None         # verified: keys dropped (None: not verified)
        self.ids = np.arange(self.n)            # the party of each key held
        self.kept: np.ndarray | None = None     # may vanish: the parties both servers hold
        self.lost: dict | None = None           # may vanish: the release's ``dropouts``
        self.failed: np.ndarray | None = None   # verified: the keys that failed the check

    @property
    def counted(self) -> int:
        """The parties the sums count: all, less those lost (:mod:`ustat.ecdf.dropouts`) and
        those whose keys failed the check (the same in the servers' and the analyst's
        processes)."""
        lost = self.lost["parties_lost"] if self.lost else 0
        return self.session.n_parties - lost - (self.dropped or 0)

    @classmethod
    def setup(cls, session: Session, ranks: ArrayLike, tree: Tree, noise: TreeNoise,
              weights: ArrayLike | None = None, verify: bool = False) -> FSSServers:
        """Offline phase: party-side key generation and the upload (steps 1-3).

        ``weights``: beta_i per party (non-negative integers, default 1). ``verify``: the
        servers check every key pair before using it (:mod:`ustat.ecdf.keycheck`: keys with
        64-bit outputs, a triple per party, 2 rounds between the servers) and drop those
        that fail (``dropped``).
        """
        sid = server_ids(session)
        if sid.size != 2 or noise.servers != 2:
            raise ValueError(f"the FSS backend needs exactly m = 2 servers, got {sid.size} "
                             "(two-key DCF does not extend to m > 2; use backend 'pointwise')")
        ranks = np.asarray(ranks, dtype=np.int64)
        n = ranks.size
        if n != session.n_parties:
            raise ValueError(f"ranks: {n} values for {session.n_parties} parties")
        beta = np.ones(n, np.int64) if weights is None else np.asarray(weights, np.int64)
        kappa = keycheck.sketches(session.ring.bits) if verify else 0
        params = dcf.DCFParams(domain_bits(tree.n_points),
                               keycheck.OUT_BITS if verify else session.ring.bits)
        alpha = (np.uint64(1 << params.n_bits) - np.uint64(1)) - ranks.astype(np.uint64)
        nonce = int(session.rng.uint64())
        net = session.net
        mine = np.asarray(net.is_local(net.parties), dtype=bool)
        keys, trip = None, None
        if mine.any():                              # this process's parties make their keys
            keys = dcf.gen(params, alpha, beta, session.rng.derive("ecdf", "party-keygen", nonce),
                           only=None if mine.all() else mine)
            if verify:                              # and their triples (a, a^2)
                trip = keycheck.triples(n, kappa, session.rng.derive("ecdf", "party-triples",
                                                                      nonce))
        rec = dcf.wire_bits(params) // 8
        extra = 16 * kappa                          # the triple's bytes after the key's
        remote = net.link is not None
        uploads: list[np.ndarray | None] = [None, None]
        seeds = [np.zeros(2, np.uint64), np.zeros(2, np.uint64)]
        with net.phase("ecdf keys", offline=True), net.round():
            for b in (0, 1):                        # one upload per server
                if net.record_views or remote:      # the bytes travel (views: small n, tests)
                    upload = np.zeros((n, rec + extra), dtype=np.uint8)
                    if keys is not None:
                        upload[mine, :rec] = dcf.instance_payloads(keys[b])
                    if trip is not None:
                        upload[mine, rec:] = trip[b][mine].reshape(-1, 2 * kappa).view(np.uint8)
                    uploads[b] = upload
                net.send_bits(net.parties, int(sid[b]), 8 * (rec + extra), uploads[b])
            if verify:                              # the coin's seeds (keycheck: why here)
                for b in (0, 1):
                    if net.is_local(int(sid[b])):
                        seeds[b][:] = session.rng.derive("ecdf", "key-check-coin", b,
                                                         nonce).uint64(2)
                    net.send(int(sid[b]), int(sid[1 - b]), seeds[b], 64)
        missing, kept, lost = _missing_keys(session, sid, verify)
        if kept is not None:                        # unverified: the keys both servers hold
            uploads = [None if u is None else u[kept] for u in uploads]
            n = int(kept.sum())
        held: list[Any] = [None, None]
        trips: list[Any] = [None, None]
        malformed = np.zeros((2, n), dtype=bool)
        for b in (0, 1):                            # what each server of this process holds
            if not net.is_local(int(sid[b])):
                continue
            if remote:
                rows = np.ascontiguousarray(cast("np.ndarray", uploads[b])[:, :rec])
                if verify:                          # one bad record is one dropped party
                    malformed[b] = ~dcf.canonical_payloads(rows, params)
                    rows[malformed[b]] = 0          # a canonical filler, dropped below
                    trips[b] = np.ascontiguousarray(cast("np.ndarray", uploads[b])[:, rec:]) \
                        .view(np.uint64).reshape(n, 2, kappa)
                held[b] = dcf.from_instance_payloads(rows, b, params, insecure=session.insecure)
            else:                                   # one process: it generated every key
                assert keys is not None
                held[b] = keys[b] if kept is None else keys[b].take(np.flatnonzero(kept))
                trips[b] = None if trip is None else trip[b] if kept is None else trip[b][kept]
        out = cls(session, tree, noise, params, tuple(held), n)
        if kept is not None:
            out.ids, out.kept, out.lost = np.flatnonzero(kept), kept, lost
        if verify:
            out._verify(np.stack(seeds), trips, malformed, missing)
        return out

    def _verify(self, seeds: np.ndarray, trips: list, malformed: np.ndarray,
                missing: np.ndarray | None = None) -> None:
        """The key check (:mod:`ustat.ecdf.keycheck`): each server evaluates its keys at all
        N thresholds (the sums at every threshold come out of the same pass and answer the
        queries), the servers open u, then z (2 rounds: phase ``ecdf key check``), drop the
        keys that fail, and server0 tells the analyst how many (1 round: phase ``ecdf key
        check report``). In a run that may lose party hosts (``missing``: bool (2, n), the
        parties whose keys server b did not receive) the first round's flags also carry
        ``missing`` and the count the parties lost (:mod:`ustat.ecdf.dropouts`: no round, no
        bit more): their keys are left out unopened, as the failing ones."""
        s, net = self.session, self.session.net
        sid, n, N = server_ids(s), self.n, self.tree.n_points
        kappa = keycheck.sketches(s.ring.bits)
        W, tail = keycheck.sketch_weights(keycheck.coin(seeds[0], seeds[1], kappa, N))
        ab: list[Any] = [None, None]
        for b in (0, 1):
            if self.keys[b] is not None:            # this process holds server b
                ab[b], self.sums[b] = keycheck.server_pass(self.params, b, self.keys[b], W,
                                                           QUERY_CHUNK, self.workers)
        msg = [np.zeros((n, kappa + 1), np.uint64) for _ in range(2)]
        with net.phase("ecdf key check", offline=True):
            with net.round():                       # u = A + a, and the malformed flags
                for b in (0, 1):
                    if ab[b] is not None:
                        msg[b][:, :kappa] = keycheck.open_shares(b, ab[b], tail, trips[b])
                        msg[b][:, kappa] = malformed[b]
                        if missing is not None:     # bit 1: server b lacks the party's keys
                            msg[b][:, kappa] |= missing[b].astype(np.uint64) << np.uint64(1)
                    net.send(int(sid[b]), int(sid[1 - b]), msg[b], 64)
            u = msg[0][:, :kappa] + msg[1][:, :kappa]
            z = [np.zeros((n, kappa), np.uint64) for _ in range(2)]
            with net.round():                       # z = A^2 - B + (c - a^2)
                for b in (0, 1):
                    if ab[b] is not None:
                        z[b][:] = keycheck.check_shares(b, ab[b], tail, trips[b], u)
                    net.send(int(sid[b]), int(sid[1 - b]), z[b], 64)
            flags = msg[0][:, kappa] | msg[1][:, kappa]
            lost = flags & np.uint64(2) != 0
            self.failed = (~keycheck.decide(z[0], z[1]) | (flags & np.uint64(1) != 0)) & ~lost
            self._take_off(np.flatnonzero(self.failed | lost))
        # the count to the analyst: the keys dropped, and the parties lost above bit 32
        count = np.array([int(self.failed.sum()) | int(lost.sum()) << 32], np.int64)
        with net.phase("ecdf key check report", offline=True), net.round():
            net.send(int(sid[0]), net.role("analyst"), count, 64)
        self.dropped = int(count[0]) & 0xFFFFFFFF
        if missing is not None:
            self.lost = dropouts.outcome(s, int(count[0]) >> 32)
            self.kept = ~lost if any(k is not None for k in self.keys) else None

    def _take_off(self, gone: np.ndarray) -> None:
        """Verified keys: take what the keys ``gone`` (indices into this server's keys) added
        off each local server's sums at every threshold (one DCF eval per key and threshold;
        the keys stay, the sums answer the queries)."""
        N = self.tree.n_points
        for b in (0, 1):
            sums = self.sums[b]
            if sums is not None and gone.size:
                for q0, q1, y in keycheck.chunked_evals(self.params, b, self.keys[b].take(gone),
                                                        np.arange(N), QUERY_CHUNK, self.workers):
                    sums[q0:q1] -= y.sum(axis=1, dtype=np.uint64)

    def keep_only(self, later: FSSServers) -> None:
        """Leave out, after the setup, the parties that a ``later`` upload of the same run lost
        (its :attr:`kept`, a subset of this one's): a ROC curve's second class lost a host
        that the first kept, so both classes count the same parties. Local work only (each
        server knows both sets, the analyst both counts). A party whose key failed this
        check and whose host was then lost counts in both ``keys_dropped`` and the loss."""
        if self.kept is not None and later.kept is not None:   # a server: its keys
            newly = self.kept & ~later.kept
            keys = np.flatnonzero(newly[self.ids])
            if self.failed is not None:         # verified: the sums hold the keys that passed
                self._take_off(keys[~self.failed[keys]])
            elif keys.size:                     # unverified: the keys are evaluated per query
                inside = np.flatnonzero(~newly[self.ids])
                self.keys = tuple(None if k is None else k.take(inside) for k in self.keys)
                self.ids, self.n = self.ids[inside], int(inside.size)
            self.kept = later.kept
        self.lost = later.lost

    def _local_sums(self, b: int, idx: np.ndarray) -> np.ndarray:
        """Server b: sum over all keys of its DCF shares at every index (Q,), in Z_2^l
        (verified keys: the sums the check computed, without the dropped keys)."""
        ring = self.session.ring
        if self.sums[b] is not None:
            return self.sums[b][idx] & ring.mask
        out = np.empty(idx.size, dtype=np.uint64)
        for q0, q1, y in keycheck.chunked_evals(self.params, b, self.keys[b], idx, QUERY_CHUNK,
                                                self.workers):
            out[q0:q1] = y.sum(axis=1, dtype=np.uint64) & ring.mask
        return out

    def query(self, idx: ArrayLike) -> np.ndarray:
        """Online phase (steps 4-6): noisy counts at threshold indices ``idx`` (int64)."""
        s, ring, net = self.session, self.session.ring, self.session.net
        idx = check_query(idx, self.tree.n_points)
        sid = server_ids(s)
        with net.phase("ecdf queries"):
            with net.round():
                for b in range(2):
                    net.send(net.role("analyst"), int(sid[b]), idx, index_bits(self.tree.n_points))
            shares = np.zeros((2, idx.size), dtype=np.uint64)
            for b in range(2):                      # each server's work, in its own process
                if self.keys[b] is not None:
                    shares[b] = ring.add(self._local_sums(b, idx),
                                         noise_share_ring(s, self.noise, b, idx))
            return open_to_analyst(s, shares)


def _missing_keys(session: Session, sid: np.ndarray, verify: bool) -> tuple:
    """After the upload, in a run that may lose party hosts (:mod:`ustat.ecdf.dropouts`):
    ``(missing, kept, lost)``: ``missing`` bool (2, n), the parties whose keys server b (of
    this process) did not receive, or None when no host may vanish; with ``verify`` the key
    check carries it (``kept``, ``lost`` None), else one round agrees ``kept`` (bool (n,))
    and ``lost`` (the release's ``dropouts``)."""
    if not dropouts.may_vanish(session):
        return None, None, None
    net = session.net
    missing = np.zeros((2, session.n_parties), dtype=bool)
    for b in (0, 1):
        if net.is_local(int(sid[b])):
            missing[b] = ~dropouts.reached(session)
    if verify:
        return missing, None, None
    kept, lost = dropouts.agree_kept(session, sid, [~missing[0], ~missing[1]])
    return missing, kept, lost
