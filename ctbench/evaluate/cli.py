"""``ctb-eval``: run agents on the approved tasks, score, compare and report."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ctbench.cli_support import add_command, build_parser, emit_json, run
from ctbench.errors import CtbError
from ctbench.evaluate.report_formats import REPORT_FORMATS
from ctbench.evaluate.settings import DEFAULT_TIMEOUT_S
from ctbench.tables import formats_help

DESCRIPTION = """\
Run agents on the benchmark, score the runs with the paper's metrics, compare and report.

examples:
  ctb-eval run --agent oracle                  every approved task, writes runs/<name>/, prints the scorecard
  ctb-eval run --agent openai --model gpt-4o --base-url http://127.0.0.1:8000/v1
  ctb-eval score runs/oracle-...               (re)score a run folder, writes scores.json
  ctb-eval compare runs/a runs/b               paired tests (McNemar, bootstrap, Holm)
  ctb-eval report runs/a runs/b --format html > report.html
  ctb-eval prompt RCA-001                      the exact prompt an agent receives
"""


RUN_HELP = """\
Run an agent on every approved task (or a --select'ion), each in a fresh replay session, and write a
run folder: run.yaml, results.jsonl (one line per task, appended as it finishes), trajectories/<ID>.jsonl
(every command the agent ran) and logs/<ID>.log (the agent's own output). At the end the run is scored
and the scorecard printed.

The gate: only tasks that are approved, validate without errors and still have the content the review
approved (the review records carry its hashes) are run; the others are listed with their reason and
skipped. --allow-unreviewed runs unreviewed or changed tasks anyway (run.yaml says so); the bundled
sample tasks have no review records, so they need it. Every result line carries the task's content hash.

Rerunning into the same --out folder (or --resume DIR) skips finished tasks and runs the rest; it
refuses when the agent, model, options or task-set commit differ, unless --force. Each task ends as
answered, unparsable, timeout, or error (agent = the agent failed, never retried; infrastructure = the
replay backend or the model endpoint was unavailable, retried --retries times; task = the task itself
cannot be served, never retried).

agents:
{agents}

--select takes ids or globs (RCA-001,PATH-*), a family (rca, path), or field filters joined with
spaces or commas, all of which must hold: status=draft, tag=bgp, observability=O2, category=C1|C2,
heterogeneity=high, golden_length>=5, tier=long, label='static route missing'.

examples:
  ctb-eval run --agent oracle                           every approved task; the pipeline's ceiling
  ctb-eval run --agent oracle --allow-unreviewed        the bundled sample tasks (no review records)
  ctb-eval run --agent openai --model m --trials 3      three trials per task: pass@1, pass@3, pass^3
  ctb-eval run --agent openai --model gpt-4o --concurrency 8
  ctb-eval run --agent openai --model qwen --base-url http://127.0.0.1:8000/v1 --select rca
  ctb-eval run --agent command --agent-cmd 'my-agent --model {{model}}' --model m1 --timeout 1800
  ctb-eval run --resume runs/openai-gpt-4o-20260725T101500Z      finish an interrupted run
  ctb-eval run --resume runs/openai-gpt-4o-20260725T101500Z --retry-errors
                                                        ...and rerun tasks the endpoint failed

exit status: 0 when every task ran (whatever the agent answered), 1 when infrastructure or task errors remain
(once the backend or endpoint is back, `--resume DIR --retry-errors` runs those tasks again), 130 when
interrupted (finished tasks are kept; resume to run the rest).
"""

PROMPT_HELP = """\
Print the exact prompt an agent receives for a task: the statement, the question id, the devices,
the tool interface and the answer format. It is built from task.yaml, the network and the taxonomy's
label list only; the gold answer, golden actions and metadata are never part of it.

examples:
  ctb-eval prompt RCA-001
  ctb-eval prompt PATH-001 --tasks ../my-tasks
"""


def _add_run(sub: Any) -> None:
    from ctbench.evaluate.agents import agent_help

    p = add_command(
        sub,
        "run",
        "run an agent on the tasks and write a run folder",
        cmd_run,
        description=RUN_HELP.format(agents=agent_help()),
    )
    p.add_argument("--agent", metavar="NAME", help="the agent (ctb-eval agents lists every installed one)")
    p.add_argument(
        "--agent-arg",
        action="append",
        metavar="KEY=VALUE",
        dest="agent_arg",
        help="an option of the agent itself (repeatable; ctb-eval agents NAME lists them); "
        "recorded in run.yaml and part of what a resume must match",
    )
    p.add_argument("--model", metavar="M", help="model name (openai: required; command: passed as {model})")
    p.add_argument(
        "--tasks",
        metavar="PATH",
        help="task set folder, or a release folder (ctb-author release) (default: $CTBENCH_TASKS, else ./tasks)",
    )
    p.add_argument(
        "--gold",
        metavar="GOLD_DIR",
        help="with --tasks RELEASE: the release's gold folder (the hidden parts, for scoring and the oracle)",
    )
    p.add_argument(
        "--select", metavar="EXPR", help="which tasks: ids, globs, family, field filters (see above)"
    )
    p.add_argument(
        "--allow-unreviewed",
        action="store_true",
        help="also run tasks that are not approved, have "
        "no review record or were edited after approval (run.yaml records it; default: skip them)",
    )
    p.add_argument("--all-statuses", action="store_true", dest="allow_unreviewed", help=argparse.SUPPRESS)
    p.add_argument(
        "--allow-invalid",
        action="store_true",
        help="also run tasks that fail validation (an "
        "attempt the replay cannot serve ends as a task error, never retried)",
    )
    p.add_argument(
        "--trials",
        type=int,
        metavar="K",
        help="run each task K times, each in a fresh session (default 1); the scorer adds pass@k and pass^k",
    )
    p.add_argument(
        "--executor",
        metavar="NAME",
        help="where attempts run: local (default, asyncio in this "
        "process) or an installed executor such as ray",
    )
    p.add_argument(
        "--ray-address",
        metavar="ADDR",
        help="ray: the cluster to join (default $RAY_ADDRESS, else a "
        "local Ray instance for the run); give it again on --resume",
    )
    p.add_argument(
        "--ray-cpus-per-attempt",
        type=float,
        metavar="N",
        help="ray: CPUs reserved per concurrent attempt (default 1; fractions allowed)",
    )
    p.add_argument(
        "--executor-option",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="an executor's own option, VALUE as JSON where it parses (repeatable), e.g. ray: "
        """runtime_env='{"pip": ["ctbench[ray]==0.1.0"]}', resources='{"codex": 1}', """
        "attempts_per_host=8, host_dir=/scratch",
    )
    p.add_argument(
        "--sandbox",
        choices=("auto", "bwrap", "none"),
        help="isolate external agents with "
        "bubblewrap (auto: where it works) or not at all (none: recorded as unsandboxed)",
    )
    p.add_argument(
        "--sandbox-network",
        choices=("host", "loopback"),
        help="network of a sandboxed agent: loopback (default: each attempt in its own network "
        "namespace reaching only its replay and the --base-url model endpoint) or host (the machine's "
        "network, shared with every other attempt)",
    )
    p.add_argument(
        "--ssh",
        action="store_true",
        default=None,
        help="also give external agents SSH logins on their task's devices "
        "(user: the device name; host, port and password in $CTBENCH_SSH_*; needs the ssh extra)",
    )
    p.add_argument(
        "--limit",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a cap on each attempt (repeatable): procs=N (processes and threads, default 1024), "
        "file-size=SIZE (largest file it writes, default 256M), disk=SIZE (room in its folder, "
        "a tmpfs where the runner may mount, default 512M); VALUE off turns a cap off",
    )
    p.add_argument("--concurrency", type=int, metavar="N", help="tasks run at once (default 4)")
    p.add_argument(
        "--timeout",
        type=float,
        metavar="S",
        help=f"seconds per task before the agent is stopped (default {DEFAULT_TIMEOUT_S:g})",
    )
    p.add_argument(
        "--retries", type=int, metavar="N", help="retries after an infrastructure error (default 2)"
    )
    p.add_argument("--max-rounds", type=int, metavar="N", help="openai: model requests per task (default 50)")
    p.add_argument(
        "--out",
        metavar="DIR",
        help="run folder (default runs/<agent>-<model>-<UTC time>); an existing run folder is resumed",
    )
    p.add_argument("--resume", metavar="DIR", help="resume the run in DIR with the settings in its run.yaml")
    p.add_argument("--force", action="store_true", help="resume even though settings or the task set changed")
    p.add_argument(
        "--retry-errors",
        action="store_true",
        help="on resume, also run again the tasks whose last "
        "attempt ended in an infrastructure error (timeouts and agent errors are results and stay)",
    )
    p.add_argument(
        "--base-url",
        metavar="URL",
        help="openai: OpenAI-compatible endpoint (key from OPENAI_API_KEY or CTBENCH_API_KEY)",
    )
    p.add_argument("--agent-cmd", metavar="CMD", help="command: the program and its arguments")
    p.add_argument(
        "--progress",
        choices=("auto", "rich", "plain", "none"),
        default="auto",
        help="live display in a terminal, plain lines otherwise (default auto)",
    )
    p.add_argument("--no-score", action="store_true", help="do not score the run at the end")
    p.add_argument("--json", action="store_true", help="print the run summary as JSON on stdout")
    _prices_option(p)


def _add_prompt(sub: Any) -> None:
    p = add_command(
        sub, "prompt", "print the prompt an agent receives for a task", cmd_prompt, description=PROMPT_HELP
    )
    p.add_argument("task_id", metavar="ID", help="task id, e.g. RCA-001")
    p.add_argument("--tasks", metavar="PATH", help="task set folder (default: $CTBENCH_TASKS, else ./tasks)")
    p.add_argument("--json", action="store_true", help="print {task_id, family, prompt} as JSON")


def cmd_prompt(args: argparse.Namespace) -> int:
    from ctbench.scoring.prompt import prompt_for
    from ctbench.store import TaskSet

    ts = TaskSet.open(args.tasks)
    ref = ts.ref(args.task_id)
    text = prompt_for(ts, ref)
    if args.json:
        emit_json({"task_id": ref.id, "family": ref.family.value, "prompt": text})
    else:
        sys.stdout.write(text)
    return 0


def _release_tasks(tasks: str | None, gold: str | None) -> str | None:
    """``--tasks`` as given, or for a release folder the task set rebuilt from it (with ``--gold``)."""
    from ctbench.release_import import is_release_folder, task_set_of

    if tasks is None or not is_release_folder(Path(tasks)):
        if gold is not None:
            raise CtbError(
                "--gold goes with --tasks naming a release folder (one with RELEASE.yaml)", exit_code=2
            )
        return tasks
    return str(task_set_of(Path(tasks), Path(gold) if gold else None))


def _run_settings(args: argparse.Namespace) -> Any:
    from ctbench.evaluate.agents import parse_agent_args
    from ctbench.evaluate.runfolder import RunFolder
    from ctbench.evaluate.settings import RunSettings

    agent_args = parse_agent_args(args.agent_arg) if args.agent_arg else None
    stored: dict[str, Any] = {}  # the executor options run.yaml kept (a resume), secrets redacted
    given = {
        "agent": args.agent,
        "model": args.model,
        "tasks": _release_tasks(args.tasks, args.gold),
        "select": args.select,
        "allow_unreviewed": args.allow_unreviewed or None,
        "allow_invalid": args.allow_invalid or None,
        "concurrency": args.concurrency,
        "timeout_s": args.timeout,
        "retries": args.retries,
        "max_rounds": args.max_rounds,
        "base_url": args.base_url,
        "agent_cmd": args.agent_cmd,
        "agent_args": agent_args,
        "trials": args.trials,
        "executor": args.executor,
        "sandbox": args.sandbox,
        "sandbox_network": args.sandbox_network,
        "ssh": args.ssh,
    }
    if args.resume:
        if args.out and Path(args.out) != Path(args.resume):
            raise CtbError("give either --resume DIR or --out DIR, not two different folders", exit_code=2)
        folder = RunFolder(args.resume)
        if not folder.exists():
            raise CtbError(f"{args.resume}: not a run folder (no run.yaml)", exit_code=2)
        config = folder.load_config()
        settings = RunSettings.from_config(config, **given)
        settings.out = Path(args.resume)
        if settings.executor == config.executor:  # the same executor: as the run was started
            stored = dict(config.executor_options)
    else:
        if not args.agent:
            raise CtbError(
                "choose an agent with --agent (ctb-eval agents lists them), or --resume DIR", exit_code=2
            )
        settings = RunSettings(**{k: v for k, v in given.items() if v is not None})
        settings.out = Path(args.out) if args.out else None
    settings.force = args.force
    settings.retry_errors = args.retry_errors
    if args.limit:
        from ctbench.evaluate.limits import LimitError, apply_limit_args

        try:
            settings = settings.updated(limits=apply_limit_args(settings.agent.sandbox.limits, args.limit))
        except LimitError as exc:
            raise CtbError(str(exc), exit_code=2) from None
    ray_options = {
        k: v
        for k, v in (("address", args.ray_address), ("cpus_per_attempt", args.ray_cpus_per_attempt))
        if v is not None
    }
    if ray_options and settings.executor != "ray":
        raise CtbError("--ray-address and --ray-cpus-per-attempt need --executor ray", exit_code=2)
    if args.executor_option and settings.executor == "local":
        raise CtbError("--executor-option: the local executor has no options", exit_code=2)
    from ctbench.evaluate.executor_record import restore

    settings.executor_options = restore(stored, {**ray_options, **_executor_options(args.executor_option)})
    return settings


def _executor_options(given: list[str]) -> dict[str, object]:
    """``KEY=VALUE`` pairs; VALUE is JSON when it parses (numbers, objects, lists), else a string."""
    out: dict[str, object] = {}
    for item in given:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise CtbError(f"--executor-option {item!r}: expected KEY=VALUE", exit_code=2)
        try:
            out[key.strip()] = json.loads(value)
        except ValueError:
            out[key.strip()] = value
    return out


def _say_skipped(skipped: list[Any]) -> None:
    """The tasks the gate kept out, as one line on stderr (grouped by reason)."""
    from ctbench.approval.gate import GateResult
    from ctbench.safetext import visible

    lines = GateResult([], skipped, [], []).skipped_summary(limit=6)
    print(visible(f"skipped {len(skipped)} task(s): " + "; ".join(lines)), file=sys.stderr)


def cmd_run(args: argparse.Namespace) -> int:
    from ctbench.evaluate.progress import choose_display
    from ctbench.evaluate.runner import Runner

    prices = _prices(args.prices)  # a broken price file stops the run before any attempt is spent
    settings = _run_settings(args)
    display = choose_display(args.progress, sys.stderr)
    runner = Runner(settings, display)
    report = runner.run()
    if args.progress == "none" and runner.skipped:  # no display, but what was kept out is still said
        _say_skipped(runner.skipped)
    counts = report.counts()
    scores = None if args.no_score else _score(report.folder, runner.task_set, quiet=args.json, prices=prices)
    note = f"not scored (--no-score); score with: ctb-eval score {report.folder}" if args.no_score else None
    if args.json:
        emit_json(
            {
                "run_dir": str(report.folder),
                "complete": report.complete,
                "ran": report.ran,
                "skipped": report.skipped,
                "counts": counts,
                "scores": scores,
                "note": note,
            }
        )
    return 1 if counts.get("infrastructure error") or counts.get("task error") else 0


def _score(folder: Path, task_set: Any, *, quiet: bool, prices: Any = None) -> Any:
    """Score the finished run (writes scores.json) and print the scorecard unless ``quiet``; costs
    the harness did not report are priced with ``prices`` (``--prices FILE``)."""
    from ctbench.evaluate.score import print_scorecard, score_run

    scores = score_run(folder, task_set, prices=prices)
    if not quiet:
        print_scorecard(scores)
    return scores


# --------------------------------------------------------------------------- score, compare, report, import

SCORE_HELP = """\
Score a run folder with the paper's metrics and print the scorecard (as in the paper's Table 5: accuracy,
localisation, identification/restoration and evidence coverage, each ± its standard error across
tasks). Writes RUN/scores.json: per-task scores, every aggregate, standard errors (bootstrap for
pooled ratios: 10,000 resamples, base seed 20260725), breakdowns by every metadata field, evidence on
correct answers, the F1-F5 failure mode of each wrong RCA answer, and efficiency. Scoring the same run
twice writes the same bytes.

Answers are re-parsed from the answer text; timeouts, errors and tasks the run never finished count
as unanswered (wrong, 0 on every metric). Evidence compares the (device, canonical command) pairs
the agent ran (recorded or denied) with the golden actions.

examples:
  ctb-eval score runs/oracle-20260725T101500Z
  ctb-eval score runs/my-run --tasks ../ctbench-tasks --json > scores.json
"""

COMPARE_HELP = """\
Paired comparison of runs on the same tasks (paper appendix D.2, Table 25): the first run is A and
is compared with each other run B; differences are A minus B in percentage points. Accuracy: exact
two-sided McNemar test on the tasks where exactly one run is right, plus a paired bootstrap interval.
Localisation, identification/restoration and evidence coverage: paired bootstrap percentile 95%
intervals and sign probabilities. p-values are Holm-adjusted within each family and metric across
the comparisons; intervals are not.

Runs over different tasks are refused (the difference is listed); --common-tasks compares them on
the tasks they all have instead, with a warning. So is an incomplete run (a task that ended in an
infrastructure error or has no result would count as the agent's failure): finish it, compare on the
tasks every run finished (--common-tasks), or count them as wrong (--allow-incomplete).

--pairs names the pairs to compare instead (Tables 26 and 27): A:B,C:D with runs given by position
(1-based), run name, folder name or label; each --pairs list is one comparison scope (--scope names it)
and Holm's adjustment runs within each scope, family and metric, as in D.2.

examples:
  ctb-eval compare runs/codex-gpt runs/claude-sonnet runs/hermes-qwen
  ctb-eval compare runs/a runs/b --json
  ctb-eval compare runs/ha-qwen runs/ha-ds --pairs 1:2 --scope same-harness
  ctb-eval compare runs/cc-ds runs/cx-ds runs/ha-ds --pairs 1:2,1:3,2:3 --scope fixed-model
"""

REPORT_HELP = """\
Tables (and, in HTML, charts) for one or more runs in the shapes of the paper's tables: 5 overall,
6 efficiency, 13 structural consistency, 16 entry-match and hierarchical scores, 18 evidence on
correct answers, 19 by root-cause category, 20 by observability, 22 by heterogeneity, 25 paired
comparisons of the first run with the others, 29 failure modes, and the other metadata breakdowns.
Strata smaller than min_stratum (ctbench.yaml) are marked.

--format html writes one self-contained file (inline CSS and SVG charts: per-category radar,
heterogeneity and observability bars, cost vs accuracy with error bars); json keeps raw numbers.

examples:
  ctb-eval report runs/a runs/b runs/c --format md
  ctb-eval report runs/* --format html --out report.html
  ctb-eval report runs/a --format latex --out tables.tex
  ctb-eval report runs/a runs/b --format latex --bold-best --out tables.tex   best value per column in bold

LaTeX tables carry booktabs rules, a \\label{tab:<key>} (tab:table5, tab:table21, ...) and a caption that
says what they show; wide tables are set as table* scaled to the text width (needs graphicx).
"""

IMPORT_HELP = """\
Turn a result JSON in the paper's runner style into a run folder that `ctb-eval score`, `compare`
and `report` read like any other. The file is a list of per-question objects (or {"results": [...]})
with the task id (task_id / question_id / id), the final answer (answer_text / final_answer /
last_message / answer), the commands executed (commands / tool_calls: {device, command} objects or
"DEVICE: command" strings) and usage (rounds, latency, input/output tokens; at top level or under
"usage"). Commands may be raw or abbreviated: they are canonicalised with the vendor dialects; a
command the dialect accepts counts as executed. Task ids must exist in the task set.

examples:
  ctb-eval import-results codex_gpt55_results.json --out runs/codex-gpt55 --model gpt-5.5 --agent codex
  ctb-eval import-results results.json --out runs/imported --tasks ../ctbench-tasks && ctb-eval score runs/imported
"""


IMPORT_INSPECT_HELP = """\
Turn the log of an Inspect AI run of ctbench's tasks (`inspect eval ctbench/rca`, `ctbench/path` or
`ctbench/all`, with the `inspect` extra installed) into a run folder, so that `score`, `compare` and
`report` treat it like any run. The replay trajectory comes from the ctbench judge's score metadata,
with the outcome of every call; Inspect's epochs become trials. docs/inspect.md has the whole recipe.

examples:
  inspect eval ctbench/rca --model openai/gpt-5 -T tasks=tasks --log-dir logs
  ctb-eval import-inspect logs/2026-12-01T10-00-00_rca_XYZ.eval --out runs/inspect-gpt5
  ctb-eval compare runs/inspect-gpt5 runs/codex-gpt5
"""


def _add_scoring(sub: Any) -> None:
    tasks_help = (
        "task set folder, or a release folder with --gold "
        "(default: $CTBENCH_TASKS, else ./tasks, else the one in run.yaml)"
    )
    resamples_help = "bootstrap resamples (default 10000, the paper's; fewer for a quick look)"
    p = add_command(
        sub,
        "score",
        "score a run folder (writes scores.json, prints the scorecard)",
        cmd_score,
        description=SCORE_HELP,
    )
    p.add_argument("run_dir", metavar="RUN", help="run folder (holds run.yaml and results.jsonl)")
    p.add_argument("--tasks", metavar="DIR", help=tasks_help)
    p.add_argument("--gold", metavar="GOLD_DIR", help=GOLD_HELP)
    p.add_argument("--resamples", type=int, metavar="N", help=resamples_help)
    p.add_argument("--json", action="store_true", help="print scores.json on stdout instead of the scorecard")
    p.add_argument(
        "--metrics",
        action="append",
        choices=["ttac"],
        help="also score by other rules: ttac = TTAC Track B's (a 'ttac' block in scores.json)",
    )
    p.add_argument(
        "--ttac-paths",
        choices=["any", "all"],
        default="any",
        help="ttac: a Phase 1 path gold's lines are alternatives (any one is right) or all required",
    )
    _prices_option(p)

    p = add_command(
        sub, "compare", "paired comparison of runs on the same tasks", cmd_compare, description=COMPARE_HELP
    )
    p.add_argument("run_dirs", nargs="+", metavar="RUN", help="run folders; the first is A")
    p.add_argument("--tasks", metavar="DIR", help=tasks_help)
    p.add_argument("--gold", metavar="GOLD_DIR", help=GOLD_HELP)
    p.add_argument("--common-tasks", action="store_true", help="compare on the tasks every run has")
    p.add_argument(
        "--allow-incomplete",
        action="store_true",
        help="compare runs with unfinished tasks (infrastructure errors, no result), counting them as wrong",
    )
    p.add_argument(
        "--label",
        action="append",
        metavar="RUN=TEXT",
        help="show RUN (its folder, folder name or run name) as TEXT in the tables (default: "
        "agent+model (reasoning effort)); repeat for more runs",
    )
    p.add_argument(
        "--pairs",
        action="append",
        metavar="A:B,...",
        help="compare these pairs instead of the first "
        "run with each other (runs by position, run name, folder or label); repeat for more scopes",
    )
    p.add_argument(
        "--scope",
        action="append",
        metavar="NAME",
        help="name of the comparison scope of the matching "
        "--pairs (Holm-adjusted within it), e.g. same-harness, fixed-model",
    )
    p.add_argument("--resamples", type=int, metavar="N", help=resamples_help)
    p.add_argument("--json", action="store_true", help="print the comparisons as JSON")
    _prices_option(p)

    p = add_command(
        sub,
        "report",
        f"tables and charts for one or more runs ({', '.join(REPORT_FORMATS)})",
        cmd_report,
        description=REPORT_HELP,
    )
    p.add_argument("run_dirs", nargs="+", metavar="RUN", help="run folders; the first is A in comparisons")
    p.add_argument("--tasks", metavar="DIR", help=tasks_help)
    p.add_argument("--gold", metavar="GOLD_DIR", help=GOLD_HELP)
    p.add_argument(
        "--format", choices=tuple(REPORT_FORMATS), default="text", help=formats_help(REPORT_FORMATS.values())
    )
    p.add_argument("--out", metavar="FILE", help="write to FILE (atomically) instead of stdout")
    p.add_argument("--resamples", type=int, metavar="N", help=resamples_help)
    p.add_argument(
        "--label",
        action="append",
        metavar="RUN=TEXT",
        help="show RUN (its folder, folder name or run name) as TEXT in the tables (default: "
        "agent+model (reasoning effort)); repeat for more runs",
    )
    p.add_argument(
        "--workers",
        type=int,
        metavar="N",
        help="processes for the HTML drill-down and threads for the bootstraps (default: one per core); "
        "1 keeps the work in this process",
    )
    p.add_argument(
        "--bold-best",
        action="store_true",
        help="latex: set the best value of each column in bold (highest score, lowest cost)",
    )
    _prices_option(p)

    p = add_command(
        sub,
        "import-results",
        "turn a paper-style result JSON into a run folder",
        cmd_import_results,
        description=IMPORT_HELP,
    )
    p.add_argument(
        "file", metavar="FILE", help="result JSON (a list of per-question results, or {results: [...]})"
    )
    _import_options(p, "agent or harness name (default: from the file, else imported)")
    p.add_argument("--model", metavar="M", help="model name (default: from the file)")
    p.add_argument("--harness", metavar="H", help="harness name (default: from the file)")
    p.add_argument(
        "--format",
        choices=["ctbench", "trackb"],
        default="ctbench",
        help="trackb: a TTAC Track B result.csv or submission.csv (its eval_detail.jsonl beside it is read)",
    )
    p.add_argument(
        "--trajectories",
        metavar="DIR",
        help="trackb: the trajectories folder of ctb-replay serve --trackb (the calls of each question)",
    )

    p = add_command(
        sub,
        "import-inspect",
        "turn an Inspect AI eval log (inspect eval ctbench/rca) into a run folder",
        cmd_import_inspect,
        description=IMPORT_INSPECT_HELP,
    )
    p.add_argument(
        "file", metavar="LOG", help="Inspect eval log (.eval or .json), as `inspect eval` wrote it"
    )
    _import_options(p, "agent name (default: inspect:<task>)")


PRICES_HELP = (
    "price file (YAML or JSON: currency, date, and per model id input, cached_input and output prices "
    "per million tokens) for runs whose harness reported tokens but no cost; see docs/run-folder.md"
)


def _prices_option(p: argparse.ArgumentParser) -> None:
    p.add_argument("--prices", metavar="FILE", help=PRICES_HELP)


def _prices(value: str | None) -> Any:
    """``--prices FILE`` loaded; a broken file is a clear error naming its line."""
    from ctbench.evaluate.prices import prices_option

    return prices_option(value)


def _import_options(p: argparse.ArgumentParser, agent_help: str) -> None:
    """The options every importer takes: where the run folder goes, the task set, names, --json."""
    p.add_argument(
        "--out", metavar="RUN_DIR", required=True, help="run folder to create (must not exist yet)"
    )
    p.add_argument("--tasks", metavar="DIR", help="task set folder (default: $CTBENCH_TASKS, else ./tasks)")
    p.add_argument("--name", metavar="NAME", help="run name (default: the folder name)")
    p.add_argument("--agent", metavar="NAME", help=agent_help)
    p.add_argument("--json", action="store_true", help="print the import summary as JSON")


GOLD_HELP = "with --tasks RELEASE: the release's gold folder (scoring needs the hidden parts)"


def _task_set_for(tasks: str | None, run_dirs: Sequence[str], gold: str | None = None) -> Any:
    """--tasks (a release folder with --gold rebuilt once, as for `run`), else $CTBENCH_TASKS or ./tasks,
    else the task set a run recorded in its run.yaml."""
    import os

    from ctbench.store import TaskSet

    tasks = _release_tasks(tasks, gold)
    if tasks or os.environ.get("CTBENCH_TASKS") or Path("tasks").is_dir():
        return TaskSet.open(tasks)
    for run_dir in run_dirs:
        try:
            from ctbench.yamlio import load_fast

            recorded = load_fast(Path(run_dir) / "run.yaml").get("task_set", {}).get("path")
        except (CtbError, AttributeError):
            continue
        if recorded and Path(recorded).is_dir():
            return TaskSet.open(recorded)
    return TaskSet.open(None)


def _check_resamples(n: int | None) -> None:
    if n is not None and n < 100:
        raise CtbError("--resamples must be at least 100 (the paper uses 10000)", exit_code=2)


def _scoring_progress() -> Any:
    """A progress callback on stderr when it is a terminal; silent in pipes and CI logs."""
    if not sys.stderr.isatty():
        return None

    def show(done: int, total: int) -> None:
        if done == total or done % 50 == 0:
            end = "\n" if done == total else ""
            print(f"\rscoring {done}/{total} task(s)", end=end, file=sys.stderr, flush=True)

    return show


def cmd_score(args: argparse.Namespace) -> int:
    from ctbench.evaluate.score import SCORES_FILE, print_scorecard, score_run

    _check_resamples(args.resamples)
    task_set = _task_set_for(args.tasks, [args.run_dir], args.gold)
    scores = score_run(
        Path(args.run_dir),
        task_set,
        progress=_scoring_progress(),
        n_resamples=args.resamples,
        prices=_prices(args.prices),
    )
    if "ttac" in (args.metrics or []):
        from ctbench.evaluate.ttac import add_ttac_block

        scores = add_ttac_block(Path(args.run_dir), task_set, scores, paths=args.ttac_paths)
    if args.json:
        emit_json(scores)
    else:
        print_scorecard(scores)
        if "ttac" in scores:
            from ctbench.evaluate.ttac import ttac_lines

            print("\n".join(ttac_lines(scores["ttac"])))
        print(
            f"scores written to {Path(args.run_dir) / SCORES_FILE} (task set {task_set.root} at commit "
            f"{str(scores['scoring']['task_set_commit'])[:12]})",
            file=sys.stderr,
        )
    return 0


def cmd_compare(args: argparse.Namespace) -> int:
    from ctbench.evaluate.compare import compare_folders, comparison_table, cost_table
    from ctbench.tables import render_text

    if len(args.run_dirs) < 2:
        raise CtbError("give at least two run folders: A, then the run(s) to compare it with", exit_code=2)
    _check_resamples(args.resamples)
    task_set = _task_set_for(args.tasks, args.run_dirs, args.gold)
    if args.pairs or args.scope:
        return _compare_scoped(args, task_set)
    from ctbench.evaluate.score import parse_labels

    cmp = compare_folders(
        args.run_dirs,
        task_set,
        common=args.common_tasks,
        n_resamples=args.resamples,
        allow_incomplete=args.allow_incomplete,
        labels=parse_labels(args.label),
        prices=_prices(args.prices),
    )
    if args.json:
        emit_json(cmp.to_json())
    else:
        spent = cost_table(cmp)
        sys.stdout.write(render_text([comparison_table(cmp), *([spent] if spent else [])]))
    for warning in cmp.warnings:
        print(f"warning: {warning}", file=sys.stderr)
    return 0


def cmd_report(args: argparse.Namespace) -> int:
    from ctbench.evaluate.report import build_report
    from ctbench.evaluate.report_formats import render_report
    from ctbench.yamlio import atomic_write_text

    _check_resamples(args.resamples)
    if args.workers is not None and args.workers < 1:
        raise CtbError(f"--workers must be at least 1, not {args.workers}", exit_code=2)
    task_set = _task_set_for(args.tasks, args.run_dirs, args.gold)
    show = (lambda msg: print(msg, file=sys.stderr)) if sys.stderr.isatty() else None
    from ctbench.evaluate.score import parse_labels

    report = build_report(
        args.run_dirs,
        task_set,
        n_resamples=args.resamples,
        progress=show,
        label_of=parse_labels(args.label),
        prices=_prices(args.prices),
        workers=args.workers,
    )
    if args.out and args.format == "text":  # a file: tables at their full width, whatever the terminal
        from ctbench.evaluate.report import report_tables
        from ctbench.tables import UNBOUNDED_WIDTH, render_text

        text = render_text(report_tables(report), width=UNBOUNDED_WIDTH)
    else:
        text = render_report(report, args.format, bold_best=args.bold_best)
    if args.out:
        try:
            atomic_write_text(Path(args.out), text)
        except OSError as exc:
            raise CtbError(f"{args.out}: cannot write the report: {exc.strerror or exc}") from None
        print(f"report written to {args.out}", file=sys.stderr)
    else:
        sys.stdout.write(text)
    return 0


def cmd_import_results(args: argparse.Namespace) -> int:
    from ctbench.evaluate.importer import import_results
    from ctbench.store import TaskSet

    task_set = TaskSet.open(args.tasks)
    importer: Any = import_results
    extra: dict[str, Any] = {}
    if args.format == "trackb":
        from ctbench.evaluate.trackb_import import import_trackb_results

        importer = import_trackb_results
        extra["trajectories"] = Path(args.trajectories) if args.trajectories else None
    elif args.trajectories:
        raise CtbError("--trajectories applies to --format trackb (the Track B facade's folder)", exit_code=2)
    summary = importer(
        Path(args.file),
        Path(args.out),
        task_set,
        name=args.name,
        agent=args.agent,
        model=args.model,
        harness=args.harness,
        **extra,
    )
    return _print_import(args, task_set, summary)


def cmd_import_inspect(args: argparse.Namespace) -> int:
    from ctbench.evaluate.inspect_import import import_inspect
    from ctbench.store import TaskSet

    task_set = TaskSet.open(args.tasks)
    summary = import_inspect(Path(args.file), Path(args.out), task_set, name=args.name, agent=args.agent)
    return _print_import(args, task_set, summary)


def _print_import(args: argparse.Namespace, task_set: Any, summary: Any) -> int:
    if args.json:
        emit_json(summary.to_json())
        return 0
    outcomes = ", ".join(f"{n} {k}" for k, n in summary.outcomes.items() if n)
    print(
        f"imported {summary.tasks} task(s) ({summary.answered} answered, {summary.commands} command(s)"
        f"{': ' + outcomes if outcomes else ''}) into {summary.run_dir}"
    )
    print(f"task set: {task_set.root} at commit {summary.task_set_commit[:12]}")
    why = {
        "unparsable": "the answer is not in the task's format; scored as wrong",
        "timeout": "timed out",
        "error": "the harness reported an error",
    }
    for status, ids in summary.not_answered.items():
        shown = ", ".join(ids[:10]) + (f" and {len(ids) - 10} more" if len(ids) > 10 else "")
        print(f"{status} ({why.get(status, status)}): {shown}")
    for warning in summary.warnings:
        print(f"warning: {warning}", file=sys.stderr)
    print(f"next: ctb-eval score {summary.run_dir}")
    return 0


AGENTS_HELP = """\
List every agent installed here (built-in ones and plug-ins registered through the ctbench.agents
entry-point group), whether it can run on this machine, what it would run, and its own options
(--agent-arg KEY=VALUE). With a NAME, show that agent alone.

examples:
  ctb-eval agents
  ctb-eval agents command
  ctb-eval agents --json
"""


def _add_agents(sub: Any) -> None:
    p = add_command(
        sub,
        "agents",
        "list the agents installed here and whether they can run",
        cmd_agents,
        description=AGENTS_HELP,
    )
    p.add_argument("name", nargs="?", metavar="NAME", help="one agent only")
    p.add_argument("--json", action="store_true", help="print the list as JSON")


def _type_name(annotation: Any) -> str:
    """An option's type as a user types its value: ``float``, ``low | medium | high`` (a Literal's
    values), optional or not (``--agent-arg`` never takes None), not typing's ``Optional`` or ``Union``."""
    import types
    from typing import Literal, Union, get_args, get_origin

    origin = get_origin(annotation)
    if origin is Literal:
        names = [str(a) for a in get_args(annotation)]
    elif origin in (Union, types.UnionType):
        names = [_type_name(a) for a in get_args(annotation) if a is not type(None)]
    else:
        return getattr(annotation, "__name__", str(annotation))
    return " | ".join(dict.fromkeys(" | ".join(names).split(" | ")))


def _agent_row(name: str, entry: Any) -> dict[str, Any]:
    from ctbench.evaluate.agents import AgentConfigError

    row: dict[str, Any] = {"name": name, "target": entry.target, "package": entry.distribution}
    try:
        cls = entry.load()
    except AgentConfigError as exc:
        return {
            **row,
            "description": "",
            "available": False,
            "version": None,
            "detail": str(exc),
            "transport": None,
            "options": {},
        }
    try:
        avail = cls.availability()
        available, version, detail = avail.available, avail.version, avail.detail
    except Exception as exc:  # a plug-in's availability check failed: say so, list the rest
        available, version, detail = False, None, f"availability check failed: {type(exc).__name__}: {exc}"
    options = {}
    for key, f in cls.Options.model_fields.items():
        default = None if f.is_required() else f.get_default(call_default_factory=True)
        options[key] = {
            "type": _type_name(f.annotation),
            "default": default,
            "required": f.is_required(),
            "help": f.description or "",
        }
    return {
        **row,
        "description": cls.description,
        "available": available,
        "version": version,
        "detail": detail,
        "transport": cls.transport,
        "options": options,
    }


def cmd_agents(args: argparse.Namespace) -> int:
    from ctbench.evaluate.agents import registry

    entries = registry()
    if args.name is not None:
        if args.name not in entries:
            raise CtbError(f"unknown agent {args.name!r}; installed: {', '.join(entries)}", exit_code=2)
        entries = {args.name: entries[args.name]}
    rows = [_agent_row(name, entry) for name, entry in entries.items()]
    if args.json:
        emit_json({"agents": rows})
        return 0
    width = max(len(r["name"]) for r in rows)
    for r in rows:
        state = "ready" if r["available"] else "not available"
        version = f" {r['version']}" if r["version"] else ""
        print(f"{r['name']:<{width}}  {state:<13} {r['description']}")
        extra = "; ".join(
            x
            for x in (
                f"version{version}" if version else "",
                r["detail"],
                f"transport {r['transport']}" if r["transport"] else "",
            )
            if x
        )
        if extra:
            print(f"{'':<{width}}  {'':<13} {extra}")
        for key, opt in r["options"].items():
            dflt = "required" if opt["required"] else f"default {opt['default']!r}"
            print(
                f"{'':<{width}}  {'':<13} --agent-arg {key}=... ({opt['type']}, {dflt}){': ' + opt['help'] if opt['help'] else ''}"
            )
    return 0


def _compare_scoped(args: argparse.Namespace, task_set: Any) -> int:
    """``compare --pairs A:B,C:D --scope NAME``: the named pairs, Holm within each scope (Tables 26-27)."""
    from ctbench.evaluate.paper_tables import compare_scoped, scoped_table
    from ctbench.evaluate.score import Scorer
    from ctbench.tables import render_text

    pairs, names = args.pairs or [], args.scope or []
    if not pairs:
        raise CtbError("--scope names the scope of a --pairs list; give --pairs A:B too", exit_code=2)
    if len(names) > len(pairs):
        raise CtbError(
            f"{len(names)} --scope name(s) for {len(pairs)} --pairs list(s); give one --scope per "
            "--pairs, in the same order",
            exit_code=2,
        )
    names = names + [f"scope {i + 1}" for i in range(len(names), len(pairs))]
    scorer = Scorer(task_set, prices=_prices(args.prices))
    runs = [scorer.score_folder(d) for d in args.run_dirs]
    sc = compare_scoped(
        runs,
        list(zip(names, pairs, strict=True)),
        common=args.common_tasks,
        n_resamples=args.resamples,
        allow_incomplete=args.allow_incomplete,
    )
    if args.json:
        emit_json(sc.to_json())
    else:
        sys.stdout.write(render_text([scoped_table(sc)]))
    for warning in sc.warnings:
        print(f"warning: {warning}", file=sys.stderr)
    return 0


# --------------------------------------------------------------------------- export

EXPORT_HELP = """\
Write run folders in the formats other tools read.

  atif         one ATIF v1.7 OUT/<ID>/trajectory.json per task of one run: the prompt, every replay call
               with the output the device printed (replayed from the task set), the final answer, and
               the attempt's tokens and cost (reported, or priced with --prices); for the harness
               CLIs, the conversation they recorded (transcripts/<ID>.jsonl: each model response,
               its calls and their real results, in order, with their times and usage). Trajectory
               viewers and SFT/RL pipelines read it. A run of several trials (--trials K) writes trial K>1 to
               OUT/<ID>.trial<K>/trajectory.json. OUT is also a Harbor job (its config.json and
               result.json, and each attempt's as a trial with its trajectory in agent/): export runs
               side by side (--out atif/RUN) and `harbor view atif` shows one trial per task and attempt.
  leaderboard  OUT/leaderboard.json, the CTBench leaderboard's published-results JSON (schema version 1)
               for one or more runs: per family accuracy, localization, reasoning (RCA-ID / Path-Rest)
               and evidence, each {mean, sd} in percent (sd = the standard error across tasks, as in
               Table 5), both families in every row, with --label and --url; OUT/agent-details.json,
               the leaderboard site's efficiency per agent and family (value, observed/total, unit,
               definition) and, with --examples, one recorded trajectory per agent and family; and
               OUT/efficiency.json with means, medians and the counting rule. With --prices, costs
               are priced from tokens where a harness reported none.
  mlflow       one MLflow run per ctbench run (metrics from the scores, the run folder as artifacts)
               into a local file store: --export-arg experiment=NAME (needs the mlflow extra).
  release      runs made on one release (ctb-eval run --tasks RELEASE) as a results dataset that cites
               it, laid out like the release: configs runs (Table 5's figures per run) and results (one
               row per task and trial, its content hash checked against RELEASE.yaml; no answers), a
               dataset card naming the release, and the leaderboard files (needs the release extra).

Other formats come from plug-ins (the ctbench.exporters entry points); --format lists what is installed.

examples:
  ctb-eval export runs/codex-gpt55 --format atif --out atif/codex-gpt55    # then: harbor view atif
  ctb-eval export runs/a runs/b --format leaderboard --out site/ --label "ctbench 1.0.0" --url https://...
  ctb-eval export runs/a --format mlflow --out mlruns/ --export-arg experiment=ctbench
  ctb-eval export runs/a runs/b --format release --out results/ --tasks release/ --gold release-gold/
"""


def _add_export(sub: Any) -> None:
    from ctbench.evaluate.exporters import registry

    p = add_command(
        sub,
        "export",
        "write runs as ATIF trajectories or leaderboard JSON",
        cmd_export,
        description=EXPORT_HELP,
    )
    p.add_argument("run_dirs", nargs="+", metavar="RUN", help="run folder(s)")
    p.add_argument(
        "--format",
        choices=list(registry()),
        required=True,
        help="what to write (plug-ins: the ctbench.exporters entry points)",
    )
    p.add_argument("--label", metavar="TEXT", help="leaderboard: the label the site prints for the scores")
    p.add_argument("--url", metavar="URL", help="leaderboard: the source URL of the scores (the site's CSV)")
    p.add_argument(
        "--examples",
        action="store_true",
        help="leaderboard: add one recorded trajectory per agent and family (publicationApproved: false)",
    )
    p.add_argument(
        "--export-arg", action="append", metavar="KEY=VALUE", help="an option of the format (repeatable)"
    )
    p.add_argument("--out", metavar="DIR", required=True, help="folder to write into (created if needed)")
    p.add_argument(
        "--tasks",
        metavar="DIR",
        help="task set folder, or a release folder with --gold (default: $CTBENCH_TASKS, else ./tasks, else the one in run.yaml)",
    )
    p.add_argument("--gold", metavar="GOLD_DIR", help=GOLD_HELP)
    p.add_argument(
        "--resamples", type=int, metavar="N", help="bootstrap resamples for the SEs (default 10000)"
    )
    p.add_argument("--json", action="store_true", help="print what was written as JSON")
    _prices_option(p)


def cmd_export(args: argparse.Namespace) -> int:
    from ctbench.evaluate.exporters import export_request, exporter, parse_export_args

    _check_resamples(args.resamples)
    write = exporter(args.format)
    options = parse_export_args(args.export_arg)
    out = Path(args.out)
    if out.exists() and not out.is_dir():
        raise CtbError(
            f"{out}: exists and is not a folder; --out names the folder to write into", exit_code=2
        )
    task_set = _task_set_for(args.tasks, args.run_dirs, args.gold)
    summary = write(
        export_request(
            [Path(d) for d in args.run_dirs],
            out,
            task_set,
            n_resamples=args.resamples,
            label=args.label,
            url=args.url,
            examples=args.examples,
            options=options,
            prices=_prices(args.prices),
        )
    )
    if args.json:
        emit_json(summary.to_json())
    else:
        print(f"wrote {len(summary.files)} file(s) to {out}")
        if summary.open_with:
            print(f"open it with: {summary.open_with}")
    for warning in summary.warnings:
        print(f"warning: {warning}", file=sys.stderr)
    return 0


# --------------------------------------------------------------------------- view

VIEW_HELP = """\
Open the run viewer: the runs, then a task table (id, family, outcome, accuracy, Loc, ID/Rest, evidence
covered/total, F1-F5 label, rounds, tokens, latency) with filter (/), sort (s, S, or click a heading)
and search. Enter opens a task: the prompt, the parsed answer beside the gold entry by entry, the
trajectory step by step with the device's output (n / p), the golden actions covered or missed, and
the agent's log with the model turns its harness recorded. r flips to the same task in the next run,
c shows two runs of it side by side.

Rows come from each run's scores.json when it is up to date, else the run is scored on opening.

examples:
  ctb-eval view runs/codex-gpt55
  ctb-eval view runs/* --tasks ../ctbench-tasks
"""


def _add_view(sub: Any) -> None:
    p = add_command(
        sub, "view", "look at runs task by task (a terminal app)", cmd_view, description=VIEW_HELP
    )
    p.add_argument("run_dirs", nargs="+", metavar="RUN", help="run folder(s)")
    p.add_argument(
        "--tasks",
        metavar="DIR",
        help="task set folder, or a release folder with --gold (default: $CTBENCH_TASKS, else ./tasks, else the one in run.yaml)",
    )
    p.add_argument("--gold", metavar="GOLD_DIR", help=GOLD_HELP)


def cmd_view(args: argparse.Namespace) -> int:
    from ctbench.viewer.app import ViewerApp

    task_set = _task_set_for(args.tasks, args.run_dirs, args.gold)
    ViewerApp(args.run_dirs, task_set).run()
    return 0


def build() -> tuple[argparse.ArgumentParser, object]:
    parser, sub = build_parser("ctb-eval", DESCRIPTION)
    _add_run(sub)
    _add_agents(sub)
    _add_scoring(sub)
    _add_prompt(sub)
    _add_export(sub)
    _add_view(sub)
    from ctbench.evaluate.harness_cli import add_harness
    from ctbench.evaluate.sweep_cli import add_sweep

    add_harness(sub)
    add_sweep(sub, _in_process)
    return parser, sub


def _in_process(argv: Sequence[str]) -> int:
    """Run one ``ctb-eval`` command line in this process (a sweep's cells and reports)."""
    try:
        return main(list(argv))
    except SystemExit as exc:  # argparse on arguments it refuses
        return exc.code if isinstance(exc.code, int) else 2


def main(argv: Sequence[str] | None = None) -> int:
    parser, _ = build()
    return run(parser, argv)


if __name__ == "__main__":
    sys.exit(main())
