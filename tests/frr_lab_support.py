"""The live FRR labs of a test session (tasks/labs/triangle.yaml, and the five-router
tasks/labs/edge.yaml), each under its own name and brought up once, for the tests that type into real
routers. Skips, naming what is missing, where there is no root or no FRR; the lab is
always taken down, and the teardown checks that no namespace of it is left."""

from __future__ import annotations

import os
import re
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
LAB_NAME = f"pt{os.getpid()}"
EDGE_NAME = f"pe{os.getpid()}"
"""Named by the test process: two test runs on one machine (two checkouts' CI) each get their own lab."""


def require_lab_machine() -> None:
    from ctbench.authoring.lab.runtime import missing_requirements

    missing = missing_requirements()
    if missing:
        pytest.skip("live FRR lab needs " + "; ".join(missing))
    sweep_dead_test_labs()


def sweep_dead_test_labs() -> list[str]:
    """Take down the labs of test processes that are gone (a CI run killed mid-lab leaves its
    routers running and its namespaces in place); a live process's lab is left alone."""
    from ctbench.authoring.lab.runtime import state_root, teardown

    names = {p.name for p in state_root().iterdir()} if state_root().is_dir() else set()
    netns = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True, check=False).stdout
    names |= {m.group(1) for m in re.finditer(r"^ctb-(p[te]\d+)-", netns, re.MULTILINE)}
    swept = []
    for name in sorted(names):
        m = re.fullmatch(r"p[te](\d+)", name)
        if m and not Path(f"/proc/{m.group(1)}").exists():
            teardown(name)
            swept.append(name)
    return swept


@pytest.fixture(scope="session")
def frr_lab() -> Iterator[object]:
    require_lab_machine()
    from ctbench.authoring.lab.runtime import Lab
    from ctbench.authoring.lab.spec import load_lab

    spec = load_lab(ROOT / "tasks/labs/triangle.yaml").model_copy(update={"name": LAB_NAME})
    lab = Lab(spec)  # state under /run/ctbench-labs: the daemons' user must reach their sockets
    with lab:
        yield lab
    left = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True, check=False).stdout
    assert f"ctb-{LAB_NAME}-" not in left


@pytest.fixture(scope="session")
def frr_edge_lab() -> Iterator[object]:
    """The five-router lab (four FRR routers and FW1, a Linux firewall): the larger, mixed lab."""
    require_lab_machine()
    from ctbench.authoring.lab.runtime import Lab
    from ctbench.authoring.lab.spec import load_lab

    spec = load_lab(ROOT / "tasks/labs/edge.yaml").model_copy(update={"name": EDGE_NAME})
    with Lab(spec) as lab:
        yield lab
    left = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True, check=False).stdout
    assert f"ctb-{EDGE_NAME}-" not in left
