"""The ring encoding of a U-MPC run, chosen per kernel (issue 8, section 2).

Three widths travel to every chunk in :class:`ustat.umpc.chunk.ChunkSpec`:
``bits`` (the ring Z_2^l), ``frac_bits`` (c: fixed-point bits of the kernel
values and of the aggregate) and ``input_frac_bits`` (c_in: fixed-point bits
of the numeric inputs). :func:`choose_precision` picks them from public
parameters only (the kernel, |E|, n, delta_max, epsilon):

- *order* kernels (``Kernel.encoding == "order"``: Kendall, AUC, VUS,
  triples, and the equality kernels on categorical codes) use numeric inputs
  only through the sign of integer combinations with at most ``input_gain``
  times the input range in magnitude. They get c_in = l - 2 - ceil(log2 gain)
  (the largest with |combination| < 2^(l-1), so no gate operand wraps), i.e.
  38 bits at l = 40 instead of 14. Their output is an integer (or a half) per
  edge, so c stays 14 (fewer only if |E| would make the aggregate wrap; then
  a wider ring when ``bits`` is free). Default l = 40, or the smallest l <= 64
  that gives the asked ``resolution``.
- *arithmetic* kernels (gini's |x - y| and any user kernel by default) share
  one scale for inputs and output (c_in = c), so the accumulator
  |E| max|f| 2^c plus the noise tail must stay below 2^(l-1): by default the
  narrowest ring (40 <= l <= 64) that gives c = 32, then the largest c <= 40
  that fits (e.g. l = 48 for 2 10^4 edges, l = 57 for 2 10^7; only l = 64
  and fewer bits beyond about 2^30 edges). The ring widens with |E| but the
  comparisons need not: a kernel that states a public bound on a gate
  operand (Gini: |x - y| <= 1) gets its FSS comparison on c_in + 2 bits
  (:func:`ustat.secure.narrow_bits`; 34 bits whatever l is), so the DCF
  depth no longer grows with |E|.

Resolution: an input combination whose true value exceeds ``input_gain``
2^-c_in (in the units of the encoded values) in magnitude has the right sign
after rounding (each input moves by at most 2^-(c_in+1)); equal inputs
always encode equally. :func:`encode_inputs` with public ``bounds`` maps raw
values for order kernels by a power of two W >= hi - lo, so raw values with
few binary digits (integers, ages, balances) encode exactly and ties of
combinations such as a + b - 2c survive; the reported resolution is then in
raw units (input_gain 2^-c_in W).

Cost: O(1) for the choice, O(n d) for the encoding. Threat model: nothing
here depends on the records (only their public bounds).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, NamedTuple

import numpy as np
from numpy.typing import ArrayLike

from mpc.arith.ring import FixedPoint, fixed_point

if TYPE_CHECKING:
    from ..kernels import Kernel

#: Ring width when ``bits`` is free: order kernels / arithmetic kernels.
ORDER_BITS, ARITH_BITS = 40, 64
#: Output fractional bits of order kernels; the target and cap for arithmetic kernels
#: (2^-32 ~ 2.3e-10 of the input range per value).
ORDER_FRAC_BITS, ARITH_FRAC_TARGET, ARITH_FRAC_CAP = 14, 32, 40
#: Noise tail (in noise scales) the accumulator leaves room for (probability < 2^-40).
TAIL_SCALES = 28


@dataclass(frozen=True)
class Precision:
    """A run's encoding: ring bits, output and input fractional bits, resolution achieved."""

    bits: int
    frac_bits: int
    input_frac_bits: int
    resolution: float               # smallest resolved input difference (records' units)
    encoding: str = "order"         # the kernel's encoding rule ("order" / "arithmetic")
    input_scale: tuple = ()         # per column: divisor applied to raw values (1: as given)

    def to_dict(self) -> dict:
        out = asdict(self)
        out["input_scale"] = list(self.input_scale)
        return out


def _numeric_columns(kern) -> list:
    return [c for c in range(kern.columns) if c not in kern.categorical]


