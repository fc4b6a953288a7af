"""The Harbor job and trial records around an ATIF export, so ``harbor view`` opens it as rollouts.

Harbor (the agent-eval framework whose viewer reads ATIF) browses a *jobs folder*: each folder in it
is a job (``config.json``, ``result.json``), each folder in a job that holds a ``config.json`` or
``result.json`` is a trial (one attempt of one task), and a trial's trajectory is
``<trial>/agent/trajectory.json``. An ATIF export of one run is laid out as one such job:

- ``OUT/config.json`` and ``OUT/result.json``: the job (Harbor's ``JobConfig`` / ``JobResult``): the
  run's name, agent, model and reasoning effort, its start and end, attempts by outcome, token and cost
  totals and the run's accuracy as the job's mean reward;
- ``OUT/<trial>/config.json`` and ``OUT/<trial>/result.json`` per attempt (``TrialConfig`` /
  ``TrialResult``): the task, the attempt's start and end, its tokens and cost, ctbench's score of the
  answer as the rewards (``reward`` = correct 1 / wrong 0, ``localization`` = the localization IoU) and,
  for a timed-out or errored attempt, what ended it;
- ``OUT/<trial>/agent/trajectory.json``: the trajectory (``OUT/<trial>/trajectory.json`` links to it,
  the place earlier exports wrote it).

So exporting several runs side by side (``--out atif/RUN``) and running ``harbor view atif`` lists each
run as a job with one trial per task and attempt. Only fields of Harbor's models are written, ids are
derived from the run and trial names (an export written twice is the same), and nothing here imports
Harbor: it needs Python >= 3.12 and is checked in the tests with Harbor's own models and viewer.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from uuid import NAMESPACE_URL, UUID, uuid5

from ctbench.evaluate.details import TaskDetail
from ctbench.evaluate.score import RunInfo
from ctbench.yamlio import atomic_write_text

TRAJECTORY = "agent/trajectory.json"
"""Where Harbor's viewer reads a trial's trajectory, relative to the trial's folder."""
SOURCE = "ctbench"
"""The dataset name Harbor's viewer shows (and filters by) for every trial."""
EXCEPTION_TYPES = {"timeout": "AgentTimeoutError", "error": "CtbenchAttemptError"}
"""Harbor's exception type for an attempt that did not end with an answer (``AgentTimeoutError`` is
Harbor's own name for it; an error has no Harbor counterpart)."""


@dataclass(frozen=True)
class TrialRecord:
    """What the job's ``result.json`` sums over its trials."""

    name: str
    result: dict[str, Any]


def job_id(info: RunInfo) -> UUID:
    """The job's id: the same for every export of the same run."""
    return uuid5(NAMESPACE_URL, f"ctbench:run:{info.name}")


def _agent_config(info: RunInfo) -> dict[str, Any]:
    config: dict[str, Any] = {"name": info.agent or info.harness or "unknown", "model_name": info.model}
    if info.effort:
        config["kwargs"] = {"reasoning_effort": info.effort}
    return config


def _iso(t: datetime | None) -> str | None:
    return None if t is None else t.astimezone(UTC).isoformat().replace("+00:00", "Z")


