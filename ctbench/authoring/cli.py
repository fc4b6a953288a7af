"""``ctb-author``: write, check and publish troubleshooting tasks."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from ctbench.cli_support import add_command, build_parser, emit_json, run
from ctbench.errors import CtbError
from ctbench.model import family_names
from ctbench.tables import TABLE_FORMATS, formats_help

if TYPE_CHECKING:
    from ctbench.validation import Finding, Report

REALISM_PACKAGES = ("textfsm", "ntc_templates")
"""The 'realism' extra's import names: only their absence means "install the extra"."""

DESCRIPTION = """\
Write, check and publish troubleshooting tasks.

A task is a folder under tasks/rca/<ID>/ or tasks/path/<ID>/: task.yaml (what the agent sees: the
statement, the network, the recorded CLI outputs), hidden.yaml (the gold answer, the golden evidence
commands and the metadata; never shown to agents) and recordings/ (device output, byte for byte).

Run without a command in a terminal to browse the tasks in the authoring app.

examples:
  ctb-author                                 browse the tasks in the authoring app
  ctb-author new                             write a new task in the app
  ctb-author edit RCA-001                    revise a task in the app
  ctb-author validate tasks/                 check every task; exit 1 on errors
  ctb-author validate tasks/rca/RCA-001      check one task
  ctb-author stats tasks/ --format md        the paper's dataset tables
  ctb-author export RCA-001 --out bundles/   one self-contained JSON file per task
  ctb-author release 1.0.0 --out rel/ --gold-out gold/ --license cc-by-4.0
                                             the retained tasks as a Hugging Face dataset
  ctb-author schema                          (re)write the JSON Schemas editors use
"""


def _tasks_arg(p: argparse.ArgumentParser, *, top: bool = False) -> None:
    # Only the top-level parser sets the default: a sub-command's default would overwrite the value
    # given before the command (`ctb-author --tasks DIR validate`), so theirs is SUPPRESS.
    p.add_argument(
        "--tasks",
        metavar="DIR",
        default=None if top else argparse.SUPPRESS,
        help="task set folder (default: $CTBENCH_TASKS, else ./tasks, else the current folder)",
    )


def _invalid_lines(report: Report, limit: int = 3) -> list[str]:
    """One line per task (and per set-level file) that does not validate: its first errors."""
    by_what: dict[tuple[bool, str], list[Finding]] = {}
    for f in report.errors:  # a task by its id; a set-level file (taxonomy, a network) by its path
        by_what.setdefault((f.task is not None, f.task or f.file), []).append(f)
    out = []
    for (_, what), found in sorted(by_what.items()):
        more = f" (+{len(found) - limit} more)" if len(found) > limit else ""
        out.append(f"{what} does not validate: " + "; ".join(f.render() for f in found[:limit]) + more)
    return out


def cmd_validate(args: argparse.Namespace) -> int:
    from ctbench.scoring.gold_check import PluginGoldCheck
    from ctbench.validation import Validator, resolve_targets

    paths = list(args.paths) or ([args.tasks] if args.tasks else [])
    ts, refs = resolve_targets(paths)  # once: the realism check works on the same set and tasks
    # a plug-in family's gold is checked against the network by the family itself, as the gate does
    report = Validator(ts, gold_check=PluginGoldCheck(ts)).run(refs)
    if getattr(args, "realism", False):
        try:
            from ctbench.authoring.realism import check_realism_tasks
        except ModuleNotFoundError as exc:  # the extra's packages only: any other import error is a bug
            if (exc.name or "").split(".")[0] not in REALISM_PACKAGES:
                raise
            raise CtbError("--realism needs the 'realism' extra: pip install 'ctbench[realism]'") from None
        check_realism_tasks(ts, refs, report)
    if args.json:
        emit_json(report.to_json())
    else:
        for f in report.findings:
            if f.severity.value == "warning" and args.quiet:
                continue
            print(f.render())
        summary = (
            f"{report.tasks_checked} task(s) checked: {len(report.errors)} error(s), "
            f"{len(report.warnings)} warning(s)"
        )
        print(summary, file=sys.stderr if report.findings else sys.stdout)
    return 1 if report.errors else 0


