"""The one prompt template (paper D.6): what it must contain, and that nothing hidden gets in."""

from __future__ import annotations

import json
import re
from pathlib import Path

from ctbench.answer import path_line
from ctbench.scoring.prompt import prompt_for
from ctbench.store import TaskSet
from tests.conftest import run_cli


def _hidden_strings(ts: TaskSet, task_id: str) -> list[str]:
    """Everything from hidden.yaml (and the taxonomy's grouping) that must never reach an agent."""
    hidden = ts.load_hidden(task_id)
    out = [hidden.rationale, hidden.canary] if hidden.rationale else []
    out += [e.line() for e in hidden.rca_entries()]
    out += [path_line(p) for p in hidden.gold_paths()]
    for path in hidden.gold_paths():
        out += [f"{a.token()} -> {b.token()}" for a, b in zip(path, path[1:], strict=False)]
    for action in hidden.golden_actions:
        out += [action.command, f"{action.device} {action.command}"]
        if action.why:
            out.append(action.why)
    out += list(hidden.metadata.protocol_mechanisms)
    out += [c.name for c in ts.taxonomy.categories]
    return [s for s in out if s]


def test_bundled_prompts_hold_the_four_parts_and_no_hidden_string(task_set: Path) -> None:
    ts = TaskSet.open(task_set)
    vocabularies = set()
    for ref in ts.refs():
        spec = ts.load_task(ref)
        text = prompt_for(ts, ref)
        assert f"question {spec.id}" in text  # question identifier
        assert spec.statement.strip() in text  # task statement, verbatim
        for tool in (
            "list_devices()",
            "run_command(device, command)",
            "submit_answer(answer)",
            "ctb-replay exec DEVICE COMMAND",
            "$CTBENCH_ANSWER_FILE",
        ):
            assert tool in text  # tool interface
        assert "## Answer format" in text and "<answer>" in text
        for device in spec.accessible or []:
            assert f"- {device}:" in text
        # The label vocabulary (checked below to be task-independent) is set aside: a gold label or a
        # mechanism name is bound to occur in it.
        task_part = text.split("Root-cause labels:\n", 1)[0]
        for secret in _hidden_strings(ts, spec.id):
            assert secret not in task_part, f"{spec.id}: hidden text {secret!r} leaked into the prompt"
        for word in (
            "O1",
            "O2",
            "C1",
            "C2",
            "C3",
            "C4",
            "C5",
            "golden",
            "metadata",
            "observability",
            "heterogeneity",
            "category",
            "categories",
        ):
            assert not re.search(rf"\b{word}\b", text, re.IGNORECASE), (spec.id, word)
        if spec.family.value == "rca":
            assert "node;object;root-cause label" in text
            vocabularies.add(text.split("Root-cause labels:\n", 1)[1])
        else:
            assert "node_egress-interface" in text and "->" in text
    # The label vocabulary is part of the answer format and the same for every task, so it says
    # nothing about any task's answer.
    assert len(vocabularies) == 1
    labels = [ln[2:] for ln in vocabularies.pop().splitlines()]
    assert labels == sorted(labels, key=str.casefold) and set(labels) == {
        lab.label for lab in ts.taxonomy.labels
    }


def test_prompt_never_reads_hidden_yaml(task_set: Path) -> None:
    """Markers planted in every hidden field stay out; deleting hidden.yaml changes nothing."""
    folder = task_set / "rca" / "RCA-001"
    hidden = folder / "hidden.yaml"
    text = hidden.read_text(encoding="utf-8")
    text = text.replace("label: shutdown", "label: SECRET-LABEL-c0ffee")
    text = text.replace("object: GigabitEthernet0/0/24", "object: SECRET-OBJECT-1234")
    text = re.sub(r"why: .*", "why: SECRET-WHY-beef", text)
    text = text.replace("rationale: ", "rationale: SECRET-RATIONALE-f00d ")
    text = text.replace("observability: O1", "observability: O2")
    hidden.write_text(text, encoding="utf-8")
    ts = TaskSet.open(task_set)
    assert ts.load_hidden("RCA-001").rationale.startswith("SECRET-RATIONALE")
    with_hidden = prompt_for(ts, "RCA-001")
    assert "SECRET" not in with_hidden
    hidden.unlink()
    assert prompt_for(TaskSet.open(task_set), "RCA-001") == with_hidden


def test_prompt_cli_prints_it_and_errors_cleanly(task_set: Path) -> None:
    ts = TaskSet.open(task_set)
    proc = run_cli("evaluate", "prompt", "RCA-001", "--tasks", str(task_set))
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == prompt_for(ts, "RCA-001")
    js = run_cli("evaluate", "prompt", "PATH-001", "--tasks", str(task_set), "--json")
    data = json.loads(js.stdout)
    assert (
        data["task_id"] == "PATH-001"
        and data["family"] == "path"
        and data["prompt"] == prompt_for(ts, "PATH-001")
    )
    bad = run_cli("evaluate", "prompt", "RCA-999", "--tasks", str(task_set))
    assert bad.returncode == 1 and "RCA-999" in bad.stderr and "not found" in bad.stderr
    assert "Traceback" not in bad.stderr


def test_devices_without_cli_are_named_but_not_offered(task_set: Path) -> None:
    text = prompt_for(TaskSet.open(task_set), "PATH-001")
    devices, others = text.split("## Devices you may query", 1)[1].split("Other nodes in the network", 1)
    assert "- PC_01:" not in devices and "- PC_01:" in others.split("## Tools")[0]
    assert "- PE_01: Juniper router, juniper_junos CLI" in devices
