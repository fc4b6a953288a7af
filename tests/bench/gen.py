"""Generate large synthetic task sets for benchmarks (valid tasks on the bundled campus-lab network)."""

from __future__ import annotations

import shutil
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
BUNDLED = REPO / "tasks"

TASK = """\
# yaml-language-server: $schema=../../schema/task.schema.json
id: {id}
family: rca
status: approved
title: Generated task {n}
statement: |
  Users report that 172.16.{a}.10 is unreachable from PC_01. Find the minimal set of root causes.
  Answer with one line per root cause: node;object;root-cause label
network: campus-lab
recordings:
{recs}canary: "{canary}"
"""
HIDDEN = """\
# yaml-language-server: $schema=../../schema/hidden.schema.json
id: {id}
answer:
  rca:
    - node: CORE_SW_01
      object: GigabitEthernet0/0/24
      label: shutdown
golden_actions:
  - device: CORE_SW_01
    command: display current-configuration interface GigabitEthernet0/0/{k}
    why: generated
metadata:
  observability: O1
  chain_length: 1
  protocol_mechanisms: [interface state]
canary: "{canary}"
"""


def generate(root: Path, n_tasks: int, n_recordings: int = 40) -> Path:
    """Write ``n_tasks`` RCA tasks with ``n_recordings`` recordings each under ``root``; returns root."""
    if root.exists():
        shutil.rmtree(root)
    root.mkdir(parents=True)
    for name in ("ctbench.yaml", "taxonomy.yaml"):
        shutil.copy(BUNDLED / name, root / name)
    shutil.copytree(BUNDLED / "networks", root / "networks")
    canary = next(ln for ln in (root / "ctbench.yaml").read_text().splitlines() if ln.startswith("canary:"))
    canary = canary.split(":", 1)[1].strip().strip('"')
    body = b"#\ninterface GigabitEthernet0/0/24\n shutdown\n#\nreturn\n"
    for i in range(n_tasks):
        tid = f"GEN-{i:05d}"
        folder = root / "rca" / tid
        (folder / "recordings" / "CORE_SW_01").mkdir(parents=True)
        recs = []
        for k in range(n_recordings):
            cmd = f"display current-configuration interface GigabitEthernet0/0/{k}"
            rel = f"recordings/CORE_SW_01/cfg_{k}.txt"
            (folder / rel).write_bytes(body)
            recs.append(f"  - device: CORE_SW_01\n    command: {cmd}\n    file: {rel}\n")
        (folder / "task.yaml").write_text(
            TASK.format(id=tid, n=i, a=i % 250, recs="".join(recs), canary=canary)
        )
        (folder / "hidden.yaml").write_text(HIDDEN.format(id=tid, k=24, canary=canary))
    return root
