"""What an agent leaves behind is data, never a path (issue 25, item 1).

The attacks of ``tests/adversary/leave_behind.py`` - links from the answer, stdout and usage files to
a review record, an oracle run's log, ``hidden.yaml`` and ``/proc/self/environ``; a FIFO; ``/dev/zero``;
a sparse 4 GiB stdout; 1 GiB on stderr - each run through the real ``ctb-eval run`` in a subprocess,
with the default sandbox, from an arena folder holding the task set and the run folders (as a user
runs it). Each is run twice: as shipped, where it must come to nothing, and with the protection taken
out (``tests/adversary/naive_runner.py``: the reading the runner did before), where it must work - so
every assertion of the first kind is shown able to fail.

The runner's peak memory is measured with ``wait4`` (its ``ru_maxrss``): under :data:`RSS_BOUND_MIB`
for every attack when protected, above 1 GiB for the memory attacks when not.
"""

from __future__ import annotations

import json
import os
import resource
import shlex
import shutil
import stat
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from ctbench.evaluate.agents.agent_files import AttemptFolder, RefusedFile, read_log
from tests.conftest import REPO, copy_starters, needs_bwrap

pytestmark = [
    pytest.mark.xdist_group("agent-leftovers"),
    needs_bwrap,
]

AGENT = REPO / "tests" / "adversary" / "leave_behind.py"
NAIVE = REPO / "tests" / "adversary" / "naive_runner.py"
GOLD_LINE = "CORE_SW_01;GigabitEthernet0/0/24;shutdown"
GOLD_WHY = "The interface carries an explicit shutdown."
SECRET = "sk-ctbench-test-4f1b9e0d7c2a"
RSS_BOUND_MIB = 512
"""The runner's peak resident memory, whatever the agent left. Measured 100-130 MiB in a developer's
venv, but 326-366 MiB in .ci/run's fresh venv with every extra installed and PYTHONDONTWRITEBYTECODE
set (imports compiled from source, not read from .pyc): the baseline is the imports, not the agent's
files. The unprotected reads pass 1 GiB, so the bound still tells the two apart."""
AS_LIMIT = 3 << 30
"""Address-space limit of the protection-off runner, so its memory attacks end in MemoryError
rather than in the machine's OOM killer."""

REVIEW_RECORD = f"""\
# reviews/round-01.yaml: what a reviewer's round records (the gold, in answer syntax)
round: 1
reviewer: alice
verdict: approve
answer_lines:
  - {GOLD_LINE}
"""


@dataclass
class Ran:
    returncode: int | None
    """None: still running at the deadline (killed)."""
    maxrss_mib: float
    stderr: str
    run_dir: Path

    def lines(self) -> list[dict]:
        path = self.run_dir / "results.jsonl"
        return [json.loads(x) for x in path.read_text().splitlines()] if path.exists() else []

    def text(self) -> str:
        """Everything the run folder holds in results and logs (not the scorer's gold copy)."""
        out = []
        for rel in ["results.jsonl", *sorted(p.name for p in (self.run_dir / "logs").glob("*"))]:
            path = self.run_dir / rel if rel == "results.jsonl" else self.run_dir / "logs" / rel
            if path.is_file():
                with path.open("rb") as fh:
                    out.append(fh.read(64 << 20).decode("utf-8", errors="replace"))
        return "\n".join(out)


@pytest.fixture(scope="module")
def arena() -> Iterator[Path]:
    """A folder as the runner's world: the task set (RCA-001 with a review record beside its task) and an
    earlier oracle run, both under the runner's working directory."""
    root = Path(tempfile.mkdtemp(prefix="ctb-left-", dir="/tmp")).resolve()
    tasks = copy_starters(root / "tasks")
    reviews = tasks / "rca" / "RCA-001" / "reviews"
    reviews.mkdir()
    (reviews / "round-01.yaml").write_text(REVIEW_RECORD)
    oracle = _run(root, ["--agent", "oracle", "--out", "runs/oracle"], naive=False)
    assert oracle.returncode == 0, oracle.stderr
    assert GOLD_LINE in (root / "runs" / "oracle" / "logs" / "RCA-001.log").read_text()
    try:
        yield root
    finally:
        shutil.rmtree(root, ignore_errors=True)


def _limit_memory() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (AS_LIMIT, AS_LIMIT))


