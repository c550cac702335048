"""What every run spec is: a frozen, typed, validated, printable and serializable dataclass.

A spec says *what* a run computes (its privacy and threat model, precision,
sampling design, execution options), never *where* it runs (that is an
executor, :mod:`ustat.executors`). Specs are frozen dataclasses whose
``__post_init__`` checks and normalizes every field once, naming the field
in the error; nothing downstream checks them again. Groups nest: a
statistic's spec holds one spec per concern (:mod:`ustat.specs.umpc`).

- :meth:`Spec.to_dict` / :meth:`Spec.from_dict`: nested plain values
  (numbers, strings, lists, None) for JSON results and ``deploy.toml``;
  unknown keys are refused, naming the key and where it stood.
- :meth:`Spec.of`: a composite spec from flat keywords (each field name is
  unique across its groups), e.g. ``UMPCSpec.of("kendall", epsilon=1.0,
  threat_model="hf", edges="4n")``; :meth:`Spec.replace` likewise.
- ``str(spec)``: one line per group, for logs and ``--help`` texts.
"""

from __future__ import annotations

import dataclasses
import math
import numbers
from typing import Any, ClassVar, TypeVar

__all__ = ["Spec", "check_choice", "check_epsilon", "check_fraction", "check_groups", "check_int",
           "check_positive_int", "check_real", "check_seed", "name_kernel", "set_field"]

S = TypeVar("S", bound="Spec")


class Spec:
    """Base of every spec and spec group (a frozen dataclass subclass; module docstring)."""

    #: how the group is named in messages and printing ("" for a statistic's spec)
    GROUP: ClassVar[str] = ""
    #: set by @dataclass on every subclass; declared (not assigned) so that type checkers
    #: take a Spec for the dataclass it always is (dataclasses.fields, dataclasses.replace)
    __dataclass_fields__: ClassVar[dict[str, dataclasses.Field[Any]]]

    # -- conversion --------------------------------------------------------------------------
    def to_dict(self) -> dict:
        """The spec as nested plain values (tuples as lists), every field included."""
        return {f.name: _plain(getattr(self, f.name)) for f in dataclasses.fields(self)}

    @classmethod
    def from_dict(cls: type[S], data: Any, where: str = "") -> S:
        """The spec of ``data`` (as :meth:`to_dict` writes it; missing fields take their
        defaults). ValueError naming an unknown key or a bad value, and ``where`` it stood."""
        here = where or cls.__name__
        if not isinstance(data, dict):
            raise ValueError(f"{here}: expected a table of fields, got {data!r}")
        fields = {f.name: f for f in dataclasses.fields(cls)}
        unknown = sorted(set(data) - set(fields))
        if unknown:
            raise ValueError(f"{here}: unknown field {unknown[0]!r}; fields: "
                             + ", ".join(fields))
        kwargs = {}
        for name, value in data.items():
            group = _group_type(cls, name)
            kwargs[name] = group.from_dict(value, f"{here}.{name}") if group is not None \
                else value
        try:
            return cls(**kwargs)
        except (TypeError, ValueError) as e:
            raise ValueError(f"{here}: {e}") from None

    # -- building ----------------------------------------------------------------------------
    @classmethod
    def flat_names(cls) -> dict:
        """Flat keyword -> (group field or None, field) for :meth:`of` and :meth:`replace`."""
        out: dict = {}
        for f in dataclasses.fields(cls):
            group = _group_type(cls, f.name)
            if group is None:
                out[f.name] = (None, f.name)
            else:
                for g in dataclasses.fields(group):
                    if g.name in out:
                        raise TypeError(f"{cls.__name__}: field {g.name!r} is in two groups")
                    out[g.name] = (f.name, g.name)
        return out

    @classmethod
    def of(cls: type[S], *args: Any, **flat: Any) -> S:
        """A spec from flat keywords sorted into their groups (``args``: the top-level fields
        in order, e.g. the kernel). TypeError naming an unknown keyword."""
        return cls._with(None, args, flat)

    def replace(self: S, **flat: Any) -> S:
        """A copy with the fields named by flat keywords (as :meth:`of`) changed, checked again."""
        return type(self)._with(self, (), flat)

    @classmethod
    def _with(cls: type[S], base: S | None, args: tuple, flat: dict) -> S:
        names = cls.flat_names()
        top: dict = {}
        groups: dict = {}
        positional = [f.name for f in dataclasses.fields(cls)][:len(args)]
        top.update(zip(positional, args))
        for key, value in flat.items():
            if key not in names:
                raise TypeError(f"{cls.__name__} has no field {key!r}; fields: "
                                + ", ".join(names))
            group, name = names[key]
            if group is None:
                top[name] = value
            else:
                groups.setdefault(group, {})[name] = value
        for group, values in groups.items():
            if base is not None:
                current = getattr(base, group)
            else:
                group_type = _group_type(cls, group)
                assert group_type is not None       # flat_names lists groups only
                current = group_type()
            top[group] = dataclasses.replace(current, **values)
        if base is not None:
            return dataclasses.replace(base, **top)
        return cls(**top)

    # -- printing ----------------------------------------------------------------------------
    def describe(self) -> str:
        """One line for the top-level fields, then one per group."""
        top, lines = [], []
        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            if isinstance(value, Spec):
                lines.append(f"  {f.name:<10}: {value._fields_text()}")
            else:
                top.append(f"{f.name}={_text(value)}")
        return "\n".join([f"{type(self).__name__}(" + ", ".join(top) + ")"] + lines)

    def _fields_text(self) -> str:
        return ", ".join(f"{f.name}={_text(getattr(self, f.name))}"
                         for f in dataclasses.fields(self))

    def __str__(self) -> str:
        return self.describe()


