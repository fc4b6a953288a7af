"""A real ``ctb-replay ssh`` subprocess for the tests of the SSH front end and of ``ctb-author record``."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PASSWORD = "lab-Passw0rd"

NETMIKO_TYPES = {
    "arista_eos": "arista_eos",
    "cisco_ios": "cisco_ios",
    "cisco_iosxr": "cisco_xr",
    "huawei_vrp8": "huawei_vrpv8",
    "cisco_nxos": "cisco_nxos",
    "huawei_vrp": "huawei",
    "hp_comware": "hp_comware",
    "juniper_junos": "juniper_junos",
}
"""ctbench's CLI family -> netmiko's device_type."""

SCRAPLI_TYPES = {
    "arista_eos": "arista_eos",
    "cisco_ios": "cisco_iosxe",
    "cisco_iosxr": "cisco_iosxr",
    "huawei_vrp8": "huawei_vrp",
    "cisco_nxos": "cisco_nxos",
    "huawei_vrp": "huawei_vrp",
    "hp_comware": "hp_comware",
    "juniper_junos": "juniper_junos",
}
"""ctbench's CLI family -> scrapli's platform definition."""


@dataclass
class SshServer:
    """A running ``ctb-replay ssh``: its process, port and trajectory file."""

    proc: subprocess.Popen[str]
    url: str
    trajectory: Path
    errlog: object = field(repr=False)

    @property
    def port(self) -> int:
        return int(self.url.rsplit(":", 1)[1])

    def stop(self) -> str:
        """Stop the server; returns what it wrote on stderr."""
        self.proc.terminate()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(10)
        self.errlog.seek(0)  # type: ignore[attr-defined]
        return str(self.errlog.read())  # type: ignore[attr-defined]


def start_ssh(
    task_id: str,
    tasks: Path,
    state: Path,
    *args: str,
    password: str | None = PASSWORD,
    trajectory: Path | None = None,
) -> SshServer:
    """``ctb-replay ssh TASK`` on a free port of 127.0.0.1, once it printed its URL."""
    trajectory = trajectory or state / f"{task_id}.jsonl"
    env = {**os.environ, "PYTHONPATH": str(REPO), "XDG_STATE_HOME": str(state)}
    env.pop("CTBENCH_DEBUG", None)
    env.pop("CTBENCH_SSH_PASSWORD", None)
    if password is not None:
        env["CTBENCH_SSH_PASSWORD"] = password
    errlog = tempfile.TemporaryFile(mode="w+")
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "ctbench.replay.cli",
            "ssh",
            task_id,
            "--tasks",
            str(tasks),
            "--port",
            "0",
            "--trajectory",
            str(trajectory),
            *args,
        ],
        stdout=subprocess.PIPE,
        stderr=errlog,
        text=True,
        env=env,
    )
    assert proc.stdout is not None
    url = proc.stdout.readline().strip()
    if not url.startswith("ssh://127.0.0.1:"):
        proc.kill()
        errlog.seek(0)
        raise AssertionError(f"ctb-replay ssh did not start: {url!r} {errlog.read()}")
    return SshServer(proc, url, trajectory, errlog)