def cmd_stats(args: argparse.Namespace) -> int:
    from ctbench.authoring.stats import dataset_stats
    from ctbench.review.history import review_counts
    from ctbench.scoring.gold_check import PluginGoldCheck
    from ctbench.store import TaskSet
    from ctbench.tables import render
    from ctbench.validation import Validator

    ts = TaskSet.open(args.path or args.tasks)
    counts = review_counts(ts)
    report = Validator(ts, gold_check=PluginGoldCheck(ts)).run()
    invalid = _invalid_lines(report)
    try:
        res = dataset_stats(ts, review_counts=counts)
    except CtbError:  # a broken taxonomy or configuration: no table can be computed
        for line in invalid:
            print(f"ctb-author stats: {line}", file=sys.stderr)
        raise CtbError(
            f"{ts.root}: the task set does not validate; no statistics (see ctb-author validate {ts.root})"
        ) from None
    if args.format == "json":
        emit_json(
            {
                "tables": [t.to_json() for t in res.tables],
                "skipped": res.skipped,
                "invalid_tasks": sorted(report.tasks_with_errors),
            }
        )
    else:
        sys.stdout.write(render(res.tables, args.format))
    for s in res.skipped:
        print(f"skipped (cannot be loaded): {s}", file=sys.stderr)
    for line in invalid:
        print(f"ctb-author stats: {line}", file=sys.stderr)
    if report.errors:
        print(
            f"ctb-author stats: {len(report.tasks_with_errors)} of {report.tasks_checked} task(s) do not "
            f"validate; the tables count the {report.tasks_checked - len(res.skipped)} that load "
            f"(see ctb-author validate {ts.root})",
            file=sys.stderr,
        )
        return 1
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
    from ctbench.scoring.gold_check import PluginGoldCheck
    from ctbench.store import TaskSet
    from ctbench.validation import Validator
    from ctbench.yamlio import atomic_write_text

    ts = TaskSet.open(args.tasks)
    refs = [ts.ref(i) for i in args.ids] if args.ids else ts.unique_refs()  # one id, one bundle file
    if not refs:
        raise CtbError(f"{ts.root}: no tasks to export")
    report = Validator(ts, gold_check=PluginGoldCheck(ts)).run(refs)
    invalid = _invalid_lines(report)
    for line in invalid:
        print(f"ctb-author export: {line}", file=sys.stderr)
    if report.errors and not args.force:
        bad = sorted(report.tasks_with_errors) or ["the task set"]
        verb = "does" if len(bad) == 1 else "do"
        raise CtbError(
            f"export: {', '.join(bad[:5])}{' ...' if len(bad) > 5 else ''} {verb} not validate; nothing "
            "written (fix the errors above, or pass --force to export anyway)"
        )
    if args.format == "trackb":
        from ctbench.authoring.trackb_export import export_layout

        done = export_layout(
            ts, refs, Path(args.out or "trackb"), phase=args.phase, public_only=args.public_only
        )
        if args.json:
            emit_json(done.to_json())
        else:
            for note in done.left_out:
                print(f"left out (Track B knows no such CLI): {note}", file=sys.stderr)
            print(f"wrote {len(done.questions)} question(s), {done.files} output file(s) to {done.out}/")
        return 0
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


# --------------------------------------------------------------------------- editing (app and scripts)

if TYPE_CHECKING:
    from ctbench.authoring.editing import EditSession
    from ctbench.authoring.working_copy import Action
    from ctbench.store import TaskSet


def _in_terminal() -> bool:
    return sys.stdin.isatty() and sys.stdout.isatty()


def _run_app(args: argparse.Namespace, mode: str, task_id: str | None = None) -> int:
    from ctbench.store import TaskSet

    ts = TaskSet.open(args.tasks)
    from ctbench.authoring.app.app import AuthorApp, NewTaskDefaults  # Textual only for the app

    defaults = NewTaskDefaults(
        family=getattr(args, "family", None),
        task_id=getattr(args, "id", None),
        network=getattr(args, "network", None),
        title=getattr(args, "title", None),
    )
    app = AuthorApp(
        ts, mode=mode, task_id=task_id, author=getattr(args, "author", None), new_defaults=defaults
    )
    app.run()
    return app.return_code or 0


def _edit_session(args: argparse.Namespace) -> tuple[TaskSet, EditSession, str]:
    from ctbench.authoring.editing import EditSession
    from ctbench.authoring.working_copy import default_author
    from ctbench.store import TaskSet

    ts = TaskSet.open(args.tasks)
    author = default_author(ts.root, args.author)
    return ts, EditSession.open(ts, args.id), author


