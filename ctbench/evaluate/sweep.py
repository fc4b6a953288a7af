"""``ctb-eval sweep SWEEP.yaml``: a harness x model x effort x trials matrix, one run folder per cell.

A paper's results table is a matrix of runs; writing it as one file keeps every cell's settings in one
reviewed place and makes the whole table repeatable. A sweep file names the task set and the options
every cell shares, then a list of blocks; a block's list-valued keys multiply out:

```yaml
name: harness-effort          # the folder under runs/ unless --out is given
tasks: tasks
select: "RCA-00*"
trials: 2
allow_unreviewed: true
common: {timeout: 900, concurrency: 4, executor: local}
cells:
  - agent: codex
    model: gpt-5.5
    base_url: https://api.openai.com/v1
    reasoning_effort: [low, high]         # two cells
  - agent: claude-code
    model: [claude-sonnet-5-5, claude-opus-5]
    reasoning_effort: medium
report: [text, html, latex]
prices: prices.yaml           # optional: price the tokens of harnesses that report no cost
```

Each cell is an ordinary ``ctb-eval run`` into ``OUT/<cell>``, built from the same argument parser, so
every rule of a run (the gate, the sandbox, the run folder, retries) holds unchanged. A sweep is
resumable by running it again: a cell whose folder exists is resumed with ``--resume`` (and
``--retry-errors``, so cells that met an unavailable endpoint are finished), with the executor options
the sweep file gives it; a finished cell costs nothing. When every cell has run, the report of all cells
is written in each format named under ``report`` (``OUT/report.<ext>``), atomically.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from ctbench.errors import CtbError
from ctbench.yamlio import load_fast

SWEEP_FILE_COPY = "sweep.yaml"
"""The sweep file as it was run, copied into the sweep folder for the record."""

# Cell keys -> ``ctb-eval run`` options. Options of the agent itself go under ``agent_args`` (or, for the
# common ``reasoning_effort`` and ``temperature``, as keys of their own), as --agent-arg KEY=VALUE.
RUN_FLAGS: dict[str, str] = {
    "agent": "--agent",
    "model": "--model",
    "base_url": "--base-url",
    "agent_cmd": "--agent-cmd",
    "timeout": "--timeout",
    "retries": "--retries",
    "concurrency": "--concurrency",
    "max_rounds": "--max-rounds",
    "sandbox": "--sandbox",
    "sandbox_network": "--sandbox-network",
    "executor": "--executor",
    "ray_address": "--ray-address",
    "ray_cpus_per_attempt": "--ray-cpus-per-attempt",
}
AGENT_ARG_KEYS = ("reasoning_effort", "temperature")
"""Agent options common enough across harnesses to be keys of a cell (they vary in sweeps)."""
NAME_KEYS = ("agent", "model", "reasoning_effort", "temperature")
"""What a cell's folder name is made of, in this order (only the keys the cell gives)."""


class SweepFile(BaseModel):
    """A sweep file, checked before anything runs."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(min_length=1)
    tasks: str | None = None
    select: str | None = None
    trials: int = Field(default=1, ge=1)
    allow_unreviewed: bool = False
    common: dict[str, Any] = Field(default_factory=dict)
    cells: list[dict[str, Any]] = Field(min_length=1)
    report: list[str] = Field(default_factory=lambda: ["text"])
    prices: str | None = None
    """A price file for the report (``--prices FILE``), relative to the working directory like ``tasks``."""

    @field_validator("cells")
    @classmethod
    def _known_keys(cls, cells: list[dict[str, Any]]) -> list[dict[str, Any]]:
        known = {*RUN_FLAGS, *AGENT_ARG_KEYS, "agent_args", "executor_options", "name"}
        for i, block in enumerate(cells, start=1):
            unknown = sorted(set(block) - known)
            if unknown:
                raise ValueError(
                    f"block {i}: unknown key(s) {', '.join(unknown)} (known: {', '.join(sorted(known))})"
                )
            if "agent" not in block:
                raise ValueError(f"block {i}: names no agent")
        return cells


class Cell(BaseModel):
    """One cell of the matrix: its folder name and its settings."""

    name: str
    settings: dict[str, Any]

    def run_argv(self, sweep: SweepFile, out: Path) -> list[str]:
        """``ctb-eval run`` arguments that start this cell in ``out``."""
        argv = ["run", "--out", str(out), "--progress", "plain", "--no-score"]
        if sweep.tasks:
            argv += ["--tasks", sweep.tasks]
        if sweep.select:
            argv += ["--select", sweep.select]
        if sweep.trials > 1:
            argv += ["--trials", str(sweep.trials)]
        if sweep.allow_unreviewed:
            argv.append("--allow-unreviewed")
        for key, flag in RUN_FLAGS.items():
            if self.settings.get(key) is not None:
                argv += [flag, str(self.settings[key])]
        for key, value in self._agent_args().items():
            argv += ["--agent-arg", f"{key}={value}"]
        return argv + self._executor_argv()

    def resume_argv(self, out: Path) -> list[str]:
        """``ctb-eval run --resume`` arguments that finish this cell: infrastructure errors are run
        again, and the executor's options are given again (run.yaml keeps them, secrets redacted; the
        sweep file's, perhaps edited since, win)."""
        argv = ["run", "--resume", str(out), "--retry-errors", "--progress", "plain", "--no-score"]
        for key in ("executor", "ray_address", "ray_cpus_per_attempt", "concurrency"):
            if self.settings.get(key) is not None:
                argv += [RUN_FLAGS[key], str(self.settings[key])]
        return argv + self._executor_argv()

    def _agent_args(self) -> dict[str, Any]:
        args = dict(self.settings.get("agent_args") or {})
        for key in AGENT_ARG_KEYS:
            if self.settings.get(key) is not None:
                args[key] = self.settings[key]
        return args

    def _executor_argv(self) -> list[str]:
        argv: list[str] = []
        for key, value in (self.settings.get("executor_options") or {}).items():
            argv += ["--executor-option", f"{key}={value}"]
        return argv


