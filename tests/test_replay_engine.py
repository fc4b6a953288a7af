"""The replay engine through its Python API: vendor behaviour, isolation, limits, trajectories."""

from __future__ import annotations

import json
import re
import sys
import threading
import time
from pathlib import Path

import pytest

from ctbench.replay.engine import ReplayEngine
from ctbench.replay.loaded import InputError
from ctbench.replay.observation import Outcome
from ctbench.replay.session import SessionClosed, SessionLimit
from ctbench.replay.trajectory import BadLine, TrajectoryRecord, iter_trajectory, read_trajectory
from ctbench.store import TaskNotFound, TaskSet
from tests.test_replay_support import (
    ALL_TASK,
    GOLD_STRINGS,
    HOSTILE_TASK,
    build_vendor_task_set,
    captures,
)

TRAJECTORY_KEYS = {"seq", "t", "device", "command", "canonical", "outcome", "output_bytes"}


@pytest.fixture(scope="module")
def vendor_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_vendor_task_set(tmp_path_factory.mktemp("engine") / "tasks")


@pytest.fixture(scope="module")
def engine(vendor_root: Path) -> ReplayEngine:
    return ReplayEngine(TaskSet.open(vendor_root))


def recording(device: str, command: str) -> bytes:
    for c in captures():
        if c.device == device and c.command == command:
            return c.source.read_bytes()
    raise KeyError((device, command))


# --------------------------------------------------------------------------- every vendor

# os, device, full command, abbreviation, unknown line + offending token + message,
# ambiguous line + message, incomplete line + message, valid unrecorded command, filter line + regex
VENDORS = [
    (
        "huawei_vrp",
        "VRP_01",
        "display interface brief",
        "dis int br",
        "display foo",
        "foo",
        "Error: Unrecognized command found at '^' position.",
        "dis i",
        "Error:Ambiguous command found at '^' position.",
        "display",
        "Error:Incomplete command found at '^' position.",
        "display ospf peer",
        "",
        "dis int br | i up",
        "up",
    ),
    (
        "hp_comware",
        "CMW_01",
        "display interface brief",
        "dis int br",
        "display xyz",
        "xyz",
        " % Unrecognized command found at '^' position.",
        "dis i",
        " % Ambiguous command found at '^' position.",
        "dis",
        " % Incomplete command found at '^' position.",
        "display ospf peer",
        "",
        "dis int br | inc UP",
        "UP",
    ),
    (
        "cisco_ios",
        "IOS_01",
        "show ip interface brief",
        "sh ip int br",
        "show ip foo",
        "foo",
        "% Invalid input detected at '^' marker.",
        "show c",
        '% Ambiguous command:  "show c"',
        "show ip",
        "% Incomplete command.",
        "show ip protocols",
        "",
        "sh ip int br | i up",
        "up",
    ),
    (
        "cisco_nxos",
        "NXOS_01",
        "show interface brief",
        "sh int br",
        "show foo",
        "foo",
        "% Invalid command at '^' marker.",
        "sh i",
        "% Ambiguous command at '^' marker.",
        "show ip",
        "% Incomplete command at '^' marker.",
        "show ip route summary",
        "",
        "sh int br | i Eth",
        "Eth",
    ),
    (
        "juniper_junos",
        "JUN_01",
        "show interfaces terse",
        "sh int terse",
        "show foo",
        "foo",
        "syntax error, expecting <command>.",
        "sh o ne",
        "'o' is ambiguous.",
        "show",
        "syntax error, expecting <command>.",
        "show isis adjacency",
        "",
        "sh int terse | match ge-",
        "ge-",
    ),
]
IDS = [v[0] for v in VENDORS]


@pytest.mark.parametrize("case", VENDORS, ids=IDS)
def test_abbreviation_gives_the_same_bytes(engine: ReplayEngine, case: tuple[str, ...]) -> None:
    _, device, full, abbrev = case[:4]
    s = engine.open_session(ALL_TASK)
    a, b = s.run(device, full), s.run(device, abbrev)
    upper = s.run(device, "  " + abbrev.upper() + "  ")
    assert a.outcome is b.outcome is upper.outcome is Outcome.RECORDED
    assert a.data == b.data == upper.data == recording(device, full)
    assert a.canonical == b.canonical == upper.canonical == full


