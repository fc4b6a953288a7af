"""Real task sets for the replay tests, built from the vendor captures in shared/data/vendor-cli.

``build_vendor_task_set`` makes a task set whose one task (``VENDOR-ALL``) records every one of the
captured outputs, spread over devices of every operating system in MANIFEST (``VRP_01``, ``CMW_01``,
``IOS_01``, ``NXOS_01``, ``JUN_01``, ``EOS_01``, ``XR_01``, ``VRPV_01`` ...), with a host without a CLI, a device the task keeps out of
reach, and a hidden.yaml full of gold strings no transport may ever return. ``HOSTILE-001`` has a
recording index that points at hidden.yaml in every way a careless or malicious author could.

The tests in this file check the builder's central promise: every capture replays byte-exact.
"""

from __future__ import annotations

import csv
import json
import os
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from ctbench.replay.engine import ReplayEngine
from ctbench.replay.observation import Outcome
from ctbench.store import TaskSet, recording_filename
from tests.conftest import VENDOR_CLI

REPO = Path(__file__).resolve().parents[1]
PREFIX = {
    "huawei_vrp": "VRP",
    "huawei_vrp8": "VRPV",
    "arista_eos": "EOS",
    "cisco_iosxr": "XR",
    "hp_comware": "CMW",
    "cisco_ios": "IOS",
    "cisco_nxos": "NXOS",
    "juniper_junos": "JUN",
}
VENDOR = {
    "huawei_vrp": "Huawei",
    "huawei_vrp8": "Huawei",
    "arista_eos": "Arista",
    "cisco_iosxr": "Cisco",
    "hp_comware": "H3C",
    "cisco_ios": "Cisco",
    "cisco_nxos": "Cisco",
    "juniper_junos": "Juniper",
}
GOLD_NODE = "VRP_01"
GOLD_OBJECT = "GigabitEthernet0/0/7-GOLDOBJ"
GOLD_LABEL = "gold-secret-label-5e1f"
GOLD_RATIONALE = "GOLD-RATIONALE-9b2c never shown to agents"
GOLD_STRINGS = (GOLD_OBJECT, GOLD_LABEL, GOLD_RATIONALE, "GOLD-WHY-77aa")
ALL_TASK = "VENDOR-ALL"
HOSTILE_TASK = "HOSTILE-001"
CAPTURES = 356
"""Rows of MANIFEST.tsv: 339 of the five first vendors, 17 of Arista EOS, IOS XR and VRP8."""


@dataclass(frozen=True)
class Capture:
    os: str
    device: str
    command: str
    source: Path


def captures() -> list[Capture]:
    """Every MANIFEST row, assigned to device <PREFIX>_<n> where n numbers captures of one command."""
    out: list[Capture] = []
    seen: dict[tuple[str, str], int] = {}
    with (VENDOR_CLI / "MANIFEST.tsv").open(encoding="utf-8") as fh:
        for row in csv.DictReader(fh, delimiter="\t"):
            key = (row["platform"], row["command"])
            seen[key] = seen.get(key, 0) + 1
            device = f"{PREFIX[row['platform']]}_{seen[key]:02d}"
            out.append(Capture(row["platform"], device, row["command"], VENDOR_CLI / row["file"]))
    return out


def _write_json(path: Path, data: object) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=1), encoding="utf-8")  # JSON is YAML


def _hidden(task_id: str) -> dict[str, object]:
    return {
        "id": task_id,
        "answer": {"rca": [{"node": GOLD_NODE, "object": GOLD_OBJECT, "label": GOLD_LABEL}]},
        "golden_actions": [
            {"device": GOLD_NODE, "command": "display interface brief", "why": "GOLD-WHY-77aa"}
        ],
        "rationale": GOLD_RATIONALE,
    }