def _group_type(cls: type, name: str) -> type[Spec] | None:
    """The Spec subclass of field ``name`` of ``cls`` (None for a plain field)."""
    hints = getattr(cls, "GROUPS", {})
    return hints.get(name)


def _plain(value: Any) -> Any:
    if isinstance(value, Spec):
        return value.to_dict()
    if isinstance(value, (tuple, list)):
        return [_plain(v) for v in value]
    return value


def _text(value: Any) -> str:
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e15:
        return f"{value:g}"
    if isinstance(value, tuple):
        return "[" + ", ".join(_text(v) for v in value) + "]"
    return str(value) if not isinstance(value, str) else value


# -- field checks (each names its field) ------------------------------------------------------
def check_choice(value: Any, name: str, choices: tuple, *, allow_none: bool = False) -> Any:
    """``value`` if it is one of ``choices`` (or None when allowed), else ValueError."""
    if value is None and allow_none:
        return None
    if value not in choices:
        raise ValueError(f"{name} must be one of {choices}, got {value!r}")
    return value


def check_real(value: Any, name: str, *, allow_none: bool = False, positive: bool = False,
               finite: bool = True) -> float | None:
    """``value`` as a float: a real number (finite unless ``finite=False``, > 0 if
    ``positive``), or None when allowed."""
    if value is None and allow_none:
        return None
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a number, got {value!r}")
    v = float(value)
    if math.isnan(v) or (finite and math.isinf(v)) or (positive and not v > 0):
        raise ValueError(f"{name} must be a {'positive' if positive else 'finite'} number, "
                         f"got {value!r}")
    return v


def check_int(value: Any, name: str, *, lo: int | None = None, hi: int | None = None,
              allow_none: bool = False) -> int | None:
    """``value`` as an int in [lo, hi] (bounds optional), or None when allowed."""
    if value is None and allow_none:
        return None
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an integer, got {value!r}")
    v = int(value)
    if (lo is not None and v < lo) or (hi is not None and v > hi):
        where = f">= {lo}" if hi is None else f"in {lo}..{hi}" if lo is not None else f"<= {hi}"
        raise ValueError(f"{name} must be {where}, got {v}")
    return v


def check_positive_int(value: Any, name: str, allow_none: bool = False) -> int | None:
    """A positive int (``None`` passes when ``allow_none``), else an error naming ``name``."""
    if value is None and allow_none:
        return None
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 1:
        raise ValueError(f"{name} must be a positive integer, got {value!r}")
    return int(value)


def check_epsilon(epsilon: Any) -> float:
    """A DP budget: a positive number, or inf (no noise: evaluation only)."""
    if isinstance(epsilon, bool) or not isinstance(epsilon, numbers.Real):
        raise TypeError(f"epsilon must be a positive number or inf, got {epsilon!r}")
    eps = float(epsilon)
    if math.isnan(eps) or eps <= 0:
        raise ValueError(f"epsilon must be > 0 (or inf for no noise), got {epsilon}")
    return eps


def check_fraction(value: Any, name: str, *, allow_none: bool = False) -> float | None:
    """A number strictly between 0 and 1 (or None when allowed)."""
    if value is None and allow_none:
        return None
    v = check_real(value, name)
    assert v is not None
    if not 0 < v < 1:
        raise ValueError(f"{name} must be in (0, 1), got {value}")
    return v


def check_seed(seed: Any) -> int | str | None:
    """A run's seed: None (fresh randomness), a str or an int; TypeError otherwise."""
    if seed is None or isinstance(seed, str):
        return seed
    if isinstance(seed, bool) or not isinstance(seed, numbers.Integral):
        raise TypeError(f"seed must be an int, a str or None, got {type(seed).__name__}")
    return int(seed)


def check_groups(spec: Any) -> None:
    """TypeError unless every group field of ``spec`` holds its group (``spec.GROUPS``: field
    name -> group type)."""
    for name, group in spec.GROUPS.items():
        value = getattr(spec, name)
        if not isinstance(value, group):
            raise TypeError(f"{name} must be a {group.__name__}, got {type(value).__name__}")


def set_field(spec: Any, name: str, value: Any) -> None:
    """Set a field of a frozen spec (its ``__post_init__`` storing a normalized value)."""
    object.__setattr__(spec, name, value)


def name_kernel(spec: Any, kern: Any) -> None:
    """Store ``spec.kernel`` by its registered name when ``kern`` is registered (serializable,
    equal to itself); an unregistered kernel object stays as given."""
    from .. import kernels

    if kernels.registered(kern):
        set_field(spec, "kernel", kern.name)

