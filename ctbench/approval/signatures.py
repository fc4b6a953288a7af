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
from ctbench.people import PEOPLE_FILE, People, load_people

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
_SEAL_ACTIONS = {"seal", "unseal"}
SEALED_GOLD = "hidden.yaml.age"
SEAL_RECIPIENTS = "hidden.recipients.yaml"
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


def anchored_main(root: Path, set_rel: str, main_branch: str, remote: str | None) -> str:
    """The main branch as the remote's default branch names it, not as the checked-out ``ctbench.yaml`` does.

    Which branch counts as main is itself set in ``ctbench.yaml`` (``review.main_branch``), a file any
    branch can change: a review branch whose file names itself as main would make a clone checked out
    on it trust that branch's ``reviewers.yaml``. So when the remote has a default branch
    (``<remote>/HEAD``, set by every clone), the name is read from the ``ctbench.yaml`` committed there;
    only a repository without one falls back to the name it was given.
    """
    if not remote:
        return main_branch
    head = _git(root, "symbolic-ref", "--quiet", f"refs/remotes/{remote}/HEAD")
    if head.returncode != 0 or not head.stdout.strip():
        return main_branch
    cfg_rel = f"{set_rel}/ctbench.yaml" if set_rel not in ("", ".") else "ctbench.yaml"
    shown = _git(root, "cat-file", "blob", f"{head.stdout.strip()}:{cfg_rel}")
    if shown.returncode != 0:
        return main_branch
    from ruamel.yaml import YAML
    from ruamel.yaml.error import YAMLError

    try:
        data = YAML(typ="safe", pure=True).load(shown.stdout)
    except YAMLError:
        return main_branch
    review = data.get("review") if isinstance(data, dict) else None
    named = review.get("main_branch") if isinstance(review, dict) else None
    return named if isinstance(named, str) and named else "main"


def trusted_people(root: Path, set_rel: str, main_branch: str, remote: str | None) -> People:
    """The people as the main branch's committed history lists them, never as a working tree does.

    The keys that decide whether a step verifies cannot come from a file the person being checked
    can edit: a ``reviewers.yaml`` changed in a working tree, or committed on a review branch (which
    is the author's to edit), could list the forger's own key under somebody else's id. The file is
    read from ``<remote>/<main>`` when it is ahead of the local ``<main>`` (or there is no local one),
    else from the local ``<main>``; a repository with neither has nothing committed to trust, and
    its working tree's file is read. Which branch is main comes from :func:`anchored_main`.
    """
    rel = f"{set_rel}/{PEOPLE_FILE}" if set_rel not in ("", ".") else PEOPLE_FILE
    main_branch = anchored_main(root, set_rel, main_branch, remote)

    def rev(ref: str) -> str | None:
        proc = _git(root, "rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}")
        if proc.returncode != 0:
            return None
        return proc.stdout.strip() or None

    local = rev(f"refs/heads/{main_branch}")
    far = rev(f"refs/remotes/{remote}/{main_branch}") if remote else None
    tip = local
    if far and (not local or _git(root, "merge-base", "--is-ancestor", local, far).returncode == 0):
        tip = far
    if tip is None:
        return load_people(root / rel)
    where = f"{rel} on {main_branch} ({tip[:10]})"
    shown = _git(root, "cat-file", "blob", f"{tip}:{rel}")
    if shown.returncode != 0:
        return People(source=where)
    return load_people(Path(where), shown.stdout)


def _verify_log(
    root: Path, people: People, rev: str, paths: list[str]
) -> tuple[list[tuple[str, str, str, str, str, str, str, dict[str, str]]], str | None]:
    """(sha, %G?, signer, key, author name, author email, subject, trailers) of each commit touching ``paths``."""
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
            rev,
            "--",
            *paths,
        )
    if proc.returncode != 0:
        return [], f"cannot read the history of {', '.join(paths)}: {proc.stderr.strip() or proc.returncode}"
    out = []
    for chunk in proc.stdout.split("\x1e"):
        parts = chunk.strip("\n").split("\x1f")
        if len(parts) < 8:
            continue
        sha, status, signer, key, name, email, subject, trailer_text = parts[:8]
        out.append((sha, status, signer, key, name, email, subject, _trailers(trailer_text)))
    return out, None


def verify_steps(root: Path, rev: str | None, task_rel: str, task_id: str, people: People) -> StepsVerdict:
    """Check every commit that touched ``task_rel/reviews`` up to ``rev`` (None: HEAD and the working tree),
    and every seal or unseal step that touched the task's sealed gold.

    ``people`` must be the trusted list (:func:`trusted_people`), not a working tree's.
    """
    if not people.signing:
        return StepsVerdict(signed=False)
    verdict = StepsVerdict(signed=True)
    reviews = f"{task_rel}/reviews"
    steps, error = _verify_log(root, people, rev or "HEAD", [reviews])
    if error:
        verdict.problems.append(error)
        return verdict
    sealing, error = _verify_log(
        root, people, rev or "HEAD", [f"{task_rel}/{SEALED_GOLD}", f"{task_rel}/{SEAL_RECIPIENTS}"]
    )
    if error:
        verdict.problems.append(error)
        return verdict
    seen = {s[0] for s in steps}
    steps += [s for s in sealing if s[0] not in seen and s[7].get("action") in _SEAL_ACTIONS]
    for sha, status, signer, key, name, email, subject, trailers in steps:
        verdict.steps += 1
        where = f"commit {sha[:10]} ({subject[:60]})"
        if trailers.get("action") == "seal" and "task" not in trailers:  # one seal commit for many tasks
            trailers = {**trailers, "task": task_id}
        why = _step_problem(status, signer, key, name, email, trailers, task_id, people)
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


def verify_worktree_task(
    ts_root: Path, task_path: Path, task_id: str, main_branch: str = "main", remote: str | None = "origin"
) -> StepsVerdict:
    """:func:`verify_steps` for a task folder in a working tree (the run gate, ``ctb-author``), against
    the people of the main branch's committed ``reviewers.yaml`` (:func:`trusted_people`)."""
    top = _git(task_path, "rev-parse", "--show-toplevel")
    if top.returncode != 0:
        people = load_people(ts_root / PEOPLE_FILE)
        if not people.signing:
            return StepsVerdict(signed=False)
        return StepsVerdict(
            signed=True,
            problems=[f"{ts_root} is not in a git repository: its signed review steps cannot be verified"],
        )
    root = Path(top.stdout.strip())
    rel = task_path.resolve().relative_to(root.resolve()).as_posix()
    set_rel = ts_root.resolve().relative_to(root.resolve()).as_posix()
    people = trusted_people(root, set_rel, main_branch, remote)
    return verify_steps(root, None, rel, task_id, people)
