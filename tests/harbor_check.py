"""Read an ATIF export the way Harbor does, with Harbor's own code (this module holds no test).

Run by Harbor's Python (3.12+, see ``.ci/harbor-env``), never imported by the suite:
``python tests/harbor_check.py JOBS_DIR`` prints one JSON object on stdout:

- ``trajectories``: every ``trajectory.json`` under JOBS_DIR (the ``agent/`` ones and the links beside
  them), each validated with Harbor's Pydantic ``Trajectory`` model: its validation errors, or the
  steps as Harbor parsed them (source, timestamp, message, tool calls and their results);
- ``jobs``: what Harbor's viewer loader (``harbor.viewer.scanner.JobScanner``) finds: the jobs, each
  job's trials, and for each trial the ``TrialResult`` it parsed (task, trial, rewards, error type),
  with the validation errors of every job or trial record it could not parse (the scanner itself only
  logs them and shows nothing).

It imports nothing of ctbench, so what it reports is Harbor's reading, not ours.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any


def _errors(exc: Exception) -> list[str]:
    errors = getattr(exc, "errors", None)
    if callable(errors):
        return [f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in errors()]
    return [f"{type(exc).__name__}: {exc}"]


def _trajectory(path: Path) -> dict[str, Any]:
    from harbor.models.trajectories import Trajectory

    try:
        traj = Trajectory.model_validate_json(path.read_text(encoding="utf-8"))
    except Exception as exc:  # noqa: BLE001 - every way Harbor refuses the file is the answer
        return {"errors": _errors(exc)}
    return {
        "errors": [],
        "session_id": traj.session_id,
        "schema_version": traj.schema_version,
        "steps": [
            {
                "step_id": s.step_id,
                "source": s.source,
                "timestamp": s.timestamp,
                "message": s.message if isinstance(s.message, str) else None,
                "tool_calls": [
                    {"id": c.tool_call_id, "function": c.function_name, "arguments": c.arguments}
                    for c in s.tool_calls or []
                ],
                "results": [
                    {"call": r.source_call_id, "content": r.content if isinstance(r.content, str) else None}
                    for r in (s.observation.results if s.observation else [])
                ],
            }
            for s in traj.steps
        ],
        "total_cost_usd": traj.final_metrics.total_cost_usd if traj.final_metrics else None,
    }


def _job(scanner: Any, jobs_dir: Path, job: str) -> dict[str, Any]:
    from harbor.models.job.config import JobConfig
    from harbor.models.job.result import JobResult
    from harbor.models.trial.result import TrialResult

    out: dict[str, Any] = {"errors": [], "trials": {}}
    for name, model in (("config.json", JobConfig), ("result.json", JobResult)):
        path = jobs_dir / job / name
        if not path.exists():
            out["errors"].append(f"{name}: missing")
            continue
        try:
            model.model_validate_json(path.read_text(encoding="utf-8"))
        except Exception as exc:  # noqa: BLE001
            out["errors"] += [f"{name}: {e}" for e in _errors(exc)]
    result = scanner.get_job_result(job)
    out["n_total_trials"] = result.n_total_trials if result else None
    for trial in scanner.list_trials(job):
        parsed = scanner.get_trial_result(job, trial)
        entry: dict[str, Any] = {"errors": []}
        if parsed is None:
            try:
                TrialResult.model_validate_json(
                    (jobs_dir / job / trial / "result.json").read_text(encoding="utf-8")
                )
            except Exception as exc:  # noqa: BLE001
                entry["errors"] = _errors(exc)
        else:
            rewards = parsed.verifier_result.rewards if parsed.verifier_result else None
            exceptions = parsed.recorded_exceptions()
            entry.update(
                task_name=parsed.task_name,
                trial_name=parsed.trial_name,
                rewards=rewards,
                reward_valid=parsed.reward_valid,
                error_type=exceptions[0].exception_type if exceptions else None,
                tokens=list(parsed.compute_token_cost_totals()),
            )
        if scanner.get_trial_config(job, trial) is None:
            entry["errors"].append("config.json: Harbor's TrialConfig did not parse it")
        out["trials"][trial] = entry
    return out


def main(argv: list[str]) -> int:
    from harbor.viewer.scanner import JobScanner

    jobs_dir = Path(argv[1])
    scanner = JobScanner(jobs_dir)
    report = {
        "trajectories": {
            str(p.relative_to(jobs_dir)): _trajectory(p) for p in sorted(jobs_dir.rglob("trajectory.json"))
        },
        "jobs": {job: _job(scanner, jobs_dir, job) for job in scanner.list_jobs()},
    }
    json.dump(report, sys.stdout, indent=1, default=str)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
