"""Errors and remarks about data, with advice for the Python API and for the command line.

:class:`DataError` (a ``ValueError``) and :class:`Remark` (a warning string)
carry two hints: ``str()`` gives the Python API advice, ``for_cli()`` the
command-line flag. Part of :mod:`ustat.data`.
"""

from __future__ import annotations

__all__ = ["DataError", "Remark"]


class DataError(ValueError):
    """A problem with the data or its description, with advice for each interface.

    ``str(err)`` is the message with the Python API advice (``api_hint``);
    :meth:`for_cli` gives it with the command-line advice instead. ``kind``
    names the problem (``"non-numeric"``, ``"bounds"``, ``"label"``, ...) and
    ``column`` the column, so a caller can add its own advice.
    """

    def __init__(self, message: str, *, api_hint: str = "", cli_hint: str = "",
                 kind: str = "", column: str | None = None) -> None:
        super().__init__(message + (f" ({api_hint})" if api_hint else ""))
        self.message, self.api_hint, self.cli_hint = message, api_hint, cli_hint
        self.kind, self.column = kind, column

    def for_cli(self, hint: str | None = None) -> str:
        h = self.cli_hint if hint is None else hint
        return self.message + (f" ({h})" if h else "")


class Remark(str):
    """A warning text (``str``: with the Python API advice) that also has :meth:`for_cli`."""

    message: str
    cli_hint: str

    def __new__(cls, message: str, api_hint: str = "", cli_hint: str = "") -> Remark:
        obj = super().__new__(cls, message + (f" ({api_hint})" if api_hint else ""))
        obj.message, obj.cli_hint = message, cli_hint
        return obj

    def for_cli(self) -> str:
        return self.message + (f" ({self.cli_hint})" if self.cli_hint else "")
