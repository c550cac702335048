"""Checks and encodings at the public boundary of the U-MPC protocol.

Everything here runs once per run, in the calling process, before any party
sends a message: argument checks (named in the errors), the edge count, the
records' domain (which the kernel's sensitivity assumes), the hypergraph's
shape, the ring encoding of the records and the wrap-around bound of the
aggregate. Cost: O(n d + |E| k), streamed in blocks where a copy of E would
be large.
"""

from __future__ import annotations

import math
import numbers
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import ArrayLike

from mpc.session import Session

from ..specs.base import check_epsilon, check_positive_int  # noqa: F401 (re-exported)

if TYPE_CHECKING:
    from mpc.arith.ring import FixedPoint

    from ..kernels import Kernel

#: Rows of E checked per block (bounds the temporary copy of the distinctness check).
_CHECK_BLOCK = 1 << 20


def resolve_edges(edges: str | int, n: int, k: int) -> int | None:
    """Number of edges from ``"2n"``-style multiples, an int, or ``"all"`` (None)."""
    total = math.comb(n, k)
    if isinstance(edges, str):
        text = edges.strip().lower()
        if text == "all":
            return None
        if text.endswith("n"):
            coef = text[:-1] or "1"
            try:
                m = int(round(float(coef) * n))
            except (ValueError, OverflowError):
                raise ValueError("edges must be like '2n', an integer or 'all', "
                                 f"got {edges!r}") from None
        else:
            try:
                m = int(text)
            except ValueError:
                raise ValueError("edges must be like '2n', an integer or 'all', "
                                 f"got {edges!r}") from None
    elif isinstance(edges, numbers.Integral) and not isinstance(edges, bool):
        m = int(edges)
    else:
        raise TypeError(f"edges must be like '2n', an integer or 'all', got {edges!r}")
    if m < 1:
        raise ValueError(f"edges must be >= 1, got {m}")
    if m > total:
        raise ValueError(f"edges={m} exceeds the number of {k}-subsets of {n} records ({total})")
    return m


def encode_records(session: Session, records: np.ndarray, kernel: Kernel,
                   input_fp: FixedPoint | None = None) -> np.ndarray:
    """Ring encoding of the records: fixed point, categorical columns as integers.

    ``input_fp``: the numeric inputs' :class:`mpc.arith.ring.FixedPoint` (default
    the session's; :mod:`ustat.umpc.precision` chooses it per kernel).
    """
    fp = session.fp if input_fp is None else input_fp
    enc = np.empty(records.shape, dtype=np.uint64)
    for c in range(records.shape[1]):
        col = records[:, c]
        if c in kernel.categorical:
            if not np.all(col == np.round(col)):
                raise ValueError(f"categorical column {c} must hold integer codes")
            enc[:, c] = session.ring.from_signed(col.astype(np.int64))
        else:
            enc[:, c] = fp.encode(col)
    return enc


def decode_records(session: Session, enc: np.ndarray, kernel: Kernel,
                   input_fp: FixedPoint | None = None) -> np.ndarray:
    """The real values the protocol actually computes on (fixed-point rounded)."""
    fp = session.fp if input_fp is None else input_fp
    out = np.empty(enc.shape, dtype=np.float64)
    for c in range(enc.shape[1]):
        if c in kernel.categorical:
            out[:, c] = session.ring.to_signed(enc[:, c]).astype(np.float64)
        else:
            out[:, c] = fp.decode(enc[:, c])
    return out


def validate_records(records: ArrayLike, kernel: Kernel) -> np.ndarray:
    """The records as float64 ``(n, d)``, in the domain the kernel's range assumes."""
    X = np.asarray(records)
    if X.ndim == 1 and kernel.columns == 1:
        X = X[:, None]
    if X.ndim != 2 or X.shape[1] != kernel.columns:
        raise ValueError(
            f"kernel {kernel.name!r} needs records with {kernel.columns} column(s), "
            f"got shape {np.shape(records)}"
        )
    if X.dtype.kind not in "fiub":
        raise TypeError(f"records must be numeric, got dtype {X.dtype}")
    X = X.astype(np.float64)
    bad = ~np.isfinite(X)
    if bad.any():
        row, col = np.argwhere(bad)[0]
        raise ValueError(f"records must be finite: row {row}, column {col} is not")
    if X.shape[0] < kernel.degree:
        raise ValueError(f"need at least k={kernel.degree} records, got {X.shape[0]}")
    levels = kernel.extra.get("levels", {})
    for c in range(X.shape[1]):
        _check_column(X[:, c], c, kernel, levels)
    return X


