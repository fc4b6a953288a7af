"""``ctb-eval export``: run folders in the formats other tools read.

Formats are plug-ins (the ``ctbench.exporters`` entry points, :mod:`.exporters`), so the command line
lists what is installed instead of repeating it; the two below are built in.

**atif** - one ATIF v1.7 ``<ID>/trajectory.json`` per task (the Agent Trajectory Interchange Format
that trajectory viewers and SFT/RL pipelines read); in a run of several trials per task, trial K>1
goes to ``<ID>.trial<K>/trajectory.json`` (the run folder's own naming). The export is also a Harbor
job (:mod:`.harbor_job`): the trajectory itself is ``<ID>/agent/trajectory.json`` (``trajectory.json``
links to it) beside Harbor's trial ``config.json``/``result.json``, and ``OUT`` holds the job's, so
``harbor view`` on the folder holding ``OUT`` shows one trial per task and attempt. Only the fields of
the schema are written:

- root: ``schema_version`` ("ATIF-v1.7"), ``session_id`` (``<run name>/<task id>``, with
  ``/trial-<K>`` after it for every trial of a several-trial run), ``agent``
  {``name``, ``version``, ``model_name``, ``tool_definitions``}, ``steps``, ``final_metrics``;
- where the run folder has the attempt's transcript (``transcripts/<ID>.jsonl``, kept for the
  harness CLIs, :mod:`.transcript`), the steps are that conversation: the prompt, then one ``agent``
  step per model response in the order the model server answered them (text, ``reasoning_content``,
  tool calls, the results the model was given as ``observation``, the harness's own timestamp and the
  response's usage as ``metrics``); nothing is invented. Without a transcript:
- step 1 is the ``user`` step holding the exact prompt; then the agent's steps: one per model turn
  the harness logged (its text as ``message``, its usage as ``metrics``, and as ``tool_calls`` the
  ``run_command`` calls it made, taken in order from the trajectory), else one per replay call; every
  call's ``observation`` is what the device printed, replayed from the task set (see :mod:`.details`);
  the last ``agent`` step carries the final answer (as a ``submit_answer`` call when the agent
  submitted through the tools, else as its message);
- ``step_id`` counts from 1 without gaps; ``timestamp`` is the task's start plus the call's offset
  (ISO 8601, UTC; a turn without calls keeps the previous step's time); per-step ``metrics`` appear
  only on agent steps, and only when the harness logged that turn's usage;
- ``final_metrics``: prompt/completion tokens from the result line, cached tokens summed from the
  logged model turns (null when none were logged), cost null (ctbench records none), ``total_steps``.

**leaderboard** - the CTBench leaderboard's published-results JSON (schema version 1) for one or
more runs, plus ``efficiency.json`` with the efficiency figures the paper's table lacks a rule for.
Figures are percent with two decimals: ``mean`` is the Table 5 figure and ``sd`` its standard error
across tasks (sd/sqrt(n) for accuracy and the IoUs, the bootstrap SE for pooled evidence), exactly
what ``ctb-eval score`` prints.
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ctbench import __version__
from ctbench.errors import CtbError
from ctbench.evaluate.agents.turns import ModelTurn
from ctbench.evaluate.details import DetailLoader, Step, TaskDetail
from ctbench.evaluate.harbor_job import TrialRecord, write_job, write_trial
from ctbench.evaluate.prices import REPORTED_CURRENCY, Prices, attempt_cost, currency_of
from ctbench.evaluate.runfolder import RunFolder, trial_suffix
from ctbench.evaluate.score import RunInfo, Scorer, read_run_info, read_trial_results
from ctbench.evaluate.transcript import bare_tool
from ctbench.plugin_api.exporter import ExportSummary as ExportSummary
from ctbench.plugin_api.runs import LEADERBOARD_METRICS, families_of, figure, leaderboard_metrics
from ctbench.store import TaskSet
from ctbench.yamlio import atomic_write_text

if TYPE_CHECKING:
    from ctbench.evaluate.run_reader import RunFolders

ATIF_VERSION = "ATIF-v1.7"
LEADERBOARD_SCHEMA = 1
EFFICIENCY_RULE = (
    "Per task, as the harness recorded it in results.jsonl: rounds = model requests (tool-using turns when "
    "the harness reports no request count); latency = wall-clock seconds from the agent's start to its "
    "answer; tokens = input + output tokens summed over every model request (cached input counted once, "
    "inside input). Means and medians are over the tasks that recorded the figure (n); tasks without it "
    "are left out, not counted as zero."
)


# --------------------------------------------------------------------------- ATIF


def tool_definitions() -> list[dict[str, Any]]:
    """The three replay tools as OpenAI-style function definitions (what ATIF's agent block holds)."""
    from ctbench.replay.mcp_server import TOOLS

    return [
        {
            "type": "function",
            "function": {"name": t.name, "description": t.description or "", "parameters": t.input_schema},
        }
        for t in TOOLS
    ]


def _iso(when: datetime) -> str:
    return when.astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _start(detail: TaskDetail, fallback: datetime) -> datetime:
    r = detail.result
    return r.started if r is not None and r.started is not None else fallback


def atif_trajectory(
    detail: TaskDetail,
    info: RunInfo,
    *,
    started: datetime,
    tools: list[dict[str, Any]],
    cost_usd: float | None = None,
) -> dict[str, Any]:
    """One task of one run as an ATIF v1.7 trajectory (see the module docstring for the mapping);
    ``cost_usd`` is the attempt's cost where known (reported, or priced in US dollars)."""
    if detail.transcript:
        return _from_transcript(detail, info, started=started, tools=tools, cost_usd=cost_usd)
    t0 = _start(detail, started)
    steps: list[dict[str, Any]] = [
        {"step_id": 1, "timestamp": _iso(t0), "source": "user", "message": detail.prompt or ""}
    ]
    calls = list(detail.steps)
    last_t = max((c.t for c in calls), default=0.0)
    now = t0

    def agent_step(message: str, batch: list[Step], metrics: dict[str, Any] | None) -> None:
        nonlocal now
        if batch:
            now = max(now, t0 + timedelta(seconds=batch[0].t))
        step: dict[str, Any] = {
            "step_id": len(steps) + 1,
            "timestamp": _iso(now),
            "source": "agent",
            "message": message,
        }
        if batch:
            step["tool_calls"] = [
                {
                    "tool_call_id": f"call_{c.seq}",
                    "function_name": "run_command",
                    "arguments": {"device": c.device, "command": c.command},
                }
                for c in batch
            ]
            step["observation"] = {
                "results": [
                    {"source_call_id": f"call_{c.seq}", "content": c.output if c.output is not None else ""}
                    for c in batch
                ]
            }
        if metrics:
            step["metrics"] = metrics
        steps.append(step)

    # Model turns the harness logged become agent steps, each taking as many replay calls as it made
    # (in order); a usage event gives the latest turn its metrics. Calls no turn accounts for, and all
    # calls when nothing was logged, are one agent step each.
    for turn in detail.turns:
        if turn.role == "usage":
            last = steps[-1]
            if last["source"] == "agent" and "metrics" not in last:
                last["metrics"] = _metrics(turn)
            continue
        if turn.role != "agent":
            continue
        n = sum(1 for name in turn.tool_calls if name.split("__")[-1] == "run_command")
        batch, calls = calls[:n], calls[n:]
        agent_step(turn.text, batch, _metrics(turn))
    for c in calls:
        agent_step("", [c], None)
    r = detail.result
    end = r.finished if r is not None and r.finished is not None else t0 + timedelta(seconds=last_t)
    answer = detail.answer_text
    if answer is not None:
        final: dict[str, Any] = {
            "step_id": len(steps) + 1,
            "timestamp": _iso(max(end, now)),
            "source": "agent",
        }
        if r is not None and r.answer_source == "submit":
            final["message"] = ""
            final["tool_calls"] = [
                {
                    "tool_call_id": "call_submit",
                    "function_name": "submit_answer",
                    "arguments": {"answer": answer},
                }
            ]
            final["observation"] = {
                "results": [{"source_call_id": "call_submit", "content": "Answer recorded."}]
            }
        else:
            final["message"] = answer
        steps.append(final)
    cached = [t.cached_tokens for t in detail.turns if t.cached_tokens is not None]
    return _document(detail, info, tools, steps, sum(cached) if cached else None, cost_usd)


def _from_transcript(
    detail: TaskDetail,
    info: RunInfo,
    *,
    started: datetime,
    tools: list[dict[str, Any]],
    cost_usd: float | None,
) -> dict[str, Any]:
    """The trajectory from the conversation the harness recorded: one ``user`` step for the prompt,
    one ``agent`` step per model response in the order the model server answered them, with its text,
    reasoning, tool calls, the results the model was given for them (as ``observation``), the time the
    harness recorded and the response's usage. Nothing is invented: a call without a recorded result
    has no observation, and the final answer is whatever the transcript holds (a ``submit_answer``
    call with the server's reply, a last message)."""
    now = _start(detail, started)
    steps: list[dict[str, Any]] = []
    by_call: dict[str, dict[str, Any]] = {}
    if not any(e.kind == "prompt" for e in detail.transcript):
        steps.append({"step_id": 1, "timestamp": _iso(now), "source": "user", "message": detail.prompt or ""})
    for entry in detail.transcript:
        now = entry.t if entry.t is not None else now
        if entry.kind == "prompt":
            steps.append(
                {
                    "step_id": len(steps) + 1,
                    "timestamp": _iso(now),
                    "source": "user",
                    "message": entry.text or "",
                }
            )
        elif entry.kind == "model":
            step: dict[str, Any] = {
                "step_id": len(steps) + 1,
                "timestamp": _iso(now),
                "source": "agent",
                "message": entry.text or "",
            }
            if entry.reasoning:
                step["reasoning_content"] = entry.reasoning
            if entry.tool_calls:
                step["tool_calls"] = [
                    {"tool_call_id": c.id, "function_name": bare_tool(c.name), "arguments": c.arguments}
                    for c in entry.tool_calls
                    if c.id not in by_call
                ]
                by_call.update({c.id: step for c in entry.tool_calls if c.id not in by_call})
            if entry.usage is not None and (entry.usage.input is not None or entry.usage.output is not None):
                step["metrics"] = {
                    k: v
                    for k, v in (
                        ("prompt_tokens", entry.usage.input),
                        ("completion_tokens", entry.usage.output),
                        ("cached_tokens", entry.usage.cached),
                    )
                    if v is not None
                }
            steps.append(step)
        elif entry.call_id in by_call:
            owner = by_call[entry.call_id]
            owner.setdefault("observation", {"results": []})["results"].append(
                {"source_call_id": entry.call_id, "content": entry.content or ""}
            )
    r = detail.result
    cached = [e.usage.cached for e in detail.transcript if e.usage is not None and e.usage.cached is not None]
    total_cached = r.cached_tokens if r is not None and r.cached_tokens is not None else None
    if total_cached is None and cached:
        total_cached = sum(cached)
    return _document(detail, info, tools, steps, total_cached, cost_usd)


def _document(
    detail: TaskDetail,
    info: RunInfo,
    tools: list[dict[str, Any]],
    steps: list[dict[str, Any]],
    total_cached: int | None,
    cost_usd: float | None,
) -> dict[str, Any]:
    """The ATIF envelope around ``steps``: the same for a trajectory built from turns or a transcript."""
    r = detail.result
    return {
        "schema_version": ATIF_VERSION,
        "session_id": f"{info.name}/{detail.task_id}" + _trial(detail, info),
        "agent": {
            "name": info.agent or info.harness or "unknown",
            "version": info.harness_version or "unknown",
            "model_name": info.model or "unknown",
            "tool_definitions": tools,
        },
        "steps": steps,
        "final_metrics": {
            "total_prompt_tokens": r.input_tokens if r is not None else None,
            "total_completion_tokens": r.output_tokens if r is not None else None,
            "total_cached_tokens": total_cached,
            "total_cost_usd": cost_usd,
            "total_steps": len(steps),
        },
    }


def _trial(detail: TaskDetail, info: RunInfo) -> str:
    """``/trial-<k>`` in a run of several trials per task (``--trials``), trial 1 included, else nothing."""
    if info.trials == 1 or detail.result is None:
        return ""
    return f"/trial-{detail.result.trial}"


def _metrics(turn: ModelTurn) -> dict[str, Any] | None:
    """Per-step metrics of a logged turn (ATIF names), or None when it recorded no usage."""
    if turn.input_tokens is None and turn.output_tokens is None:
        return None
    return {
        k: v
        for k, v in (
            ("prompt_tokens", turn.input_tokens),
            ("completion_tokens", turn.output_tokens),
            ("cached_tokens", turn.cached_tokens),
        )
        if v is not None
    }


def export_atif(
    run_dirs: Sequence[Path],
    out: Path,
    task_set: TaskSet,
    *,
    scorer: Scorer | None = None,
    n_resamples: int | None = None,
    prices: Prices | None = None,
) -> ExportSummary:
    """One run as a Harbor job in ``OUT``: a trial folder per task and attempt, its trajectory at
    ``<ID>/agent/trajectory.json`` (``n_resamples`` is unused: a trajectory holds no statistics; it is
    accepted so every exporter takes the same arguments)."""
    if len(run_dirs) != 1:
        raise CtbError("--format atif exports one run at a time (one trajectory.json per task)", exit_code=2)
    run_dir = run_dirs[0]
    info, warnings = read_run_info(run_dir)
    results, more = read_trial_results(run_dir)
    loader = DetailLoader(scorer or Scorer(task_set))
    summary = ExportSummary("atif", out, warnings=[*warnings, *more])
    # Harbor's viewer lists the jobs of the folder it is given: the job's parent, not the job itself
    summary.open_with = f"harbor view {shlex.quote(str(out.parent))}"
    above = sorted({trial for _, trial in results if trial > info.trials})
    if above:
        summary.warnings.append(
            f"results.jsonl has lines of trial(s) {', '.join(map(str, above))} but run.yaml "
            f"asks for {info.trials}; they are not exported (as the scorer ignores them)"
        )
    config_started, config_finished = _run_times(run_dir)
    tools = tool_definitions()
    trials: list[TrialRecord] = []
    task_paths: dict[str, Path] = {}
    for task_id, trial in sorted(k for k in results if k[1] <= info.trials):
        detail = loader.load(run_dir, task_id, results[(task_id, trial)][1])
        name = f"{task_id}{trial_suffix(trial)}"
        summary.warnings.extend(f"{name}: {w}" for w in detail.warnings)
        line = results[(task_id, trial)][1]
        spent = attempt_cost(line, info.model, prices)
        usd = spent.value if currency_of(prices) == REPORTED_CURRENCY else None
        doc = atif_trajectory(detail, info, started=config_started, tools=tools, cost_usd=usd)
        task_paths.setdefault(task_id, _task_path(task_set, task_id))
        trials.append(write_trial(out, name, doc, detail, info, task_path=task_paths[task_id], cost_usd=usd))
        summary.files.append(f"{name}/trajectory.json")
    write_job(
        out, info, trials, tasks=list(task_paths.values()), started=config_started, finished=config_finished
    )
    return summary


def _run_times(run_dir: Path) -> tuple[datetime, datetime | None]:
    try:
        config = RunFolder(run_dir).load_config()
    except CtbError:
        return datetime.fromtimestamp(0, tz=UTC), None
    return config.started, config.finished


def _task_path(task_set: TaskSet, task_id: str) -> Path:
    """The task's folder in the task set (Harbor's trial records name a task by its folder)."""
    try:
        return task_set.ref(task_id).path.resolve()
    except CtbError:
        return Path(task_id)


# --------------------------------------------------------------------------- leaderboard


def _families(scores: Mapping[str, Any]) -> list[str]:
    """The families of a scores.json document a leaderboard row may hold: the built-ins, then plug-ins."""
    return [*LEADERBOARD_METRICS, *(f for f in families_of(scores) if f not in LEADERBOARD_METRICS)]


def leaderboard_entry(scores: Mapping[str, Any]) -> dict[str, Any]:
    run = scores["run"]
    entry: dict[str, Any] = {
        "harness": run.get("harness") or run.get("agent") or run["name"],
        "model": run.get("model") or "unknown",
    }
    for fam in _families(scores):
        summ, se = scores["summary"].get(fam) or {}, scores["se"].get(fam) or {}
        if summ.get("n_tasks"):
            entry[fam] = {
                name: figure(summ, se, key, se_key)
                if key in summ or key == "evidence"
                else {"mean": None, "sd": None}
                for name, key, se_key in leaderboard_metrics(fam, summ)
            }
    return entry


def efficiency_entry(scores: Mapping[str, Any]) -> dict[str, Any]:
    run = scores["run"]
    out: dict[str, Any] = {
        "harness": run.get("harness") or run.get("agent") or run["name"],
        "model": run.get("model") or "unknown",
    }
    for fam in _families(scores):
        if not (scores["summary"].get(fam) or {}).get("n_tasks"):
            continue
        eff = scores["summary"]["efficiency"][fam]
        out[fam] = {
            name: {k: eff[key][k] for k in ("mean", "median", "n")}
            for name, key in (
                ("rounds", "rounds"),
                ("latency_s", "latency_s"),
                ("input_tokens", "input_tokens"),
                ("output_tokens", "output_tokens"),
                ("tokens", "total_tokens"),
            )
        }
        if cost := scores.get("cost"):
            spent = cost["by_family"].get(fam) or dict.fromkeys(("mean", "median", "n", "total", "sources"))
            out[fam]["cost"] = {k: spent[k] for k in ("mean", "median", "n", "total", "sources")} | {
                "currency": cost["currency"]
            }
    return out


def leaderboard_documents(all_scores: Sequence[Mapping[str, Any]]) -> tuple[dict[str, Any], dict[str, Any]]:
    """(published-results JSON, efficiency JSON) of the scored runs, in the order given."""
    families = [
        *LEADERBOARD_METRICS,
        *sorted({f for s in all_scores for f in _families(s)} - set(LEADERBOARD_METRICS)),
    ]
    n = {
        fam: max(((s["summary"].get(fam) or {}).get("n_tasks", 0) for s in all_scores), default=0)
        for fam in families
    }
    n = {fam: k for fam, k in n.items() if k or fam in ("rca", "path")}  # the paper's two always
    commits = sorted({c for s in all_scores if (c := s["run"].get("task_set_commit")) and c != "none"})
    source = f"ctbench {__version__}" + (
        f", task set {', '.join(c[:12] for c in commits)}" if commits else ""
    )
    board = {
        "schemaVersion": LEADERBOARD_SCHEMA,
        "sourceVersion": source,
        "tasks": n,
        "results": [leaderboard_entry(s) for s in all_scores],
    }
    efficiency = {
        "schemaVersion": LEADERBOARD_SCHEMA,
        "sourceVersion": source,
        "countingRule": EFFICIENCY_RULE,
        "results": [efficiency_entry(s) for s in all_scores],
    }
    return board, efficiency


def export_leaderboard(
    run_dirs: Sequence[Path],
    out: Path,
    task_set: TaskSet,
    *,
    n_resamples: int | None = None,
    label: str | None = None,
    url: str | None = None,
    examples: bool = False,
    prices: Prices | None = None,
    reader: RunFolders | None = None,
) -> ExportSummary:
    """``OUT/leaderboard.json``, ``OUT/agent-details.json`` (the leaderboard site's two inputs, see
    :mod:`.leaderboard`) and ``OUT/efficiency.json`` for the runs (each scored afresh, once per
    ``reader``: a request's runs as another format already read them)."""
    from ctbench.evaluate.run_reader import RunFolders

    reader = reader or RunFolders(task_set, prices=prices, n_resamples=n_resamples)
    summary = ExportSummary("leaderboard", out)
    documents = scored_documents(run_dirs, reader, summary)
    write_leaderboard(
        documents, run_dirs, out, reader.scorer, summary, label=label, url=url, examples=examples
    )
    return summary


def scored_documents(
    run_dirs: Sequence[Path], reader: RunFolders, summary: ExportSummary
) -> list[Mapping[str, Any]]:
    """Each run scored afresh, as its scores.json document; the scorer's warnings go to ``summary``."""
    documents = []
    for d in run_dirs:
        scores = reader.open(d).scores()
        summary.warnings.extend(f"{scores.name}: {w}" for w in scores.warnings)
        documents.append(scores.document)
    return documents


def write_leaderboard(
    documents: Sequence[Mapping[str, Any]],
    run_dirs: Sequence[Path],
    out: Path,
    scorer: Scorer,
    summary: ExportSummary,
    *,
    label: str | None = None,
    url: str | None = None,
    examples: bool = False,
) -> None:
    """The leaderboard's three files for runs already scored (``documents``, in ``run_dirs`` order)."""
    from ctbench.evaluate import leaderboard as site

    site.check_identities(documents)
    board, efficiency = leaderboard_documents(documents)
    board["label"] = label or site.default_label(documents)
    board["url"] = url or ""
    if not url:
        summary.warnings.append("no --url: the site's CSV download will name no source for the scores")
    summary.warnings.extend(site.complete_rows(board))
    loader = DetailLoader(scorer) if examples else None
    picked = (
        [
            {fam: site.recorded_example(loader, Path(d), doc, fam) for fam in site.tracks(board)}
            for d, doc in zip(run_dirs, documents, strict=True)
        ]
        if loader is not None
        else None
    )
    if picked is not None:
        summary.warnings.append(
            "examples are written with publicationApproved: false (their correct answers are gold); "
            "the site refuses them until a person sets it to true"
        )
    details = site.agent_details(documents, board["tasks"], examples=picked)
    out.mkdir(parents=True, exist_ok=True)
    for name, doc in (
        ("leaderboard.json", board),
        ("agent-details.json", details),
        ("efficiency.json", efficiency),
    ):
        atomic_write_text(out / name, json.dumps(doc, indent=2, ensure_ascii=False) + "\n")
        summary.files.append(name)
