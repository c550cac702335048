"""``ustat ecdf``, ``quantile``, ``roc``, ``hl``: the flags to a statistic's spec.

Each builder (:func:`ecdf_spec`, :func:`quantile_spec`, :func:`roc_spec`,
:func:`hl_spec`) reads the parsed flags and returns the frozen spec of
:mod:`ustat.specs.ecdf`; a value the spec refuses is reported under the flag
that set it (:data:`ECDF_FLAGS`, :func:`ustat.cli.specs.spec_error`), a
combination of flags no spec field can hold as a :class:`UsageError` naming
them. Used by :mod:`ustat.cli.ecdf` (a run, and the spec a deployment
stores). Inputs: an ``argparse.Namespace`` and, for the grid commands, the
public bounds and the thresholds; no data is read here, except a thresholds
FILE. Cost: negligible.
"""

from __future__ import annotations

import math
import os
from typing import TYPE_CHECKING, Any

import numpy as np

from ..specs.base import Spec
from ..specs.ecdf import ECDFSpec, HLSpec, QuantileSpec, ROCSpec
from .common import UsageError, integral
from .specs import spec_error

if TYPE_CHECKING:
    import argparse
    from collections.abc import Iterable

__all__ = [
    "ECDF_FLAGS",
    "branching_option",
    "ecdf_spec",
    "hl_spec",
    "quantile_spec",
    "roc_spec",
    "thresholds_option",
]

#: (flag, args attribute, spec field) of the family's options
ECDF_FLAGS = (
    ("--epsilon", "epsilon", "epsilon"), ("--noise", "noise", "noise_mode"),
    ("--sensitivity", "sensitivity", "sensitivity"), ("--bounds", "bounds", "bounds"),
    ("--clip", "clip", "clip"), ("--thresholds", "thresholds", "thresholds"),
    ("--grid", "grid", "grid"), ("--branching", "branching", "branching"),
    ("--backend", "backend", "backend"), ("--servers", "servers", "servers"),
    ("--seed", "seed", "seed"), ("--smooth", "smooth", "smooth"),
    ("--confidence", "confidence", "confidence"), ("--q", "q", "q"),
    ("--groups", "groups", "groups"), ("--thresholds", "thresholds", "n_thresholds"),
    ("--null", "null", "null"), ("--verify-keys", "verify_keys", "verify_keys"),
)


# -- flags to specs -------------------------------------------------------------------------------
def thresholds_option(args: argparse.Namespace,
                      bounds: tuple[float, float] | None = None) -> int | tuple:
    """``--thresholds``: a count N (placed within the bounds by the spec's grid), or the
    thresholds of a FILE (one per line), checked against ``bounds``."""
    from ..ecdf import thresholds as th

    text = str(args.thresholds).strip()
    n = integral(text)                  # N, also written 1e3
    if n is not None:
        if n < 1:
            raise UsageError(f"--thresholds must be >= 1 (N = 0 thresholds gives nothing to "
                             f"release), got {n}")
        return n
    if not os.path.exists(text):
        raise UsageError(f"--thresholds must be a number N or an existing file, got {text!r}")
    return tuple(th.check_thresholds(th.from_file(text), bounds).tolist())


def branching_option(args: argparse.Namespace, n_points: int) -> int | str:
    """``--branching``: an int >= 2 or ``"auto"`` (kept: the library chooses from N and
    epsilon); checked against ``--sensitivity paper`` (branching 2 only) as it resolves."""
    from ..ecdf.tree import best_branching

    b = args.branching.strip().lower()
    if b == "auto":
        eps = args.epsilon if math.isfinite(args.epsilon) else 1.0
        branching: int | str = "auto"
        resolved = best_branching(n_points, eps)
    else:
        try:
            branching = resolved = int(b)
        except ValueError:
            raise UsageError(f"--branching must be an integer >= 2 or 'auto', "
                             f"got {args.branching!r}") from None
        if resolved < 2:
            raise UsageError(f"--branching must be >= 2, got {resolved}")
    if args.sensitivity == "paper" and resolved != 2:
        raise UsageError("--sensitivity paper (L + 1) is proved for --branching 2 only")
    return branching


