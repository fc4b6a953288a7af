"""``ctb-eval sweep SWEEP.yaml``: run a matrix of runs, then the report of all of them (see :mod:`.sweep`)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from ctbench.cli_support import add_command, emit_json

DESCRIPTION = """\
Run a harness x model x effort x trials matrix, one run folder per cell, then write the report of all
cells. Each cell is an ordinary `ctb-eval run` into OUT/<cell>; run the same command again to resume an
interrupted sweep: started cells are resumed (infrastructure errors run again), finished ones cost
nothing. The sweep file (YAML):

  name: harness-effort               # OUT defaults to runs/<name>
  tasks: tasks                       # task set; also select, trials, allow_unreviewed
  trials: 2
  common: {timeout: 900, concurrency: 4}
  cells:                             # list-valued keys multiply out
    - {agent: codex, model: gpt-5.5, base_url: https://api.openai.com/v1, reasoning_effort: [low, high]}
    - {agent: claude-code, model: claude-sonnet-5-5, reasoning_effort: [low, high]}
  report: [text, html, latex]        # written as OUT/report.txt, report.html, report.tex
  prices: prices.yaml                # optional (or --prices FILE): prices tokens in the report

Cell keys: agent, model, base_url, agent_cmd, timeout, retries, concurrency, max_rounds, sandbox,
sandbox_network, executor, ray_address, ray_cpus_per_attempt, reasoning_effort, temperature,
agent_args (a mapping, as --agent-arg), executor_options (a mapping, as --executor-option), name.

examples:
  ctb-eval sweep sweeps/table6.yaml
  ctb-eval sweep sweeps/table6.yaml --dry-run       list the cells and the run command of each
  ctb-eval sweep sweeps/table6.yaml --out runs/table6-rerun --json
"""

RunCommand = Callable[[Sequence[str]], int]


def cmd_sweep(args: argparse.Namespace) -> int:
    from ctbench.evaluate.sweep import expand, load_sweep, report_outputs, run_sweep

    path = Path(args.file)
    sweep = load_sweep(path)
    out = Path(args.out) if args.out else Path("runs") / sweep.name
    run_command: RunCommand = args.run_command
    cells = expand(sweep)
    outputs = list(report_outputs(sweep, out))  # checks the formats before anything runs
    prices = args.prices or sweep.prices
    if prices:  # and the price file: a broken one would only show once every cell had run
        from ctbench.evaluate.prices import prices_option

        prices_option(prices)
    if args.dry_run:
        rows = [
            {
                "cell": c.name,
                "folder": str(out / c.name),
                "argv": c.resume_argv(out / c.name)
                if (out / c.name / "run.yaml").is_file()
                else c.run_argv(sweep, out / c.name),
            }
            for c in cells
        ]
        if args.json:
            emit_json({"out": str(out), "cells": rows})
        else:
            for row in rows:
                print(f"{row['cell']}: ctb-eval {' '.join(row['argv'])}")
        return 0
    say = (lambda line: None) if args.json else (lambda line: print(line, file=sys.stderr))
    codes = run_sweep(sweep, out, run_command, source=path, say=say)
    folders = [str(out / c.name) for c, _ in codes]
    tasks = ["--tasks", sweep.tasks] if sweep.tasks else []
    tasks += ["--prices", prices] if prices else []
    written = []
    for fmt, file in outputs:
        code = run_command(["report", *folders, *tasks, "--format", fmt, "--out", str(file)])
        if code == 0:
            written.append(str(file))
    unfinished = [c.name for c, code in codes if code != 0]
    if args.json:
        emit_json(
            {
                "out": str(out),
                "cells": [{"cell": c.name, "folder": str(out / c.name), "exit": code} for c, code in codes],
                "reports": written,
                "complete": not unfinished,
            }
        )
    else:
        for name in written:
            print(f"report: {name}")
        if unfinished:
            print(
                f"sweep: {len(unfinished)} cell(s) ended with errors ({', '.join(unfinished)}); once the cause "
                f"is fixed, run `ctb-eval sweep {path}` again to finish them",
                file=sys.stderr,
            )
    return 1 if unfinished or len(written) < len(outputs) else 0


def add_sweep(sub: Any, run_command: RunCommand) -> None:
    """Register ``sweep``; ``run_command`` runs one ``ctb-eval`` command line in this process."""
    p = add_command(
        sub, "sweep", "run a matrix of runs (harness x model x effort x trials)", cmd_sweep, DESCRIPTION
    )
    p.add_argument("file", metavar="SWEEP.yaml", help="the sweep file")
    p.add_argument("--out", metavar="DIR", help="the sweep folder (default: runs/<name>)")
    p.add_argument("--dry-run", action="store_true", help="list the cells and their commands; run nothing")
    p.add_argument("--json", action="store_true", help="print the sweep summary as JSON")
    p.add_argument(
        "--prices",
        metavar="FILE",
        help="price file for the report (as `ctb-eval report --prices`); overrides the sweep file's `prices`",
    )
    p.set_defaults(run_command=run_command)


__all__ = ["add_sweep", "cmd_sweep"]
