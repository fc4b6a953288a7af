"""``ctb-eval export --format leaderboard`` against the leaderboard site's rules, and exporters as plug-ins.

The site's rules are restated in ``tests/leaderboard_site_rules.py``; the full-size synthetic run
(126 + 108 tasks) is checked against them in ``tests/test_export.py``, next to the Table 5 figures.
"""

from __future__ import annotations

import json
import os
import shutil
import textwrap
from pathlib import Path

import pytest

from ctbench.evaluate.exporters import BUILTIN, GROUP
from ctbench.store import TaskSet
from tests.conftest import REPO, run_cli
from tests.leaderboard_site_rules import SiteRejects, check_agent_details, check_example, check_leaderboard
from tests.test_score_support import oracle_run, starter_copy, write_run


def _two_runs(tmp_path: Path) -> tuple[Path, list[str]]:
    """Two runs (the oracle, and one that answers nothing) on the starters plus a second path task:
    a standard error needs two tasks of a family, and the site takes no figure without one."""
    tasks = starter_copy(tmp_path)
    src, dst = tasks / "path" / "PATH-001", tasks / "path" / "PATH-002"
    shutil.copytree(src, dst)
    for name in ("task.yaml", "hidden.yaml"):
        f = dst / name
        f.write_text(
            f.read_text(encoding="utf-8").replace("id: PATH-001\n", "id: PATH-002\n"), encoding="utf-8"
        )
    ts = TaskSet.open(tasks)
    ids = [r.id for r in ts.refs()]
    a = oracle_run(tmp_path / "runs" / "oracle", tasks, model="m1")
    usage = {t: {"rounds": 3, "latency_s": 9.0, "input_tokens": None, "output_tokens": None} for t in ids}
    b = write_run(
        tmp_path / "runs" / "silent", tasks, answers={t: None for t in ids}, model="m2", usage=usage
    )
    return tasks, [str(a), str(b)]


def _export(tasks: Path, runs: list[str], out: Path, *extra: str) -> tuple[dict, dict, str]:
    res = run_cli("evaluate", "export", *runs, "--format", "leaderboard", "--out", str(out), "--tasks",
                  str(tasks), "--resamples", "200", *extra)  # fmt: skip
    assert res.returncode == 0, res.stderr
    board = json.loads((out / "leaderboard.json").read_text(encoding="utf-8"))
    details = json.loads((out / "agent-details.json").read_text(encoding="utf-8"))
    return board, details, res.stderr


def test_a_two_run_comparison_is_what_the_site_accepts(tmp_path: Path) -> None:
    tasks, runs = _two_runs(tmp_path)
    board, details, _ = _export(
        tasks, runs, tmp_path / "site", "--label", "ctbench sample", "--url", "https://example.org/runs"
    )
    assert board["label"] == "ctbench sample" and board["url"] == "https://example.org/runs"
    assert board["tasks"] == {"rca": 2, "path": 2}
    check_leaderboard(board, tasks=board["tasks"])  # the site pins the paper's counts: see the rules module
    check_agent_details(details, board)
    oracle = details["agents"][0]["efficiency"]["rca"]
    assert oracle["tokens"]["status"] == "available" and oracle["tokens"]["value"] == 1200.0
    assert oracle["tokens"]["observed"] == 2 and oracle["tokens"]["total"] == 2
    assert oracle["tokens"]["displayValue"] == "1.2k" and oracle["tokens"]["unit"] == "tokens"
    silent = details["agents"][1]["efficiency"]["rca"]
    assert silent["rounds"]["value"] == 3.0 and silent["latency"]["displayValue"] == "9.00"
    tokens = silent["tokens"]  # this harness recorded no token counts
    assert tokens["status"] == "unavailable" and tokens["value"] is None and tokens["observed"] == 0
    assert "recorded no token usage" in tokens["reason"]
    # the paper's counts are the site's default: this release is not the paper's
    with pytest.raises(SiteRejects, match="task counts"):
        check_leaderboard(board)


def test_recorded_examples_wait_for_publication_approval(tmp_path: Path) -> None:
    tasks, runs = _two_runs(tmp_path)
    board, details, err = _export(tasks, runs, tmp_path / "site", "--examples", "--url", "https://x.org")
    assert "publicationApproved: false" in err
    oracle = details["agents"][0]
    example = oracle["examples"]["rca"]
    assert example["kind"] == "recorded" and example["publicationApproved"] is False
    assert (example["harness"], example["model"]) == (oracle["harness"], oracle["model"])
    ts = TaskSet.open(tasks)
    assert example["question"] == ts.load_task(example["id"]).statement.strip()
    golden = [(a.device, a.command) for a in ts.load_hidden(example["id"]).golden_actions]
    assert [s["command"] for s in example["steps"]] == [c for _, c in golden]
    assert all(s["observation"].strip() for s in example["steps"])
    assert details["agents"][1]["examples"] == {"rca": None, "path": None}  # nothing answered right
    with pytest.raises(SiteRejects, match="publication approval"):
        check_agent_details(details, board)
    for fam in ("rca", "path"):
        oracle["examples"][fam]["publicationApproved"] = True  # what a person does after reading it
    check_agent_details(details, board)
    example["harness"] = "someone-else"
    with pytest.raises(SiteRejects, match="another agent"):
        check_example(example, (oracle["harness"], oracle["model"]))


