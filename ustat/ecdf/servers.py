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
  2. it uploads key b to server b (b = 0, 1): n * 2 keys, counted at their
     serialized size (:func:`fss.dcf.to_bytes`, header included).
  3. each server draws its part of every tree node's noise from its own
     stream (:func:`ustat.ecdf.tree.draw_noise`), once; no traffic.
Online, per batch of queries k_1..k_Q (2 rounds):
  4. the analyst sends the indices to both servers (Q * index_bits each);
  5. server b evaluates all n keys at every k_q (one batched DCF eval),
     sums (a share of count(x <= tau_k) = sum_i beta_i 1[alpha_i <= k]),
     adds its noise part on k's path (L + 1 nodes) and sends the Q shares
     to the analyst (Q * l bits);
  6. the analyst adds the two shares: the noisy count.
Cost: offline n * 2 * K bits (K = serialized key bits, ~ 128 + n_bits (130 + l)
+ header); online per query 2 (index_bits + l) bits: O(n + m |B|) in all.
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
* Not covered: malicious parties (a malformed key biases the counts by an
  arbitrary amount; privacy of the others is unaffected) or servers.
m > 2 servers: not supported here (``ValueError``); two-key DCF does not
extend to m > 2 for free (the known m-party DCF has keys of size
O(2^(m/2))). The pointwise backend (:mod:`ustat.ecdf.pointwise`) supports any
m >= 2.

Simulation note: the parties' key generation is one batched ``dcf.gen``
call from a stream derived for the parties (``session.rng.derive("ecdf",
"party-keygen", nonce)``) instead of n calls on n party streams; the keys'
law and the messages are the same.
"""

from __future__ import annotations

import dataclasses
import inspect

import numpy as np

from fss import dcf
from mpc.rng import CSPRNG
from mpc.session import Session

from .tree import Tree, TreeNoise

__all__ = ["make_session", "FSSServers", "open_to_analyst", "server_ids", "index_bits",
           "key_upload_bits", "domain_bits", "check_query", "QUERY_CHUNK"]

#: Key-evaluations per chunk of a query batch (bounds the memory of a batch).
QUERY_CHUNK = 1 << 22
#: Whether fss.dcf.eval takes a thread count (``session.workers`` is passed on when set).
_EVAL_HAS_WORKERS = "workers" in inspect.signature(dcf.eval).parameters


def make_session(n: int, servers: int = 2, *, bits: int = 32, seed=None,
                 record_views: bool = False) -> Session:
    """A session with n parties and the roles server0..server{m-1}, analyst."""
    roles = tuple(f"server{s}" for s in range(servers)) + ("analyst",)
    return Session(n, bits=bits, frac_bits=min(14, bits - 2), seed=seed, roles=roles,
                   record_views=record_views)


def server_ids(session) -> np.ndarray:
    roles = [r for r in session.net.roles if r.startswith("server")]
    return np.array([session.net.role(r) for r in roles], dtype=np.int64)


def index_bits(n_points: int) -> int:
    """Bits of one query index in 0..N-1."""
    return max(1, (int(n_points) - 1).bit_length())


def _one_key(k: dcf.DCFKey, i: int) -> dcf.DCFKey:
    """Party i's key out of the batch (for serialization); other fields are kept."""
    return dataclasses.replace(k, shape=(1,), seed=k.seed[i:i + 1], cw_seed=k.cw_seed[:, i:i + 1],
                               cw_t_left=k.cw_t_left[:, i:i + 1],
                               cw_t_right=k.cw_t_right[:, i:i + 1],
                               cw_value=k.cw_value[:, i:i + 1], cw_last=k.cw_last[i:i + 1])


def domain_bits(n_points: int) -> int:
    """DCF input bits: D = 2^bits >= N + 2 (reversed index encoding)."""
    return max(1, (int(n_points) + 1).bit_length())


def key_upload_bits(n_points: int, out_bits: int) -> int:
    """Serialized bits of one party's key for one server (header included)."""
    params = dcf.DCFParams(domain_bits(n_points), out_bits)
    k0, _ = dcf.gen(params, np.zeros(1, np.uint64), 1, CSPRNG())
    return 8 * len(dcf.to_bytes(k0))


