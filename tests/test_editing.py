"""Editing operations (shared by the authoring app and the scripted commands), on real task sets in git.

Every test works on a private copy of the bundled task set inside a real git repository, and reads the
results back from disk and from git: the files written, the commit and its trailers, and what
``ctb-author validate`` says about the saved task.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import git
import pytest

from ctbench.authoring.drafts import DraftStore
from ctbench.authoring.editing import EditSession
from ctbench.authoring.saving import delete_task
from ctbench.authoring.shadow import validate_draft
from ctbench.authoring.working_copy import ConflictError, EditError, TaskDraft, next_free_id
from ctbench.commits import TRAILER_ACTION, TRAILER_AUTHOR, TRAILER_TASK
from ctbench.model import Device, Family, Network
from ctbench.store import TaskSet
from ctbench.validation import Severity, Validator
from tests.conftest import BUNDLED, run_cli

AUTHOR = "Ana Author <ana@example.org>"


def make_repo(tmp_path: Path) -> Path:
    """A git repository holding a copy of the bundled task set; returns the task set folder."""
    root = tmp_path / "repo"
    shutil.copytree(BUNDLED, root / "tasks")
    repo = git.Repo.init(root)
    with repo.config_writer() as cw:
        cw.set_value("user", "name", "Repo Owner")
        cw.set_value("user", "email", "owner@example.org")
    repo.git.add("-A")
    repo.git.commit("-q", "-m", "initial task set")
    return root / "tasks"


@pytest.fixture
def tasks(tmp_path: Path) -> Path:
    return make_repo(tmp_path)


def yaml_data(text: str) -> dict:
    from ruamel.yaml import YAML

    return YAML(typ="safe").load(text)


def trailers(repo_dir: Path) -> dict[str, str]:
    msg = git.Repo(repo_dir, search_parent_directories=True).head.commit.message
    out = {}
    for line in msg.splitlines():
        key, sep, value = line.partition(": ")
        if sep and key.startswith("Ctbench-"):
            out[key] = value
    return out


def first_cli_device(ts: TaskSet, network: str) -> tuple[str, str]:
    """A device with a CLI and an interface: (name, interface)."""
    for dev in ts.network(network).devices:
        if dev.os and dev.interfaces:
            return dev.name, dev.interfaces[0]
    raise AssertionError(f"network {network} has no device with a CLI and interfaces")


def build_rca(ts: TaskSet, task_id: str = "RCA-900") -> EditSession:
    network = ts.network_names()[0]
    device, iface = first_cli_device(ts, network)
    s = EditSession.create(
        ts,
        Family.RCA,
        task_id,
        network,
        author=AUTHOR,
        statement="Users report that a remote service is unreachable from the office.\n"
        "Answer with one line per root cause: node;object;root-cause label\n",
    )
    s.add_recording(device, "display interface brief", f"{iface} down down\r\n".encode())
    s.add_golden(device, "display interface brief", "the interface is down")
    s.add_rca(s.make_triple(device, iface, ts.taxonomy.labels[0].label))
    s.set_metadata(observability="O1", chain_length=1, protocol_mechanisms=["interface state"])
    return s


def test_create_save_commit_and_validate(tasks: Path) -> None:
    ts = TaskSet.open(tasks)
    s = build_rca(ts)
    assert validate_draft(ts, s.snapshot()) == [] or all(
        f.severity == Severity.WARNING for f in validate_draft(ts, s.snapshot())
    )
    result = s.save(author=AUTHOR)
    folder = tasks / "rca" / "RCA-900"
    assert result.folder == folder and result.commit
    recs = list((folder / "recordings").rglob("*.txt"))
    assert len(recs) == 1 and recs[0].read_bytes().endswith(b"down down\r\n")  # bytes kept exactly (CRLF)
    assert trailers(tasks) == {TRAILER_TASK: "RCA-900", TRAILER_ACTION: "create", TRAILER_AUTHOR: AUTHOR}
    repo = git.Repo(tasks.parent)
    assert not repo.is_dirty(untracked_files=True)
    report = Validator(ts).run([ts.ref("RCA-900")])
    assert report.errors == []
    assert not list(tasks.rglob(".RCA-900.saving-*"))  # the staging folder is gone


def test_validate_draft_matches_the_command(tasks: Path) -> None:
    """The app's live findings are the command's findings for the same content."""
    ts = TaskSet.open(tasks)
    s = EditSession.open(ts, "RCA-001")
    s.remove_golden(0)
    s.set_metadata(declared={"golden_length": 7})
    live = {(f.code, f.file, tuple(f.loc)) for f in validate_draft(ts, s.snapshot())}
    s.save(author=AUTHOR)
    cli = run_cli("authoring", "validate", "--json", str(tasks / "rca" / "RCA-001"))
    assert cli.returncode == 1
    import json

    saved = {(f["code"], f["file"]) for f in json.loads(cli.stdout)["findings"]}
    assert {(code, file) for code, file, _ in live} == saved
    assert ("metadata-mismatch", "tasks/rca/RCA-001/hidden.yaml") in saved


def test_edit_keeps_other_lines_and_commits_only_the_task(tasks: Path) -> None:
    ts = TaskSet.open(tasks)
    (tasks / "unrelated.txt").write_text("work in progress\n")
    before = (tasks / "rca" / "RCA-001" / "hidden.yaml").read_text()
    s = EditSession.open(ts, "RCA-001")
    s.set_golden_why(0, "GE0/0/24 is *down: administratively down")
    result = s.save(author=AUTHOR)
    after = (tasks / "rca" / "RCA-001" / "hidden.yaml").read_text()
    changed = [ln for ln in after.splitlines() if ln not in before.splitlines()]
    assert any("administratively down" in ln for ln in changed)
    old, new = yaml_data(before), yaml_data(after)
    assert new["golden_actions"][0]["why"] == "GE0/0/24 is *down: administratively down"
    new["golden_actions"][0]["why"] = old["golden_actions"][0]["why"]
    assert new == old and list(new) == list(old)  # nothing else changed, key order kept
    commit = git.Repo(tasks.parent).head.commit
    assert commit.hexsha == result.commit
    assert list(commit.stats.files) == ["tasks/rca/RCA-001/hidden.yaml"]
    assert (tasks / "unrelated.txt").exists()
    assert trailers(tasks)[TRAILER_ACTION] == "edit"


def test_canonical_commands_and_refusals(tasks: Path) -> None:
    ts = TaskSet.open(tasks)
    s = EditSession.open(ts, "RCA-001")
    device, _ = first_cli_device(ts, s.draft.task.network)
    rec, _ = s.add_recording(device, "  display   version ", b"VRP (R) software\n")
    assert "  " not in rec.command and rec.command.strip() == rec.command
    with pytest.raises(EditError, match="already recorded"):
        s.add_recording(device, "display version", b"again\n")
    s.add_recording(device, "display version", b"new bytes\n", replace=True)
    assert s.read_recording(rec) == b"new bytes\n"
    with pytest.raises(EditError, match="not in network"):
        s.add_recording("NO_SUCH_DEVICE", "display version", b"x\n")
    hosts = [d.name for d in s.network.devices if d.os is None]
    if hosts:
        with pytest.raises(EditError, match="no CLI"):
            s.add_recording(hosts[0], "show version", b"x\n")
    with pytest.raises(EditError, match="no recording"):
        s.add_golden(device, "display this-was-never-recorded", "why")
    with pytest.raises(EditError, match="empty"):
        s.add_recording(device, "display clock", b"")


def test_labels_aliases_and_paths(tasks: Path) -> None:
    ts = TaskSet.open(tasks)
    s = EditSession.open(ts, "RCA-001")
    lab = next(lab for lab in ts.taxonomy.labels if lab.aliases)
    node, iface = first_cli_device(ts, s.draft.task.network)
    triple = s.parse_rca(f"{node};{iface};{lab.aliases[0].upper()}")
    assert triple.label == lab.label  # aliases are stored as the canonical label
    with pytest.raises(EditError, match="did you mean"):
        s.resolve_label(lab.label[:-2] + "xx")
    with pytest.raises(EditError, match="rca task"):
        s.add_path(s.parse_path(_some_path_line(s)))

    p = EditSession.open(ts, "PATH-001")
    line = _some_path_line(p)
    path = p.parse_path(line)
    assert path.hops[-1].egress is None and len(path.hops) >= 2
    with pytest.raises(EditError, match="node_egress-interface"):
        p.parse_path("NOPE_eth0 -> " + path.hops[-1].node)
    with pytest.raises(EditError, match="last hop"):
        p.parse_path(line + "_eth9")


def _some_path_line(s: EditSession) -> str:
    """Two linked nodes of the session's network, written as a path answer."""
    link = s.network.links[0]
    return f"{link.a.node}_{link.a.interface} -> {link.b.node}"


