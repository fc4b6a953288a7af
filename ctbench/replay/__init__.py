"""The replay backend: recorded device output served as if the devices were live.

One :class:`ReplayEngine` per process answers every session; the transports (MCP server, HTTP JSON
API, shell client, interactive shell) are thin layers over it::

    from ctbench.replay import ReplayEngine
    from ctbench.store import TaskSet

    engine = ReplayEngine(TaskSet.open("tasks"))
    with engine.open_session("RCA-001", trajectory_path=run / "trajectories" / "RCA-001.jsonl") as s:
        obs = s.run("CORE_SW_01", "dis int br")      # Observation: outcome, text, exact bytes in .data
        s.submit("CORE_SW_01;GigabitEthernet0/0/24;shutdown")

Names are imported on first use, so ``ctb-replay exec`` (run once per agent command) starts fast.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ctbench.replay.engine import ReplayEngine
    from ctbench.replay.http_server import ServerHandle, SessionRegistry, serve_in_thread
    from ctbench.replay.observation import DeviceInfo, Observation, Outcome, Submission
    from ctbench.replay.session import Session
    from ctbench.replay.trajectory import TrajectoryRecord, read_trajectory

_EXPORTS = {
    "ReplayEngine": "engine",
    "Session": "session",
    "DeviceInfo": "observation",
    "Observation": "observation",
    "Outcome": "observation",
    "Submission": "observation",
    "TrajectoryRecord": "trajectory",
    "read_trajectory": "trajectory",
    "ServerHandle": "http_server",
    "SessionRegistry": "http_server",
    "serve_in_thread": "http_server",
}

__all__ = [
    "DeviceInfo",
    "Observation",
    "Outcome",
    "ReplayEngine",
    "ServerHandle",
    "Session",
    "SessionRegistry",
    "Submission",
    "TrajectoryRecord",
    "read_trajectory",
    "serve_in_thread",
]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'ctbench.replay' has no attribute {name!r}")
    return getattr(import_module(f"ctbench.replay.{module}"), name)
