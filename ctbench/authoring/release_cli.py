"""``ctb-author release`` and ``ctb-author import-release``: the command-line face of the release."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from ctbench.cli_support import add_command, emit_json

RELEASE_DESCRIPTION = """\
Publish the retained tasks as a dataset people can load with Hugging Face `datasets`, cite by
version and hash, and gate.

Only retained tasks go in: approved, unchanged since their approval and valid (the run gate's
rule); the others are listed with their reason, in the output and in RELEASE.yaml. OUT gets the
public release (dataset card README.md, RELEASE.yaml manifest, parquet configs 'tasks' and
'networks' with split 'test', the same rows as JSON lines, the set's ctbench.yaml and taxonomy);
GOLD_DIR gets the gold (answers, golden actions, metadata) for a private, gated repository. The
gold is never written under OUT, and the two folders may not overlap. Both appear complete or not
at all; an existing non-empty folder is refused unless --replace.

examples:
  ctb-author release 1.0.0 --out release/ --gold-out release-gold/ --license cc-by-4.0
  ctb-author release 0.1.0-seed --tasks tasks --out rel/ --gold-out gold/ --license cc-by-4.0 --allow-unreviewed
  python -c "import datasets; print(datasets.load_dataset('release', 'tasks', split='test'))"
"""

IMPORT_DESCRIPTION = """\
Rebuild task folders from a release folder (and its gold), with the content hashes it published.

The result is a task set with the release's RELEASE.yaml at its root: `ctb-eval run --tasks OUT`
runs the released tasks (the gate admits a task whose content hash equals the published one) and
records the release version and manifest hash in run.yaml. Without --gold the tasks have no
hidden part: agents can be run, but nothing can be scored.

examples:
  ctb-author import-release release/ --gold release-gold/ --out released-tasks/
  ctb-eval run --tasks released-tasks/ --agent oracle
"""


def _say(msg: str) -> None:
    print(f"ctb-author release: {msg}", file=sys.stderr)


def cmd_release(args: argparse.Namespace) -> int:
    from ctbench.authoring.release import ReleaseOptions, build_release
    from ctbench.store import TaskSet

    ts = TaskSet.open(args.tasks, identity=args.identity)
    options = ReleaseOptions(
        version=args.version,
        license=args.license,
        allow_unreviewed=args.allow_unreviewed,
        replace=args.replace,
        pretty_name=args.pretty_name,
        seal_to=args.seal_to or [],
    )
    result = build_release(
        ts,
        Path(args.out),
        Path(args.gold_out) if args.gold_out else None,
        options,
        progress=None if args.json else _say,
    )
    if args.json:
        emit_json(result.to_json())
        return 0
    m = result.manifest
    c = m.counts["by_family"]
    print(
        f"release {m.version}: {len(m.tasks)} task(s) ({c['rca']} rca, {c['path']} path"
        + "".join(f", {n} {f}" for f, n in c.items() if f not in ("rca", "path", "topology") and n)
        + "), "
        f"{m.counts['recordings']} recordings -> {result.out}"
    )
    if result.gold_out:
        print(f"gold -> {result.gold_out} (keep it private)")
    if options.seal_to:
        print(f"gold sealed to {len(set(options.seal_to))} age key(s) in {result.out}/sealed/")
    if m.excluded:
        print(f"left out {len(m.excluded)} task(s):")
        for e in m.excluded:
            print(f"  {e.id}: {e.reason}")
    for w in result.warnings:
        print(f"warning: {w}", file=sys.stderr)
    return 0


def cmd_import_release(args: argparse.Namespace) -> int:
    from ctbench.release_import import import_release

    result = import_release(
        Path(args.folder),
        Path(args.out),
        Path(args.gold) if args.gold else None,
        identity=Path(args.identity) if args.identity else None,
    )
    if args.json:
        emit_json(result.to_json())
        return 0
    gold = "with its gold" if result.with_gold else "without gold (runs cannot be scored)"
    print(f"release {result.manifest.version}: {len(result.tasks)} task(s) {gold} -> {result.out}")
    return 0


def add_release_commands(sub: Any) -> None:
    p = add_command(
        sub,
        "release",
        "publish the retained tasks as a dataset (parquet, card, manifest; gold apart)",
        cmd_release,
        description=RELEASE_DESCRIPTION,
    )
    p.add_argument("version", metavar="VERSION", help="release version, e.g. 1.0.0")
    p.add_argument("--out", required=True, metavar="DIR", help="the public release folder (new or empty)")
    p.add_argument("--gold-out", metavar="GOLD_DIR", help="where the gold goes (a private repository)")
    p.add_argument(
        "--seal-to",
        action="append",
        metavar="AGE_KEY",
        help="also (or instead) put the gold in the public folder sealed to this age public key "
        "(config 'sealed'; repeatable)",
    )
    p.add_argument(
        "--license", required=True, metavar="ID", help="licence of the data, as the Hub names it (cc-by-4.0)"
    )
    p.add_argument(
        "--pretty-name", metavar="TEXT", help="the dataset's display name (default: set name + version)"
    )
    p.add_argument(
        "--allow-unreviewed",
        action="store_true",
        help="release tasks that are not approved too (said in RELEASE.yaml and the card)",
    )
    p.add_argument("--replace", action="store_true", help="overwrite non-empty --out and --gold-out folders")
    p.add_argument(
        "--identity", metavar="FILE", help="age identity to open sealed gold ($CTBENCH_AGE_IDENTITY)"
    )
    p.add_argument("--json", action="store_true", help="machine-readable summary on stdout")
    p.add_argument("--tasks", metavar="DIR", default=argparse.SUPPRESS, help="task set folder")

    p = add_command(
        sub,
        "import-release",
        "rebuild task folders from a release (hashes checked)",
        cmd_import_release,
        description=IMPORT_DESCRIPTION,
    )
    p.add_argument("folder", metavar="DIR", help="the public release folder")
    p.add_argument("--gold", metavar="GOLD_DIR", help="the release's gold folder")
    p.add_argument(
        "--identity",
        metavar="FILE",
        help="age identity opening the release's sealed gold, when no --gold ($CTBENCH_AGE_IDENTITY)",
    )
    p.add_argument("--out", required=True, metavar="DIR", help="the task set to create (new or empty)")
    p.add_argument("--json", action="store_true", help="machine-readable summary on stdout")