def build_vendor_task_set(root: Path) -> Path:
    """A task set at ``root`` with VENDOR-ALL (every capture) and HOSTILE-001 (refused index entries)."""
    root.mkdir(parents=True, exist_ok=True)
    for name in ("ctbench.yaml", "taxonomy.yaml"):
        shutil.copy(REPO / "tasks" / name, root / name)
    caps = captures()
    devices: dict[str, str] = {}
    for c in caps:
        devices.setdefault(c.device, c.os)
    net_devices: list[dict[str, object]] = [
        {
            "name": name,
            "vendor": VENDOR[os_],
            "os": os_,
            "type": "router",
            "role": f"{os_} lab",
            "site": "LAB",
        }
        for name, os_ in sorted(devices.items())
    ]
    net_devices.append({"name": "PC_01", "vendor": "Generic", "type": "pc", "role": "user"})
    net_devices.append({"name": "SECRET_RTR", "vendor": "Cisco", "os": "cisco_ios", "type": "router"})
    _write_json(root / "networks" / "vendor-lab.yaml", {"name": "vendor-lab", "devices": net_devices})

    task_dir = root / "rca" / ALL_TASK
    recordings = []
    for c in caps:
        rel = recording_filename(c.device, c.command)
        (task_dir / rel).parent.mkdir(parents=True, exist_ok=True)
        (task_dir / rel).write_bytes(c.source.read_bytes())
        recordings.append({"device": c.device, "command": c.command, "file": rel})
    accessible = sorted(devices) + ["PC_01"]
    _write_json(
        task_dir / "task.yaml",
        {
            "id": ALL_TASK,
            "family": "rca",
            "statement": "Every vendor capture, replayed.",
            "network": "vendor-lab",
            "accessible": accessible,
            "recordings": recordings,
        },
    )
    _write_json(task_dir / "hidden.yaml", _hidden(ALL_TASK))
    build_hostile_task(root)
    return root


def build_hostile_task(root: Path) -> Path:
    """HOSTILE-001: every index entry of VRP_01 tries to reach hidden.yaml or a file outside the task."""
    task_dir = root / "rca" / HOSTILE_TASK
    rec_dir = task_dir / "recordings" / "VRP_01"
    rec_dir.mkdir(parents=True, exist_ok=True)
    _write_json(task_dir / "hidden.yaml", _hidden(HOSTILE_TASK))
    (rec_dir / "good.txt").write_bytes(b"Huawei Versatile Routing Platform Software\n")
    os.symlink(task_dir / "hidden.yaml", rec_dir / "link.txt")
    os.symlink(task_dir, rec_dir / "dirlink")
    recordings = [
        {"device": "VRP_01", "command": "display version", "file": "recordings/VRP_01/good.txt"},
        {"device": "VRP_01", "command": "display interface brief", "file": "../hidden.yaml"},
        {"device": "VRP_01", "command": "display vlan", "file": "hidden.yaml"},
        {"device": "VRP_01", "command": "display arp all", "file": "recordings/../hidden.yaml"},
        {"device": "VRP_01", "command": "display device", "file": "recordings/VRP_01/link.txt"},
        {"device": "VRP_01", "command": "display startup", "file": "recordings/VRP_01/dirlink/hidden.yaml"},
        {"device": "VRP_01", "command": "display eth-trunk", "file": str(task_dir / "hidden.yaml")},
        {"device": "VRP_01", "command": "display mac-address", "file": "recordings\\..\\hidden.yaml"},
        {"device": "VRP_01", "command": "display lldp neighbor", "file": "recordings/VRP_01/missing.txt"},
    ]
    _write_json(
        task_dir / "task.yaml",
        {
            "id": HOSTILE_TASK,
            "family": "rca",
            "statement": "Hostile index.",
            "network": "vendor-lab",
            "accessible": ["VRP_01", "IOS_01"],
            "recordings": recordings,
        },
    )
    return task_dir


