"""The one-sample Wilcoxon signed-rank statistic T+ through ``run_umpc`` (issue 40's sixth
protocol): each party holds one value d_i in (-1, 1); T+ = #{i <= j : d_i + d_j > 0} (the
Walsh-average form: the sum of the ranks of the positive |d_i|, without ties).

The kernel is h(i, j) = [d_i + d_j > 0] over pairs i < j, a comparison only: each record is
(x, 1 - x) with x = (d + 1) / 2 in [0, 1], and d_i + d_j > 0 iff x_i > 1 - x_j. The diagonal
#{d_i > 0} is an aux sum (each party's own [x_i > 1/2], summed privately), and ``finalize``
gives T+ = U C(n, 2) + that sum. With epsilon = inf (no noise, a test) T+ equals scipy's
``wilcoxon(d, alternative="greater").statistic``; with a finite epsilon both parts are noised.

Run: ``python examples/mpc_wilcoxon.py [--processes 3]``.
"""

from __future__ import annotations

import argparse
import math
import sys

import _paths  # noqa: F401
import numpy as np

from ustat.executors import LocalProcesses
from ustat.kernels import Kernel
from ustat.specs import UMPCSpec
from ustat.umpc import run_umpc


def _plain(X):
    return (X[:, 0, 0] > X[:, 1, 1]).astype(float)


def _secure(ops, x):
    return ops.to_fixed(ops.greater_than(x[0][0], x[1][1]))


walsh = Kernel("walsh", 2, 2, _plain, _secure, (0.0, 1.0), "[d_i + d_j > 0], d = 2 x - 1",
               aux=lambda X: (X[:, :1] > 0.5).astype(float), aux_sensitivity=1.0,
               aux_names=("positives",),
               finalize=lambda u, aux, n: u * math.comb(n, 2) + aux[0],
               statistic="Wilcoxon T+")


def records(d: np.ndarray) -> np.ndarray:
    """Each party's record (x, 1 - x), x = (d + 1) / 2."""
    x = (np.asarray(d, dtype=float) + 1) / 2
    return np.column_stack([x, 1 - x])


def t_plus(d: np.ndarray, epsilon: float = math.inf, processes: int = 1, seed=None) -> float:
    """T+ of ``d`` released by the U-MPC protocol (every pair: design "all")."""
    spec = UMPCSpec.of(walsh, epsilon=epsilon, edges="all", seed=seed)
    executor = LocalProcesses(processes) if processes > 1 else None
    return run_umpc(records(d), spec, executor).estimate


def sample(n: int, rng: np.random.Generator) -> np.ndarray:
    """n values on the grid k / 4096 with distinct magnitudes (no ties, no zero Walsh sum)."""
    mag = rng.choice(np.arange(1, 4096), size=n, replace=False)
    sign = np.where(rng.random(n) < 0.6, 1, -1)
    return sign * mag / 4096


def main(argv=None) -> int:
    from scipy import stats
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--processes", type=int, default=1)
    ap.add_argument("-n", type=int, default=40)
    args = ap.parse_args(argv)
    d = sample(args.n, np.random.default_rng(40))
    got = t_plus(d, processes=args.processes, seed=1)
    want = stats.wilcoxon(d, alternative="greater").statistic
    print(f"T+ (U-MPC, no noise): {got:.6f}   scipy: {want}")
    return 0 if round(got) == want and abs(got - want) < 1e-6 else 1


if __name__ == "__main__":
    sys.exit(main())
