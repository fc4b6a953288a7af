"""SVG snapshots of the authoring app: the task list, every editor section, the validation panel.

The task set is written out here, not copied from ``tasks/``, so the pictures change only when the
app changes, not when the sample tasks grow. Update after an intended change with
``pytest tests/test_app_snapshots.py --snapshot-update`` and look at the SVGs before committing them.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest
from textual.pilot import Pilot

from ctbench.authoring.app.app import AuthorApp
from ctbench.authoring.app.screens.editor import EditorScreen
from ctbench.store import TaskSet
from tests.test_app_flows import settle, until

SIZE = (120, 34)
CANARY = "SNAPSHOT CANARY 0000 (do not train on this data)"

FILES: dict[str, str] = {
    "ctbench.yaml": f'name: snapshot-set\ncanary: "{CANARY}"\n',
    "taxonomy.yaml": """\
version: 1
categories:
  - {id: C1, name: Interface and link state}
  - {id: C2, name: Routing protocol and route configuration}
labels:
  - {label: shutdown, l1: interface administrative state, l2: interface, l3: physical and link layer,
     domain: interface state, category: C1, aliases: [interface shutdown, admin down]}
  - {label: physical link down, l1: interface physical state, l2: interface, l3: physical and link layer,
     domain: interface state, category: C1, aliases: [link down]}
  - {label: static route missing, l1: static routing, l2: route configuration, l3: control plane,
     domain: routing protocol, category: C2, aliases: [missing static route]}
""",
    "networks/snap-lab.yaml": """\
name: snap-lab
description: A four-node lab for screenshots.
devices:
  - {name: PC_A, vendor: Generic, type: pc, role: user, site: LAB, interfaces: [eth0], addresses: [10.1.1.10/24]}
  - name: SW_A
    vendor: H3C
    os: hp_comware
    type: switch
    role: access
    site: LAB
    interfaces: [GigabitEthernet1/0/1, GigabitEthernet1/0/2]
    addresses: [10.1.1.1/24]
  - name: CORE_A
    vendor: Huawei
    os: huawei_vrp
    type: switch
    role: core
    site: LAB
    interfaces: [GigabitEthernet0/0/1, GigabitEthernet0/0/2]
    addresses: [10.0.0.1/30]
  - name: RTR_A
    vendor: Cisco
    os: cisco_ios
    type: router
    role: gateway
    site: LAB
    interfaces: [GigabitEthernet1, GigabitEthernet2]
    addresses: [10.0.0.2/30]
links:
  - [PC_A:eth0, SW_A:GigabitEthernet1/0/1]
  - [SW_A:GigabitEthernet1/0/2, CORE_A:GigabitEthernet0/0/1]
  - [CORE_A:GigabitEthernet0/0/2, RTR_A:GigabitEthernet1]
""",
    "rca/SNAP-RCA-1/task.yaml": f"""\
id: SNAP-RCA-1
family: rca
status: in_review
title: Lab users cannot reach the gateway
statement: |
  Users behind SW_A report that the gateway RTR_A does not answer ping.
  Find the minimal set of root causes.

  Answer with one line per root cause: node;object;root-cause label
network: snap-lab
recordings:
  - device: CORE_A
    command: display interface brief
    file: recordings/CORE_A/display_interface_brief.txt
  - device: RTR_A
    command: show ip route
    file: recordings/RTR_A/show_ip_route.txt
authors: [snapshot]
canary: "{CANARY}"
""",
    "rca/SNAP-RCA-1/hidden.yaml": f"""\
id: SNAP-RCA-1
answer:
  rca:
    - {{node: CORE_A, object: GigabitEthernet0/0/2, label: shutdown}}
golden_actions:
  - device: CORE_A
    command: display interface brief
    why: GE0/0/2 towards RTR_A is administratively down.
metadata:
  observability: O1
  chain_length: 1
  protocol_mechanisms: [interface state]
  declared: {{golden_length: 1}}
rationale: The core port towards the gateway is shut down.
canary: "{CANARY}"
""",
    "rca/SNAP-RCA-1/recordings/CORE_A/display_interface_brief.txt": "Interface                   PHY   Protocol  InUti OutUti\r\n"
    "GigabitEthernet0/0/1        up    up           0%     0%\r\n"
    "GigabitEthernet0/0/2        *down down         0%     0%\r\n",
    "rca/SNAP-RCA-1/recordings/RTR_A/show_ip_route.txt": "Gateway of last resort is not set\n\n      10.0.0.0/30 is subnetted, 1 subnets\n",
    "rca/SNAP-RCA-2/task.yaml": f"""\
id: SNAP-RCA-2
family: rca
status: draft
title: A task with findings
statement: |
  The gateway RTR_A lost its route to the lab; the fix is a missing static route on RTR_A.
  Answer with one line per root cause: node;object;root-cause label
network: snap-lab
recordings:
  - device: RTR_A
    command: show ip route
    file: recordings/RTR_A/show_ip_route.txt
