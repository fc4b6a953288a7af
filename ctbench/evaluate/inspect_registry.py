"""What Inspect AI finds through ctbench's ``inspect_ai`` entry point: ``ctbench/rca``, ``ctbench/path``,
``ctbench/topology``, ``ctbench/all``. Loaded by Inspect only (it needs the ``inspect`` extra); ctbench never imports it."""

from ctbench.evaluate.inspect_task import all_tasks, path, rca, topology

__all__ = ["all_tasks", "path", "rca", "topology"]
