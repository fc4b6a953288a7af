"""Track B's rules (--metrics ttac) and its files both ways, end to end through the Track B facade."""

from __future__ import annotations

import csv
import io
import json
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from ctbench.evaluate.ttac import answer_lines, time_credit, ttac_correct
from tests.conftest import run_cli
from tests.trackb_support import GOLD, L2_GOLD, L2_PROMPT, L2_SID, Server, add_questions, write_tree

pytestmark = pytest.mark.xdist_group("trackb_scoring")

ECMP = "A->B->D\nA->C->D"


@pytest.mark.parametrize(
    ("answer", "gold", "alternatives", "paths", "right"),
    [
        pytest.param("R1;10.0.0.1;missing static route", "R1;10.0.0.1;missingstaticroute", False, "any", True,
                     id="spaces-inside-label"),
        pytest.param("X;GE1/0/1;shutdown\r\nY;1.1.1.1;blackholeroute\r\n", "X;GE1/0/1;shutdown\nY;1.1.1.1;blackholeroute",
                     False, "any", True, id="crlf"),
        pytest.param("A->B->D\n", "A->B->D", False, "any", True, id="trailing-newline"),
        pytest.param("Y;1.1.1.1;blackholeroute\nX;GE1/0/1;shutdown", "X;GE1/0/1;shutdown\nY;1.1.1.1;blackholeroute",
                     False, "any", True, id="reordered-lines"),
        pytest.param("A->C->D", ECMP, True, "any", True, id="one-ecmp-alternative-any"),
        pytest.param("A->C->D", ECMP, True, "all", False, id="one-ecmp-alternative-all"),
        pytest.param("A->C->D\nA->B->D", ECMP, True, "all", True, id="both-alternatives-all"),
        pytest.param("A->E->D", ECMP, True, "any", False, id="not-an-alternative"),
        pytest.param("r1;10.0.0.1;missingstaticroute", "R1;10.0.0.1;missingstaticroute", False, "any", False,
                     id="case-change"),
        pytest.param("X;GE1/0/1;shutdown", "X;GE1/0/1;shutdown\nY;1.1.1.1;blackholeroute", False, "any", False,
                     id="missing-line"),
        pytest.param("", "A->B", False, "any", False, id="empty"),
        pytest.param("A->B\\nC->D", "A->B\nC->D", False, "any", True, id="literal-backslash-n"),
        pytest.param("<answer>\nA -> B -> D\n</answer>", ECMP, True, "any", True, id="tags-extracted"),
        pytest.param("The fault is:\nX;GE1/0/1;shutdown\nDone.", "X;GE1/0/1;shutdown", False, "any", True,
                     id="prose-extracted"),
    ],
)  # fmt: skip
def test_normalisation_table(answer: str, gold: str, alternatives: bool, paths: str, right: bool) -> None:
    assert ttac_correct(answer, gold, alternatives=alternatives, paths=paths) is right  # type: ignore[arg-type]


def test_time_credit_and_lines() -> None:
    assert [time_credit(s) for s in (10, 299.9, 300, 599, 600, 899, 900, None)] == [
        1,
        1,
        0.8,
        0.8,
        0.6,
        0.6,
        0,
        0,
    ]
    assert answer_lines(" a -> b \n\n c ") == ["a->b", "c"]