def test_next_hops_follow_the_links(tasks: Path) -> None:
    ts = TaskSet.open(tasks)
    s = EditSession.open(ts, "PATH-001")
    for link in s.network.links:
        hops = s.next_hops(link.a.node)
        assert any(h.egress == link.a.interface and h.neighbour == link.b.node for h in hops)
        back = s.next_hops(link.b.node)
        assert any(h.egress == link.b.interface and h.neighbour == link.a.node for h in back)


def test_metadata_rows_flag_mismatches(tasks: Path) -> None:
    ts = TaskSet.open(tasks)
    s = EditSession.open(ts, "RCA-001")
    s.set_metadata(declared={"golden_length": 99})
    rows = {r.name: r for r in s.metadata_rows()}
    assert rows["golden_length"].mismatch and rows["golden_length"].derived == len(
        s.draft.hidden.golden_actions
    )
    assert not rows["categories"].mismatch
    with pytest.raises(EditError, match="chain_length"):
        s.set_metadata(chain_length=0)


def test_remove_recording_cascades_only_when_asked(tasks: Path) -> None:
    ts = TaskSet.open(tasks)
    s = EditSession.open(ts, "RCA-001")
    act = s.draft.hidden.golden_actions[0]
    with pytest.raises(EditError, match="golden action"):
        s.remove_recording(act.device, act.command)
    _, rec = s.find_recording(act.device, act.command)
    gone = s.remove_recording(act.device, act.command, cascade=True)
    assert [g.key for g in gone] == [act.key]
    s.save(author=AUTHOR)
    assert not (tasks / "rca" / "RCA-001" / rec.file).exists()
    assert act.key not in TaskSet.open(tasks).load_hidden("RCA-001").golden_keys()


