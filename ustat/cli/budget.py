"""``--budget-file``: every private release of every command charged to its data set's budget.

:func:`ustat.cli.main` gives each run a :class:`Charge` (``args.charge``).
A command reserves its (epsilon, delta) with :meth:`Charge.reserve` once its
data is read and before it computes anything. The charge learns when computing
starts: the executor of the flags (:func:`ustat.cli.specs.executor`) is
:meth:`Charge.watch`-ed, and a program starting on it marks the run started.
``main`` then settles the reservation (issue 37's rule: once any noise may have
been drawn, the run is charged, whatever happens next):

- the command returned: confirmed (the release's exact delta when it set one);
- it failed or was interrupted (Ctrl-C, or SIGTERM from the ``ustat`` command)
  *before* computing started, or the program refused from its public
  parameters or input checks before drawing noise
  (:func:`ustat.executors.refusal`): given back;
- it failed or was interrupted *after* computing started (a noisy class size
  <= 0 in ``roc``, a plot that cannot be written, Ctrl-C during the protocol):
  confirmed, with its reserved delta, and a warning says so.

The data set is recognised by its parsed content (:mod:`ustat.data.identity`),
delta is charged as well as epsilon, and the budget adds up by basic
composition (:mod:`noise.budget_file`).

The budget is record-level: :func:`check_options` refuses, before anything is
read, what it cannot charge: ``--epsilon inf`` and ``--evaluate`` (an exact
statistic), and a ``--protocol`` whose registry row
(:data:`ustat.baselines.registry.PROTOCOLS`) declares a weaker privacy unit: a
label-DP ``dp_model`` (scores in the clear) or public columns
(``processes.public_columns``, e.g. bell-auc's labels).
"""

from __future__ import annotations

import argparse
import math
import os
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ..executors import Executor, is_refusal
from .common import UsageError, float_arg

if TYPE_CHECKING:
    from noise.budget_file import BudgetFile, Reservation

    from ..executors import Program

__all__ = ["Charge", "budget_options", "check_options"]


def check_options(args: argparse.Namespace) -> None:
    """Flag combinations and the budget file's path, before anything is read or computed."""
    path = getattr(args, "budget_file", None)
    if not path:
        for flag, key in (("--budget-total", "budget_total"), ("--budget-delta", "budget_delta")):
            if getattr(args, key, None) is not None:
                raise UsageError(f"{flag} needs --budget-file")
        return
    if getattr(args, "csv", None) is None:
        raise UsageError("--budget-file needs --csv (a budget belongs to a data set)")
    if math.isinf(args.epsilon):
        raise UsageError("--epsilon inf is not private and cannot be charged to --budget-file")
    if getattr(args, "evaluate", False):
        raise UsageError("--evaluate prints the exact statistic, which is not private and cannot "
                         "be charged to --budget-file: drop one of them")
    why = _not_record_level(args)
    if why:
        raise UsageError(f"--protocol {args.protocol} is not record-level DP ({why}); a "
                         "--budget-file budget is record-level (it protects whole records), so "
                         "this release cannot be charged to it: run it without --budget-file")
    if os.path.isdir(path):
        raise UsageError(f"--budget-file {path} is a directory; give a file path such as "
                         f"{os.path.join(path, 'budget.json')}")
    parent = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(parent):
        raise UsageError(f"--budget-file {path}: directory {parent} does not exist")
    total, delta = getattr(args, "budget_total", None), getattr(args, "budget_delta", None)
    if total is not None and not 0 < total < math.inf:
        raise UsageError(f"--budget-total must be > 0 and finite, got {total}")
    if delta is not None and not 0 <= delta < 1:
        raise UsageError(f"--budget-delta must be in [0, 1), got {delta}")


def _protocol(args: argparse.Namespace):
    """The registry row of ``--protocol`` (None: not an ``estimate`` run, or an unknown name,
    which :func:`ustat.cli.protocols.check` refuses)."""
    name = getattr(args, "protocol", None)
    if not isinstance(name, str):
        return None
    from ..baselines import registry

    return registry.PROTOCOLS.get(name)


def _not_record_level(args: argparse.Namespace) -> str | None:
    """Why the release of ``--protocol`` is not record-level DP, from what its registry row
    declares (``dp_model``, ``processes.public_columns``), or None when it is."""
    info = _protocol(args)
    if info is None:
        return None
    if info.dp_model.startswith("label"):
        return (f"it is label-DP, dp_model {info.dp_model}: only the labels are protected, the "
                "scores reach the server in the clear")
    public = info.processes.public_columns
    if public:
        names = [c.strip() for c in (getattr(args, "columns", None) or "").split(",")]
        cols = ", ".join(names[i] if i < len(names) and names[i] else f"#{i + 1}"
                         for i in public)
        return (f"it treats column{'s' if len(public) > 1 else ''} {cols} as public: sent in the "
                "clear, unprotected")
    return None


