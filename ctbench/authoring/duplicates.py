"""Two tasks on one network with the same gold answer: likely a copy that was never changed.

A benchmark that counts the same fault twice weighs it twice and lets an agent that memorised one
task solve the other; the paper's tasks are distinct cases. It is a warning, not an error: two
different symptoms can share one root cause on purpose, and the author says so by keeping both.
Validating a selection still compares it with every task of the set, since the copy is usually
the one not being edited.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from ctbench.errors import CtbError
from ctbench.store import TaskRef

if TYPE_CHECKING:
    from ctbench.authoring.validate import Validator


def _gold_key(v: Validator, ref: TaskRef) -> tuple[str, str, tuple[str, ...]] | None:
    """(network, family, sorted gold lines) of a task the validator did not check (None if unreadable)."""
    try:
        task = v.ts.load_task(ref)
        hidden = v.ts.load_hidden(ref)
    except CtbError:
        return None
    return task.network, ref.family.value, tuple(sorted(hidden.gold_answer_lines(ref.family)))


def warn_duplicate_gold(v: Validator, selected: Sequence[TaskRef], all_refs: Sequence[TaskRef]) -> None:
    """Add a ``duplicate-gold`` warning to each selected task whose gold another task on its network shares."""
    from ctbench.authoring.validate import _Ctx

    keys = dict(v.golds)
    wanted = [r for r in selected if r.id in keys and keys[r.id][2]]
    if not wanted:
        return
    networks = {keys[r.id][0] for r in wanted}
    for ref in all_refs:
        if ref.id not in keys:
            key = _gold_key(v, ref)
            if key is not None and key[0] in networks:
                keys[ref.id] = key
    by_key: dict[tuple[str, str, tuple[str, ...]], list[str]] = {}
    for task_id, key in keys.items():
        if key[2]:
            by_key.setdefault(key, []).append(task_id)
    for ref in wanted:
        others = sorted(t for t in by_key.get(keys[ref.id], []) if t != ref.id)
        if not others:
            continue
        ctx = _Ctx(v.report, v.ts.root, ref.hidden_file, ref.id)
        ctx.warn("duplicate-gold", f"the gold answer is the same as {', '.join(others)} on network "
                                   f"{keys[ref.id][0]}: a copied task? (fine if the symptoms differ on purpose)",
                 loc=["answer"], expected="a root cause or path no other task on this network has")
        ctx.flush()