def _run(root: Path, args: list[str], *, naive: bool, deadline_s: float = 120) -> Ran:
    out = args[args.index("--out") + 1]
    program = [str(NAIVE)] if naive else ["-m", "ctbench.evaluate.cli"]
    argv = [
        sys.executable,
        *program,
        "run",
        "--allow-unreviewed",
        "--select",
        "RCA-001",
        "--progress",
        "none",
        # the reading is under test here, not the attempt's caps (tests/test_attempt_limits.py):
        # with the file-size cap on, the agent could not even write the GiB it attacks with
        "--limit",
        "file-size=off",
    ]
    env = {**os.environ, "PYTHONPATH": str(REPO), "CTB_TEST_API_KEY": SECRET, "TMPDIR": str(root)}
    proc = subprocess.Popen(
        [*argv, *args],
        cwd=root,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        start_new_session=True,
        preexec_fn=_limit_memory if naive else None,
    )
    assert proc.stderr is not None
    os.set_blocking(proc.stderr.fileno(), False)
    err = b""
    end = time.monotonic() + deadline_s
    code: int | None = None
    rss = 0.0
    while time.monotonic() < end:
        pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
        err += proc.stderr.read() or b""
        if pid:
            code, rss = os.waitstatus_to_exitcode(status), usage.ru_maxrss / 1024
            break
        time.sleep(0.05)
    if code is None:
        os.killpg(proc.pid, 9)
        _, status, usage = os.wait4(proc.pid, 0)
        rss = usage.ru_maxrss / 1024
    proc.returncode = 0  # reaped above
    proc.stderr.close()
    return Ran(code, rss, err.decode(errors="replace"), root / out)


def _attack(root: Path, name: str, *attack: str, naive: bool, deadline_s: float = 120) -> Ran:
    case = f"{name}-{'off' if naive else 'on'}"
    shutil.rmtree(root / "runs" / case, ignore_errors=True)
    cmd = shlex.join([sys.executable, str(AGENT), *attack])
    return _run(
        root,
        ["--agent", "command", "--agent-cmd", cmd, "--out", f"runs/{case}"],
        naive=naive,
        deadline_s=deadline_s,
    )


# --------------------------------------------------------------------------- links to secrets

LINKS = [
    ("answer", "review", "io/answer.txt is a symbolic link: refused", GOLD_LINE),
    ("answer", "oracle-log", "io/answer.txt is a symbolic link: refused", GOLD_LINE),
    ("answer", "hidden", "io/answer.txt is a symbolic link: refused", GOLD_WHY),
    ("answer", "environ", "io/answer.txt is a symbolic link: refused", SECRET),
    ("stdout", "review", "io/stdout.txt is a symbolic link: refused", GOLD_LINE),
    ("stdout", "oracle-log", "io/stdout.txt is a symbolic link: refused", GOLD_LINE),
    ("stdout", "hidden", "io/stdout.txt is a symbolic link: refused", GOLD_WHY),
    ("stdout", "environ", "io/stdout.txt is a symbolic link: refused", SECRET),
]


@pytest.mark.parametrize("protected", [True, False], ids=["protected", "protection-off"])
@pytest.mark.parametrize(
    ("file", "target", "refusal", "secret"), LINKS, ids=[f"{f}-{t}" for f, t, *_ in LINKS]
)
def test_a_link_left_by_the_agent_is_refused_never_followed(
    arena: Path, file: str, target: str, refusal: str, secret: str, protected: bool
) -> None:
    ran = _attack(arena, f"link-{file}-{target}", f"link-{file}", target, naive=not protected)
    assert ran.returncode == 0, ran.stderr
    (line,) = ran.lines()
    leaked = secret in ran.text()
    if protected:
        assert (line["status"], line["error_kind"], line["error"]) == ("error", "agent", refusal)
        assert line["answer_text"] is None
        assert not leaked
        assert refusal in (ran.run_dir / "logs" / "RCA-001.log").read_text()
    else:  # the same attack on the runner as it was: the gold (or the key) is in the run folder
        assert leaked, (line["status"], line.get("error"))
        if target in ("review", "oracle-log") and file == "answer":
            assert line["answer"]["rca"][0]["label"] == "shutdown"


# --------------------------------------------------------------------------- files that hang or swell


def test_a_fifo_answer_is_refused_and_the_run_ends(arena: Path) -> None:
    ran = _attack(arena, "fifo", "fifo-answer", naive=False)
    assert ran.returncode == 0, ran.stderr
    (line,) = ran.lines()
    assert (line["error_kind"], line["error"]) == ("agent", "io/answer.txt is a FIFO: refused")
    assert ran.maxrss_mib < RSS_BOUND_MIB


def test_protection_off_a_fifo_answer_keeps_the_runner_waiting(arena: Path) -> None:
    ran = _attack(arena, "fifo", "fifo-answer", naive=True, deadline_s=25)
    assert ran.returncode is None, "the naive runner should still be blocked on the FIFO"
    assert ran.lines() == []


