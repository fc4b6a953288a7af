"""``ctb-eval import-inspect LOG``: an Inspect AI eval log -> a ctbench run folder.

An Inspect run of ``ctbench/rca`` (or ``path``, ``all``) is scored in Inspect by ctbench's judge, but
the paper's statistics (paired tests, strata, pass@k over epochs, the report's tables) work on run
folders. This turns the log into one, through the same importer as ``import-results`` so an Inspect
run is checked and written exactly like any imported run:

- **Task and trial**: the sample's ``task_id`` metadata (else its id); Inspect's epoch is the trial.
- **Commands**: the replay trajectory the ctbench judge kept in its score metadata, each call with the
  outcome the replay gave and its time. A log scored by another scorer has no such trajectory: the
  ``run_command`` tool calls in the messages are used instead and canonicalised with the dialects.
- **Answer**: what the judge scored (the last ``submit_answer``, else the final message); without the
  judge, the last ``submit_answer`` call's argument, else the final completion.
- **Usage**: the sample's model usage summed over models (input counting cached prompt tokens, as
  ctbench does everywhere; output; cache reads), Inspect's
  ``total_cost`` when it reports one, rounds as the number of model turns (assistant messages), and
  the sample's total time as latency. A sample that ended in an error is ``error``; one stopped by a
  time limit is ``timeout``; other limits (messages, tokens) keep whatever answer it reached.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ctbench.errors import CtbError
from ctbench.evaluate.importer import ImportSummary, import_items
from ctbench.store import TaskSet

JUDGE = "ctbench_judge"
"""The ctbench judge's name in the log (``ctbench.evaluate.inspect_task.SCORER_NAME``)."""

TIME_LIMITS = ("time", "working")


def _read_log(path: Path) -> Any:
    try:
        from inspect_ai.log import read_eval_log
    except ImportError:
        raise CtbError(
            "import-inspect reads Inspect logs with Inspect AI: pip install 'ctbench[inspect]'"
        ) from None
    if not path.is_file():
        raise CtbError(f"{path}: no such log file")
    try:
        return read_eval_log(str(path))
    except Exception as exc:  # Inspect raises several kinds on a file it cannot read
        raise CtbError(
            f"{path}: not an Inspect eval log Inspect can read ({type(exc).__name__}: {exc})"
        ) from None


def _tool_calls(sample: Any, function: str) -> list[dict[str, Any]]:
    calls = []
    for message in sample.messages or []:
        for call in getattr(message, "tool_calls", None) or []:
            if call.function == function and isinstance(call.arguments, Mapping):
                calls.append(dict(call.arguments))
    return calls


def _usage(sample: Any) -> dict[str, Any]:
    totals = {"input_tokens": 0, "output_tokens": 0, "cached_tokens": 0}
    cost: float | None = None
    seen = False
    for usage in (sample.model_usage or {}).values():
        seen = True
        read, written = int(usage.input_tokens_cache_read or 0), int(usage.input_tokens_cache_write or 0)
        # Inspect's input_tokens leaves out the cached part; ctbench's input counts every prompt token
        # (as the endpoints report it) and cached_tokens says how many of them were cache reads.
        totals["input_tokens"] += int(usage.input_tokens or 0) + read + written
        totals["output_tokens"] += int(usage.output_tokens or 0)
        totals["cached_tokens"] += read
        if getattr(usage, "total_cost", None) is not None:
            cost = (cost or 0.0) + float(usage.total_cost)
    out: dict[str, Any] = dict(totals) if seen else {}
    if cost is not None:
        out["cost_usd"] = cost
    return out


def sample_item(sample: Any) -> dict[str, Any]:
    """One result item (``import-results`` format) for one logged sample."""
    metadata = sample.metadata or {}
    task_id = str(metadata.get("task_id") or sample.id)
    judged = (sample.scores or {}).get(JUDGE)
    judge_meta = judged.metadata if judged is not None and isinstance(judged.metadata, Mapping) else None
    item: dict[str, Any] = {"task_id": task_id, "trial": int(sample.epoch or 1)}
    if judged is not None and judge_meta is not None:
        item["answer_text"] = judged.answer
        item["answer_source"] = judge_meta.get("answer_source")
        item["commands"] = [
            {"device": r["device"], "command": r["command"], "outcome": r["outcome"], "t": r.get("t")}
            for r in judge_meta.get("trajectory") or []
        ]
    else:
        submitted = [c.get("answer") for c in _tool_calls(sample, "submit_answer") if c.get("answer")]
        completion = sample.output.completion if sample.output is not None else None
        item["answer_text"] = submitted[-1] if submitted else completion
        item["answer_source"] = "submit" if submitted else "final_message"
        item["commands"] = _tool_calls(sample, "run_command")
    item["usage"] = _usage(sample)
    item["rounds"] = sum(1 for m in sample.messages or [] if getattr(m, "role", None) == "assistant")
    item["rounds_kind"] = "model requests"
    if sample.total_time is not None:
        item["latency_s"] = float(sample.total_time)
    if sample.error is not None:
        item["status"] = "error"
        item["error"] = str(getattr(sample.error, "message", sample.error))[:2000]
    elif sample.limit is not None and sample.limit.type in TIME_LIMITS:
        item["status"] = "timeout"
        item["error"] = f"Inspect {sample.limit.type} limit reached ({sample.limit.limit})"
    return item


def import_inspect(
    path: Path | str,
    out: Path | str,
    task_set: TaskSet,
    *,
    name: str | None = None,
    agent: str | None = None,
) -> ImportSummary:
    """Write the run folder ``out`` from the Inspect log ``path``."""
    path = Path(path)
    log = _read_log(path)
    samples = list(log.samples or [])
    if not samples:
        raise CtbError(f"{path}: the log holds no samples (status {log.status}); nothing to import")
    items = [sample_item(s) for s in samples]
    meta = {
        "model": str(log.eval.model),
        "harness": "inspect",
        "harness_version": str((log.eval.packages or {}).get("inspect_ai") or "unknown"),
    }
    created = log.eval.created
    try:
        when = datetime.fromisoformat(created) if isinstance(created, str) else created
    except ValueError:
        when = None
    if when is not None and when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    summary = import_items(
        items,
        meta,
        path,
        out,
        task_set,
        name=name,
        agent=agent or f"inspect:{log.eval.task}",
        when=when,
    )
    if log.status != "success":
        summary.warnings.append(
            f"the Inspect run ended with status {log.status!r}: {len(samples)} sample(s) were imported"
        )
    return summary


__all__ = ["import_inspect", "sample_item"]