@pytest.mark.parametrize("case", VENDORS, ids=IDS)
def test_unknown_keyword_gives_vendor_error_with_caret(engine: ReplayEngine, case: tuple[str, ...]) -> None:
    device, line, token, message = case[1], case[4], case[5], case[6]
    s = engine.open_session(ALL_TASK)
    obs = s.run(device, line)
    assert obs.outcome is Outcome.INVALID and obs.canonical is None
    caret_line, text = obs.text.split("\n", 1)
    assert caret_line.rstrip() == " " * (len(s.prompt(device)) + line.index(token)) + "^"
    assert text.startswith(message)
    # transports without the device's echo put it back, so the caret points under the token
    echo = obs.with_echo().split("\n")
    assert echo[0] == s.prompt(device) + line
    assert echo[0][echo[1].index("^") :].startswith(token)


@pytest.mark.parametrize("case", VENDORS, ids=IDS)
def test_ambiguous_and_incomplete_have_their_own_messages(
    engine: ReplayEngine, case: tuple[str, ...]
) -> None:
    device, amb_line, amb_msg, inc_line, inc_msg = case[1], case[7], case[8], case[9], case[10]
    s = engine.open_session(ALL_TASK)
    amb, inc = s.run(device, amb_line), s.run(device, inc_line)
    assert amb.outcome is inc.outcome is Outcome.INVALID
    assert amb_msg in amb.text and inc_msg in inc.text
    assert amb.text.strip() != inc.text.strip()


@pytest.mark.parametrize("case", VENDORS, ids=IDS)
def test_valid_unrecorded_command_is_denied(engine: ReplayEngine, case: tuple[str, ...]) -> None:
    device, line = case[1], case[11]
    s = engine.open_session(ALL_TASK)
    obs = s.run(device, line)
    assert obs.outcome is Outcome.DENIED
    assert obs.canonical == line
    # the wording is the dialect's choice among the vendor's permission texts; it must be that one
    dialect = engine.dialect(case[0])
    assert obs.text == dialect.denied_text(line)
    assert obs.text.strip() and obs.text.strip() != s.run(device, case[4]).text.strip()


@pytest.mark.parametrize("case", VENDORS, ids=IDS)
def test_filters_apply_to_the_recording(engine: ReplayEngine, case: tuple[str, ...]) -> None:
    device, full, line, pattern = case[1], case[2], case[13], case[14]
    s = engine.open_session(ALL_TASK)
    obs = s.run(device, line)
    assert obs.outcome is Outcome.RECORDED and obs.canonical == full
    source = recording(device, full).decode()
    expected = [ln for ln in source.splitlines() if re.search(pattern, ln)]
    assert expected, "fixture: the filter should keep some lines"
    assert obs.text.splitlines() == expected


def test_count_filter_and_capture_taken_with_a_filter(engine: ReplayEngine) -> None:
    s = engine.open_session(ALL_TASK)
    ios = s.run("IOS_01", "sh ip int br | count up")
    n = sum(1 for ln in recording("IOS_01", "show ip interface brief").decode().splitlines() if "up" in ln)
    assert ios.outcome is Outcome.RECORDED and str(n) in ios.text
    # a capture made with a filter is keyed with it and returned as captured, byte for byte
    captured = recording("JUN_01", "show log messages | match sshd | except Received")
    obs = s.run("JUN_01", "sh log messages | match sshd | except Received")
    assert obs.data == captured
    # the same filters typed on the unfiltered capture run over it
    obs = s.run("JUN_01", "show log messages | match sshd")
    full = recording("JUN_01", "show log messages").decode()
    assert obs.text.splitlines() == [ln for ln in full.splitlines() if "sshd" in ln]


# --------------------------------------------------------------------------- devices


def test_devices_are_the_accessible_ones_with_a_cli(engine: ReplayEngine) -> None:
    s = engine.open_session(ALL_TASK)
    names = [d.name for d in s.devices()]
    assert "PC_01" not in names and "SECRET_RTR" not in names
    assert {"VRP_01", "CMW_01", "IOS_01", "NXOS_01", "JUN_01"} <= set(names)
    vrp = next(d for d in s.devices() if d.name == "VRP_01")
    assert (vrp.vendor, vrp.os, vrp.type, vrp.site) == ("Huawei", "huawei_vrp", "router", "LAB")


def test_unknown_inaccessible_and_host_devices_answer_alike(engine: ReplayEngine) -> None:
    s = engine.open_session(ALL_TASK)
    texts = {}
    for name in ("NO_SUCH_DEVICE", "SECRET_RTR", "PC_01"):
        obs = s.run(name, "show version")
        assert obs.outcome is Outcome.UNKNOWN_DEVICE and obs.canonical is None
        texts[name] = obs.text.replace(name, "<name>")
        assert "VRP_01" in obs.text and "Accessible devices" in obs.text
    assert len(set(texts.values())) == 1, texts