canary: "{CANARY}"
""",
    "rca/SNAP-RCA-2/hidden.yaml": f"""\
id: SNAP-RCA-2
answer:
  rca:
    - {{node: RTR_A, object: 10.1.1.0/24, label: static route missing}}
metadata:
  declared: {{golden_length: 2, categories: [C1]}}
canary: "{CANARY}"
""",
    "rca/SNAP-RCA-2/recordings/RTR_A/show_ip_route.txt": "Gateway of last resort is not set\n",
    "path/SNAP-PATH-1/task.yaml": f"""\
id: SNAP-PATH-1
family: path
status: approved
title: From the lab PC to the gateway
statement: |
  Restore the forwarding path from PC_A to RTR_A.
  Answer with one line per path, hops joined by ->.
network: snap-lab
recordings:
  - device: SW_A
    command: display ip routing-table
    file: recordings/SW_A/display_ip_routing-table.txt
canary: "{CANARY}"
""",
    "path/SNAP-PATH-1/hidden.yaml": f"""\
id: SNAP-PATH-1
answer:
  paths:
    - hops:
        - {{node: PC_A, egress: eth0}}
        - {{node: SW_A, egress: GigabitEthernet1/0/2}}
        - {{node: CORE_A, egress: GigabitEthernet0/0/2}}
        - {{node: RTR_A}}
golden_actions:
  - device: SW_A
    command: display ip routing-table
    why: The default route leaves by GE1/0/2.
metadata:
  protocol_mechanisms: [static routing]
canary: "{CANARY}"
""",
    "path/SNAP-PATH-1/recordings/SW_A/display_ip_routing-table.txt": "Destination/Mask    Proto  Pre  Cost   NextHop     Interface\n0.0.0.0/0   Static 60  0   10.0.0.1   GE1/0/2\n",
}


@pytest.fixture
def snap_tasks(tmp_path: Path) -> Path:
    root = tmp_path / "tasks"
    for rel, text in FILES.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(text.encode())
    return root


def app_for(root: Path, **kw: object) -> AuthorApp:
    return AuthorApp(
        TaskSet.open(root),
        cursor_blink=False,
        author="snapshot",
        autosave_delay=60,
        validate_delay=0.01,
        **kw,
    )  # type: ignore[arg-type]


def in_editor(*keys: str) -> Callable[[Pilot], Awaitable[None]]:
    async def run_before(pilot: Pilot) -> None:
        await until(pilot, lambda: isinstance(pilot.app.screen, EditorScreen), "the editor")
        editor = pilot.app.screen
        assert isinstance(editor, EditorScreen)
        await until(pilot, lambda: editor.validated_revision == editor.revision, "validation")
        if keys:
            await pilot.press(*keys)
        await settle(pilot)

    return run_before


async def list_loaded(pilot: Pilot) -> None:
    from ctbench.authoring.app.screens.task_list import TaskListScreen

    screen = pilot.app.screen
    assert isinstance(screen, TaskListScreen)
    await until(pilot, lambda: len(screen.validated) == len(screen.rows), "the list validation")
    await settle(pilot)


def test_snapshot_task_list(snap_compare, snap_tasks: Path) -> None:
    assert snap_compare(app_for(snap_tasks), terminal_size=SIZE, run_before=list_loaded)


def test_snapshot_task_list_filtered(snap_compare, snap_tasks: Path) -> None:
    async def run_before(pilot: Pilot) -> None:
        await list_loaded(pilot)
        await pilot.press("slash", *"valid:no")
        await settle(pilot)

    assert snap_compare(app_for(snap_tasks), terminal_size=SIZE, run_before=run_before)


@pytest.mark.parametrize(
    "key,section",
    [
        ("f2", "statement"),
        ("f3", "network"),
        ("f4", "recordings"),
        ("f5", "golden"),
        ("f6", "answer"),
        ("f7", "metadata"),
    ],
)
def test_snapshot_editor_section(snap_compare, snap_tasks: Path, key: str, section: str) -> None:
    app = app_for(snap_tasks, mode="edit", task_id="SNAP-RCA-1")
    assert snap_compare(app, terminal_size=SIZE, run_before=in_editor(key))


def test_snapshot_path_answer(snap_compare, snap_tasks: Path) -> None:
    app = app_for(snap_tasks, mode="edit", task_id="SNAP-PATH-1")
    assert snap_compare(app, terminal_size=SIZE, run_before=in_editor("f6"))


def test_snapshot_validation_panel_with_findings(snap_compare, snap_tasks: Path) -> None:
    app = app_for(snap_tasks, mode="edit", task_id="SNAP-RCA-2")
    assert snap_compare(app, terminal_size=SIZE, run_before=in_editor("f9"))


def test_snapshot_path_builder(snap_compare, snap_tasks: Path) -> None:
    app = app_for(snap_tasks, mode="edit", task_id="SNAP-PATH-1")

    async def run_before(pilot: Pilot) -> None:
        await in_editor("f6", "a")(pilot)
        await pilot.press(*"PC_A", "enter")
        await settle(pilot)

    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)
