"""Git without what a repository's own configuration would run (issue 25, item 5).

A task set is often handed over as a folder with its ``.git``: whoever made it wrote its
``.git/config`` and ``.git/hooks``. Plain git honours them: ``core.fsmonitor`` runs a command on
every ``git status``, a ``filter.<x>.clean`` named by ``.gitattributes`` on every diff, hooks on every
commit, ``core.sshCommand`` on every fetch or push. ``ctb-eval run`` merely asking whether the task
set is dirty ran the set's fsmonitor command six times.

:func:`git_env` gives the environment every git call of ctbench runs with, GitPython or a subprocess
(:func:`harden` applies it to a GitPython ``Repo``). It uses git's own ``GIT_CONFIG_COUNT`` /
``GIT_CONFIG_KEY_<n>`` / ``GIT_CONFIG_VALUE_<n>`` (git 2.31), which rank above every config file:

- ``core.fsmonitor`` and ``core.hooksPath`` are always set: to the user's own (global or system)
  value when there is one, else off (``false``; ``/dev/null``, so ``.git/hooks`` is never run);
- every other setting that names a program (:data:`EXECUTING`) and that the repository's own config
  sets - in ``.git/config``, a worktree config or a file they include - is reset, then given the
  user's own values again (a global ``core.sshCommand`` or credential helper still works);
- ``protocol.ext.allow=never``: no ``ext::`` remote URL runs its command.

Reading the configuration (``git config --list``) runs nothing. The user's own settings are theirs
to trust; the repository's are not.
"""

from __future__ import annotations

import os
import re
import subprocess
from collections.abc import Mapping
from pathlib import Path
from typing import Any

EXECUTING = re.compile(
    r"""^(
        core\.(sshcommand|gitproxy|askpass|pager|editor|alternaterefscommand)
      | sequence\.editor | diff\.external | diff\.guitool | merge\.guitool
      | pager\..+ | credential\.(.+\.)?helper
      | gpg\.program | gpg\.[^.]+\.program | gpg\.ssh\.defaultkeycommand
      | filter\..+\.(clean|smudge|process)
      | diff\..+\.(command|textconv)
      | merge\..+\.driver
      | difftool\..+\.cmd | mergetool\..+\.cmd
      | remote\..+\.(uploadpack|receivepack|vcs)
      | uploadpack\.packobjectshook
      | sendemail\.(smtpserver|tocmd|cccmd)
    )$""",
    re.IGNORECASE | re.VERBOSE,
)
"""Settings whose value git runs as a program (checked against the repository's own settings)."""

ALWAYS = {"core.fsmonitor": "false", "core.hookspath": "/dev/null"}
"""Set on every call: the user's value if they have one, else these (fsmonitor off, no hooks)."""
FIXED = {"protocol.ext.allow": "never"}
DEFAULTS = {
    "core.sshcommand": "ssh",
    "gpg.program": "gpg",
    "gpg.openpgp.program": "gpg",
    "gpg.ssh.program": "ssh-keygen",
    "gpg.x509.program": "gpgsm",
    "core.pager": "cat",
}
"""What a planted setting is reset to where git has no empty "off" value: git's own default."""
REPO_SCOPES = ("local", "worktree")


def _config(root: Path, env: Mapping[str, str]) -> list[tuple[str, str, str]]:
    """``(scope, key, value)`` of every setting git sees in ``root`` (includes followed), in order."""
    try:
        proc = subprocess.run(
            ["git", "-C", str(root), "config", "--list", "--show-scope", "--includes", "-z"],
            capture_output=True,
            env={**env, "GIT_OPTIONAL_LOCKS": "0"},
            stdin=subprocess.DEVNULL,
            timeout=30,
        )
    except (OSError, subprocess.TimeoutExpired):
        return []
    out: list[tuple[str, str, str]] = []
    fields = proc.stdout.decode("utf-8", errors="replace").split("\0")  # scope NUL key LF value NUL
    for scope, entry in zip(fields[0::2], fields[1::2], strict=False):
        key, _, value = entry.partition("\n")
        out.append((scope, key.lower(), value))
    return out


def overrides(root: Path, env: Mapping[str, str] | None = None) -> list[tuple[str, str]]:
    """The ``(key, value)`` settings that take repository-controlled execution away in ``root``."""
    base = dict(os.environ if env is None else env)
    settings = _config(root, base)
    own: dict[str, list[str]] = {}
    for scope, key, value in settings:
        if scope not in REPO_SCOPES and scope != "command":
            own.setdefault(key, []).append(value)
    out: list[tuple[str, str]] = []
    for key, off in ALWAYS.items():
        out.append((key, own.get(key, [off])[-1]))
    planted = sorted({key for scope, key, _ in settings if scope in REPO_SCOPES and EXECUTING.match(key)})
    for key in planted:
        # an empty value resets a list (credential.helper) or turns the program off; where git has no
        # "off" (ssh, the signing programs) git's own default program is named
        out.append((key, DEFAULTS.get(key, "")))
        out += [(key, value) for value in own.get(key, [])]
    out += list(FIXED.items())
    return out


def git_env(root: Path, env: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment (``env``, default the process's) for git in ``root``, with :func:`overrides`
    appended to any ``GIT_CONFIG_COUNT`` settings already there."""
    out = dict(os.environ if env is None else env)
    try:
        n = int(out.get("GIT_CONFIG_COUNT", "0"))
    except ValueError:
        n = 0
    for key, value in overrides(root, out):
        out[f"GIT_CONFIG_KEY_{n}"] = key
        out[f"GIT_CONFIG_VALUE_{n}"] = value
        n += 1
    out["GIT_CONFIG_COUNT"] = str(n)
    return out


def harden(repo: Any) -> Any:
    """A GitPython ``Repo`` whose every git command runs with :func:`git_env` (returns it)."""
    root = Path(repo.working_tree_dir or repo.git_dir)
    env = git_env(root)
    repo.git.update_environment(**{k: v for k, v in env.items() if k.startswith("GIT_CONFIG_")})
    return repo


__all__ = ["EXECUTING", "git_env", "harden", "overrides"]