def test_network_edits_are_saved_with_the_task(tasks: Path) -> None:
    ts = TaskSet.open(tasks)
    s = EditSession.create(
        ts, "rca", "RCA-901", "lab-two", author=AUTHOR, new_network=Network(name="lab-two", devices=[])
    )
    s.upsert_device(Device(name="R1", vendor="Cisco", os="cisco_ios", type="router", interfaces=["Gi1"]))
    s.upsert_device(
        Device(name="R2", vendor="Juniper", os="juniper_junos", type="router", interfaces=["ge-0/0/0"])
    )
    s.add_link("R1:Gi1", "R2:ge-0/0/0")
    with pytest.raises(EditError, match="already cabled"):
        s.add_link("R1:Gi1", "R2:ge-0/0/1")
    s.set_accessible("R2", False)
    assert s.accessible_devices() == ["R1"]
    s.set_statement(
        "R1 cannot reach R2.\nAnswer with one line per root cause: node;object;root-cause label\n"
    )
    s.save(author=AUTHOR)
    net = TaskSet.open(tasks).network("lab-two")
    assert [d.name for d in net.devices] == ["R1", "R2"] and len(net.links) == 1
    commit = git.Repo(tasks.parent).head.commit
    assert set(commit.stats.files) >= {"tasks/networks/lab-two.yaml", "tasks/rca/RCA-901/task.yaml"}


