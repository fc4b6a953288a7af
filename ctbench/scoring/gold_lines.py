"""A plug-in family's gold as answer lines, and answer lines as its gold: what an author edits.

``hidden.yaml`` keeps a plug-in family's gold under the family's name as plain YAML
(``answer: {<family>: [...]}``) that only the family reads (:meth:`TaskFamily.gold`). The authoring
app's answer section and ``ctb-author set-answer --line`` let an author write that gold the way an agent
writes an answer, one answer line per entry, through two optional methods a family may provide:

``gold_from_lines(lines, *, node_names, resolve_label, normalize) -> list``
    The items to store under ``answer.<family>`` for these answer lines; raise :class:`GoldLinesError`
    (a plug-in takes it from :mod:`ctbench.plugins`) or ``ValueError`` naming what is wrong. **Default**: each line is read alone by the family's
    parser (a line it rejects, or that names what the task does not know, is named with its number and
    the reason), the entries of all the lines are written back with the family's ``lines`` (so the
    store holds one answer line per entry, in the family's spelling), and those are read back with
    ``gold`` and scored against the answer: unless that is exact, the family needs its own method.
``gold_to_lines(answer, *, normalize, resolve_label) -> list[str]``
    The stored gold as answer lines. **Default**: the family's ``lines`` of its ``gold`` (what the
    oracle writes and the reveal shows).

Neither is part of the :class:`~ctbench.scoring.families.TaskFamily` protocol's required members, so a
family written before them still provides it. The built-in families keep their own editors (pickers,
the path builder) and their own stored shapes; these functions are for plug-in families.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from ctbench.errors import CtbError
from ctbench.model import BUILTIN_FAMILIES, GoldAnswer, Network
from ctbench.scoring.families import families
from ctbench.scoring.judge import AnswerReader
from ctbench.scoring.parse import ParsedAnswer
from ctbench.store import TaskSet


class GoldLinesError(CtbError):
    """Answer lines that cannot be a family's gold; ``problems`` names each (by line where it can)."""

    def __init__(self, problems: Sequence[str]) -> None:
        self.problems = list(problems)
        super().__init__("; ".join(self.problems))


def _no_label(label: str) -> str | None:
    return None


def answer_reader(task_set: TaskSet, family: str, network: Network) -> AnswerReader:
    """How a plug-in family's answers are read on ``network``: its parser with the network's node
    names, the dialects' interface names and the taxonomy's labels (as the judge reads them)."""
    if family in BUILTIN_FAMILIES:
        raise CtbError(f"{family} is a built-in family: its gold has editors of its own")
    kind = families().get(family)
    if kind is None:
        raise CtbError(f"no task family {family!r} is installed")
    resolve: Callable[[str], str | None]
    try:
        resolve = task_set.taxonomy.resolve
    except CtbError:  # a broken taxonomy is validation's to report; the family then resolves nothing
        resolve = _no_label
    devices = network.device_map()
    return AnswerReader(
        family=family,
        node_names=tuple(devices),
        devices=devices,
        vendors=task_set.vendors,
        resolve_label=resolve,
        kind=kind,
    )


def gold_from_lines(reader: AnswerReader, lines: Sequence[str]) -> list[Any]:
    """The items to store under ``answer.<family>`` for ``lines`` (blank lines skipped); raises
    :class:`GoldLinesError` naming each line the family does not accept."""
    kind = reader.kind
    custom = getattr(kind, "gold_from_lines", None)
    if callable(custom):
        try:
            return list(
                custom(
                    list(lines),
                    node_names=reader.node_names,
                    resolve_label=reader.resolve_label,
                    normalize=reader.normalize,
                )
            )
        except GoldLinesError:
            raise
        except ValueError as exc:
            raise GoldLinesError([str(exc)]) from None
    problems: list[str] = []
    kept: list[str] = []
    for number, raw in enumerate(lines, 1):
        line = raw.strip()
        if not line:
            continue
        one = reader.parse(line)
        if one.status != "answered" or one.invalid_lines:
            problems.append(f"line {number} {line!r}: not an answer line (expected {kind.answer_format})")
        elif one.unresolved_lines:
            problems.append(f"line {number} {line!r}: {one.unresolved_lines[0][1]}")
        else:
            kept.append(line)
    if problems:
        raise GoldLinesError(problems)
    if not kept:
        raise GoldLinesError(["no answer line: the gold needs at least one"])
    parsed = reader.parse("\n".join(kept))
    stored = list(kind.lines(parsed))
    gold = kind.gold(
        GoldAnswer.model_validate({kind.name: stored}),
        normalize=reader.normalize,
        resolve_label=reader.resolve_label,
    )
    if not kind.score(gold, parsed).get("exact"):
        raise GoldLinesError(
            [
                f"the {kind.name} family does not read the lines it writes ({'; '.join(stored)}) back as "
                "this answer: it needs a gold_from_lines of its own (ctbench.scoring.gold_lines)"
            ]
        )
    return stored


def gold_to_lines(reader: AnswerReader, answer: GoldAnswer) -> list[str]:
    """The stored gold as answer lines, in the family's spelling and order; a gold the family cannot
    read is shown item by item as stored (validation names what is wrong with it)."""
    kind = reader.kind
    custom = getattr(kind, "gold_to_lines", None)
    try:
        if callable(custom):
            return [
                str(x) for x in custom(answer, normalize=reader.normalize, resolve_label=reader.resolve_label)
            ]
        gold = kind.gold(answer, normalize=reader.normalize, resolve_label=reader.resolve_label)
        return [str(x) for x in kind.lines(ParsedAnswer("answered", entries=gold, kind=kind.name))]
    except Exception:  # the plug-in's own code on a gold written by hand: shown, not a crash
        raw = answer.plugin(kind.name)
        return [str(x) for x in raw] if isinstance(raw, list) else []


__all__ = ["GoldLinesError", "answer_reader", "gold_from_lines", "gold_to_lines"]
