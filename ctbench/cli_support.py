"""Shared plumbing for the four console scripts: argument parsing, error reporting, JSON output.

Every command turns a :class:`~ctbench.errors.CtbError` into one clear line on stderr and an exit
code; nothing reaches the user as a traceback unless ``CTBENCH_DEBUG=1`` is set.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Callable, Sequence
from typing import Any

from ctbench.errors import CtbError
from ctbench.safetext import visible

Handler = Callable[[argparse.Namespace], int]


class HelpFormatter(argparse.RawDescriptionHelpFormatter):
    """Keeps the hand-wrapped examples in descriptions intact."""


def build_parser(prog: str, description: str) -> tuple[argparse.ArgumentParser, Any]:
    parser = argparse.ArgumentParser(prog=prog, description=description, formatter_class=HelpFormatter)
    from ctbench import __version__

    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    return parser, sub


def add_command(
    sub: Any, name: str, help_text: str, handler: Handler, description: str | None = None
) -> argparse.ArgumentParser:
    p = sub.add_parser(
        name, help=help_text, description=description or help_text, formatter_class=HelpFormatter
    )
    p.set_defaults(handler=handler)
    return p


def run(parser: argparse.ArgumentParser, argv: Sequence[str] | None, default: Handler | None = None) -> int:
    """Parse, dispatch, and convert errors to messages. Returns the process exit code."""
    args = parser.parse_args(argv)
    handler: Handler | None = getattr(args, "handler", None) or default
    if handler is None:
        parser.print_help()
        return 0
    try:
        return handler(args)
    except CtbError as exc:
        print(f"{parser.prog}: {visible(str(exc), keep_newlines=True)}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        print(f"{parser.prog}: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0
    except Exception as exc:  # last resort: a message, not a traceback
        if os.environ.get("CTBENCH_DEBUG"):
            raise
        print(
            f"{parser.prog}: internal error: {type(exc).__name__}: {visible(str(exc))} "
            "(set CTBENCH_DEBUG=1 for the traceback)",
            file=sys.stderr,
        )
        return 3


def emit_json(data: Any) -> None:
    json.dump(data, sys.stdout, indent=2, ensure_ascii=False, sort_keys=False)
    sys.stdout.write("\n")
