"""The ``--select`` language: which tasks of a task set a run (or an Inspect task) takes.

A selection expression is a list of terms separated by spaces or commas: task ids or globs
(``RCA-00*``), family names (``rca``, ``path``) and field filters ``key OP value`` (``OP`` one of
``= != < <= > >=``, ``|`` between alternatives) over task.yaml's visible fields and the metadata the
runner derives from hidden.yaml. Selection only picks; whether a picked task may run is the gate's
decision (:mod:`ctbench.approval.gate`). ``ctb-eval run --select``, sweeps and the Inspect bridge
(``-T select=...``) all read the language here, so it means the same in each.
"""

from __future__ import annotations

import fnmatch
import re
import shlex
from dataclasses import dataclass
from typing import Any

from ctbench.approval.gate import Skipped
from ctbench.errors import CtbError
from ctbench.model import Family, TaskSpec
from ctbench.store import TaskRef, TaskSet, set_relative

_FILTER = re.compile(r"^(?P<key>[A-Za-z_][A-Za-z0-9_-]*)\s*(?P<op>!=|<=|>=|=|<|>)\s*(?P<value>.*)$")

VISIBLE_KEYS: dict[str, str] = {
    "id": "id",
    "family": "family",
    "status": "status",
    "network": "network",
    "tag": "tags",
    "author": "authors",
}
"""Selectable fields of task.yaml: selection key -> attribute."""

METADATA_KEYS: dict[str, str] = {
    "observability": "observability",
    "category": "categories",
    "label": "labels",
    "golden_length": "golden_length",
    "tier": "golden_tier",
    "h_l": "h_l",
    "heterogeneity": "heterogeneity",
    "vendors": "vendors",
    "device_types": "device_types",
    "path_count": "path_count",
    "entries": "entries",
    "root_cause_count": "root_cause_count",
    "chain_length": "chain_length",
    "protocol_complexity": "protocol_complexity",
}
"""Selectable metadata (derived from hidden.yaml by the runner, never shown to agents)."""


@dataclass(frozen=True)
class _Filter:
    key: str
    op: str
    values: tuple[str, ...]

    def matches(self, actual: Any) -> bool:
        items = list(actual) if isinstance(actual, list | tuple | set | frozenset) else [actual]
        items = [i for i in items if i is not None]
        if self.op in ("=", "!="):
            hit = any(_equal(i, v) for i in items for v in self.values)
            return hit if self.op == "=" else not hit
        return any(_compare(i, self.op, v) for i in items for v in self.values)


def _equal(actual: Any, wanted: str) -> bool:
    text = str(actual.value if hasattr(actual, "value") else actual)
    return fnmatch.fnmatchcase(text.casefold(), wanted.casefold())


def _compare(actual: Any, op: str, wanted: str) -> bool:
    try:
        a, w = float(actual), float(wanted)
    except (TypeError, ValueError):
        return False
    return {"<": a < w, "<=": a <= w, ">": a > w, ">=": a >= w}[op]