def _from_here(path: Path) -> str:
    """``path`` as the author can paste it into the next command from where she stands.

    Messages otherwise show paths relative to the task set's parent, which is only right when the
    command was run from there; a hint to run another command must work from the current folder.
    """
    where = path.resolve()
    try:
        return str(where.relative_to(Path.cwd().resolve())) or "."
    except ValueError:
        return str(where)


def _finish(
    args: argparse.Namespace, ts: TaskSet, session: EditSession, author: str, action: Action, what: str
) -> int:
    """Save (and commit), then say what happened and where the task stands now."""
    from ctbench.scoring.gold_check import PluginGoldCheck
    from ctbench.store import set_relative
    from ctbench.validation import Validator

    result = session.save(commit=not args.no_commit, author=author, action=action)
    report = Validator(ts, gold_check=PluginGoldCheck(ts)).run([ts.ref(session.task_id)])
    folder = set_relative(ts.root, result.folder)
    if args.json:
        emit_json(
            {
                "task": session.task_id,
                "action": action,
                "done": what,
                "folder": str(folder),
                "commit": result.commit,
                "note": result.note,
                "status_note": result.status_note,
                "reopened": result.reopened,
                "errors": len(report.errors),
                "warnings": len(report.warnings),
                "findings": [f.model_dump(mode="json", exclude={"loc"}) for f in report.findings],
            }
        )
        return 0
    print(f"{session.task_id}: {what}")
    if result.status_note and result.status_note != result.note:
        print(f"{session.task_id}: {result.status_note}", file=sys.stderr)
    if result.commit:
        print(f"committed {result.commit[:10]} ({action})")
    elif result.note:
        print(result.note, file=sys.stderr)
    state = f"{len(report.errors)} error(s), {len(report.warnings)} warning(s)"
    print(
        f"{session.task_id} now has {state}"
        + (f"; see: ctb-author validate {_from_here(result.folder)}" if report.findings else ""),
        file=sys.stderr,
    )
    return 0


def cmd_new(args: argparse.Namespace) -> int:
    missing = [
        flag
        for flag, value in (("--family", args.family), ("--id", args.id), ("--network", args.network))
        if not value
    ]
    if missing:
        if not _in_terminal():
            raise CtbError(
                f"new: {', '.join(missing)} missing; without a terminal ctb-author new needs "
                "--family, --id and --network (or run it in a terminal to use the app)",
                exit_code=2,
            )
        return _run_app(args, "new")
    from ctbench.authoring.editing import EditSession
    from ctbench.authoring.working_copy import default_author
    from ctbench.store import TaskSet
    from ctbench.yamlio import read_input

    ts = TaskSet.open(args.tasks)
    author = default_author(ts.root, args.author)
    statement = None
    if args.statement_file:
        raw = read_input(args.statement_file, "the statement text", stdin=True)
        try:
            statement = raw.decode("utf-8")
        except UnicodeDecodeError:
            raise CtbError(f"{args.statement_file}: the statement is not UTF-8 text") from None
    session = EditSession.create(
        ts, args.family, args.id, args.network, statement=statement, title=args.title or "", author=author
    )
    what = f"created {args.family} task in {args.family}/{args.id} on network {args.network}"
    if statement is None:
        what += " (the statement is a template: write yours with the app or --statement-file)"
    return _finish(args, ts, session, author, "create", what)


def cmd_edit(args: argparse.Namespace) -> int:
    if not _in_terminal():
        raise CtbError(
            "edit opens the authoring app and needs a terminal; scripts use add-recording, "
            "add-golden and set-answer",
            exit_code=2,
        )
    from ctbench.store import TaskSet

    TaskSet.open(args.tasks).ref(args.id)  # a clear error before the screen switches
    return _run_app(args, "edit", args.id)


def cmd_add_recording(args: argparse.Namespace) -> int:
    from ctbench.yamlio import read_input

    ts, session, author = _edit_session(args)
    data = read_input(args.file, "a file with the command output", stdin=True)
    rec, note = session.add_recording(args.device, args.command, data, replace=args.replace)
    what = f"{'replaced' if args.replace else 'recorded'} {rec.device} {rec.command!r} ({rec.file}, {len(data)} bytes)"
    if note:
        what += f"; {note}"
    return _finish(args, ts, session, author, "replace-recording" if args.replace else "add-recording", what)


