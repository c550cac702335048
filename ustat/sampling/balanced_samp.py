"""BalancedSamp (Sinh & Ramon, Algorithm 1): edges whose vertex degrees differ by at most one.

Part of :mod:`ustat.sampling` (import from there).
"""

from __future__ import annotations

import numpy as np

from mpc.arith.rng import CSPRNG, RngLike, as_rng

from .combinatorics import (
    _canonical,
    _distinct_sorted,
    _enumerate,
    _in_sorted,
    _key_dup_mask,
    _lex_ranks,
    _one_word,
    _repeat_mask,
    _row_key,
    _sort_rows,
)
from .hypergraph import ENUMERATION_LIMIT, Hypergraph, _check_int, _check_m, _check_nk


def balanced(n: int, m: int, k: int, rng: RngLike = None, *, max_rounds: int = 10_000,
             mix_sweeps: int | None = None) -> Hypergraph:
    """BalancedSamp: m distinct k-subsets with every degree floor(km/n) or ceil(km/n).

    Paper: Sinh & Ramon, Algorithm 1 (Appendix F). Algorithm 1 gives every
    vertex a capacity p_i and draws edges one at a time, each vertex with
    probability proportional to its remaining capacity. Drawing vertices
    proportionally to remaining capacity is exactly reading a uniformly
    random permutation of the "stub" list in which vertex i appears p_i
    times, so we do that for all edges at once (the configuration model):

    1. Degree targets: q, r = divmod(k m, n); a uniformly random set of r
       vertices gets degree q + 1, the others q. (Algorithm 1 gives every
       vertex capacity ceil(k m / n), so its degrees are only bounded above;
       fixing the capacities to sum to k m makes the floor/ceil property
       exact.)
    2. One random permutation of the k m stubs, cut into m rows of k
       (:meth:`mpc.arith.rng.CSPRNG.shuffled`: the stubs ride in the sorted random
       words, no gather).
    3. Repair: rows with a repeated vertex, or equal to another row, are
       invalid (Algorithm 1 samples without replacement inside an edge and
       stores E as a set; a plain permutation enforces neither). Each
       invalid row e exchanges one vertex occurrence (a repeated one if any)
       with a random valid row f: e' = e - u + w, f' = f - w + u, accepted
       when f' is valid and new. Vertex occurrences are only moved, never
       created, so degrees stay exactly at their targets. Batched over all
       invalid rows per round; when k m / n << n only a handful of rows need
       it and it takes a few rounds.
    4. Mixing: the repair is a greedy, not a reversible, move, so it biases
       the law when many rows were repaired (dense or small cases). Rounds of
       the classical switch chain (random pairs of rows on disjoint vertex
       sets exchange a vertex when both results stay valid and new) then
       move the law towards uniform over simple hypergraphs with the given
       degrees: ``mix_sweeps`` * m proposals (default 5 when k m <= 2*10^5,
       else 5 * min(1, 10 * initial invalid fraction), usually 0 for large
       sparse E where the stub permutation is already close to uniform; at
       most 300 rounds).
    5. If m > C(n, k) / 2 the dense case is reduced to the sparse one: sample
       a balanced hypergraph with C(n,k) - m edges and return its complement
       in the complete k-graph (which is regular, so the complement is
       balanced too).

    Distribution: conditioned on the degree sequence, a uniformly random
    stub permutation that happens to be simple is a uniform simple
    hypergraph with those degrees; steps 3-4 keep the result close to that
    law (tested on n = 6, k = 2, m = 6, where the repair alone is biased by
    a factor 2 on one isomorphism class and the mixed sampler is not). The
    choice of which r vertices get the larger degree is exactly uniform.

    Cost: one permutation of k m stubs (AES keystream + a sort of packed
    words, O(k m log(k m))) plus O(m log m) sorts of packed rows (duplicate
    check, canonical order) and O(m) per repair/mixing round; n = 10^6,
    m = 2*10^6, k = 2 takes about 0.2 s (10^7 and 2*10^7: 2.3 s on reused
    memory, 4.3 s on fresh pages),
    n = 2000, m = 10^6, k = 2 (density 1/2) about 5 s. The dense case
    enumerates C(n, k) <= 2m edges.
    """
    n, k, N = _check_nk(n, k)
    m = _check_m(m, N, n, k)
    max_rounds = _check_int(max_rounds, "max_rounds")
    if mix_sweeps is not None and _check_int(mix_sweeps, "mix_sweeps") < 0:
        raise ValueError(f"mix_sweeps must be >= 0, got {mix_sweeps}")
    rng = as_rng(rng)
    if 2 * m > N and N <= ENUMERATION_LIMIT:
        allk = _enumerate(n, k)
        if m == N:
            return Hypergraph(allk, n, k, "balanced")
        comp = _balanced_edges(n, N - m, k, rng, max_rounds, mix_sweeps)
        ranks = _lex_ranks(comp, n, k)
        keep = np.ones(N, dtype=bool)
        keep[ranks] = False
        return Hypergraph(allk[keep], n, k, "balanced")
    return Hypergraph(_balanced_edges(n, m, k, rng, max_rounds, mix_sweeps), n, k, "balanced")


