"""``ctb-author import-trackb``: the command-line face of :mod:`ctbench.authoring.trackb_import`."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from ctbench.cli_support import add_command, emit_json

DESCRIPTION = """\
Import a TTAC Track B phase as a new ctbench task set.

PHASE_DIR holds the phase's test.json (and its question_limits_config.json, unless --limits names
another); --outputs is its devices_outputs folder ({N|others}/{device}/{safe(command)}.txt); --vendors
a YAML map device -> huawei | h3c | cisco (what Track B's server keeps in code). Each test.json item
becomes the task TTACB-P{phase}-{id:03d}: the prompt as Track B agents saw it, the recordings the
reference server serves for that question (its own folder, else others/), byte for byte, with each
file name read back into a command through the vendor's grammar (names no command gives are kept as
literal commands and listed), the refused (no_permission) commands left out so the replay denies them
and kept in trackb.yaml for the Track B facade, and the gold from --gt (fault -> rca, paths -> path,
topology restoration -> topology, on a copy of the network less the cabling it asks for).
Without --gt the tasks run and export predictions but are not scored.

examples:
  ctb-author import-trackb Phase_1/ --outputs devices_outputs --vendors vendors.yaml --phase 1 \\
      --gt gt_phase1.csv --tasks trackb-p1
  ctb-author import-trackb Phase_2/ --outputs devices_outputs --vendors vendors.yaml --phase 2 \\
      --tasks trackb-p2 --json
"""


def cmd_import_trackb(args: argparse.Namespace) -> int:
    from ctbench.authoring.trackb_import import import_trackb

    def progress(line: str) -> None:
        if not args.json:
            print(line, file=sys.stderr, flush=True)

    report = import_trackb(
        Path(args.phase_dir),
        outputs=Path(args.outputs),
        vendors_file=Path(args.vendors),
        phase=args.phase,
        tasks_out=Path(args.tasks),
        limits_file=Path(args.limits) if args.limits else None,
        gt_file=Path(args.gt) if args.gt else None,
        progress=progress,
    )
    if args.json:
        emit_json(report.to_json())
        return 0
    for q, reason in report.skipped:
        print(f"skipped question {q}: {reason}")
    for tid, u in report.unresolved:
        print(f"{tid}: {u.device}/{u.file} kept as the literal command {u.command!r} ({u.reason})")
    for tid, u in report.renamed:
        print(f"{tid}: {u.device}/{u.file} recorded as {u.command!r} ({u.reason})")
    if report.ignored_devices:
        print(f"ignored device folders not in --vendors: {', '.join(report.ignored_devices)}")
    scored = "" if report.scored else " (no ground truth: not scored)"
    print(
        f"imported {len(report.tasks)} task(s){scored}, {report.recordings} recording(s), "
        f"{report.links} LLDP link(s) into {args.tasks}; skipped {len(report.skipped)}"
    )
    return 0


def add_import_trackb(sub: Any) -> argparse.ArgumentParser:
    p = add_command(
        sub, "import-trackb", "import a TTAC Track B phase as a task set", cmd_import_trackb, DESCRIPTION
    )
    p.add_argument("phase_dir", metavar="PHASE_DIR", help="the phase folder holding test.json")
    p.add_argument("--outputs", required=True, metavar="DIR", help="the phase's devices_outputs folder")
    p.add_argument("--vendors", required=True, metavar="FILE", help="YAML map device -> huawei | h3c | cisco")
    p.add_argument(
        "--phase", required=True, type=int, metavar="N", help="the phase number (task ids TTACB-PN-...)"
    )
    p.add_argument("--tasks", required=True, metavar="OUT", help="the new task set folder to create")
    p.add_argument("--limits", metavar="FILE", help="question_limits_config.json (default: PHASE_DIR's)")
    p.add_argument("--gt", metavar="FILE", help="ground-truth CSV ID,Track B (scenario id, answer)")
    p.add_argument("--json", action="store_true", help="machine-readable report on stdout")
    return p
