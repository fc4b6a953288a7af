"""Editing a plug-in family's gold as answer lines, the way an agent writes its answer.

A plug-in family's gold sits in ``hidden.yaml`` under the family's name (``answer: {<family>: [...]}``)
as plain YAML only the family reads. The app's answer section and ``ctb-author set-answer --line``
show and take it as answer lines: each line goes through the family's own parser (a line it refuses
is named with its number and the reason), and the family turns the lines into the items stored
(:mod:`ctbench.scoring.gold_lines`, with defaults for a family that says nothing). The built-in
families keep their own editors (:mod:`.editing`, :mod:`.links_editing`). Kept apart from
:mod:`.editing` so that no edit there names a plug-in; :class:`~ctbench.authoring.editing.EditSession`
takes these methods as a mixin.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from ctbench.authoring.working_copy import STATEMENT_TEMPLATES, EditError
from ctbench.model import BUILTIN_FAMILIES, Family, Network
from ctbench.scoring.families import families
from ctbench.scoring.gold_lines import GoldLinesError, answer_reader, gold_from_lines, gold_to_lines

if TYPE_CHECKING:
    from ctbench.authoring.working_copy import TaskDraft
    from ctbench.scoring.judge import AnswerReader
    from ctbench.store import TaskSet


def statement_template(family: Family) -> str:
    """The statement a new task starts from: a built-in's own, else one stating the plug-in family's
    answer format (what its prompt tells the agent)."""
    if family in STATEMENT_TEMPLATES:
        return STATEMENT_TEMPLATES[family]
    kind = families().get(family.value)
    title = kind.title if kind is not None else family.value
    answer = kind.answer_format if kind is not None else "as the family's answer format says"
    return (
        f"Describe what is observed, where and by whom ({title}).\n"
        "You may run display/show commands on the network devices.\n"
        "\n"
        f"Answer with {answer}\n"
    )


class PluginAnswerEditing:
    """Answer-line editing for :class:`~ctbench.authoring.editing.EditSession` (which provides the
    attributes below)."""

    if TYPE_CHECKING:
        ts: TaskSet
        draft: TaskDraft

        @property
        def network(self) -> Network: ...
        @property
        def family(self) -> Family: ...
        @property
        def task_id(self) -> str: ...
        def _note(self, text: str) -> None: ...
        def _set_answer(self, **update: object) -> None: ...

    @property
    def answers_in_lines(self) -> bool:
        """Whether the task's gold is edited as answer lines (a plug-in family's task)."""
        return self.family.value not in BUILTIN_FAMILIES

    def _reader(self) -> AnswerReader:
        if not self.answers_in_lines:
            flag = {"rca": "--rca", "path": "--path", "topology": "--link"}[self.family.value]
            raise EditError(
                f"{self.task_id} is a {self.family.value} task: its answer is set with {flag}, not as "
                "answer lines (those are for plug-in families)"
            )
        try:
            return answer_reader(self.ts, self.family.value, self.network)
        except EditError:
            raise
        except Exception as exc:  # no such family installed, a plug-in that does not load
            raise EditError(f"{self.task_id}: {exc}") from None

    def answer_format(self) -> str:
        """How the family's answer lines are written (what the prompt tells the agent)."""
        return self._reader().kind.answer_format

    def answer_lines(self) -> list[str]:
        """The gold as answer lines, in the family's spelling (empty when there is none yet)."""
        return gold_to_lines(self._reader(), self.draft.hidden.answer)

    def _stored(self, lines: Sequence[str]) -> list[object]:
        try:
            return gold_from_lines(self._reader(), lines)
        except GoldLinesError as exc:
            raise EditError(f"{self.task_id}: {exc}") from None

    def _set_lines(self, stored: list[object]) -> list[str]:
        self._set_answer(**{self.family.value: stored})
        return self.answer_lines()

    def set_answer_lines(self, lines: Sequence[str]) -> list[str]:
        """Replace the gold with ``lines``; returns the gold as the family now writes it."""
        shown = self._set_lines(self._stored(lines))
        self._note("set the gold answer: " + "; ".join(shown))
        return shown

    def add_answer_line(self, line: str) -> list[str]:
        """Add one answer line (refused when the gold has its entry already)."""
        before = self.answer_lines()
        stored = self._stored([*before, line])
        if len(stored) <= len(before):
            raise EditError(f"{line.strip()!r} is already in the answer")
        shown = self._set_lines(stored)
        self._note(f"added answer line {line.strip()}")
        return shown

    def remove_answer_line(self, index: int) -> str:
        """Remove the ``index``-th answer line (as :meth:`answer_lines` lists them)."""
        current = self.answer_lines()
        if not 0 <= index < len(current):
            raise EditError(f"there is no answer line {index + 1}")
        gone = current.pop(index)
        # the last one gone: no gold yet (validation says a task needs one)
        self._set_lines(self._stored(current) if current else [])
        self._note(f"removed answer line {gone}")
        return gone
