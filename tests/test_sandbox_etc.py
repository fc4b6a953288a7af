"""What an agent sees of ``/etc``: the run's copy, bound as one folder (issue 25, attempt start-up).

Each attempt's bubblewrap used to bind about twenty names of the machine's ``/etc`` one by one; the
run now copies them once (``sandbox.build_etc``) and each attempt binds that one folder - fewer mounts
per attempt (``tests/bench/bench_sandbox.py``). Here a real sandbox (default ``loopback`` network and
``host``) runs a probe: it sees the same names as before, name resolution and certificates work
(``resolv.conf`` and ``hosts`` are files, certificate links resolve into ``/usr/share``), and what other
users may not read (``/etc/ssl/private``: the agent is uid 0 of its namespace, the runner's own user)
is not there. With the copy taken out (the per-name binds of before), ``/etc/ssl/private`` shows:
the last assertion can fail.
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

import pytest

from ctbench.evaluate.agents.process import Launch, run_agent_process
from ctbench.evaluate.sandbox import ETC_FILES, BwrapSandbox, make_launcher
from ctbench.evaluate.work import SandboxSettings
from tests.conftest import needs_bwrap

pytestmark = needs_bwrap

PROBE = """\
import json, os, socket, ssl
out = {"etc": sorted(os.listdir("/etc")), "ssl": sorted(os.listdir("/etc/ssl")) if os.path.isdir("/etc/ssl") else []}
out["hosts"] = open("/etc/hosts").read()
out["resolv_is_file"] = os.path.isfile("/etc/resolv.conf") or not os.path.lexists("/etc/resolv.conf")
out["localhost"] = socket.gethostbyname("localhost")
out["cas"] = ssl.create_default_context().cert_store_stats()["x509_ca"]
print(json.dumps(out))
"""


class _Log:
    def __init__(self, path: Path) -> None:
        self._fh = path.open("ab")

    def fileno(self) -> int:
        return self._fh.fileno()

    def line(self, text: str) -> None:
        self._fh.write(text.encode() + b"\n")


def _probe(launcher: BwrapSandbox, tmp_path: Path) -> dict[str, object]:
    script = tmp_path / "probe.py"
    script.write_text(PROBE)
    ws = tmp_path / "ws"
    ws.mkdir(exist_ok=True)
    code = asyncio.run(
        run_agent_process(
            Launch(argv=[sys.executable, "-I", str(script)], workspace=ws),
            log=_Log(tmp_path / "log"),
            launcher=launcher,
            stdout=ws / "out.json",
        )
    )
    assert code == 0, (tmp_path / "log").read_text()
    found: dict[str, object] = json.loads((ws / "out.json").read_text())
    return found


@pytest.mark.parametrize("network", ["loopback", "host"])
@pytest.mark.parametrize("protection", ["copy", "protection-off-per-name-binds"])
def test_the_agent_sees_the_runs_copy_of_etc(tmp_path: Path, network: str, protection: str) -> None:
    launcher = make_launcher(SandboxSettings(mode="bwrap", network=network))  # type: ignore[arg-type]
    assert isinstance(launcher, BwrapSandbox)
    try:
        if protection != "copy":
            launcher.etc_dir = None
        seen = _probe(launcher, tmp_path)
    finally:
        launcher.close()
    expected = sorted(n for n in ETC_FILES if (Path("/etc") / n).exists())
    assert seen["etc"] == expected, seen["etc"]
    assert seen["localhost"] == "127.0.0.1" and seen["resolv_is_file"]
    if network == "loopback":
        assert "localhost sandbox" in str(seen["hosts"])  # the sandbox's own hosts file
    if Path("/etc/ssl/certs").is_dir():
        assert isinstance(seen["cas"], int) and seen["cas"] > 0  # certificate links resolve
    if Path("/etc/ssl/private").is_dir():
        if protection == "copy":
            assert "private" not in seen["ssl"], seen["ssl"]
        else:
            assert "private" in seen["ssl"], seen["ssl"]
