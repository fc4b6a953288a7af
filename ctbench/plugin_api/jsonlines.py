"""JSON objects among the lines of a harness log: one reader for the adapters and the run viewer.

A CLI's event stream shares the task log with ctbench's own lines and the CLI's stderr, so a reader
keeps the lines that are JSON objects and passes over everything else without complaint.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from typing import Any


def json_objects(lines: Iterable[str]) -> Iterator[dict[str, Any]]:
    for line in lines:
        line = line.strip()
        if not line.startswith("{"):
            continue
        try:
            event = json.loads(line)
        except ValueError:
            continue
        if isinstance(event, dict):
            yield event