def _slug(value: Any) -> str:
    return re.sub(r"[^A-Za-z0-9._]+", "-", str(value)).strip("-.") or "x"


def expand(sweep: SweepFile) -> list[Cell]:
    """Every cell of the sweep, in file order; list-valued keys of a block multiply out."""
    cells: list[Cell] = []
    for block in sweep.cells:
        merged = {**sweep.common, **block}
        axes = [k for k, v in merged.items() if isinstance(v, list) and k not in ("agent_args",)]
        for values in itertools.product(*(merged[k] for k in axes)) if axes else [()]:
            settings = {**merged, **dict(zip(axes, values, strict=True))}
            name = settings.pop("name", None) or "-".join(
                _slug(settings[k]) for k in NAME_KEYS if settings.get(k) is not None
            )
            cells.append(Cell(name=str(name), settings=settings))
    seen: dict[str, int] = {}
    for cell in cells:
        seen[cell.name] = seen.get(cell.name, 0) + 1
    twice = sorted(n for n, k in seen.items() if k > 1)
    if twice:
        raise CtbError(
            f"two cells would share a folder: {', '.join(twice)}; give the blocks a 'name' or vary a key "
            f"that names cells ({', '.join(NAME_KEYS)})"
        )
    return cells


def load_sweep(path: Path) -> SweepFile:
    """The sweep file, checked; errors name the file and the key, never a traceback."""
    if not path.is_file():
        raise CtbError(f"{path}: no such sweep file")
    data = load_fast(path)
    if not isinstance(data, Mapping):
        raise CtbError(f"{path}: a sweep file is a YAML mapping (name, cells, ...)")
    try:
        return SweepFile.model_validate(dict(data))
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in err['loc']) or 'file'}: {err['msg']}" for err in exc.errors()
        )
        raise CtbError(f"{path}: {problems}") from None


RunCommand = Callable[[Sequence[str]], int]
"""Runs one ``ctb-eval`` command line in this process and returns its exit code."""


def run_sweep(
    sweep: SweepFile,
    out: Path,
    run: RunCommand,
    *,
    source: Path | None = None,
    say: Callable[[str], None] = lambda _line: None,
) -> list[tuple[Cell, int]]:
    """Run or resume every cell into ``out/<cell>``; returns each cell's exit code."""
    from ctbench.yamlio import atomic_write_text

    cells = expand(sweep)
    out.mkdir(parents=True, exist_ok=True)
    if source is not None:
        atomic_write_text(out / SWEEP_FILE_COPY, source.read_text(encoding="utf-8"))
    codes: list[tuple[Cell, int]] = []
    for i, cell in enumerate(cells, start=1):
        folder = out / cell.name
        resume = (folder / "run.yaml").is_file()
        say(f"sweep: cell {i}/{len(cells)} {cell.name}: {'resuming' if resume else 'starting'} in {folder}")
        argv = cell.resume_argv(folder) if resume else cell.run_argv(sweep, folder)
        codes.append((cell, run(argv)))
    return codes


def cell_folders(sweep: SweepFile, out: Path) -> list[Path]:
    return [out / c.name for c in expand(sweep)]


def report_outputs(sweep: SweepFile, out: Path) -> Iterable[tuple[str, Path]]:
    """(format, file) of each report the sweep writes when all its cells have run."""
    from ctbench.evaluate.report_formats import REPORT_FORMATS

    extensions = {"text": "txt", "md": "md", "latex": "tex", "html": "html", "json": "json"}
    for fmt in sweep.report:
        if fmt not in REPORT_FORMATS:
            raise CtbError(f"report: unknown format {fmt!r} (formats: {', '.join(REPORT_FORMATS)})")
        yield fmt, out / f"report.{extensions.get(fmt, fmt)}"


__all__ = ["Cell", "SweepFile", "cell_folders", "expand", "load_sweep", "report_outputs", "run_sweep"]
