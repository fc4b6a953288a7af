"""``ctb-author``: write, check and publish troubleshooting tasks."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from ctbench.cli_support import add_command, build_parser, emit_json, not_built, run
from ctbench.errors import CtbError

DESCRIPTION = """\
Write, check and publish troubleshooting tasks.

A task is a folder under tasks/rca/<ID>/ or tasks/path/<ID>/: task.yaml (what the agent sees: the
statement, the network, the recorded CLI outputs), hidden.yaml (the gold answer, the golden evidence
commands and the metadata; never shown to agents) and recordings/ (device output, byte for byte).

Run without a command in a terminal to browse the tasks in the authoring app.

examples:
  ctb-author validate tasks/                 check every task; exit 1 on errors
  ctb-author validate tasks/rca/RCA-001      check one task
  ctb-author stats tasks/ --format md        the paper's dataset tables
  ctb-author export RCA-001 --out bundles/   one self-contained JSON file per task
  ctb-author schema                          (re)write the JSON Schemas editors use
"""


def _tasks_arg(p: argparse.ArgumentParser) -> None:
    p.add_argument("--tasks", metavar="DIR", default=None,
                   help="task set folder (default: $CTBENCH_TASKS, else ./tasks, else the current folder)")


def cmd_validate(args: argparse.Namespace) -> int:
    from ctbench.authoring.validate import validate_paths

    paths = list(args.paths) or ([args.tasks] if args.tasks else [])
    report = validate_paths(paths)
    if getattr(args, "realism", False):
        try:
            from ctbench.authoring.realism import check_realism
        except ImportError:
            raise CtbError("--realism needs the 'realism' extra: pip install 'ctbench[realism]'") from None
        check_realism(paths, report)
    if args.json:
        emit_json(report.to_json())
    else:
        for f in report.findings:
            if f.severity.value == "warning" and args.quiet:
                continue
            print(f.render())
        summary = (f"{report.tasks_checked} task(s) checked: {len(report.errors)} error(s), "
                   f"{len(report.warnings)} warning(s)")
        print(summary, file=sys.stderr if report.findings else sys.stdout)
    return 1 if report.errors else 0


def cmd_stats(args: argparse.Namespace) -> int:
    from ctbench.authoring.stats import dataset_stats
    from ctbench.store import TaskSet
    from ctbench.tables import render

    ts = TaskSet.open(args.path or args.tasks)
    review_counts = None
    try:
        from ctbench.review.history import review_counts as _rc

        review_counts = _rc(ts)
    except ImportError:
        pass
    res = dataset_stats(ts, review_counts=review_counts)
    if args.format == "json":
        emit_json({"tables": [t.to_json() for t in res.tables], "skipped": res.skipped})
    else:
        sys.stdout.write(render(res.tables, args.format))
    for s in res.skipped:
        print(f"skipped (invalid): {s}", file=sys.stderr)
    return 0


def cmd_schema(args: argparse.Namespace) -> int:
    from ctbench.authoring.schema import export_schemas
    from ctbench.store import TaskSet

    out = Path(args.out) if args.out else TaskSet.open(args.tasks).root / "schema"
    for p in export_schemas(out):
        print(p)
    return 0


def cmd_export(args: argparse.Namespace) -> int:
    from ctbench.authoring.bundle import dumps, export_task
    from ctbench.store import TaskSet
    from ctbench.yamlio import atomic_write_text

    ts = TaskSet.open(args.tasks)
    refs = [ts.ref(i) for i in args.ids] if args.ids else ts.refs()
    if not refs:
        raise CtbError(f"{ts.root}: no tasks to export")
    bundles = [export_task(ts, r, public_only=args.public_only) for r in refs]
    if args.jsonl:
        text = "".join(dumps(b, compact=True) + "\n" for b in bundles)
        if args.jsonl == "-":
            sys.stdout.write(text)
        else:
            atomic_write_text(Path(args.jsonl), text)
            print(f"wrote {len(bundles)} task(s) to {args.jsonl}", file=sys.stderr)
        return 0
    out = Path(args.out or "bundles")
    for b in bundles:
        atomic_write_text(out / f"{b['id']}.json", dumps(b))
    print(f"wrote {len(bundles)} bundle(s) to {out}/", file=sys.stderr)
    return 0


def cmd_import(args: argparse.Namespace) -> int:
    from ctbench.authoring.bundle import import_bundle, read_bundles
    from ctbench.store import TaskSet

    ts = TaskSet.open(args.tasks)
    total = 0
    for f in args.files:
        for b in read_bundles(Path(f)):
            written = import_bundle(ts, b, replace=args.replace)
            total += 1
            note = " (public-only: no hidden part)" if b.get("public_only") else ""
            print(f"{b['id']}: {len(written)} file(s) written{note}")
    print(f"imported {total} task(s) into {ts.root}", file=sys.stderr)
    return 0


def _browse(args: argparse.Namespace) -> int:
    if not sys.stdin.isatty() or not sys.stdout.isatty():
        build()[0].print_help()
        return 0
    return not_built("the authoring app (ctb-author with no command)")(args)


def build() -> tuple[argparse.ArgumentParser, object]:
    parser, sub = build_parser("ctb-author", DESCRIPTION)
    _tasks_arg(parser)

    p = add_command(sub, "validate", "check tasks: schema, recordings, gold vs network, metadata, leaks, canary",
                    cmd_validate, description="Check tasks the way a reviewer would, before a reviewer has to.\n\n"
                    "Each finding names the file and line, what was found and what was expected.\n"
                    "Exit status: 0 clean or warnings only, 1 errors found, 2 bad usage.")
    p.add_argument("paths", nargs="*", metavar="PATH", help="task set, task folders or files in them (default: ./tasks)")
    p.add_argument("--json", action="store_true", help="machine-readable findings on stdout")
    p.add_argument("-q", "--quiet", action="store_true", help="print errors only")
    p.add_argument("--realism", action="store_true",
                   help="also parse recordings with the ntc-templates TextFSM parsers for their platform and command")
    _tasks_arg(p)

    p = add_command(sub, "stats", "the paper's dataset tables (tasks, categories, metadata, heterogeneity, yields)",
                    cmd_stats)
    p.add_argument("path", nargs="?", help="task set folder (default: ./tasks)")
    p.add_argument("--format", choices=["text", "md", "json", "latex"], default="text")
    _tasks_arg(p)

    p = add_command(sub, "schema", "write JSON Schemas for the task files (editors validate as you type)",
                    cmd_schema)
    p.add_argument("--out", metavar="DIR", help="output folder (default: <task set>/schema)")
    _tasks_arg(p)

    p = add_command(sub, "export", "write self-contained JSON bundles of tasks", cmd_export)
    p.add_argument("ids", nargs="*", metavar="ID", help="task ids (default: all)")
    p.add_argument("--out", metavar="DIR", help="one <ID>.json per task in DIR (default: ./bundles)")
    p.add_argument("--jsonl", metavar="FILE", help="one line per task in FILE ('-' for stdout) instead")
    p.add_argument("--public-only", action="store_true",
                   help="drop everything agents must not see (hidden.yaml, review records)")
    _tasks_arg(p)

    p = add_command(sub, "import", "import task bundles written by export (lossless)", cmd_import)
    p.add_argument("files", nargs="+", metavar="BUNDLE", help=".json or .jsonl bundle files")
    p.add_argument("--replace", action="store_true", help="overwrite files that differ")
    _tasks_arg(p)

    for name, what in [
        ("new", "create a task (opens the authoring app; flags for scripts)"),
        ("edit", "edit a task in the authoring app"),
        ("import-capture", "split a terminal session log into recordings"),
        ("add-recording", "add a recorded command output to a task"),
        ("add-golden", "add a golden evidence action to a task"),
        ("set-answer", "set a task's gold answer"),
    ]:
        add_command(sub, name, what, not_built(f"ctb-author {name}"))
    return parser, sub


def main(argv: Sequence[str] | None = None) -> int:
    parser, _ = build()
    return run(parser, argv, default=_browse)


if __name__ == "__main__":
    sys.exit(main())