def gold_strings(task_dir: Path) -> list[str]:
    """Strings only hidden.yaml holds: answer lines, the rationale, the golden actions' reasons.

    (A gold object or label alone may legitimately appear in recorded output: the evidence shows
    the shut interface. The answer line, the rationale and the reasons never do.)
    """
    from ctbench.model import HiddenSpec
    from ctbench.yamlio import load_fast

    spec = HiddenSpec.model_validate(load_fast(task_dir / "hidden.yaml"))
    out = [f"{t.node};{t.object};{t.label}" for t in spec.answer.rca or []]
    out += [
        " -> ".join(h.node if not h.egress else f"{h.node}_{h.egress}" for h in p.hops)
        for p in spec.answer.paths or []
    ]
    out += [spec.rationale] if spec.rationale else []
    out += [a.why for a in spec.golden_actions if len(a.why) > 20]
    return out


class KeepAliveClient:
    """A lean HTTP/1.1 keep-alive JSON client on asyncio streams, for load tests and benchmarks.

    httpx's async pool spends more CPU per request than the server does; on a small machine it
    measures itself. This speaks the same HTTP over a real socket with almost no overhead.
    """

    def __init__(self, url: str) -> None:
        from urllib.parse import urlparse

        parts = urlparse(url)
        self.host, self.port = parts.hostname or "127.0.0.1", parts.port or 80
        self._reader: Any = None
        self._writer: Any = None

    async def __aenter__(self) -> KeepAliveClient:
        import asyncio

        self._reader, self._writer = await asyncio.open_connection(self.host, self.port)
        return self

    async def __aexit__(self, *exc: object) -> None:
        self._writer.close()

    async def request(self, method: str, path: str, body: object | None = None) -> tuple[int, Any]:
        payload = b"" if body is None else json.dumps(body).encode()
        head = (
            f"{method} {path} HTTP/1.1\r\nHost: {self.host}\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(payload)}\r\n\r\n"
        ).encode()
        self._writer.write(head + payload)
        raw = await self._reader.readuntil(b"\r\n\r\n")
        lines = raw.decode("latin-1").split("\r\n")
        status = int(lines[0].split()[1])
        length = next(int(ln.split(":", 1)[1]) for ln in lines if ln.lower().startswith("content-length:"))
        data = await self._reader.readexactly(length)
        return status, json.loads(data) if data else None


@pytest.fixture(scope="module")
def vendor_tasks(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_vendor_task_set(tmp_path_factory.mktemp("vendor") / "tasks")


# --------------------------------------------------------------------------- tests


def test_manifest_has_all_captures() -> None:
    caps = captures()
    assert len(caps) == CAPTURES
    assert len({(c.device, c.command) for c in caps}) == CAPTURES


def test_every_capture_replays_byte_exact(vendor_tasks: Path) -> None:
    engine = ReplayEngine(TaskSet.open(vendor_tasks))
    session = engine.open_session(ALL_TASK)
    wrong = []
    for c in captures():
        obs = session.run(c.device, c.command)
        if obs.outcome is not Outcome.RECORDED or obs.data != c.source.read_bytes():
            wrong.append(f"{c.device} {c.command!r}: {obs.outcome} {obs.text[:120]!r}")
    assert not wrong, f"{len(wrong)} captures do not replay byte-exact:\n" + "\n".join(wrong[:20])
    assert session.calls == CAPTURES


def test_hostile_index_entries_are_refused(vendor_tasks: Path) -> None:
    engine = ReplayEngine(TaskSet.open(vendor_tasks))
    session = engine.open_session(HOSTILE_TASK)
    assert session.run("VRP_01", "display version").outcome is Outcome.RECORDED
    for cmd in (
        "display interface brief",
        "display vlan",
        "display arp all",
        "display device",
        "display startup",
        "display eth-trunk",
        "display mac-address",
        "display lldp neighbor",
    ):
        obs = session.run("VRP_01", cmd)
        assert obs.outcome is Outcome.DENIED, (cmd, obs.text)
        for gold in GOLD_STRINGS:
            assert gold not in obs.text
        assert "hidden" not in obs.text
