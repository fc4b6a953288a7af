"""Merging a working copy with what another tool saved meanwhile, item by item, dropping nothing silently.

An author edits a task in the app while ``ctb-author import-capture`` (or a colleague's pull, or
``ctb-author add-golden``) changes the same task on disk. Overwriting with the working copy would drop
what the other tool added. Instead, each part of the task is compared three ways, against the version
the author started from (the *base*):

- changed on disk only: the disk's version is taken (a recording the importer added, a golden action);
- changed in the working copy only: the author's version stays;
- changed on both sides, differently: a *conflict*, shown side by side, resolved by a choice per item.

Recordings and golden actions are merged one by one (keyed by device and command); the other parts
(statement, title, network, answer, metadata...) field by field. Without a base (a draft recovered
after a crash) every difference is a conflict, except items only on disk that the author did not
remove, which are kept: they are what another tool added.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Literal, TypeVar

from ctbench.authoring.working_copy import TaskDraft, files_digest
from ctbench.model import GoldenAction, HiddenSpec, Recording, TaskSpec
from ctbench.store import TaskSet

Side = Literal["mine", "disk"]

TASK_FIELDS = ("title", "statement", "network", "accessible", "status", "authors", "tags", "canary")
"""Parts of ``task.yaml`` merged as a whole (recordings are merged one by one)."""

HIDDEN_FIELDS = ("answer", "metadata", "rationale", "canary")
"""Parts of ``hidden.yaml`` merged as a whole (golden actions are merged one by one)."""


@dataclass(frozen=True)
class Conflict:
    """One part both sides changed differently: ``mine`` and ``disk`` are short texts to show."""

    key: str
    what: str
    mine: str
    disk: str


@dataclass
class MergePlan:
    """What a merge keeps on its own (``kept``: human-readable lines) and what needs a choice."""

    kept: list[str] = field(default_factory=list)
    conflicts: list[Conflict] = field(default_factory=list)
    _apply: dict[str, Callable[[Side], None]] = field(default_factory=dict, repr=False)
    _auto: list[Callable[[], None]] = field(default_factory=list, repr=False)
    _finish: list[Callable[[], None]] = field(default_factory=list, repr=False)
    disk_task: TaskSpec | None = None
    disk_hidden: HiddenSpec | None = None
    disk_digest: str = ""

    def apply(self, choices: dict[str, Side] | None = None) -> None:
        """Change the working copy: automatic merges, then each conflict as chosen (default: mine)."""
        choices = choices or {}
        for step in self._auto:
            step()
        for conflict in self.conflicts:
            self._apply[conflict.key](choices.get(conflict.key, "mine"))
        for step in self._finish:
            step()


def _short(value: object, width: int = 200) -> str:
    if isinstance(value, Recording):
        return f"{value.device}: {value.command} -> {value.file}"
    if isinstance(value, GoldenAction):
        return f"{value.device}: {value.command}" + (f" (why: {value.why})" if value.why else "")
    if hasattr(value, "model_dump"):
        text = str(value.model_dump(mode="json", exclude_none=True))
    elif value is None:
        text = "(none)"
    else:
        text = str(value)
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 1] + "…"


T = TypeVar("T", Recording, GoldenAction)


def _merge_items(
    plan: MergePlan,
    kind: str,
    base: Sequence[T] | None,
    mine: list[T],
    disk: Sequence[T],
    removed_by_me: Callable[[T], bool],
) -> None:
    """Three-way merge of a list keyed by (device, command); ``mine`` is changed in place on apply."""
    base_by = {x.key: x for x in base} if base is not None else None
    disk_by = {x.key: x for x in disk}
    keys = list(dict.fromkeys([*(x.key for x in mine), *(x.key for x in disk)]))
    for key in keys:
        m = next((x for x in mine if x.key == key), None)
        d = disk_by.get(key)
        b = base_by.get(key) if base_by is not None else None
        label = f"{kind} {key[0]}: {key[1]}"
        if m == d:
            continue
        if base_by is not None and d == b:
            continue  # only I changed it
        if m is None and d is not None:
            if (base_by is not None and b is None) or (base_by is None and not removed_by_me(d)):
                plan.kept.append(f"kept {label} (added on disk)")
                plan._auto.append(partial(mine.append, d))
                continue
        if base_by is not None and m == b:  # only the disk changed it (or removed it)
            if d is None:
                plan.kept.append(f"removed {label} (removed on disk)")
                plan._auto.append(partial(_drop, mine, key))
            else:
                plan.kept.append(f"took {label} as changed on disk")
                plan._auto.append(partial(_put, mine, key, d))
            continue
        conflict = Conflict(f"{kind}:{key[0]}:{key[1]}", label, _short(m), _short(d))
        plan.conflicts.append(conflict)
        plan._apply[conflict.key] = partial(_choose_item, mine, key, d)


def _choose_item(items: list[T], key: tuple[str, str], disk: T | None, side: Side) -> None:
    if side == "disk":
        if disk is None:
            _drop(items, key)
        else:
            _put(items, key, disk)


def _drop(items: list[T], key: tuple[str, str]) -> None:
    items[:] = [x for x in items if x.key != key]


def _put(items: list[T], key: tuple[str, str], value: T) -> None:
    for i, x in enumerate(items):
        if x.key == key:
            items[i] = value
            return
    items.append(value)


def _merge_fields(
    plan: MergePlan,
    where: str,
    names: Sequence[str],
    base: object | None,
    disk: object,
    get_mine: Callable[[], object],
    set_mine: Callable[[str, object], None],
) -> None:
    for name in names:
        m, d = getattr(get_mine(), name), getattr(disk, name)
        if m == d:
            continue
        b = getattr(base, name) if base is not None else None
        if base is not None and d == b:
            continue
        if base is not None and m == b:
            plan.kept.append(f"took {name} as changed on disk")
            plan._auto.append(partial(set_mine, name, d))
            continue
        conflict = Conflict(f"{where}:{name}", name, _short(m), _short(d))
        plan.conflicts.append(conflict)
        plan._apply[conflict.key] = partial(_choose_field, set_mine, name, d)


def _choose_field(set_mine: Callable[[str, object], None], name: str, disk: object, side: Side) -> None:
    if side == "disk":
        set_mine(name, disk)


def plan_merge(ts: TaskSet, draft: TaskDraft, base: tuple[TaskSpec, HiddenSpec] | None) -> MergePlan:
    """How ``draft`` (changed in place by :meth:`MergePlan.apply`) merges with the task as now on disk."""
    ref = ts.ref(draft.id)
    disk_task, disk_hidden = ts.load_task(ref), ts.load_hidden(ref)
    base_task, base_hidden = base if base is not None else (None, None)
    plan = MergePlan(disk_task=disk_task, disk_hidden=disk_hidden, disk_digest=files_digest(ref.path))
    recordings = list(draft.task.recordings)
    golden = list(draft.hidden.golden_actions)
    _merge_items(
        plan,
        "recording",
        base_task.recordings if base_task is not None else None,
        recordings,
        disk_task.recordings,
        lambda r: r.file in draft.removed_files,
    )
    _merge_items(
        plan,
        "golden action",
        base_hidden.golden_actions if base_hidden is not None else None,
        golden,
        disk_hidden.golden_actions,
        lambda g: False,
    )

    def set_task(name: str, value: object) -> None:
        if name == "statement":
            draft.statement = str(value)
        draft.task = draft.task.model_copy(update={name: value})

    def set_hidden(name: str, value: object) -> None:
        draft.hidden = draft.hidden.model_copy(update={name: value})

    _merge_fields(plan, "task", TASK_FIELDS, base_task, disk_task, draft.spec, set_task)
    _merge_fields(plan, "hidden", HIDDEN_FIELDS, base_hidden, disk_hidden, lambda: draft.hidden, set_hidden)

    def finish() -> None:
        draft.task = draft.task.model_copy(update={"recordings": recordings})
        draft.hidden = draft.hidden.model_copy(update={"golden_actions": golden})
        draft.base_digest = plan.disk_digest  # what is on disk now is what this copy builds on
        n = len(plan.kept) + len(plan.conflicts)
        draft.changes.append(f"merged with the version on disk ({n} part(s) changed there)")

    plan._finish.append(finish)
    return plan
