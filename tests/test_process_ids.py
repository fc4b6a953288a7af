"""The runner signals only its own processes, even after their pids have come round again.

On a busy machine (pid_max is often 32768) the number of a process the runner has reaped soon names
another one - an MCP server another attempt's CLI just started in a group of its own is the usual
case. These tests hand that number to a new process on purpose, through the kernel's
``ns_last_pid`` (root only), and check that ending the old group, or the old descendants, leaves the
new process running.
"""

from __future__ import annotations

import asyncio
import subprocess
from pathlib import Path

import pytest

from ctbench.evaluate.agents.harness_base import kill_all, remember
from ctbench.evaluate.agents.process import end_process_group, start_time

NS_LAST_PID = Path("/proc/sys/kernel/ns_last_pid")


def _can_steer_pids() -> bool:
    try:
        NS_LAST_PID.write_text(NS_LAST_PID.read_text())
    except OSError:
        return False
    return True


pytestmark = pytest.mark.skipif(
    not _can_steer_pids(), reason="needs root: writes /proc/sys/kernel/ns_last_pid"
)


def _take_pid(pid: int) -> subprocess.Popen[bytes] | None:
    """A new process leading its own group, with the number ``pid`` (None: another process took it first)."""
    NS_LAST_PID.write_text(str(pid - 1))
    victim = subprocess.Popen(["sleep", "60"], start_new_session=True)
    if victim.pid == pid:
        return victim
    victim.kill()
    victim.wait()
    return None


async def _reaped_group_leader() -> tuple[asyncio.subprocess.Process, int | None]:
    proc = await asyncio.create_subprocess_exec("sleep", "0.2", start_new_session=True)
    started = start_time(proc.pid)
    await proc.wait()
    return proc, started


@pytest.mark.parametrize("noted", [True, False], ids=["leader-start-noted", "protection-off"])
def test_ending_a_reaped_group_spares_the_process_that_took_its_number(noted: bool) -> None:
    async def main() -> bool:
        for _ in range(20):  # the rest of the suite forks too: try again when it took the number first
            proc, started = await _reaped_group_leader()
            victim = _take_pid(proc.pid)
            if victim is None:
                continue
            try:
                assert start_time(victim.pid) != started
                await end_process_group(proc, proc.pid, grace_s=0.0, leader_start=started if noted else None)
                await asyncio.sleep(0.05)
                return victim.poll() is None
            finally:
                victim.kill()
                victim.wait()
        pytest.fail("could not hand a reaped pid to a new process in 20 tries")

    survived = asyncio.run(main())
    # without the noted start time the runner cannot tell the new group from its own: it kills it
    assert survived is noted


def test_killing_old_descendants_spares_a_process_that_took_one_of_their_numbers() -> None:
    for _ in range(20):
        old = subprocess.Popen(["sleep", "0.2"], start_new_session=True)
        seen: dict[int, int | None] = {}
        remember(seen, [old.pid])
        old.wait()
        victim = _take_pid(old.pid)
        if victim is None:
            continue
        try:
            kill_all([old.pid], seen)
            assert victim.poll() is None
            kill_all([old.pid], {old.pid: None})  # never noted: not killed either
            assert victim.poll() is None
            kill_all([victim.pid], {victim.pid: start_time(victim.pid)})  # noted as it is: killed
            assert victim.wait(timeout=10) == -9
            return
        finally:
            victim.kill()
            victim.wait()
    pytest.fail("could not hand a reaped pid to a new process in 20 tries")
