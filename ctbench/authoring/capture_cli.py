"""``ctb-author import-capture``: the command-line face of :mod:`ctbench.authoring.capture`."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from ctbench.cli_support import add_command, emit_json

DESCRIPTION = """\
Split raw terminal session logs (SecureCRT, PuTTY, `script`) into recordings of a task.

Each command found after a device prompt (<HOST>, [HOST], HOST#, HOST>, user@HOST>) becomes one
recording, keyed by the device and the command in full (dis ip rou -> display ip routing-table),
with the output byte for byte: CRLF line ends, trailing spaces and banners are kept; the pagination
prompts (---- More ----, --More--, ---(more)---), the Junos {master:0} line and per-line timestamps
([2026-12-01 09:41:00] as SecureCRT, Xshell or MobaXterm write them when told to) are removed. The
hostname in the prompt must be a device of the task's network ('-' and '_' and case do not matter),
unless --device names the one device the whole log comes from.

Commands that are not imported are listed with their line in the log and the reason: unknown host,
a line the device rejected, output taken through a filter, configuration commands, or a log that
ends before the last prompt came back. An existing recording is never overwritten without --replace.
It exits 1 when the files hold no command at all (no prompt it knows: the wrong file?).

examples:
  ctb-author import-capture session.log --task RCA-007
  ctb-author import-capture core1.log core2.log --task RCA-007 --dry-run
  ctb-author import-capture putty.log --task RCA-007 --device CORE_SW_01 --replace --json
"""


def cmd_import_capture(args: argparse.Namespace) -> int:
    from ctbench.authoring.capture import import_capture, render_summary
    from ctbench.store import TaskSet

    ts = TaskSet.open(args.tasks)
    report = import_capture(
        ts, args.task, args.files, device=args.device, replace=args.replace, dry_run=args.dry_run
    )
    if args.json:
        emit_json(report.model_dump(mode="json"))
    else:
        print(render_summary(report))
    if report.commands == 0:  # the wrong file, or a prompt the splitter does not know: not a success
        print(
            f"{args.task}: nothing was imported: no command found in {', '.join(report.files)}",
            file=sys.stderr,
        )
        return 1
    if not report.recorded and (report.unattributed or report.skipped):
        print(f"{args.task}: nothing was imported", file=sys.stderr)
    return 0


def add_import_capture(sub: Any) -> argparse.ArgumentParser:
    p = add_command(
        sub,
        "import-capture",
        "split a terminal session log into recordings",
        cmd_import_capture,
        description=DESCRIPTION,
    )
    p.add_argument("files", nargs="+", metavar="FILE", help="session log files, as the terminal wrote them")
    p.add_argument("--task", required=True, metavar="ID", help="the task the recordings belong to")
    p.add_argument(
        "--device",
        metavar="NAME",
        help="the device the whole log comes from (its prompt hostname is then ignored)",
    )
    p.add_argument("--replace", action="store_true", help="overwrite recordings that already exist")
    p.add_argument("--dry-run", action="store_true", help="show what would be imported; write nothing")
    p.add_argument("--json", action="store_true", help="machine-readable summary on stdout")
    p.add_argument(
        "--tasks",
        metavar="DIR",
        default=None,
        help="task set folder (default: $CTBENCH_TASKS, else ./tasks, else the current folder)",
    )
    return p
