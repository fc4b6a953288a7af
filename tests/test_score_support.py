"""Builders shared by the scoring, comparison, report and import tests (this module holds no test).

Run folders are written by hand in the run-folder format of docs/run-folder.md - run.yaml, results.jsonl,
trajectories/<ID>.jsonl - against a private copy of the bundled tasks, so the scorer is tested on the
contract and not on whatever the runner happens to write.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

from ctbench.store import TaskSet
from tests.conftest import BUNDLED

STARTER = ("rca/RCA-001", "rca/RCA-002", "path/PATH-001")
"""The three starter tasks the hand-computed numbers are worked out on."""

Call = tuple[str, str, str | None, str]
"""A trajectory call: (device, command as typed, canonical, outcome)."""

RUN_YAML = """\
format: 1
name: {name}
agent: {agent}
model: {model}
harness: test-harness
harness_version: 1.0.0
options:
  timeout_s: 600.0
  retries: 0
concurrency: 1
task_set:
  path: {tasks}
  commit: {commit}
  dirty: false
tasks:
{task_lines}
started: '2026-07-25T10:00:00Z'
finished: '2026-07-25T11:00:00Z'
host:
  hostname: testhost
  platform: Linux
  python: 3.11.7
"""


def starter_copy(tmp_path: Path) -> Path:
    """A private copy of the bundled task set holding only the three starter tasks.

    The bundled set grows as authors add tasks; the scoring tests' expected numbers are worked out by
    hand on these three, so everything else is left out of the copy.
    """
    dst = tmp_path / "tasks"
    shutil.copytree(BUNDLED, dst)
    for family in ("rca", "path", "topology"):
        for folder in (dst / family).iterdir():
            if f"{family}/{folder.name}" not in STARTER:
                shutil.rmtree(folder)
    return dst


def gold_text(ts: TaskSet, task_id: str) -> str:
    """The gold answer written as an agent must write it, inside answer tags."""
    hidden = ts.load_hidden(task_id)
    lines = hidden.gold_answer_lines(ts.ref(task_id).family)
    return "Here is my diagnosis.\n<answer>\n" + "\n".join(lines) + "\n</answer>\n"


def golden_calls(ts: TaskSet, task_id: str) -> list[Call]:
    """The golden actions as recorded replay calls (what a perfect agent's trajectory holds)."""
    return [(a.device, a.command, a.command, "recorded") for a in ts.load_hidden(task_id).golden_actions]


def write_run(
    run_dir: Path,
    tasks_root: Path,
    *,
    answers: Mapping[str, str | None],
    calls: Mapping[str, Sequence[Call]] | None = None,
    statuses: Mapping[str, str] | None = None,
    selected: Sequence[str] | None = None,
    name: str | None = None,
    agent: str = "test-agent",
    model: str = "m1",
    usage: Mapping[str, Mapping[str, float | int | None]] | None = None,
    commit: str = "none",
) -> Path:
    """Write a run folder: one result line per entry of ``answers`` (text or None), in that order."""
    ts = TaskSet.open(tasks_root)
    run_dir.mkdir(parents=True, exist_ok=True)
    order = list(selected if selected is not None else answers)
    (run_dir / "run.yaml").write_text(
        RUN_YAML.format(
            name=name or run_dir.name,
            agent=agent,
            model=model,
            tasks=tasks_root,
            commit=commit,
            task_lines="\n".join(f"  - {t}" for t in order),
        ),
        encoding="utf-8",
    )
    (run_dir / "trajectories").mkdir(exist_ok=True)
    lines = []
    for task_id, text in answers.items():
        family = ts.ref(task_id).family.value
        status = (statuses or {}).get(task_id) or ("answered" if text else "unparsable")
        task_calls = list((calls or {}).get(task_id, ()))
        u = dict(
            (usage or {}).get(
                task_id,
                {
                    "rounds": len(task_calls) + 1,
                    "latency_s": 12.5,
                    "input_tokens": 1000,
                    "output_tokens": 200,
                },
            )
        )
        lines.append(
            json.dumps(
                {
                    "task_id": task_id,
                    "family": family,
                    "status": status,
                    "answer_text": text,
                    "answer": None,
                    "rounds": u.get("rounds"),
                    "latency_s": u.get("latency_s"),
                    "input_tokens": u.get("input_tokens"),
                    "output_tokens": u.get("output_tokens"),
                    "commands": len(task_calls),
                    "error": None if status == "answered" else status,
                    "trajectory": f"trajectories/{task_id}.jsonl",
                }
            )
        )
        write_trajectory(run_dir / "trajectories" / f"{task_id}.jsonl", task_calls)
    (run_dir / "results.jsonl").write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return run_dir


def write_trajectory(path: Path, calls: Iterable[Call]) -> None:
    with path.open("w", encoding="utf-8") as fh:
        for seq, (device, command, canonical, outcome) in enumerate(calls, start=1):
            fh.write(
                json.dumps(
                    {
                        "seq": seq,
                        "t": 0.5 * seq,
                        "device": device,
                        "command": command,
                        "canonical": canonical,
                        "outcome": outcome,
                        "output_bytes": 100,
                    }
                )
                + "\n"
            )


def oracle_run(run_dir: Path, tasks_root: Path, **kwargs: object) -> Path:
    """A perfect run: the gold answer and exactly the golden actions on every task."""
    ts = TaskSet.open(tasks_root)
    ids = [r.id for r in ts.refs()]
    return write_run(
        run_dir,
        tasks_root,
        answers={t: gold_text(ts, t) for t in ids},
        calls={t: golden_calls(ts, t) for t in ids},
        **kwargs,
    )  # type: ignore[arg-type]


def clone_rca(tasks_root: Path, source: str, count: int, prefix: str = "RCA-C") -> list[str]:
    """Copy an RCA task ``count`` times under new ids (same network, gold and recordings)."""
    src = tasks_root / "rca" / source
    ids = []
    for i in range(1, count + 1):
        new_id = f"{prefix}{i:02d}"
        dst = tasks_root / "rca" / new_id
        shutil.copytree(src, dst)
        for name in ("task.yaml", "hidden.yaml"):
            f = dst / name
            f.write_text(
                f.read_text(encoding="utf-8").replace(f"id: {source}\n", f"id: {new_id}\n"), encoding="utf-8"
            )
        ids.append(new_id)
    return ids
