"""Signed review steps, verified: every commit that wrote a task's review record was signed by the person it names.

A review record is only as trustworthy as whoever could write it. When the reviewers file lists SSH
signing keys (``ssh:`` under ``people:``), every review step is a commit signed with its actor's key
(git's own SSH signing), and this module checks, for one task, every commit that ever touched its
``reviews/`` folder:

- it is a review step of this task (``Ctbench-Task`` and a review ``Ctbench-Action`` trailer), not a
  hand-made commit;
- its signature verifies against the keys of the reviewers file (``git log`` with
  ``gpg.ssh.allowedSignersFile`` generated from it into a temporary file, one principal per person
  id), and the signer is the person the step names (``Ctbench-Actor``);
- its git author identity is that same person's;

and, read from a working tree, that the record files and ``task.yaml`` carry no uncommitted change
(what is read is what the signed steps wrote). One offending commit is enough to refuse the task; the
refusal names it. The audit, ``ctb-review status`` and the run gate all ask this module, so a record
edited by hand, a step left unsigned, a step signed with someone else's key and a step naming
someone else are refused alike.

Every git call runs with :func:`ctbench.gitsafe.git_env` and pins ``gpg.ssh.program`` to
``ssh-keygen``: verifying someone else's repository never runs a program its configuration names.
"""

from __future__ import annotations

import os
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from ctbench.commits import TRAILER_PREFIX, ReviewAction
from ctbench.people import People

_FORMAT = "%H%x1f%G?%x1f%GS%x1f%GK%x1f%an%x1f%ae%x1f%s%x1f%(trailers:only=true,unfold=true)%x1e"
_REVIEW_ACTIONS = {a.value for a in ReviewAction}
_ACTOR_BY_ACTION = {
    "submit": "author",
    "revise": "author",
    "respond": "author",
    "resubmit": "author",
    "blind": "reviewer",
    "reveal": "reviewer",
    "verdict": "reviewer",
    "approve": "reviewer",
    "request-revision": "reviewer",
    "discard": "discarded-by",
    "merge": "merged-by",
    "seal": "sealed-by",
    "unseal": "unsealed-by",
}
"""Older steps (before ``Ctbench-Actor``): the trailer that names who took them."""
_SIG_WORDS = {
    "N": "unsigned",
    "B": "its signature is bad (the commit was changed after it was signed)",
    "X": "signed with an expired signature",
    "Y": "signed with an expired key",
    "R": "signed with a revoked key",
}


@dataclass
class StepsVerdict:
    """What the signature check of one task found (``signed`` False: the set lists no signing keys)."""

    signed: bool
    steps: int = 0
    problems: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems

    def summary(self) -> str:
        if not self.signed:
            return "review steps unsigned (reviewers.yaml lists no SSH signing keys): who took each step rests on honour"
        if self.ok:
            return f"every review step's signature verified ({self.steps} signed step(s), each by the person it names)"
        return self.problems[0]


def _trailers(text: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for line in text.splitlines():
        key, sep, value = line.partition(":")
        if sep and key.startswith(TRAILER_PREFIX):
            out[key[len(TRAILER_PREFIX) :].lower()] = value.strip()
    return out


def _git(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    from ctbench.gitsafe import git_env

    return subprocess.run(
        ["git", "-C", str(root), *args],
        capture_output=True,
        text=True,
        env=git_env(root, os.environ),
        stdin=subprocess.DEVNULL,
        timeout=120,
    )


def verify_steps(root: Path, rev: str | None, task_rel: str, task_id: str, people: People) -> StepsVerdict:
    """Check every commit that touched ``task_rel/reviews`` up to ``rev`` (None: HEAD and the working tree)."""
    if not people.signing:
        return StepsVerdict(signed=False)
    verdict = StepsVerdict(signed=True)
    reviews = f"{task_rel}/reviews"
    with tempfile.TemporaryDirectory(prefix="ctb-signers-") as tmp:
        signers = Path(tmp) / "allowed_signers"
        signers.write_text(people.allowed_signers(), encoding="utf-8")
        proc = _git(
            root,
            "-c",
            f"gpg.ssh.allowedSignersFile={signers}",
            "-c",
            "gpg.ssh.program=ssh-keygen",
            "log",
            f"--format={_FORMAT}",
            rev or "HEAD",
            "--",
            reviews,
        )
    if proc.returncode != 0:
        verdict.problems.append(
            f"cannot read the history of {reviews}: {proc.stderr.strip() or proc.returncode}"
        )
        return verdict
    for chunk in proc.stdout.split("\x1e"):
        parts = chunk.strip("\n").split("\x1f")
        if len(parts) < 8:
            continue
        sha, status, signer, key, name, email, subject, trailer_text = parts[:8]
        verdict.steps += 1
        where = f"commit {sha[:10]} ({subject[:60]})"
        why = _step_problem(status, signer, key, name, email, _trailers(trailer_text), task_id, people)
        if why:
            verdict.problems.append(f"{where}: {why}")
    if rev is None:
        dirty = _git(root, "status", "--porcelain", "--", reviews, f"{task_rel}/task.yaml")
        if dirty.stdout.strip():
            verdict.problems.append(
                f"uncommitted changes to {reviews} or task.yaml: the record read is not what the signed "
                "steps wrote"
            )
    return verdict


def _step_problem(
    status: str,
    signer: str,
    key: str,
    name: str,
    email: str,
    trailers: dict[str, str],
    task_id: str,
    people: People,
) -> str | None:
    action = trailers.get("action")
    if trailers.get("task") != task_id or action not in _REVIEW_ACTIONS:
        sig = "signed" if status in ("G", "U") else _SIG_WORDS.get(status, "not verified")
        return f"not a review step of {task_id} ({sig}): the record was changed outside ctb-review"
    actor = trailers.get("actor") or trailers.get(_ACTOR_BY_ACTION.get(action or "", ""), "")
    if not actor:
        return f"a {action} step that names nobody (no Ctbench-Actor)"
    if status == "G" and signer:
        if signer != actor:
            return f"signed by {signer}'s key, but the step names {actor}"
    elif status in ("U", "E") and key:
        return f"signed with a key reviewers.yaml lists for nobody ({key}), in {actor}'s name"
    else:
        return f"{_SIG_WORDS.get(status, f'signature not verified ({status})')}; {actor}'s steps are signed with their key"
    who = people.resolve(name, email)
    if who != actor:
        return f"authored by {name} <{email}>, who is {who or 'nobody listed'}, but the step names {actor}"
    return None


def verify_worktree_task(ts_root: Path, task_path: Path, task_id: str, people: People) -> StepsVerdict:
    """:func:`verify_steps` for a task folder in a working tree (the run gate, ``ctb-author``)."""
    if not people.signing:
        return StepsVerdict(signed=False)
    top = _git(task_path, "rev-parse", "--show-toplevel")
    if top.returncode != 0:
        return StepsVerdict(
            signed=True,
            problems=[f"{ts_root} is not in a git repository: its signed review steps cannot be verified"],
        )
    root = Path(top.stdout.strip())
    rel = task_path.resolve().relative_to(root.resolve()).as_posix()
    return verify_steps(root, None, rel, task_id, people)