def _balanced_edges(n: int, m: int, k: int, rng: CSPRNG, max_rounds: int,
                    mix_sweeps=None) -> np.ndarray:
    q, r = divmod(k * m, n)
    for _attempt in range(20):
        deg = np.full(n, q, dtype=np.int64)
        if r:
            deg[rng.choice(n, r)] += 1
        stubs = np.repeat(np.arange(n, dtype=np.int64), deg)
        edges = _sort_rows(rng.shuffled(stubs).reshape(m, k))   # stubs[rng.permutation(k m)]
        st = _SwitchState(edges, n)
        bad_frac = st.bad.size / m
        if not st.repair(rng, max_rounds):
            continue
        sweeps = mix_sweeps
        if sweeps is None:
            sweeps = 5 if k * m <= 200_000 else int(round(5 * min(1.0, 10 * bad_frac)))
        if sweeps:
            st.mix(rng, sweeps * m)
        # every row is valid and new: the sorted keys of the valid rows are the
        # sorted rows themselves when a key is the exact packed row
        exact = _one_word(n, k) and st.valid.size == m
        return _canonical(st.edges, n, sorted_words=st.valid if exact else None)
    raise RuntimeError(  # pragma: no cover - never observed
        f"balanced sampling did not converge for n={n}, m={m}, k={k}")


