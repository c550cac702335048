"""Tree noise for the private ECDF: one exact discrete Laplace variable per tree node.

Barczewski, Mawass, Ramon, Section 3.1, Eq. (2) and Theorem 3.1, with a
branching factor b >= 2 (the paper uses b = 2 and mentions other bases).

Tree. N public thresholds are the leaves 0..N-1 (0-based); L = ceil(log_b N)
(L = 0 for N = 1); level l = 0..L has ceil(N / b^l) nodes, node j of level l
covering leaves [j b^l, (j+1) b^l). The *path* of leaf i is its L + 1
ancestors, one per level: node floor(i / b^l) of level l (the paper's
eta_{ceil(i/2^l), l} in 1-based indices). The noisy count at tau_i is

    c^(tau_i) = #{x <= tau_i} + sum_{l=0..L} eta[l, floor(i / b^l)]

so every point carries exactly L + 1 node noises and repeated or
overlapping queries reuse them: the whole curve costs epsilon once.

Sensitivity (why the nodes on the path are enough). Replacing one record
moves its grid rank from t1 to t2, changing the count vector by the
indicator of the leaf interval [t1, t2) (a suffix [t, N) when a record is
added or removed). Write a node covering leaves [s, min(s + b^l, N)) as the
edge s -- min(s + b^l, N) between boundary points 0..N. A node-noise shift
chi (integers) absorbs the change iff chi is a unit flow from t1 to t2 in
that graph, and it costs
||chi||_1 / scale of epsilon with discrete Laplace noise (ratio a^-|shift|
per node). The cheapest integral unit flow is a shortest path, so

    Delta = max over t1 < t2 of dist(t1, t2) = diameter of the boundary graph,

and node scale Delta / epsilon gives epsilon-DP for the whole release.
:func:`ustat.ecdf.sensitivity.tree_sensitivity` computes the diameter
exactly for every N and b (a DP over levels, checked against BFS); for a
full binary tree (N = 2^L) it is L (for L >= 1), for other N it can be
smaller (N = 78: 6, not L = 7). The paper's bound L + 1 (Lemma 1,
Theorem 3.1) holds and is at least one unit loose; ``rule="paper"``
reproduces the paper's (L + 1) / epsilon.
Proof sketch for b = 2: an end-to-end lemma d(a, 0) + d(a, 2^K) <= K + 1 by
induction, then for t1 < 2^(L-1) < t2 the two routes (via the midpoint, or
via 0 -- 2^L) sum to at most 2L + 1, so one of them is <= L.

Accuracy. Var DLap(a) = 2a / (1 - a)^2 with a = exp(-1/t) (not 2 t^2;
it is 2t^2 - 1/6 + O(1/t^2)). Expected squared error per point, in counts:

    MSE_counts = (L + 1) * 2a / (1 - a)^2,   t = Delta / epsilon,

and MSE = MSE_counts / n^2 in ECDF units. The paper's 2 (L+1)^3 / eps^2
is the continuous-Laplace value *in counts* (t = (L+1)/eps), not in ECDF
units. Noise split between m servers adds up to the same DLap (same MSE);
the ``"each"`` mode (every server a full DLap) has m times the MSE.

Randomness: all draws are exact integer samplers (:mod:`noise.samplers`)
from a CSPRNG passed in.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass
from fractions import Fraction
from typing import TYPE_CHECKING

import numpy as np

from noise.samplers import as_fraction, discrete_laplace, polya, polya_pmf, round_scale_up

from .noise_law import NodeNoiseLaw
from .sensitivity import tree_sensitivity

if TYPE_CHECKING:
    from collections.abc import Iterable

    from numpy.typing import ArrayLike

    from mpc.arith.rng import CSPRNG, RngLike

__all__ = [
    "NOISE_MODES",
    "Tree",
    "TreeNoise",
    "best_branching",
    "dlap_variance",
    "draw_noise",
    "interval_sensitivity",
    "planned_law",
]

NOISE_MODES = ("split", "each", "central", "mpc")


def _int(v, name: str, lo: int, hi: int | None = None) -> int:
    if isinstance(v, (bool, np.bool_)) or not isinstance(v, numbers.Integral):
        raise TypeError(f"{name} must be an integer, got {v!r}")
    i = int(v)
    if i < lo or (hi is not None and i > hi):
        raise ValueError(f"{name} must be in {lo}..{hi if hi is not None else 'inf'}, got {v}")
    return i


@dataclass(frozen=True)
class Tree:
    """The b-ary tree over N leaves (thresholds); nodes are numbered level by level."""

    n_points: int
    branching: int = 2

    def __post_init__(self):
        _int(self.n_points, "n_points (N)", 1)
        _int(self.branching, "branching", 2, 64)

    @property
    def levels(self) -> int:
        """L = ceil(log_b N): levels 0..L (exact integer arithmetic)."""
        L, cap = 0, 1
        while cap < self.n_points:
            cap *= self.branching
            L += 1
        return L

    @property
    def level_sizes(self) -> np.ndarray:
        b, N = self.branching, self.n_points
        return np.array([-(-N // b ** l) for l in range(self.levels + 1)], dtype=np.int64)

    @property
    def offsets(self) -> np.ndarray:
        return np.concatenate([[0], np.cumsum(self.level_sizes)[:-1]]).astype(np.int64)

    @property
    def n_nodes(self) -> int:
        return int(self.level_sizes.sum())

    def path(self, idx: ArrayLike) -> np.ndarray:
        """Node ids of the L + 1 ancestors of leaves ``idx`` (0-based): shape (len(idx), L + 1)."""
        i = np.asarray(idx, dtype=np.int64).reshape(-1)
        if i.size and (i.min() < 0 or i.max() >= self.n_points):
            raise ValueError(f"threshold indices must be in 0..{self.n_points - 1}")
        powers = self.branching ** np.arange(self.levels + 1, dtype=np.int64)
        return self.offsets[None, :] + i[:, None] // powers[None, :]

    def sensitivity(self, rule: str = "exact") -> int:
        """Node units needed to absorb one record's change (see the module docstring).

        ``"exact"``: the diameter of the boundary graph over the N leaves
        (:func:`ustat.ecdf.sensitivity.tree_sensitivity`; below L when N is not b^L);
        ``"paper"``: L + 1 (Theorem 3.1; b = 2 only).
        """
        if rule == "paper":
            if self.branching != 2:
                raise ValueError("sensitivity rule 'paper' (L + 1) is proved for branching 2 only")
            return self.levels + 1
        if rule != "exact":
            raise ValueError(f"sensitivity rule must be 'exact' or 'paper', got {rule!r}")
        return tree_sensitivity(self.n_points, self.branching)


def interval_sensitivity(branching: int, levels: int) -> int:
    """Diameter of the boundary graph of the full b-ary tree of depth L (N = b^L leaves).

    The full-tree case of :func:`ustat.ecdf.sensitivity.tree_sensitivity`, which
    handles every N (a truncated last subtree can make the diameter smaller).
    """
    b = _int(branching, "branching", 2, 64)
    L = _int(levels, "levels", 0, 64)
    return tree_sensitivity(b ** L, b)


def dlap_variance(scale: float | Fraction) -> float:
    """Variance 2a / (1 - a)^2 of the discrete Laplace with a = exp(-1/scale)."""
    t = float(scale)
    one_minus_a = -math.expm1(-1.0 / t)
    return 2.0 * math.exp(-1.0 / t) / (one_minus_a * one_minus_a)


def _scale_for(sensitivity: int, epsilon: float) -> Fraction:
    return round_scale_up(Fraction(sensitivity) / as_fraction(epsilon, "epsilon"))


def planned_law(tree: Tree, epsilon: float, *, mode: str = "split", servers: int = 2,
                rule: str = "exact") -> NodeNoiseLaw:
    """The node-noise law :func:`draw_noise` would use, before anything is drawn (public
    parameters only: what a refusal from public parameters is computed from)."""
    eps = _epsilon(epsilon)
    if math.isinf(eps):
        return NodeNoiseLaw(None)
    copies = _int(servers, "servers", 2, 64) if mode == "each" else 1
    return NodeNoiseLaw(_scale_for(tree.sensitivity(rule), eps), copies)


def best_branching(n_points: int, epsilon: float,
                   candidates: Iterable[int] = range(2, 17)) -> int:
    """The branching factor with the smallest per-point MSE (exact sensitivity) for N, epsilon."""
    def mse(b):
        t = Tree(n_points, b)
        return (t.levels + 1) * dlap_variance(_scale_for(t.sensitivity(), epsilon))
    return min(candidates, key=mse)


def _polya_pair_pmf_ratio(r: Fraction, scale: Fraction, kmax: int = 64) -> float:
    """max_k log P(D = k) / P(D = k + 1) for D = X - Y, X, Y iid Polya(r, a) (r < 1).

    The privacy loss per unit node shift against someone who knows the other
    servers' shares and sees the output; computed in float64 from the pmf.
    """
    a = math.exp(-1.0 / float(scale))
    j_max = int(40.0 * float(scale) / max(float(r), 1e-3)) + 4 * kmax + 64
    p = polya_pmf(np.arange(j_max + kmax + 2), r, scale)
    P = np.array([np.dot(p[k:k + j_max], p[:j_max]) for k in range(kmax + 2)])
    ratio = np.log(P[:-1] / P[1:])
    return float(max(ratio.max(), -math.log(a)))


@dataclass(frozen=True)
class TreeNoise:
    """Node noise of one release and its accounting.

    ``shares``: int64 (m, n_nodes); row s is server s's additive part (the
    node noise is the column sum). ``mode``: ``"split"`` (every server draws a
    Polya(1/m, a) difference per node; the sum is exactly DLap(a)),
    ``"each"`` (every server a full DLap(a): epsilon holds even against a
    server that sees the output), ``"central"`` (one trusted drawer, m = 1),
    ``"mpc"`` (the servers sample one DLap(a) per node inside a secure
    computation, :mod:`ustat.ecdf.node_noise`: row s holds server s's
    additive share in Z_2^``bits`` as int64, uniform on its own; epsilon
    holds against a server that sees the output, within ``delta``).
    ``scale`` is None for epsilon = inf (no noise, not private).
    """

    tree: Tree
    epsilon_requested: float
    epsilon: float
    scale: Fraction | None
    sensitivity: int
    mode: str
    shares: np.ndarray
    bits: int | None = None         # mode "mpc": shares are additive mod 2^bits
    delta: float = 0.0              # mode "mpc": the in-MPC sampler's delta (whole release)

    @property
    def servers(self) -> int:
        return int(self.shares.shape[0])

    @property
    def total(self) -> np.ndarray:
        if self.bits is None:
            return self.shares.sum(axis=0)
        mask, half = np.uint64((1 << self.bits) - 1), np.uint64(1 << (self.bits - 1))
        t = self.shares.view(np.uint64).sum(axis=0, dtype=np.uint64)
        return ((t + half) & mask).astype(np.int64) - np.int64(half)   # signed, l bits

    def at(self, idx: ArrayLike) -> np.ndarray:
        """Total noise (int64) on the points ``idx``: the sum over their paths."""
        return self.total[self.tree.path(idx)].sum(axis=1)

    def share_at(self, server: int, idx: ArrayLike) -> np.ndarray:
        """Server ``server``'s part of the noise on the points ``idx``."""
        return self.shares[server][self.tree.path(idx)].sum(axis=1)

    @property
    def law(self) -> NodeNoiseLaw:
        """The law of one node's total noise (what every interval is computed from)."""
        if self.scale is None:
            return NodeNoiseLaw(None)
        return NodeNoiseLaw(self.scale, self.servers if self.mode == "each" else 1)

    @property
    def node_variance(self) -> float:
        if self.scale is None:
            return 0.0
        v = dlap_variance(self.scale)
        return v * self.servers if self.mode == "each" else v

    @property
    def mse_counts(self) -> float:
        """Expected squared error per point, in counts: (L + 1) Var(node noise)."""
        return (self.tree.levels + 1) * self.node_variance

    def mse(self, n: int) -> float:
        """Expected squared error per point of the ECDF (counts / n)."""
        return self.mse_counts / float(n) ** 2

    def coalition_epsilon(self) -> float:
        """Guarantee against one server that also sees the output (it knows its share).

        ``"each"``: epsilon (the other servers' full DLap suffice); ``"split"``: the
        remaining Polya((m-1)/m) differences give Delta * max_k log(P(k)/P(k+1)).
        """
        if self.scale is None:
            return math.inf
        if self.mode in ("each", "central", "mpc") or self.servers == 1:
            return self.epsilon
        r = Fraction(self.servers - 1, self.servers)
        return self.sensitivity * _polya_pair_pmf_ratio(r, self.scale)