@pytest.fixture(scope="module")
def setup(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, Path, Server]]:
    root = tmp_path_factory.mktemp("trackb-score")
    tree = write_tree(root / "tree")
    tasks = root / "tasks"
    proc = run_cli(
        "authoring", "import-trackb", str(tree.phase_dir), "--outputs", str(tree.outputs),
        "--vendors", str(tree.vendors), "--phase", "1", "--gt", str(tree.gt), "--tasks", str(tasks),
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    server = Server(tasks, root / "traj", "--trackb-strict")
    yield root, tasks, server
    server.stop()


def client(url: str, out: Path) -> None:
    """A Track B client in 20 lines: POST commands, read the evidence, write result.csv as its script does."""

    def execute(device: str, command: str, q: int) -> str:
        body = json.dumps({"device_name": device, "command": command, "question_number": q}).encode()
        req = urllib.request.Request(f"{url}/api/agent/execute", body, {"Content-Type": "application/json"})
        with urllib.request.urlopen(req) as resp:
            return json.loads(resp.read())["result"]

    answers = {}
    routes = execute("Core-R1", "display ip routing-table", 1)
    if "10.9.9.9/32  (none: missing)" in routes:
        answers[1] = "Core-R1;10.9.9.9;missing static route"
    lldp = execute("Core-R1", "display lldp neighbor brief", 3)
    if "Core-R2" in lldp and "Edge-SW1" in lldp:
        answers[3] = "Core-R1->Edge-SW1->PSS"  # one ECMP alternative, with a blank-free line
    out.mkdir(parents=True, exist_ok=True)
    with open(out / "result.csv", "w", newline="", encoding="utf-8-sig") as f:
        writer = csv.writer(f)
        writer.writerow(["id", "prediction"])
        for q, a in answers.items():
            writer.writerow([q, a])


def test_a_track_b_client_is_scored_by_track_b_rules_and_exports_both_ways(setup, tmp_path: Path) -> None:
    root, tasks, server = setup
    client(server.url, tmp_path / "eval_results")
    traj = sorted((root / "traj").glob("*/TTACB-P1-001.jsonl"))
    assert len(traj) == 1 and json.loads(traj[0].read_text().splitlines()[0])["outcome"] == "recorded"

    run = tmp_path / "runs" / "client"
    proc = run_cli(
        "evaluate", "import-results", str(tmp_path / "eval_results" / "result.csv"), "--format", "trackb",
        "--tasks", str(tasks), "--out", str(run), "--trajectories", str(root / "traj"),
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    proc = run_cli("evaluate", "score", str(run), "--tasks", str(tasks), "--metrics", "ttac")
    assert proc.returncode == 0, proc.stderr
    assert "TTAC Track B rules: accuracy 1.000 (2/2)" in proc.stdout
    scores = json.loads((run / "scores.json").read_text())
    block = scores["ttac"]
    assert block["accuracy"] == 1.0 and block["api_calls_on_solved"] == 2
    assert {t["task_id"]: t["verdict"] for t in block["tasks"]} == {
        "TTACB-P1-001": True,
        "TTACB-P1-003": True,
    }
    lines = (run / "trajectories" / "TTACB-P1-001.jsonl").read_text().splitlines()
    assert [json.loads(x)["canonical"] for x in lines] == ["display ip routing-table"]

    proc = run_cli(
        "evaluate", "score", str(run), "--tasks", str(tasks), "--metrics", "ttac", "--ttac-paths", "all"
    )
    assert "accuracy 0.500 (1/2)" in proc.stdout  # one ECMP alternative is not all of them

    out = tmp_path / "export"
    proc = run_cli(
        "evaluate", "export", str(run), "--tasks", str(tasks), "--format", "trackb", "--out", str(out)
    )
    assert proc.returncode == 0, proc.stderr
    raw = (out / "result.csv").read_bytes()
    assert raw.startswith("\ufeff".encode())
    rows = list(csv.reader(io.StringIO(raw.decode("utf-8-sig"), newline="")))
    assert rows == [
        ["id", "prediction"],
        ["1", "Core-R1;10.9.9.9;missing static route"],
        ["3", "Core-R1->Edge-SW1->PSS"],
    ]
    sub = list(csv.reader(io.StringIO((out / "submission.csv").read_bytes().decode("utf-8-sig"), newline="")))
    assert sub[0] == ["ID", "Track B"] and sub[1][0] == "11111111-1111-4111-8111-111111111111"
    assert json.loads((out / "progress.json").read_text()) == {"completed": [1, 3]}
    detail = [json.loads(x) for x in (out / "eval_detail.jsonl").read_text().splitlines()]
    assert sorted(detail[0]) == sorted(
        ["question_id", "session_id", "success", "duration_s", "extracted_answer", "agent_reply", "timestamp"]
    )
    traces = json.loads((out / "result" / "traces.json").read_text())
    assert sorted(traces[0]) == ["completion", "completion_id", "scenario_id"]
    assert [sorted(r) for r in json.loads((out / "runtime.json").read_text())] == [
        ["problem_id", "runtime_seconds"]
    ] * 2
    for name in ("result.csv", "submission.csv"):
        again = tmp_path / f"again-{name}"
        proc = run_cli(
            "evaluate", "import-results", str(out / name), "--format", "trackb", "--tasks", str(tasks),
            "--out", str(again),
        )  # fmt: skip
        assert proc.returncode == 0, proc.stderr
        proc = run_cli("evaluate", "score", str(again), "--tasks", str(tasks), "--metrics", "ttac", "--json")
        again_block = json.loads(proc.stdout)["ttac"]
        assert [(t["task_id"], t["verdict"]) for t in again_block["tasks"]] == [
            (t["task_id"], t["verdict"]) for t in block["tasks"]
        ]
        assert again_block["accuracy"] == block["accuracy"]


def test_a_multi_line_answer_survives_the_submission_round_trip(tmp_path: Path, setup) -> None:
    _, tasks, _ = setup
    ev = tmp_path / "eval"
    ev.mkdir()
    with open(ev / "result.csv", "w", newline="", encoding="utf-8-sig") as f:
        csv.writer(f).writerows([["id", "prediction"], [2, GOLD[2].replace(";", " ; ")]])
    run = tmp_path / "run"
    assert run_cli("evaluate", "import-results", str(ev / "result.csv"), "--format", "trackb", "--tasks",
                   str(tasks), "--out", str(run)).returncode == 0  # fmt: skip
    proc = run_cli("evaluate", "score", str(run), "--tasks", str(tasks), "--metrics", "ttac", "--json")
    assert json.loads(proc.stdout)["ttac"]["accuracy"] == 1.0


def test_trials_give_pass_at_1_and_the_time_discounted_credit(setup) -> None:
    from ctbench.evaluate.runfolder import ResultLine
    from ctbench.evaluate.ttac import ttac_block
    from ctbench.store import TaskSet

    _, tasks, _ = setup
    right, wrong = "Core-R1;10.9.9.9;missingstaticroute", "Core-R1;10.9.9.9;blackholeroute"
    lines = [
        ResultLine(task_id="TTACB-P1-001", family="rca", status="answered", answer_text=a, latency_s=t, trial=n,
                   commands=c)
        for n, (a, t, c) in enumerate([(wrong, 30, 9), (right, 700, 4), (right, 400, 5), (wrong, 10, 1)], start=1)
    ] + [ResultLine(task_id="TTACB-P1-002", family="rca", status="timeout", trial=1)]  # fmt: skip
    block = ttac_block(lines, TaskSet.open(tasks), task_ids=["TTACB-P1-001", "TTACB-P1-002", "TTACB-P1-003"])
    by = {t["task_id"]: t for t in block["tasks"]}
    one = by["TTACB-P1-001"]
    assert (one["verdict"], one["pass_at_1"], one["fastest_correct_s"], one["time_credit"]) == (
        False,
        0.5,
        400,
        0.8,
    )
    assert by["TTACB-P1-002"]["verdict"] is False and by["TTACB-P1-003"]["trials"] == 0  # never run: wrong
    assert block["n_tasks"] == 3 and block["accuracy"] == 0.0  # the first trial decides the verdict
    assert block["pass_at_1"] == pytest.approx(0.5 / 3) and block["time_discounted"] == pytest.approx(0.8 / 3)


def test_ctbench_agents_run_on_an_imported_phase(setup, tmp_path: Path) -> None:
    _, tasks, _ = setup
    run = tmp_path / "oracle"
    proc = run_cli(
        "evaluate", "run", "--tasks", str(tasks), "--agent", "oracle", "--allow-unreviewed", "--out", str(run)
    )
    assert proc.returncode == 0, proc.stderr
    proc = run_cli("evaluate", "score", str(run), "--tasks", str(tasks), "--metrics", "ttac")
    assert (
        "TTAC Track B rules: accuracy 1.000 (4/4)" in proc.stdout
    )  # <answer> tags taken off, as Track B does


def test_a_topology_question_is_restored_over_the_api_and_scored_both_ways(setup, tmp_path: Path) -> None:
    """Question 4 asks for Core-R2's cabling: a client reads Core-R2's LLDP through Track B's API and
    writes one link per line; Track B's rules (lines as a set, blanks deleted) and the topology
    family's metrics (cables, ports through the dialect) agree on the right answer and the wrong one."""
    _, tasks, server = setup
    code, body = server.post(
        {"device_name": "Core-R2", "command": "display lldp neighbor brief", "question_number": 4}
    )
    assert code == 200
    rows = [ln.split() for ln in str(body["result"]).splitlines()[2:] if ln.strip()]
    links = [f"Core-R2({local}) -> {peer}({remote})" for local, peer, remote, _ in rows]
    assert len(links) == 2
    verdicts = {}
    for name, answer in (("right", "\n".join(reversed(links))), ("short", links[0])):
        ev = tmp_path / name
        ev.mkdir()
        with open(ev / "result.csv", "w", newline="", encoding="utf-8-sig") as f:
            csv.writer(f).writerows([["id", "prediction"], [4, answer]])
        run = tmp_path / f"run-{name}"
        proc = run_cli("evaluate", "import-results", str(ev / "result.csv"), "--format", "trackb", "--tasks",
                       str(tasks), "--out", str(run))  # fmt: skip
        assert proc.returncode == 0, proc.stderr
        proc = run_cli("evaluate", "score", str(run), "--tasks", str(tasks), "--metrics", "ttac", "--json")
        assert proc.returncode == 0, proc.stderr
        scores = json.loads(proc.stdout)
        (ttac,) = [t for t in scores["ttac"]["tasks"] if t["task_id"] == "TTACB-P1-004"]
        (own,) = [t for t in scores["tasks"] if t["task_id"] == "TTACB-P1-004"]
        verdicts[name] = (ttac["verdict"], own["exact"], own["link_iou"])
    assert verdicts == {"right": (True, 1.0, 1.0), "short": (False, 0.0, 0.5)}


def test_the_path_parser_reads_an_l2_line() -> None:
    from ctbench.scoring.parse import parse_paths

    nodes = ["A", "B", "C"]
    r = parse_paths(
        "A(GE1) -> B(GE2)->B(GE3) -> C(GE4)", node_names=nodes, normalize_interface=lambda n, i: i
    )
    assert [tuple(h) for h in r.paths[0]] == [("A", "GE1", None), ("B", "GE3", "GE2"), ("C", None, "GE4")]  # type: ignore[index]
    r = parse_paths("<answer>A(GE1)->X(GE2)</answer>", node_names=nodes, normalize_interface=lambda n, i: i)
    assert r.status == "answered" and r.unresolved_lines[0][1] == "unknown node 'X'"
    assert (
        parse_paths("A(GE1)->X(GE2)", node_names=nodes, normalize_interface=lambda n, i: i).status
        == "unparsable"
    )


@pytest.fixture(scope="module")
def l2_set(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A Phase 2 import holding the L2 path question (5) beside the tree's own questions."""
    root = tmp_path_factory.mktemp("trackb-l2")
    tree = write_tree(root / "tree")
    add_questions(tree, {5: (L2_SID, L2_PROMPT, L2_GOLD)})
    tasks = root / "tasks"
    proc = run_cli(
        "authoring", "import-trackb", str(tree.phase_dir), "--outputs", str(tree.outputs),
        "--vendors", str(tree.vendors), "--phase", "2", "--gt", str(tree.gt), "--tasks", str(tasks),
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    return tasks


def _l2(*ports: str) -> str:
    return "->".join(ports)


R1_OUT, R2_IN, R2_OUT, PSS_IN = (
    "Core-R1(GigabitEthernet1/0/1)",
    "Core-R2(GigabitEthernet1/0/1)",
    "Core-R2(GigabitEthernet1/0/2)",
    "PSS(GigabitEthernet0/2)",
)

# answer -> (Track B's verdict, ctbench's exact, ctbench's Path-Rest): the gold is L2_GOLD, node(out)->node(in)
L2_EXAMPLES = [
    pytest.param(L2_GOLD, True, 1.0, 1.0, id="gold-verbatim"),
    pytest.param(" -> ".join((R1_OUT, R2_IN, R2_OUT, PSS_IN)).replace("(", " ( ") + "\r\n", True, 1.0, 1.0,
                 id="blanks-and-crlf"),
    pytest.param(_l2(R1_OUT, R2_IN, R2_OUT, "PSS(GigabitEthernet0/3)"), False, 0.0, 1 / 3, id="wrong-ingress-last"),
    pytest.param(_l2(R1_OUT, "Core-R2(GigabitEthernet1/0/3)", R2_OUT, PSS_IN), False, 0.0, 0.0,
                 id="wrong-ingress-inner"),
    pytest.param(_l2(R1_OUT, R2_OUT, PSS_IN), False, 0.0, 0.0, id="inner-ingress-left-out"),
    pytest.param("Core-R1_GigabitEthernet1/0/1 -> Core-R2_GigabitEthernet1/0/2 -> PSS", False, 0.0, 0.0,
                 id="egresses-only"),
    pytest.param(_l2(R1_OUT, R2_IN, "Core-R2(GigabitEthernet1/0/3)", PSS_IN), False, 0.0, 0.0,
                 id="wrong-egress"),
    # ctbench reads ports through the device's dialect; Track B compares them as the device spells them
    pytest.param(_l2("Core-R1(GE1/0/1)", "Core-R2(GE1/0/1)", "Core-R2(GE1/0/2)", "PSS(Gi0/2)"), False, 1.0, 1.0,
                 id="abbreviated-ports"),
    pytest.param(_l2(PSS_IN, R2_OUT, R2_IN, R1_OUT), False, 0.0, 0.0, id="reversed"),
]  # fmt: skip


@pytest.mark.parametrize(("answer", "verdict", "exact", "rest"), L2_EXAMPLES)
def test_an_l2_path_is_scored_with_its_ingress_ports(
    l2_set: Path, answer: str, verdict: bool, exact: float, rest: float
) -> None:
    """Track B's rules compare the whole ``node(port)`` line; ctbench's path metrics now score the
    ingress ports the gold names beside the egresses, so the two agree wherever the ports are spelled
    as the device spells them (they part only on abbreviations, which ctbench's dialects resolve)."""
    from ctbench.evaluate.ttac import ttac_correct
    from ctbench.scoring.judge import Judges
    from ctbench.store import TaskSet

    ts = TaskSet.open(l2_set)
    assert ttac_correct(answer, ts.load_hidden("TTACB-P2-005").reference_answer or "") is verdict
    scores = Judges(ts).judge("TTACB-P2-005").judge(answer)
    assert (scores.exact, scores.rest) == (exact, pytest.approx(rest))


def test_the_oracle_writes_an_l2_gold_port_by_port(l2_set: Path) -> None:
    from ctbench.evaluate.ttac import ttac_correct
    from ctbench.scoring.judge import Judges
    from ctbench.store import TaskSet

    ts = TaskSet.open(l2_set)
    judge = Judges(ts).judge("TTACB-P2-005")
    lines = judge.gold_lines()
    assert lines == [" -> ".join((R1_OUT, R2_IN, R2_OUT, PSS_IN))]
    assert judge.judge("\n".join(lines)).exact == 1.0
    assert ttac_correct("\n".join(lines), ts.load_hidden("TTACB-P2-005").reference_answer or "")


def test_ingress_counts_only_where_the_gold_names_it() -> None:
    """A ctbench path gold (node_egress) answered port by port is read for its nodes and egresses."""
    from ctbench.answer import Hop
    from ctbench.scoring.metrics import score_paths
    from ctbench.scoring.parse import parse_paths

    gold = ((Hop("A", "GE1"), Hop("B", "GE3"), Hop("C")),)
    parsed = parse_paths(
        "A(GE1)->B(GE2)->B(GE3)->C(GE4)", node_names=["A", "B", "C"], normalize_interface=lambda n, i: i
    )
    assert parsed.paths == ((Hop("A", "GE1"), Hop("B", "GE3", "GE2"), Hop("C", None, "GE4")),)
    assert score_paths(gold, parsed.paths).exact
    l2_gold = ((Hop("A", "GE1"), Hop("B", "GE3", "GE2"), Hop("C", None, "GE4")),)
    assert score_paths(l2_gold, parsed.paths).exact
    assert not score_paths(l2_gold, gold).exact  # the same path without its ingress ports


def test_a_parse_stored_before_ingress_was_kept_is_read_again(
    l2_set: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A result line stores its parse; one stored under the rules that dropped ingress ports must not
    be taken for today's, or the right answer to an L2 question would score as wrong."""
    from ctbench.scoring import judge as judge_module
    from ctbench.scoring.judge import Judges
    from ctbench.store import TaskSet

    judge = Judges(TaskSet.open(l2_set)).judge("TTACB-P2-005")
    parsed = judge.parse(L2_GOLD)
    assert judge.reader.stored(judge.reader.record(parsed, L2_GOLD), L2_GOLD) == parsed
    with monkeypatch.context() as m:
        m.setattr(judge_module, "PARSE_VERSION", "1")
        before = judge.reader.fingerprint(L2_GOLD)
    stale = parsed.to_json()
    for path in stale["paths"]:
        for hop in path:
            hop.pop("ingress", None)
    assert judge.reader.stored({**stale, "parser": before}, L2_GOLD) is None  # parsed again, ingress kept
    assert judge.score(parsed).exact == 1.0