SWELL = [
    ("zero", ("zero-answer",), "io/answer.txt is a symbolic link: refused"),
    ("zero-usage", ("link-usage", "/dev/zero"), "io/usage.json is a symbolic link: refused"),
    ("sparse", ("sparse-stdout",), None),
    ("stderr", ("stderr-gib",), None),
]


@pytest.mark.parametrize("protected", [True, False], ids=["protected", "protection-off"])
@pytest.mark.parametrize(("name", "attack", "refusal"), SWELL, ids=[s[0] for s in SWELL])
def test_memory_stays_bounded_whatever_the_agent_wrote(
    arena: Path, name: str, attack: tuple[str, ...], refusal: str | None, protected: bool
) -> None:
    ran = _attack(arena, name, *attack, naive=not protected, deadline_s=240)
    if not protected:
        # the runner as it was reads it whole: a GiB and more in memory (or MemoryError at the limit)
        assert ran.maxrss_mib > 1024 or "MemoryError" in ran.text() + ran.stderr, ran.maxrss_mib
        return
    assert ran.returncode == 0, ran.stderr
    assert ran.maxrss_mib < RSS_BOUND_MIB, ran.maxrss_mib
    (line,) = ran.lines()
    log = ran.run_dir / "logs" / "RCA-001.log"
    assert log.stat().st_size < 9 << 20  # the log is capped (LOG_CAP: its first and last 4 MiB)
    if refusal is not None:
        assert (line["error_kind"], line["error"]) == ("agent", refusal)
    elif name == "sparse":
        assert line["status"] == "unparsable"
        assert "left out here (4.0 GiB in all" in log.read_text(errors="replace")
    else:  # 1 GiB on stderr, then a good answer: scored as it is, the log keeps head and tail
        assert line["status"] == "answered" and line["answer_source"] == "answer_file"
        assert "left out here (1.0 GiB" in log.read_text(errors="replace")


# --------------------------------------------------------------------------- the reader itself


def test_attempt_folder_refuses_every_kind_of_non_file(tmp_path: Path) -> None:
    """Each refusal in one line, for every path inside (not only the last component)."""
    root = tmp_path / "attempt"
    (root / "io").mkdir(parents=True)
    (root / "io" / "ok.txt").write_text("fine\n")
    secret = tmp_path / "hidden.yaml"
    secret.write_text("gold\n")
    (root / "io" / "link.txt").symlink_to(secret)
    (root / "linked-dir").symlink_to(root / "io")
    os.mkfifo(root / "io" / "fifo")
    os.link(secret, root / "io" / "hard.txt")
    (root / "io" / "big.txt").write_bytes(b"a" * 2000)
    import socket

    sock = socket.socket(socket.AF_UNIX)
    sock.bind(str(root / "io" / "sock"))
    with AttemptFolder(root) as folder:
        assert folder.read_limited("io/ok.txt", 100) == b"fine\n"
        assert folder.read_limited("io/missing.txt", 100) is None
        for rel, why in [
            ("io/link.txt", "io/link.txt is a symbolic link: refused"),
            ("linked-dir/ok.txt", "linked-dir is a symbolic link: refused"),
            ("io/fifo", "io/fifo is a FIFO: refused"),
            ("io/sock", "io/sock is a socket: refused"),
            ("io/hard.txt", "io/hard.txt has 2 hard links: refused"),
            ("io", "io is a folder: refused"),
            ("io/big.txt", "io/big.txt holds 2.0 KiB, over the 1000 bytes cap: refused"),
        ]:
            with pytest.raises(RefusedFile) as err:
                folder.read_limited(rel, 1000)
            assert str(err.value) == why
        tail = folder.tail("io/big.txt", 10)
        assert tail is not None and tail.data == b"a" * 10 and tail.truncated and tail.size == 2000
    sock.close()
    assert stat.S_ISREG(os.stat(secret).st_mode)


def test_read_log_keeps_head_and_tail_of_a_huge_log(tmp_path: Path) -> None:
    log = tmp_path / "agent.log"
    with log.open("wb") as fh:
        fh.write(b"HEAD\n")
        fh.truncate(3 << 30)  # sparse: 3 GiB on paper
        fh.seek(0, 2)
        fh.write(b"TAIL\n")
    data = read_log(log, cap=1 << 20)
    assert data.startswith(b"HEAD\n") and data.endswith(b"TAIL\n")
    assert len(data) < (1 << 20) + 300
    assert b"left out here (3.0 GiB in all" in data