def test_device_names_match_case_insensitively(engine: ReplayEngine) -> None:
    s = engine.open_session(ALL_TASK)
    obs = s.run("vrp_01", "dis int br")
    assert obs.outcome is Outcome.RECORDED and obs.device == "VRP_01"


# --------------------------------------------------------------------------- hostile input


def test_huge_command_is_refused_quickly_and_clipped_in_the_log(engine: ReplayEngine, tmp_path: Path) -> None:
    s = engine.open_session(ALL_TASK, trajectory_path=tmp_path / "t.jsonl")
    start = time.perf_counter()
    obs = s.run("VRP_01", "display " + "x" * 10_000_000)
    assert time.perf_counter() - start < 2
    assert obs.outcome is Outcome.INVALID and "too long" in obs.text
    assert len(obs.command) <= engine.max_input + 1
    (rec,) = read_trajectory(tmp_path / "t.jsonl")
    assert len(rec.command) <= engine.max_input + 1
    big_device = s.run("V" * 5_000_000, "display version")
    assert big_device.outcome is Outcome.UNKNOWN_DEVICE and len(big_device.text) < 2000


@pytest.mark.parametrize(
    "line",
    [
        "dis ver\x00",
        "\x1b[2Jdisplay version",
        "dis ver\r\ndis cur",
        "dis\x7fver",
        "display version\u2028display cur",
    ],
)
def test_control_characters_are_refused(engine: ReplayEngine, line: str) -> None:
    obs = engine.open_session(ALL_TASK).run("VRP_01", line)
    assert obs.outcome is Outcome.INVALID
    assert obs.text.startswith("% ") and "\x1b" not in obs.text and "\x00" not in obs.text


def test_tabs_spaces_and_trailing_newline_are_tolerated(engine: ReplayEngine) -> None:
    s = engine.open_session(ALL_TASK)
    for line in ("dis\tint\tbr", "dis int br\n", "  dis   int   br  "):
        assert s.run("VRP_01", line).data == recording("VRP_01", "display interface brief"), line


@pytest.mark.parametrize(
    "device,line",
    [
        ("VRP_01", "display 版本"),
        ("VRP_01", "ｄｉｓｐｌａｙ version"),
        ("路由器", "display version"),
        ("VRP_01", "display version 🙂"),
        ("../../etc/passwd", "display version"),
        ("VRP_01", "../../etc/passwd"),
        ("VRP_01", "display current-configuration ../../hidden.yaml"),
        ("/etc/passwd", "show run"),
        ("VRP_01", ""),
        ("VRP_01", "   "),
        ("", "display version"),
        ("VRP_01", "|"),
        ("IOS_01", "show ip int br | ("),
    ],
)
def test_odd_input_gets_a_clean_answer(engine: ReplayEngine, device: str, line: str) -> None:
    obs = engine.open_session(ALL_TASK).run(device, line)
    assert obs.outcome in (Outcome.INVALID, Outcome.UNKNOWN_DEVICE, Outcome.DENIED)
    assert obs.text and "root:" not in obs.text and "Traceback" not in obs.text
    for gold in GOLD_STRINGS:
        assert gold not in obs.text


def test_a_bad_filter_regex_does_not_break_the_session(engine: ReplayEngine) -> None:
    s = engine.open_session(ALL_TASK)
    s.run("IOS_01", "show ip interface brief | include (")  # the dialect decides what the device says
    assert s.run("IOS_01", "sh ip int br").outcome is Outcome.RECORDED


def test_non_text_arguments_are_an_input_error(engine: ReplayEngine) -> None:
    s = engine.open_session(ALL_TASK)
    with pytest.raises(InputError):
        s.run("VRP_01", 42)  # type: ignore[arg-type]
    with pytest.raises(InputError):
        s.submit(None)  # type: ignore[arg-type]


def test_output_is_capped_with_a_visible_notice(vendor_root: Path) -> None:
    engine = ReplayEngine(TaskSet.open(vendor_root), max_output=400)
    s = engine.open_session(ALL_TASK)
    full = recording("CMW_01", "display interface")
    assert len(full) > 400
    obs = s.run("CMW_01", "display interface")
    assert obs.truncated and obs.outcome is Outcome.RECORDED
    assert "output truncated" in obs.text and f"of {len(full)} bytes" in obs.text
    head = obs.data.split(b"[ctbench: output truncated")[0]
    assert full.startswith(head.rstrip(b"\n")) and len(head) <= 401
    assert obs.output_bytes == len(obs.data)