def cmd_add_golden(args: argparse.Namespace) -> int:
    ts, session, author = _edit_session(args)
    act = session.add_golden(args.device, args.command, args.why)
    return _finish(args, ts, session, author, "add-golden", f"golden action {act.device} {act.command!r}")


def cmd_set_answer(args: argparse.Namespace) -> int:
    from ctbench.authoring.editing import path_text, rca_text
    from ctbench.authoring.links_editing import link_text
    from ctbench.model import Family

    ts, session, author = _edit_session(args)
    if args.line:  # a plug-in family's gold, as answer lines through its own parser
        if args.append:
            for line in args.line:
                session.add_answer_line(line)
        else:
            session.set_answer_lines(args.line)
        shown = "; ".join(session.answer_lines())
        return _finish(args, ts, session, author, "set-answer", f"gold answer is now: {shown}")
    session.require_family(Family.RCA if args.rca else Family.TOPOLOGY if args.link else Family.PATH)
    if args.link:
        links = [session.parse_gold_link(line) for line in args.link]
        if args.append:
            for x in links:
                session.add_gold_link(x)
        else:
            session.set_gold_links(links)
        shown = "; ".join(link_text(x) for x in session.draft.hidden.answer.links or [])
    elif args.rca:
        triples = [session.parse_rca(line) for line in args.rca]
        if args.append:
            for t in triples:
                session.add_rca(t)
        else:
            session.set_rca(triples)
        shown = "; ".join(rca_text(t) for t in session.draft.hidden.answer.rca or [])
    else:
        paths = [session.parse_path(line) for line in args.path]
        if args.append:
            for p in paths:
                session.add_path(p)
        else:
            session.set_paths(paths)
        shown = " | ".join(path_text(p) for p in session.draft.hidden.answer.paths or [])
    return _finish(args, ts, session, author, "set-answer", f"gold answer is now: {shown}")


def _editing_options(p: argparse.ArgumentParser, *, json_out: bool = True) -> None:
    p.add_argument(
        "--author",
        metavar="NAME",
        help="who made the change, for the commit trailer "
        "(default and only choice with people in reviewers.yaml: yourself, the person id your git "
        "identity maps to; else $CTBENCH_AUTHOR, else git's user.name <user.email>)",
    )
    p.add_argument("--no-commit", action="store_true", help="write the files but do not make a git commit")
    if json_out:
        p.add_argument("--json", action="store_true", help="machine-readable result on stdout")
    _tasks_arg(p)


