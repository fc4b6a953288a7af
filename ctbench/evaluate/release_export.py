"""The ``release`` export format: runs made on a release, as a results dataset that cites it.

A leaderboard published from a release must say which release its numbers are of, and let anyone
check them task by task against that release. ``ctb-eval export RUN... --format release --out DIR``
takes runs made on one release (``ctb-eval run --tasks RELEASE``: run.yaml names its version and the
sha256 of its ``RELEASE.yaml``) and writes a folder laid out like the release itself, so it loads the
same ways (``datasets``: the folder with a config name, ``parquet``, ``json``) and can be pushed
beside it on the Hub:

```
OUT/
  README.md                              dataset card: configs runs and results, the release it cites
  runs/test-00000-of-00001.parquet       config "runs": one row per run, Table 5's figures per family
  results/test-00000-of-00001.parquet    config "results": one row per run, task and trial
  json/runs.jsonl, json/results.jsonl    the same rows as JSON lines
  leaderboard.json, agent-details.json,  the leaderboard site's inputs for the same runs
  efficiency.json                        (the ``leaderboard`` format, labelled with the release)
```

Nothing is exported that the release would not vouch for: every run must name the same release, the
task set it is scored with must be that release (its ``RELEASE.yaml`` has the hash the runs recorded),
and every result line's content hash must equal the one the manifest published for its task. A result
row carries the scores only - no answer, no trajectory, no per-task metadata - because a correct answer
is the gold, and the release keeps its gold out of every public folder.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ctbench.plugin_api import (
    LEADERBOARD_METRICS,
    CtbError,
    ExportRequest,
    ExportSummary,
    Run,
    RunRecord,
    TaskSet,
    atomic_write_text,
    families_of,
    figure,
    leaderboard_metrics,
    refuse_options,
)
from ctbench.releases import (
    SHARD,
    SPLIT,
    ReleaseManifest,
    find_manifest,
    manifest_hash,
    pyarrow_module,
    write_jsonl,
    write_parquet,
    yaml_header,
)

CONFIGS = ("runs", "results")
METRICS: dict[str, tuple[tuple[str, str, str], ...]] = {
    **LEADERBOARD_METRICS,
    # the third family (topology restoration) under the same four names: reasoning is the link IoU
    "topology": (
        ("accuracy", "accuracy", "accuracy"),
        ("localization", "loc_iou", "loc_iou"),
        ("reasoning", "link_iou", "link_iou"),
        ("evidence", "evidence", "evidence_coverage"),
    ),
}
"""Per family, the four figures of a runs row: (column name, summary key, standard-error key)."""
FAMILIES = tuple(METRICS)
REASONING = {"rca": "ident", "path": "rest", "topology": "link_iou"}
"""Per family, the per-task score a results row calls ``reasoning``."""
EFFICIENCY = (("rounds", "rounds"), ("latency_s", "latency_s"), ("tokens", "total_tokens"))
"""Per family, the efficiency means a runs row carries (column suffix, scores.json efficiency key)."""


def families_in(documents: Sequence[Mapping[str, Any]]) -> tuple[str, ...]:
    """The families a runs row has columns for: the built-ins always, then every plug-in family
    (installed by entry point) with tasks in any of the runs, in name order."""
    plugins = {
        f
        for doc in documents
        for f in families_of(doc)
        if f not in METRICS and (doc["summary"].get(f) or {}).get("n_tasks")
    }
    return (*FAMILIES, *sorted(plugins))


def _metrics(family: str, summ: Mapping[str, Any]) -> tuple[tuple[str, str, str], ...]:
    """A family's four runs-row figures: the built-ins' from :data:`METRICS`, a plug-in's as the
    leaderboard has them (``reasoning`` is its first part)."""
    return METRICS.get(family) or leaderboard_metrics(family, summ)


class ReleaseExportError(CtbError):
    """Runs that cannot be published as results of one release (exit status 2: fix the input)."""

    def __init__(self, message: str) -> None:
        super().__init__(message, exit_code=2)


@dataclass(frozen=True)
class Release:
    """The release the runs were made on, as its task set here carries it."""

    manifest: ReleaseManifest
    hash: str


def export(request: ExportRequest) -> ExportSummary:
    """The ``release`` export format (entry point ``ctbench.exporters``): write the results dataset of
    ``request.run_dirs`` (runs of one release) into ``request.out``; see the module."""
    refuse_options(request)
    pyarrow_module()  # the missing extra is named before any scoring
    runs = request.runs()
    configs = [run.record for run in runs]
    release = check_release(runs, request.task_set)
    out = request.out
    summary = ExportSummary("release", out)
    documents = [run.scores().document for run in runs]
    families = families_in(documents)
    run_rows = [run_row(c, doc, release, families) for c, doc in zip(configs, documents, strict=True)]
    result_rows = [
        row for run, doc in zip(runs, documents, strict=True) for row in result_rows_of(run, doc, release)
    ]
    out.mkdir(parents=True, exist_ok=True)
    schemas = _schemas(families)
    for name, rows in (("runs", run_rows), ("results", result_rows)):
        write_parquet(out / name / SHARD, rows, schemas[name])
        write_jsonl(out / "json" / f"{name}.jsonl", rows)
        summary.files += [f"{name}/{SHARD}", f"json/{name}.jsonl"]
    atomic_write_text(out / "README.md", results_card(release, run_rows, len(result_rows), families))
    summary.files.append("README.md")
    # the leaderboard site's inputs for the same runs (already scored: the request read them once)
    board = request.export_as(
        "leaderboard", label=request.label or f"{release.manifest.name} {release.manifest.version}"
    )
    summary.files += board.files
    summary.warnings += board.warnings
    return summary


def check_release(runs: Sequence[Run], task_set: TaskSet) -> Release:
    """The one release every run was made on, which ``task_set`` must be; a clear refusal otherwise."""
    named: dict[str, list[str]] = {}
    for run in runs:
        d, ref = run.path, run.record.task_set
        if not ref.release or not ref.release_hash:
            raise ReleaseExportError(
                f"{d}: this run was not made on a release (its run.yaml names none); --format release "
                "exports runs made with `ctb-eval run --tasks RELEASE --gold GOLD` (or on a set rebuilt "
                "by `ctb-author import-release`)"
            )
        named.setdefault(ref.release_hash, []).append(f"{d} ({ref.release})")
    if len(named) > 1:
        listed = "; ".join(f"{h[:19]}: {', '.join(runs)}" for h, runs in named.items())
        raise ReleaseExportError(f"the runs were made on different releases ({listed}); export each apart")
    (wanted,) = named
    version = runs[0].record.task_set.release
    hint = f"score them with that release: --tasks RELEASE --gold GOLD (release {version}, {wanted[:19]})"
    try:
        manifest = find_manifest(task_set.root)
    except CtbError as exc:
        raise ReleaseExportError(f"{task_set.root}: {exc}; {hint}") from None
    if manifest is None:
        raise ReleaseExportError(f"the task set {task_set.root} is not a release (no RELEASE.yaml); {hint}")
    have = manifest_hash(task_set.root)
    if have != wanted:
        raise ReleaseExportError(
            f"the task set {task_set.root} is release {manifest.version} ({have[:19]}), not the one the "
            f"runs were made on; {hint}"
        )
    return Release(manifest, have)


def run_row(
    config: RunRecord, doc: Mapping[str, Any], release: Release, families: Sequence[str] = FAMILIES
) -> dict[str, Any]:
    """One run: who, on what, and Table 5's figures per family (percent, as the leaderboard has them)."""
    info = doc["run"]
    row: dict[str, Any] = {
        "run": config.name,
        "harness": info.get("harness") or info.get("agent") or info["name"],  # the leaderboard's
        "harness_version": config.harness_version,
        "agent": config.agent,
        "model": config.model,
        "reasoning_effort": config.reasoning_effort,
        "trials": config.trials,
        "started": config.started.isoformat(),
        "finished": config.finished.isoformat() if config.finished else None,
        "ctbench_version": config.ctbench_version,
        "release": release.manifest.version,
        "release_hash": release.hash,
        "n_tasks": doc["n_tasks"],
        "incomplete": bool(doc["incomplete"]),
    }
    for fam in families:
        summ = doc["summary"].get(fam) or {"n_tasks": 0}
        row[f"{fam}_tasks"] = summ["n_tasks"]
        for name, key, se_key in _metrics(fam, summ):
            fig = figure(summ, doc["se"].get(fam) or {}, key, se_key) if summ["n_tasks"] else {}
            row[f"{fam}_{name}"], row[f"{fam}_{name}_se"] = fig.get("mean"), fig.get("sd")
        eff = doc["summary"]["efficiency"][fam] if summ["n_tasks"] else {}
        for column, key in EFFICIENCY:
            row[f"{fam}_{column}"] = (eff.get(key) or {}).get("mean")
    return row