def write_trial(
    out: Path,
    name: str,
    doc: dict[str, Any],
    detail: TaskDetail,
    info: RunInfo,
    *,
    task_path: Path,
    cost_usd: float | None,
) -> TrialRecord:
    """Write one attempt as a Harbor trial: its trajectory, ``config.json`` and ``result.json``."""
    folder = out / name
    target = folder / TRAJECTORY
    target.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_text(target, json.dumps(doc, indent=2, ensure_ascii=False) + "\n")
    _link(folder / "trajectory.json", TRAJECTORY)
    jid = job_id(info)
    task = {"path": str(task_path), "source": SOURCE}
    config: dict[str, Any] = {
        "task": task,
        "trial_name": name,
        "trials_dir": str(out.resolve()),
        "agent": _agent_config(info),
        "job_id": str(jid),
    }
    r = detail.result
    started = _iso(r.started) if r is not None else None
    finished = _iso(r.finished) if r is not None else None
    result: dict[str, Any] = {
        "id": str(uuid5(jid, name)),
        "task_name": detail.task_id,
        "trial_name": name,
        "trial_uri": folder.resolve().as_uri(),
        "task_id": {"path": str(task_path)},
        "source": SOURCE,
        "task_checksum": (r.content_hash if r is not None else None) or "",
        "config": config,
        "agent_info": {
            "name": info.agent or info.harness or "unknown",
            "version": info.harness_version or "unknown",
            "model_info": {"name": info.model} if info.model else None,
        },
        "agent_result": {
            "n_input_tokens": r.input_tokens if r is not None else None,
            "n_cache_tokens": doc["final_metrics"]["total_cached_tokens"],
            "n_output_tokens": r.output_tokens if r is not None else None,
            "cost_usd": cost_usd,
        },
        "verifier_result": {
            "rewards": {"reward": float(detail.scores.exact), "localization": detail.scores.loc}
        },
        "started_at": started,
        "finished_at": finished,
        "agent_execution": {"started_at": started, "finished_at": finished},
    }
    if r is not None and r.status in EXCEPTION_TYPES:
        result["exception_info"] = {
            "exception_type": EXCEPTION_TYPES[r.status],
            "exception_message": r.error or r.status,
            "exception_traceback": "",
            "occurred_at": finished or started or _iso(datetime.fromtimestamp(0, tz=UTC)),
        }
    atomic_write_text(folder / "config.json", json.dumps(config, indent=2) + "\n")
    atomic_write_text(folder / "result.json", json.dumps(result, indent=2, ensure_ascii=False) + "\n")
    return TrialRecord(name, result)


def write_job(
    out: Path,
    info: RunInfo,
    trials: Sequence[TrialRecord],
    *,
    tasks: Sequence[Path],
    started: datetime,
    finished: datetime | None,
) -> None:
    """Write the job's ``config.json`` and ``result.json`` over the trials written into ``out``."""
    config = {
        "job_name": info.name,
        "jobs_dir": str(out.resolve().parent),
        "n_attempts": info.trials,
        "agents": [_agent_config(info)],
        "tasks": [{"path": str(p), "source": SOURCE} for p in tasks],
    }
    results = [t.result for t in trials]

    def total(key: str) -> int | float | None:
        values = [r["agent_result"][key] for r in results if r["agent_result"][key] is not None]
        return sum(values) if values else None

    errored = [r for r in results if "exception_info" in r]
    rewards = [r["verifier_result"]["rewards"]["reward"] for r in results]
    agent = info.agent or info.harness or "unknown"
    evals_key = f"{agent}__{info.model or 'unknown'}__{SOURCE}"
    result = {
        "id": str(job_id(info)),
        "started_at": _iso(started),
        "updated_at": _iso(finished),
        "finished_at": _iso(finished),
        "n_total_trials": len(results),
        "stats": {
            "n_completed_trials": len(results),
            "n_errored_trials": len(errored),
            "evals": {
                evals_key: {
                    "n_trials": len(results),
                    "n_errors": len(errored),
                    "metrics": [{"mean": sum(rewards) / len(rewards)}] if rewards else [],
                }
            },
            "n_input_tokens": total("n_input_tokens"),
            "n_cache_tokens": total("n_cache_tokens"),
            "n_output_tokens": total("n_output_tokens"),
            "cost_usd": total("cost_usd"),
        },
    }
    atomic_write_text(out / "config.json", json.dumps(config, indent=2) + "\n")
    atomic_write_text(out / "result.json", json.dumps(result, indent=2) + "\n")


def _link(path: Path, target: str) -> None:
    """``path`` becomes a relative symlink to ``target``, replacing a file of an earlier export."""
    if path.is_symlink() and os.readlink(path) == target:
        return
    tmp = path.with_name(f".{path.name}.link")
    tmp.unlink(missing_ok=True)
    tmp.symlink_to(target)
    os.replace(tmp, path)