def _check_column(col, c, kernel, levels):
    if c in kernel.categorical:
        bad = np.flatnonzero(col != np.round(col))
        if bad.size:
            raise ValueError(f"records: categorical column {c} needs integer codes, "
                             f"row {bad[0]} has none")
        if c in levels:
            bad = np.flatnonzero((col < 0) | (col >= levels[c]))
            if bad.size:
                raise ValueError(f"records: column {c} of kernel {kernel.name!r} must hold "
                                 f"codes 0..{levels[c] - 1}, row {bad[0]} does not")
    else:
        bad = np.flatnonzero((col < 0) | (col > 1))
        if bad.size:
            raise ValueError(f"records: numeric column {c} must be normalized to [0, 1] "
                             f"with public bounds (ustat.data.normalize), row {bad[0]} is not")


def check_edges(edges: ArrayLike, n: int, k: int) -> np.ndarray:
    """The hypergraph's edges as int64 ``(m, k)``: non-empty, ids in 0..n-1, k distinct members."""
    E = np.asarray(edges, dtype=np.int64)
    if E.ndim != 2 or E.shape[1] != k:
        raise ValueError(f"hypergraph edges must have shape (m, {k}), got {E.shape}")
    if E.shape[0] == 0:
        raise ValueError("the hypergraph has no edges (a Bernoulli sample can be empty): "
                         "ask for more edges")
    if E.min() < 0 or E.max() >= n:
        raise ValueError(f"hypergraph edges must hold party ids in 0..{n - 1}")
    if k <= 4:                     # k (k - 1) / 2 column comparisons: no sort
        pairs = [(i, j) for i in range(k) for j in range(i + 1, k)]
        if any(np.any(E[:, i] == E[:, j]) for i, j in pairs):
            raise ValueError("hypergraph edges must have k distinct members")
        return E
    for start in range(0, E.shape[0], _CHECK_BLOCK):
        Es = np.sort(E[start:start + _CHECK_BLOCK], axis=1)
        if np.any(Es[:, 1:] == Es[:, :-1]):
            raise ValueError("hypergraph edges must have k distinct members")
    return E


def check_no_wrap(session: Session, kern: Kernel, m: int, n: int, delta_max: int, eps: float,
                  aux_fraction: float, edge_fraction: float = 0.0) -> None:
    """Refuse runs whose aggregate could wrap mod 2^l (the release would be wrong).

    Bound: |sum of kernel values| <= m max(|lo|, |hi|) 2^c, plus a discrete
    Laplace tail of 28 scales (probability below 2^-40); aux sums <= n 2^c
    (values in [0, 1]) and edge sums <= m 2^c plus their noise tails. Must stay below 2^(l-1).
    """
    scale = session.fp.scale
    lo, hi = kern.output_range
    bound = m * max(abs(lo), abs(hi)) * scale
    aux_bound = n * scale if kern.aux is not None else 0.0
    n_edge = len(kern.edge_aux_names)
    edge_bound = m * scale if n_edge else 0.0
    if math.isfinite(eps):
        eps_u = eps * (1 - aux_fraction) if kern.aux is not None else eps
        eps_u -= eps * edge_fraction if n_edge else 0.0
        bound += 28 * delta_max * kern.sensitivity * scale / eps_u
        if kern.aux is not None:
            aux_bound += 28 * kern.aux_sensitivity * scale / (eps * aux_fraction)
        if n_edge and edge_fraction > 0:
            edge_bound += 28 * delta_max * n_edge * scale / (eps * edge_fraction)
    limit = float(1 << (session.ring.bits - 1))
    if max(bound, aux_bound, edge_bound) >= limit:
        worst = max(bound, aux_bound, edge_bound)
        raise ValueError(
            f"the aggregate could wrap around mod 2^{session.ring.bits} (|sum| up to "
            f"{worst:.3g} ring units >= 2^{session.ring.bits - 1}): use more ring "
            f"bits, fewer fractional bits, fewer edges or a larger epsilon")