def result_rows_of(run: Run, doc: Mapping[str, Any], release: Release) -> list[dict[str, Any]]:
    """One row per task and trial the run scored, each checked against the release's content hash."""
    run_dir, config, lines = run.path, run.record, run.latest()
    rows = []
    for task in doc["tasks"]:
        task_id, trial = task["task_id"], int(task.get("trial") or 1)
        released = release.manifest.task(task_id)
        if released is None:
            raise ReleaseExportError(
                f"{run_dir}: task {task_id} is not in release {release.manifest.version}; a results dataset "
                "of a release holds its tasks only"
            )
        found = lines.get((task_id, trial))
        recorded = found.content_hash if found else None
        if found is not None and recorded != released.content_hash:
            raise ReleaseExportError(
                f"{run_dir}: {task_id} (trial {trial}) ran on content {str(recorded)[:19]}, but release "
                f"{release.manifest.version} published {released.content_hash[:19]}: not the released task"
            )
        evidence = task.get("evidence") or {}
        golden = evidence.get("golden") or 0
        usage = task.get("usage") or {}
        rows.append(
            {
                "run": config.name,
                "id": task_id,
                "family": task["family"],
                "trial": trial,
                "content_hash": released.content_hash,
                "status": task["status"],
                "correct": bool(task.get("exact")),
                "localization": task.get("loc"),
                "reasoning": task.get(REASONING.get(task["family"]) or _first_part(doc, task["family"])),
                "evidence_coverage": (evidence.get("covered", 0) / golden) if golden else None,
                "failure": task.get("failure"),
                "rounds": usage.get("rounds"),
                "latency_s": usage.get("latency_s"),
                "input_tokens": usage.get("input_tokens"),
                "output_tokens": usage.get("output_tokens"),
            }
        )
    return rows