def _unit_bound(kern, m, n, delta_max, eps, aux_fraction, edge_fraction=0.0) -> float:
    """Largest |aggregate| over 2^c (kernel sum, aux sums or edge sums, plus the noise tail)."""
    lo, hi = kern.output_range
    bound = m * max(abs(lo), abs(hi))
    aux = float(n) if kern.aux is not None else 0.0
    n_edge = len(kern.edge_aux_names)
    edge = float(m) if n_edge else 0.0
    if math.isfinite(eps):
        eps_u = eps * (1 - aux_fraction) if kern.aux is not None else eps
        eps_u -= eps * edge_fraction if n_edge else 0.0
        bound += TAIL_SCALES * delta_max * kern.sensitivity / eps_u
        if kern.aux is not None:
            aux += TAIL_SCALES * kern.aux_sensitivity / (eps * aux_fraction)
        if n_edge and edge_fraction > 0:
            edge += TAIL_SCALES * delta_max * n_edge / (eps * edge_fraction)
    return max(bound, aux, edge)


def max_frac_bits(bits: int, kern: Kernel, m: int, n: int, delta_max: int, eps: float,
                  aux_fraction: float, edge_fraction: float = 0.0) -> int:
    """The largest c with the aggregate below 2^(l-1) (one bit of margin); may be negative."""
    b = _unit_bound(kern, m, n, delta_max, eps, aux_fraction, edge_fraction)
    return int(math.floor(bits - 2 - math.log2(b)))


def _gain_bits(kern) -> int:
    return int(math.ceil(math.log2(kern.input_gain)))


def _widths(bounds, kern) -> list:
    """Per numeric column the unit of the encoded value in the records' units."""
    out = []
    for c in _numeric_columns(kern):
        if bounds is None:
            out.append(1.0)
        else:
            lo, hi = bounds[c]
            w = float(hi) - float(lo)
            out.append(2.0 ** math.ceil(math.log2(w)) if kern.encoding == "order" else w)
    return out


class Shares(NamedTuple):
    """The shares of epsilon beside the statistic's: the class counts' (auc, vus) and the
    edge sums' (Kendall's untied pairs with ``tie_aware``; 0: not drawn)."""

    aux: float
    edge: float = 0.0


def choose_precision(kern: Kernel, *, m: int, n: int, delta_max: int, eps: float,
                     shares: Shares, bits: int | None = None, frac_bits: int | None = None,
                     input_frac_bits: int | None = None, resolution: float | None = None,
                     bounds: Sequence | None = None,
                     session_widths: tuple | None = None) -> Precision:
    """The encoding of a run (module docstring); ValueError naming what cannot be met.

    ``session_widths``: (bits, frac_bits) of a session passed by the caller
    (then fixed). ``bounds``: per-column public (lo, hi) when the records are
    raw values (resolution in raw units), else None (records in [0, 1]).
    """
    if session_widths is not None:
        for name, given, have in (("bits", bits, session_widths[0]),
                                  ("frac_bits", frac_bits, session_widths[1])):
            if given is not None and int(given) != have:
                raise ValueError(f"{name}={given} differs from the session's {name}={have}")
        bits, frac_bits = session_widths
    for name, v, lo in (("bits", bits, 2), ("frac_bits", frac_bits, 0),
                        ("input_frac_bits", input_frac_bits, 0)):
        if v is not None and (isinstance(v, bool) or not isinstance(v, (int, np.integer))
                              or not lo <= v <= 64):
            raise ValueError(f"{name} must be an integer in {lo}..64, got {v!r}")
    if resolution is not None and not (isinstance(resolution, (int, float))
                                       and math.isfinite(resolution) and resolution > 0):
        raise ValueError(f"resolution must be a positive number, got {resolution!r}")
    args = (kern, m, n, delta_max, eps, shares.aux, shares.edge)
    units = _widths(bounds, kern)
    if kern.encoding == "order":
        p = _order(kern, args, bits, frac_bits, input_frac_bits, resolution, units)
    else:
        p = _arithmetic(kern, args, bits, frac_bits, input_frac_bits, units)
    if resolution is not None and p.resolution > resolution:
        raise ValueError(
            f"resolution={resolution:g} cannot be met: {p.bits}-bit ring with {p.input_frac_bits} "
            f"input fractional bits resolves {p.resolution:.3g} for kernel {kern.name!r} "
            f"({kern.encoding} encoding); ask for a coarser resolution, "
            f"{'leave bits free' if bits is not None else 'fewer edges'} or narrower bounds")
    return p


def _resolution(kern, c_in, units) -> float:
    return max((kern.input_gain * u * 2.0 ** -c_in for u in units), default=0.0)