def _common_fields(args, n_points: int) -> dict:
    """The flat spec fields every command of the family sets (privacy, execution, tree)."""
    if args.backend == "fss" and args.servers != 2:
        raise UsageError(f"--servers must be 2 for --backend fss (two-key DCF does not extend "
                         f"to m > 2); use --backend pointwise for {args.servers} servers")
    if args.servers < 2:
        raise UsageError(f"--servers must be >= 2, got {args.servers}")
    verify = bool(getattr(args, "verify_keys", None))
    if verify and args.backend != "fss":
        raise UsageError(f"--verify-keys checks the DCF keys of --backend fss, not --backend "
                         f"{args.backend}: drop it")
    return dict(epsilon=args.epsilon, sensitivity=args.sensitivity,
                noise_mode=None if args.backend == "central" else args.noise,
                backend=args.backend, servers=args.servers, seed=args.seed,
                branching=branching_option(args, n_points), verify_keys=verify)


def _spec(kind: type[Spec], *top: Any, **flat: Any) -> Any:
    try:
        return kind.of(*top, **flat)
    except (TypeError, ValueError) as exc:
        raise spec_error(exc, ECDF_FLAGS) from None


def _grid_fields(args, bounds, thresholds) -> dict:
    n_points = thresholds if isinstance(thresholds, int) else len(thresholds)
    return dict(_common_fields(args, n_points), bounds=tuple(bounds), thresholds=thresholds,
                clip=bool(getattr(args, "clip", False)), smooth=args.smooth,
                confidence=args.confidence)


def ecdf_spec(args: argparse.Namespace, bounds: tuple[float, float],
              thresholds: int | tuple) -> ECDFSpec:
    """The :class:`ECDFSpec` of ``ustat ecdf``'s flags (``bounds``: the public ones, or the
    data's; ``thresholds``: :func:`thresholds_option`)."""
    return _spec(ECDFSpec, grid=args.grid, **_grid_fields(args, bounds, thresholds))


def quantile_spec(args: argparse.Namespace, bounds: tuple[float, float], thresholds: int | tuple,
                  levels: Iterable[float]) -> QuantileSpec:
    """The :class:`QuantileSpec` of ``ustat quantile``'s flags (``levels``: ``--q``)."""
    return _spec(QuantileSpec, tuple(levels), grid=args.grid,
                 **_grid_fields(args, bounds, thresholds))


def roc_spec(args: argparse.Namespace, bounds: tuple[float, float],
             thresholds: int | tuple) -> ROCSpec:
    """The :class:`ROCSpec` of ``ustat roc``'s flags (``--thresholds 1`` refused: the curve
    would be (1, 1) -> (0, 0), AUC 0.5 whatever the data)."""
    if thresholds == 1:
        raise UsageError("--thresholds: a ROC curve needs at least 2 thresholds (with only the "
                         "upper bound the curve is (1, 1) -> (0, 0) and the AUC 0.5 whatever "
                         "the data); use --thresholds 2 or more")
    return _spec(ROCSpec, **_grid_fields(args, bounds, thresholds))


def hl_spec(args: argparse.Namespace) -> HLSpec:
    """The :class:`HLSpec` of ``ustat hl``'s flags (``--thresholds`` a number N; the tree's
    branching is 2, ``--branching`` is checked only)."""
    try:
        N = int(args.thresholds)
    except ValueError:
        raise UsageError(f"--thresholds for hl must be a number N, got "
                         f"{args.thresholds!r}") from None
    if N < 1:
        raise UsageError(f"--thresholds must be >= 1, got {N}")
    flat = _common_fields(args, N)
    flat.pop("branching")
    return _spec(HLSpec, groups=args.groups, n_thresholds=N, null=args.null, **flat)


def _levels(args) -> np.ndarray:
    from ..specs.ecdf import check_levels

    try:
        return check_levels([float(v) for v in args.q.split(",") if v.strip()])
    except ValueError as exc:
        raise UsageError(f"--q: {exc}") from None