def _add_editing_commands(sub: object) -> None:
    p = add_command(
        sub,
        "new",
        "create a task (opens the authoring app; flags for scripts)",
        cmd_new,
        description="Create a task.\n\nIn a terminal without flags, opens the authoring app on a new "
        "task. With --family, --id and --network it creates the task folder directly (for scripts) "
        "and commits it.\n\nexamples:\n"
        "  ctb-author new\n"
        "  ctb-author new --family rca --id RCA-007 --network campus-lab --statement-file stmt.txt",
    )
    p.add_argument(
        "--family",
        choices=list(family_names()),
        help="root-cause analysis, path restoration, topology restoration, or an installed plug-in "
        "family (ctbench.families entry point)",
    )
    p.add_argument("--id", metavar="ID", help="task id, e.g. RCA-007 (becomes the folder name)")
    p.add_argument("--network", metavar="NAME", help="shared network the task runs on (networks/NAME.yaml)")
    p.add_argument("--statement-file", metavar="FILE", help="statement text from FILE ('-' for stdin)")
    p.add_argument("--title", metavar="TEXT", help="one-line title")
    _editing_options(p)

    p = add_command(
        sub,
        "edit",
        "edit a task in the authoring app",
        cmd_edit,
        description="Open a task in the authoring app: statement, network, recordings, golden "
        "actions, gold answer, metadata, live validation and a replay console.",
    )
    p.add_argument("id", metavar="ID", help="task id")
    p.add_argument(
        "--author", metavar="NAME", help="who is editing (default: $CTBENCH_AUTHOR, else git's user)"
    )
    _tasks_arg(p)

    p = add_command(
        sub,
        "add-recording",
        "add a recorded command output to a task",
        cmd_add_recording,
        description="Add what a device printed for a command, byte for byte, to a task.\n\n"
        "The command is stored in its canonical form (full keywords) so the replay backend finds it "
        "however an agent abbreviates it.\n\nexamples:\n"
        "  ctb-author add-recording RCA-007 --device CORE_SW_01 --command 'dis int br' --file out.txt\n"
        "  ssh core1 'display ip routing-table' | ctb-author add-recording RCA-007 "
        "--device CORE_SW_01 --command 'display ip routing-table' --file -",
    )
    p.add_argument("id", metavar="ID", help="task id")
    p.add_argument("--device", required=True, metavar="NAME", help="device name in the task's network")
    p.add_argument("--command", required=True, metavar="CMD", help="the command as typed on the device")
    p.add_argument("--file", required=True, metavar="FILE", help="captured output ('-' for stdin)")
    p.add_argument("--replace", action="store_true", help="replace an existing recording of the same command")
    _editing_options(p)

    p = add_command(
        sub,
        "add-golden",
        "add a golden evidence action to a task",
        cmd_add_golden,
        description="Mark a recorded command as a golden action: evidence the diagnosis needs.\n\n"
        "example:\n  ctb-author add-golden RCA-007 --device CORE_SW_01 --command 'display interface "
        "brief' --why 'GE0/0/24 is administratively down'",
    )
    p.add_argument("id", metavar="ID", help="task id")
    p.add_argument("--device", required=True, metavar="NAME", help="device the command runs on")
    p.add_argument(
        "--command", required=True, metavar="CMD", help="a recorded command (abbreviations allowed)"
    )
    p.add_argument("--why", required=True, metavar="TEXT", help="what this observation shows")
    _editing_options(p)

    p = add_command(
        sub,
        "set-answer",
        "set a task's gold answer",
        cmd_set_answer,
        description="Set the gold answer (replaces it; --append adds to it).\n\nexamples:\n"
        "  ctb-author set-answer RCA-007 --rca 'CORE_SW_01;GigabitEthernet0/0/24;shutdown'\n"
        "  ctb-author set-answer PATH-007 --path 'PC_01_eth0 -> ACC_SW_01_GigabitEthernet1/0/48 -> "
        "CORE_SW_01'\n"
        "  ctb-author set-answer TOPO-001 --link 'vmx1(ge-0/0/1)->vmx2(ge-0/0/1)' --link ...\n"
        "  ctb-author set-answer DOWN-001 --line 'CORE_SW_01:GE0/0/24'   (a plug-in family's task)",
    )
    p.add_argument("id", metavar="ID", help="task id")
    group = p.add_mutually_exclusive_group(required=True)
    group.add_argument(
        "--link",
        action="append",
        metavar="'A(PORT)->B(PORT)'",
        help="one physical link of a topology task (repeat for several), written as the agent writes it",
    )
    group.add_argument(
        "--rca",
        action="append",
        metavar="'NODE;OBJECT;LABEL'",
        help="one root cause (repeat for several); labels and aliases from taxonomy.yaml",
    )
    group.add_argument(
        "--path",
        action="append",
        metavar="'A_IF -> B_IF -> C'",
        help="one path (repeat for several): node_egress-interface hops, last hop a node name; or port "
        "by port, 'A(out) -> B(in) -> B(out) -> C(in)' (the ingress ports kept)",
    )
    group.add_argument(
        "--line",
        action="append",
        metavar="'ANSWER LINE'",
        help="one answer line of a plug-in family's task (repeat for several), written as the agent "
        "writes it; the family's parser checks it and the family stores it under answer.<family>",
    )
    p.add_argument("--append", action="store_true", help="add to the current answer instead of replacing it")
    _editing_options(p)


def _browse(args: argparse.Namespace) -> int:
    if not _in_terminal():
        build()[0].print_help()
        return 0
    return _run_app(args, "browse")


