"""A plug-in family's gold checked against the network, for validation (:mod:`ctbench.validation`).

The core validator checks the built-ins' gold itself and cannot import this layer, so the tools above
it (``ctb-author validate``, the run gate of ``ctb-eval run`` and ``ctb-author release``, the authoring
app) hand it a :class:`PluginGoldCheck`: the family reads its gold through the same normalisers as an
answer (:meth:`~ctbench.scoring.families.TaskFamily.gold`) and says what the network cannot state
(:meth:`~ctbench.scoring.families.TaskFamily.gold_problems`) - the same check the oracle check makes.
"""

from __future__ import annotations

import hashlib
import inspect
import os
from collections.abc import Mapping
from functools import cached_property
from typing import Any

from ctbench.errors import CtbError
from ctbench.model import BUILTIN_FAMILIES, HiddenSpec, Network, TaskSpec
from ctbench.scoring.families import TaskFamily, families
from ctbench.store import TaskSet


class PluginGoldCheck:
    """Provides :class:`ctbench.validation.family_gold.FamilyGoldCheck` for one task set. The families
    are loaded on first use, so a set without plug-in tasks never loads them."""

    def __init__(self, task_set: TaskSet) -> None:
        self.task_set = task_set

    @cached_property
    def plugins(self) -> Mapping[str, TaskFamily]:
        """The installed plug-in families (none when a plug-in does not load: validation names that)."""
        try:
            found = families()
        except Exception:  # a broken plug-in: the family check of validation reports its tasks
            return {}
        return {name: fam for name, fam in found.items() if name not in BUILTIN_FAMILIES}

    @cached_property
    def basis(self) -> str:
        """The plug-in families' names, classes and module files (size, modification time), hashed."""
        h = hashlib.sha256()
        for name, fam in sorted(self.plugins.items()):
            cls = type(fam)
            try:
                source = inspect.getsourcefile(cls) or ""
                st = os.stat(source)
                stamp = f"{st.st_size}|{st.st_mtime_ns}"
            except (OSError, TypeError):
                source, stamp = "", ""
            h.update(f"{name}|{cls.__module__}.{cls.__qualname__}|{source}|{stamp}\n".encode())
        return "plugin-gold:" + h.hexdigest()

    def _resolve_label(self) -> Any:
        try:
            return self.task_set.taxonomy.resolve
        except CtbError:  # a broken taxonomy is reported on its own; the family then resolves nothing
            return lambda label: None

    def __call__(self, task: TaskSpec, hidden: HiddenSpec, network: Network) -> list[str]:
        family = self.plugins.get(task.family.value)
        if family is None:
            return []
        devices = network.device_map()
        vendors = self.task_set.vendors

        def normalize(node: str, name: str) -> str:
            return vendors.iface(devices.get(node), name)

        try:
            gold = family.gold(hidden.answer, normalize=normalize, resolve_label=self._resolve_label())
            return [str(p) for p in family.gold_problems(gold, devices)]
        except Exception as exc:  # the plug-in's own code: named as a problem of this task, not a crash
            return [f"the {family.name} family cannot check this gold: {type(exc).__name__}: {exc}"]


__all__ = ["PluginGoldCheck"]
