"""The bundled set reviewed through ``ctb-review`` by a team with signed steps, then released without
``--allow-unreviewed``: what issue 31's "Done when" asks of a release, checked as a user would.

The team of tests/team_support.py (real ssh-keygen keys in ``reviewers.yaml``, one clone each, a bare
remote) takes all 34 bundled tasks through the review workflow of docs/review.md: the authors submit
(alice the RCA tasks, carol the path and topology tasks: the seed commit names them and sets the tasks back to
draft, as a set looks before its first review), the maintainer assigns reviewers in one batch
(``ctb-review assign --apply``), each reviewer solves blind, reveals and agrees on the four criteria,
and the maintainer merges. Every step is a commit signed by its actor. Then ``ctb-author release``
retains all 34 on the gate's own terms (approved, unchanged, valid, signatures verified), ``datasets``
loads the release three ways, ``import-release`` gives the published content hashes back, the oracle
runs on the release folder, and ``ctb-eval export --format release`` publishes the run's results
citing the release. The whole world is built once for the module, in its own xdist group.
"""

from __future__ import annotations

import json
import re
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from ctbench.approval.gate import content_hash
from ctbench.model import Family
from ctbench.releases import load_manifest, manifest_hash
from ctbench.store import TaskSet
from ctbench.yamlio import load_fast
from tests.conftest import run_cli
from tests.leaderboard_site_rules import check_agent_details, check_leaderboard
from tests.release_support import author_cli, check_rows, gold_strings, readable_text
from tests.review_support import REPO, git
from tests.team_support import PEOPLE, Team, email, make_keys, reviewers_yaml

datasets = pytest.importorskip("datasets")
pytest.importorskip("pyarrow")

# ~150 signed review steps (about a minute of CPU) in the module's first fixture: its own group, and
# room beyond the suite's 300 s per test for a machine busy with other work.
pytestmark = [pytest.mark.xdist_group("release-reviewed"), pytest.mark.timeout(1200)]

VERSION = "1.0.0"
BUNDLED = TaskSet.open(REPO / "tasks")
BY_FAMILY = {"rca": 19, "path": 11, "topology": 4}
N_TASKS, N_RECORDINGS = sum(BY_FAMILY.values()), 359


@dataclass
class Reviewed:
    team: Team
    out: Path
    gold: Path
    summary: dict[str, Any]
    reviewers: dict[str, str]

    @property
    def tasks(self) -> Path:
        return self.team.tasks("maint")


def bundled_team(root: Path) -> tuple[Team, dict[str, Path]]:
    """The bundled set on the team's remote as drafts of alice (RCA) and carol (path, topology), and each task's
    gold answer as its reviewer will type it (the test plays reviewers who solve every task)."""
    root.mkdir(parents=True)
    team = Team(root, make_keys(root / "keys"))
    git("init", "-q", "--bare", "-b", "main", str(team.remote), cwd=root)
    seed = root / "seed"
    git("init", "-q", "-b", "main", str(seed), cwd=root)
    git("config", "user.name", PEOPLE["maint"][0], cwd=seed)
    git("config", "user.email", email("maint"), cwd=seed)
    tasks = seed / "tasks"
    shutil.copytree(REPO / "tasks", tasks)
    shutil.copy(REPO / ".gitattributes", seed / ".gitattributes")
    # capacity for the whole set: two reviewers share 34 tasks; dave knows the third family too
    people = reviewers_yaml(team.keys).replace("capacity: 3", "capacity: 40")
    (tasks / "reviewers.yaml").write_text(
        people.replace("domains: [rca, path]", "domains: [rca, path, topology]")
    )
    config = tasks / "ctbench.yaml"
    config.write_text(config.read_text().replace("unreviewed_seed: true", "unreviewed_seed: false"))
    answers: dict[str, Path] = {}
    for ref in BUNDLED.refs():
        task_file = tasks / ref.family.value / ref.id / "task.yaml"
        author = "alice" if ref.family == Family.RCA else "carol"
        text = task_file.read_text().replace("\nstatus: approved\n", "\nstatus: draft\n", 1)
        text, n = re.subn(r"^authors: \[.*\]$", f"authors: [{author}]", text, count=1, flags=re.M)
        assert n == 1, ref.id
        task_file.write_text(text)
        answers[ref.id] = root / f"{ref.id}.answer"
        answers[ref.id].write_text("\n".join(BUNDLED.load_hidden(ref).gold_answer_lines(ref.family)) + "\n")
    git("add", "-A", cwd=seed)
    git("commit", "-q", "-m", "the bundled set, before its first review", cwd=seed)
    git("remote", "add", "origin", str(team.remote), cwd=seed)
    git("push", "-q", "origin", "main", cwd=seed)
    shutil.rmtree(seed)
    return team, answers


