"""``ctb-eval harness install|list``: the pinned agent CLIs in ctbench's cache (see :mod:`.harnesses`)."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from ctbench.cli_support import add_command, emit_json

DESCRIPTION = """\
Install a pinned agent CLI into ctbench's cache, or list what is installed. The pins are in
ctbench/evaluate/harnesses.yaml; the cache is $CTBENCH_HARNESS_DIR, else
${XDG_CACHE_HOME:-~/.cache}/ctbench/harnesses/NAME/VERSION.

examples:
  ctb-eval harness install codex                 npm: @openai/codex at its pinned version
  ctb-eval harness install claude-code
  ctb-eval harness install hermes --version 0.19.0   a private venv (Hermes pins mcp 1.x)
  ctb-eval harness list --json
"""


def cmd_install(args: argparse.Namespace) -> int:
    from ctbench.evaluate.harnesses import install, spec

    s = spec(args.name)
    say = None if args.json else (lambda line: print(line, file=sys.stderr))
    found, seconds = install(args.name, args.version, force=args.force, say=say)
    if args.json:
        emit_json(
            {
                "name": found.name,
                "version": found.version,
                "executable": str(found.executable),
                "runtime": found.runtime,
                "seconds": round(seconds, 1),
                "requirement": s.requirement(found.version),
            }
        )
    elif seconds == 0.0:
        print(f"{found.name} {found.version} is already installed: {found.executable} ({found.runtime})")
    else:
        print(
            f"installed {found.name} {found.version} in {seconds:.0f}s: {found.executable} ({found.runtime})"
        )
    return 0


def cmd_list(args: argparse.Namespace) -> int:
    from ctbench.evaluate.harnesses import cache_root, find, specs

    rows: list[dict[str, Any]] = []
    for name, s in specs().items():
        found = find(name)
        rows.append(
            {
                "name": name,
                "pinned": s.version,
                "installed": found is not None,
                "version": found.version if found else None,
                "source": found.source if found else None,
                "executable": str(found.executable) if found else None,
                "runtime": found.runtime if found else None,
            }
        )
    if args.json:
        emit_json({"cache": str(cache_root()), "harnesses": rows})
        return 0
    print(f"cache: {cache_root()}")
    for r in rows:
        state = (
            f"{r['version']} ({r['source']}, {r['runtime']}) {r['executable']}"
            if r["installed"]
            else f"not installed: ctb-eval harness install {r['name']}"
        )
        print(f"  {r['name']:<12} pinned {r['pinned']:<9} {state}")
    return 0


def add_harness(sub: Any) -> None:
    def show_help(_args: argparse.Namespace) -> int:
        p.print_help()
        return 0

    p = add_command(
        sub,
        "harness",
        "install or list the pinned agent CLIs (codex, claude-code, hermes)",
        show_help,
        DESCRIPTION,
    )
    inner = p.add_subparsers(dest="harness_command", metavar="ACTION")
    i = add_command(inner, "install", "install a pinned agent CLI into ctbench's cache", cmd_install)
    i.add_argument("name", metavar="NAME", help="codex, claude-code or hermes")
    i.add_argument("--version", default=None, metavar="V", help="another version than the pinned one")
    i.add_argument("--force", action="store_true", help="install again even when already installed")
    i.add_argument("--json", action="store_true", help="JSON output")
    ls = add_command(inner, "list", "the pinned agent CLIs and what is installed", cmd_list)
    ls.add_argument("--json", action="store_true", help="JSON output")