def _order(kern, args, bits, frac_bits, c_in, resolution, units) -> Precision:
    gain = _gain_bits(kern)
    if bits is None:
        bits = ORDER_BITS
        if resolution is not None and units:
            need = max(math.ceil(math.log2(kern.input_gain * u / resolution)) for u in units)
            bits = max(bits, min(64, need + 2 + gain))
        need_c = ORDER_FRAC_BITS if frac_bits is None else frac_bits
        bits = max(bits, min(64, bits + need_c - max_frac_bits(bits, *args)))
    if frac_bits is None:
        frac_bits = min(ORDER_FRAC_BITS, max_frac_bits(bits, *args))
        if frac_bits < 1:
            raise ValueError(f"too many edges ({args[1]}) for a {bits}-bit ring: the aggregate "
                             "would wrap; use fewer edges or a wider ring (bits <= 64)")
    top = bits - 2 - gain
    if c_in is None:
        c_in = top
    elif c_in > top:
        raise ValueError(f"input_frac_bits={c_in} lets kernel {kern.name!r}'s comparisons wrap "
                         f"in a {bits}-bit ring (at most {top})")
    return Precision(int(bits), int(frac_bits), int(c_in), _resolution(kern, c_in, units),
                     "order", tuple(units))


def _arithmetic(kern, args, bits, frac_bits, c_in, units) -> Precision:
    if bits is None:              # the narrowest ring (>= 40) giving the target, else 64
        need = ARITH_FRAC_TARGET if frac_bits is None else frac_bits
        bits = ORDER_BITS + max(0, need - max_frac_bits(ORDER_BITS, *args))
        bits = min(ARITH_BITS, max(bits, need + 2 + _gain_bits(kern)))
    if frac_bits is None:
        frac_bits = min(ARITH_FRAC_CAP, bits - 2 - _gain_bits(kern), max_frac_bits(bits, *args))
        if frac_bits < 1:
            raise ValueError(f"too many edges ({args[1]}) for a {bits}-bit ring: the aggregate "
                             "would wrap; use fewer edges or a wider ring (bits <= 64)")
    if c_in is not None and c_in != frac_bits:
        raise ValueError(f"kernel {kern.name!r} computes with its input values (arithmetic "
                         f"encoding): input_frac_bits must equal frac_bits={frac_bits}, got {c_in}")
    return Precision(int(bits), int(frac_bits), int(frac_bits),
                     _resolution(kern, frac_bits, units), "arithmetic", tuple(units))


def check_bounds(bounds: Sequence | None, kern: Kernel) -> list | None:
    """The public (lo, hi) of each numeric column, None for categorical ones (``bounds``: a
    spec's, :class:`ustat.specs.umpc.Precision`, checked there: one pair per column)."""
    if bounds is None:
        return None
    return [None if c in kern.categorical else b for c, b in enumerate(bounds)]


def input_fp(precision: Precision) -> FixedPoint:
    """The fixed-point encoding of the numeric inputs."""
    return fixed_point(precision.bits, precision.input_frac_bits)


def scale_records(X: ArrayLike, bounds: Sequence | None, kern: Kernel) -> ArrayLike:
    """Raw records into [0, 1], float64: (x - lo) / unit per numeric column (:func:`_widths`).

    ``bounds`` None returns ``X`` as given. ValueError naming the row and
    column of a value outside its bounds.
    """
    if bounds is None:
        return X
    out = np.array(X, dtype=np.float64)
    if out.ndim == 1 and kern.columns == 1:
        out = out[:, None]
    if out.ndim != 2 or out.shape[1] != kern.columns:
        raise ValueError(f"kernel {kern.name!r} needs records with {kern.columns} column(s), "
                         f"got shape {np.shape(X)}")
    for c, unit in zip(_numeric_columns(kern), _widths(bounds, kern)):
        lo, hi = bounds[c]
        col = out[:, c]
        bad = np.flatnonzero(~((col >= lo) & (col <= hi)))
        if bad.size:
            raise ValueError(f"records: column {c} row {bad[0]} is outside the "
                             f"bounds [{lo:g}, {hi:g}]")
        out[:, c] = (col - lo) / unit
    return out


def reference_records(raw: np.ndarray, bounds: Sequence | None, kern: Kernel) -> np.ndarray:
    """The records the exact_raw evaluation uses: the raw values for order kernels
    (their statistic does not change under x -> a x + b), (x - lo) / (hi - lo) for
    arithmetic ones (the statistic in the units it is released in)."""
    if bounds is None or kern.encoding == "order":
        return raw
    out = np.array(raw, dtype=np.float64)
    for c in _numeric_columns(kern):
        lo, hi = bounds[c]
        out[:, c] = (out[:, c] - lo) / (hi - lo)
    return out
