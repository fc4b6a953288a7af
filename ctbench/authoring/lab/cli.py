"""``ctb-author lab``: bring a lab up, inject a fault, record a draft task, take it down.

    ctb-author lab up tasks/labs/triangle.yaml
    ctb-author lab fault tasks/labs/triangle.yaml shutdown device=R2 interface=eth2
    ctb-author lab record tasks/labs/triangle.yaml --task RCA-LAB-001 --commands plan.yaml
    ctb-author lab down tasks/labs/triangle.yaml
    ctb-author lab capture tasks/labs/triangle.yaml --fault shutdown device=R2 interface=eth2 --task RCA-LAB-001
    ctb-author lab vtysh-check tasks/labs/triangle.yaml     # the vtysh fixture against a live router

``capture`` is all four in one process, with the teardown guaranteed (Ctrl-C and SIGTERM included);
``up`` leaves the lab running for ``fault``/``record``/``run`` until ``down``. A lab left by a killed
process is removed by the next ``up``, ``capture`` or ``down`` of that lab.
"""

from __future__ import annotations

import argparse
import json
import signal
import sys
import time
from pathlib import Path
from types import FrameType
from typing import Any

from ctbench.cli_support import add_command, emit_json
from ctbench.errors import CtbError
from ctbench.yamlio import atomic_write_text

from .faults import CATALOGUE, Effect, inject, parse_fault
from .runtime import Lab, teardown
from .spec import load_lab


def _progress(msg: str) -> None:
    print(f"lab: {msg}", file=sys.stderr, flush=True)


def _lab(args: argparse.Namespace) -> Lab:
    return Lab(load_lab(args.lab), progress=_progress)


def _effects_file(lab: Lab) -> Path:
    return lab.folder / "faults.json"


def _load_effects(lab: Lab) -> tuple[list[Effect], list[str]]:
    path = _effects_file(lab)
    if not path.exists():
        return [], []
    data = json.loads(path.read_text())
    effects = [
        Effect(tuple(e["rca"]), tuple(tuple(g) for g in e["golden"]), tuple(e["mechanisms"]), 0.0, e["chain"])
        for e in data["effects"]
    ]
    return effects, list(data["names"])


def _save_effects(lab: Lab, effects: list[Effect], names: list[str]) -> None:
    doc = {
        "names": names,
        "effects": [
            {
                "rca": list(e.rca),
                "golden": [list(g) for g in e.golden],
                "mechanisms": list(e.protocol_mechanisms),
            }
            for e in effects
        ],
    }
    atomic_write_text(_effects_file(lab), json.dumps(doc, indent=1) + "\n")


def _sigterm(_signum: int, _frame: FrameType | None) -> None:
    raise SystemExit(143)  # unwinds through the lab's context manager, so the teardown runs


def cmd_up(args: argparse.Namespace) -> int:
    lab = _lab(args)
    try:
        took = lab.up()
    except BaseException:
        lab.down()
        raise
    if args.json:
        emit_json({"lab": lab.spec.name, "up_seconds": round(took, 2)})
    else:
        print(f"lab {lab.spec.name} is up ({took:.1f} s); `ctb-author lab down {args.lab}` removes it")
    return 0


def cmd_down(args: argparse.Namespace) -> int:
    spec = load_lab(args.lab)
    gone = teardown(spec.name)
    if args.json:
        emit_json({"lab": spec.name, "namespaces": list(gone.namespaces), "processes": gone.processes})
    else:
        print(
            f"lab {spec.name}: removed {len(gone.namespaces)} namespaces, stopped {gone.processes} processes"
        )
    return 0


def cmd_fault(args: argparse.Namespace) -> int:
    lab = _lab(args)
    fault, fargs = parse_fault(args.fault)
    effect = inject(lab, fault, fargs)
    effects, names = _load_effects(lab)
    _save_effects(lab, [*effects, effect], [*names, fault.name])
    print(f"injected {fault.name}: root cause {', '.join(effect.rca)}")
    return 0


def cmd_run(args: argparse.Namespace) -> int:
    lab = _lab(args)
    sys.stdout.buffer.write(lab.run(args.device, args.command))
    return 0