def test_conflict_detected_before_overwriting(tasks: Path) -> None:
    ts = TaskSet.open(tasks)
    s = EditSession.open(ts, "RCA-001")
    s.set_title("new title")
    task_file = tasks / "rca" / "RCA-001" / "task.yaml"
    task_file.write_text(task_file.read_text().replace("title:", "title: (edited elsewhere)", 1))
    with pytest.raises(ConflictError):
        s.save(author=AUTHOR)
    s.save(author=AUTHOR, force=True)
    assert "new title" in task_file.read_text()


def test_duplicate_and_delete(tasks: Path) -> None:
    ts = TaskSet.open(tasks)
    new_id = next_free_id(ts, Family.RCA)
    s = EditSession.duplicate(ts, "RCA-001", new_id, author=AUTHOR)
    s.save(author=AUTHOR)
    src, dup = tasks / "rca" / "RCA-001", tasks / "rca" / new_id
    for rec in (src / "recordings").rglob("*.txt"):
        assert (dup / rec.relative_to(src)).read_bytes() == rec.read_bytes()
    assert trailers(tasks)[TRAILER_ACTION] == "duplicate"
    assert TaskSet.open(tasks).load_task(new_id).status.value == "draft"
    assert Validator(ts).run([ts.ref(new_id)]).errors == []
    result = delete_task(ts, new_id, author=AUTHOR)
    assert not dup.exists() and result.commit
    assert trailers(tasks) == {TRAILER_TASK: new_id, TRAILER_ACTION: "delete", TRAILER_AUTHOR: AUTHOR}
    with pytest.raises(EditError, match="already exists"):
        EditSession.duplicate(ts, "RCA-001", "RCA-002")


def test_outside_git_saves_without_commit(tmp_path: Path) -> None:
    shutil.copytree(BUNDLED, tmp_path / "tasks")
    ts = TaskSet.open(tmp_path / "tasks")
    s = build_rca(ts, "RCA-902")
    result = s.save(author=AUTHOR)
    assert result.commit is None and "not in a git repository" in result.note
    assert (tmp_path / "tasks" / "rca" / "RCA-902" / "task.yaml").is_file()


def test_draft_roundtrip_keeps_bytes_and_empty_statement(tasks: Path) -> None:
    ts = TaskSet.open(tasks)
    s = build_rca(ts, "RCA-903")
    s.add_recording(first_cli_device(ts, s.draft.task.network)[0], "display clock", b"\x00\xff\r\n  \n")
    s.set_statement("")
    store = DraftStore(ts.root)
    path = store.save(s.snapshot())
    assert (ts.root / ".drafts" / ".gitignore").is_file()
    back = store.load("RCA-903")
    assert isinstance(back, TaskDraft) and back.statement == "" and back.pending == s.draft.pending
    assert [d.task_id for d in store.list()] == ["RCA-903"]
    assert not git.Repo(tasks.parent).untracked_files  # drafts never show up for git
    with pytest.raises(EditError, match="statement is empty"):
        EditSession(ts, back).save(author=AUTHOR)
    store.discard("RCA-903")
    assert not path.exists() and store.list() == []


def test_scripted_commands_build_a_valid_task(tasks: Path, tmp_path: Path) -> None:
    ts = TaskSet.open(tasks)
    network = ts.network_names()[0]
    device, iface = first_cli_device(ts, network)
    env = {"CTBENCH_AUTHOR": AUTHOR}
    stmt = tmp_path / "statement.txt"
    stmt.write_text(
        "The branch office reports that a remote service is unreachable.\n"
        "Answer with one line per root cause: node;object;root-cause label\n"
    )
    out = tmp_path / "out.txt"
    out.write_bytes(f"{iface}  *down  down\r\n".encode())
    base = ["--tasks", str(tasks)]
    steps = [
        [
            "new",
            "--family",
            "rca",
            "--id",
            "RCA-950",
            "--network",
            network,
            "--statement-file",
            str(stmt),
            "--title",
            "Scripted",
        ],
        [
            "add-recording",
            "RCA-950",
            "--device",
            device,
            "--command",
            "display interface brief",
            "--file",
            str(out),
        ],
        [
            "add-golden",
            "RCA-950",
            "--device",
            device,
            "--command",
            "display interface brief",
            "--why",
            "down",
        ],
        ["set-answer", "RCA-950", "--rca", f"{device};{iface};{ts.taxonomy.labels[0].label}"],
    ]
    actions = []
    for args in steps:
        res = run_cli("authoring", *args, *base, env=env)
        assert res.returncode == 0, res.stderr
        actions.append(trailers(tasks)[TRAILER_ACTION])
    assert actions == ["create", "add-recording", "add-golden", "set-answer"]
    res = run_cli("authoring", "validate", str(tasks / "rca" / "RCA-950"))
    assert res.returncode == 0, res.stdout + res.stderr


