"""An interface the device does not have gets the vendor's parameter error, not a permission refusal."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from ruamel.yaml import YAML

from ctbench.replay.engine import ReplayEngine
from ctbench.replay.observation import Outcome
from ctbench.store import TaskSet

REPO = Path(__file__).resolve().parents[1]

MISSING = [
    # (task, device, line, the interface the caret goes under (None: no caret), message)
    (
        "PATH-011",
        "CORE_SW_01",
        "dis int GE0/0/99",
        "GE0/0/99",
        "Error: Wrong parameter found at '^' position.",
    ),
    (
        "PATH-011",
        "ACC_SW_01",
        "display interface GE1/0/99",
        "GE1/0/99",
        " % Wrong parameter found at '^' position.",
    ),
    ("PATH-011", "GW_01", "show int Gi9", "Gi9", "% Invalid input detected at '^' marker."),
    ("PATH-011", "PE_01", "show interfaces ge-0/0/9", None, "error: device ge-0/0/9 not found"),
    ("PATH-006", "DC_SPINE_01", "show int Eth1/99", "Eth1/99", "% Invalid command at '^' marker."),
]


@pytest.fixture(scope="module")
def engine() -> ReplayEngine:
    return ReplayEngine(TaskSet.open(REPO / "tasks"))


@pytest.mark.parametrize(("task", "device", "line", "token", "message"), MISSING, ids=[m[1] for m in MISSING])
def test_an_interface_the_device_lacks_gets_the_vendors_error(
    engine: ReplayEngine, task: str, device: str, line: str, token: str | None, message: str
) -> None:
    with engine.open_session(task) as session:
        obs = session.run(device, line)
    assert obs.outcome is Outcome.INVALID
    lines = obs.text.splitlines()
    assert lines[-1] == message
    if token is not None:  # under the interface of the echoed <prompt><line>, as the device puts it
        assert lines[0] == " " * (len(session.prompt(device)) + line.index(token)) + "^"


def test_interfaces_it_has_stay_refused_as_unrecorded(engine: ReplayEngine) -> None:
    with engine.open_session("PATH-011") as session:
        for device, line in (
            ("CORE_SW_01", "display interface GigabitEthernet0/0/1"),  # listed in the network
            ("CORE_SW_01", "display interface Vlanif24"),
            ("PE_01", "show interfaces ge-0/0/1.0"),  # a unit of a listed port
            ("GW_01", "show interfaces GigabitEthernet2"),
        ):
            assert session.run(device, line).outcome is Outcome.DENIED, (device, line)
        # a name in an output filter is a pattern, not a parameter
        assert session.run("CORE_SW_01", "display arp all | include GE0/0/99").outcome is Outcome.RECORDED


def test_interfaces_printed_by_the_recordings_count_as_present(engine: ReplayEngine) -> None:
    # DC_LEAF_03 lists few interfaces in its network, but its `display interface brief` prints them all
    task = engine.task("PATH-006")
    dev = task.devices["DC_LEAF_03"]
    assert dev.inventory is not None
    printed = sorted(dev.inventory.known - dev.inventory.declared)
    assert printed, "the recordings add interfaces the network file does not list"
    with engine.open_session("PATH-006") as session:
        assert session.run("DC_LEAF_03", f"display interface {printed[0]}").outcome is Outcome.DENIED


def test_without_a_declared_inventory_nothing_is_called_missing(tmp_path: Path) -> None:
    tasks = tmp_path / "tasks"
    shutil.copytree(REPO / "tasks", tasks)
    yaml = YAML()
    path = tasks / "networks" / "campus-lab.yaml"
    doc = yaml.load(path.read_text())
    for dev in doc["devices"]:
        dev.pop("interfaces", None)
    with path.open("w") as fh:
        yaml.dump(doc, fh)
    engine = ReplayEngine(TaskSet.open(tasks))
    with engine.open_session("PATH-011") as session:
        assert session.run("CORE_SW_01", "dis int GE0/0/99").outcome is Outcome.DENIED
