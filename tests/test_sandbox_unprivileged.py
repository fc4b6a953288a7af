"""A runner that is not root still gives its agent an ``https://`` model endpoint (issue 25, item 3).

Under the default ``--sandbox-network loopback`` the model endpoint answers inside the sandbox at its
usual address; for ``https://HOST/v1`` that is port 443, below 1024. Run by root, bubblewrap keeps one
user namespace and the sandbox's forwarder may listen there with ``CAP_NET_BIND_SERVICE``
(``tests/test_sandbox.py``). Run by any other user, bubblewrap enters a second, nested user namespace
to hand the agent its own uid back, and the capability held there does not count in the network
namespace: the run refused to start ("cannot listen on port 443").

Here the real ``ctb-eval run`` runs as ``nobody`` (``setpriv``; we are root), with a ``command`` agent
that connects to ``model.example.invalid:443`` inside its sandbox. As shipped the port answers; with the
fix taken out (in-process, the same CLI) the run refuses in one line - the test can fail.
"""

from __future__ import annotations

import functools
import json
import os
import pwd
import shlex
import shutil
import stat
import subprocess
import sys
import sysconfig
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import REPO, copy_starters, needs_bwrap

pytestmark = [
    needs_bwrap,
    pytest.mark.skipif(shutil.which("setpriv") is None, reason="setpriv (util-linux) is not installed"),
    pytest.mark.skipif(os.geteuid() != 0, reason="needs root to run the runner as nobody"),
]

AGENT = """\
import json, os, socket, sys
sys.stdin.read()
def reach(host):
    try:
        socket.create_connection((host, 443), timeout=5).close()
        return "open"
    except OSError as exc:
        return type(exc).__name__
with open(os.environ["CTBENCH_ANSWER_FILE"], "w") as fh:
    json.dump({"uid": os.getuid(), "model": reach("model.example.invalid"), "lo": reach("127.0.0.1")}, fh)
"""

NO_FIX = """\
import sys
from ctbench.evaluate.sandbox import BwrapSandbox
BwrapSandbox._identity_args = lambda self: []  # protection off: bubblewrap's nested user namespace
from ctbench.evaluate.cli import main
sys.exit(main(sys.argv[1:]))
"""


def _nobody() -> list[str]:
    user = pwd.getpwnam("nobody")
    return [
        "setpriv",
        f"--reuid={user.pw_uid}",
        f"--regid={user.pw_gid}",
        "--clear-groups",
        "--inh-caps=-all",
    ]


def _env(home: Path) -> dict[str, str]:
    """The unprivileged runner's environment: this checkout and this venv's libraries on its path
    (its Python may be the system's: a venv's own interpreter may live where nobody can reach)."""
    site = sysconfig.get_paths()["purelib"]
    return {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "PYTHONPATH": os.pathsep.join([str(REPO), site]),
        "HOME": str(home),
        "TMPDIR": str(home / "tmp"),
        "CTBENCH_CACHE_DIR": str(home / "cache"),
        "LANG": "C.UTF-8",
    }


@pytest.fixture(scope="module", autouse=True)
def paths_nobody_may_traverse() -> Iterator[None]:
    """Let ``nobody`` pass through the folders above this checkout and this venv's libraries.

    A venv or checkout in a folder made by ``mktemp -d`` (CI's) sits under a folder of mode 0700, so
    ``nobody`` could import neither ctbench nor pydantic. Search permission (``o+x``, not read) is
    added to each such folder for the module's tests and taken back afterwards."""
    changed: list[tuple[Path, int]] = []
    for top in (REPO, Path(sysconfig.get_paths()["purelib"])):
        for folder in [top, *top.parents]:
            mode = folder.stat().st_mode
            if not mode & stat.S_IXOTH and folder not in {p for p, _ in changed}:
                changed.append((folder, mode))
                folder.chmod(stat.S_IMODE(mode) | stat.S_IXOTH)
    try:
        yield
    finally:
        for folder, mode in reversed(changed):
            folder.chmod(stat.S_IMODE(mode))


@functools.cache
def nobody_python() -> str | None:
    """A Python of this one's version that ``nobody`` may run and that imports ctbench: this one, or
    the system's (pyenv keeps its interpreters under ``/root``, mode 0700)."""
    version = f"python{sys.version_info.major}.{sys.version_info.minor}"
    for python in (sys.executable, f"/usr/bin/{version}", f"/usr/local/bin/{version}"):
        probe = subprocess.run(
            # what the run itself imports (pydantic, the agents), not only the CLI's first module
            [
                *_nobody(),
                "sh",
                "-c",
                'exec "$0" -c "import ctbench.evaluate.agents, ctbench.evaluate.cli"',
                python,
            ],
            env=_env(Path("/tmp")),
            cwd="/",
            capture_output=True,
            timeout=60,
        )
        if probe.returncode == 0:
            return python
    return None


@pytest.fixture
def nobody_home() -> Iterator[Path]:
    """A folder ``nobody`` owns (the test's own temp folder is root's, mode 0700): task set, run folder,
    temp folder and home of the unprivileged runner."""
    user = pwd.getpwnam("nobody")
    root = Path(tempfile.mkdtemp(prefix="ctb-nobody-", dir="/tmp"))
    copy_starters(root / "tasks")
    (root / "tmp").mkdir()
    (root / "agent.py").write_text(AGENT)
    for path in [root, *root.rglob("*")]:
        os.chown(path, user.pw_uid, user.pw_gid, follow_symlinks=False)
    try:
        yield root
    finally:
        shutil.rmtree(root, ignore_errors=True)


def _run_as_nobody(home: Path, protected: bool) -> subprocess.CompletedProcess[str]:
    python = nobody_python()
    if python is None:
        pytest.skip("no Python that the user nobody may run imports ctbench here")
    args = [
        "run",
        "--allow-unreviewed",
        "--agent",
        "command",
        "--agent-cmd",
        shlex.join([python, str(home / "agent.py")]),
        "--tasks",
        str(home / "tasks"),
        "--select",
        "RCA-001",
        "--out",
        str(home / "run"),
        "--progress",
        "none",
        "--no-score",
        "--retries",
        "0",
        "--base-url",
        "https://model.example.invalid/v1",
    ]
    cmd = [python, "-m", "ctbench.evaluate.cli"] if protected else [python, "-c", NO_FIX]
    return subprocess.run(
        [*_nobody(), *cmd, *args], cwd=home, env=_env(home), capture_output=True, text=True, timeout=240
    )


@pytest.mark.parametrize("protected", [True, False], ids=["as-shipped", "protection-off-nested-userns"])
def test_a_runner_that_is_not_root_serves_https_port_443(nobody_home: Path, protected: bool) -> None:
    ran = _run_as_nobody(nobody_home, protected)
    if not protected:
        assert ran.returncode != 0
        assert "cannot listen on port 443 for the model endpoint" in ran.stderr, ran.stderr
        assert "Traceback" not in ran.stderr
        return
    assert ran.returncode == 0, ran.stderr
    (line,) = [json.loads(x) for x in (nobody_home / "run" / "results.jsonl").read_text().splitlines()]
    seen = json.loads(line["answer_text"])
    assert seen == {"uid": 0, "model": "open", "lo": "open"}, (seen, line["error"])
    # the runner really was nobody: its run folder is nobody's
    assert (nobody_home / "run" / "results.jsonl").stat().st_uid == pwd.getpwnam("nobody").pw_uid
