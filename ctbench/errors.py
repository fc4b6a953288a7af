"""Errors that reach a user as a message, never as a traceback."""

from __future__ import annotations


class CtbError(Exception):
    """A problem the user can fix; the CLI prints it and exits with ``exit_code``."""

    exit_code: int = 1

    def __init__(self, message: str, *, exit_code: int | None = None) -> None:
        super().__init__(message)
        if exit_code is not None:
            self.exit_code = exit_code
