"""Tasks and task sets that must never run or ship silently (issue 16, items 3-5).

Each case breaks a private copy of the starter tasks, inside a real git repository, the way a careless
author would, and runs the real ``ctb-author`` (a subprocess): validate names the problem (code, file,
line), ``stats`` and ``export`` say what is wrong, ``export`` refuses unless ``--force``, and nothing
prints a traceback.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from ctbench.store import DuplicateTaskId, TaskSet
from ctbench.validation import Validator
from tests.conftest import copy_starters

REPO = Path(__file__).resolve().parents[1]
ENV = {
    **os.environ,
    "PYTHONPATH": str(REPO),
    "GIT_AUTHOR_NAME": "t",
    "GIT_AUTHOR_EMAIL": "t@example.org",
    "GIT_COMMITTER_NAME": "t",
    "GIT_COMMITTER_EMAIL": "t@example.org",
}
ENV.pop("CTBENCH_DEBUG", None)
ENV.pop("CTBENCH_TASKS", None)


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True, env=ENV).stdout


@pytest.fixture
def tasks(tmp_path: Path) -> Path:
    root = copy_starters(tmp_path / "repo" / "tasks")
    git(root.parent, "init", "-q")
    git(root.parent, "add", "-A")
    git(root.parent, "commit", "-qm", "starters")
    return root


def author(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    r = subprocess.run(
        [sys.executable, "-m", "ctbench.authoring.cli", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        env=ENV,
        timeout=300,
        stdin=subprocess.DEVNULL,
    )
    assert "Traceback" not in r.stderr + r.stdout, r.stderr
    return r


def replace(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert old in text, (path, old)
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


def findings(r: subprocess.CompletedProcess[str]) -> list[dict]:
    return json.loads(r.stdout)["findings"]


HOPS = """        - {node: PC_01, egress: eth0}
        - {node: ACC_SW_01, egress: GigabitEthernet1/0/48}
        - {node: CORE_SW_01, egress: GigabitEthernet0/0/24}
