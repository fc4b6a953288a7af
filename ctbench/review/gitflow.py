"""The git side of a review: one branch per task, one commit per step, trailers on every commit.

Why a branch per task: two reviewers working on different tasks touch different branches and
different folders, so neither pushing nor merging can conflict, and each task's review is offered as
its own pull request. Why trailers: ``git log`` alone then answers "who ruled what, when", and the
audit can prove from the commit graph that the blind answer was committed before the reveal.

Crash safety. A step is: write the intent (files and commit message) to a journal in the git
directory, write the files atomically, ``git add`` + ``git commit``, delete the journal. A process
killed anywhere in between leaves either no journal (nothing happened) or a journal that the next
``ctb-review`` command finishes (roll forward: the files are rewritten from the journal and the
commit is made once; a commit that had already landed is recognised by its ``Ctbench-Op`` trailer).
Stale git lock files left by the killed commit are removed only when they are younger than the
journal and the journal's process is gone. A clone-wide lock keeps two ``ctb-review`` processes in
one working tree from switching branches under each other; separate clones or ``git worktree``
checkouts each have their own.
"""

from __future__ import annotations

import base64
import json
import os
import re
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import BaseModel, ValidationError

from ctbench.commits import TRAILER_PREFIX, Trailer, trailer_lines
from ctbench.errors import CtbError
from ctbench.gitsafe import harden
from ctbench.people import People, people_of, ssh_public_of
from ctbench.store import TaskSet
from ctbench.yamlio import atomic_write_bytes, atomic_write_text

BRANCH_PREFIX = "review/"
_LOG_FORMAT = "%H%x1f%P%x1f%aI%x1f%an%x1f%s%x1f%(trailers:only=true,unfold=true)%x1e"

Notify = Callable[[str], None]


class GitError(CtbError):
    """A git operation failed; the message carries git's own explanation."""


class Busy(CtbError):
    """Another ctb-review process holds this working tree."""


class Journal(BaseModel):
    """The intent of one crash-safe step (``journal.json``): enough to redo it or to undo it."""

    op: str
    pid: int = 0
    started: float
    branch: str
    head: str | None
    message: str
    files: dict[str, str]  # repo-relative path -> new content, base64
    before: dict[str, str | None]  # the same paths as they were (None: did not exist), base64
    add: list[str] = []
    env: dict[str, str] | None = None  # commit identity when the clone has none
    sign: list[str] = []  # git -c options that sign the commit with the actor's SSH key (empty: unsigned set)

    @classmethod
    def read(cls, path: Path) -> Journal | None:
        """The journal at ``path``; None when it cannot be read or is not a whole journal."""
        try:
            return cls.model_validate_json(path.read_bytes())
        except (OSError, ValidationError):
            return None


def branch_name(task_id: str) -> str:
    return BRANCH_PREFIX + task_id


def _quiet(_: str) -> None:
    return None


def _pid_alive(pid: int) -> bool:
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


@dataclass(frozen=True)
class LogEntry:
    """One commit of review history with its trailers (keys without the ``Ctbench-`` prefix, lower case)."""

    sha: str
    parents: tuple[str, ...]
    when: str
    author: str
    subject: str
    trailers: dict[str, list[str]] = field(default_factory=dict)

    def get(self, key: str) -> str | None:
        values = self.trailers.get(key.lower())
        return values[-1] if values else None

    @property
    def task(self) -> str | None:
        return self.get("task")

    @property
    def action(self) -> str | None:
        return self.get("action")

    @property
    def round(self) -> int | None:
        value = self.get("round")
        return int(value) if value and value.isdigit() else None


def format_message(subject: str, trailers: Sequence[tuple[str, str | int | None]], body: str = "") -> str:
    """A commit message whose last paragraph is ``Ctbench-*`` trailers (``git interpret-trailers`` reads it)."""
    lines = [subject.strip()]
    if body.strip():
        lines += ["", body.strip()]
    trail = trailer_lines(trailers)
    if trail:
        lines += ["", *trail]
    return "\n".join(lines) + "\n"


