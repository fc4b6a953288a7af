"""App-wide messages: what one screen tells the app so that the others can catch up."""

from __future__ import annotations

from dataclasses import dataclass

from textual.message import Message


@dataclass
class TaskSaved(Message):
    """A task folder was written (and committed when ``commit`` is set); its list row is stale."""

    task_id: str
    commit: str | None = None


@dataclass
class TaskDeleted(Message):
    """A task folder was removed."""

    task_id: str