@dataclass(frozen=True)
class Selection:
    """A parsed ``--select`` expression: id patterns (any may match) and field filters (all must hold).

    Terms are separated by spaces or commas; a term is an id or glob (``RCA-00*``), a family name
    (``rca``, ``path``), or ``key OP value`` with OP one of ``= != < <= > >=`` and ``|`` between
    alternative values (``observability=O2``, ``heterogeneity=high|medium``, ``golden_length>=5``).
    Quote values with spaces: ``"label='static route missing'"``.
    """

    ids: tuple[str, ...] = ()
    filters: tuple[_Filter, ...] = ()
    expression: str | None = None

    @property
    def needs_metadata(self) -> bool:
        return any(f.key in METADATA_KEYS for f in self.filters)

    @classmethod
    def parse(cls, expression: str | None) -> Selection:
        if not expression or not expression.strip():
            return cls()
        try:
            tokens = [t for raw in shlex.split(expression) for t in raw.split(",") if t.strip()]
        except ValueError as exc:
            raise CtbError(f"--select {expression!r}: {exc}") from None
        ids: list[str] = []
        filters: list[_Filter] = []
        for token in tokens:
            m = _FILTER.match(token.strip())
            if m is None:
                if token.lower() in {f.value for f in Family}:
                    filters.append(_Filter("family", "=", (token.lower(),)))
                else:
                    ids.append(token.strip())
                continue
            key = m["key"].lower().replace("-", "_")
            if key not in VISIBLE_KEYS and key not in METADATA_KEYS:
                known = ", ".join(sorted([*VISIBLE_KEYS, *METADATA_KEYS]))
                raise CtbError(f"--select: unknown field {m['key']!r} in {token!r}; known fields: {known}")
            values = tuple(v.strip() for v in m["value"].split("|") if v.strip())
            if not values:
                raise CtbError(f"--select: {token!r} has no value after {m['op']!r}")
            filters.append(_Filter(key, m["op"], values))
        return cls(tuple(ids), tuple(filters), expression)

    def matches(self, spec: TaskSpec, metadata: dict[str, Any] | None) -> bool:
        if self.ids and not any(fnmatch.fnmatchcase(spec.id.casefold(), p.casefold()) for p in self.ids):
            return False
        for f in self.filters:
            if f.key in VISIBLE_KEYS:
                actual = getattr(spec, VISIBLE_KEYS[f.key])
            else:
                actual = (metadata or {}).get(METADATA_KEYS[f.key])
            if not f.matches(actual):
                return False
        return True


@dataclass(frozen=True)
class PlannedTask:
    ref: TaskRef
    spec: TaskSpec

    @property
    def id(self) -> str:
        return self.ref.id


def select_tasks(
    task_set: TaskSet, selection: Selection, unreadable: list[Skipped] | None = None
) -> list[PlannedTask]:
    """Tasks that match the selection, in task-set order (the gate then decides which may run).

    A task whose task.yaml cannot be read is left out; with ``unreadable`` given it is listed there
    (id, the file's own error) instead of stopping the whole run.
    """
    chosen: list[PlannedTask] = []
    refs = task_set.refs() if unreadable is not None else task_set.unique_refs()  # raises: one line
    dups = task_set.duplicate_ids(refs)
    for ref in refs:
        try:
            spec = task_set.load_task(ref)
        except CtbError as exc:
            if unreadable is None or (
                selection.ids
                and not any(fnmatch.fnmatchcase(ref.id.casefold(), p.casefold()) for p in selection.ids)
            ):
                if unreadable is None:
                    raise
                continue
            unreadable.append(Skipped(ref.id, f"cannot be read: {exc}"))
            continue
        metadata = None
        if selection.needs_metadata:
            metadata = _metadata(task_set, ref, spec)
        if not selection.matches(spec, metadata):
            continue
        if ref.id in dups:  # a run keyed by id cannot hold both: each is kept out, its folders named
            if unreadable is not None and not any(k.task_id == ref.id for k in unreadable):
                folders = " and ".join(set_relative(task_set.root, r.path) for r in dups[ref.id])
                unreadable.append(Skipped(ref.id, f"has an id that is not unique in the set ({folders})"))
            continue
        chosen.append(PlannedTask(ref, spec))
    if not chosen:
        what = f" matching {selection.expression!r}" if selection.expression else ""
        unknown = task_set.unknown_families()
        hint = (
            f" ({', '.join(f'{n}/' for n in unknown)}: no such task family is installed)" if unknown else ""
        )
        raise CtbError(f"no task to run{what} in {task_set.root}{hint}")
    return chosen


def _metadata(task_set: TaskSet, ref: TaskRef, spec: TaskSpec) -> dict[str, Any]:
    from ctbench.derived import derive

    hidden = task_set.load_hidden(ref)
    try:
        network = task_set.network(spec.network)
    except CtbError:
        network = None
    derived = derive(spec, hidden, network, task_set.taxonomy, task_set.config).model_dump()
    return derived


__all__ = ["METADATA_KEYS", "VISIBLE_KEYS", "PlannedTask", "Selection", "select_tasks"]
