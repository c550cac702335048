"""What a protocol declares about each option it takes: :class:`Option`, and the shared ones.

A protocol's :class:`~ustat.baselines.registry.ProtocolInfo` lists its options
(``options``): each names a field of :class:`ustat.specs.BaselineSpec`, the protocol's
default for it, the check of a value (which normalizes it and raises naming the field),
the ``ustat estimate --protocol`` flag that sets it (None: the Python API only) and a line
of help. The spec reads them (defaults, checks, which fields a protocol refuses), and so
does the command line (which flag applies to which protocol): nothing is guessed from a
function's signature. Options several protocols share are here (:data:`BINS`,
:data:`LEVELS`, :data:`BITS`, :data:`FRAC_BITS`, :data:`AUX_FRACTION`); each protocol's
module declares its own next to the code that reads them.
"""

from __future__ import annotations

import numbers
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from ._common import check_bins, check_int

T = TypeVar("T")

__all__ = [
    "AUX_FRACTION",
    "BINS",
    "BITS",
    "FRAC_BITS",
    "LEVELS",
    "Option",
    "boolean",
    "check_levels",
    "choice",
    "fraction",
    "integer",
    "optional_integer",
    "real",
    "resolved",
]


@dataclass(frozen=True)
class Option:
    """One option of a protocol (module docstring): the spec field ``name``, its ``default``
    for this protocol (None: the protocol chooses), ``check`` (value -> value, raising
    TypeError/ValueError that names the field), the command-line ``flag`` and ``help``."""

    name: str
    default: Any = None
    check: Callable[[Any], Any] | None = None
    flag: str | None = None
    help: str = ""


def resolved(value: T | None) -> T:
    """An option of a spec whose protocol declares it with a default: never None (the spec
    filled the default in), for the type checker."""
    assert value is not None, "a declared option's default is filled in by the spec"
    return value


def choice(name: str, choices: tuple) -> Callable[[Any], Any]:
    """A check: one of ``choices`` (``"name must be 'a' or 'b', got 'x'"``)."""
    said = (" or ".join(repr(c) for c in choices) if len(choices) == 2
            else f"one of {choices}")

    def check(value: Any) -> Any:
        if value not in choices:
            raise ValueError(f"{name} must be {said}, got {value!r}")
        return value
    return check


def integer(name: str, lo: int = 1, hi: int | None = None) -> Callable[[Any], int]:
    """A check: an integer >= ``lo`` (and <= ``hi``)."""
    def check(value: Any) -> int:
        v = check_int(value, name, lo)
        if hi is not None and v > hi:
            raise ValueError(f"{name} must be <= {hi}, got {v}")
        return v
    return check


def optional_integer(name: str, lo: int = 1) -> Callable[[Any], int | None]:
    """A check: an integer >= ``lo``, or None (the protocol's choice)."""
    inner = integer(name, lo)
    return lambda value: None if value is None else inner(value)


def real(name: str) -> Callable[[Any], float]:
    """A check: a real number, as a float."""
    def check(value: Any) -> float:
        if isinstance(value, bool) or not isinstance(value, numbers.Real):
            raise TypeError(f"{name} must be a number, got {value!r}")
        return float(value)
    return check


def fraction(name: str) -> Callable[[Any], float]:
    """A check: a number in (0, 1)."""
    as_real = real(name)

    def check(value: Any) -> float:
        v = as_real(value)
        if not 0 < v < 1:
            raise ValueError(f"{name} must be in (0, 1), got {value}")
        return v
    return check


def boolean(name: str) -> Callable[[Any], bool]:
    """A check: True or False."""
    def check(value: Any) -> bool:
        if not isinstance(value, (bool, numbers.Integral)) or value not in (0, 1):
            raise TypeError(f"{name} must be True or False, got {value!r}")
        return bool(value)
    return check


def check_levels(levels: Any) -> int | tuple:
    """The levels of the categorical columns: an int for all of them, or (column, count)
    pairs (a dict column -> count is accepted; JSON's string keys too), sorted."""
    if isinstance(levels, numbers.Integral) and not isinstance(levels, bool):
        return check_int(levels, "levels")
    pairs = levels.items() if isinstance(levels, dict) else levels
    try:
        out = tuple(sorted((int(c), check_int(k, f"levels[{c}]")) for c, k in pairs))
    except (TypeError, ValueError) as exc:
        if str(exc).startswith("levels["):
            raise
        raise TypeError(f"levels must be an int or a dict column -> int, got {levels!r}") \
            from None
    return out


BINS = Option("bins", 64, check_bins, "--bins",
              "bins t per numeric column (T cells in all)")
LEVELS = Option("levels", None, check_levels, None,
                "levels of the categorical columns (None: the kernel's, else the data's, "
                "which leaks the largest code)")
BITS = Option("bits", 40, integer("bits", 2, 64), "--bits", "ring bits l of the messages")
FRAC_BITS = Option("frac_bits", 14, integer("frac_bits", 0, 62), "--frac-bits",
                   "fractional bits c of the fixed-point encoding")
AUX_FRACTION = Option("aux_epsilon_fraction", 0.1, fraction("aux_epsilon_fraction"),
                      "--aux-epsilon-fraction",
                      "share of epsilon for the auxiliary sums (the AUC's positive count)")