"""

# --------------------------------------------------------------------------- item 3: never run these

NEVER_RUN: dict[str, tuple[Callable[[Path], None], str, str, str]] = {
    # name: (break the set, finding code, file it names, words in the message)
    "unknown network": (
        lambda r: replace(r / "rca/RCA-001/task.yaml", "network: campus-lab", "network: nowhere"),
        "network",
        "rca/RCA-001/task.yaml",
        "'nowhere'",
    ),
    "unknown gold node": (
        lambda r: replace(r / "rca/RCA-001/hidden.yaml", "- node: CORE_SW_01", "- node: NOPE_01"),
        "answer-node",
        "rca/RCA-001/hidden.yaml",
        "'NOPE_01'",
    ),
    "unknown gold label": (
        lambda r: replace(r / "rca/RCA-001/hidden.yaml", "label: shutdown", "label: gremlins"),
        "label",
        "rca/RCA-001/hidden.yaml",
        "'gremlins'",
    ),
    "hop cabled elsewhere": (
        lambda r: replace(
            r / "path/PATH-001/hidden.yaml", HOPS, HOPS.splitlines()[0] + "\n" + HOPS.splitlines()[2] + "\n"
        ),
        "path-link",
        "path/PATH-001/hidden.yaml",
        "cabled to ACC_SW_01",
    ),
    "hop over a link the network lacks": (
        lambda r: replace(
            r / "path/PATH-001/hidden.yaml",
            "        - {node: CORE_SW_01, egress: GigabitEthernet0/0/24}\n"
            "        - {node: FW_01, egress: GigabitEthernet1/0/2}\n",
            "        - {node: CORE_SW_01, egress: Vlanif24}\n",
        ),
        "path-link",
        "path/PATH-001/hidden.yaml",
        "nothing connects CORE_SW_01 to GW_01",
    ),
    "golden action with no recording": (
        lambda r: replace(
            r / "rca/RCA-001/hidden.yaml",
            "    command: display ip routing-table\n",
            "    command: display ip routing-table 10.9.9.9\n",
        ),
        "golden-recording",
        "rca/RCA-001/hidden.yaml",
        "display ip routing-table 10.9.9.9",
    ),
    "recording at ../hidden.yaml": (
        lambda r: replace(
            r / "rca/RCA-001/task.yaml",
            "file: recordings/CORE_SW_01/display_ip_routing-table.txt",
            "file: ../hidden.yaml",
        ),
        "recording-file",
        "rca/RCA-001/task.yaml",
        "leaves the task folder",
    ),
    "recording at recordings/../hidden.yaml": (
        lambda r: replace(
            r / "rca/RCA-001/task.yaml",
            "file: recordings/CORE_SW_01/display_ip_routing-table.txt",
            "file: recordings/../hidden.yaml",
        ),
        "recording-file",
        "rca/RCA-001/task.yaml",
        "leaves the task folder",
    ),
    "recording at an absolute path": (
        lambda r: replace(
            r / "rca/RCA-001/task.yaml",
            "file: recordings/CORE_SW_01/display_ip_routing-table.txt",
            "file: /etc/passwd",
        ),
        "recording-file",
        "rca/RCA-001/task.yaml",
        "/etc/passwd",
    ),
    "duplicate task id": (
        lambda r: shutil.copytree(r / "rca/RCA-001", r / "path/RCA-001"),
        "duplicate-id",
        "path/RCA-001",
        "also used by tasks/rca/RCA-001",
    ),
}


@pytest.mark.parametrize("case", list(NEVER_RUN))
def test_validate_names_every_task_that_must_not_run(tasks: Path, case: str) -> None:
    breaker, code, file, words = NEVER_RUN[case]
    breaker(tasks)
    r = author("validate", "--json", cwd=tasks)
    assert r.returncode == 1
    hits = [f for f in findings(r) if f["code"] == code and f["severity"] == "error"]
    assert hits, (case, findings(r))
    assert any(f["file"].endswith(file) and words in f["message"] for f in hits), hits
    text = author("validate", cwd=tasks)
    assert text.returncode == 1 and any(
        line.startswith(f"tasks/{file}") and f"error[{code}]" in line for line in text.stdout.splitlines()
    ), text.stdout
    # what the engine's gate reads: the task is among those with errors, the clean ones are not
    report = Validator(TaskSet.open(tasks)).run()
    broken = {"RCA-001"} if "PATH" not in file else {"PATH-001"}
    assert report.tasks_with_errors == broken and not report.set_errors


def test_duplicate_ids_are_a_clear_error_wherever_a_task_is_picked_by_id(tasks: Path) -> None:
    shutil.copytree(tasks / "rca" / "RCA-002", tasks / "path" / "RCA-002")
    shutil.copytree(tasks / "path" / "PATH-001", tasks / "rca" / "PATH-001")
    ts = TaskSet.open(tasks)
    assert sorted(ts.duplicate_ids()) == ["PATH-001", "RCA-002"]
    with pytest.raises(DuplicateTaskId, match=r"RCA-002 \(tasks/rca/RCA-002 and tasks/path/RCA-002\)"):
        ts.ref("RCA-002")
    with pytest.raises(DuplicateTaskId, match="duplicate task ids: PATH-001 .*; RCA-002 .*unique across"):
        ts.unique_refs()
    assert ts.ref("RCA-001").family.value == "rca"  # an id used once is still found
    for args in (["export", "--out", "b"], ["export", "RCA-002", "--out", "b"]):
        r = author(*args, cwd=tasks)
        assert r.returncode == 1 and "duplicate task id" in r.stderr and not (tasks / "b").exists(), r.stderr


# --------------------------------------------------------------------------- item 4: what validate missed


def test_recordings_folder_linked_out_of_the_set(tasks: Path, tmp_path: Path) -> None:
    outside = tmp_path / "elsewhere"
    shutil.move(tasks / "rca/RCA-001/recordings", outside)
    (tasks / "rca/RCA-001/recordings").symlink_to(outside)
    inside = tasks / "rca/RCA-002/recordings"  # a link inside the set is refused by the replay just the same
    shutil.move(inside, tasks / "rca/RCA-002/real-recordings")
    inside.symlink_to("real-recordings")
    r = author("validate", "--json", cwd=tasks)
    assert r.returncode == 1
    linked = {f["task"]: f for f in findings(r) if f["code"] == "recordings-link"}
    assert set(linked) == {"RCA-001", "RCA-002"}
    assert (
        str(outside) in linked["RCA-001"]["message"]
        and "refuses every recording" in linked["RCA-001"]["message"]
    )
    assert not [
        f for f in findings(r) if f["code"] in ("unused-recording", "recording-file")
    ]  # one finding each


@pytest.mark.parametrize(
    ("hops", "twice"),
    [
        (
            HOPS + "        - {node: FW_01, egress: GigabitEthernet1/0/1}\n"
            "        - {node: CORE_SW_01, egress: GigabitEthernet0/0/24}\n",
            ["CORE_SW_01", "FW_01"],
        ),
        (
            "        - {node: PC_01, egress: eth0}\n        - {node: ACC_SW_01, egress: GigabitEthernet1/0/1}\n"
            "        - {node: PC_01, egress: eth0}\n        - {node: ACC_SW_01, egress: GigabitEthernet1/0/48}\n"
            "        - {node: CORE_SW_01, egress: GigabitEthernet0/0/24}\n",
            ["PC_01", "ACC_SW_01"],
        ),
    ],
)
def test_a_path_that_visits_a_node_twice(tasks: Path, hops: str, twice: list[str]) -> None:
    replace(tasks / "path/PATH-001/hidden.yaml", HOPS, hops)
    r = author("validate", "--json", cwd=tasks)
    assert r.returncode == 1
    loops = [f for f in findings(r) if f["code"] == "path-loop"]
    assert [f["message"].split(" visits ")[1].split()[0] for f in loops] == twice
    assert all(f["file"] == "tasks/path/PATH-001/hidden.yaml" and f["line"] for f in loops)


def test_files_far_larger_than_real_captures_are_warned_with_their_size(tasks: Path) -> None:
    rec = tasks / "rca/RCA-001/recordings/CORE_SW_01/display_ip_routing-table.txt"
    rec.write_bytes(rec.read_bytes() * 2 + b"x" * 3_000_000)
    hidden = tasks / "rca/RCA-002/hidden.yaml"
    hidden.write_text(
        hidden.read_text(encoding="utf-8") + "# " + "padding " * 50_000 + "\n", encoding="utf-8"
    )
    r = author("validate", "--json", cwd=tasks)
    assert r.returncode == 0  # warnings: a big capture is suspicious, not wrong
    big = {f["code"]: f for f in findings(r) if f["code"] in ("large-recording", "large-file")}
    assert "3.0 MB" in big["large-recording"]["message"] and big["large-recording"]["line"]
    assert (
        big["large-file"]["file"] == "tasks/rca/RCA-002/hidden.yaml"
        and "401 KB" in big["large-file"]["message"]
    )


def test_leftover_temporary_files_are_warned_cleaned_and_never_committed(tasks: Path) -> None:
    folder = tasks / "rca/RCA-001"
    old_gold = folder / ".hidden.yaml.k3j9x2ab.tmp"
    shutil.copy(folder / "hidden.yaml", old_gold)
    old_rec = folder / "recordings/CORE_SW_01/.display_interface_brief.txt.a1b2c3d4.tmp"
    old_rec.write_bytes(b"half a capture")
    net_tmp = tasks / "networks/.campus-lab.yaml.zz99yy88.tmp"
    net_tmp.write_text("name: campus-lab\n")
    r = author("validate", "--json", cwd=tasks)
    temps = {f["file"]: f for f in findings(r) if f["code"] == "leftover-temp"}
    assert set(temps) == {
        "tasks/rca/RCA-001/.hidden.yaml.k3j9x2ab.tmp",
        "tasks/rca/RCA-001/recordings/CORE_SW_01/.display_interface_brief.txt.a1b2c3d4.tmp",
        "tasks/networks/.campus-lab.yaml.zz99yy88.tmp",
    }
    assert "copy of the gold" in temps["tasks/rca/RCA-001/.hidden.yaml.k3j9x2ab.tmp"]["message"]
    assert not [f for f in findings(r) if f["code"] == "unused-recording"]
    # an interrupted save long ago, and one a second ago (perhaps still running): the next save of
    # hidden.yaml removes the old one only; the commit stages neither
    hour_ago = time.time() - 3600
    os.utime(old_gold, (hour_ago, hour_ago))
    young = folder / ".hidden.yaml.q1w2e3r4.tmp"
    shutil.copy(folder / "hidden.yaml", young)
    s = author(
        "set-answer",
        "RCA-001",
        "--rca",
        "CORE_SW_01;GigabitEthernet0/0/24;shutdown",
        "--rca",
        "CORE_SW_01;Vlanif24;shutdown",
        "--author",
        "t <t@example.org>",
        cwd=tasks,
    )
    assert s.returncode == 0, s.stderr
    assert not old_gold.exists() and young.exists() and old_rec.exists()
    committed = git(tasks.parent, "show", "--name-only", "--format=", "HEAD").split()
    assert committed == ["tasks/rca/RCA-001/hidden.yaml"]
    assert not [p for p in git(tasks.parent, "ls-files").split() if p.endswith(".tmp")]


def test_bundled_task_set_ignores_leftover_temporaries_in_git() -> None:
    r = subprocess.run(
        ["git", "check-ignore", "-q", "--no-index", "tasks/rca/RCA-001/.hidden.yaml.k3j9x2ab.tmp"],
        cwd=REPO,
        env=ENV,
    )
    assert r.returncode == 0


# --------------------------------------------------------------------------- item 5: stats and export


BROKEN_SETS: dict[str, tuple[Callable[[Path], None], str]] = {
    "missing hidden.yaml": (lambda r: (r / "rca/RCA-001/hidden.yaml").unlink(), "rca/RCA-001/hidden.yaml"),
    "broken taxonomy YAML": (
        lambda r: (r / "taxonomy.yaml").write_text("labels: [1, 2\n"),
        "taxonomy.yaml:1",  # where the unclosed "[" opens (issue 33), not the end of the file
    ),
    "taxonomy of the wrong shape": (
        lambda r: (r / "taxonomy.yaml").write_text("labels: 7\n"),
        "taxonomy.yaml:1",
    ),
    "broken network": (
        lambda r: (r / "networks/campus-lab.yaml").write_text("name: campus-lab\ndevices: 12\n"),
        "networks/campus-lab.yaml:2",
    ),
    "unknown gold label": (
        lambda r: replace(r / "rca/RCA-002/hidden.yaml", "label:", "label: x-"),
        "rca/RCA-002/hidden.yaml",
    ),
}


@pytest.mark.parametrize("case", list(BROKEN_SETS))
def test_export_refuses_and_stats_complains_about_broken_sets(tasks: Path, tmp_path: Path, case: str) -> None:
    breaker, where = BROKEN_SETS[case]
    breaker(tasks)
    out = tmp_path / "bundles"
    r = author("export", "--out", str(out), cwd=tasks)
    assert r.returncode == 1 and not out.exists(), r.stderr
    assert where in r.stderr and "does not validate" in r.stderr and "--force" in r.stderr.splitlines()[-1]
    st = author("stats", cwd=tasks)
    assert st.returncode == 1 and where in st.stderr and "does not validate" in st.stderr
    forced = author("export", "--out", str(out), "--force", cwd=tasks)
    assert forced.returncode == 0 and "does not validate" in forced.stderr and list(out.glob("*.json"))


def test_clean_set_exports_and_stats_quietly(tasks: Path, tmp_path: Path) -> None:
    r = author("export", "--out", str(tmp_path / "b"), cwd=tasks)
    assert (
        r.returncode == 0
        and "does not validate" not in r.stderr
        and len(list((tmp_path / "b").glob("*"))) == 3
    )
    st = author("stats", cwd=tasks)
    assert st.returncode == 0 and "does not validate" not in st.stderr and "Tasks per family" in st.stdout


@pytest.mark.parametrize("command", [["validate"], ["stats"], ["export", "--out", "OUT"]])
def test_global_tasks_option_reaches_every_command(tasks: Path, tmp_path: Path, command: list[str]) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    replace(tasks / "rca/RCA-001/hidden.yaml", "label: shutdown", "label: gremlins")
    args = [a.replace("OUT", str(tmp_path / "b")) for a in command]
    r = author("--tasks", str(tasks), *args, cwd=elsewhere)
    assert "not inside a task set" not in r.stderr
    assert r.returncode == 1 and "gremlins" in r.stdout + r.stderr, r.stderr
    # the sub-command's own --tasks still works, and wins over nothing
    assert author(*args, "--tasks", str(tasks), cwd=elsewhere).returncode == 1


# --------------------------------------------------------------------------- item 3: the runner's side


@pytest.mark.parametrize(
    ("breaker", "words"),
    [
        (
            lambda r: replace(r / "rca/RCA-001/task.yaml", "network: campus-lab", "network: nowhere"),
            "'nowhere' not found",
        ),
        (lambda r: (r / "networks/campus-lab.yaml").write_text("name: campus-lab\ndevices: 12\n"), "devices"),
        (lambda r: replace(r / "rca/RCA-001/task.yaml", "family: rca", "family: [rca"), "task.yaml"),
        (lambda r: shutil.copytree(r / "rca/RCA-001", r / "path/RCA-001"), "duplicate task id"),
    ],
)
def test_a_task_that_cannot_be_served_is_a_task_definition_error(
    tasks: Path, breaker: Callable[[Path], None], words: str
) -> None:
    """What the runner classifies as the task's fault (never retried), over the engine and over HTTP."""
    import httpx

    from ctbench.errors import TaskDefinitionError
    from ctbench.replay.engine import ReplayEngine
    from ctbench.replay.http_server import serve_in_thread

    breaker(tasks)
    engine = ReplayEngine(TaskSet.open(tasks))
    with pytest.raises(TaskDefinitionError, match=words) as info:
        engine.open_session("RCA-001")
    assert info.value.task_id in (None, "RCA-001")
    with serve_in_thread(engine) as server:
        r = httpx.post(f"{server.url}/sessions", json={"task_id": "RCA-001"}, timeout=30)
        assert r.status_code == 400 and words in r.json()["error"]["message"], r.text
        assert (
            httpx.post(f"{server.url}/sessions", json={"task_id": "RCA-404"}, timeout=30).status_code == 404
        )
