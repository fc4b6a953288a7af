"""An ATIF v1.7 checker written from the rules of issue 18 (this module holds no test).

It does not import the exporter: it reads a trajectory document and lists every way it breaks the
rules, so a test fails with the whole list and the checker can be shown to catch broken documents.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

ROOT = {"schema_version", "session_id", "agent", "steps", "final_metrics"}
AGENT = {"name", "version", "model_name", "tool_definitions"}
STEP_REQUIRED = {"step_id", "timestamp", "source", "message"}
STEP_OPTIONAL = {"tool_calls", "observation", "metrics", "reasoning_content"}
TOOL_CALL = {"tool_call_id", "function_name", "arguments"}
RESULT = {"source_call_id", "content"}
FINAL = {
    "total_prompt_tokens",
    "total_completion_tokens",
    "total_cached_tokens",
    "total_cost_usd",
    "total_steps",
}
SOURCES = {"system", "user", "agent"}


def _keys(
    where: str, obj: Any, required: set[str], optional: frozenset[str] | set[str] = frozenset()
) -> list[str]:
    if not isinstance(obj, dict):
        return [f"{where}: expected an object, got {type(obj).__name__}"]
    out = [f"{where}: missing {k}" for k in sorted(required - obj.keys())]
    out += [f"{where}: field {k} is not in the schema" for k in sorted(obj.keys() - required - set(optional))]
    return out


def _iso(value: Any) -> bool:
    if not isinstance(value, str):
        return False
    try:
        datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return False
    return "T" in value


def _count(value: Any) -> bool:
    return value is None or (isinstance(value, int) and not isinstance(value, bool) and value >= 0)


def check_atif(doc: Any) -> list[str]:
    """Every rule the document breaks (empty when it is a valid ATIF v1.7 trajectory)."""
    problems = _keys("root", doc, ROOT)
    if not isinstance(doc, dict):
        return problems
    if doc.get("schema_version") != "ATIF-v1.7":
        problems.append(f"schema_version: expected 'ATIF-v1.7', got {doc.get('schema_version')!r}")
    if not isinstance(doc.get("session_id"), str) or not doc.get("session_id"):
        problems.append("session_id: expected a non-empty string")
    agent = doc.get("agent")
    problems += _keys("agent", agent, AGENT)
    if isinstance(agent, dict):
        for k in ("name", "version", "model_name"):
            if k in agent and not isinstance(agent[k], str):
                problems.append(f"agent.{k}: expected a string")
        tools = agent.get("tool_definitions")
        if not isinstance(tools, list) or not all(isinstance(t, dict) for t in tools):
            problems.append("agent.tool_definitions: expected a list of objects")
    steps = doc.get("steps")
    if not isinstance(steps, list) or not steps:
        return problems + ["steps: expected a non-empty list"]
    call_ids: set[str] = set()
    for i, step in enumerate(steps, start=1):
        where = f"steps[{i - 1}]"
        problems += _keys(where, step, STEP_REQUIRED, STEP_OPTIONAL)
        if not isinstance(step, dict):
            continue
        if step.get("step_id") != i:
            problems.append(f"{where}.step_id: expected {i} (contiguous from 1), got {step.get('step_id')!r}")
        if not _iso(step.get("timestamp")):
            problems.append(f"{where}.timestamp: not an ISO 8601 date-time: {step.get('timestamp')!r}")
        source = step.get("source")
        if source not in SOURCES:
            problems.append(f"{where}.source: expected system, user or agent, got {source!r}")
        if not isinstance(step.get("message"), str):
            problems.append(f"{where}.message: expected a string")
        if "metrics" in step and source != "agent":
            problems.append(f"{where}.metrics: only agent steps carry metrics")
        here: set[str] = set()
        for j, call in enumerate(step.get("tool_calls") or []):
            cw = f"{where}.tool_calls[{j}]"
            problems += _keys(cw, call, TOOL_CALL)
            if not isinstance(call, dict):
                continue
            if source != "agent":
                problems.append(f"{cw}: only agent steps make tool calls")
            cid = call.get("tool_call_id")
            if not isinstance(cid, str) or not cid:
                problems.append(f"{cw}.tool_call_id: expected a non-empty string")
            elif cid in call_ids:
                problems.append(f"{cw}.tool_call_id: {cid!r} used twice")
            else:
                call_ids.add(cid)
                here.add(cid)
            if not isinstance(call.get("function_name"), str):
                problems.append(f"{cw}.function_name: expected a string")
            if not isinstance(call.get("arguments"), dict):
                problems.append(f"{cw}.arguments: expected an object")
        if "observation" in step:
            obs = step["observation"]
            problems += _keys(f"{where}.observation", obs, {"results"})
            results = obs.get("results") if isinstance(obs, dict) else None
            if not isinstance(results, list):
                problems.append(f"{where}.observation.results: expected a list")
                results = []
            for j, res in enumerate(results):
                rw = f"{where}.observation.results[{j}]"
                problems += _keys(rw, res, RESULT)
                if isinstance(res, dict):
                    if res.get("source_call_id") not in here:
                        problems.append(
                            f"{rw}.source_call_id: {res.get('source_call_id')!r} is no tool call of this step"
                        )
                    if not isinstance(res.get("content"), str):
                        problems.append(f"{rw}.content: expected a string")
    final = doc.get("final_metrics")
    problems += _keys("final_metrics", final, FINAL)
    if isinstance(final, dict):
        for k in ("total_prompt_tokens", "total_completion_tokens", "total_cached_tokens"):
            if k in final and not _count(final[k]):
                problems.append(f"final_metrics.{k}: expected a count or null")
        cost = final.get("total_cost_usd")
        if cost is not None and not isinstance(cost, int | float):
            problems.append("final_metrics.total_cost_usd: expected a number or null")
        if final.get("total_steps") != len(steps):
            problems.append(f"final_metrics.total_steps: {final.get('total_steps')!r} but {len(steps)} steps")
    return problems
