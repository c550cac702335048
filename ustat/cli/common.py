"""Shared pieces of the ``ustat`` command line: the user-error type, warnings, small parsers."""

from __future__ import annotations

import argparse
import math
import sys
from collections.abc import Callable, Iterable
from typing import NoReturn, TypeVar

from ..data.records import check_memory, split_list
from ..reports.common import API_FLAGS, cli_words, strip_warning

T = TypeVar("T")

__all__ = [
    "API_FLAGS",
    "EPSILON_RANGE",
    "Parser",
    "UsageError",
    "check_csv_flags",
    "check_epsilon_option",
    "check_memory",
    "cli_words",
    "error_text",
    "flagged",
    "float_arg",
    "installed",
    "int_arg",
    "progress",
    "require_extra",
    "split_list",
    "strip_warning",
    "warn",
    "with_flag_names",
]


class UsageError(Exception):
    """A user mistake: reported in one line, exit status 2."""


def warn(msg: str) -> None:
    print(f"ustat: warning: {strip_warning(msg)}", file=sys.stderr)


def progress(args: argparse.Namespace, msg: str) -> None:
    """One line of progress on stderr (``ustat: ...``), unless ``--no-progress``."""
    if not getattr(args, "no_progress", False):
        print(f"ustat: {msg}", file=sys.stderr, flush=True)


def float_arg(text: str) -> float:
    try:
        return float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None


def integral(text: str) -> int | None:
    """The integer ``text`` writes: ``1000``, or a number with an exponent that is an integer
    (``1e6``, ``2.5e3``); None for anything else (``1.5``, ``abc``, ``inf``)."""
    text = str(text).strip()
    try:
        return int(text)
    except ValueError:
        pass
    try:
        v = float(text)
    except ValueError:
        return None
    if not (math.isfinite(v) and v == int(v)):
        return None
    return int(v)


def int_arg(text: str) -> int:
    """An integer option: ``1000``, or a number written with an exponent that is an integer
    (``1e6``); ``1.5`` or ``abc`` is refused naming the value."""
    v = integral(text)
    if v is None:
        raise argparse.ArgumentTypeError(f"not an integer: {text!r}")
    return v


class Parser(argparse.ArgumentParser):
    """argparse with the CLI's error convention: a mistake is one line (``ustat: error: ...``,
    exit status 2, raised as :class:`UsageError`) pointing at ``--help``, not a usage block."""

    def error(self, message: str) -> NoReturn:
        raise UsageError(f"{message} (see `{self.prog} --help`)")


#: Epsilons the commands accept: below, the noise swamps any 64-bit encoding and the exact
#: samplers' rational scales; above, the noise is below their resolution (use ``inf``).
EPSILON_RANGE = (1e-6, 1e8)


def check_epsilon_option(eps: float) -> float:
    """``--epsilon`` > 0 within :data:`EPSILON_RANGE`, or inf (no noise, with a warning)."""
    lo, hi = EPSILON_RANGE
    if math.isnan(eps) or eps <= 0:
        raise UsageError(f"--epsilon must be > 0 (or inf), got {eps}")
    if math.isinf(eps):
        return eps
    if eps < lo:
        raise UsageError(f"--epsilon {eps:g} is below {lo:g}: its noise would not fit a 64-bit "
                         f"encoding or the exact samplers; use --epsilon {lo:g} or more")
    if eps > hi:
        raise UsageError(f"--epsilon {eps:g} is above {hi:g}: its noise would be below the exact "
                         f"samplers' resolution; use --epsilon {hi:g} or less, or --epsilon inf "
                         f"for no noise (not private)")
    return eps


def installed(module: str) -> bool:
    """Whether ``module`` can be imported (an optional extra), without importing it."""
    import importlib.util

    if module in sys.modules:
        return sys.modules[module] is not None
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


def require_extra(flag: str, modules: Iterable[str], extra: str) -> None:
    """UsageError naming the extra to install when ``flag`` needs a module that is missing."""
    missing = [m for m in modules if not installed(m)]
    if missing:
        raise UsageError(f"{flag} needs {', '.join(missing)}, which is not installed: pip install "
                         f"'ustat-mpc[{extra}]' (or run without {flag})")


#: (flag, attribute, value when not given) of options that only describe a --csv file.
CSV_FLAGS = (("--sep", "sep", None), ("--no-header", "no_header", False),
             ("--encoding", "encoding", None))


def check_csv_flags(args: argparse.Namespace) -> None:
    """File-format options without ``--csv`` would be ignored: refused; then the encoding's
    default (UTF-8) is filled in."""
    if not hasattr(args, "csv"):
        return
    if args.csv is None:
        given = [flag for flag, key, unset in CSV_FLAGS if getattr(args, key, unset) != unset]
        if given:
            raise UsageError(f"{' and '.join(given)} describe{'s' if len(given) == 1 else ''} "
                             f"the --csv file, which is not given (the synthetic default has no "
                             f"file)")
    if getattr(args, "encoding", "") is None:
        args.encoding = "utf-8"


def error_text(exc: BaseException) -> str:
    """The one-line message of a user error, with command-line advice for data errors."""
    import re

    from ..data import DataError

    if isinstance(exc, DataError):
        return exc.for_cli()
    if isinstance(exc, UsageError):
        return str(exc)
    text = cli_words(str(exc))
    same = re.match(r"(--[\w-]+): (\1\b.*)", text, re.S)    # "--x: --x must ..." -> "--x must ..."
    return same.group(2) if same else text


def flagged(exc: Exception, flags: dict) -> UsageError | None:
    """A ValueError/TypeError about a keyword or spec field as a UsageError under its flag
    (``"pairs must be ..."`` -> ``"--pairs: pairs must be ..."``; ``flags``: name -> flag);
    None when the message starts with no known keyword."""
    import re

    msg = str(exc)
    match = re.match(r"[A-Za-z_]*", msg)
    word = match.group(0) if match else ""
    if word not in flags or msg.startswith("--"):
        return None
    text = cli_words(msg)
    return UsageError(text if text.startswith(flags[word]) else f"{flags[word]}: {text}")


def with_flag_names(run: Callable[[], T], flags: dict) -> Callable[[], T]:
    """run() with a ValueError/TypeError about a keyword reported under its command-line flag
    (:func:`flagged`); ``flags``: keyword -> flag."""
    def wrapped() -> T:
        try:
            return run()
        except (ValueError, TypeError) as exc:
            err = flagged(exc, flags)
            if err is None:
                raise
            raise err from None
    return wrapped


EXIT_CODES = """\
Exit status: 0 success; 2 a user mistake (bad option, data or parameter;
one line on stderr, no traceback); 130 interrupted (Ctrl-C); 143
terminated (SIGTERM); 141 the reader of stdout went away (e.g. `ustat
kernels | head`)."""
