"""Shared pieces of the ``ustat`` command line: the user-error type, warnings, small parsers."""

from __future__ import annotations

import argparse
import sys

__all__ = ["UsageError", "warn", "float_arg", "split_list", "error_text", "strip_warning",
           "with_flag_names", "cli_words", "API_FLAGS"]


class UsageError(Exception):
    """A user mistake: reported in one line, exit status 2."""


def strip_warning(msg: str) -> str:
    """The text without leading "warning:" prefixes (the CLI adds exactly one)."""
    text = str(msg).strip()
    while text.lower().startswith("warning:"):
        text = text[len("warning:"):].lstrip()
    return text


def warn(msg: str):
    print(f"ustat: warning: {strip_warning(msg)}", file=sys.stderr)


def float_arg(text: str) -> float:
    try:
        return float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None


def split_list(text: str | None) -> list | None:
    return None if text is None else [c.strip() for c in text.split(",") if c.strip()]


def error_text(exc) -> str:
    """The one-line message of a user error, with command-line advice for data errors."""
    from ..data import DataError

    import re

    if isinstance(exc, DataError):
        return exc.for_cli()
    if isinstance(exc, UsageError):
        return str(exc)
    text = cli_words(str(exc))
    same = re.match(r"(--[\w-]+): (\1\b.*)", text, re.S)    # "--x: --x must ..." -> "--x must ..."
    return same.group(2) if same else text


def with_flag_names(run, flags: dict):
    """run() with a ValueError/TypeError about a keyword (``"pairs must be ..."``) reported
    under its command-line flag (``"--pairs: pairs must be ..."``); ``flags``: keyword -> flag."""
    def wrapped():
        try:
            return run()
        except (ValueError, TypeError) as exc:
            import re

            msg = str(exc)
            word = re.match(r"[A-Za-z_]*", msg).group(0)
            if word in flags and not msg.startswith("--"):
                text = cli_words(msg)
                if not text.startswith(flags[word]):
                    text = f"{flags[word]}: {text}"
                raise UsageError(text) from None
            raise
    return wrapped


#: Python keywords of run_umpc / run_protocol and the command-line flags that set them.
API_FLAGS = {"aux_epsilon_fraction": "--aux-epsilon-fraction", "max_colluders": "--max-colluders",
             "committee_size": "--committee-size", "noise_bits": "--noise-bits",
             "frac_bits": "--frac-bits", "input_frac_bits": "--frac-bits",
             "threat_model": "--threat-model", "f_h": "--honest-fraction"}


def cli_words(text: str) -> str:
    """A message of the Python layer with its keyword names replaced by the CLI flags."""
    import re

    return re.sub(r"\b(" + "|".join(map(re.escape, API_FLAGS)) + r")\b(=\.\.\.)?",
                  lambda m: API_FLAGS[m.group(1)], text)