def draw_noise(tree: Tree, epsilon: float,
               rng: RngLike | list[CSPRNG] | tuple[CSPRNG, ...], *, servers: int = 2,
               mode: str = "split", rule: str = "exact") -> TreeNoise:
    """Draw the node noise of one release (exact samplers).

    ``rng``: one CSPRNG (or seed) for all servers, or a sequence of one per
    server (each server draws its part from its own stream, so no single
    server knows a node's noise in modes ``"split"`` and ``"each"``).

    Scale t = Delta / epsilon rounded up to a dyadic rational
    (:func:`noise.samplers.round_scale_up`); the epsilon reported is
    Delta / t <= the requested one. ``epsilon = inf``: zero noise.
    Cost: n_nodes ~ N b / (b - 1) draws per server (4 Polya draws per node and
    server in mode ``"split"``).
    """
    if not isinstance(tree, Tree):
        raise TypeError(f"tree must be a Tree, got {type(tree).__name__}")
    if mode not in NOISE_MODES:
        raise ValueError(f"noise mode must be one of {NOISE_MODES}, got {mode!r}")
    if mode == "mpc":
        raise ValueError("noise mode 'mpc' runs a secure computation between the servers: use "
                         "ustat.ecdf.node_noise.draw_noise_mpc(session, tree, epsilon)")
    m = 1 if mode == "central" else _int(servers, "servers", 2, 64)
    eps = _epsilon(epsilon)
    delta = tree.sensitivity(rule)
    M = tree.n_nodes
    if math.isinf(eps):
        return TreeNoise(tree, eps, eps, None, delta, mode, np.zeros((m, M), dtype=np.int64))
    scale = _scale_for(delta, eps)
    eps_used = float(Fraction(delta) / scale)
    rngs = list(rng) if isinstance(rng, (list, tuple)) else [rng] * m
    if len(rngs) != m:
        raise ValueError(f"rng: need one generator per server ({m}), got {len(rngs)}")
    shares = np.empty((m, M), dtype=np.int64)
    for s in range(m):                       # loop over the m servers (their own streams)
        if mode == "split":
            draws = polya(Fraction(1, m), scale, (2, M), rngs[s])
            shares[s] = draws[0] - draws[1]
        else:
            shares[s] = discrete_laplace(scale, (M,), rngs[s])
    return TreeNoise(tree, eps, eps_used, scale, delta, mode, shares)


def _epsilon(epsilon) -> float:
    if isinstance(epsilon, (bool, np.bool_)) or not isinstance(epsilon, numbers.Real):
        raise TypeError(f"epsilon must be a number, got {epsilon!r}")
    e = float(epsilon)
    if math.isnan(e) or e <= 0:
        raise ValueError(f"epsilon must be > 0 (or inf for no noise), got {epsilon!r}")
    return e
