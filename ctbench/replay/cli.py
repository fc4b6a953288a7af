"""``ctb-replay``: serve recorded device output to agents and people."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from ctbench.cli_support import add_command, build_parser, not_built, run

DESCRIPTION = """\
Serve a task's recorded device output as if the devices were live.

Commands resolve as on the real device (abbreviations such as 'dis ip rou', interface short names,
'| include' filters); recorded commands return the recorded bytes, valid but unrecorded commands are
refused with the vendor's permission message, invalid ones get the vendor's own error and caret.

examples:
  ctb-replay shell RCA-001                       a device prompt to poke at a task by hand
  ctb-replay mcp RCA-001                         MCP server on stdio for an agent
  ctb-replay mcp RCA-001 --http 127.0.0.1:8765   the same over streamable HTTP
  ctb-replay serve --port 8700                   HTTP JSON API for many sessions
  ctb-replay exec CORE_SW_01 display interface brief   (session from $CTBENCH_REPLAY_URL/_SESSION)
  ctb-replay gaps runs/my-run                    commands agents wanted that were not recorded
"""


def build() -> tuple[argparse.ArgumentParser, object]:
    parser, sub = build_parser("ctb-replay", DESCRIPTION)
    for name, what in [
        ("shell", "interactive device prompt on a task's recordings"),
        ("mcp", "MCP server (stdio or streamable HTTP) for one task"),
        ("serve", "HTTP JSON API serving many concurrent replay sessions"),
        ("exec", "run one command through a replay session (for shell-only agents)"),
        ("gaps", "list denied commands from runs: what to record next"),
    ]:
        add_command(sub, name, what, not_built(f"ctb-replay {name}"))
    return parser, sub


def main(argv: Sequence[str] | None = None) -> int:
    parser, _ = build()
    return run(parser, argv)


if __name__ == "__main__":
    sys.exit(main())
