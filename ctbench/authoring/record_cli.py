"""``ctb-author record``: the command-line face of :mod:`ctbench.authoring.record`."""

from __future__ import annotations

import argparse
import getpass
import os
import sys
from pathlib import Path
from typing import Any

from ctbench.cli_support import add_command, emit_json
from ctbench.errors import CtbError

DESCRIPTION = """\
Log into devices over SSH (netmiko), turn paging off, run each command and write its output into
the task as a recording, byte for byte, keyed by the command in full (the same code as
add-recording). One device from the flags, or several from a YAML plan (--plan FILE):

  devices:
    - device: CORE_SW_01          # name in the task's network
      host: 192.0.2.11
      port: 22                    # optional
      device_type: huawei         # optional: netmiko's type, default from the device's os
      username: netops
      commands: [display interface brief, display ip routing-table]
      # commands_file: core.txt   # one command a line ('#' comments), relative to the plan

The password comes from $CTBENCH_DEVICE_PASSWORD, else a prompt (in a terminal; empty, or no
terminal: netmiko uses SSH keys and the SSH agent); it is never written anywhere. Each output is saved the
moment it is read; run the same command again after an interruption and it asks only for what the
task does not have yet. In a git task set, one commit takes the run's recordings (--no-commit: none).

examples:
  ctb-author record --task RCA-020 --device CORE_SW_01 --host 192.0.2.11 --username netops \\
      --commands-file core.txt
  ctb-author record --task RCA-020 --plan record.yaml --json
"""


def cmd_record(args: argparse.Namespace) -> int:
    from ctbench.authoring.record import PASSWORD_ENV, PlanDevice, Recorder, load_plan, read_commands
    from ctbench.authoring.working_copy import default_author
    from ctbench.store import TaskSet

    if args.plan is not None:
        given = [f for f in ("device", "host", "commands_file", "username") if getattr(args, f) is not None]
        if given:
            raise CtbError(
                f"--plan describes the devices; drop {', '.join('--' + g.replace('_', '-') for g in given)}",
                exit_code=2,
            )
        devices = load_plan(args.plan).devices
    else:
        missing = [
            flag
            for flag, value in (
                ("--device", args.device),
                ("--host", args.host),
                ("--username", args.username),
                ("--commands-file", args.commands_file),
            )
            if value is None
        ]
        if missing:
            raise CtbError(f"record: {', '.join(missing)} missing (or give --plan FILE)", exit_code=2)
        commands = read_commands(args.commands_file)
        if not commands:
            raise CtbError(f"{args.commands_file}: no command in the file", exit_code=2)
        devices = [
            PlanDevice(
                device=args.device,
                host=args.host,
                port=args.port,
                device_type=args.device_type,
                username=args.username,
                commands=commands,
            )
        ]
    password = os.environ.get(PASSWORD_ENV) or None
    if password is None and sys.stdin.isatty():
        password = getpass.getpass("device password (empty: SSH keys or agent): ") or None
    ts = TaskSet.open(args.tasks)
    author = args.author or default_author(ts.root)
    recorder = Recorder(
        ts,
        args.task,
        author=author,
        password=password,
        progress=_progress(args.json),
        read_timeout=args.read_timeout,
    )
    report = recorder.run(devices)
    if not args.no_commit:
        recorder.commit()
    if args.json:
        emit_json(report.model_dump(mode="json"))
        return 0
    kept = len(report.steps) - report.recorded
    print(
        f"{args.task}: recorded {report.recorded} output(s)"
        + (f", {kept} already recorded" if kept else "")
        + (f"; committed {report.commit[:10]}" if report.commit else "")
    )
    if report.note:
        print(f"{args.task}: {report.note}", file=sys.stderr)
    return 0


def _progress(quiet: bool) -> Any:
    """A progress line on stderr per step: what a terminal shows as the bar moving."""
    tty = sys.stderr.isatty()

    def show(done: int, total: int, text: str) -> None:
        if quiet and not tty:
            return
        width = 24
        filled = width * done // total if total else width
        bar = "#" * filled + "-" * (width - filled)
        end = "\r" if tty else "\n"
        line = f"[{bar}] {done}/{total} {text}"
        if tty:
            line = line[:110].ljust(110)
        print(line, end=end, file=sys.stderr, flush=True)
        if tty and done == total:
            print(file=sys.stderr)

    return show


def add_record(sub: Any) -> argparse.ArgumentParser:
    p = add_command(
        sub,
        "record",
        "log into devices over SSH and record command outputs",
        cmd_record,
        description=DESCRIPTION,
    )
    p.add_argument("--task", required=True, metavar="ID", help="the task the recordings go into")
    p.add_argument("--plan", type=Path, metavar="FILE", help="YAML plan of several devices (see above)")
    p.add_argument("--device", metavar="NAME", help="device name in the task's network")
    p.add_argument("--host", metavar="HOST", help="address to connect to")
    p.add_argument("--port", type=int, default=22, help="SSH port (default 22)")
    p.add_argument(
        "--device-type",
        metavar="NETMIKO_TYPE",
        help="netmiko device_type (default from the device's os: huawei, hp_comware, cisco_ios, ...)",
    )
    p.add_argument("--username", metavar="USER", help="login name on the device")
    p.add_argument("--commands-file", type=Path, metavar="FILE", help="one command a line ('#' comments)")
    p.add_argument(
        "--read-timeout", type=float, default=120.0, metavar="SECONDS", help="wait this long per command"
    )
    p.add_argument(
        "--author",
        metavar="NAME",
        help="who recorded, for the commit (default: $CTBENCH_AUTHOR, else git's user)",
    )
    p.add_argument("--no-commit", action="store_true", help="write the recordings but do not commit")
    p.add_argument("--json", action="store_true", help="machine-readable report on stdout")
    p.add_argument(
        "--tasks",
        metavar="DIR",
        default=None,
        help="task set folder (default: $CTBENCH_TASKS, else ./tasks, else the current folder)",
    )
    return p
