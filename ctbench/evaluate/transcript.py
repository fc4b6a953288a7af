"""Transcripts in the run folder: ``transcripts/<ID>.jsonl`` written by the runner and read back.

The format itself (:class:`TranscriptEntry`, :func:`dumps`...) is part of the agent contract and lives
in :mod:`ctbench.plugin_api.transcript` (an adapter returns its transcript as those lines); its names
are re-exported here so code written against this module keeps working.
"""

from __future__ import annotations

import json
from pathlib import Path

from pydantic import ValidationError

from ctbench.plugin_api.transcript import (
    MAX_ENTRIES,
    TEXT_CAP,
    ToolCall,
    TranscriptEntry,
    TranscriptUsage,
    bare_tool,
    cap,
    describe,
    dumps,
    when,
)

TRANSCRIPTS_DIR = "transcripts"


def transcript_path(run_dir: Path, task_id: str, trial: int = 1) -> Path:
    suffix = "" if trial == 1 else f".trial{trial}"
    return Path(run_dir) / TRANSCRIPTS_DIR / f"{task_id}{suffix}.jsonl"


def read_transcript(path: Path) -> tuple[list[TranscriptEntry], list[str]]:
    """The entries of a transcript file and a warning per unreadable line (a missing file: none)."""
    entries: list[TranscriptEntry] = []
    warnings: list[str] = []
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return entries, warnings
    for n, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            entries.append(TranscriptEntry.model_validate(json.loads(line)))
        except (ValueError, ValidationError) as exc:
            first = str(exc).splitlines()[0][:200]
            warnings.append(f"{path.name}:{n}: not a transcript entry ({first})")
    return entries, warnings


__all__ = [
    "MAX_ENTRIES",
    "TEXT_CAP",
    "TRANSCRIPTS_DIR",
    "ToolCall",
    "TranscriptEntry",
    "TranscriptUsage",
    "bare_tool",
    "cap",
    "describe",
    "dumps",
    "read_transcript",
    "transcript_path",
    "when",
]
