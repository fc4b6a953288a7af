"""How the reports and exports name, order and draw task families, built-in or plug-in alike.

Why a module: every table, chart and export used to loop over the built-in families' names, so a
plug-in family (``ctbench.families`` entry point, :mod:`ctbench.scoring.families`) was scored and then
silently left out of them. Here is the one place that says which families a scores.json document
holds and how to show each: the built-ins by their short titles (:data:`FAMILY_TITLES`), a plug-in by
its title from the installed family (its name when it is not installed) and its parts from its summary block's
``columns`` - nothing here names a plug-in family.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from ctbench.evaluate.scorecard import FAMILY_TITLES, family_label, installed_title
from ctbench.plugin_api.runs import families_of

SHAPES = ("circle", "square", "triangle", "diamond", "down-triangle", "hexagon", "star", "cross")
"""Chart markers in the order families get them: the built-ins' first (circle RCA, square path, triangle
topology), then the plug-in families present, in name order (cycling after the last)."""
SHAPE_NAMES = {
    "circle": "circles",
    "square": "squares",
    "triangle": "triangles",
    "diamond": "diamonds",
    "down-triangle": "downward triangles",
    "hexagon": "hexagons",
    "star": "stars",
    "cross": "crosses",
}


def label(family: str) -> str:
    """The name a table cell or a chart axis shows: "RCA", "Path", "Topology", a plug-in's title."""
    return family_label(family)


def title(family: str) -> str:
    """What the family calls its question (its ``title``: "root-cause analysis"), from the installed
    family; the name when it is not installed (a report of a run scored elsewhere)."""
    return installed_title(family)


def is_plugin(family: str) -> bool:
    return family not in FAMILY_TITLES


def present(docs: Iterable[Mapping[str, Any]]) -> list[str]:
    """Families with tasks in any of the scores.json documents: built-ins first (in their order), then
    plug-in families in name order."""
    seen: dict[str, None] = {}
    for doc in docs:
        for fam in families_of(doc):
            if (doc["summary"].get(fam) or {}).get("n_tasks"):
                seen[fam] = None
    return sorted(seen, key=order_key)


def paper_pair_then_present(docs: Iterable[Mapping[str, Any]]) -> tuple[str, ...]:
    """The paper's two families always (so the tables of the paper keep their shape, a Family column
    included, on a run of one of them), then every other family with tasks in any of the documents:
    topology, then plug-ins in name order. The family list of every table that is not one family's."""
    return ("rca", "path", *(f for f in present(docs) if f not in ("rca", "path")))


def plugins(docs: Iterable[Mapping[str, Any]]) -> list[str]:
    """The plug-in families with tasks in any of the documents, in name order."""
    return [f for f in present(docs) if is_plugin(f)]


def shape_of(family: str, plugin_order: list[str]) -> str:
    """A family's chart marker: the built-ins' own, a plug-in's by its place in ``plugin_order``."""
    builtin = list(FAMILY_TITLES)
    if family in builtin:
        return SHAPES[builtin.index(family)]
    at = plugin_order.index(family) if family in plugin_order else 0
    rest = SHAPES[len(builtin) :]
    return rest[at % len(rest)]


def parts(summ: Mapping[str, Any]) -> list[str]:
    """A plug-in family's own per-task figures, as its summary block names them (``columns``)."""
    return [str(c) for c in summ.get("columns") or []]


def order_key(family: str) -> tuple[int, str]:
    """Sort key putting the built-ins first in their order, then plug-ins by name."""
    builtin = list(FAMILY_TITLES)
    return (builtin.index(family), "") if family in builtin else (len(builtin), family)
