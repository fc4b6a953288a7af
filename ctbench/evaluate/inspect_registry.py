"""What Inspect AI finds through ctbench's ``inspect_ai`` entry point: ``ctbench/rca``, ``ctbench/path``,
``ctbench/topology``, ``ctbench/all``, and ``ctbench/<family>`` for every other installed task family
(a plug-in's, from the ``ctbench.families`` entry points, made by
:func:`~ctbench.evaluate.inspect_task.family_task` as this module is imported). Loaded by Inspect only
(it needs the ``inspect`` extra); ctbench never imports it."""

from typing import Any

from ctbench.evaluate.inspect_task import all_tasks, family_task, path, rca, topology

__all__ = ["all_tasks", "path", "rca", "topology"]


def _plugin_tasks(taken: set[str]) -> dict[str, Any]:
    """One Inspect task per installed family not written out above; none when the families do not load
    (``ctbench/all`` then still runs, and its run gate names the broken family's tasks)."""
    from ctbench.scoring.families import families

    try:
        found = families()
    except Exception:  # a broken plug-in must not hide ctbench's own tasks from Inspect
        return {}
    return {name: family_task(name, fam.title) for name, fam in found.items() if name not in taken}


for _name, _task in _plugin_tasks({"all", *__all__}).items():  # "all" is every family's task
    globals()[_name] = _task
    __all__.append(_name)
