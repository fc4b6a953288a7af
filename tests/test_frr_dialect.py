"""The FRR dialect answers as FRR's vtysh does: errors, ``?``, abbreviations and its one pipe.

``tests/fixtures/frr/vtysh_answers.json`` holds what a live vtysh printed for 22 inputs typed on a
terminal. The replay must print the same, everywhere. Opt-in (``CTBENCH_LIVE_FRR_FIXTURE=1``, root and
FRR), the same inputs are typed again into a live router of a real lab and diffed against the fixture
(ctbench/authoring/lab/fixture_check.py), so the fixture cannot drift from vtysh unnoticed. The IOS dialect, given the same inputs,
answers none of them as vtysh does: that was the issue's finding, kept here as a guard.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from ctbench.dialects import Dialect, get_dialect
from ctbench.dialects.frr_syntax import placeholder, to_template

pytest_plugins = ["tests.frr_lab_support"]  # the session-shared live lab (frr_lab)

ROOT = Path(__file__).resolve().parent.parent
FIXTURE_PATH = ROOT / "tests/fixtures/frr/vtysh_answers.json"
FIXTURE = json.loads(FIXTURE_PATH.read_text())
ANSWERS: list[tuple[str, str]] = [(row["input"], row["answer"]) for row in FIXTURE["answers"]]
PROMPT: str = FIXTURE["prompt"]


def replay_answer(dialect: Dialect, line: str, prompt: str = PROMPT) -> str:
    """What the replay prints for a typed line that is help or an error (commands print recordings)."""
    from ctbench.authoring.lab.fixture_check import replay_answer as answer

    return answer(dialect, line, prompt)


@pytest.fixture(scope="module")
def frr() -> Dialect:
    return get_dialect("frr")


def test_frr_syntax_translates_vtysh_notation() -> None:
    assert to_template("show ip ospf [vrf <NAME|all>] neighbor [json]") == (
        "show ip ospf [ vrf { <word:NAME> | all } ] neighbor [ json ]"
    )
    assert to_template("show ip route {tag (1-10)|supernets-only}") == (
        "show ip route { tag <number:(1-10)> | supernets-only }..."
    )
    assert placeholder("A.B.C.D/M") == "<ipv4-prefix:A.B.C.D/M>"
    assert placeholder("IFNAME") == "<word:IFNAME>"
    assert placeholder("LINE...") == "<word:LINE>"
    assert placeholder("json") is None
    assert to_template("clear ip bgp *") == "clear ip bgp *"


def test_the_fixture_is_twenty_inputs_or_more() -> None:
    assert len(ANSWERS) >= 20
    assert any(line.endswith("?") for line, _ in ANSWERS)
    assert any("|" in line for line, _ in ANSWERS)


@pytest.mark.parametrize(("line", "answer"), ANSWERS, ids=[line for line, _ in ANSWERS])
def test_replay_answers_as_the_live_vtysh_did(frr: Dialect, line: str, answer: str) -> None:
    assert replay_answer(frr, line) == answer


def test_ios_dialect_answers_none_of_them_alike() -> None:
    ios = get_dialect("cisco_ios")
    same = [line for line, answer in ANSWERS if replay_answer(ios, line, "R1#") == answer]
    assert same == []


def test_abbreviations_resolve_by_whole_line(frr: Dialect) -> None:
    # vtysh takes "sh i b" as ambiguous but "sh int br" and "sh ip ospf nei" as one command each
    assert frr.resolve("sh int br").canonical == "show interface brief"
    assert frr.resolve("sh ip ospf nei").canonical == "show ip ospf neighbor"
    assert frr.resolve("sh ip bgp summ").canonical == "show ip bgp summary"
    assert frr.resolve("show ip route 192.168.3.0/24").canonical == "show ip route 192.168.3.0/24"
    assert frr.resolve("Show version").error is not None  # keywords are case-sensitive


def test_the_pipe_is_cut_at_the_first_bar_and_the_rest_is_one_regex(frr: Dialect) -> None:
    res = frr.resolve("show interface brief | include eth1 | include up")
    assert res.canonical == "show interface brief"
    assert [f.pattern for f in res.filters] == ["eth1 | include up"]
    data = b"eth1 up\neth2 up\nlo   up\n"
    assert frr.apply_filters(data, res.filters) == b"eth1 up\n"
    bad = frr.resolve("show interface brief | include (")
    assert bad.error is not None
    assert frr.render_error(bad.error, "show interface brief | include (", PROMPT) == "% Bad regexp '('\n"


# ---------------------------------------------------------------------------- against the live vtysh


LIVE_CHECK = pytest.mark.skipif(
    not os.environ.get("CTBENCH_LIVE_FRR_FIXTURE"),
    reason="opt-in: CTBENCH_LIVE_FRR_FIXTURE=1 re-records the vtysh fixture on a live router and diffs it "
    "(`ctb-author lab vtysh-check tasks/labs/triangle.yaml` does the same by hand)",
)


@pytest.mark.xdist_group("frr_lab")
@LIVE_CHECK
def test_live_vtysh_still_answers_as_the_fixture(frr_lab: object, frr: Dialect) -> None:
    from ctbench.authoring.lab.fixture_check import ask_live, check_fixture, load_fixture

    fixture = load_fixture(FIXTURE_PATH)
    prompt, live = ask_live(frr_lab, "R1", [row.input for row in fixture.answers])  # type: ignore[arg-type]
    report = check_fixture(fixture, prompt, live, frr, "R1")
    assert report.ok, report.text()  # the report: each differing input, committed vs live as a diff


@pytest.mark.xdist_group("frr_lab")
@LIVE_CHECK
def test_vtysh_check_command_rerecords_the_fixture_byte_for_byte(tmp_path: Path) -> None:
    from tests.frr_lab_support import require_lab_machine

    require_lab_machine()
    out = tmp_path / "live.json"
    proc = subprocess.run(
        [sys.executable, "-m", "ctbench.authoring.cli", "lab", "vtysh-check", str(ROOT / "tasks/labs/triangle.yaml"),
         "--fixture", str(FIXTURE_PATH), "--name", f"vc{os.getpid()}", "--write", str(out)],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "all answered as committed" in proc.stdout
    assert out.read_bytes() == FIXTURE_PATH.read_bytes()


@pytest.mark.xdist_group("frr_lab")
def test_live_abbreviations_and_pipe_give_the_recorded_output(frr_lab: object, frr: Dialect) -> None:
    run = frr_lab.run  # type: ignore[attr-defined]
    for typed in ("sh int br", "sh ver", "show interface brief | include eth"):
        res = frr.resolve(typed)
        assert res.canonical is not None
        recorded = run("R1", res.canonical)
        assert run("R1", typed) == frr.apply_filters(recorded, res.filters), typed


def test_replay_engine_on_a_recorded_lab_task_answers_as_vtysh() -> None:
    """The same 22 inputs through the replay engine (not the dialect alone), on a router of a task
    recorded from the live lab: the text an agent gets is what vtysh printed."""
    from ctbench.replay.engine import ReplayEngine
    from ctbench.store import TaskSet

    ts = TaskSet.open(ROOT / "tasks/labs/recorded")
    with ReplayEngine(ts).open_session("RCA-LAB-001") as session:
        differ = [line for line, answer in ANSWERS if session.run("R1", line).text != answer]
    assert differ == []


# ---------------------------------------------------------------------------- the re-check's report


def test_recheck_report_names_each_differing_input_with_a_diff(frr: Dialect) -> None:
    from ctbench.authoring.lab.fixture_check import check_fixture, load_fixture

    fixture = load_fixture(FIXTURE_PATH)
    live = [row.answer for row in fixture.answers]
    assert check_fixture(fixture, PROMPT, live, frr, "R1").ok
    n = [row.input for row in fixture.answers].index("show ip route ?")
    live[n] = live[n].replace("  bgp             Border Gateway Protocol (BGP)\n", "")  # a help line gone
    report = check_fixture(fixture, PROMPT, live, frr, "R1")
    assert not report.ok
    assert [d.input for d in report.differences] == ["show ip route ?"]
    assert report.differences[0].replay_matches_live is False
    text = report.text()
    assert "1 answered differently" in text and "--- input 'show ip route ?'" in text
    assert "-  bgp             Border Gateway Protocol (BGP)" in text
    assert report.as_json()["differences"][0]["input"] == "show ip route ?"  # type: ignore[index]


def test_vtysh_check_refuses_a_bad_fixture_naming_the_file(tmp_path: Path) -> None:
    bad = tmp_path / "fixture.json"
    bad.write_text('{"source": "x", "answers": [{"input": "show ?"}]}')
    proc = subprocess.run(
        [sys.executable, "-m", "ctbench.authoring.cli", "lab", "vtysh-check", str(ROOT / "tasks/labs/triangle.yaml"),
         "--fixture", str(bad)],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert proc.returncode == 2
    assert str(bad) in proc.stderr and "prompt" in proc.stderr and "answers.0.answer" in proc.stderr
    assert "Traceback" not in proc.stderr
