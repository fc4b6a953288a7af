"""``ctb-author init``: a task set from nothing, and the scripted authoring commands on it, to review.

Everything runs as the real console commands (subprocesses) in an empty folder, with a real git
repository and a bare remote on disk; no file is copied from the sample set.
"""

from __future__ import annotations

import json
from pathlib import Path

import git
import pytest

from tests.conftest import BUNDLED, run_cli

IDENTITY = {
    "GIT_AUTHOR_NAME": "Nora Noc",
    "GIT_AUTHOR_EMAIL": "nora@example.org",
    "GIT_COMMITTER_NAME": "Nora Noc",
    "GIT_COMMITTER_EMAIL": "nora@example.org",
}
STATEMENT = (
    "Users behind ACC_SW_01 lose the gateway GW_01 since 09:40; CORE_SW_01 answers ping.\n\n"
    "Answer with one line per root cause: node;object;root-cause label\n"
)
CAPTURE = (
    b"[2026-12-01 09:41:00] <CORE_SW_01>dis int br\r\n"
    b"[2026-12-01 09:41:00] Interface                   PHY   Protocol InUti OutUti   inErrors  outErrors\r\n"
    b"[2026-12-01 09:41:00] GigabitEthernet0/0/1        up    up          0%     0%          0          0\r\n"
    b"[2026-12-01 09:41:00] GigabitEthernet0/0/2        *down down        0%     0%          0          0\r\n"
    b"[2026-12-01 09:41:01] <CORE_SW_01>"
)


def ctb(*args: str, cwd: Path, component: str = "authoring") -> str:
    res = run_cli(component, *args, cwd=cwd, env=IDENTITY)
    assert res.returncode == 0, (args, res.stdout, res.stderr)
    return res.stdout


def test_init_then_author_validate_and_submit_from_an_empty_folder(tmp_path: Path) -> None:
    folder = tmp_path / "noc-bench"
    out = json.loads(ctb("init", str(folder), "--json", cwd=tmp_path))
    for rel in (
        "ctbench.yaml",
        "taxonomy.yaml",
        "networks/example-lab.yaml",
        "schema/task.schema.json",
        ".gitattributes",
        ".gitignore",
        "reviewers.example.yaml",
        ".pre-commit-config.yaml",
    ):
        assert (folder / rel).is_file(), rel
    assert "runs/" in (folder / ".gitignore").read_text().splitlines()
    assert "recordings" in (folder / ".gitattributes").read_text()
    sample_canary = (BUNDLED / "ctbench.yaml").read_text()
    assert out["canary"] in (folder / "ctbench.yaml").read_text() and out["canary"] not in sample_canary
    again = json.loads(ctb("init", str(tmp_path / "other"), "--json", "--no-git", cwd=tmp_path))
    assert again["canary"] != out["canary"]  # each set its own
    repo = git.Repo(folder)
    assert repo.active_branch.name == "main" and out["commit"] == repo.head.commit.hexsha
    assert not repo.is_dirty(untracked_files=True)

    (tmp_path / "case.txt").write_text(STATEMENT)
    (tmp_path / "securecrt.log").write_bytes(CAPTURE)
    tasks = ("--tasks", str(folder))
    ctb(
        "new",
        "--family",
        "rca",
        "--id",
        "RCA-001",
        "--network",
        "example-lab",
        "--statement-file",
        str(tmp_path / "case.txt"),
        *tasks,
        cwd=folder,
    )
    ctb("import-capture", str(tmp_path / "securecrt.log"), "--task", "RCA-001", *tasks, cwd=folder)
    ctb("set-answer", "RCA-001", "--rca", "CORE_SW_01;GigabitEthernet0/0/2;shutdown", *tasks, cwd=folder)
    ctb(
        "add-golden",
        "RCA-001",
        "--device",
        "CORE_SW_01",
        "--command",
        "display interface brief",
        "--why",
        "GE0/0/2 towards GW_01 is administratively down",
        *tasks,
        cwd=folder,
    )
    ctb(
        "set-metadata",
        "RCA-001",
        "observability=O1",
        "chain_length=1",
        "protocol_mechanisms=interface",
        "declared.golden_length=1",
        "rationale=The interface brief shows the uplink shut down.",
        *tasks,
        cwd=folder,
    )
    report = json.loads(ctb("validate", "--json", str(folder), cwd=folder))
    assert report["findings"] == [], report["findings"]

    hidden = (folder / "rca/RCA-001/hidden.yaml").read_text()
    assert "observability: O1" in hidden and "golden_length: 1" in hidden
    assert (
        (folder / "rca/RCA-001/recordings/CORE_SW_01/display_interface_brief.txt")
        .read_bytes()
        .startswith(b"Interface                   PHY")
    )  # the timestamps went, the output stayed

    remote = tmp_path / "origin.git"
    git.Repo.init(remote, bare=True)
    repo.create_remote("origin", str(remote))
    repo.git.push("-q", "origin", "main")
    ctb("submit", "RCA-001", *tasks, cwd=folder, component="review")
    assert "review/RCA-001" in [r.remote_head for r in repo.remote("origin").refs]