def test_unknown_task_is_a_clean_error(engine: ReplayEngine) -> None:
    for bad in ("NOPE-1", "../rca/VENDOR-ALL", "/etc/passwd", "", "x" * 500):
        with pytest.raises(TaskNotFound if bad and len(bad) <= 64 else Exception) as info:
            engine.open_session(bad)
        assert "not found" in str(info.value)


# --------------------------------------------------------------------------- secrecy


def test_hidden_yaml_is_never_opened(vendor_root: Path) -> None:
    opened: list[str] = []
    active = threading.Event()

    def hook(event: str, args: tuple[object, ...]) -> None:
        if active.is_set() and event == "open" and args and isinstance(args[0], str | Path):
            opened.append(str(args[0]))

    sys.addaudithook(hook)  # cannot be removed; inert once `active` is cleared
    active.set()
    try:
        engine = ReplayEngine(TaskSet.open(vendor_root))
        for task in (ALL_TASK, HOSTILE_TASK):
            s = engine.open_session(task)
            for d in s.devices():
                for cmd in (
                    "display version",
                    "show version",
                    "display interface brief",
                    "display device",
                    "display startup",
                    "show interfaces terse",
                ):
                    s.run(d.name, cmd)
            s.submit("x;y;z")
    finally:
        active.clear()
    assert any(p.endswith("task.yaml") for p in opened)
    assert not [p for p in opened if "hidden" in Path(p).name]