def test_scripted_commands_explain_bad_input(tasks: Path) -> None:
    base = ["--tasks", str(tasks)]
    res = run_cli("authoring", "set-answer", "PATH-001", "--rca", "a;b;c", *base)
    assert res.returncode == 1 and "path task" in res.stderr and "Traceback" not in res.stderr
    res = run_cli(
        "authoring",
        "add-recording",
        "RCA-001",
        "--device",
        "X",
        "--command",
        "c",
        "--file",
        "/nonexistent",
        *base,
    )
    assert res.returncode == 1 and "no such file" in res.stderr
    res = run_cli("authoring", "new", "--family", "rca", *base)
    assert res.returncode == 2 and "--id" in res.stderr
    res = run_cli("authoring", "add-golden", "NOPE", "--device", "X", "--command", "c", "--why", "w", *base)
    assert res.returncode == 1 and "not found" in res.stderr
    device, _ = first_cli_device(TaskSet.open(tasks), TaskSet.open(tasks).load_task("RCA-001").network)
    res = run_cli(
        "authoring",
        "add-recording",
        "RCA-001",
        "--device",
        device,
        "--command",
        "display x",
        "--file",
        "-",
        "--no-commit",
        "--json",
        *base,
        input="",
    )
    assert res.returncode == 1 and "empty" in res.stderr


def test_a_damaged_draft_cannot_write_outside_the_task(tasks: Path, tmp_path: Path) -> None:
    ts = TaskSet.open(tasks)
    s = build_rca(ts, "RCA-904")
    rec = s.draft.task.recordings[0]
    evil = "recordings/../../../../escaped.txt"
    s.draft.task = s.draft.task.model_copy(update={"recordings": [rec.model_copy(update={"file": evil})]})
    s.draft.pending = {evil: b"x"}
    with pytest.raises(EditError, match="damaged"):
        s.save(author=AUTHOR)
    with pytest.raises(EditError, match="damaged"):
        validate_draft(ts, s.snapshot())
    assert not list(tmp_path.rglob("escaped.txt"))


@pytest.mark.parametrize("where", ["elsewhere", "inside"])
def test_the_validate_hint_works_from_where_the_author_stands(
    tasks: Path, tmp_path: Path, where: str
) -> None:
    """The hint after a save names the task so that pasting it from the same folder validates it."""
    ts = TaskSet.open(tasks)
    network = ts.network_names()[0]
    cwd = tmp_path / "elsewhere" if where == "elsewhere" else tasks / "rca"
    cwd.mkdir(exist_ok=True)
    stmt = tmp_path / "statement.txt"
    stmt.write_text("A remote service is unreachable.\nAnswer: node;object;label\n")
    res = run_cli(
        "authoring",
        "new",
        "--family",
        "rca",
        "--id",
        "RCA-951",
        "--network",
        network,
        "--statement-file",
        str(stmt),
        "--tasks",
        str(tasks),
        cwd=cwd,
        env={"CTBENCH_AUTHOR": AUTHOR},
    )
    assert res.returncode == 0, res.stderr
    hint = res.stderr.rsplit("see: ctb-author validate ", 1)[1].split()[0]
    if where == "inside":
        assert hint == "RCA-951"
    again = run_cli("authoring", "validate", hint, "--json", cwd=cwd)
    assert json.loads(again.stdout)["tasks_checked"] == 1, again.stderr
