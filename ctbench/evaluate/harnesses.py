"""Pinned agent CLIs (Codex, Claude Code, Hermes): where they are installed, which version, how to install.

A harness is installed per version into its own folder of a cache,
``${CTBENCH_HARNESS_DIR:-${XDG_CACHE_HOME:-~/.cache}/ctbench/harnesses}/<name>/<version>/``, so that two
versions can sit side by side and a run can name exactly the one it used. The pins live in
``harnesses.yaml`` beside this module and nowhere else.

An install is complete only once its ``installed.json`` exists (written last, atomically): an install
killed half-way is found as "not installed" and the next ``ctb-eval harness install`` starts that
folder again, instead of running a half-unpacked CLI. A CLI on ``PATH`` is used when the cache has
none, with the version it reports itself.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from ctbench.errors import CtbError

MARKER = "installed.json"
VERSION_TIMEOUT_S = 15.0


class HarnessSpec(BaseModel):
    """One entry of harnesses.yaml."""

    model_config = ConfigDict(extra="forbid")

    name: str
    kind: Literal["npm", "pip"]
    package: str
    version: str
    executable: str
    runtime: Literal["node", "python"]
    description: str = ""
    extras: list[str] = Field(default_factory=list)

    def requirement(self, version: str | None = None) -> str:
        v = version or self.version
        if self.kind == "npm":
            return f"{self.package}@{v}"
        extras = f"[{','.join(self.extras)}]" if self.extras else ""
        return f"{self.package}{extras}=={v}"


@cache
def specs() -> dict[str, HarnessSpec]:
    """The pinned harnesses, by name (read once from the bundled harnesses.yaml)."""
    from ctbench.yamlio import load_fast

    data = load_fast(Path(__file__).with_name("harnesses.yaml"))
    return {name: HarnessSpec(name=name, **entry) for name, entry in data.items()}


def spec(name: str) -> HarnessSpec:
    try:
        return specs()[name]
    except KeyError:
        raise CtbError(
            f"unknown harness {name!r}; choose one of: {', '.join(specs())}", exit_code=2
        ) from None


def cache_root(env: dict[str, str] | None = None) -> Path:
    """The harness cache: ``$CTBENCH_HARNESS_DIR``, else ``$XDG_CACHE_HOME/ctbench/harnesses``."""
    env = dict(os.environ) if env is None else env
    if env.get("CTBENCH_HARNESS_DIR"):
        return Path(env["CTBENCH_HARNESS_DIR"]).expanduser()
    base = Path(env["XDG_CACHE_HOME"]).expanduser() if env.get("XDG_CACHE_HOME") else Path.home() / ".cache"
    return base / "ctbench" / "harnesses"


def install_dir(name: str, version: str, root: Path | None = None) -> Path:
    return (root or cache_root()) / name / version


def _bin_in(s: HarnessSpec, folder: Path) -> Path:
    return folder / ("node_modules/.bin" if s.kind == "npm" else "venv/bin") / s.executable


@dataclass(frozen=True)
class Installed:
    """A harness that can be started: its executable, version and what it runs on."""

    name: str
    version: str
    executable: Path
    source: Literal["cache", "path"]
    runtime: str
    """e.g. ``node v20.20.2`` or ``python 3.11.7``; ``node (not found)`` when the runtime is missing."""
    folder: Path | None = None


def _run_version(argv: list[str]) -> str | None:
    try:
        out = subprocess.run(
            argv, capture_output=True, text=True, timeout=VERSION_TIMEOUT_S, stdin=subprocess.DEVNULL
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    text = (out.stdout or out.stderr).strip()
    return text.splitlines()[0].strip() if out.returncode == 0 and text else None


@cache
def node_version() -> str | None:
    node = shutil.which("node")
    return _run_version([node, "--version"]) if node else None


def _venv_python(folder: Path) -> str:
    """The Python of an install's venv, from pyvenv.cfg (no process started)."""
    try:
        for line in (folder / "venv" / "pyvenv.cfg").read_text(encoding="utf-8").splitlines():
            key, _, value = line.partition("=")
            if key.strip() in ("version", "version_info"):
                return f"python {value.strip()}"
    except OSError:
        pass
    return "python (unknown)"


def _runtime(s: HarnessSpec, folder: Path | None) -> str:
    if s.runtime == "node":
        v = node_version()
        return f"node {v}" if v else "node (not found on PATH)"
    return _venv_python(folder) if folder is not None else f"python {sys.version.split()[0]}"


