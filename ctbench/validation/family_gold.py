"""The hook through which validation checks a plug-in family's gold against the network.

A built-in family's gold (RCA triples, paths, links) is checked here in the core, line by line. A
plug-in family's gold is plain YAML that only the family can read, and the family lives above the
core (its :class:`~ctbench.scoring.families.TaskFamily` has ``gold`` and ``gold_problems``). The core
must not import the scoring layer, so the tools above it hand the validator a check of this shape
(``ctbench.scoring.gold_check.PluginGoldCheck``): ``ctb-author validate``, the run gate (``ctb-eval
run``, ``ctb-author release``) and the authoring app. A validator given none checks what it did before:
that the gold is a non-empty list under the family's name.
"""

from __future__ import annotations

from typing import Protocol

from ctbench.model import HiddenSpec, Network, TaskSpec


class FamilyGoldCheck(Protocol):
    """Why a plug-in family's gold cannot be stated on the task's network (empty when it can)."""

    @property
    def basis(self) -> str:
        """What identifies the checking code beyond ctbench's own (the installed plug-in families), so
        that validation outcomes stored by the run gate's cache are not reused across a plug-in upgrade."""
        ...

    def __call__(self, task: TaskSpec, hidden: HiddenSpec, network: Network) -> list[str]:
        """One message per problem; the built-in families are not this check's business (empty)."""
        ...


__all__ = ["FamilyGoldCheck"]