def test_init_never_overwrites_and_set_metadata_says_what_it_expects(tmp_path: Path) -> None:
    folder = tmp_path / "set"
    ctb("init", str(folder), "--no-git", cwd=tmp_path)
    before = (folder / "ctbench.yaml").read_text()
    res = run_cli("authoring", "init", str(folder), cwd=tmp_path)
    assert (
        res.returncode == 1 and "already holds ctbench.yaml" in res.stderr and "Traceback" not in res.stderr
    )
    assert (folder / "ctbench.yaml").read_text() == before

    res = run_cli("authoring", "set-metadata", "RCA-001", "colour=blue", "--tasks", str(folder), cwd=tmp_path)
    assert res.returncode == 2 and "unknown field 'colour'" in res.stderr and "observability" in res.stderr


def test_the_packaged_taxonomy_is_the_sample_sets() -> None:
    """init writes the paper's taxonomy from ctbench's own copy; it must not drift from the sample's."""
    from ctbench.authoring.init_set import taxonomy_text

    assert taxonomy_text() == (BUNDLED / "taxonomy.yaml").read_text(encoding="utf-8")


def test_set_metadata_on_a_sealed_set(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """hidden.yaml.age cannot be edited by hand; set-metadata opens it with the author's key and reseals."""
    pytest.importorskip("pyrage")
    from ctbench.sealing import stanza_count
    from ctbench.store import TaskSet
    from tests.test_review_sealed import Sealed, author_cli

    s = Sealed(tmp_path)
    at = s.clone("alice") / "tasks"
    monkeypatch.setenv("CTBENCH_AGE_IDENTITY", str(s.keys["alice"]))
    args = ("set-metadata", "RCA-102", "chain_length=3", "rationale=The shutdown shows in the brief.")
    code, _, err = author_cli(*args, "--tasks", str(at), "--author", "alice")
    assert code == 0, err
    folder = at / "rca" / "RCA-102"
    assert not (folder / "hidden.yaml").exists()  # never written in plain
    assert stanza_count((folder / "hidden.yaml.age").read_bytes()) == 2  # the same recipients
    hidden = TaskSet.open(at, identity=s.keys["maint"]).load_hidden("RCA-102")
    assert hidden.metadata.chain_length == 3 and hidden.rationale == "The shutdown shows in the brief."


def test_a_set_inside_a_repository_on_master_is_reviewed_against_master(tmp_path: Path) -> None:
    """``git init`` may still call the first branch master: the set's review then starts from master,
    where ``ctb-review submit`` would otherwise stop with "no branch 'main' to start from"."""
    from ctbench.store import TaskSet

    git.Repo.init(tmp_path / "repo", initial_branch="master")
    ctb("init", str(tmp_path / "repo" / "bench"), cwd=tmp_path)
    assert TaskSet.open(tmp_path / "repo" / "bench").config.review.main_branch == "master"
    ctb("init", str(tmp_path / "fresh"), cwd=tmp_path)  # its own repository: branch main
    assert TaskSet.open(tmp_path / "fresh").config.review.main_branch == "main"