def _version_word(text: str) -> str:
    """``2.1.328`` from ``2.1.328 (Claude Code)``, ``0.169.0`` from ``codex-cli 0.169.0``."""
    for word in text.replace("v", " ").split():
        if word[:1].isdigit():
            return word
    return text


def find(name: str, version: str | None = None, *, root: Path | None = None) -> Installed | None:
    """The installed harness: the pinned (or given) version from the cache, else one on PATH."""
    s = spec(name)
    wanted = version or s.version
    folder = install_dir(name, wanted, root)
    if (folder / MARKER).is_file() and _bin_in(s, folder).exists():
        return Installed(name, wanted, _bin_in(s, folder), "cache", _runtime(s, folder), folder)
    on_path = shutil.which(s.executable)
    if on_path is None:
        return None
    reported = _run_version([on_path, "--version"])
    if reported is None:
        return None
    found = _version_word(reported)
    if version is not None and found != version:
        return None
    return Installed(name, found, Path(on_path), "path", _runtime(s, None))


def installed_versions(name: str, root: Path | None = None) -> list[str]:
    """Every complete install of ``name`` in the cache."""
    base = (root or cache_root()) / name
    if not base.is_dir():
        return []
    return sorted(p.name for p in base.iterdir() if (p / MARKER).is_file())


# --------------------------------------------------------------------------- installing


def install_commands(s: HarnessSpec, folder: Path, version: str | None = None) -> list[list[str]]:
    """The commands an install runs, in order (also what the docs and CI print)."""
    if s.kind == "npm":
        npm = shutil.which("npm") or "npm"
        return [
            [
                npm,
                "install",
                "--prefix",
                str(folder),
                "--no-audit",
                "--no-fund",
                "--no-save",
                "--loglevel=error",
                s.requirement(version),
            ]
        ]
    return [
        [sys.executable, "-m", "venv", str(folder / "venv")],
        [
            str(folder / "venv" / "bin" / "python"),
            "-m",
            "pip",
            "install",
            "--quiet",
            "--disable-pip-version-check",
            s.requirement(version),
        ],
    ]


def install(
    name: str,
    version: str | None = None,
    *,
    root: Path | None = None,
    force: bool = False,
    say: Callable[[str], None] | None = None,
) -> tuple[Installed, float]:
    """Install ``name`` (pinned version unless given) into the cache; returns it and the seconds taken.

    Already complete: nothing runs (unless ``force``). A folder left by an interrupted install is
    removed first, so a retry never builds on half-written files.
    """
    from ctbench.yamlio import atomic_write_text

    s = spec(name)
    v = version or s.version
    folder = install_dir(name, v, root)
    if (folder / MARKER).is_file() and not force:
        found = find(name, v, root=root)
        if found is not None and found.source == "cache":
            return found, 0.0
    if s.kind == "npm" and shutil.which("npm") is None:
        raise CtbError(f"installing {name} needs npm (and Node.js) on PATH, e.g. apt-get install nodejs npm")
    if folder.exists():
        shutil.rmtree(folder)
    folder.mkdir(parents=True)
    started = time.monotonic()
    for argv in install_commands(s, folder, v):
        if say is not None:
            say("$ " + " ".join(argv))
        try:
            done = subprocess.run(argv, capture_output=True, text=True, stdin=subprocess.DEVNULL)
        except OSError as exc:
            raise CtbError(f"cannot run {argv[0]}: {exc.strerror or exc}") from None
        if done.returncode != 0:
            tail = " ".join((done.stderr or done.stdout).strip().splitlines()[-3:])
            raise CtbError(f"installing {s.requirement(v)} failed (exit {done.returncode}): {tail[:400]}")
    seconds = time.monotonic() - started
    if not _bin_in(s, folder).exists():
        raise CtbError(f"installed {s.requirement(v)} but {_bin_in(s, folder)} is missing")
    atomic_write_text(
        folder / MARKER,
        json.dumps(
            {
                "name": name,
                "package": s.package,
                "version": v,
                "requirement": s.requirement(v),
                "seconds": round(seconds, 1),
                "installed": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            },
            indent=2,
        )
        + "\n",
    )
    found = find(name, v, root=root)
    assert found is not None
    return found, seconds


__all__ = [
    "HarnessSpec",
    "Installed",
    "cache_root",
    "find",
    "install",
    "install_commands",
    "install_dir",
    "installed_versions",
    "spec",
    "specs",
]