def parse_trailers(text: str) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for line in text.splitlines():
        key, sep, value = line.partition(":")
        if sep and key.startswith(TRAILER_PREFIX):
            out.setdefault(key[len(TRAILER_PREFIX) :].lower(), []).append(value.strip())
    return out


class ReviewRepo:
    """The git repository holding a task set, seen through the review workflow."""

    def __init__(self, ts: TaskSet, *, notify: Notify = _quiet) -> None:
        import git  # GitPython: imported here so read-only users of the review package stay light

        try:
            self.repo = harden(git.Repo(ts.root, search_parent_directories=True))  # no repo-set programs
        except (git.InvalidGitRepositoryError, git.NoSuchPathError):
            raise CtbError(
                f"{ts.root} is not inside a git repository; reviews live in git "
                "(git init, commit the task set, then ctb-review submit ID)"
            ) from None
        if self.repo.working_tree_dir is None:
            raise CtbError(f"{ts.root}: a bare repository has no working tree to review in")
        self._git_mod = git
        self.ts = ts
        self.notify = notify
        self.workdir = Path(self.repo.working_tree_dir).resolve()
        self.prefix = ts.root.resolve().relative_to(self.workdir).as_posix()
        cfg = ts.config.review
        self.remote_name = cfg.remote
        self.main_branch = cfg.main_branch
        self.git_dir = Path(self.repo.git_dir)
        self.common_dir = Path(self.repo.common_dir)
        self.state_dir = self.git_dir / "ctbench"
        self._lock_depth = 0
        self._people: People | None = None
        self.offline = False
        """When set, the remote is neither fetched from nor pushed to (``ctb-review --offline``)."""

    # -------------------------------------------------------------- paths

    def rel(self, path: Path) -> str:
        """Repository-relative POSIX path of a file or folder in the working tree."""
        return path.resolve().relative_to(self.workdir).as_posix()

    def task_rel(self, family: str, task_id: str) -> str:
        return f"{self.prefix}/{family}/{task_id}" if self.prefix not in ("", ".") else f"{family}/{task_id}"

    @property
    def journal_path(self) -> Path:
        return self.state_dir / "journal.json"

    # -------------------------------------------------------------- running git

    def git(self, *args: str, env: dict[str, str] | None = None) -> str:
        try:
            return self.repo.git.execute(["git", *args], env=env)
        except self._git_mod.GitCommandError as exc:
            detail = (exc.stderr or exc.stdout or "").strip()
            detail = re.sub(r"^\s*stderr:\s*'?", "", detail).strip().rstrip("'").strip()
            shown = list(args)
            while len(shown) > 1 and shown[0] == "-c":
                shown = shown[2:]
            raise GitError(f"git {' '.join(shown[:2])} failed: {detail or exc.status}") from None

    def _config(self, key: str) -> str | None:
        """A git setting as git itself resolves it (environment, global, repository)."""
        try:
            return self.git("config", "--get", key) or None
        except GitError:
            return None

    def identity_env(self, actor: str | None) -> dict[str, str] | None:
        """Only when the clone has no identity configured: commit as the acting reviewer/author."""
        has_name = self._config("user.name") is not None
        has_mail = self._config("user.email") is not None
        if has_name and has_mail:
            return None
        name = actor or "ctbench"
        mail = f"{re.sub(r'[^A-Za-z0-9._-]+', '.', name)}@ctbench.invalid"
        env: dict[str, str] = {}
        if not has_name:
            env.update(GIT_AUTHOR_NAME=name, GIT_COMMITTER_NAME=name)
        if not has_mail:
            env.update(GIT_AUTHOR_EMAIL=mail, GIT_COMMITTER_EMAIL=mail)
        return env

    def config_name(self) -> str | None:
        return self._config("user.name")

    def signing_options(self, actor: str | None) -> list[str]:
        """git ``-c`` options that SSH-sign a step by ``actor``; [] when the set's steps are not signed.

        A set whose reviewers file lists SSH signing keys signs every review step with the acting
        person's key (git's own signing: gpg.format=ssh, user.signingkey). What would make the audit
        refuse the step later is refused now, before anything is written: no key listed for the
        actor, no key configured in this clone, or a configured key that is not the listed one.
        """
        people = self.people
        if actor is None or not people.signing:
            return []
        listed = people.ssh_key(actor)
        if not listed:
            raise CtbError(
                f"review steps in this task set are signed, and {people.source} lists no SSH signing key "
                f"for {actor}: run ctb-review init-keys and add the `ssh:` line it prints to your entry "
                "under people:"
            )
        key = self._config("user.signingkey")
        if not key:
            raise CtbError(
                "review steps here are signed with your SSH key, and this clone has none configured: "
                "ctb-review init-keys --key ~/.ssh/id_ed25519 (it sets gpg.format=ssh and user.signingkey)"
            )
        pub = ssh_public_of(key)
        if pub is not None and pub != listed:
            raise CtbError(
                f"this clone signs with {key}, but {people.source} lists another key for {actor}: "
                "ctb-review init-keys --key YOUR_LISTED_KEY, or list this one (ctb-review init-keys prints it)"
            )
        return ["-c", "gpg.format=ssh", "-c", f"user.signingkey={key}", "-c", "commit.gpgsign=true"]

    @property
    def people(self) -> People:
        """The task set's people (reviewers.yaml in the working tree), read once per repository object."""
        if self._people is None:
            self._people = people_of(self.ts.root)
        return self._people

    # -------------------------------------------------------------- refs and branches

    def current_branch(self) -> str | None:
        try:
            return self.repo.active_branch.name
        except TypeError:  # detached HEAD
            return None

    def rev(self, ref: str) -> str | None:
        try:
            return self.git("rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}") or None
        except GitError:
            return None

    def has_remote(self) -> bool:
        if self.offline:
            return False
        return any(r.name == self.remote_name for r in self.repo.remotes)

    def remote_ref(self, branch: str) -> str:
        return f"refs/remotes/{self.remote_name}/{branch}"

    def is_ancestor(self, ancestor: str, descendant: str) -> bool:
        try:
            self.git("merge-base", "--is-ancestor", ancestor, descendant)
            return True
        except GitError:
            return False

    def fetch_branch(self, branch: str) -> str | None:
        """Fetch one branch from the remote; the remote's tip, or None (no remote, no such branch, offline)."""
        if not self.has_remote():
            return None
        try:
            self.git(
                "fetch",
                "--quiet",
                "--no-tags",
                self.remote_name,
                f"+refs/heads/{branch}:{self.remote_ref(branch)}",
            )
        except GitError as exc:
            if "couldn't find remote ref" not in str(exc):
                self.notify(f"warning: could not fetch {branch} from {self.remote_name}: {exc}")
            return self.rev(self.remote_ref(branch))
        return self.rev(self.remote_ref(branch))

    def fetch_reviews(self) -> str | None:
        """Fetch every review branch and the main branch (remote-tracking refs only; nothing checked out).

        Returns None when the view is fresh (fetched, or there is no remote to be behind), else why
        it was not fetched, for the caller to say plainly that what it shows may be behind.
        """
        if self.offline:
            return "--offline"
        if not self.has_remote():
            return None
        try:
            self.git(
                "fetch",
                "--quiet",
                "--no-tags",
                "--prune",
                self.remote_name,
                f"+refs/heads/{BRANCH_PREFIX}*:refs/remotes/{self.remote_name}/{BRANCH_PREFIX}*",
                f"+refs/heads/{self.main_branch}:{self.remote_ref(self.main_branch)}",
            )
        except GitError as exc:
            self.notify(f"warning: could not fetch reviews from {self.remote_name}: {exc}")
            return str(exc)
        return None

    def count_between(self, base: str, tip: str) -> int:
        """Commits in ``tip`` that ``base`` lacks."""
        try:
            return int(self.git("rev-list", "--count", f"{base}..{tip}") or 0)
        except (GitError, ValueError):
            return 0

    def freshness(self, not_fetched: str | None) -> list[str]:
        """Plain notes on how far the local view is behind the remote (empty when it is not).

        Review branches are always read at their newest known tip (local or remote-tracking), so a
        local branch behind the remote is shown as on the remote; the note says so. The main
        branch's working tree behind the remote's main is only reported: merged tasks are read
        from it, and pulling is the user's decision.
        """
        notes: list[str] = []
        if not_fetched and any(r.name == self.remote_name for r in self.repo.remotes):
            when = _mtime(self.git_dir / "FETCH_HEAD")
            since = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(when)) if when else "never"
            notes.append(
                f"not fetched from {self.remote_name} ({not_fetched}): review branches are as of the "
                f"last fetch ({since}); the remote may hold newer steps"
            )
        text = self.git("for-each-ref", "--format=%(refname:strip=2)", f"refs/heads/{BRANCH_PREFIX}")
        for branch in text.split():
            local, remote = self.rev(f"refs/heads/{branch}"), self.rev(self.remote_ref(branch))
            if local and remote and local != remote:
                ahead = self.count_between(local, remote)
                if ahead:
                    notes.append(
                        f"local {branch} is {ahead} commit(s) behind {self.remote_name}/{branch}; "
                        f"shown as on {self.remote_name}"
                    )
        main_local = self.rev("HEAD") if self.current_branch() == self.main_branch else None
        main_remote = self.rev(self.remote_ref(self.main_branch))
        if main_local and main_remote and main_local != main_remote:
            behind = self.count_between(main_local, main_remote)
            if behind:
                notes.append(
                    f"{self.main_branch} is {behind} commit(s) behind {self.remote_name}/"
                    f"{self.main_branch}: merged reviews there are not counted until you git pull"
                )
        return notes

    def review_branches(self) -> dict[str, str]:
        """task id -> the newest known tip of its review branch (local or remote-tracking)."""
        out: dict[str, str] = {}
        local: dict[str, str] = {}
        remote: dict[str, str] = {}
        text = self.git(
            "for-each-ref",
            "--format=%(refname)%09%(objectname)",
            f"refs/heads/{BRANCH_PREFIX}",
            f"refs/remotes/{self.remote_name}/{BRANCH_PREFIX}",
        )
        for line in text.splitlines():
            ref, _, sha = line.partition("\t")
            if ref.startswith("refs/heads/"):
                local[ref[len("refs/heads/" + BRANCH_PREFIX) :]] = sha
            else:
                remote[ref[len(f"refs/remotes/{self.remote_name}/{BRANCH_PREFIX}") :]] = sha
        for task in set(local) | set(remote):
            a, b = local.get(task), remote.get(task)
            if a and b and a != b:
                out[task] = b if self.is_ancestor(a, b) else a
            else:
                out[task] = a or b or ""
        return out

    def merged_tips(self, rev: str = "HEAD") -> set[str]:
        """Commits of review branches (local and remote-tracking) already contained in ``rev`` (one git call)."""
        if self.rev(rev) is None:
            return set()
        text = self.git(
            "for-each-ref",
            f"--merged={rev}",
            "--format=%(objectname)",
            f"refs/heads/{BRANCH_PREFIX}",
            f"refs/remotes/{self.remote_name}/{BRANCH_PREFIX}",
        )
        return set(text.split())

    def dirty_paths(self) -> list[str]:
        """Tracked files with uncommitted changes (staged or not); untracked files are not listed."""
        text = self.git("status", "--porcelain=v1", "-z", "--untracked-files=no")
        out = []
        items = text.split("\0")
        i = 0
        while i < len(items):
            item = items[i]
            if len(item) > 3:
                out.append(item[3:])
                if item[0] in "RC":
                    i += 1  # rename: the next field is the source path
            i += 1
        return out

    def untracked_paths(self, under: str) -> list[str]:
        text = self.git("ls-files", "--others", "--exclude-standard", "-z", "--", under)
        return [p for p in text.split("\0") if p]

    def ensure_branch(
        self, task_id: str, task_rel: str, *, create_from: str | None = None, allow_task_changes: bool = False
    ) -> None:
        """Be on the task's review branch, up to date with the remote; switch to it (or create it) if needed.

        Refuses to switch over uncommitted changes outside the task folder (they belong to
        something else), and over changes inside it unless the caller is going to commit them.
        """
        branch = branch_name(task_id)
        remote_tip = self.fetch_branch(branch)
        current = self.current_branch()
        if current != branch:
            dirty = self.dirty_paths()
            outside = [p for p in dirty if not _under(p, task_rel)]
            if outside:
                shown = ", ".join(outside[:5]) + (" ..." if len(outside) > 5 else "")
                raise CtbError(
                    f"uncommitted changes in {shown}: commit or stash them before working on "
                    f"{task_id} (its review lives on branch {branch})"
                )
            if dirty and not allow_task_changes:
                raise CtbError(
                    f"uncommitted changes in {task_rel}: a reviewer never changes the task; "
                    f"revert them (git checkout -- {task_rel}) or let the author commit them"
                )
            local_tip = self.rev(f"refs/heads/{branch}")
            if local_tip:
                self.git("checkout", "--quiet", branch)
            elif remote_tip:
                # --no-track: no upstream in .git/config. ctb-review fetches and pushes explicitly, and a
                # config write takes a clone-wide lock that two worktrees working at once would race for.
                self.git("checkout", "--quiet", "--no-track", "-b", branch, remote_tip)
            elif create_from is not None:
                start = self.rev(f"refs/heads/{create_from}") or self.rev(create_from)
                if start is None:
                    raise CtbError(
                        f"cannot create {branch}: no branch {create_from!r} to start from "
                        "(set review.main_branch in ctbench.yaml)"
                    )
                self.git("checkout", "--quiet", "--no-track", "-b", branch, start)
            else:
                where = f" here or on {self.remote_name}" if self.has_remote() else ""
                raise CtbError(
                    f"{task_id} has no review branch ({branch}){where}: the author submits it "
                    f"first (ctb-review submit {task_id})"
                )
            self.notify(f"switched to branch {branch}")
        self.catch_up(branch, remote_tip)

    def catch_up(self, branch: str, remote_tip: str | None) -> None:
        """Fast-forward the local branch to the remote's tip; a diverged branch stops the step, so a
        reviewer never writes over a round someone else pushed meanwhile."""
        local_tip = self.rev(f"refs/heads/{branch}")
        if not remote_tip or not local_tip or remote_tip == local_tip:
            return
        if self.is_ancestor(local_tip, remote_tip):
            self.git("merge", "--quiet", "--ff-only", remote_tip)
            self.notify(f"updated {branch} from {self.remote_name}")
        elif not self.is_ancestor(remote_tip, local_tip):
            raise CtbError(
                f"{branch} has diverged from {self.remote_name}/{branch} (someone else committed "
                f"to this review meanwhile): git pull {self.remote_name} {branch}, then rerun"
            )

    def push(self, branch: str, *, required: bool = False) -> bool:
        """Push a branch; a failure is a warning for ordinary steps and an error where pushing is the point."""
        if not self.has_remote():
            if required:
                raise CtbError(
                    f"no git remote named {self.remote_name!r} (tasks/ctbench.yaml review.remote); "
                    f"add one: git remote add {self.remote_name} URL"
                )
            return False
        try:
            self.git("push", "--quiet", self.remote_name, f"refs/heads/{branch}:refs/heads/{branch}")
        except GitError as exc:
            if required:
                raise
            self.notify(
                f"warning: could not push {branch} to {self.remote_name} ({exc}); "
                "it stays local until the next push"
            )
            return False
        return True

    # -------------------------------------------------------------- locking

    @contextmanager
    def locked(self, what: str) -> Iterator[None]:
        """One ctb-review writer per working tree; a lock left by a dead process is taken over."""
        if self._lock_depth:
            self._lock_depth += 1
            try:
                yield
            finally:
                self._lock_depth -= 1
            return
        self.state_dir.mkdir(parents=True, exist_ok=True)
        path = self.state_dir / "lock"
        payload = json.dumps({"pid": os.getpid(), "what": what, "since": time.time()}).encode()
        for _ in range(3):
            try:
                fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
            except FileExistsError:
                holder = _read_json(path)
                if holder is None and time.time() - _mtime(path) < 5:
                    time.sleep(0.05)  # being written right now
                    continue
                pid = holder.get("pid") if holder else None
                if isinstance(pid, int) and pid and pid != os.getpid() and _pid_alive(pid):
                    what_held = holder.get("what", "?") if holder else "?"
                    raise Busy(
                        f"another ctb-review ({what_held}, pid {pid}) is working in "
                        f"{self.workdir}; wait for it, or review other tasks from a separate clone "
                        "or a `git worktree add` checkout"
                    ) from None
                path.unlink(missing_ok=True)
                continue
            with os.fdopen(fd, "wb") as fh:
                fh.write(payload)
            break
        else:
            raise Busy(f"could not take the review lock {path}")
        self._lock_depth = 1
        try:
            self.recover()
            yield
        finally:
            self._lock_depth = 0
            path.unlink(missing_ok=True)

    # -------------------------------------------------------------- crash-safe commits

    def pending(self) -> Journal | None:
        """The journal of an interrupted step, if any (for read-only commands to warn about)."""
        return Journal.read(self.journal_path) if self.journal_path.exists() else None

    def commit(
        self,
        branch: str,
        message: str,
        *,
        files: dict[str, bytes] | None = None,
        add: Sequence[str] = (),
        actor: str | None = None,
    ) -> str | None:
        """Write ``files`` (repo-relative) atomically and commit them plus ``add`` on ``branch``.

        Returns the new commit, or None when nothing changed (a repeated step is a no-op).
        """
        if self._lock_depth == 0:
            raise RuntimeError("ReviewRepo.commit needs the review lock (use `with repo.locked(...)`)")
        current = self.current_branch()
        if current != branch:
            raise CtbError(
                f"expected to be on branch {branch} but HEAD is on {current or 'a detached commit'}; "
                "something switched branches meanwhile: nothing was committed"
            )
        op = uuid.uuid4().hex[:12]
        files = dict(files or {})
        journal = Journal(
            op=op,
            pid=os.getpid(),
            started=time.time(),
            branch=branch,
            head=self.rev("HEAD"),
            message=message.rstrip("\n") + f"\n{TRAILER_PREFIX}Op: {op}\n",
            files={k: base64.b64encode(v).decode("ascii") for k, v in files.items()},
            before={k: _b64_or_none(self.workdir / k) for k in files},
            add=list(add),
            env=self.identity_env(actor),
            sign=self.signing_options(actor),
        )
        atomic_write_text(self.journal_path, journal.model_dump_json())
        try:
            sha = self._apply(journal)
        except GitError:
            self._roll_back(journal)
            self.journal_path.unlink(missing_ok=True)
            raise
        self.journal_path.unlink(missing_ok=True)
        return sha

    def _apply(self, journal: Journal) -> str | None:
        for rel, b64 in journal.files.items():
            atomic_write_bytes(self.workdir / rel, base64.b64decode(b64))
        paths = sorted(set(journal.files) | set(journal.add))
        paths = [p for p in paths if (self.workdir / p).exists() or self._tracked(p)]
        if not paths:
            return None
        self.git("add", "--all", "--", *paths)
        try:
            self.git("diff", "--cached", "--quiet", "--", *paths)
            return None  # nothing staged for these paths: the step had already been recorded
        except GitError:
            pass
        msg_file = self.state_dir / f"message-{journal.op}.txt"
        atomic_write_text(msg_file, journal.message)
        try:
            signed = [*journal.sign, "commit", "-S"] if journal.sign else ["commit"]
            self.git(*signed, "--quiet", "--file", str(msg_file), "--", *paths, env=journal.env or None)
        finally:
            msg_file.unlink(missing_ok=True)
        return self.rev("HEAD")

    def _roll_back(self, journal: Journal) -> None:
        """A step git refused (a hook, a lock): put the files back as they were, leave no trace."""
        before = journal.before
        for rel, b64 in before.items():
            if b64 is None:
                (self.workdir / rel).unlink(missing_ok=True)
            else:
                atomic_write_bytes(self.workdir / rel, base64.b64decode(b64))
        try:
            self.git("reset", "--quiet", "--", *before)
        except GitError:
            pass

    def commit_to_branch(
        self, branch: str, message: str, files: dict[str, bytes], *, actor: str | None = None
    ) -> str:
        """Commit files onto a branch that is not checked out, without touching the working tree.

        Used for bookkeeping across many tasks (assignment). The only mutation is a compare-and-swap
        ref update, so a crash leaves the branch either before or after, and two writers on the same
        branch cannot overwrite each other.
        """
        ref = f"refs/heads/{branch}"
        if self.current_branch() == branch:
            raise CtbError(f"{branch} is checked out here; use the ordinary commit")
        worktrees = self.git("worktree", "list", "--porcelain")
        if f"branch {ref}" in worktrees.splitlines():
            raise CtbError(f"{branch} is checked out in another worktree; run this there")
        remote_tip = self.fetch_branch(branch)
        tip = self.rev(ref)
        base = tip
        if remote_tip and (not tip or self.is_ancestor(tip, remote_tip)):
            base = remote_tip
        elif remote_tip and tip and not self.is_ancestor(remote_tip, tip):
            raise CtbError(f"{branch} has diverged from {self.remote_name}/{branch}; reconcile it first")
        if base is None:
            raise CtbError(f"no branch {branch}")
        self.state_dir.mkdir(parents=True, exist_ok=True)
        token = uuid.uuid4().hex[:12]
        index = self.state_dir / f"index-{token}"
        scratch = self.state_dir / f"blob-{token}"
        msg_file = self.state_dir / f"message-{token}.txt"
        env = {"GIT_INDEX_FILE": str(index), **(self.identity_env(actor) or {})}
        sign = self.signing_options(actor)
        try:
            self.git("read-tree", base, env=env)
            for rel, data in files.items():
                scratch.write_bytes(data)
                sha = self.git("hash-object", "-w", f"--path={rel}", str(scratch))
                self.git("update-index", "--add", "--cacheinfo", f"100644,{sha},{rel}", env=env)
            tree = self.git("write-tree", env=env)
            msg_file.write_text(message, encoding="utf-8")
            signed = [*sign, "commit-tree", "-S"] if sign else ["commit-tree"]
            commit = self.git(*signed, tree, "-p", base, "-F", str(msg_file), env=env)
            self.git("update-ref", ref, commit, tip or "0" * 40)
        finally:
            for p in (index, scratch, msg_file):
                p.unlink(missing_ok=True)
        return commit

    def _tracked(self, rel: str) -> bool:
        return bool(self.git("ls-files", "--", rel))

    def _landed(self, branch: str, op: str) -> str | None:
        text = (
            self.git(
                "log",
                "-n",
                "50",
                f"--grep=^{Trailer.OP.full}: {op}$",
                "--format=%H",
                f"refs/heads/{branch}",
                "--",
            )
            if self.rev(f"refs/heads/{branch}")
            else ""
        )
        return text.split()[0] if text.split() else None

    def _clear_stale_locks(self, since: float, branch: str) -> list[str]:
        candidates = [
            self.git_dir / "index.lock",
            self.git_dir / "HEAD.lock",
            self.git_dir / "ORIG_HEAD.lock",
            self.common_dir / "refs" / "heads" / f"{branch}.lock",
            *self.git_dir.glob("next-index-*.lock"),
        ]
        removed = []
        for p in candidates:
            if p.exists() and _mtime(p) >= since - 2:
                p.unlink(missing_ok=True)
                removed.append(p.name)
        return removed

    def recover(self) -> str | None:
        """Finish a step a killed process left half done; say what was done, or refuse with why."""
        journal = self.pending()
        if journal is None:
            if self.journal_path.exists():
                self.journal_path.unlink()  # unreadable journal: it was never complete, nothing was applied
            return None
        pid = journal.pid
        if pid != os.getpid() and _pid_alive(pid):
            raise Busy(f"another ctb-review (pid {pid}) is committing in {self.workdir}; wait for it")
        branch = journal.branch
        removed = self._clear_stale_locks(journal.started, branch)
        what = _subject(journal.message)
        landed = self._landed(branch, journal.op)
        if landed:
            self.journal_path.unlink(missing_ok=True)
            msg = f"an interrupted step ({what}) had been committed as {landed[:10]}; cleaned up"
        else:
            current = self.current_branch()
            if current != branch:
                raise CtbError(
                    f"an interrupted ctb-review step ({what}) on branch {branch} was found, but HEAD "
                    f"is on {current}; git checkout {branch} and rerun to finish it, or delete "
                    f"{self.journal_path} to abandon it"
                )
            if self.rev("HEAD") != journal.head:
                raise CtbError(
                    f"an interrupted ctb-review step ({what}) was found, but {branch} has moved "
                    f"since; delete {self.journal_path} after checking the task folder"
                )
            try:
                sha = self._apply(journal)
            except GitError as exc:
                raise CtbError(
                    f"could not finish an interrupted step ({what}): {exc}; fix it, or delete "
                    f"{self.journal_path} to abandon it"
                ) from None
            self.journal_path.unlink(missing_ok=True)
            msg = (
                f"finished an interrupted step ({what}) as {sha[:10]}"
                if sha
                else f"an interrupted step ({what}) had nothing left to commit"
            )
        if removed:
            msg += f" (removed stale git locks: {', '.join(removed)})"
        self.notify(msg)
        return msg

    # -------------------------------------------------------------- reading history

    def log(self, *revs: str, task: str | None = None) -> list[LogEntry]:
        """Review commits reachable from ``revs`` (newest first), optionally for one task."""
        grep = f"--grep=^{Trailer.TASK.full}: {re.escape(task)}$" if task else f"--grep=^{Trailer.TASK.full}:"
        revs_ = [r for r in revs if r] or ["HEAD"]
        try:
            text = self.git("log", grep, f"--format={_LOG_FORMAT}", *revs_, "--")
        except GitError:
            return []
        out = []
        for chunk in text.split("\x1e"):
            chunk = chunk.strip("\n")
            if not chunk:
                continue
            parts = chunk.split("\x1f")
            if len(parts) < 6:
                continue
            sha, parents, when, author, subject, trailers = parts[:6]
            entry = LogEntry(
                sha=sha,
                parents=tuple(parents.split()),
                when=when,
                author=author,
                subject=subject,
                trailers=parse_trailers(trailers),
            )
            if task is None or entry.task == task:
                out.append(entry)
        return out

    def read_blob(self, rev: str, rel: str) -> bytes | None:
        try:
            blob = self.repo.commit(rev).tree / rel
            return bytes(blob.data_stream.read())
        except (KeyError, ValueError, self._git_mod.BadName):
            return None

    def list_dir(self, rev: str, rel: str) -> list[str]:
        try:
            tree = self.repo.commit(rev).tree / rel
            return [item.name for item in tree]
        except (KeyError, ValueError, self._git_mod.BadName, AttributeError):
            return []


def _under(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip("/") + "/")


def _read_json(path: Path) -> dict[str, object] | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def _mtime(path: Path) -> float:
    try:
        return path.stat().st_mtime
    except OSError:
        return 0.0


def _b64_or_none(path: Path) -> str | None:
    try:
        return base64.b64encode(path.read_bytes()).decode("ascii")
    except OSError:
        return None


def _subject(message: str) -> str:
    return message.splitlines()[0] if message else "?"
