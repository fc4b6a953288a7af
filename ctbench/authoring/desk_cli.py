"""``ctb-author init`` and ``ctb-author set-metadata``: a task set from nothing, metadata from scripts.

``set-metadata`` goes through the same edit session as the app and the other scripted commands, so it
works on sealed sets too (the gold is opened with your age identity and sealed again on save), where
hand-editing ``hidden.yaml`` is impossible.
"""

from __future__ import annotations

import argparse
from typing import Any

from ctbench.cli_support import add_command, emit_json
from ctbench.errors import CtbError

INIT_DESCRIPTION = """\
Create a new task set in DIR (created if missing; nothing existing is overwritten):

  ctbench.yaml             the configuration with the paper's defaults and a fresh canary of its own
  taxonomy.yaml            the paper's root-cause taxonomy
  networks/example-lab.yaml  an example network to rename and grow
  schema/                  JSON Schemas, so editors check task files as you type
  .gitattributes           recordings are byte-exact: git never converts them
  .gitignore               runs/, .drafts/ and the temporary files of interrupted saves
  reviewers.example.yaml   who reviews and merges; rename to reviewers.yaml once it lists your team
  .pre-commit-config.yaml  `ctb-author validate` on every commit (pre-commit install)

and a git repository (branch main) with a first commit, unless DIR is inside one already.

example:
  ctb-author init ~/noc-benchmark && cd ~/noc-benchmark
  ctb-author new --family rca --id RCA-001 --network example-lab --statement-file case.txt
"""

METADATA_FIELDS = {
    "observability": "O1 (directly observable) or O2",
    "chain_length": "propagation-chain length N_c (an integer)",
    "protocol_mechanisms": "comma-separated mechanisms (N_p is their count)",
    "root_cause_count": "independent root causes N_r (an integer)",
    "ablation_of": "the O2 task this one is the O1 ablation of",
    "rationale": "one sentence: how the evidence leads to the answer",
    "declared.<field>": "a value the author declares beside the derived one "
    "(categories, entries, path_count, golden_length, vendors, device_types, h_l, heterogeneity)",
}
LIST_FIELDS = {"protocol_mechanisms", "declared.categories"}

SET_METADATA_DESCRIPTION = (
    "Set metadata fields of a task's hidden part, for scripts and for sealed sets (whose hidden.yaml\n"
    "cannot be edited by hand). An empty value clears a field.\n\nfields:\n"
    + "\n".join(f"  {k:<20} {v}" for k, v in METADATA_FIELDS.items())
    + "\n\nexample:\n  ctb-author set-metadata RCA-007 observability=O2 chain_length=2 "
    "protocol_mechanisms=OSPF,BGP declared.golden_length=4"
)


def parse_assignments(pairs: list[str]) -> tuple[dict[str, object], dict[str, object], str | None]:
    """(metadata fields, declared fields, rationale or None) from ``KEY=VALUE`` words."""
    fields: dict[str, object] = {}
    declared: dict[str, object] = {}
    rationale: str | None = None
    for pair in pairs:
        key, sep, value = pair.partition("=")
        key = key.strip()
        if not sep or not key:
            raise CtbError(f"set-metadata: {pair!r} is not KEY=VALUE (e.g. chain_length=2)", exit_code=2)
        parsed: object
        if key in LIST_FIELDS:
            parsed = [v.strip() for v in value.split(",") if v.strip()]
        else:
            parsed = value.strip() or None
        if key == "rationale":
            rationale = value.strip()
        elif key.startswith("declared."):
            declared[key.removeprefix("declared.")] = parsed if parsed != [] else None
        elif key in METADATA_FIELDS:
            fields[key] = parsed
        else:
            raise CtbError(
                f"set-metadata: unknown field {key!r} (expected one of: {', '.join(METADATA_FIELDS)})",
                exit_code=2,
            )
    return fields, declared, rationale


def cmd_init(args: argparse.Namespace) -> int:
    from ctbench.authoring.init_set import init_task_set

    result = init_task_set(args.dir, name=args.name, git=not args.no_git, commit=not args.no_commit)
    if args.json:
        emit_json(
            {
                "folder": str(result.folder),
                "canary": result.canary,
                "written": [str(p) for p in result.written],
                "commit": result.commit,
                "note": result.note,
            }
        )
        return 0
    print(f"new task set in {result.folder} ({len(result.written)} files)")
    print(f"canary: {result.canary}")
    if result.note:
        print(result.note + (f"; commit {result.commit[:10]}" if result.commit else ""))
    print(
        f"next: cd {result.folder} && ctb-author new   (or: ctb-author new --family rca --id RCA-001 "
        "--network example-lab --statement-file case.txt)"
    )
    return 0


def set_metadata_command(edit_session: Any, finish: Any) -> Any:
    """The handler, given the editing commands' session opener and finisher (``ctb-author``'s own)."""

    def cmd_set_metadata(args: argparse.Namespace) -> int:
        fields, declared, rationale = parse_assignments(args.assignments)
        ts, session, author = edit_session(args)
        if fields or declared:
            session.set_metadata(**fields, **({"declared": declared} if declared else {}))
        if rationale is not None:
            session.set_rationale(rationale)
        return int(
            finish(args, ts, session, author, "set-metadata", f"metadata: {', '.join(args.assignments)}")
        )

    return cmd_set_metadata


def add_desk_commands(sub: Any, editing_options: Any, edit_session: Any, finish: Any) -> None:
    """Register ``init`` and ``set-metadata``; the last three are ``ctb-author``'s editing helpers."""
    p = add_command(
        sub, "init", "create a new task set (own canary, taxonomy, schema, git)", cmd_init, INIT_DESCRIPTION
    )
    p.add_argument("dir", metavar="DIR", type=_path, help="folder of the new task set")
    p.add_argument("--name", help="the set's name in ctbench.yaml (default: the folder's name)")
    p.add_argument("--no-git", action="store_true", help="do not create a git repository")
    p.add_argument("--no-commit", action="store_true", help="create the repository but make no first commit")
    p.add_argument("--json", action="store_true", help="machine-readable result on stdout")

    p = add_command(
        sub,
        "set-metadata",
        "set metadata fields of a task (scripts, sealed sets)",
        set_metadata_command(edit_session, finish),
        SET_METADATA_DESCRIPTION,
    )
    p.add_argument("id", metavar="ID", help="task id")
    p.add_argument("assignments", nargs="+", metavar="KEY=VALUE", help="fields to set (see above)")
    editing_options(p)


def _path(text: str) -> Any:
    from pathlib import Path

    return Path(text)
