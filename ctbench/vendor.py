"""A thin, forgiving front to the vendor dialects for code that handles devices, not CLI lines.

Validation and scoring need two things from a dialect: the canonical form of a command and the full
form of an interface name. Devices without a CLI (hosts) and commands a dialect cannot parse fall
back to the text as written, so these helpers never fail on data the dialects do not know.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ctbench.model import Device


@lru_cache(maxsize=64)
def _dialect(os_name: str, extra: tuple[Path, ...]) -> Any:
    from ctbench.dialects import get_dialect

    try:
        return get_dialect(os_name, extra_trees=extra)
    except (KeyError, ValueError, FileNotFoundError):
        return None


class Vendors:
    """Per task set: dialect lookups that honour the set's command-tree extensions."""

    def __init__(self, extra_trees: tuple[Path, ...] = ()) -> None:
        self.extra = tuple(extra_trees)

    def dialect(self, os_name: str | None) -> Any:
        return _dialect(os_name, self.extra) if os_name else None

    def canonical(self, device: Device | None, command: str) -> str | None:
        """Canonical form, or None when it cannot be determined (no CLI, unknown command)."""
        d = self.dialect(device.os if device else None)
        if d is None:
            return None
        try:
            res = d.resolve(command)
        except Exception:  # a dialect bug must not break validation of a task
            return None
        return res.canonical if res.ok else None

    def iface(self, device: Device | None, name: str) -> str:
        d = self.dialect(device.os if device else None)
        if d is None:
            return name.strip()
        try:
            return str(d.normalize_interface(name.strip()))
        except Exception:
            return name.strip()

    def normalizer(self, devices: Mapping[str, Device]) -> Callable[[str, str], str]:
        """``(node, interface) -> full interface name`` through each node's dialect (answer parsing)."""

        def normalize(node: str, name: str) -> str:
            return self.iface(devices.get(node), name)

        return normalize
