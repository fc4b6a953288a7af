"""A stdio MCP server that forwards the three replay tools to a session of the runner's HTTP API.

Interim stand-in for ``ctb-replay mcp --connect URL --session ID`` (issue 12): the harness adapters
use ``ctx.mcp_command`` when the runner provides it and fall back to
``python -m ctbench.evaluate.agents.mcp_bridge URL SESSION`` otherwise. The tools, their texts and
annotations are those of :mod:`ctbench.replay.mcp_server`; the HTTP client has the session's
``devices``/``run``/``submit`` methods, so :class:`~ctbench.replay.tools.ReplayTools` drives it unchanged.
"""

from __future__ import annotations

import sys
from typing import Any, cast


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 2:
        print("usage: python -m ctbench.evaluate.agents.mcp_bridge REPLAY_URL SESSION_ID", file=sys.stderr)
        return 2
    from ctbench.errors import CtbError
    from ctbench.replay.client import ReplayClient
    from ctbench.replay.mcp_server import build_server, run_stdio

    client = ReplayClient(args[0], args[1])
    try:  # fail at start-up, where the CLI reports a dead MCP server, rather than on the first call
        client.summary()
    except CtbError as exc:
        print(
            f"ctbench mcp bridge: cannot reach replay session {args[1][:12]}... at {args[0]}: {exc}",
            file=sys.stderr,
        )
        client.close()
        return 1
    try:
        run_stdio(build_server(cast(Any, client)))
    finally:
        client.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
