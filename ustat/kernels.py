"""U-statistic kernels: plaintext definitions, output ranges and secure evaluations.

A :class:`Kernel` of degree k maps k records (each with ``columns`` values) to
a real number. It carries

- ``plain(X)``: the vectorized plaintext kernel, ``X`` of shape
  ``(m, k, columns)`` (numeric columns as reals in [0, 1] after
  normalization, categorical columns as integer codes), returning ``(m,)``;
- ``secure(ops, x)``: the same kernel from secure operations
  (:class:`ustat.secure.SecureOps`): ``x[i][c]`` is the ``(k, m)`` sharing of
  column c of the i-th member of each edge; it returns the fixed-point
  sharing of the kernel value;
- ``output_range = (lo, hi)``: the kernel's range, so its sensitivity is
  ``Delta f = hi - lo``; ``valid_range``: the released statistic's range
  (the release is clamped into :attr:`Kernel.release_range`);
- ``encoding`` (``"order"`` or ``"arithmetic"``) and ``input_gain``: how the
  inputs are used, which decides their fixed-point encoding
  (:mod:`ustat.umpc.precision`);
- optionally ``aux`` (per-record values summed privately next to the
  U-statistic, e.g. the class counts of the AUC), ``finalize`` (the
  post-processing from the noisy U-statistic and noisy auxiliary sums to the
  released statistic) and ``notes`` (remarks on a release computed from the
  same noisy values, e.g. that a clamp was active: post-processing, so they
  cost no privacy).
- ``extra``: ``"levels"`` ({column: number of category codes}) and
  ``"one_per_class"`` (True when the kernel is 0 unless its k members carry
  the k different labels of a class column, with lower range 0, and the aux
  sums are the class counts: the AUC and the VUS. The released interval
  then bounds the edge-sampling error more tightly,
  :mod:`ustat.umpc.sampling_error`).
- optionally ``edge_aux_names`` with ``secure_with_aux`` and ``edge_aux_plain``:
  more per-*edge* values, each in [0, 1], summed over the edges next to the
  kernel's (same shares, same aggregation round) and released with their own
  DP noise and share of epsilon. Their only use is the interval: Kendall's
  ``untied_pairs`` is h^2 (1 unless the pair ties in a column), so the
  kernel's variance over the C(n, k) subsets is mean(h^2) - U^2 exactly,
  which :mod:`ustat.umpc.sampling_error` bounds instead of 1 - U^2 (ties
  made that 1.5 times too wide). ``extra["second_moment"]`` names the edge
  sum that is the kernel's square.

Numeric columns are fixed-point encoded, categorical columns (labels, class
ids, category codes) are encoded as ring integers so that kernels can multiply
them without truncation.

Users add their own kernel with :func:`register` (or pass a :class:`Kernel`
object straight to :func:`ustat.umpc.run_umpc`); the protocol, sampling, noise
and command line need nothing else.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

#: How numeric inputs are used: ``"order"`` kernels only compare integer
#: combinations of them (sign, <, =; invariant under x -> a x + b, a > 0), so
#: the inputs get as many fractional bits as the ring allows
#: (:mod:`ustat.umpc.precision`); ``"arithmetic"`` kernels compute with the
#: values (e.g. |x - y|) and share one fixed-point scale with the output.
ENCODINGS = ("order", "arithmetic")


@dataclass(frozen=True)
class Kernel:
    """A symmetric kernel of degree ``degree`` with its secure evaluation."""

    name: str
    degree: int
    columns: int
    plain: Callable[[np.ndarray], np.ndarray]
    secure: Callable
    output_range: tuple
    description: str = ""
    categorical: tuple = ()          # indices of categorical (integer-coded) columns
    column_names: tuple = ()         # default CSV column names (documentation / CLI)
    aux: Callable[[np.ndarray], np.ndarray] | None = None  # (n, d) -> (n, a) values to sum
    aux_sensitivity: float = 0.0     # L1 sensitivity of the aux sum vector
    aux_names: tuple = ()
    finalize: Callable | None = None   # (u, aux_sums, n) -> released statistic
    statistic: str = "U-statistic"   # what finalize releases
    rounds_note: str = ""
    extra: dict = field(default_factory=dict)
    notes: Callable | None = None      # (u, aux_sums, n) -> list of remarks on the release
    valid_range: tuple | None = None   # range of the released statistic (None: see release_range)
    encoding: str = "arithmetic"     # "order": numeric inputs only reach sign/compare gates
    input_gain: int = 1              # half the sum of |coefficients| of a gate's input combination
    aux_label: str = "aux"           # name of the aux sums' epsilon share (epsilon_split)
    edge_aux_names: tuple = ()       # per-edge sums beside the kernel's (values in [0, 1])
    secure_with_aux: Callable | None = None    # (ops, x) -> [f, edge aux 1, ...] shares
    edge_aux_plain: Callable | None = None     # (m, k, d) -> (m, len(edge_aux_names))

    def __post_init__(self):
        if not isinstance(self.name, str) or not self.name:
            raise TypeError("kernel name must be a non-empty string")
        if not isinstance(self.degree, int) or self.degree < 2:
            raise ValueError(f"kernel degree must be an integer >= 2, got {self.degree!r}")
        if not isinstance(self.columns, int) or self.columns < 1:
            raise ValueError(f"kernel columns must be an integer >= 1, got {self.columns!r}")
        lo, hi = self.output_range
        if not (math.isfinite(lo) and math.isfinite(hi) and hi > lo):
            raise ValueError(f"output_range must be finite with hi > lo, got {self.output_range}")
        for c in self.categorical:
            if not 0 <= c < self.columns:
                raise ValueError(f"categorical column index {c} outside 0..{self.columns - 1}")
        if self.encoding not in ENCODINGS:
            raise ValueError(f"kernel encoding must be one of {ENCODINGS}, got {self.encoding!r}")
        if isinstance(self.input_gain, bool) or not isinstance(self.input_gain, int) \
                or self.input_gain < 1:
            raise ValueError(f"input_gain must be an integer >= 1, got {self.input_gain!r}")
        if self.valid_range is not None and not self.valid_range[0] < self.valid_range[1]:
            raise ValueError(f"valid_range must have lo < hi, got {self.valid_range}")
        if self.edge_aux_names and (self.secure_with_aux is None or self.edge_aux_plain is None):
            raise ValueError("edge_aux_names needs secure_with_aux and edge_aux_plain")

    @property
    def sensitivity(self) -> float:
        """Delta f: the largest change of one kernel value (hi - lo)."""
        lo, hi = self.output_range
        return float(hi - lo)

    def secure_outputs(self, ops: Any, x: Any) -> list:
        """The secure evaluation of the kernel and its edge sums: ``[f, aux_1, ...]`` shares
        (``[secure(ops, x)]`` without ``edge_aux_names``)."""
        if not self.edge_aux_names:
            return [self.secure(ops, x)]
        assert self.secure_with_aux is not None
        out = list(self.secure_with_aux(ops, x))
        if len(out) != 1 + len(self.edge_aux_names):
            raise ValueError(f"kernel {self.name!r}: secure_with_aux returned {len(out)} values, "
                             f"expected 1 + {len(self.edge_aux_names)} (edge_aux_names)")
        return out

    @property
    def release_range(self) -> tuple:
        """The released statistic's valid range: ``valid_range``, else the kernel's
        ``output_range`` when there is no post-processing, else unbounded."""
        if self.valid_range is not None:
            return (float(self.valid_range[0]), float(self.valid_range[1]))
        if self.finalize is None:
            return (float(self.output_range[0]), float(self.output_range[1]))
        return (-math.inf, math.inf)

    def release(self, u: float, aux_sums: ArrayLike | None, n: int) -> float:
        """The released statistic from the (noisy) U-statistic and aux sums."""
        if self.finalize is None:
            return float(u)
        return float(self.finalize(u, aux_sums, n))

    def release_notes(self, u: float, aux_sums: ArrayLike | None, n: int) -> list:
        """Remarks on the release from the same noisy values (e.g. a clamp that was active)."""
        return [] if self.notes is None else list(self.notes(u, aux_sums, n))


_REGISTRY: dict[str, Kernel] = {}


def register(kernel: Kernel, replace: bool = False) -> Kernel:
    """Add ``kernel`` to the registry under ``kernel.name``."""
    if not isinstance(kernel, Kernel):
        raise TypeError(f"register needs a Kernel, got {type(kernel).__name__}")
    if kernel.name in _REGISTRY and not replace:
        raise ValueError(f"a kernel named {kernel.name!r} is already registered")
    _REGISTRY[kernel.name] = kernel
    return kernel


def get(name: str | Kernel) -> Kernel:
    """The registered kernel ``name`` (a :class:`Kernel` is returned as is)."""
    if isinstance(name, Kernel):
        return name
    try:
        return _REGISTRY[name]
    except KeyError:
        raise ValueError(
            f"unknown kernel {name!r}; available: {', '.join(sorted(_REGISTRY))}"
        ) from None


def names() -> list:
    return sorted(_REGISTRY)


def registered(kernel: Kernel) -> bool:
    """Whether ``kernel`` is the kernel registered under its name (a spec then names it)."""
    return _REGISTRY.get(kernel.name) is kernel


# -- plaintext helpers --------------------------------------------------------------
def _check_x(X, k, d):
    X = np.asarray(X, dtype=np.float64)
    if X.ndim != 3 or X.shape[1:] != (k, d):
        raise ValueError(f"kernel input must have shape (m, {k}, {d}), got {X.shape}")
    return X


def _pair_index(n: int, block_rows: int):
    """Yield (i, j) index blocks of all pairs i < j of range(n)."""
    for start in range(0, n - 1, block_rows):
        rows = np.arange(start, min(start + block_rows, n - 1))
        counts = n - 1 - rows
        i = np.repeat(rows, counts)
        offs = np.arange(counts.sum()) - np.repeat(np.cumsum(counts) - counts, counts)
        j = i + 1 + offs
        yield np.stack([i, j], axis=1)


def _combination_blocks(n: int, k: int, block: int):
    """Yield (rows, k) blocks of all k-subsets of range(n), lexicographic."""
    it = itertools.combinations(range(n), k)
    while True:
        flat = np.fromiter(itertools.chain.from_iterable(itertools.islice(it, block)),
                           dtype=np.int64)
        if flat.size == 0:
            return
        yield flat.reshape(-1, k)


def complete_u(kernel: Kernel, X: np.ndarray, limit: int = 50_000_000) -> float | None:
    """The complete U-statistic of ``kernel`` on records ``X`` (n, d), or None if too big.

    Exact mean of the kernel over all C(n, k) subsets, computed in blocks;
    returns None when C(n, k) exceeds ``limit``.
    """
    X = np.asarray(X, dtype=np.float64)
    n, k = X.shape[0], kernel.degree
    total_sets = math.comb(n, k)
    if total_sets == 0 or total_sets > limit:
        return None
    acc = 0.0
    if k == 2:
        blocks = _pair_index(n, max(1, 2_000_000 // max(n, 1)))
    else:
        blocks = _combination_blocks(n, k, 500_000)
    for idx in blocks:
        acc += float(np.sum(kernel.plain(X[idx])))
    return acc / total_sets


# -- the built-in kernels ------------------------------------------------------------
def _gini_plain(X):
    X = _check_x(X, 2, 1)
    return np.abs(X[:, 0, 0] - X[:, 1, 0])


def _gini_secure(ops, x):
    return ops.abs(ops.sub(x[0][0], x[1][0]), bound=1)      # inputs in [0, 1]


def _kendall_plain(X):
    X = _check_x(X, 2, 2)
    return np.sign(X[:, 0, 0] - X[:, 1, 0]) * np.sign(X[:, 0, 1] - X[:, 1, 1])


def _kendall_secure(ops, x):
    sy, sz = ops.sign_many([ops.sub(x[0][0], x[1][0]), ops.sub(x[0][1], x[1][1])], bound=1)
    return ops.to_fixed(ops.mul(sy, sz))


def _kendall_untied_plain(X):
    return (_kendall_plain(X) ** 2)[:, None]


def _kendall_secure_with_aux(ops, x):
    """[h, h^2]: one more Beaver product (one round) after h; h^2 = 0 on a tied pair."""
    sy, sz = ops.sign_many([ops.sub(x[0][0], x[1][0]), ops.sub(x[0][1], x[1][1])], bound=1)
    h = ops.mul(sy, sz)
    return [ops.to_fixed(h), ops.to_fixed(ops.mul(h, h))]


def _auc_plain(X):
    X = _check_x(X, 2, 2)
    g = np.sign(X[:, 0, 0] - X[:, 1, 0])
    yd = X[:, 0, 1] - X[:, 1, 1]
    return (yd * yd + g * yd) / 2


def _auc_secure(ops, x):
    g = ops.sign(ops.sub(x[0][0], x[1][0]), bound=1)
    yd = ops.sub(x[0][1], x[1][1])             # ring integer in {-1, 0, 1}
    sq, gy = ops.mul_many([(yd, yd), (g, yd)])
    return ops.to_fixed(ops.add(sq, gy), 1, 1)


def _labels_aux(X):
    y = np.asarray(X)[:, 1]
    return y[:, None].astype(np.float64)


def _auc_finalize(u, aux, n):
    n_pos = float(np.clip(aux[0], 1, n - 1))
    return u * (n * (n - 1) / 2) / (n_pos * (n - n_pos))


def _auc_notes(u, aux, n):
    n_pos = float(aux[0])
    if 1 <= n_pos <= n - 1:
        return []
    return [f"the noisy positive count {n_pos:.1f} lies outside [1, n - 1] = [1, {n - 1}] and was "
            "clamped: one class is empty or nearly so, and the AUC is not meaningful"]


def _dup_plain(X):
    X = _check_x(X, 2, 1)
    return (X[:, 0, 0] == X[:, 1, 0]).astype(np.float64)


def _dup_secure(ops, x):
    return ops.to_fixed(ops.equal(x[0][0], x[1][0]))


def _renyi2_finalize(u, aux, n):
    return -math.log(max(u, 1.0 / (n * n)))


def _renyi2_notes(u, aux, n):
    if u > 1.0 / (n * n):
        return []
    return [f"the released collision rate {u:.3g} is at or below 1/n^2 = {1.0 / (n * n):.3g} "
            f"(all or nearly all records distinct): the released ln(n^2) = "
            f"{2 * math.log(n):.4g} nats is a lower bound, the entropy may be larger"]


def _rand_plain(X):
    X = _check_x(X, 2, 2)
    e1 = X[:, 0, 0] == X[:, 1, 0]
    e2 = X[:, 0, 1] == X[:, 1, 1]
    return (e1 == e2).astype(np.float64)


def _rand_secure(ops, x):
    e1, e2 = ops.equal_many([(x[0][0], x[1][0]), (x[0][1], x[1][1])])
    both = ops.mul(e1, e2)
    one = ops.const(1, fixed=False)
    agree = ops.add(ops.sub(ops.sub(one, e1), e2), ops.scale(2, both))
    return ops.to_fixed(agree)


def _triples_plain(X):
    X = _check_x(X, 3, 1)
    a, b, c = X[:, 0, 0], X[:, 1, 0], X[:, 2, 0]
    return np.sign(a + b - 2 * c) + np.sign(a + c - 2 * b) + np.sign(b + c - 2 * a)


def _triples_secure(ops, x):
    a, b, c = x[0][0], x[1][0], x[2][0]
    t = [ops.sub(ops.add(a, b), ops.scale(2, c)),
         ops.sub(ops.add(a, c), ops.scale(2, b)),
         ops.sub(ops.add(b, c), ops.scale(2, a))]
    return ops.to_fixed(ops.sum(ops.sign_many(t, bound=2)))


_PERMS3 = list(itertools.permutations(range(3)))


def _vus_plain(X):
    X = _check_x(X, 3, 2)
    s, y = X[:, :, 0], X[:, :, 1]
    out = np.zeros(X.shape[0])
    for a, b, c in _PERMS3:
        out += ((y[:, a] == 0) & (y[:, b] == 1) & (y[:, c] == 2)
                & (s[:, a] < s[:, b]) & (s[:, b] < s[:, c]))
    return out


def _vus_secure(ops, x):
    s = [x[i][0] for i in range(3)]
    y = [x[i][1] for i in range(3)]             # class codes 0, 1, 2 (ring integers)
    one = ops.const(1, fixed=False)
    # one batch of 12 comparisons (one gate call, its rounds once):
    # [y_i < 1] = [y_i = 0], [1 < y_i] = [y_i = 2], and the 6 ordered score pairs
    lt_pairs = [(i, j) for i in range(3) for j in range(3) if i != j]
    cmp = ops.less_than_many([(y[i], one) for i in range(3)] + [(one, y[i]) for i in range(3)]
                             + [(s[i], s[j]) for i, j in lt_pairs])
    is_class = {}
    for i in range(3):
        is_class[i, 0], is_class[i, 2] = cmp[i], cmp[3 + i]
        is_class[i, 1] = ops.sub(ops.sub(one, cmp[i]), cmp[3 + i])
    less = dict(zip(lt_pairs, cmp[6:]))
    # term(a, b, c) = [y_a=0][y_b=1][y_c=2][s_a<s_b][s_b<s_c]: products in 3 rounds
    first = ops.mul_many([pair for a, b, c in _PERMS3
                          for pair in ((is_class[a, 0], is_class[b, 1]),
                                       (is_class[c, 2], less[a, b]))])
    second = ops.mul_many([(first[2 * t], first[2 * t + 1]) for t in range(6)])
    third = ops.mul_many([(second[t], less[b, c]) for t, (a, b, c) in enumerate(_PERMS3)])
    return ops.to_fixed(ops.sum(third))


def _class3_aux(X):
    y = np.asarray(X)[:, 1]
    return np.stack([(y == v) for v in range(3)], axis=1).astype(np.float64)


def _vus_finalize(u, aux, n):
    counts = np.clip(np.asarray(aux, dtype=float), 1, n)
    return u * math.comb(n, 3) / float(np.prod(counts))


def _vus_notes(u, aux, n):
    bad = [f"n{i} = {c:.1f}" for i, c in enumerate(np.asarray(aux, dtype=float)) if not 1 <= c <= n]
    if not bad:
        return []
    return [f"noisy class count(s) {', '.join(bad)} outside [1, n] were clamped: a class is empty "
            "or nearly so, and the VUS is not meaningful"]


register(Kernel(
    "gini", 2, 1, _gini_plain, _gini_secure, (0.0, 1.0),
    "Gini mean difference |x_i - x_j| (in normalized units; times the column width "
    "in the data's units)", column_names=("x",),
    rounds_note="1 abs gate", extra={"data_units": 0}))
register(Kernel(
    "kendall", 2, 2, _kendall_plain, _kendall_secure, (-1.0, 1.0),
    "Kendall's tau-a: sign(y_i - y_j) sign(z_i - z_j), sign(0) = 0; the fraction of untied "
    "pairs (h^2) is released too, with its own small share of epsilon, for the interval",
    column_names=("y", "z"), rounds_note="2 sign gates (1 round) + 2 products (2 rounds)",
    encoding="order", edge_aux_names=("untied_pairs",), secure_with_aux=_kendall_secure_with_aux,
    edge_aux_plain=_kendall_untied_plain, extra={"second_moment": "untied_pairs"}))
register(Kernel(
    "auc", 2, 2, _auc_plain, _auc_secure, (0.0, 1.0),
    "Area under the ROC curve on (score, label in {0,1}) records; releases "
    "U * C(n,2) / (n+ n-) where the positive count n+ is released with its own "
    "share of epsilon (discrete Laplace, sensitivity 1), chosen from public parameters "
    "(n, |E|, largest degree; 0.27 at the default |E| = 2n)",
    categorical=(1,), column_names=("score", "label"),
    aux=_labels_aux, aux_sensitivity=1.0, aux_names=("n_pos",), finalize=_auc_finalize,
    statistic="AUC", rounds_note="1 sign gate + 2 products (1 round)",
    extra={"levels": {1: 2}, "one_per_class": True}, notes=_auc_notes, valid_range=(0.0, 1.0),
    encoding="order",
    aux_label="class_counts"))
register(Kernel(
    "duplicate", 2, 1, _dup_plain, _dup_secure, (0.0, 1.0),
    "Duplicate pair ratio [x_i = x_j] on categorical codes",
    categorical=(0,), column_names=("x",), rounds_note="1 equality gate", encoding="order"))
register(Kernel(
    "renyi2", 2, 1, _dup_plain, _dup_secure, (0.0, 1.0),
    "Renyi-2 (collision) entropy -ln(duplicate pair ratio) on categorical codes",
    categorical=(0,), column_names=("x",), finalize=_renyi2_finalize,
    statistic="Renyi-2 entropy (nats)", rounds_note="1 equality gate", notes=_renyi2_notes,
    valid_range=(0.0, math.inf), encoding="order"))
register(Kernel(
    "rand", 2, 2, _rand_plain, _rand_secure, (0.0, 1.0),
    "Rand index between two labelings: [a_i = a_j] == [b_i = b_j]",
    categorical=(0, 1), column_names=("a", "b"),
    rounds_note="2 equality gates (1 round) + 1 product", encoding="order"))
register(Kernel(
    "triples", 3, 1, _triples_plain, _triples_secure, (-1.0, 1.0),
    "Randles' triples kernel for asymmetry: sign(x_i+x_j-2x_k) summed over the "
    "three choices of k (the classical statistic is a third of this)",
    column_names=("x",), rounds_note="3 sign gates (1 round)", encoding="order",
    input_gain=2))
register(Kernel(
    "vus", 3, 2, _vus_plain, _vus_secure, (0.0, 1.0),
    "Volume under the ROC surface for three ordered classes: (score, class in "
    "{0,1,2}); releases U * C(n,3) / (n0 n1 n2), class counts released with their "
    "own share of epsilon (L1 sensitivity 2), chosen from public parameters (n, |E|, "
    "largest degree; 0.29 at the default |E| = 2n); strict inequalities (ties count 0)",
    categorical=(1,), column_names=("score", "class"),
    aux=_class3_aux, aux_sensitivity=2.0, aux_names=("n0", "n1", "n2"),
    finalize=_vus_finalize, statistic="VUS",
    rounds_note="12 comparisons (one batch) + 3 product rounds",
    extra={"levels": {1: 3}, "one_per_class": True},
    notes=_vus_notes, valid_range=(0.0, 1.0), encoding="order", aux_label="class_counts"))