class _SwitchState:
    """Rows of a stub configuration plus the sorted keys of its valid rows.

    A *switch* exchanges one vertex occurrence between two rows e and f:
    e' = e - u + w, f' = f - w + u (u in e, w in f). Switches preserve every
    degree. ``repair`` applies them to invalid rows (repeated vertex or
    duplicate) with random valid partners, accepting a switch when f' stays
    valid and new; ``mix`` applies random switches between valid rows,
    accepting when both results are valid and new: the classical switch
    Markov chain, whose stationary law is uniform over simple hypergraphs
    with the given degrees. Each round is batched over disjoint row pairs;
    proposals whose new rows collide with each other are rejected.
    """

    def __init__(self, edges: np.ndarray, n: int):
        self.edges, self.n = edges, n
        self.m, self.k = edges.shape
        self.keys = _row_key(edges, n)
        rep = _repeat_mask(edges)
        keys0 = np.where(rep, np.uint64(0), self.keys)
        s = np.sort(keys0)                    # one sort: duplicates and the valid keys
        bad = rep | (_key_dup_mask(keys0, s) & ~rep)
        self.is_bad = bad
        self.bad = np.flatnonzero(bad)
        # distinct keys of the valid rows (= np.sort(keys[~bad])): the distinct
        # keys0, less the 0 that rows with a repeated vertex put there unless
        # the first 0 belongs to a valid row
        valid = _distinct_sorted(s)
        if rep.any() and rep[int(np.argmax(keys0 == 0))]:
            valid = valid[1:]
        self.valid = valid

    def _propose(self, rows_e, rows_f, pos_i, rng):
        e, f = self.edges[rows_e], self.edges[rows_f]
        t = np.arange(rows_e.size)
        pos_j = rng.integers(self.k, (rows_e.size,))
        u, w = e[t, pos_i], f[t, pos_j]
        ok = ~np.any(e == w[:, None], axis=1) & ~np.any(f == u[:, None], axis=1)
        e2, f2 = e.copy(), f.copy()
        e2[t, pos_i] = w
        f2[t, pos_j] = u
        _sort_rows(e2)
        _sort_rows(f2)
        return e2, f2, ok

    def _apply(self, rows_e, rows_f, e2, f2, acc, e_valid):
        """Commit accepted switches; rows_e become valid where e_valid."""
        ke, kf = _row_key(e2, self.n), _row_key(f2, self.n)
        # reject proposals whose new valid keys collide inside the batch
        new = np.concatenate([kf[acc], ke[acc & e_valid]])
        owner = np.concatenate([np.flatnonzero(acc), np.flatnonzero(acc & e_valid)])
        if new.size:
            order = np.argsort(new)
            s = new[order]
            clash = np.zeros(new.size, dtype=bool)
            eq = s[1:] == s[:-1]
            clash[order[1:][eq]] = True
            clash[order[:-1][eq]] = True
            acc = acc.copy()
            acc[owner[clash]] = False
        ev = acc & e_valid
        old = np.concatenate([self.keys[rows_f[acc]],
                              self.keys[rows_e[acc & ~self.is_bad[rows_e]]]])
        if old.size:
            self.valid = np.delete(self.valid, np.searchsorted(self.valid, old))
        self.edges[rows_e[acc]] = e2[acc]
        self.edges[rows_f[acc]] = f2[acc]
        self.keys[rows_e[acc]] = ke[acc]
        self.keys[rows_f[acc]] = kf[acc]
        add = np.sort(np.concatenate([kf[acc], ke[ev]]))
        self.valid = np.insert(self.valid, np.searchsorted(self.valid, add), add)
        self.is_bad[rows_e[ev]] = False
        return ev

    def _partners(self, count, rng, exclude_bad=True):
        p = rng.integers(self.m, (count,))
        _, first = np.unique(p, return_index=True)
        uniq = np.zeros(count, dtype=bool)
        uniq[first] = True
        return p, uniq & ~self.is_bad[p]

    def repair(self, rng: CSPRNG, max_rounds: int) -> bool:
        for _ in range(max_rounds):
            if self.bad.size == 0:
                return True
            rows_e = self.bad
            b = rows_e.size
            e = self.edges[rows_e]
            rep = e[:, 1:] == e[:, :-1]
            has_rep = rep.any(axis=1)
            pos_i = np.where(has_rep, np.argmax(rep, axis=1) + 1, rng.integers(self.k, (b,)))
            rows_f, ok_f = self._partners(b, rng)
            e2, f2, ok = self._propose(rows_e, rows_f, pos_i, rng)
            kf = _row_key(f2, self.n)
            ke = _row_key(e2, self.n)
            acc = ok & ok_f & ~_in_sorted(kf, self.valid)
            e_valid = ~_repeat_mask(e2) & ~_in_sorted(ke, self.valid)
            fixed = self._apply(rows_e, rows_f, e2, f2, acc, e_valid)
            self.bad = rows_e[~fixed]
        return False

    def mix(self, rng: CSPRNG, attempts: int, max_rounds: int = 300) -> None:
        """About ``attempts`` switch proposals between random pairs of (valid) rows.

        Each round draws h disjoint row pairs and keeps the *active* ones:
        pairs none of whose vertices occurs in an earlier pair of the round.
        A switch does not change the vertex set of its pair, so the active
        set is the same before and after the round, and active switches
        cannot interfere (their rows live on disjoint vertex sets): a round
        is a product of independent reversible switches, and the chain keeps
        the uniform law on simple hypergraphs with these degrees.
        """
        n, m, k = self.n, self.m, self.k
        h = max(1, min(m // 2, n // (4 * k)))
        done = rounds = 0
        while done < attempts and rounds < max_rounds and m >= 2:
            rounds += 1
            rows = rng.choice(m, 2 * h)
            rows_e, rows_f = rows[:h], rows[h:]
            verts = np.concatenate([self.edges[rows_e], self.edges[rows_f]], axis=1)
            first = np.full(n, h, dtype=np.int64)
            np.minimum.at(first, verts.ravel(), np.repeat(np.arange(h), 2 * k))
            active = np.all(first[verts] == np.arange(h)[:, None], axis=1)
            rows_e, rows_f = rows_e[active], rows_f[active]
            done += rows_e.size
            pos_i = rng.integers(k, (rows_e.size,))
            e2, f2, ok = self._propose(rows_e, rows_f, pos_i, rng)
            ke, kf = _row_key(e2, n), _row_key(f2, n)
            acc = ok & ~_in_sorted(ke, self.valid) & ~_in_sorted(kf, self.valid)
            self._apply(rows_e, rows_f, e2, f2, acc, np.ones(rows_e.size, dtype=bool))