def _write(args: argparse.Namespace, lab: Lab, effects: list[Effect], names: list[str]) -> int:
    from ctbench.authoring.working_copy import default_author

    from .capture import load_plan, record

    plan = load_plan(args.commands)
    path = _trace(args, lab)
    golden = [(d, c) for e in effects for d, c, _why in e.golden] + _path_golden(path)
    rec = record(lab, plan, golden, progress=_progress)
    return _finish_task(args, lab, rec, effects, names, default_author, path)


def _trace(args: argparse.Namespace, lab: Lab) -> Any:
    from .capture import trace_path

    if not args.path:
        return None
    source, _, destination = args.path.partition(":")
    if source not in lab.spec.devices() or not destination:
        raise CtbError(f"--path {args.path!r}: expected SOURCE_DEVICE:DESTINATION_ADDRESS", exit_code=2)
    return trace_path(lab, source, destination)


def _path_golden(path: Any) -> list[tuple[str, str]]:
    return [] if path is None else [(d, c) for d, c, _why in path.golden]


def _finish_task(
    args: argparse.Namespace,
    lab: Lab,
    rec: Any,
    effects: list[Effect],
    names: list[str],
    author_of: Any,
    path: Any = None,
) -> int:
    from ctbench.store import TaskSet

    from .capture import write_task

    root = TaskSet.open(args.tasks).root
    author = args.author or author_of(root)
    folder = write_task(
        root, lab.spec, args.task, rec, effects, names, author=author, commit=not args.no_commit, path=path
    )
    if args.json:
        emit_json(
            {
                "task": args.task,
                "folder": str(folder),
                "recordings": len(rec.recordings),
                "record_seconds": round(rec.seconds, 2),
            }
        )
    else:
        print(
            f"{args.task}: draft written to {folder} ({len(rec.recordings)} recordings in {rec.seconds:.1f} s)"
        )
    return 0


def cmd_record(args: argparse.Namespace) -> int:
    lab = _lab(args)
    effects, names = _load_effects(lab)
    return _write(args, lab, effects, names)


def cmd_capture(args: argparse.Namespace) -> int:
    from ctbench.authoring.working_copy import default_author

    from .capture import load_plan, record

    faults = [parse_fault(words) for words in args.fault or []]
    plan = load_plan(args.commands)  # a bad plan fails before anything is brought up
    previous = signal.signal(signal.SIGTERM, _sigterm)
    try:
        with _lab(args) as lab:
            started = time.monotonic()
            effects = [inject(lab, f, a) for f, a in faults]
            path = _trace(args, lab)
            golden = [(d, c) for e in effects for d, c, _why in e.golden] + _path_golden(path)
            rec = record(lab, plan, golden, progress=_progress)
            _progress(f"faults and recording took {time.monotonic() - started:.1f} s")
    finally:
        signal.signal(signal.SIGTERM, previous)
    return _finish_task(args, lab, rec, effects, [f.name for f, _ in faults], default_author, path)


def cmd_vtysh_check(args: argparse.Namespace) -> int:
    from ctbench.dialects import get_dialect

    from .fixture_check import ask_live, check_fixture, load_fixture, rerecorded, write_fixture

    fixture = load_fixture(args.fixture)  # a bad fixture fails before anything is brought up
    spec = load_lab(args.lab)
    if args.device not in spec.routers:
        raise CtbError(f"--device {args.device!r}: not a router of {args.lab}", exit_code=2)
    spec = spec.model_copy(update={"name": args.name or f"{spec.name[:17]}-vc"})
    previous = signal.signal(signal.SIGTERM, _sigterm)
    try:
        with Lab(spec, progress=_progress) as lab:
            _progress(f"typing {len(fixture.answers)} inputs into {args.device}'s vtysh")
            prompt, live = ask_live(lab, args.device, [row.input for row in fixture.answers])
    finally:
        signal.signal(signal.SIGTERM, previous)
    report = check_fixture(fixture, prompt, live, get_dialect("frr"), args.device)
    if args.write:
        write_fixture(args.write, rerecorded(fixture, prompt, live))
        _progress(f"live answers written to {args.write}")
    if args.json:
        emit_json(report.as_json())
    else:
        sys.stdout.write(report.text())
    return 0 if report.ok else 1