def build() -> tuple[argparse.ArgumentParser, object]:
    parser, sub = build_parser("ctb-author", DESCRIPTION)
    _tasks_arg(parser, top=True)
    from ctbench.authoring.lab.cli import add_lab_commands  # live FRR labs (docs/labs.md)

    add_lab_commands(sub)

    p = add_command(
        sub,
        "validate",
        "check tasks: schema, recordings, gold vs network, metadata, leaks, canary",
        cmd_validate,
        description="Check tasks the way a reviewer would, before a reviewer has to.\n\n"
        "Each finding names the file and line, what was found and what was expected.\n"
        "Exit status: 0 clean or warnings only, 1 errors found, 2 bad usage.",
    )
    p.add_argument(
        "paths", nargs="*", metavar="PATH", help="task set, task folders or files in them (default: ./tasks)"
    )
    p.add_argument("--json", action="store_true", help="machine-readable findings on stdout")
    p.add_argument("-q", "--quiet", action="store_true", help="print errors only")
    p.add_argument(
        "--realism",
        action="store_true",
        help="also parse recordings with the ntc-templates TextFSM parsers for their platform and command",
    )
    _tasks_arg(p)

    p = add_command(
        sub,
        "stats",
        "the paper's dataset tables (tasks, categories, metadata, heterogeneity, yields)",
        cmd_stats,
    )
    p.add_argument("path", nargs="?", help="task set folder (default: ./tasks)")
    p.add_argument(
        "--format", choices=list(TABLE_FORMATS), default="text", help=formats_help(TABLE_FORMATS.values())
    )
    _tasks_arg(p)

    p = add_command(
        sub, "schema", "write JSON Schemas for the task files (editors validate as you type)", cmd_schema
    )
    p.add_argument("--out", metavar="DIR", help="output folder (default: <task set>/schema)")
    _tasks_arg(p)

    p = add_command(
        sub,
        "export",
        "write self-contained JSON bundles of tasks",
        cmd_export,
        "Write one self-contained JSON bundle per task (files base64-encoded, lossless with\n"
        "ctb-author import). --public-only drops what agents must not see.\n"
        "To publish a benchmark in a public repository without putting its answers into training\n"
        "corpora, keep its gold sealed (ctb-review seal; review.seal_gold in ctbench.yaml): a\n"
        "sealed task's hidden.yaml.age is age ciphertext, opened only with a recipient's identity\n"
        "($CTBENCH_AGE_IDENTITY), and a bundle of it carries the plain gold only when you can open it.",
    )
    p.add_argument("ids", nargs="*", metavar="ID", help="task ids (default: all)")
    p.add_argument("--out", metavar="DIR", help="one <ID>.json per task in DIR (default: ./bundles)")
    p.add_argument("--jsonl", metavar="FILE", help="one line per task in FILE ('-' for stdout) instead")
    p.add_argument(
        "--format",
        choices=["bundle", "trackb"],
        default="bundle",
        help="trackb: the set in TTAC Track B's layout (Phase_N/test.json, devices_outputs/, vendors.yaml, "
        "gt.csv) under --out (default ./trackb)",
    )
    p.add_argument("--phase", type=int, default=1, metavar="N", help="trackb: the phase number (Phase_N/)")
    p.add_argument("--json", action="store_true", help="trackb: what was written, as JSON")
    p.add_argument(
        "--public-only",
        action="store_true",
        help="drop everything agents must not see (hidden.yaml, review records)",
    )
    p.add_argument(
        "--force",
        action="store_true",
        help="export tasks that do not validate too (their errors are still printed)",
    )
    _tasks_arg(p)

    p = add_command(sub, "import", "import task bundles written by export (lossless)", cmd_import)
    p.add_argument("files", nargs="+", metavar="BUNDLE", help=".json or .jsonl bundle files")
    p.add_argument("--replace", action="store_true", help="overwrite files that differ")
    _tasks_arg(p)

    _add_editing_commands(sub)
    from ctbench.authoring.capture_cli import add_import_capture

    add_import_capture(sub)
    from ctbench.authoring.release_cli import add_release_commands

    add_release_commands(sub)
    from ctbench.authoring.trackb_cli import add_import_trackb

    add_import_trackb(sub)
    from ctbench.authoring.record_cli import add_record

    add_record(sub)
    from ctbench.authoring.desk_cli import add_desk_commands

    add_desk_commands(sub, _editing_options, _edit_session, _finish)
    return parser, sub


def main(argv: Sequence[str] | None = None) -> int:
    parser, _ = build()
    return run(parser, argv, default=_browse)


if __name__ == "__main__":
    sys.exit(main())