def test_a_run_without_a_family_gets_na_and_a_warning(tmp_path: Path) -> None:
    tasks = starter_copy(tmp_path)
    run = oracle_run(tmp_path / "runs" / "rca-only", tasks)
    lines = (run / "results.jsonl").read_text(encoding="utf-8").splitlines()
    (run / "results.jsonl").write_text(
        "".join(x + "\n" for x in lines if json.loads(x)["family"] == "rca"), encoding="utf-8"
    )
    config = (run / "run.yaml").read_text(encoding="utf-8").replace("  - PATH-001\n", "")
    (run / "run.yaml").write_text(config, encoding="utf-8")
    board, details, err = _export(tasks, [str(run)], tmp_path / "site")
    assert board["results"][0]["path"]["accuracy"] == {"mean": None, "sd": None}
    assert "no path tasks" in err and "no --url" in err
    assert details["agents"][0]["efficiency"]["path"]["rounds"]["reason"] == "the run has no path tasks"
    with pytest.raises(SiteRejects):
        check_leaderboard(board, tasks=board["tasks"])


def test_two_runs_of_one_agent_and_model_are_refused(tmp_path: Path) -> None:
    tasks = starter_copy(tmp_path)
    a = oracle_run(tmp_path / "runs" / "a", tasks)
    b = oracle_run(tmp_path / "runs" / "b", tasks)
    res = run_cli("evaluate", "export", str(a), str(b), "--format", "leaderboard", "--out", str(tmp_path / "o"),
                  "--tasks", str(tasks))  # fmt: skip
    assert res.returncode == 2 and "one row per harness and model" in res.stderr
    assert "Traceback" not in res.stderr and not (tmp_path / "o" / "leaderboard.json").exists()


# --------------------------------------------------------------------------- exporters as plug-ins

PLUGIN = '''\
"""A CSV exporter from another package: one line per task of each run."""
import csv
import json

from ctbench.evaluate.export import ExportSummary
from ctbench.evaluate.exporters import refuse_options


def export(request):
    refuse_options(request, ("sep",))
    request.out.mkdir(parents=True, exist_ok=True)
    summary = ExportSummary("csvlines", request.out)
    with (request.out / "tasks.csv").open("w", newline="") as fh:
        out = csv.writer(fh, delimiter=request.options.get("sep", ","))
        for run in request.run_dirs:
            for line in (run / "results.jsonl").read_text().splitlines():
                r = json.loads(line)
                out.writerow([run.name, r["task_id"], r["status"]])
    summary.files.append("tasks.csv")
    return summary
'''


@pytest.fixture
def plugin_env(tmp_path: Path) -> dict[str, str]:
    """A separate package, installed the way pip leaves one: its module and a dist-info with entry points."""
    root = tmp_path / "site-packages"
    (root / "ctbcsv").mkdir(parents=True)
    (root / "ctbcsv" / "__init__.py").write_text(PLUGIN, encoding="utf-8")
    dist = root / "ctbcsv-0.1.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: ctbcsv\nVersion: 0.1\n", encoding="utf-8")
    (dist / "entry_points.txt").write_text(
        textwrap.dedent(f"""\
        [{GROUP}]
        csvlines = ctbcsv:export
        """),
        encoding="utf-8",
    )
    return {"PYTHONPATH": f"{REPO}{os.pathsep}{root}"}


def test_a_plugin_exporter_is_offered_and_runs(tmp_path: Path, plugin_env: dict[str, str]) -> None:
    tasks = starter_copy(tmp_path)
    run = oracle_run(tmp_path / "runs" / "r", tasks)
    help_text = run_cli("evaluate", "export", "--help", env=plugin_env).stdout
    assert "csvlines" in help_text and "leaderboard" in help_text
    assert "csvlines" not in run_cli("evaluate", "export", "--help").stdout  # not installed: not offered
    out = tmp_path / "csv"
    res = run_cli("evaluate", "export", str(run), "--format", "csvlines", "--out", str(out), "--tasks",
                  str(tasks), "--export-arg", "sep=;", env=plugin_env)  # fmt: skip
    assert res.returncode == 0, res.stderr
    assert sorted((out / "tasks.csv").read_text().splitlines()) == [
        "r;PATH-001;answered",
        "r;RCA-001;answered",
        "r;RCA-002;answered",
    ]
    res = run_cli("evaluate", "export", str(run), "--format", "csvlines", "--out", str(out), "--tasks",
                  str(tasks), "--export-arg", "colour=red", env=plugin_env)  # fmt: skip
    assert (
        res.returncode == 2
        and "colour" in res.stderr
        and "sep" in res.stderr
        and "Traceback" not in res.stderr
    )


def test_builtin_exporters_are_declared_as_entry_points() -> None:
    import tomllib

    declared = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]["entry-points"]
    assert declared[GROUP] == BUILTIN


