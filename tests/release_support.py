"""What the release tests share: the authoring CLI as a subprocess, the gold a public folder must never
hold, every file of a folder as a crawler would read it, and the byte-exact check of released rows."""

from __future__ import annotations

import base64
import hashlib
import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

from ctbench.store import TaskSet
from tests.review_support import REPO


def author_cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """``ctb-author ARGS`` as a real subprocess of this checkout."""
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    env.pop("CTBENCH_DEBUG", None)
    return subprocess.run(
        [sys.executable, "-m", "ctbench.authoring.cli", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )


def _section(text: str, key: str) -> str | None:
    """A top-level section of a YAML file, verbatim: its key line and every indented line after it."""
    found = re.search(rf"^{key}:\n(?:[ -].*\n?)+", text, re.M)
    return found.group(0).rstrip("\n") if found else None


def gold_strings(ts: TaskSet, ids: list[str]) -> list[str]:
    """What must never be public: answer lines (each family's as an agent writes them), golden actions (their explanations, and the golden-action
    and metadata sections of hidden.yaml verbatim), rationales."""
    out: list[str] = []
    for task_id in ids:
        hidden = ts.load_hidden(task_id)
        for t in hidden.answer.rca or []:
            out.append(f"{t.node};{t.object};{t.label}")
        for p in hidden.answer.paths or []:
            hops = [h.node + (f"_{h.egress}" if h.egress else "") for h in p.hops]
            out += ["->".join(hops), " -> ".join(hops)]
        out += [line for line in hidden.gold_answer_lines(ts.ref(task_id).family) if line not in out]
        out += [a.why for a in hidden.golden_actions if a.why]
        out.append(hidden.rationale)
        text = ts.hidden_text(ts.ref(task_id))
        out += [s for key in ("golden_actions", "metadata") if (s := _section(text, key))]
    return [s for s in out if s]


def _strings(value: Any) -> list[str]:
    """Every string in a decoded row (bytes as text), so a multi-line value is searched as it is."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, bytes):
        return [value.decode("utf-8", "replace")]
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return []


def readable_text(folder: Path) -> str:
    """Every file under ``folder`` as text a person or a crawler could read: the raw text, and for
    parquet, JSON and JSON lines every string value decoded (a newline in JSON is ``\\n`` on disk)."""
    import pyarrow.parquet as pq

    parts = []
    for p in sorted(folder.rglob("*")):
        if not p.is_file():
            continue
        if p.suffix == ".parquet":
            parts += _strings(pq.read_table(p).to_pylist())
            continue
        text = p.read_bytes().decode("utf-8", "replace")
        parts.append(text)
        if p.suffix == ".jsonl":
            parts += [s for line in text.splitlines() if line.strip() for s in _strings(json.loads(line))]
        elif p.suffix == ".json":
            parts += _strings(json.loads(text))
    return "\n".join(parts)


def check_rows(rows: list[dict[str, Any]], ts: TaskSet, *, b64: bool = False) -> int:
    """Each released row against its task in ``ts``: the canary, and every recording byte for byte
    (and by its sha256); the number of recordings checked."""
    canary = ts.config.canary
    n = 0
    for row in rows:
        assert row["canary"] == canary
        spec = ts.load_task(row["id"])
        files = {(r.device, r.command): r for r in spec.recordings}
        assert len(row["recordings"]) == len(files)
        for rec in row["recordings"]:
            raw = rec["output_bytes"]
            data = rec["output"].encode("utf-8") if rec["output"] is not None else raw
            if b64 and rec["output"] is None:
                data = base64.b64decode(raw)
            source = ts.read_recording(row["id"], files[(rec["device"], rec["command"])])
            assert data == source
            assert hashlib.sha256(data).hexdigest() == rec["sha256"]
            n += 1
    return n