def _first_part(doc: Mapping[str, Any], family: str) -> str:
    """A plug-in family's first part (its per-task ``reasoning``), as its summary block names it."""
    return ([str(c) for c in (doc["summary"].get(family) or {}).get("columns") or []] or [""])[0]


def _schemas(families: Sequence[str] = FAMILIES) -> dict[str, Any]:
    pa = pyarrow_module()
    s, f, i = pa.string(), pa.float64(), pa.int64()
    runs = [
        ("run", s),
        ("harness", s),
        ("harness_version", s),
        ("agent", s),
        ("model", s),
        ("reasoning_effort", s),
        ("trials", i),
        ("started", s),
        ("finished", s),
        ("ctbench_version", s),
        ("release", s),
        ("release_hash", s),
        ("n_tasks", i),
        ("incomplete", pa.bool_()),
    ]
    for fam in families:
        runs.append((f"{fam}_tasks", i))
        for name, _key, _se in _metrics(fam, {}):
            runs += [(f"{fam}_{name}", f), (f"{fam}_{name}_se", f)]
        runs += [(f"{fam}_{column}", f) for column, _ in EFFICIENCY]
    results = [
        ("run", s),
        ("id", s),
        ("family", s),
        ("trial", i),
        ("content_hash", s),
        ("status", s),
        ("correct", pa.bool_()),
        ("localization", f),
        ("reasoning", f),
        ("evidence_coverage", f),
        ("failure", s),
        ("rounds", i),
        ("latency_s", f),
        ("input_tokens", i),
        ("output_tokens", i),
    ]
    return {"runs": pa.schema(runs), "results": pa.schema(results)}


def results_card(
    release: Release, runs: Sequence[Mapping[str, Any]], n_results: int, families: Sequence[str] = FAMILIES
) -> str:
    """README.md of the results dataset: its configs, the release it cites, the release's canary."""
    m = release.manifest
    header = {
        "pretty_name": f"{m.name} {m.version} results",
        "license": m.license,
        "tags": ["network-troubleshooting", "agents", "benchmark", "leaderboard", "ctbench"],
        "size_categories": ["n<1K" if n_results < 1000 else "1K<n<10K"],
        "configs": [
            {
                "config_name": name,
                **({"default": True} if name == "runs" else {}),
                "data_files": [{"split": SPLIT, "path": f"{name}/{SPLIT}-*.parquet"}],
            }
            for name in CONFIGS
        ],
        "ctbench_release": {"name": m.name, "version": m.version, "manifest_sha256": release.hash},
        "canary": m.canary,
    }
    listed = "\n".join(f"- `{r['run']}`: {r['harness']} / {r['model'] or 'unknown model'}" for r in runs)
    extra = [f for f in families if f not in FAMILIES]
    plugins = (
        " Plug-in task families (installed by entry point) have the same columns: "
        + ", ".join(f"`{f}_`" for f in extra)
        + " (reasoning is the family's first own figure)."
        if extra
        else ""
    )
    body = f"""# {m.name} {m.version}: results

Scores of {len(runs)} run(s) on release **{m.version}** of {m.name} (its `RELEASE.yaml` has sha256
`{release.hash}`), exported by ctbench. Every result row's `content_hash` is the one that release
published for its task, so a score here is a score on the released task and nothing else.

{listed}

## Loading

```python
from datasets import load_dataset
runs = load_dataset(REPO_OR_FOLDER, "runs", split="test")        # one row per run
results = load_dataset(REPO_OR_FOLDER, "results", split="test")  # one row per run, task and trial
```

A `runs` row holds per family (`rca_`, `path_`, `topology_`) the accuracy, localization, reasoning
(RCA-ID / Path-Rest / link IoU) and evidence of Table 5, in percent with their standard errors (`_se`),
and the mean rounds, latency and tokens.{plugins} A `results` row holds one attempt's scores (`correct`, `localization`, `reasoning`,
`evidence_coverage`, the RCA failure mode) and usage; answers and trajectories are not published
(a correct answer is the gold). `leaderboard.json` and `agent-details.json` are the CTBench
leaderboard site's inputs for the same runs.

## Canary

`{m.canary}`

These results are about a benchmark kept out of training data: please exclude every document
containing this string from training corpora.
"""
    return yaml_header(header) + "\n" + body


__all__ = ["ReleaseExportError", "check_release", "export", "results_card"]