def test_the_mlflow_exporter_writes_runs_mlflow_reads(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("mlflow")
    monkeypatch.setenv("MLFLOW_ALLOW_FILE_STORE", "true")  # MLflow 3 reads a file store only when asked
    from mlflow.tracking import MlflowClient

    tasks = starter_copy(tmp_path)
    run = oracle_run(tmp_path / "runs" / "oracle", tasks)
    assert run_cli("evaluate", "score", str(run), "--tasks", str(tasks), "--resamples", "200").returncode == 0
    scores = json.loads((run / "scores.json").read_text(encoding="utf-8"))
    store = tmp_path / "mlruns"
    args = ("evaluate", "export", str(run), "--format", "mlflow", "--out", str(store), "--tasks", str(tasks),
            "--export-arg", "experiment=agents", "--json")  # fmt: skip
    res = run_cli(*args, timeout=300)
    assert res.returncode == 0, res.stderr
    (ref,) = json.loads(res.stdout)["files"]
    _, run_id = ref.split("/")
    client = MlflowClient(tracking_uri=store.resolve().as_uri())
    got = client.get_run(run_id)
    assert got.data.params["model"] == "m1" and got.data.tags["ctbench.run"] == "oracle"
    assert got.data.metrics["rca.accuracy"] == scores["summary"]["rca"]["accuracy"] == 1.0
    assert got.data.metrics["path.rest_iou"] == 1.0 and got.data.metrics["n_tasks"] == 3
    arts = {a.path for a in client.list_artifacts(run_id, "run")}
    assert {"run/results.jsonl", "run/run.yaml", "run/scores.json"} <= arts
    # exporting again does not make a second MLflow run
    again = run_cli(*args, timeout=300)
    assert (
        again.returncode == 0
        and json.loads(again.stdout)["files"] == [ref]
        and "already exported" in again.stderr
    )
    assert len(client.search_runs([got.info.experiment_id])) == 1


def test_a_run_with_topology_tasks_has_details_for_that_track(tmp_path: Path) -> None:
    """The leaderboard counts topology tasks when a run has them; the agent details must then give that
    track's efficiency too, or the site's check of agent-details.json fails on the missing track."""
    from tests.conftest import BUNDLED
    from tests.leaderboard_site_rules import check_agent_details

    out = tmp_path / "oracle"
    res = run_cli("evaluate", "run", "--agent", "oracle", "--allow-unreviewed", "--tasks", str(BUNDLED),
                  "--select", "TOPO-*,RCA-001,PATH-001", "--out", str(out), "--progress", "none")  # fmt: skip
    assert res.returncode == 0, res.stderr
    board, details, _ = _export(BUNDLED, [str(out)], tmp_path / "site", "--label", "x", "--url", "https://x")
    assert board["tasks"] == {"rca": 1, "path": 1, "topology": 4}
    check_agent_details(details, board)
    topology = details["agents"][0]["efficiency"]["topology"]
    assert topology["rounds"]["observed"] == 4 and topology["rounds"]["total"] == 4


def test_every_row_and_every_example_has_the_topology_track(tmp_path: Path) -> None:
    """When one run holds topology tasks the board counts that track: a run without them gets n/a figures
    and a warning (as for a missing RCA or path track), and ``--examples`` picks a topology example too."""
    from tests.conftest import BUNDLED

    oracle = tmp_path / "oracle"
    res = run_cli("evaluate", "run", "--agent", "oracle", "--allow-unreviewed", "--tasks", str(BUNDLED),
                  "--select", "TOPO-*,RCA-001,PATH-001", "--out", str(oracle), "--progress", "none")  # fmt: skip
    assert res.returncode == 0, res.stderr
    ts = TaskSet.open(BUNDLED)
    from tests.test_score_support import gold_text, golden_calls

    two = ("RCA-001", "PATH-001")
    other = write_run(
        tmp_path / "other",
        BUNDLED,
        answers={t: gold_text(ts, t) for t in two},
        calls={t: golden_calls(ts, t) for t in two},
        model="m2",
    )
    board, details, err = _export(
        BUNDLED,
        [str(oracle), str(other)],
        tmp_path / "site",
        "--label",
        "x",
        "--url",
        "https://x",
        "--examples",
    )
    assert board["tasks"] == {"rca": 1, "path": 1, "topology": 4}
    row = next(r for r in board["results"] if r["model"] == "m2")
    assert row["topology"] == {
        name: {"mean": None, "sd": None} for name in ("accuracy", "localization", "reasoning", "evidence")
    }
    assert "no topology tasks in this run" in err
    by_model = {a["model"]: a for a in details["agents"]}
    example = next(a for m, a in by_model.items() if m != "m2")["examples"]["topology"]
    assert example["id"].startswith("TOPO-") and example["kind"] == "recorded"
    assert (
        "lldp" in example["steps"][0]["command"].lower()
        and example["steps"][0]["observation"] != "(no output)"
    )
    assert "->" in example["finalAnswer"]
    assert by_model["m2"]["examples"]["topology"] is None
    for agent in details["agents"]:  # what a person does before publishing: approve the examples
        for ex in agent["examples"].values():
            if ex is not None:
                ex["publicationApproved"] = True
    check_agent_details(details, board)
