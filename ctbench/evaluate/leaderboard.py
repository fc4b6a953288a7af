"""The CTBench leaderboard site's input: ``leaderboard.json`` and ``agent-details.json``.

The site (womengjianhai/CTBench_leaderboard, ``scripts/build_site.py``) builds its pages from two
documents and refuses to build when either breaks its rules (restated in
``tests/leaderboard_site_rules.py``). What it needs beyond ctbench's Table 5 rows:

- **every track in every row**: the site reads ``row["rca"]`` and ``row["path"]`` for every agent,
  and a track the leaderboard counts tasks of (``tasks``: the paper's two always, topology
  restoration when a run holds such tasks) for every agent too. A run without tasks of a track gets
  ``{"mean": null, "sd": null}`` for each figure, and the export warns: the site accepts numbers
  only, so such a row must be completed before publishing;
- **``label`` and ``url``** at the top: the label it prints for the scores and the source URL every
  row of its CSV download carries (``--label``, ``--url``);
- **``agent-details.json``**: per agent (harness, model) and family, the efficiency figures
  ``rounds``, ``latency`` and ``tokens``, each with ``status`` (available | unavailable), ``value``,
  ``displayValue``, ``unit``, ``label``, ``definition``, ``aggregation`` (``mean``), ``observed`` (the
  tasks that recorded the figure) and ``total`` (the leaderboard's task count of the family); an
  unavailable figure has a null value and a ``reason``. ``efficiencySource`` says where the numbers
  come from (this run telemetry, with ctbench's counting rule).
- **examples** (``--examples``): one trajectory per agent and track taken from a real run (the
  first correctly answered task with recorded device output), ``kind: recorded``, with its steps
  (command, summary, the device's output), the task's statement and the agent's final answer.
  A correct final answer *is* the gold of that task, so every example is written with
  ``publicationApproved: false``; the site refuses it until a person sets it to true.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ctbench import __version__
from ctbench.errors import CtbError
from ctbench.evaluate.details import DetailLoader
from ctbench.evaluate.score import read_trial_results

FAMILIES = ("rca", "path")
"""The tracks every leaderboard has (the paper's two); :func:`tracks` adds those a board counts."""
FIGURES = ("accuracy", "localization", "reasoning", "evidence")
MAX_STEPS = 100
MAX_OBSERVATION = 4000
"""Characters of device output kept per example step (the site shows them in a page, not a file)."""

EFFICIENCY: tuple[tuple[str, str, str, str, str], ...] = (
    # site key, ctbench efficiency key, unit, label, definition
    (
        "rounds",
        "rounds",
        "rounds",
        "Interaction rounds",
        "Model requests per task as the harness recorded them (tool-using turns when it reports no "
        "request count), averaged over the tasks that recorded them.",
    ),
    (
        "latency",
        "latency_s",
        "s",
        "Latency",
        "Wall-clock seconds from the agent's start to its answer, averaged over the tasks that recorded it.",
    ),
    (
        "tokens",
        "total_tokens",
        "tokens",
        "Token usage",
        "Input plus output tokens summed over every model request of a task (cached input counted once, "
        "inside input), averaged over the tasks that recorded them.",
    ),
)


def _identity(scores: Mapping[str, Any]) -> tuple[str, str]:
    run = scores["run"]
    return (run.get("harness") or run.get("agent") or run["name"], run.get("model") or "unknown")


def tracks(board: Mapping[str, Any]) -> list[str]:
    """The families a leaderboard shows: the paper's two, then every other it counts tasks of."""
    return [*FAMILIES, *(f for f in board.get("tasks") or {} if f not in FAMILIES)]


def complete_rows(board: dict[str, Any]) -> list[str]:
    """Give every row every track (n/a figures where a run had none); the warnings for those."""
    warnings = []
    for row in board["results"]:
        for fam in tracks(board):
            if fam in row:
                blank = [name for name in FIGURES if row[fam][name]["sd"] is None]
                if blank:
                    warnings.append(
                        f"{row['harness']} / {row['model']}: {fam} {', '.join(blank)} has no standard error "
                        "(fewer than two tasks); the leaderboard site refuses a null sd"
                    )
                continue
            if fam not in row:
                row[fam] = {name: {"mean": None, "sd": None} for name in FIGURES}
                warnings.append(
                    f"{row['harness']} / {row['model']}: no {fam} tasks in this run; its {fam} figures are "
                    "n/a (null), which the leaderboard site refuses until they are filled"
                )
    return warnings


def _display(key: str, value: float) -> str:
    return f"{value / 1000:.1f}k" if key == "tokens" else f"{value:.2f}"


def efficiency_metric(
    key: str, eff: Mapping[str, Any] | None, total: int, *, none_reason: str
) -> dict[str, Any]:
    """One site efficiency figure from ctbench's ``{mean, median, n}`` of a family (None: no tasks)."""
    _, _, unit, label, definition = next(e for e in EFFICIENCY if e[0] == key)
    observed = int(eff["n"]) if eff else 0
    mean = eff.get("mean") if eff else None
    metric: dict[str, Any] = {
        "unit": unit,
        "label": label,
        "definition": definition,
        "aggregation": "mean",
        "aggregationLabel": "Mean over tasks that recorded it",
        "observed": min(observed, total),
        "total": total,
    }
    if observed and isinstance(mean, int | float) and math.isfinite(mean) and mean >= 0:
        value = round(float(mean), 2)
        metric.update(status="available", value=value, displayValue=_display(key, value))
    else:
        metric.update(status="unavailable", value=None, displayValue="n/a", reason=none_reason)
    return metric


def agent_efficiency(scores: Mapping[str, Any], tasks: Mapping[str, int]) -> dict[str, Any]:
    """Efficiency figures for every family the leaderboard counts tasks of (topology too, when present)."""
    out: dict[str, Any] = {}
    for fam in tasks:
        has = bool((scores["summary"].get(fam) or {}).get("n_tasks"))
        eff = scores["summary"]["efficiency"][fam] if has else {}
        out[fam] = {
            key: efficiency_metric(
                key,
                eff.get(src) if has else None,
                tasks[fam],
                none_reason=(
                    f"the harness recorded no {label.lower()} for any {fam} task"
                    if has
                    else f"the run has no {fam} tasks"
                ),
            )
            for key, src, _, label, _ in EFFICIENCY
        }
        if scores.get("cost"):
            out[fam]["cost"] = cost_metric(scores["cost"], fam, tasks[fam], has=has)
    return out


def cost_metric(cost: Mapping[str, Any], fam: str, total: int, *, has: bool) -> dict[str, Any]:
    """The cost per task of a family in the site's figure shape, with its source in the definition."""
    spent = cost["by_family"][fam] if has else {}
    prices = cost.get("prices")
    basis = (
        f"; tokens priced with {prices['file']} ({prices['currency']}, prices of {prices['date']}) where "
        "the harness reported no cost"
        if prices
        else ""
    )
    observed = int(spent.get("n") or 0)
    mean = spent.get("mean")
    metric: dict[str, Any] = {
        "unit": cost["currency"],
        "label": "Cost",
        "definition": "Cost per task as the harness reported it" + basis + ", averaged over the tasks "
        "with a cost; timed-out attempts count with what they spent.",
        "aggregation": "mean",
        "aggregationLabel": "Mean over tasks that recorded it",
        "observed": min(observed, total),
        "total": total,
        "sources": dict(spent.get("sources") or {}),
    }
    if observed and isinstance(mean, int | float) and math.isfinite(mean) and mean >= 0:
        value = round(float(mean), 4)
        metric.update(status="available", value=value, displayValue=f"{value:.4f} {cost['currency']}")
    else:
        reason = f"no {fam} task has a cost" if has else f"the run has no {fam} tasks"
        metric.update(status="unavailable", value=None, displayValue="n/a", reason=reason)
    return metric


def recorded_example(
    loader: DetailLoader, run_dir: Path, scores: Mapping[str, Any], family: str
) -> dict[str, Any] | None:
    """The first correctly answered task of ``family`` with recorded output, as a site example."""
    harness, model = _identity(scores)
    results, _ = read_trial_results(run_dir)
    exact = sorted(
        t["task_id"] for t in scores.get("tasks", []) if t.get("family") == family and t.get("exact")
    )
    for task_id in exact:
        hit = results.get((task_id, 1))
        if hit is None:
            continue
        detail = loader.load(run_dir, task_id, hit[1], with_prompt=False)
        steps = [
            {
                "title": f"{s.device}: {s.command}",
                "command": s.command,
                "summary": f"Ran `{s.command}` on {s.device} ({s.outcome}).",
                "observation": (s.output or "")[:MAX_OBSERVATION].strip() or "(no output)",
            }
            for s in detail.steps
            if s.device and s.command
        ][:MAX_STEPS]
        answer = (detail.answer_text or "").strip()
        if not steps or not answer:
            continue
        task = loader.scorer.task_set.load_task(task_id)
        return {
            "kind": "recorded",
            "publicationApproved": False,
            "harness": harness,
            "model": model,
            "sourceNote": (
                f"Recorded by ctbench {__version__}: run {scores['run']['name']}, task {task_id}, "
                f"trajectories/{task_id}.jsonl. The final answer is correct, so it reveals this task's "
                "gold: approve publication only for a task that is retired or public."
            ),
            "id": task_id,
            "title": task.title or task_id,
            "question": task.statement.strip(),
            "finalAnswer": answer,
            "steps": steps,
        }
    return None


def agent_details(
    all_scores: Sequence[Mapping[str, Any]],
    tasks: Mapping[str, int],
    *,
    examples: Sequence[Mapping[str, Any] | None] | None = None,
) -> dict[str, Any]:
    """``agent-details.json``: efficiency per agent and family, and (optionally) recorded examples."""
    agents = []
    for i, scores in enumerate(all_scores):
        harness, model = _identity(scores)
        ex = examples[i] if examples is not None else None
        agents.append(
            {
                "harness": harness,
                "model": model,
                "efficiency": agent_efficiency(scores, tasks),
                "examples": {fam: (ex or {}).get(fam) for fam in tracks({"tasks": tasks})},
            }
        )
    return {
        "schemaVersion": 1,
        "efficiencySource": {
            "type": "telemetry",
            "label": f"ctbench {__version__} run telemetry",
            "note": "Measured by the harness during the runs and summarised by ctbench: per task as recorded in "
            "results.jsonl; tasks that did not record a figure are left out (observed < total), not "
            "counted as zero.",
        },
        "agents": agents,
        "examples": {},
    }


def check_identities(all_scores: Sequence[Mapping[str, Any]]) -> None:
    """The site keys rows by (harness, model): two runs of one pair cannot both be on it."""
    seen: dict[tuple[str, str], str] = {}
    for s in all_scores:
        ident = _identity(s)
        if ident in seen:
            raise CtbError(
                f"runs {seen[ident]} and {s['run']['name']} are both harness {ident[0]!r}, model "
                f"{ident[1]!r}: the leaderboard has one row per harness and model; export one of them",
                exit_code=2,
            )
        seen[ident] = s["run"]["name"]


def default_label(all_scores: Sequence[Mapping[str, Any]]) -> str:
    releases = sorted({r["version"] for s in all_scores if (r := s["run"].get("release"))})
    return f"ctbench {__version__}" + (f", release {', '.join(releases)}" if releases else "")
