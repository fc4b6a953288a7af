"""A small TTAC Track B phase on disk, built from ctbench's own recordings (Track B's are not public).

The layout is Track B's (docs/trackb.md): ``Phase_1/test.json`` and ``question_limits_config.json``,
``devices_outputs/{N|others}/{device}/{safe(command)}.txt``, a ground-truth CSV ``ID,Track B`` with
a BOM, CRLF rows and multi-line answers joined by a literal ``\\n``, and the vendor map the server
keeps in code as a YAML file. It holds two fault questions (one served from its own folder, one
from ``others/``), a node-only path question whose gold has two ECMP alternatives, a topology
question, a no_permission pair, a Cisco device, a CRLF recording and a file name no command of the
grammar gives.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path

from ctbench.replay.trackb.layout import safe_name

REPO = Path(__file__).resolve().parents[1]
BUNDLED = REPO / "tasks"

VENDORS = {"Core-R1": "huawei", "Core-R2": "huawei", "Edge-SW1": "h3c", "PSS": "cisco"}

FAULT_PROMPT = (
    "The question involves two major categories of faults: routing faults and port faults. Output format "
    "requirements: each line represents one fault, no blank lines between lines, no extra whitespace "
    "characters before, after, or within each line.\n"
    "Routing fault output format: fault node;destination IP;fault reason. Fault reasons include: (1) "
    "blackhole route; (2) missing static route; (3) BGP configuration error; (4) SRV6-Policy tunnel "
    "planning error; if there are multiple fault reasons, output each on a new line.\n"
    "Port fault output format: fault node;fault port;fault reason. Fault reasons include: (1) shutdown; "
    "(2) interface IP error; (3) MTU value configuration error; if there are multiple fault reasons, "
    "output each on a new line.\n"
)

QUESTIONS = {
    1: (
        "11111111-1111-4111-8111-111111111111",
        FAULT_PROMPT + "Core-R1 cannot reach 10.9.9.9. Find the cause.",
    ),
    2: ("22222222-2222-4222-8222-222222222222", FAULT_PROMPT + "PSS users lose traffic. Find the causes."),
    3: (
        "33333333-3333-4333-8333-333333333333",
        "Core-R1 addressing GE1/0/2 of PSS\nProvide the service path. Use the -> symbol to connect node "
        "names, output in one line, with no extra whitespace at the beginning, end, or in the middle.",
    ),
    4: (
        "44444444-4444-4444-8444-444444444444",
        "The link planning data of Core-R2 has been accidentally deleted. Supplement the link information "
        "for the UP interfaces of Core-R2. Format requirement: local node name(local port number)->remote "
        "node name(remote port number). Each line represents one link.",
    ),
}

GOLD = {
    1: "Core-R1;10.9.9.9;missingstaticroute",
    2: "Edge-SW1;GE1/0/1;shutdown\nCore-R2;10.9.9.9;BGPconfigurationerror",
    3: "Core-R1->Core-R2->PSS\nCore-R1->Edge-SW1->PSS",
    4: "Core-R2(GE1/0/1)->Core-R1(GE1/0/1)\nCore-R2(GE1/0/2)->PSS(Gi0/2)",
}

L2_SID = "55555555-5555-4555-8555-555555555555"
L2_PROMPT = (
    "Core-R1 reaches PSS at layer 2. Provide the layer 2 forwarding path with the ports: node(out port)->"
    "node(in port)->node(out port)->..., full interface names, in one line."
)
L2_GOLD = (
    "Core-R1(GigabitEthernet1/0/1)->Core-R2(GigabitEthernet1/0/1)->Core-R2(GigabitEthernet1/0/2)"
    "->PSS(GigabitEthernet0/2)"
)
"""A Phase 2 L2 path question (no Phase 2 gold is public: its shape is TRACKB.md's, node(out)->node(in))."""

ROUTES = (
    "Route Flags: R - relay, D - download to fib\r\n"
    "------------------------------------------------------------------------------\r\n"
    "Routing Tables: Public\r\n"
    "         Destinations : 3        Routes : 3\r\n\r\n"
    "Destination/Mask    Proto   Pre  Cost      Flags NextHop         Interface\r\n\r\n"
    "       10.0.12.0/30  Direct  0    0           D   10.0.12.1       GigabitEthernet1/0/1\r\n"
    "       10.0.13.0/30  Direct  0    0           D   10.0.13.1       GigabitEthernet1/0/2\r\n"
)

LLDP_R1 = (
    "Local Intf       Neighbor Dev             Neighbor Intf             Exptime(s)\n"
    "GE1/0/1          Core-R2                  GE1/0/1                   105\n"
    "GE1/0/2          Edge-SW1                 GE1/0/1                   110\n"
)
LLDP_R2 = (
    "Local Intf       Neighbor Dev             Neighbor Intf             Exptime(s)\n"
    "GE1/0/1          Core-R1                  GE1/0/1                   101\n"
    "GE1/0/2          PSS                      Gi0/2                     99\n"
)
LLDP_SW = (
    "System Name          Local Interface Chassis ID      Port ID\n"
    "Core-R1              GE1/0/1         3cd2-e5f1-0101  GigabitEthernet1/0/2\n"
    "PSS                  GE1/0/2         00aa-bb01-0202  GigabitEthernet0/3\n"
)
LLDP_PSS = (
    "Capability codes:\n"
    "    (R) Router, (B) Bridge, (T) Telephone, (C) DOCSIS Cable Device\n\n"
    "Device ID           Local Intf     Hold-time  Capability      Port ID\n"
    "Core-R2             Gi0/2          120        R               GE1/0/2\n"
    "Edge-SW1            Gi0/3          120        B,R             GE1/0/2\n\n"
    "Total entries displayed: 2\n"
)


@dataclass(frozen=True)
class TrackbTree:
    phase_dir: Path
    outputs: Path
    vendors: Path
    gt: Path
    limits: Path

    def files(self) -> dict[Path, bytes]:
        """Every device output of the tree, by path."""
        return {p: p.read_bytes() for p in self.outputs.rglob("*.txt")}


def _bundled(rel: str) -> bytes:
    return (BUNDLED / rel).read_bytes()


def write_tree(root: Path) -> TrackbTree:
    """Write the small phase under ``root`` and return where its parts are."""
    phase = root / "Phase_1"
    phase.mkdir(parents=True)
    items = [{"scenario_id": sid, "task": {"question": q, "id": n}} for n, (sid, q) in QUESTIONS.items()]
    (phase / "test.json").write_text(json.dumps(items, indent=2), encoding="utf-8")
    limits = {"question_1": {"no_permission": {"display current-configuration": ["Core-R1"]}}}
    (phase / "question_limits_config.json").write_text(json.dumps(limits), encoding="utf-8")
    out = root / "devices_outputs"
    crlf = _bundled("path/PATH-008/recordings/BJ_SRV_SW/display_interface_brief.txt")
    assert b"\r\n" in crlf
    cisco = _bundled("rca/RCA-004/recordings/PE_GZ/show_ip_interface_brief.txt")
    files: dict[str, bytes] = {
        # question 1 has its own folder: the server reads only it for question 1
        "1/Core-R1/display ip routing-table": ROUTES.encode() + b"       10.9.9.9/32  (none: missing)\r\n",
        "1/Core-R1/display current-configuration": b"sysname Core-R1\n",  # refused in question 1
        "1/Core-R1/display interface GigabitEthernet1/0/1": b"GigabitEthernet1/0/1 current state : UP\n",
        "1/Core-R1/display lldp neighbor brief": LLDP_R1.encode(),
        "1/Core-R2/display lldp neighbor brief": LLDP_R2.encode(),
        "1/PSS/show ip interface brief": cisco,
        # every other question reads others/
        "others/Core-R1/display lldp neighbor brief": LLDP_R1.encode(),
        "others/Core-R1/display current-configuration": b"sysname Core-R1\n#\nip route-static 0.0.0.0 0\n",
        "others/Core-R2/display ip routing-table": ROUTES.encode()
        + b"       10.9.9.9/32  BGP 255 0 D 10.0.12.1\r\n",
        "others/Core-R2/display lldp neighbor brief": LLDP_R2.encode(),
        "others/Edge-SW1/display interface brief": crlf,
        "others/Edge-SW1/display lldp neighbor-list": LLDP_SW.encode(),
        "others/PSS/show lldp neighbors": LLDP_PSS.encode(),
        "others/PSS/show ip interface brief": cisco,
    }
    for rel, data in files.items():
        folder, device, command = rel.split("/", 2)
        path = out / folder / device / f"{safe_name(command)}.txt"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    # a name no command of the Huawei grammar is stored under: imported as a literal command
    (out / "others" / "Core-R2" / "display_frobnicate_widgets.txt").write_bytes(b"widgets: 3\n")
    # a device Track B's map does not know: the server answers 404 for it, so it is not imported
    (out / "others" / "Ghost-9").mkdir(parents=True)
    (out / "others" / "Ghost-9" / "display_version.txt").write_bytes(b"ghost\n")
    vendors = root / "vendors.yaml"
    vendors.write_text("".join(f"{d}: {v}\n" for d, v in VENDORS.items()), encoding="utf-8")
    gt = root / "gt_phase1.csv"
    rows = ["ID,Track B"] + [f'{QUESTIONS[n][0]},"{GOLD[n].replace(chr(10), chr(92) + "n")}"' for n in GOLD]
    gt.write_bytes(("\ufeff" + "\r\n".join(rows) + "\r\n").encode("utf-8"))
    return TrackbTree(phase, out, vendors, gt, phase / "question_limits_config.json")


def add_questions(tree: TrackbTree, questions: dict[int, tuple[str, str, str]]) -> None:
    """Add questions ``{id: (scenario id, prompt, gold)}`` to ``tree``'s test.json and ground truth."""
    path = tree.phase_dir / "test.json"
    items = json.loads(path.read_text(encoding="utf-8"))
    items += [{"scenario_id": sid, "task": {"question": q, "id": n}} for n, (sid, q, _) in questions.items()]
    path.write_text(json.dumps(items, indent=2), encoding="utf-8")
    rows = "".join(f"{sid},{gold.replace(chr(10), chr(92) + 'n')}\r\n" for sid, _, gold in questions.values())
    tree.gt.write_bytes(tree.gt.read_bytes() + rows.encode("utf-8"))


class Server:
    def __init__(self, tasks: Path, trajectories: Path, *flags: str) -> None:
        env = {**os.environ, "PYTHONPATH": str(REPO)}
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "ctbench.replay.cli", "serve", "--tasks", str(tasks), "--port", "0",
             "--trajectories", str(trajectories), *flags],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
        )  # fmt: skip
        assert self.proc.stdout is not None
        self.url = self.proc.stdout.readline().strip()
        assert self.url.startswith("http://127.0.0.1:"), self.proc.stderr.read() if self.proc.stderr else ""
        self.trajectories = trajectories
        deadline = time.monotonic() + 30
        while True:  # the URL is printed once the socket is bound; uvicorn listens a moment later
            try:
                with urllib.request.urlopen(self.url + "/health", timeout=5):
                    break
            except urllib.error.URLError:
                assert time.monotonic() < deadline, "the Track B server did not come up"
                time.sleep(0.05)

    def post(self, body: object, token: str | None = None) -> tuple[int, dict[str, object]]:
        """POST as Track B's tools do: JSON body, JSON answer, the status code kept."""
        headers = {"Content-Type": "application/json"}
        if token:
            headers["Authorization"] = f"Bearer {token}"
        req = urllib.request.Request(
            self.url + "/api/agent/execute", data=json.dumps(body).encode(), headers=headers, method="POST"
        )
        try:
            with urllib.request.urlopen(req, timeout=30) as resp:
                return resp.status, json.loads(resp.read())
        except urllib.error.HTTPError as exc:
            return exc.code, json.loads(exc.read())

    def stop(self) -> str:
        """Stop the server; what it wrote on stderr."""
        self.proc.terminate()
        return self.proc.communicate(timeout=30)[1] or ""
