"""Errors that reach a user as a message, never as a traceback."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pydantic import ValidationError


class CtbError(Exception):
    """A problem the user can fix; the CLI prints it and exits with ``exit_code``."""

    exit_code: int = 1

    def __init__(self, message: str, *, exit_code: int | None = None) -> None:
        super().__init__(message)
        if exit_code is not None:
            self.exit_code = exit_code


class TaskDefinitionError(CtbError):
    """A task that cannot be run as written: its network is unknown or broken, its files do not load,
    its id is used twice. The task's fault, not the agent's nor the infrastructure's: a runner
    records it as its own outcome and never retries it (retrying cannot fix a file)."""

    def __init__(self, message: str, *, task_id: str | None = None, exit_code: int | None = None) -> None:
        super().__init__(message, exit_code=exit_code)
        self.task_id = task_id


def validation_message(exc: ValidationError, default_loc: str) -> str:
    """The first problem of a pydantic validation error as one ``loc: msg`` line.

    A user fixes one field at a time, and a wall of pydantic output buries the one that matters;
    every reader of a YAML or JSON model reports the first error the same way. ``default_loc`` names
    the whole document when the error is at its root (an empty ``loc``); pass ``""`` to give just
    the message then.
    """
    first = exc.errors()[0]
    loc = ".".join(str(p) for p in first["loc"]) or default_loc
    return f"{loc}: {first['msg']}" if loc else str(first["msg"])
