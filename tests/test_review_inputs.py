"""Blind review inputs (issue #16 item 6): the gold never enters a blind solve, and a refusal never quotes it."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from tests.review_support import RCA_ANSWER, RCA_COMMANDS, World, copy_world, git, make_world, ok, refused

GOLD_LINES = ("golden_actions:", "GigabitEthernet0/0/24", "rationale:", "chain_length", "why: ")


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> World:
    w = make_world(tmp_path_factory.mktemp("inputs-template") / "w")
    ok("submit", "RCA-101", "--as", "alice", tasks=w.tasks)
    return w


@pytest.fixture
def world(template: World, tmp_path: Path) -> World:
    return copy_world(template, tmp_path / "w")


def hidden(world: World) -> Path:
    return world.task_dir("rca", "RCA-101") / "hidden.yaml"


def assert_refused_quietly(world: World, *args: str, why: str) -> str:
    head = git("rev-parse", "HEAD", cwd=world.work)
    err = refused("blind", "RCA-101", "--as", "bob", *args, tasks=world.tasks)
    assert why in err, err
    for line in GOLD_LINES:
        assert line not in err, f"the refusal quoted the gold ({line!r}): {err}"
    assert git("rev-parse", "HEAD", cwd=world.work) == head, "a refused blind input was committed"
    return err


def own_file(tmp_path: Path, name: str, text: str) -> str:
    p = tmp_path / name
    p.write_text(text)
    return str(p)


def test_answer_that_is_the_hidden_part_is_refused_by_path_link_and_content(
    world: World, tmp_path: Path
) -> None:
    cmds = own_file(tmp_path, "cmds.txt", RCA_COMMANDS)
    gold = hidden(world)
    assert_refused_quietly(world, "--answer", str(gold), "--commands", cmds, why="hidden part")
    link = tmp_path / "answer.txt"
    link.symlink_to(gold)
    assert_refused_quietly(world, "--answer", str(link), "--commands", cmds, why="hidden part")
    hard = tmp_path / "hard.txt"
    os.link(gold, hard)
    assert_refused_quietly(world, "--answer", str(hard), "--commands", cmds, why="same file on disk")
    copy = tmp_path / "notes.txt"
    shutil.copy(gold, copy)
    assert_refused_quietly(
        world, "--answer", str(copy), "--commands", cmds, why="its content is a task's hidden"
    )
    tmp_copy = gold.parent / ".hidden.yaml.a1b2.tmp"  # what an interrupted save leaves behind
    shutil.copy(gold, tmp_copy)
    assert_refused_quietly(world, "--answer", str(tmp_copy), "--commands", cmds, why="hidden part")


def test_other_files_of_a_task_folder_are_refused_but_own_files_work(world: World, tmp_path: Path) -> None:
    cmds = own_file(tmp_path, "cmds.txt", RCA_COMMANDS)
    stray = world.task_dir("rca", "RCA-101") / "reviews" / "round-01.yaml"
    assert stray.is_file()
    assert_refused_quietly(
        world, "--answer", str(stray), "--commands", cmds, why="inside task folder rca/RCA-101"
    )
    answer = own_file(tmp_path, "answer.txt", RCA_ANSWER)
    out = ok("blind", "RCA-101", "--as", "bob", "--answer", answer, "--commands", cmds, tasks=world.tasks)
    assert "blind answer for RCA-101 committed" in out


def test_commands_file_errors_never_echo_its_lines(world: World, tmp_path: Path) -> None:
    answer = own_file(tmp_path, "answer.txt", RCA_ANSWER)
    assert_refused_quietly(world, "--answer", answer, "--commands", str(hidden(world)), why="hidden part")
    bad = own_file(tmp_path, "cmds.txt", "CORE_SW_01 display interface brief\nSECRET-LINE-WITHOUT-COMMAND\n")
    err = assert_refused_quietly(
        world, "--answer", answer, "--commands", bad, why="line 2: expected DEVICE COMMAND"
    )
    assert "SECRET-LINE" not in err


def test_trajectory_must_be_a_trajectory(world: World, tmp_path: Path) -> None:
    answer = own_file(tmp_path, "answer.txt", RCA_ANSWER)
    assert_refused_quietly(world, "--answer", answer, "--trajectory", str(hidden(world)), why="hidden part")
    yaml_copy = own_file(tmp_path, "t.jsonl", "id: RCA-101\nsecret: SECRET-VALUE\n")
    err = assert_refused_quietly(
        world,
        "--answer",
        answer,
        "--trajectory",
        yaml_copy,
        why="line 1: not a replay trajectory line (Expecting value at column 1)",
    )
    assert "SECRET-VALUE" not in err
    wrong = own_file(tmp_path, "w.jsonl", json.dumps({"seq": 1, "device": "SECRET-DEV"}) + "\n")
    err = assert_refused_quietly(
        world, "--answer", answer, "--trajectory", wrong, why="not a replay trajectory"
    )
    assert "SECRET-DEV" not in err
    assert_refused_quietly(
        world,
        "--answer",
        answer,
        "--trajectory",
        own_file(tmp_path, "e.jsonl", "\n"),
        why="an empty trajectory",
    )
    good = {
        "seq": 1,
        "t": 0.5,
        "device": "CORE_SW_01",
        "command": "dis int br",
        "canonical": "display interface brief",
        "outcome": "recorded",
        "output_bytes": 10,
    }
    traj = own_file(tmp_path, "good.jsonl", json.dumps(good) + "\n")
    ok("blind", "RCA-101", "--as", "bob", "--answer", answer, "--trajectory", traj, tasks=world.tasks)
    stored = world.task_dir("rca", "RCA-101") / "reviews" / "round-01.blind.jsonl"
    assert stored.read_text() == json.dumps(good) + "\n"