@pytest.fixture(scope="module")
def reviewed(tmp_path_factory: pytest.TempPathFactory) -> Reviewed:
    root = tmp_path_factory.mktemp("reviewed-release")
    team, answers = bundled_team(root / "team")
    refs = BUNDLED.refs()
    assert len(refs) == N_TASKS
    for ref in refs:
        team.review("alice" if ref.family == Family.RCA else "carol", "submit", ref.id)
    assigned = team.review("maint", "assign", "--apply")  # one batch: every waiting task
    reviewers = dict(re.findall(r"^(\S+) round 1 assigned to (\w+)$", assigned, re.M))
    assert sorted(reviewers) == sorted(r.id for r in refs), assigned
    for ref in refs:
        team.review(reviewers[ref.id], "blind", ref.id, "--answer", str(answers[ref.id]))
        team.review(reviewers[ref.id], "reveal", ref.id, "--all-agree")
        team.review("maint", "merge", ref.id)
    out, gold = root / "release", root / "release-gold"
    proc = author_cli(
        "release", VERSION, "--tasks", str(team.tasks("maint")), "--out", str(out), "--gold-out", str(gold),
        "--license", "cc-by-4.0", "--json", cwd=root,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    return Reviewed(team, out, gold, json.loads(proc.stdout), reviewers)


def test_every_reviewed_task_is_retained_without_the_override(reviewed: Reviewed) -> None:
    assert reviewed.summary["excluded"] == [] and len(reviewed.summary["tasks"]) == N_TASKS
    m = load_manifest(reviewed.out)
    assert m.version == VERSION and len(m.tasks) == N_TASKS and m.excluded == []
    assert m.counts["recordings"] == N_RECORDINGS and m.counts["by_family"] == BY_FAMILY
    assert m.review["reviewed"] == N_TASKS and m.review["unreviewed"] == []
    assert m.review["blind_exact"] == f"{N_TASKS}/{N_TASKS}" and m.review["approved_first_round"] == N_TASKS
    assert m.review["reviewers"] == sorted(set(reviewed.reviewers.values()))
    assert len(m.task_set["commit"]) == 40 and not m.task_set["dirty"]
    ts = TaskSet.open(reviewed.tasks)
    for t in m.tasks:
        # the reviewed task is the bundled task: review changed its status and authors, no reviewed part
        assert t.content_hash == content_hash(ts.ref(t.id).path, ts) == content_hash(BUNDLED.ref(t.id).path)
        assert f"Blind solve by {reviewed.reviewers[t.id]} (round 1)" in t.blindness
        assert "before the gold was revealed" in t.blindness and "Blind by honour" in t.blindness
        assert "SSH-signed by the person it names, and verified" in t.blindness
    card = (reviewed.out / "README.md").read_text(encoding="utf-8")
    assert "Not reviewed" not in card and f"{N_TASKS} reviewed blind by 2 reviewer(s)" in card


def test_datasets_loads_the_release_three_ways_byte_exact(reviewed: Reviewed, tmp_path: Path) -> None:
    out, cache = reviewed.out, str(tmp_path / "hf")
    header = load_fast(Path("README.md"), (out / "README.md").read_text(encoding="utf-8").split("---\n")[1])
    assert [c["config_name"] for c in header["configs"]] == ["tasks", "networks"]
    assert header["canary"] == BUNDLED.config.canary
    loaded = {
        "json": datasets.load_dataset(
            "json", data_files={"test": str(out / "json" / "tasks.jsonl")}, split="test", cache_dir=cache
        ),
        "parquet": datasets.load_dataset(
            "parquet", data_files={"test": str(out / "tasks" / "*.parquet")}, split="test", cache_dir=cache
        ),
        "folder": datasets.load_dataset(str(out), "tasks", split="test", cache_dir=cache),
    }
    for how, ds in loaded.items():
        assert ds.num_rows == N_TASKS, how
        assert sorted(ds["id"]) == sorted(r.id for r in BUNDLED.refs())
        # every recording byte-identical to the bundled file (and to its sha256), the canary in every row
        assert check_rows(list(ds), BUNDLED, b64=how == "json") == N_RECORDINGS, how
    networks = datasets.load_dataset(str(out), "networks", split="test", cache_dir=cache)
    assert sorted(networks["name"]) == sorted({BUNDLED.load_task(r).network for r in BUNDLED.refs()})


def test_no_gold_anywhere_under_the_public_folder(reviewed: Reviewed) -> None:
    ids = [r.id for r in BUNDLED.refs()]
    secrets = gold_strings(BUNDLED, ids)
    assert len(secrets) > 4 * len(ids)
    public = readable_text(reviewed.out)
    assert [s for s in secrets if s in public] == []
    assert not list(reviewed.out.rglob("hidden.yaml*")) and not list(reviewed.out.rglob("reviews"))
    # the scan finds gold where it is: the gold folder holds every hidden.yaml verbatim, so every task's
    # golden-action and metadata sections are found there
    private = readable_text(reviewed.gold)
    sections = [s for s in secrets if s.startswith(("golden_actions:", "metadata:"))]
    assert len(sections) == 2 * N_TASKS and all(s in private for s in sections)


@pytest.fixture(scope="module")
def oracle_run(reviewed: Reviewed, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``ctb-eval run --agent oracle`` on the release folder itself, its gold beside it."""
    root = tmp_path_factory.mktemp("oracle-on-release")
    run_dir = root / "run"
    proc = run_cli(
        "evaluate", "run", "--agent", "oracle", "--tasks", str(reviewed.out), "--gold", str(reviewed.gold),
        "--out", str(run_dir), cwd=root, timeout=600, env={"CTBENCH_RELEASE_DIR": str(root / "cache")},
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return run_dir


def test_import_back_gives_the_published_hashes(reviewed: Reviewed, tmp_path: Path) -> None:
    back = tmp_path / "back"
    proc = author_cli("import-release", str(reviewed.out), "--gold", str(reviewed.gold), "--out", str(back),
                      cwd=tmp_path)  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    ts = TaskSet.open(back)
    m = load_manifest(back)
    assert manifest_hash(back) == manifest_hash(reviewed.out) and len(ts.refs()) == N_TASKS
    assert {t.id: content_hash(ts.ref(t.id).path, ts) for t in m.tasks} == {
        t.id: t.content_hash for t in m.tasks
    }


def test_the_oracle_on_the_release_names_it(reviewed: Reviewed, oracle_run: Path) -> None:
    config = load_fast(oracle_run / "run.yaml")
    assert len(config["tasks"]) == N_TASKS and config["unreviewed"] == [] and config["skipped"] == []
    assert config["settings"]["allow_unreviewed"] is False
    assert config["task_set"]["release"] == VERSION
    assert config["task_set"]["release_hash"] == manifest_hash(reviewed.out)
    scores = json.loads((oracle_run / "scores.json").read_text())
    assert scores["run"]["release"] == {"version": VERSION, "manifest_hash": manifest_hash(reviewed.out)}
    assert all(scores["summary"][fam]["accuracy"] == 1.0 for fam in BY_FAMILY)
    report = run_cli(
        "evaluate", "report", str(oracle_run), "--format", "md", cwd=oracle_run.parent, timeout=300
    )
    assert report.returncode == 0, report.stderr
    assert f"release {VERSION}" in report.stdout


def test_the_run_exported_as_results_of_the_release(
    reviewed: Reviewed, oracle_run: Path, tmp_path: Path
) -> None:
    out = tmp_path / "results"
    proc = run_cli(
        "evaluate", "export", str(oracle_run), "--format", "release", "--out", str(out), "--tasks",
        str(reviewed.out), "--gold", str(reviewed.gold), "--url", "https://example.net/ctbench-results",
        "--resamples", "200", "--json", cwd=tmp_path, timeout=600,
        env={"CTBENCH_RELEASE_DIR": str(oracle_run.parent / "cache")},
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr
    m = load_manifest(reviewed.out)
    header = load_fast(Path("README.md"), (out / "README.md").read_text(encoding="utf-8").split("---\n")[1])
    assert [c["config_name"] for c in header["configs"]] == ["runs", "results"]
    assert header["ctbench_release"] == {
        "name": m.name,
        "version": VERSION,
        "manifest_sha256": manifest_hash(reviewed.out),
    }
    cache = str(tmp_path / "hf")
    runs = datasets.load_dataset(str(out), "runs", split="test", cache_dir=cache)
    results = datasets.load_dataset(str(out), "results", split="test", cache_dir=cache)
    by_json = datasets.load_dataset(
        "json", data_files={"test": str(out / "json" / "results.jsonl")}, split="test", cache_dir=cache
    )
    assert runs.num_rows == 1 and runs[0]["release"] == VERSION
    assert all(
        runs[0][f"{fam}_accuracy"] == 100.0 and runs[0][f"{fam}_tasks"] == n for fam, n in BY_FAMILY.items()
    )
    assert results.num_rows == by_json.num_rows == N_TASKS
    published = {t.id: t.content_hash for t in m.tasks}
    assert {r["id"]: r["content_hash"] for r in results} == published
    assert all(r["correct"] for r in results)
    # a result row is scores only: no answer, no gold, even though every answer here is the gold
    public = readable_text(out)
    assert [s for s in gold_strings(BUNDLED, list(published)) if s in public] == []
    # the leaderboard files in the folder are the site's, for the release's task counts
    board = json.loads((out / "leaderboard.json").read_text())
    assert board["label"] == f"{m.name} {VERSION}"
    check_leaderboard(board, tasks=BY_FAMILY)  # every family the release holds (c1a5f7b)
    check_agent_details(json.loads((out / "agent-details.json").read_text()), board)  # topology too
