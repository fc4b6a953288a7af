"""The review pipeline on real git repositories with a bare remote on disk."""

from __future__ import annotations

import contextlib
import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from ctbench.approval.records import load_records
from ctbench.approval.states import Criterion, Verdict
from ctbench.yamlio import load_document, save_document
from tests.review_support import (
    RCA_ANSWER,
    RCA_COMMANDS,
    REPO,
    World,
    copy_world,
    git,
    make_world,
    ok,
    refused,
    review,
    trailers,
)


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> World:
    return make_world(tmp_path_factory.mktemp("review-template") / "w")


@pytest.fixture
def world(template: World, tmp_path: Path) -> World:
    return copy_world(template, tmp_path / "w")


@pytest.fixture
def answers(tmp_path: Path) -> dict[str, str]:
    files = {"rca": RCA_ANSWER, "cmds": RCA_COMMANDS, "path": "ACC_SW_01_GE1/0/1 -> CORE_SW_01\n"}
    out = {}
    for name, text in files.items():
        p = tmp_path / f"{name}.txt"
        p.write_text(text)
        out[name] = str(p)
    return out


def cli(component: str, *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    env.pop("CTBENCH_DEBUG", None)
    return subprocess.run(
        [sys.executable, "-m", f"ctbench.{component}.cli", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def status_of(tasks: Path, family: str, task_id: str) -> str:
    return str(load_document(tasks / family / task_id / "task.yaml")["status"])


def approve_quickly(world: World, answers: dict[str, str], task_id: str = "RCA-101") -> None:
    t = world.tasks
    ok("submit", task_id, "--as", "alice", tasks=t)
    ok("blind", task_id, "--as", "bob", "--answer", answers["rca"], "--commands", answers["cmds"], tasks=t)
    ok("reveal", task_id, "--as", "bob", "--all-agree", tasks=t)
    assert status_of(t, "rca", task_id) == "approved"


# --------------------------------------------------------------------------- the whole story


def test_end_to_end_consensus_merge_eval_discard_status_audit(
    world: World, answers: dict[str, str], tmp_path: Path
) -> None:
    author = world.clone("alice")
    reviewer = world.clone("bob")
    a_tasks, b_tasks, m_tasks = author / "tasks", reviewer / "tasks", world.tasks

    # the author submits from their clone: a review branch, a round, pushed
    out = ok("submit", "RCA-101", "--as", "alice", tasks=a_tasks)
    assert "round 1" in out
    assert git("rev-parse", "--abbrev-ref", "HEAD", cwd=author) == "review/RCA-101"
    assert trailers(author)["Ctbench-Action"] == "submit"
    assert git("ls-remote", str(world.remote), "review/RCA-101", cwd=author)

    # the maintainer sees the proposal (erin: Huawei, Cisco, rca), assigns bob by hand, never leaving main
    out = ok("assign", "--as", "maint", tasks=m_tasks)
    assert "RCA-101 round 1: erin  (Cisco, Huawei, rca)" in out
    ok("assign", "RCA-101", "--reviewer", "bob", "--apply", "--as", "maint", tasks=m_tasks)
    assert git("rev-parse", "--abbrev-ref", "HEAD", cwd=world.work) == "main"
    assert git("status", "--porcelain", cwd=world.work) == ""
    assert "solve blind" in ok("queue", "bob", tasks=b_tasks)

    # the reviewer solves blind in their clone (replayed commands), then reveals and disagrees once
    refused("reveal", "RCA-101", "--as", "bob", tasks=b_tasks)
    out = ok(
        "blind",
        "RCA-101",
        "--as",
        "bob",
        "--answer",
        answers["rca"],
        "--commands",
        answers["cmds"],
        "--minutes",
        "14",
        tasks=b_tasks,
    )
    blind_sha = git("rev-parse", "HEAD", cwd=reviewer)
    assert trailers(reviewer)["Ctbench-Action"] == "blind"
    assert git("rev-parse", "origin/review/RCA-101", cwd=reviewer) == blind_sha  # pushed before any reveal
    out = ok(
        "reveal",
        "RCA-101",
        "--as",
        "bob",
        "--agree",
        "solvability",
        "completeness",
        "golden",
        "--disagree",
        "metadata",
        "the chain is 3 long: shutdown, Vlanif24 down, default route gone",
        tasks=b_tasks,
    )
    assert "exact match: yes" in out and "needs revision" in out
    assert status_of(b_tasks, "rca", "RCA-101") == "needs_revision"
    rec = load_records(b_tasks / "rca" / "RCA-101")[-1]
    assert rec.blind is not None and rec.blind.answer == RCA_ANSWER and rec.blind.answer_intact()
    assert rec.blind.commands == 3 and rec.blind.time_spent_s == 14 * 60
    assert rec.comparison is not None and rec.comparison.exact
    assert rec.comparison.golden_missed == [["CORE_SW_01", "display ip routing-table"]]
    assert rec.criteria[Criterion.METADATA_CORRECTNESS].verdict == Verdict.DISAGREE
    log = git(
        "log",
        "--format=%(trailers:key=Ctbench-Action,valueonly)%(trailers:key=Ctbench-Criterion,valueonly)",
        cwd=reviewer,
    )
    assert "verdict\nmetadata_correctness" in log

    # the author revises on the review branch and answers
    out = ok("checkout", "RCA-101", "--as", "alice", tasks=a_tasks)
    assert "metadata correctness: disagree" in out and "bob (reviewer, disagree): the chain is 3 long" in out
    assert status_of(a_tasks, "rca", "RCA-101") == "needs_revision"
    err = refused("respond", "RCA-101", "--as", "alice", "--concede", "metadata", "fixed", tasks=a_tasks)
    assert "did not change" in err
    hidden = a_tasks / "rca" / "RCA-101" / "hidden.yaml"
    doc = load_document(hidden)
    doc["metadata"]["chain_length"] = 3
    save_document(hidden, doc)
    out = ok(
        "respond",
        "RCA-101",
        "--as",
        "alice",
        "--concede",
        "metadata",
        "chain_length is 3 now",
        "--why",
        "chain_length 2 -> 3",
        tasks=a_tasks,
    )
    assert "round 2" in out and "open: metadata correctness" in out
    r2 = load_records(a_tasks / "rca" / "RCA-101")[-1]
    assert r2.round == 2 and r2.open_criteria() == [Criterion.METADATA_CORRECTNESS]
    assert all(r2.criteria[c].carried for c in r2.criteria if c != Criterion.METADATA_CORRECTNESS)

    # the reviewer agrees in round 2 (no second blind solve: the first answer stands)
    refused("blind", "RCA-101", "--as", "bob", "--answer", answers["rca"], tasks=b_tasks)
    out = ok("reveal", "RCA-101", "--as", "bob", "--agree", "metadata", tasks=b_tasks)
    assert "approved" in out
    pr = tmp_path / "pr.md"
    ok("pr", "RCA-101", "--out", str(pr), tasks=b_tasks)
    text = pr.read_text()
    for needle in (
        "## Review of RCA-101",
        "**approved** after 2 round(s)",
        "### Blind result vs gold",
        "### Open disagreements",
        "None.",
        "changed `hidden.yaml: metadata.chain_length`: `2` → `3`",
        "before the reveal",
    ):
        assert needle in text, needle

    # the maintainer merges; a second task is discarded with its reason and merged as such
    out = ok("merge", "RCA-101", "--as", "maint", tasks=m_tasks)
    assert "merged review/RCA-101 into main" in out
    assert status_of(m_tasks, "rca", "RCA-101") == "approved"
    assert len(git("log", "-1", "--format=%P", cwd=world.work).split()) == 2  # a merge commit keeps history
    ok("submit", "PATH-101", "--as", "carol", tasks=m_tasks)
    ok("blind", "PATH-101", "--as", "dave", "--answer", answers["path"], tasks=m_tasks)
    ok(
        "reveal",
        "PATH-101",
        "--as",
        "dave",
        "--disagree",
        "solvability",
        "no recording shows FW_01's egress",
        "--agree",
        "completeness",
        "golden",
        "metadata",
        tasks=m_tasks,
    )
    refused("discard", "PATH-101", "--as", "maint", "--reason", " ", tasks=m_tasks)
    ok(
        "discard",
        "PATH-101",
        "--as",
        "maint",
        "--reason",
        "consensus unreachable: FW_01 egress unrecorded",
        tasks=m_tasks,
    )
    ok("merge", "PATH-101", "--as", "maint", tasks=m_tasks)
    assert status_of(m_tasks, "path", "PATH-101") == "discarded"
    assert load_records(m_tasks / "path" / "PATH-101")[-1].discard_reason.startswith("consensus unreachable")

    # the real console scripts: status prints the yields, audit proves blindness for both
    st = cli("review", "status", "--tasks", "tasks", cwd=world.work)
    assert st.returncode == 0, st.stderr
    assert "Review yields" in st.stdout and "100.00" in st.stdout and "50.00" in st.stdout
    js = json.loads(ok("status", "--json", tasks=m_tasks))
    assert js["families"]["rca"] == {
        **js["families"]["rca"],
        "candidates": 1,
        "retained": 1,
        "yield_pct": 100.0,
        "revised_before_consensus": 1,
        "blind_accuracy_pct": 100.0,
    }
    assert js["families"]["path"]["discarded"] == 1 and js["total"]["yield_pct"] == 50.0
    audit = cli("review", "audit", "--tasks", "tasks", cwd=world.work)
    assert audit.returncode == 0, audit.stdout + audit.stderr
    assert "RCA-101 (approved): ok" in audit.stdout and "PATH-101 (discarded): ok" in audit.stdout
    assert audit.stdout.count("before the reveal") == 3  # two rounds of RCA-101, one of PATH-101

    # the approved task is what `ctb-eval run` selects by default
    run_dir = tmp_path / "run"
    ev = cli(
        "evaluate",
        "run",
        "--agent",
        "null",
        "--tasks",
        "tasks",
        "--out",
        str(run_dir),
        "--progress",
        "none",
        "--no-score",
        cwd=world.work,
    )
    assert ev.returncode == 0, ev.stderr
    ran = [json.loads(line)["task_id"] for line in (run_dir / "results.jsonl").read_text().splitlines()]
    assert ran == ["RCA-101"]
    # ctb-author stats counts candidates through review.history.review_counts
    from ctbench.review.history import review_counts
    from ctbench.store import TaskSet

    counts = review_counts(TaskSet.open(m_tasks))
    assert counts["rca"] == {"candidates": 1} and counts["path"] == {"candidates": 1}
    assert all(c == {"candidates": 0} for f, c in counts.items() if f not in ("rca", "path")), counts
    git("merge-base", "--is-ancestor", blind_sha, "main", cwd=world.work)  # the blind commit is in main


# --------------------------------------------------------------------------- blindness guards


def test_reveal_refused_until_the_blind_answer_is_a_commit(world: World, answers: dict[str, str]) -> None:
    t = world.tasks
    ok("submit", "RCA-101", "--as", "alice", tasks=t)
    err = refused("reveal", "RCA-101", "--as", "bob", tasks=t)
    assert "no blind answer by bob is committed" in err and "gold stays hidden" in err
    # a blind answer written into the record by hand, not committed: refused (and never read as proof)
    from ctbench.approval.hashes import sha256_text
    from ctbench.approval.records import BlindSolve, record_rel, render_record, utcnow

    folder = t / "rca" / "RCA-101"
    rec = load_records(folder)[-1]
    now = utcnow()
    rec.reviewer = "bob"
    rec.blind = BlindSolve(
        reviewer="bob",
        started=now,
        submitted=now,
        time_spent_s=1,
        answer=RCA_ANSWER,
        answer_sha256=sha256_text(RCA_ANSWER),
    )
    path = folder / record_rel(1)
    path.write_text(render_record(rec, path.read_text(), path))
    err = refused("reveal", "RCA-101", "--as", "bob", tasks=t)
    assert "uncommitted changes" in err
    # committed with plain git (no blind step, no trailers): still refused
    git("commit", "-qam", "sneaky", cwd=world.work)
    err = refused("reveal", "RCA-101", "--as", "bob", tasks=t)
    assert "is not committed" in err
    assert load_records(folder)[-1].comparison is None


def test_authors_and_other_reviewers_are_kept_out(world: World, answers: dict[str, str]) -> None:
    t = world.tasks
    ok("submit", "RCA-101", "--as", "alice", tasks=t)
    assert "author" in refused("blind", "RCA-101", "--as", "alice", "--answer", answers["rca"], tasks=t)
    ok("assign", "RCA-101", "--reviewer", "erin", "--apply", "--as", "maint", tasks=t)
    assert "assigned to erin" in refused(
        "blind", "RCA-101", "--as", "bob", "--answer", answers["rca"], tasks=t
    )
    assert "author" in refused("assign", "RCA-101", "--reviewer", "alice", "--apply", tasks=t)


# --------------------------------------------------------------------------- reopening by content hash


def test_recording_edit_after_approval_reopens_solvability_and_golden_consistency_only(
    world: World, answers: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    t = world.tasks
    approve_quickly(world, answers)
    ok("merge", "RCA-101", "--as", "maint", tasks=t)
    ok("audit", tasks=t)
    # the author replaces a recording with ctb-author (its own commit, with its own trailers)
    rec_file = t / "rca" / "RCA-101" / "recordings" / "CORE_SW_01" / "display_interface_brief.txt"
    new_capture = world.root / "capture.txt"
    new_capture.write_bytes(rec_file.read_bytes().replace(b"down", b"DOWN", 1))
    from ctbench.authoring.cli import main as author_main

    errors = io.StringIO()
    monkeypatch.setenv("GIT_AUTHOR_NAME", "alice")  # alice's edit, as from her clone
    monkeypatch.setenv("GIT_AUTHOR_EMAIL", "alice@example.net")
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(errors):
        code = author_main(
            [
                "add-recording",
                "RCA-101",
                "--tasks",
                str(t),
                "--device",
                "CORE_SW_01",
                "--command",
                "display interface brief",
                "--file",
                str(new_capture),
                "--replace",
                "--author",
                "alice",
            ]
        )
    assert code == 0, errors.getvalue()
    assert rec_file.read_bytes() == new_capture.read_bytes()
    assert git("status", "--porcelain", cwd=world.work) == ""  # ctb-author committed it

    # no silent edit after approval: ctb-author moved it back to draft and said what the change reopens
    said = errors.getvalue()
    assert status_of(t, "rca", "RCA-101") == "draft"
    assert "approved -> draft" in said and "solvability (recordings)" in said
    assert "golden-action consistency (recordings)" in said
    assert "answer completeness" not in said and "metadata correctness" not in said

    out = ok("submit", "RCA-101", "--as", "alice", tasks=t)
    assert "reopened: solvability, golden-action consistency" in out
    rec = load_records(t / "rca" / "RCA-101")[-1]
    assert rec.round == 2
    assert set(rec.open_criteria()) == {Criterion.SOLVABILITY, Criterion.GOLDEN_ACTION_CONSISTENCY}
    assert rec.criteria[Criterion.SOLVABILITY].reopened_by == ["recordings"]
    assert rec.criteria[Criterion.ANSWER_COMPLETENESS].carried
    assert rec.criteria[Criterion.METADATA_CORRECTNESS].carried
    assert "already solved" in refused("blind", "RCA-101", "--as", "bob", "--answer", answers["rca"], tasks=t)
    out = ok("reveal", "RCA-101", "--as", "bob", "--agree", "solvability", "golden", tasks=t)
    assert "approved" in out
    ok("merge", "RCA-101", "--as", "maint", tasks=t)
    assert "RCA-101 (approved): ok" in ok("audit", tasks=t)
    # nothing changed since: a resubmission has nothing to review
    assert "nothing to review" in refused("submit", "RCA-101", "--as", "alice", tasks=t)


# --------------------------------------------------------------------------- rules


def test_illegal_steps_and_the_round_limit(world: World, answers: dict[str, str]) -> None:
    t = world.tasks
    cfg = t / "ctbench.yaml"
    doc = load_document(cfg)
    doc["review"]["max_rounds"] = 1
    save_document(cfg, doc)
    git("commit", "-qam", "one round only", cwd=world.work)
    err = refused("respond", "RCA-101", "--as", "alice", "--rebut", "metadata", "x", tasks=t)
    assert "review/RCA-101" in err  # no branch yet: submit first
    ok("submit", "RCA-101", "--as", "alice", tasks=t)
    err = refused("submit", "RCA-101", "--as", "alice", tasks=t)
    assert "submitted: it cannot become submitted" in err
    assert "is submitted, not needs_revision" in refused(
        "respond", "RCA-101", "--as", "alice", "--rebut", "metadata", "x", tasks=t
    )
    ok("blind", "RCA-101", "--as", "bob", "--answer", answers["rca"], tasks=t)
    assert "needs a comment" in refused(
        "reveal", "RCA-101", "--as", "bob", "--disagree", "golden", "", tasks=t
    )
    ok("reveal", "RCA-101", "--as", "bob", "--agree", "solvability", "completeness", "metadata", tasks=t)
    assert status_of(t, "rca", "RCA-101") == "in_review"  # one criterion still open
    ok(
        "reveal",
        "RCA-101",
        "--as",
        "bob",
        "--disagree",
        "golden",
        "display ip routing-table proves nothing here",
        tasks=t,
    )
    assert status_of(t, "rca", "RCA-101") == "needs_revision"
    err = refused("respond", "RCA-101", "--as", "alice", tasks=t)
    assert "answer every disagreement" in err
    err = refused(
        "respond", "RCA-101", "--as", "alice", "--rebut", "golden", "it shows the route is gone", tasks=t
    )
    assert "maximum" in err and "discard" in err
    ok("discard", "RCA-101", "--as", "alice", "--reason", "no consensus in the rounds allowed", tasks=t)
    assert "discarded" in refused("submit", "RCA-101", "--as", "alice", tasks=t)


def test_tampered_blind_answer_fails_the_audit(world: World, answers: dict[str, str]) -> None:
    t = world.tasks
    approve_quickly(world, answers)
    path = t / "rca" / "RCA-101" / "reviews" / "round-01.yaml"
    doc = load_document(path)
    doc["blind"]["answer"] = "CORE_SW_01;GE0/0/24;interface shutdown\n"
    save_document(path, doc)
    git("commit", "-qam", "improve the blind answer afterwards", cwd=world.work)
    code, out, _ = review("audit", "RCA-101", tasks=t)
    assert code == 1 and "does not match its recorded sha256" in out
    from ctbench.approval.hashes import sha256_text

    doc["blind"]["answer_sha256"] = sha256_text(doc["blind"]["answer"])
    save_document(path, doc)
    git("commit", "-qam", "and its hash", cwd=world.work)
    code, out, _ = review("audit", "RCA-101", "--json", tasks=t)
    data = json.loads(out)
    assert code == 1 and not data["ok"]
    assert "differs from the one committed" in data["tasks"][0]["problems"][0]


def test_squashed_history_cannot_prove_blindness(world: World, answers: dict[str, str]) -> None:
    t = world.tasks
    approve_quickly(world, answers)
    git("checkout", "-q", "main", cwd=world.work)
    git("merge", "-q", "--squash", "review/RCA-101", cwd=world.work)
    git("commit", "-qm", "squashed review", cwd=world.work)
    git("branch", "-q", "-D", "review/RCA-101", cwd=world.work)
    git("push", "-q", "origin", ":review/RCA-101", cwd=world.work)
    git("update-ref", "-d", "refs/remotes/origin/review/RCA-101", cwd=world.work)
    code, out, _ = review("audit", tasks=t)
    assert code == 1 and "no blind commit by bob" in out


# --------------------------------------------------------------------------- concurrency


def test_two_reviewers_on_different_tasks_at_once_never_conflict(
    world: World, answers: dict[str, str]
) -> None:
    t = world.tasks
    ok("submit", "RCA-101", "--as", "alice", tasks=t)
    ok("submit", "RCA-102", "--as", "alice", tasks=t)
    git("checkout", "-q", "main", cwd=world.work)
    bob = world.clone("bob")  # a separate clone
    erin = world.root / "erin-wt"  # a linked worktree of that same clone: one repository, two checkouts
    git("worktree", "add", "-q", "--detach", str(erin), "main", cwd=bob)
    answer102 = world.root / "a102.txt"
    answer102.write_text("CORE_SW_01;GE0/0/24;shutdown\n")
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    script = (
        "{py} -m ctbench.review.cli --tasks tasks blind {id} --as {who} --answer {ans} && "
        "{py} -m ctbench.review.cli --tasks tasks reveal {id} --as {who} --all-agree"
    )
    procs = [
        subprocess.Popen(
            ["sh", "-c", script.format(py=sys.executable, id=tid, who=who, ans=ans)],
            cwd=cwd,
            env={**env, "GIT_AUTHOR_NAME": who, "GIT_AUTHOR_EMAIL": f"{who}@example.net"},  # erin's checkout
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for tid, who, ans, cwd in (
            ("RCA-101", "bob", answers["rca"], bob),
            ("RCA-102", "erin", str(answer102), erin),
        )
    ]
    for p in procs:
        out, err = p.communicate(timeout=120)
        assert p.returncode == 0, out + err
    assert git("rev-parse", "--abbrev-ref", "HEAD", cwd=bob) == "review/RCA-101"
    assert git("rev-parse", "--abbrev-ref", "HEAD", cwd=erin) == "review/RCA-102"
    # each branch touched only its own task folder, so both merge cleanly, in either order
    for tid in ("RCA-102", "RCA-101"):
        changed = git("diff", "--name-only", f"main...origin/review/{tid}", cwd=bob).splitlines()
        assert changed and all(p.startswith(f"tasks/rca/{tid}/") for p in changed)
    ok("merge", "RCA-102", "--as", "maint", tasks=t)
    ok("merge", "RCA-101", "--as", "maint", tasks=t)
    assert status_of(t, "rca", "RCA-101") == status_of(t, "rca", "RCA-102") == "approved"
    assert "2 decided task(s) audited" in ok("audit", tasks=t)


def test_a_second_writer_in_the_same_checkout_is_told_to_wait(world: World) -> None:
    from ctbench.errors import CtbError
    from ctbench.review.gitflow import ReviewRepo
    from ctbench.store import TaskSet

    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            (
                "import sys, time; sys.path.insert(0, sys.argv[1]);"
                "from ctbench.review.gitflow import ReviewRepo; from ctbench.store import TaskSet;"
                "r = ReviewRepo(TaskSet.open(sys.argv[2]));"
                "ctx = r.locked('blind RCA-101'); ctx.__enter__(); print('held', flush=True); time.sleep(30)"
            ),
            str(REPO),
            str(world.tasks),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        repo = ReviewRepo(TaskSet.open(world.tasks))
        with pytest.raises(CtbError, match=r"another ctb-review \(blind RCA-101, pid \d+\)"):
            with repo.locked("blind RCA-102"):
                pass
    finally:
        holder.kill()
        holder.wait()
    with repo.locked("after the holder died"):  # a dead holder's lock is taken over
        pass


def test_commits_name_the_actor_when_the_clone_has_no_git_identity(
    world: World, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    empty = tmp_path / "empty-gitconfig"
    empty.write_text("")
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(empty))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    git("config", "--unset", "user.name", cwd=world.work)
    git("config", "--unset", "user.email", cwd=world.work)
    ok("submit", "RCA-101", "--as", "alice", "--no-push", tasks=world.tasks)
    assert git("log", "-1", "--format=%an <%ae>", cwd=world.work) == "alice <alice@ctbench.invalid>"


def test_status_works_without_git_from_the_records(tmp_path: Path) -> None:
    import shutil

    from tests.review_support import FIXTURE

    shutil.copytree(FIXTURE, tmp_path / "tasks")
    code, out, err = review("status", "--json", tasks=tmp_path / "tasks")
    assert code == 0 and "not in a git repository" in err
    assert json.loads(out)["total"]["candidates"] == 0  # three drafts, nothing submitted