class Charge:
    """One run's spend in ``--budget-file`` (nothing without the flag). ``started``: whether
    computing started (:meth:`watch`), after which the run is charged whatever happens."""

    def __init__(self, args: argparse.Namespace):
        self.args = args
        self.file: BudgetFile | None = None
        self.reservation: Reservation | None = None
        self.actual_delta: float | None = None
        self.started = False

    def watch(self, executor: Executor) -> Executor:
        """``executor``, marking this run started when a program starts on it (and not
        started again when the program refuses before computing: :func:`ustat.executors.
        refusal`); ``executor`` itself without ``--budget-file`` (nothing to charge)."""
        if not getattr(self.args, "budget_file", None):
            return executor
        return _Watched(executor, self)

    def reserve(self, columns: Sequence[str], *, epsilon: float, delta: float = 0.0, label: str,
                details: dict | None = None) -> Reservation | None:
        """Reserve (epsilon, delta) on the data set of ``--csv`` (``columns``: the ones read);
        a no-op without ``--budget-file``. Refused (UsageError) when it would overspend."""
        args = self.args
        check_options(args)
        if not getattr(args, "budget_file", None):
            return None
        from ..data import dataset_identity

        ident = dataset_identity(args.csv, columns, sep=args.sep, header=not args.no_header,
                                 encoding=args.encoding)
        info = {"command": args.command, "columns": list(columns), **(details or {}),
                "path": ident.description["path"]}
        return self.reserve_keys(ident.keys, epsilon=epsilon, delta=delta, label=label,
                                 details=info, description=ident.description)

    def reserve_keys(self, keys: Sequence[str], *, epsilon: float, delta: float, label: str,
                     details: dict | None = None,
                     description: dict | None = None) -> Reservation | None:
        """Reserve (epsilon, delta) on the data set named by ``keys`` (a deployment's
        commitments, :mod:`ustat.deploy.budget`) in ``--budget-file``; UsageError when it
        would overspend."""
        args = self.args
        if not getattr(args, "budget_file", None):
            return None
        from noise.budget_file import DEFAULT_TOTAL_DELTA, BudgetFile

        self.file = BudgetFile(args.budget_file)
        try:
            self.reservation = self.file.reserve(
                list(keys), epsilon, delta, total=getattr(args, "budget_total", None),
                total_delta=getattr(args, "budget_delta", None),
                default_total_delta=DEFAULT_TOTAL_DELTA, label=label, details=details or {},
                description=description or {})
        except ValueError as exc:
            raise UsageError(_budget_hint(exc, delta, _protocol(args))) from None
        return self.reservation

    def settle(self, ok: bool) -> bool:
        """Confirm the reservation (with the run's exact delta when it set one) when the run
        succeeded or stopped after computing started, else cancel it; whether a run that did
        not succeed was charged."""
        file, reservation = self.file, self.reservation
        if reservation is None:
            return False
        assert file is not None                 # reserve() opened it
        if ok or self.started:
            file.confirm(reservation, delta=self.actual_delta if ok else None)
            return not ok
        file.cancel(reservation)
        return False

    def charged_text(self) -> str:
        """What a run that stopped after computing started spent (for the warning)."""
        r = self.reservation
        assert r is not None
        delta = f", delta {r.delta:.3g}" if r.delta else ""
        return (f"computing had started, so this run stays charged to --budget-file "
                f"{self.args.budget_file}: epsilon {r.epsilon:g}{delta} (spent {r.spent:g} of "
                f"{r.total:g})")

    def summary(self) -> dict | None:
        r = self.reservation
        if r is None:
            return None
        this_delta = r.delta if self.actual_delta is None else self.actual_delta
        spent_delta = r.spent_delta - r.delta + this_delta
        return {"file": self.args.budget_file, "total": r.total, "spent": r.spent,
                "this_run": r.epsilon, "remaining": r.remaining, "total_delta": r.total_delta,
                "spent_delta": spent_delta, "this_run_delta": this_delta,
                "remaining_delta": max(0.0, r.total_delta - spent_delta),
                "composition": "basic (epsilons add up, deltas add up)"}


class _Watched(Executor):
    """An executor whose :meth:`run` marks the charge started (:meth:`Charge.watch`)."""

    def __init__(self, inner: Executor, charge: Charge):
        self.inner, self.charge = inner, charge

    def run(self, program: Program) -> Any:
        self.charge.started = True
        try:
            return self.inner.run(program)
        except BaseException as exc:
            if is_refusal(exc):                 # refused before any noise: not started
                self.charge.started = False
            raise

    def describe(self) -> str:
        return self.inner.describe()


def _budget_hint(exc: ValueError, delta: float, info) -> str:
    """The budget file's refusal with what the user can do about it (``info``: the registry
    row of ``--protocol``; a protocol that takes ``delta`` is told to lower ``--delta``)."""
    text, what = str(exc), getattr(exc, "what", None)
    if what == "delta":
        left = getattr(exc, "remaining", 0.0)
        lower = ("" if info is None or info.option("delta") is None else
                 f"lower --delta ({left:.3g} left: --protocol {info.name}'s delta grows with it), "
                 "or ")
        return (f"{text} (this run spends delta {delta:.3g}; {lower}set a larger total with "
                "--budget-delta when the data set's budget is created)")
    if what == "epsilon":
        return f"{text} (ask for a smaller --epsilon, or release no more on this data set)"
    return text


def budget_options(p: argparse.ArgumentParser) -> None:
    """``--budget-total`` and ``--budget-delta`` (every private release; :mod:`.budget`)."""
    p.add_argument("--budget-total", type=float_arg, metavar="EPS",
                   help="the data set's total epsilon, required when --budget-file first sees it")
    p.add_argument("--budget-delta", type=float_arg, metavar="DELTA",
                   help="the data set's total delta, set when --budget-file first sees it "
                        "(default 1e-6); spends add up by basic composition")