def test_a_task_the_caller_loaded_is_not_parsed_again(
    vendor_root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The runner selects tasks by parsing task.yaml; it hands (ref, spec) over instead of a second parse."""
    ts = TaskSet.open(vendor_root)
    ref = ts.ref(ALL_TASK)
    spec = ts.load_task(ref)

    def no_second_parse(*args: object, **kwargs: object) -> None:
        raise AssertionError("task.yaml parsed again")

    monkeypatch.setattr(ts, "load_task", no_second_parse)
    monkeypatch.setattr(ts, "load_hidden", no_second_parse)
    engine = ReplayEngine(ts)
    s = engine.open_session(ALL_TASK, loaded=(ref, spec))
    assert s.run("VRP_01", "dis int br").outcome is Outcome.RECORDED
    with pytest.raises(ValueError, match="given for task"):
        engine.open_session(HOSTILE_TASK, loaded=(ref, spec))


def test_replay_works_without_hidden_yaml(vendor_root: Path, tmp_path: Path) -> None:
    import shutil

    root = tmp_path / "tasks"
    shutil.copytree(vendor_root, root, symlinks=True)
    (root / "rca" / ALL_TASK / "hidden.yaml").write_text("{{{ not yaml at all", encoding="utf-8")
    s = ReplayEngine(TaskSet.open(root)).open_session(ALL_TASK)
    assert s.run("VRP_01", "dis int br").outcome is Outcome.RECORDED


def test_recorded_commands_outside_the_tree_are_valid_for_that_task(tmp_path: Path) -> None:
    root = build_vendor_task_set(tmp_path / "tasks")
    task_file = root / "rca" / ALL_TASK / "task.yaml"
    spec = json.loads(task_file.read_text())
    (root / "rca" / ALL_TASK / "recordings" / "special.txt").write_bytes(b"special output\r\n")
    spec["recordings"].append(
        {"device": "VRP_01", "command": "display frobnicator table 7", "file": "recordings/special.txt"}
    )
    task_file.write_text(json.dumps(spec))
    s = ReplayEngine(TaskSet.open(root)).open_session(ALL_TASK)
    obs = s.run("VRP_01", "dis frob tab 7")
    assert obs.outcome is Outcome.RECORDED and obs.data == b"special output\r\n"
    assert obs.canonical == "display frobnicator table 7"
    other = s.run("VRP_02", "display frobnicator table 7")
    assert other.outcome is Outcome.INVALID


# --------------------------------------------------------------------------- trajectory, answer, lifetime


def test_trajectory_lines_are_written_and_flushed_per_call(engine: ReplayEngine, tmp_path: Path) -> None:
    path = tmp_path / "run" / "trajectories" / f"{ALL_TASK}.jsonl"
    s = engine.open_session(ALL_TASK, trajectory_path=path)
    s.run("VRP_01", "dis int br")
    s.run("VRP_01", "display ospf peer")
    s.run("VRP_01", "dis foo")
    s.run("NOPE", "x")
    lines = path.read_text().splitlines()  # session still open: lines must be on disk already
    assert len(lines) == 4
    rows = [json.loads(x) for x in lines]
    assert all(set(r) == TRAJECTORY_KEYS for r in rows)
    assert [r["outcome"] for r in rows] == ["recorded", "denied", "invalid", "unknown-device"]
    assert [r["seq"] for r in rows] == [1, 2, 3, 4]
    assert rows[0]["canonical"] == "display interface brief" and rows[0]["command"] == "dis int br"
    assert rows[0]["output_bytes"] == len(recording("VRP_01", "display interface brief"))
    assert all(a["t"] <= b["t"] for a, b in zip(rows, rows[1:], strict=False))
    assert [r.model_dump(mode="json") for r in s.trajectory] == rows
    s.close()
    with pytest.raises(SessionClosed):
        s.run("VRP_01", "dis int br")


def test_an_earlier_trajectory_is_kept_aside_not_overwritten(engine: ReplayEngine, tmp_path: Path) -> None:
    path = tmp_path / "T.jsonl"
    with engine.open_session(ALL_TASK, trajectory_path=path) as s:
        s.run("VRP_01", "dis int br")
    first = path.read_bytes()
    with engine.open_session(ALL_TASK, trajectory_path=path) as s:
        s.run("IOS_01", "sh ip int br")
    assert (tmp_path / "T.jsonl.prev1").read_bytes() == first
    (rec,) = read_trajectory(path)
    assert isinstance(rec, TrajectoryRecord) and rec.device == "IOS_01" and rec.seq == 1


def test_submit_keeps_the_last_answer(engine: ReplayEngine) -> None:
    s = engine.open_session(ALL_TASK)
    assert s.answer is None
    first = s.submit("A;b;c")
    second = s.submit("VRP_01;GE0/0/1;shutdown\nIOS_01;Gi1;acl\n")
    assert (first.count, second.count, second.lines) == (1, 2, 2)
    assert s.answer == second
    with pytest.raises(InputError):
        s.submit("x" * (engine.max_answer + 1))


def test_call_limit(vendor_root: Path) -> None:
    s = ReplayEngine(TaskSet.open(vendor_root), max_calls=3).open_session(ALL_TASK)
    for _ in range(3):
        s.run("VRP_01", "dis int br")
    with pytest.raises(SessionLimit):
        s.run("VRP_01", "dis int br")


def test_sessions_are_isolated_and_thread_safe(engine: ReplayEngine, tmp_path: Path) -> None:
    shared = engine.open_session(ALL_TASK, trajectory_path=tmp_path / "shared.jsonl")
    own = [engine.open_session(ALL_TASK) for _ in range(4)]
    lines = [
        ("VRP_01", "dis int br"),
        ("IOS_01", "sh ip int br | i up"),
        ("JUN_01", "sh foo"),
        ("NXOS_01", "show ip route summary"),
        ("SECRET_RTR", "show version"),
        ("CMW_01", "dis int br"),
    ]
    expected = {ln: engine.open_session(ALL_TASK).run(*ln).data for ln in lines}
    errors: list[str] = []

    def work(i: int) -> None:
        mine = own[i % 4]
        for k in range(150):
            ln = lines[(i + k) % len(lines)]
            for s in (shared, mine):
                obs = s.run(*ln)
                if obs.data != expected[ln]:
                    errors.append(f"{ln}: {obs.text[:80]!r}")

    threads = [threading.Thread(target=work, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert shared.calls == 8 * 150 and sorted(r.seq for r in shared.trajectory) == list(range(1, 1201))
    assert [r.seq for r in read_trajectory(tmp_path / "shared.jsonl")] == list(range(1, 1201))
    assert [s.calls for s in own] == [300, 300, 300, 300]
    assert engine.task(ALL_TASK) is engine.task(ALL_TASK)


def test_bad_trajectory_lines_name_the_first_problem(tmp_path: Path) -> None:
    """A reader (the scorer, ``ctb-replay gaps``) is told the line and its first problem, not pydantic's wall."""
    path = tmp_path / "t.jsonl"
    good = {
        "seq": 1,
        "t": 0.5,
        "device": "VRP_01",
        "command": "dis int br",
        "canonical": None,
        "outcome": "recorded",
        "output_bytes": 10,
    }
    path.write_text(
        "\n".join([json.dumps(good), "[1, 2]", json.dumps({**good, "seq": "one"}), "{oops"]) + "\n",
        encoding="utf-8",
    )
    items = list(iter_trajectory(path))
    assert isinstance(items[0], TrajectoryRecord)
    bad = [str(i) for i in items if isinstance(i, BadLine)]
    assert bad[0].startswith(f"{path}:2: record: ")  # the whole line is wrong: named as the record
    assert bad[1].startswith(f"{path}:3: seq: ")
    assert bad[2].startswith(f"{path}:4: not JSON")
