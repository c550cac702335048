"""The law of an ECDF tree's node noise, as a small object that releases carry.

Every interval of :mod:`ustat.ecdf` (pointwise values, bands, quantiles,
ROC, AUC, Hosmer-Lemeshow) is computed from this object and the public tree,
never from constants in the code, so that a different way of drawing the
same law (issue 30: noise sampled inside MPC) plugs in unchanged.

A node's total noise is the sum of ``copies`` independent discrete Laplace
variables DLap(a), a = exp(-1/scale), P(k) = (1 - a)/(1 + a) a^|k| (integer
counts): ``copies = 1`` for a central drawer or the servers' Polya halves
(mode ``"split"``: their sum is exactly one DLap), ``copies = m`` when each of
the m servers adds a full DLap (mode ``"each"``). ``scale = None`` is no
noise (epsilon = inf).

* :meth:`NodeNoiseLaw.pmf` -- the exact law of the sum of ``terms`` node
  noises (a leaf's path carries L + 1 of them) by FFT convolution of the
  truncated pmf (mass beyond the truncation < 1e-15), in float64;
* :meth:`NodeNoiseLaw.quantile` -- the smallest integer q with
  P(|Z| > q) <= alpha (or P(Z > q) <= alpha, one-sided) for that sum;
* :meth:`NodeNoiseLaw.sample` -- draws for Monte Carlo calibration of
  simultaneous bands (numpy's generator with a fixed seed: a simulation of a
  public law, not a secret; the released noise itself comes from the exact
  CSPRNG samplers of :mod:`noise.samplers`).
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from fractions import Fraction
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from mpc.arith.rng import ShapeLike

__all__ = ["SIM_SEED", "NodeNoiseLaw"]

#: Seed of the public Monte Carlo simulations (bands, bootstrap, HL null): intervals are a
#: deterministic function of the released values and public parameters.
SIM_SEED = 20_240_601

_TAIL = 1e-16


@dataclass(frozen=True)
class NodeNoiseLaw:
    """One node's noise: the sum of ``copies`` iid DLap(exp(-1/scale)) (integer counts)."""

    scale: float | Fraction | None
    copies: int = 1
    distribution: str = "discrete_laplace"

    def __post_init__(self):
        if self.distribution != "discrete_laplace":
            raise ValueError(f"node noise law {self.distribution!r} is not supported "
                             "(discrete_laplace only)")
        if self.scale is not None and not float(self.scale) > 0:
            raise ValueError(f"node noise scale must be > 0 or None, got {self.scale!r}")
        if int(self.copies) < 1:
            raise ValueError(f"copies must be >= 1, got {self.copies}")

    @classmethod
    def from_dict(cls, d: dict | None) -> NodeNoiseLaw:
        if not d:
            return cls(None)
        return cls(d.get("scale"), int(d.get("copies", 1)),
                   d.get("distribution", "discrete_laplace"))

    def to_dict(self) -> dict:
        return {"distribution": self.distribution,
                "scale": None if self.scale is None else float(self.scale),
                "copies": int(self.copies)}

    @property
    def noiseless(self) -> bool:
        return self.scale is None

    @property
    def t(self) -> float:
        """The scale as a float (ValueError for the noiseless law, which has none)."""
        if self.scale is None:
            raise ValueError("the noiseless law has no scale")
        return float(self.scale)

    @property
    def a(self) -> float:
        return math.exp(-1.0 / self.t)

    @property
    def variance(self) -> float:
        """Variance of one node's noise: copies * 2a / (1 - a)^2."""
        if self.noiseless:
            return 0.0
        t = self.t
        one_minus_a = -math.expm1(-1.0 / t)
        return self.copies * 2.0 * math.exp(-1.0 / t) / (one_minus_a * one_minus_a)

    def std(self, terms: int = 1) -> float:
        return math.sqrt(terms * self.variance)

    def pmf(self, terms: int = 1) -> tuple[int, np.ndarray]:
        """(offset, p): P(sum of ``terms`` node noises = offset + j) = p[j] (float64)."""
        return _pmf(None if self.noiseless else self.t, self.copies * int(terms))

    def quantile(self, alpha: float, terms: int = 1, two_sided: bool = True) -> int:
        """Smallest integer q >= 0 with P(|Z| > q) <= alpha (two-sided) or P(Z > q) <= alpha."""
        if self.noiseless:
            return 0
        off, p = self.pmf(terms)
        mid = -off                                    # index of 0 (the law is symmetric)
        upper = np.cumsum(p[::-1])[::-1]              # upper[j] = P(Z >= off + j)
        tail = upper[mid + 1:]                        # P(Z > q) for q = 0, 1, ...
        if two_sided:
            tail = 2.0 * tail
        ok = np.flatnonzero(tail <= alpha)
        return int(ok[0]) if ok.size else int(tail.size)

    def sample(self, shape: ShapeLike, gen: np.random.Generator) -> np.ndarray:
        """int64 draws of one node's noise (simulation only, see the module docstring)."""
        shape = tuple(np.atleast_1d(shape)) if not isinstance(shape, tuple) else shape
        if self.noiseless:
            return np.zeros(shape, dtype=np.int64)
        q = -math.expm1(-1.0 / self.t)     # success probability 1 - a
        out = np.zeros(shape, dtype=np.int64)
        for _ in range(self.copies):                   # copies is small (the servers)
            out += gen.geometric(q, shape) - gen.geometric(q, shape)
        return out


@functools.lru_cache(maxsize=64)
def _pmf(scale: float | None, terms: int) -> tuple[int, np.ndarray]:
    if scale is None:
        return 0, np.ones(1)
    a = math.exp(-1.0 / scale)
    K = int(math.ceil(scale * math.log(1.0 / _TAIL))) + 1      # a^K < 1e-16
    k = np.arange(-K, K + 1)
    one = (-math.expm1(-1.0 / scale)) / (1.0 + a) * np.exp(-np.abs(k) / scale)
    size = terms * 2 * K + 1
    nfft = 1 << (size - 1).bit_length()
    p = np.fft.irfft(np.fft.rfft(one, nfft) ** terms, nfft)[:size]
    p = np.clip(p, 0.0, None)
    return -terms * K, p / p.sum()
