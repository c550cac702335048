"""Shared pieces of the baseline protocols: validation, the bin grid, exact randomizers.

- :func:`check_kernel_degree2`, :func:`check_auc_kernel`, :func:`check_bins`,
  :func:`check_epsilon`: public-boundary validation with errors naming the
  parameter.
- :class:`Grid`: the quantization pi of Bell et al. (Algorithm 1) and
  Sinh-Ramon (Appendix D.1.1): every numeric column (normalized to [0, 1])
  falls into one of t equal bins, ``min(floor(x t), t - 1)``, represented by
  the bin's midpoint (i + 1/2) / t; a categorical column keeps its codes. A
  record becomes one index of the product domain of size T (row-major).
- :func:`kernel_matrix`: the T x T matrix A[x, y] = f(r_x, r_y) of a
  degree-2 kernel on the grid's representatives (cached: it depends only on
  the kernel and the grid, not on the data).
- :func:`k_rr`: exact k-ary randomized response from the CSPRNG.
- :func:`evaluation`: the exact complete U-statistic on the raw values and on
  the discretized values (tests and experiments only).

Exactness of randomized response: k-RR outputs the true value with
probability e^eps / (e^eps + k - 1) and each other value with probability
1 / (e^eps + k - 1). We draw it by rejection, with integer draws and exact
Bernoulli(e^-eps) coins only (:func:`noise.samplers.bernoulli_exp`, CKS20):
propose y uniform in [k]; keep it if y is the true value, else keep it with
probability e^-eps; repeat until kept. The kept value has exactly the k-RR
law (the proposal weights are 1 and e^-eps, normalized by the same constant),
for the rational epsilon the float represents. Expected proposals
k / (1 + (k - 1) e^-eps); loops run over rounds of the batch, not parties.
Every round draws a proposal and a coin for *every* value, kept or not, so
the draws that decide value i are those at its own positions: one party's
report depends on its own value and the stream only, never on the others'
values (in a run across processes each process draws the same rounds and
gets its own parties' reports exactly; the rounds stop when its own parties
are done). Cost: O(n) per round, about log(n) / log(1 / (1 - p_keep)) rounds.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from noise.samplers import bernoulli_exp

from .. import kernels as kernel_registry

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

    from mpc.arith.rng import CSPRNG, ShapeLike
    from mpc.session import Session

    from ..kernels import Kernel
    from .spec import BaselineSpec

#: Largest product domain T for which the T x T kernel matrix is built (512 MB).
MAX_DOMAIN = 8192
_MATRIX_CACHE: dict = {}
_MATRIX_CACHE_SIZE = 2


def check_epsilon(epsilon: Any) -> float:
    """epsilon > 0, finite or ``math.inf`` (privacy off); the same rule as U-MPC."""
    from ..umpc.inputs import check_epsilon as _check

    return _check(epsilon)


def check_bins(bins: Any, *, power_of_two: bool = False) -> int:
    """The number of bins t per numeric column: an integer >= 2."""
    if isinstance(bins, bool) or not isinstance(bins, numbers.Integral):
        raise TypeError(f"bins must be an integer >= 2, got {bins!r}")
    t = int(bins)
    if t < 2:
        raise ValueError(f"bins must be >= 2, got {t}")
    if power_of_two and t & (t - 1):
        raise ValueError(f"bins must be a power of two (the domain 2^alpha of the hierarchical "
                         f"histogram), got {t}")
    return t


def check_int(value: Any, name: str, lo: int = 1) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an integer >= {lo}, got {value!r}")
    if value < lo:
        raise ValueError(f"{name} must be >= {lo}, got {value}")
    return int(value)


def check_kernel_degree2(kernel: str | Kernel, protocol: str) -> Kernel:
    """The registered kernel, refused unless its degree is 2."""
    kern = kernel_registry.get(kernel)
    if kern.degree != 2:
        raise ValueError(f"protocol {protocol!r} computes degree-2 U-statistics only; kernel "
                         f"{kern.name!r} has degree {kern.degree} (use protocol 'umpc')")
    return kern


def check_auc_kernel(kernel: str | Kernel, protocol: str) -> Kernel:
    """The AUC kernel, refused for any other kernel."""
    kern = kernel_registry.get(kernel)
    if kern.name != "auc":
        raise ValueError(f"protocol {protocol!r} computes only the AUC (kernel 'auc'), got kernel "
                         f"{kern.name!r}")
    return kern


def validate_records(records: ArrayLike, kern: Kernel) -> np.ndarray:
    """The records as float64 (n, d), checked like :func:`ustat.umpc.run_umpc` does."""
    from ..umpc.inputs import validate_records as _validate

    return _validate(records, kern)


# -- the bin grid ----------------------------------------------------------------------------
@dataclass(frozen=True)
class Grid:
    """Quantization of records into the product domain of the per-column grids."""

    sizes: tuple            # per column: t (numeric) or the number of levels (categorical)
    numeric: tuple          # per column: True when binned into t equal bins
    bins: int

    @property
    def domain(self) -> int:
        return int(np.prod(self.sizes))

    @property
    def key(self) -> tuple:
        return (self.sizes, self.numeric)

    def cells(self, X: np.ndarray) -> np.ndarray:
        """(n, d) integer cell of every column: bin index or category code."""
        out = np.empty(X.shape, dtype=np.int64)
        for c, (size, num) in enumerate(zip(self.sizes, self.numeric, strict=True)):
            if num:
                out[:, c] = np.minimum(np.floor(X[:, c] * size), size - 1).astype(np.int64)
            else:
                out[:, c] = X[:, c].astype(np.int64)
        return out

    def index(self, X: np.ndarray) -> np.ndarray:
        """(n,) index of every record in the product domain [0, T)."""
        return np.ravel_multi_index(tuple(self.cells(X).T), self.sizes).astype(np.int64)

    def representatives(self) -> np.ndarray:
        """(T, d) representative record of every domain index (bin midpoints, codes)."""
        grids = [((np.arange(s) + 0.5) / s) if num else np.arange(s, dtype=np.float64)
                 for s, num in zip(self.sizes, self.numeric, strict=True)]
        mesh = np.meshgrid(*grids, indexing="ij")
        return np.stack([m.ravel() for m in mesh], axis=1)

    def discretize(self, X: np.ndarray) -> np.ndarray:
        """The records replaced by their representatives (what the protocols estimate on)."""
        return self.representatives()[self.index(X)]


def make_grid(X: np.ndarray, kern: Kernel, bins: int, levels: int | dict | None = None,
              notes: list | None = None) -> Grid:
    """The grid of ``kern`` on records ``X`` with t = ``bins`` per numeric column.

    Categorical columns use the kernel's declared levels, else ``levels``
    (an int for all categorical columns or a dict column -> count), else the
    data's largest code + 1 (a note says that this leaks the largest code).
    """
    t = check_bins(bins)
    declared = kern.extra.get("levels", {})
    sizes, numeric = [], []
    for c in range(X.shape[1]):
        if c not in kern.categorical:
            sizes.append(t)
            numeric.append(True)
            continue
        if c in declared:
            size = int(declared[c])
        elif isinstance(levels, dict) and c in levels:
            size = check_int(levels[c], f"levels[{c}]")
        elif isinstance(levels, numbers.Integral) and not isinstance(levels, bool):
            size = check_int(levels, "levels")
        elif levels is None:
            size = int(X[:, c].max()) + 1
            if notes is not None:
                notes.append(f"categorical column {c}: the number of levels ({size}) was taken "
                             f"from the data (largest code + 1), which leaks it; pass levels=")
        else:
            raise TypeError(f"levels must be an int or a dict column -> int, got {levels!r}")
        bad = np.flatnonzero((X[:, c] < 0) | (X[:, c] >= size))
        if bad.size:
            raise ValueError(f"records: column {c} must hold codes 0..{size - 1}; row {bad[0]} "
                             "does not")
        sizes.append(size)
        numeric.append(False)
    grid = Grid(tuple(sizes), tuple(numeric), t)
    if grid.domain > MAX_DOMAIN:
        raise ValueError(
            f"the discretized domain has T = {' x '.join(map(str, sizes))} = {grid.domain} values "
            f"(> {MAX_DOMAIN}): the T x T kernel matrix would need "
            f"{grid.domain ** 2 * 8 / 2**30:.1f}"
            f" GiB; use fewer bins")
    return grid


def kernel_matrix(kern: Kernel, grid: Grid) -> np.ndarray:
    """A[x, y] = f(r_x, r_y) on the grid's representatives, (T, T) float64 (cached, read-only)."""
    key = (kern.name, id(kern.plain), grid.key)
    hit = _MATRIX_CACHE.get(key)
    if hit is not None:
        return hit
    reps = grid.representatives()
    T = reps.shape[0]
    A = np.empty((T, T), dtype=np.float64)
    block = max(1, (1 << 20) // T)
    for start in range(0, T, block):
        rows = np.arange(start, min(start + block, T))
        left = np.repeat(reps[rows], T, axis=0)
        right = np.tile(reps, (rows.size, 1))
        A[rows] = kern.plain(np.stack([left, right], axis=1)).reshape(rows.size, T)
    A.setflags(write=False)
    if len(_MATRIX_CACHE) >= _MATRIX_CACHE_SIZE:
        _MATRIX_CACHE.pop(next(iter(_MATRIX_CACHE)))
    _MATRIX_CACHE[key] = A
    return A


def pair_sum(A: np.ndarray, hist: np.ndarray) -> float:
    """sum over ordered pairs i != j of A[x_i, x_j] from the histogram of the x_i."""
    h = np.asarray(hist, dtype=np.float64)
    return float(h @ (A @ h) - h @ np.diagonal(A))


# -- exact randomized response ---------------------------------------------------------------
def k_rr(values: np.ndarray, k: int, epsilon: float, rng: CSPRNG, *,
         mine: ArrayLike | None = None) -> np.ndarray:
    """k-ary randomized response of every value in [0, k), exact (see the module docstring).

    ``mine``: a boolean mask of the values whose reports are needed (a
    process's own parties; default all): the rounds stop once these are
    kept (the others' entries are then meaningless).
    """
    x = np.asarray(values, dtype=np.int64)
    out = np.zeros_like(x)
    if not math.isfinite(epsilon):
        out[:] = x
        return out
    pending = np.ones(x.shape, dtype=bool)
    need = pending if mine is None else np.asarray(mine, dtype=bool)
    while np.any(pending & need):                  # rounds of the whole batch
        prop = rng.integers(k, x.shape)
        keep = pending & ((prop == x) | bernoulli_exp(epsilon, x.shape, rng))
        out[keep] = prop[keep]
        pending &= ~keep
    return out


def keep_sign(shape: ShapeLike, epsilon: float, rng: CSPRNG) -> np.ndarray:
    """+1 with probability e^eps / (e^eps + 1), else -1 (exact: binary RR of the value +1).

    Every value is the same (+1), so the stream's use depends on no record: the rounds draw
    for the pending values only (each party's sign is still the same in every process).
    """
    m = int(np.prod(shape, dtype=np.int64))
    flip = np.zeros(m, dtype=np.int64)
    if math.isfinite(epsilon):
        todo = np.arange(m)
        while todo.size:
            prop = rng.integers(2, (todo.size,))
            keep = (prop == 0) | bernoulli_exp(epsilon, (todo.size,), rng)
            flip[todo[keep]] = prop[keep]
            todo = todo[~keep]
    return (1 - 2 * flip).reshape(shape)


# -- evaluation -------------------------------------------------------------------------------
def evaluation(kern: Kernel, X: np.ndarray, Xq: np.ndarray | None = None, *,
               u_discretized: float | None = None) -> dict:
    """Exact complete U-statistics (raw values and discretized values) and the statistics released.

    Reads every record in the clear: for tests and experiments only.
    """
    from ..kernels import complete_u

    n = X.shape[0]
    aux = list(kern.aux(X).sum(axis=0)) if kern.aux is not None else []
    u_raw = complete_u(kern, X)
    out = {"u_complete": u_raw,
           "statistic_complete": None if u_raw is None else kern.release(u_raw, aux, n),
           "aux_exact": aux}
    if Xq is not None or u_discretized is not None:
        u_q = u_discretized
        if u_q is None and Xq is not None:
            u_q = complete_u(kern, Xq)
        aux_q = list(kern.aux(Xq).sum(axis=0)) if (kern.aux is not None and Xq is not None) else aux
        out["u_discretized"] = u_q
        out["statistic_discretized"] = None if u_q is None else kern.release(u_q, aux_q, n)
    return out


@dataclass
class Prepared:
    """What every discretizing degree-2 protocol starts from (:func:`prepare_degree2`)."""

    kern: kernel_registry.Kernel
    epsilon: float
    bins: int
    X: np.ndarray
    grid: Grid
    A: np.ndarray
    notes: list

    @property
    def n(self) -> int:
        return self.X.shape[0]

    def evaluation(self, cells: np.ndarray) -> dict:
        """:func:`evaluation` with the discretized U-statistic from the cells' histogram."""
        hist = np.bincount(cells, minlength=self.grid.domain)
        u_q = pair_sum(self.A, hist) / (self.n * (self.n - 1))
        return evaluation(self.kern, self.X, self.grid.discretize(self.X), u_discretized=u_q)


def missing_levels(kern: kernel_registry.Kernel, levels: Any) -> str | None:
    """Why a run of several processes cannot build the grid, or None: every categorical
    column needs its number of levels declared (by the kernel or ``levels``), since a process
    must not read the records held elsewhere."""
    declared = kern.extra.get("levels", {})
    given = dict(levels) if isinstance(levels, (dict, tuple)) else {}
    missing = [c for c in sorted(kern.categorical) if c not in declared and not (
        isinstance(levels, numbers.Integral) or c in given)]
    if not missing:
        return None
    return (f"categorical column(s) {missing} of kernel {kern.name!r} need their number of "
            "levels (levels=) in a run of several processes: every process must build the "
            "same grid without reading others' records")


def check_public_levels(kern: kernel_registry.Kernel, levels: Any) -> None:
    """:func:`missing_levels` as a ValueError."""
    why = missing_levels(kern, levels)
    if why is not None:
        raise ValueError(why)


def levels_arg(levels: Any) -> Any:
    """The spec's levels (an int, or (column, count) pairs) as :func:`make_grid` takes them."""
    return dict(levels) if isinstance(levels, tuple) else levels


def prepare_degree2(records: ArrayLike, spec: BaselineSpec, *,
                    public_levels: bool = False) -> Prepared:
    """Discretize the records of a :class:`ustat.specs.BaselineSpec` run (kernel, epsilon,
    bins and levels checked by the spec) and build the kernel matrix (``public_levels``: a
    run of several processes, where the levels must not come from the data)."""
    kern, bins = spec.kern, spec.encoding.bins
    assert bins is not None, "every discretizing protocol declares bins (the spec fills it)"
    levels = levels_arg(spec.encoding.levels)
    if public_levels:
        check_public_levels(kern, levels)
    X = validate_records(records, kern)
    notes: list = []
    grid = make_grid(X, kern, bins, levels, notes)
    return Prepared(kern, spec.privacy.epsilon, bins, X, grid, kernel_matrix(kern, grid), notes)


def several_processes(session: Session | None, runtime: Any) -> bool:
    """Whether the run is one of several processes (a session placed over several, or a
    runtime given to make one)."""
    return runtime is not None or (session is not None and not session.single_process)


# -- sessions ---------------------------------------------------------------------------------
def open_session(n: int, session: Session | None, seed: Any, *, label: str, roles: tuple = (),
                 bits: int = 40, frac_bits: int = 14, runtime: Any = None) -> tuple:
    """A session with n parties and the given extra roles, and a fresh per-run stream.

    With ``session`` given it must have n parties and every role; the run's
    randomness is derived from a nonce of the session's stream, so two runs
    on one session never reuse coins (as in :func:`ustat.umpc.run_umpc`).
    Without, a new session (``runtime``: this process's in a run of several
    processes, :mod:`ustat.executors`; the same roles, bits and seed in each).
    """
    from mpc.comm.network import DEFAULT_ROLES
    from mpc.session import Session

    if session is None:
        extra = tuple(r for r in roles if r not in DEFAULT_ROLES)
        session = Session(n, bits=bits, frac_bits=frac_bits, seed=seed,
                          roles=tuple(DEFAULT_ROLES) + extra, runtime=runtime)
    else:
        if session.n_parties != n:
            raise ValueError(f"session has {session.n_parties} parties but there are {n} records")
        missing = [r for r in ("aggregator",) + tuple(roles) if r not in session.net.roles]
        if missing:
            raise ValueError(f"session is missing the role(s) {missing} this protocol needs "
                             f"(create it with roles=...)")
    run_rng = session.rng.derive(label, session.rng.random_bytes(16))
    return session, run_rng


def broadcast_seed(session: Session, bits: int = 128) -> None:
    """The aggregator sends every party a public seed (offline: data independent, counted).

    The seed's ``bits`` (a multiple of 8) come from an agreed stream
    (:meth:`mpc.session.Session.agreed`), the same in every process of a run.
    """
    net = session.net
    n = net.n_parties
    if bits % 8:
        raise ValueError(f"bits must be a multiple of 8, got {bits}")
    seed = session.agreed(session.rng.derive("public-seed")).bytes_array(bits // 8)
    with net.phase("public-coins", offline=True):
        net.send(np.full(n, net.role("aggregator")), net.parties, np.tile(seed, (n, 1)), 8)


def index_bits(k: int) -> int:
    """Bits of an index in [0, k): ceil(log2 k), at least 1."""
    return max(1, (int(k) - 1).bit_length())