def check_query(idx, n_points: int) -> np.ndarray:
    """Query indices as int64 (Q,), each in 0..N-1."""
    idx = np.asarray(idx, dtype=np.int64).reshape(-1)
    if idx.size and (idx.min() < 0 or idx.max() >= n_points):
        raise ValueError(f"query indices must be in 0..{n_points - 1}")
    return idx


def open_to_analyst(session, shares: np.ndarray) -> np.ndarray:
    """Servers send their (Q,) shares to the analyst (one round); returns the signed sums."""
    ring, net = session.ring, session.net
    sid = server_ids(session)
    aid = net.role("analyst")
    with net.round():
        for s in range(sid.size):                  # loop over the m servers
            net.send(int(sid[s]), aid, shares[s], ring.bits)
    return ring.to_signed(ring.sum(shares, axis=0)).astype(np.int64)


def noise_share_ring(session, noise: TreeNoise, server: int, idx: np.ndarray) -> np.ndarray:
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
        workers = getattr(session, "workers", None)
        use = workers is not None and _EVAL_HAS_WORKERS
        self._eval_options = {"workers": workers} if use else {}

    @classmethod
    def setup(cls, session, ranks, tree: Tree, noise: TreeNoise, weights=None) -> "FSSServers":
        """Offline phase: party-side key generation and the upload (steps 1-3).

        ``weights``: beta_i per party (non-negative integers, default 1).
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
        params = dcf.DCFParams(domain_bits(tree.n_points), session.ring.bits)
        alpha = (np.uint64(1 << params.n_bits) - np.uint64(1)) - ranks.astype(np.uint64)
        nonce = int(session.rng.uint64())
        k0, k1 = dcf.gen(params, alpha, beta, session.rng.derive("ecdf", "party-keygen", nonce))
        net = session.net
        per_key = 8 * len(dcf.to_bytes(_one_key(k0, 0)))
        with net.phase("ecdf keys", offline=True), net.round():
            for b, k in enumerate((k0, k1)):        # one upload per server
                payload = None
                if net.record_views:                # small n (tests): the actual bytes
                    payload = [dcf.to_bytes(_one_key(k, i)) for i in range(n)]
                net.send_bits(session.net.parties, int(sid[b]), per_key, payload)
        return cls(session, tree, noise, params, (k0, k1), n)

    def _local_sums(self, b: int, idx: np.ndarray) -> np.ndarray:
        """Server b: sum over all keys of its DCF shares at every index (Q,), in Z_2^l."""
        ring = self.session.ring
        Q, n = idx.size, self.n
        x_all = (np.uint64((1 << self.params.n_bits) - 2) - idx.astype(np.uint64))
        out = np.empty(Q, dtype=np.uint64)
        step = max(1, QUERY_CHUNK // max(n, 1))
        for q0 in range(0, Q, step):                # chunks of queries (memory bound)
            q1 = min(Q, q0 + step)
            x = np.ascontiguousarray(np.broadcast_to(x_all[q0:q1, None], (q1 - q0, n)))
            y = dcf.eval(self.params, b, self.keys[b], x, **self._eval_options)
            out[q0:q1] = y.sum(axis=1, dtype=np.uint64) & ring.mask
        return out

    def query(self, idx) -> np.ndarray:
        """Online phase (steps 4-6): noisy counts at threshold indices ``idx`` (int64)."""
        s, ring, net = self.session, self.session.ring, self.session.net
        idx = check_query(idx, self.tree.n_points)
        sid = server_ids(s)
        with net.phase("ecdf queries"):
            with net.round():
                for b in range(2):
                    net.send(net.role("analyst"), int(sid[b]), idx, index_bits(self.tree.n_points))
            shares = np.empty((2, idx.size), dtype=np.uint64)
            for b in range(2):                      # each server's local work
                shares[b] = ring.add(self._local_sums(b, idx),
                                     noise_share_ring(s, self.noise, b, idx))
            return open_to_analyst(s, shares)
