"""The SDK's errors: `PeriError` (a run that cannot start or a client misused) and
`OptionError` (a `PeriOptions` field refused when the options are built)."""

from __future__ import annotations


class PeriError(Exception):
    """A run that cannot start, or a client used wrongly: one line for the user; `exit_code`
    as `peri -p` would exit (2: bad usage, e.g. an unknown session id; 1: anything else)."""

    def __init__(self, message: str, exit_code: int = 1, session_id: str = "") -> None:
        super().__init__(message)
        self.exit_code = exit_code
        self.session_id = session_id


class OptionError(PeriError, ValueError):
    """A bad `PeriOptions` value, refused when the options are built; `option` names the
    field. Both a `PeriError` (exit code 2, bad usage) and a `ValueError`."""

    def __init__(self, option: str, message: str) -> None:
        super().__init__(f"PeriOptions.{option}: {message}", 2)
        self.option = option
