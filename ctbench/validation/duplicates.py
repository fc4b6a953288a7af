"""Two tasks on one network with the same gold answer: likely a copy that was never changed.

A benchmark that counts the same fault twice weighs it twice and lets an agent that memorised one
task solve the other; the paper's tasks are distinct cases. It is a warning, not an error: two
different symptoms can share one root cause on purpose, and the author says so by keeping both.
Validating a selection still compares it with every task of the set, since the copy is usually
the one not being edited.
"""

from __future__ import annotations

from collections.abc import Sequence

from ctbench.errors import CtbError
from ctbench.store import TaskRef, TaskSet

GoldKey = tuple[str, str, tuple[str, ...]]
"""(network, family, sorted gold lines)."""


def _gold_key(ts: TaskSet, ref: TaskRef) -> GoldKey | None:
    """The gold key of a task the validator did not check (None if unreadable)."""
    try:
        task = ts.load_task(ref)
        hidden = ts.load_hidden(ref)
    except CtbError:
        return None
    return task.network, ref.family.value, tuple(sorted(hidden.gold_answer_lines(ref.family)))


def duplicate_gold(
    ts: TaskSet, checked: dict[str, GoldKey], selected: Sequence[TaskRef], all_refs: Sequence[TaskRef]
) -> list[tuple[TaskRef, str, list[str]]]:
    """(task, network, other tasks) for each selected task whose gold another task on its network shares."""
    keys = dict(checked)
    wanted = [r for r in selected if r.id in keys and keys[r.id][2]]
    if not wanted:
        return []
    networks = {keys[r.id][0] for r in wanted}
    for ref in all_refs:
        if ref.id not in keys:
            key = _gold_key(ts, ref)
            if key is not None and key[0] in networks:
                keys[ref.id] = key
    by_key: dict[GoldKey, list[str]] = {}
    for task_id, key in keys.items():
        if key[2]:
            by_key.setdefault(key, []).append(task_id)
    out = []
    for ref in wanted:
        others = sorted(t for t in by_key.get(keys[ref.id], []) if t != ref.id)
        if others:
            out.append((ref, keys[ref.id][0], others))
    return out
