"""Factorizations A ~ L^T R of a kernel matrix, for the protocols of Ghazi et al. (2024).

Sinh-Ramon (Section 1.1, Appendix D.1.3) describe Ghazi et al.'s protocol as
factoring the T x T kernel matrix A by a Johnson-Lindenstrauss projection of
dimension d: L = G, R = G A with a random d x T matrix G, E[G^T G] = I, so
E[L^T R] = A and every party sends two d-dimensional vectors.

- ``"jl"``: G is a *sparse* JL matrix of s blocks (Kane-Nelson's block
  construction; s = 1 is CountSketch): column x has, in each block of
  b = d / s rows, one entry +-1/sqrt(s) at a uniform row with a uniform sign.
  Then (G^T G)_xx = 1 exactly and E[(G^T G)_xy] = 0, so L^T R is unbiased
  for A; the variance of an inner product <G u, G w> is about
  (|u|^2 |w|^2 + <u, w>^2) / d for every s, like a dense Gaussian G, and
  R = G A costs s T^2 additions instead of d T^2. L's columns have unit norm
  and L1 norm sqrt(s).
- ``"exact"``: L = I, R = A (d = T): no approximation.

The paper's dimension is d = ln(T) / (beta^2/2 - beta^3/3) with
beta = 1 / (eps' sqrt(n)) (eps' the budget of one vector), i.e.
d ~ 2 eps'^2 n ln T (Sinh-Ramon Appendix D.2.1 and their code). A projection
with d >= T does not compress, so the exact factorization is used instead.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from mpc.arith.rng import CSPRNG


@dataclass
class Factorization:
    """L (sparse: ``rows``, ``vals`` of shape (s, T)) and R (dense d x T) with L^T R ~ A."""

    kind: str
    dim: int
    rows: np.ndarray        # (s, T) int64: the nonzero rows of each column of L
    vals: np.ndarray        # (s, T) float64: their values
    R: np.ndarray           # (d, T)

    @property
    def T(self) -> int:  # noqa: N802 - the papers' T: the domain size, A is T x T
        return self.R.shape[1]

    def left(self, cells: np.ndarray) -> np.ndarray:
        """Dense L e_x for each cell, (m, d)."""
        out = np.zeros((cells.size, self.dim))
        idx = np.arange(cells.size)
        for j in range(self.rows.shape[0]):
            out[idx, self.rows[j, cells]] += self.vals[j, cells]
        return out

    def right(self, cells: np.ndarray) -> np.ndarray:
        """R e_x for each cell, (m, d)."""
        return self.R[:, cells].T

    def left_norms(self) -> tuple[np.ndarray, np.ndarray]:
        """Per column of L: (L2 norm, L1 norm)."""
        l2 = np.sqrt((self.vals ** 2).sum(axis=0))
        return l2, np.abs(self.vals).sum(axis=0)

    def product(self) -> np.ndarray:
        """L^T R (T x T), for tests and small T."""
        LT = np.zeros((self.T, self.dim))
        cols = np.arange(self.T)
        for j in range(self.rows.shape[0]):
            LT[cols, self.rows[j]] += self.vals[j]
        return LT @ self.R


def paper_dimension(T: int, n: int, eps_vector: float) -> float:
    """d = ln T / (beta^2/2 - beta^3/3), beta = 1/(eps' sqrt n); inf if eps' = inf, beta >= 1.5."""
    if not math.isfinite(eps_vector):
        return math.inf
    beta = 1.0 / (eps_vector * math.sqrt(n))
    den = beta * beta / 2 - beta ** 3 / 3
    return math.inf if den <= 0 else math.ceil(math.log(T) / den)


def exact_factorization(A: np.ndarray) -> Factorization:
    T = A.shape[0]
    return Factorization("exact", T, np.arange(T)[None, :], np.ones((1, T)), np.asarray(A))


def jl_factorization(A: np.ndarray, dim: int, sparsity: int, rng: CSPRNG) -> Factorization:
    """L = G, R = G A with G the block-sparse JL matrix drawn from ``rng`` (public coins)."""
    T = A.shape[0]
    s = max(1, min(int(sparsity), int(dim)))
    b = int(dim) // s
    d = s * b
    rows = (np.arange(s)[:, None] * b + rng.integers(b, (s, T))).astype(np.int64)
    signs = 1.0 - 2.0 * rng.bits((s, T)).astype(np.float64)
    vals = signs / math.sqrt(s)
    R = np.zeros((d, T))
    for j in range(s):                      # s is small (blocks of the sparse JL matrix)
        np.add.at(R, rows[j], vals[j][:, None] * A)
    return Factorization("jl", d, rows, vals, R)