def cmd_faults(args: argparse.Namespace) -> int:
    rows = [{"name": f.name, "summary": f.summary, "params": list(f.params)} for f in CATALOGUE.values()]
    if args.json:
        emit_json(rows)
    else:
        for row in rows:
            print(f"{row['name']:<15} {row['summary']} ({' '.join(p + '=...' for p in row['params'])})")
    return 0


def add_lab_commands(sub: Any) -> None:
    """Register ``ctb-author lab ...`` on the ctb-author subparsers."""
    lab = sub.add_parser("lab", help="live FRR labs: up, fault, record, down, capture", description=__doc__,
                         formatter_class=argparse.RawDescriptionHelpFormatter)  # fmt: skip
    inner = lab.add_subparsers(dest="lab_command", metavar="LAB_COMMAND", required=True)

    def common(p: argparse.ArgumentParser, with_lab: bool = True) -> None:
        if with_lab:
            p.add_argument("lab", type=Path, help="the lab file (YAML; see docs/labs.md)")
        p.add_argument("--json", action="store_true", help="print the result as JSON")

    def task_args(p: argparse.ArgumentParser) -> None:
        p.add_argument("--task", required=True, help="the id of the draft task to write (RCA-...)")
        p.add_argument("--tasks", metavar="DIR", default=argparse.SUPPRESS, help="task set folder")
        p.add_argument(
            "--commands", type=Path, help="command plan (YAML: routers, hosts, devices); default: a basic one"
        )
        p.add_argument("--author", help="author name (default: $CTBENCH_AUTHOR or git's user)")
        p.add_argument("--no-commit", action="store_true", help="write the files but do not commit")
        p.add_argument(
            "--path",
            metavar="SOURCE:ADDRESS",
            help="write a path task instead: the gold is the path from SOURCE to ADDRESS the live tables give",
        )

    common(add_command(inner, "up", "bring a lab up and wait for it to converge", cmd_up))
    common(
        add_command(
            inner, "down", "remove a lab (daemons, namespaces, state), also one left by a crash", cmd_down
        )
    )
    p = add_command(inner, "fault", "inject a fault from the catalogue into a running lab", cmd_fault)
    common(p)
    p.add_argument("fault", nargs="+", metavar="NAME KEY=VALUE", help="fault name and its arguments")
    p = add_command(inner, "run", "print what a device of a running lab answers to a command", cmd_run)
    common(p)
    p.add_argument("device")
    p.add_argument("command")
    p = add_command(inner, "record", "record the command plan on a running lab into a draft task", cmd_record)
    common(p)
    task_args(p)
    p = add_command(inner, "capture", "up, faults, record, down in one go (teardown guaranteed)", cmd_capture)
    common(p)
    task_args(p)
    p.add_argument(
        "--fault", nargs="+", action="append", metavar="NAME KEY=VALUE", help="a fault to inject (repeatable)"
    )
    common(add_command(inner, "faults", "list the fault catalogue", cmd_faults), with_lab=False)
    p = add_command(
        inner,
        "vtysh-check",
        "re-record the vtysh fixture on a live router and diff it against the committed one (exit 1 if"
        " they differ)",
        cmd_vtysh_check,
    )
    common(p)
    p.add_argument(
        "--fixture",
        type=Path,
        default=Path("tests/fixtures/frr/vtysh_answers.json"),
        help="the committed fixture (JSON: source, prompt, answers); default: %(default)s",
    )
    p.add_argument("--device", default="R1", help="the router to type into (default: %(default)s)")
    p.add_argument("--write", type=Path, metavar="FILE", help="also write the re-recorded fixture to FILE")
    p.add_argument(
        "--name", help="name the lab copy brings up (default: the lab's name with -vc; namespaces ctb-NAME-*)"
    )


__all__ = ["CtbError", "add_lab_commands"]
