"""``ctb-review``: blind review of tasks with author-reviewer consensus, every step in git."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ctbench.cli_support import add_command, build_parser, emit_json, run
from ctbench.errors import CtbError
from ctbench.tables import TABLE_FORMATS, formats_help

if TYPE_CHECKING:
    from ctbench.review.gitflow import ReviewRepo
    from ctbench.review.workflow import Revealed, ReviewDesk, StepResult
    from ctbench.store import TaskSet

DESCRIPTION = """\
Blind review: a second expert solves each task through the replay backend without seeing the gold,
then compares, rules on four criteria (solvability, answer completeness, golden-action consistency,
metadata correctness) and agrees with the author, or the task is discarded. Every step is a commit
on the task's branch review/<ID>, with Ctbench-* trailers; the branch is offered as a pull request.

States: draft -> submitted -> in_review -> needs_revision -> submitted ... -> approved | discarded

examples:
  ctb-review submit RCA-101                       the author asks for review (creates review/RCA-101)
  ctb-review assign --apply                       pick reviewers for submitted tasks (tasks/reviewers.yaml)
  ctb-review queue bob                            what waits for bob
  ctb-review blind RCA-101                        solve blind in the app (statement + device console only)
  ctb-review blind RCA-101 --answer ans.txt --commands cmds.txt      the same, scripted
  ctb-review reveal RCA-101                       score the blind answer against the gold, rule on criteria
  ctb-review reveal RCA-101 --agree solvability completeness golden --disagree metadata "chain is 3"
  ctb-review respond RCA-101 --concede metadata "fixed chain_length"  the author answers and resubmits
  ctb-review pr RCA-101 --out pr.md               push the branch, write the pull-request description
  ctb-review merge RCA-101                        merge an approved (or discarded) review into main
  ctb-review audit                                prove every decided task was answered blind
  ctb-review seal --all                           keep the gold sealed with age (authors + maintainers)
  ctb-review unseal RCA-101 --for bob             after bob's blind commit is pushed: bob may decrypt
  ctb-review status                               yields, revisions, blind accuracy, agreement
  ctb-review init-keys --key ~/.ssh/id_ed25519    sign your review steps (prints your reviewers.yaml line)

Who you are: the person tasks/reviewers.yaml lists for this clone's git identity (user.name,
user.email); --as NAME (or $CTBENCH_USER) may only name yourself.
Sealed gold is opened with your age identity: --identity FILE, else $CTBENCH_AGE_IDENTITY.
"""


# --------------------------------------------------------------------------- plumbing


def _tasks_arg(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--tasks",
        metavar="DIR",
        default=argparse.SUPPRESS,
        help="task set folder (default: $CTBENCH_TASKS, else ./tasks, else the current folder)",
    )


def _who_arg(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--as",
        dest="actor",
        metavar="NAME",
        default=None,
        help="yourself, as a check (you are who your git identity maps to in reviewers.yaml)",
    )


def _push_arg(p: argparse.ArgumentParser) -> None:
    p.add_argument("--no-push", action="store_true", help="do not push the branch to the review remote")


def _notify(msg: str) -> None:
    print(msg, file=sys.stderr)


def _open(args: argparse.Namespace) -> TaskSet:
    from ctbench.store import TaskSet

    return TaskSet.open(getattr(args, "tasks", None), identity=getattr(args, "identity", None))


def _desk(args: argparse.Namespace) -> ReviewDesk:
    from ctbench.review.workflow import ReviewDesk

    desk = ReviewDesk(_open(args), notify=_notify, push=not getattr(args, "no_push", False))
    if getattr(args, "offline", False):
        desk.repo.offline = True
    return desk


def _actor(args: argparse.Namespace, desk: ReviewDesk | None = None) -> str:
    """Who acts: the person whose git identity this clone commits with (tasks/reviewers.yaml maps it).

    ``--as NAME`` and ``$CTBENCH_USER`` may only name that same person (:func:`ctbench.people.acting_person`).
    """
    from ctbench.people import acting_person, people_of

    claimed = getattr(args, "actor", None) or os.environ.get("CTBENCH_USER") or None
    if desk is not None:
        return acting_person(desk.repo.people, desk.repo.workdir, claimed)
    ts = _open(args)
    return acting_person(people_of(ts.root), ts.root, claimed)


def _say_freshness(repo: ReviewRepo) -> None:
    """Fetch the review branches, and say plainly when (and how far) the local view is behind."""
    for note in repo.freshness(repo.fetch_reviews()):
        _notify(f"note: {note}")


def _report(result: StepResult, as_json: bool) -> int:
    if as_json:
        emit_json(
            {
                "task": result.task,
                "status": result.status.value,
                "round": result.round,
                "commits": result.commits,
                "messages": result.messages,
            }
        )
    else:
        for m in result.messages:
            print(m)
    return 0


def _interactive() -> bool:
    return sys.stdin.isatty() and sys.stdout.isatty()


def _criteria_flags(args: argparse.Namespace) -> dict[Any, tuple[Any, str]]:
    """--agree/--disagree/--comment/--all-agree -> {criterion: (verdict, comment)}."""
    from ctbench.approval.states import CRITERIA, Verdict, parse_criterion

    rulings: dict[Any, tuple[Any, str]] = {}
    comments = {parse_criterion(c): t for c, t in (args.comment or [])}
    agree = list(CRITERIA) if args.all_agree else [parse_criterion(c) for c in (args.agree or [])]
    for crit in agree:
        rulings[crit] = (Verdict.AGREE, comments.pop(crit, ""))
    for name, text in args.disagree or []:
        crit = parse_criterion(name)
        if crit in rulings and not args.all_agree:
            raise CtbError(f"{crit.label} is given both --agree and --disagree")
        rulings[crit] = (Verdict.DISAGREE, text)
    if comments:
        names = ", ".join(c.value for c in comments)
        raise CtbError(f"--comment on {names} without a verdict: add --agree or --disagree for it")
    return rulings


# --------------------------------------------------------------------------- commands


def cmd_submit(args: argparse.Namespace) -> int:
    desk = _desk(args)
    return _report(
        desk.submit(args.id, _actor(args, desk), args.why or "", reviewer=args.reviewer), args.json
    )


def cmd_checkout(args: argparse.Namespace) -> int:
    desk = _desk(args)
    return _report(desk.checkout(args.id), args.json)


def cmd_assign(args: argparse.Namespace) -> int:
    from ctbench.review.assign import load_reviewers, propose
    from ctbench.review.view import collect

    desk = _desk(args)
    _say_freshness(desk.repo)
    reviewers = load_reviewers(desk.ts, Path(args.reviewers) if args.reviewers else None)
    states = collect(desk.ts, desk.repo, skipped=lambda m: _notify(f"skipped: {m}"))
    force = None
    if args.reviewer:
        if len(args.ids) != 1:
            raise CtbError("--reviewer NAME assigns by hand: name exactly one task")
        force = {args.ids[0]: args.reviewer}
    proposals = propose(desk.ts, states, reviewers, only=list(args.ids) or None, force=force)
    if not args.apply:
        if args.json:
            emit_json({"applied": False, "proposals": [p.to_json() for p in proposals]})
            return 0
        if not proposals:
            print("no submitted task is waiting for a reviewer")
        for p in proposals:
            why = f"  ({', '.join(p.match)})" if p.match else ""
            note = f"  [{p.note}]" if p.note else ""
            print(f"{p.task} round {p.round}: {p.reviewer or '-'}{why}{note}")
        if proposals:
            print("(a proposal: add --apply to record it)", file=sys.stderr)
        return 0
    results = desk.apply_assignments(proposals, _actor(args, desk))
    if args.json:
        emit_json(
            {
                "applied": True,
                "proposals": [p.to_json() for p in proposals],
                "commits": [c for r in results for c in r.commits],
            }
        )
    else:
        for r in results:
            for m in r.messages:
                print(m)
    return 0 if all(p.reviewer for p in proposals) else 1


def cmd_queue(args: argparse.Namespace) -> int:
    from ctbench.review.assign import queue
    from ctbench.review.view import collect

    desk = _desk(args)
    _say_freshness(desk.repo)
    states = collect(desk.ts, desk.repo, skipped=lambda m: _notify(f"skipped: {m}"))
    items = queue(states, args.person, _rereview(desk.ts, states))
    if args.json:
        emit_json([i.to_json() for i in items])
        return 0
    if not items:
        print(f"nothing waits for {args.person}" if args.person else "no review is waiting")
        return 0
    from ctbench.tables import Table, render_text

    t = Table(
        title=f"Review queue{' of ' + args.person if args.person else ''}",
        columns=["task", "family", "status", "round", "who", "as", "next"],
    )
    for i in items:
        t.add(i.task, i.family, i.status, i.round, i.who, i.role, i.next)
    sys.stdout.write(render_text([t], width=160))
    return 0


def _rereview(ts: TaskSet, states: list[Any]) -> dict[str, str]:
    """Approved tasks (in the working tree) changed or set back to draft since their approval."""
    from ctbench.approval.check import rereview_reason

    out = {}
    for s in states:
        if s.rev is None and s.records and s.records[-1].outcome == "approved":
            why = rereview_reason(ts, ts.ref(s.id))
            if why:
                out[s.id] = why
    return out


def cmd_blind(args: argparse.Namespace) -> int:
    from ctbench.review.inputs import check_trajectory, read_blind_input

    desk = _desk(args)
    actor = _actor(args, desk)
    if args.answer is None:
        if not _interactive():
            raise CtbError(
                "no terminal for the blind app: give the answer with --answer FILE "
                "(and the commands you ran with --commands FILE or --trajectory FILE)"
            )
        from ctbench.review.blind_app import BlindApp

        app = BlindApp(desk, args.id, actor)
        app.run()
        return app.return_code or 0
    if args.commands and args.trajectory:
        raise CtbError("give either --commands (run them now) or --trajectory (already run), not both")
    if [args.answer, args.commands, args.trajectory].count("-") > 1:
        raise CtbError("only one of --answer, --commands, --trajectory can read standard input ('-')")
    ts = desk.ts
    answer = read_blind_input(ts, args.answer, "the blind answer").decode("utf-8", "replace")
    trajectory: bytes | None = None
    commands: bytes | None = None
    if args.trajectory:
        trajectory = check_trajectory(
            read_blind_input(ts, args.trajectory, "a replay trajectory (JSON lines)"), args.trajectory
        )
    elif args.commands:
        commands = read_blind_input(ts, args.commands, "commands, one per line")
    minutes = args.minutes
    with desk.repo.locked(f"blind {args.id}"):
        start = desk.begin_blind(args.id, actor)
        if not start.sealed:
            from ctbench.review.workflow import HONOUR_NOTE

            _notify("note: " + HONOUR_NOTE.format(id=args.id))
        if commands is not None:
            trajectory = run_commands(desk, args.id, commands)
        result = desk.record_blind(
            start, answer, trajectory, time_spent_s=minutes * 60 if minutes is not None else None
        )
    return _report(result, args.json)


def run_commands(desk: ReviewDesk, task_id: str, data: bytes) -> bytes:
    """Run ``DEVICE COMMAND`` lines through the replay engine; the trajectory it wrote, as bytes."""
    from ctbench.replay.isolated import IsolatedEngine

    path = desk.repo.state_dir / "blind" / f"{task_id}.jsonl"
    path.unlink(missing_ok=True)
    # served apart, like the blind app: the process answering has no hidden.yaml in its view
    session = IsolatedEngine(desk.ts).open_session(task_id, trajectory_path=path)
    try:
        for n, raw in enumerate(data.decode("utf-8", "replace").splitlines(), 1):
            line = raw.strip()
            if not line or line.startswith("#"):
                continue
            parts = line.split(None, 1)
            if len(parts) != 2:
                # never quote the line: the file may not be what the reviewer thinks it is
                raise CtbError(
                    f"commands file line {n}: expected DEVICE COMMAND (a device name, a space, the command)"
                )
            session.run(parts[0].rstrip(":"), parts[1].strip())
    finally:
        session.close()
    data_out = path.read_bytes() if path.exists() else b""
    path.unlink(missing_ok=True)
    return data_out


def render_reveal(rev: Revealed) -> str:
    """The side-by-side comparison as text (the app shows the same in tables)."""
    from ctbench.approval.records import cell_value
    from ctbench.tables import Table, render_text

    c = rev.comparison
    head = [
        f"{rev.task.id} round {rev.record.round}: blind answer by {rev.blind.reviewer} vs the gold",
        f"  exact match: {'yes' if c.exact else 'no'}   parse: {c.parse_status}",
        "  " + "   ".join(c.score_parts()),
    ]
    lines = Table(title="Answer lines", columns=["", "gold", "blind"])
    for row in c.answer_rows():
        lines.add(*row)
    acts = Table(title="Golden actions vs your commands", columns=["", "device", "command"])
    for row in c.action_rows():
        acts.add(*row)
    meta = Table(title="Metadata: authored vs derived", columns=["field", "authored", "derived", "agrees"])
    for m in c.metadata:
        meta.add(m.field, cell_value(m.authored), cell_value(m.derived), m.agrees)
    crit = Table(title=f"Criteria (round {rev.record.round})", columns=["criterion", "verdict", "note"])
    for k, cr in rev.record.criteria.items():
        crit.add(k.label, cr.verdict.value, cr.carry_note())
    return "\n".join(head) + "\n\n" + render_text([lines, acts, meta, crit], width=140)


def cmd_reveal(args: argparse.Namespace) -> int:
    desk = _desk(args)
    actor = _actor(args, desk)
    rulings = _criteria_flags(args)
    if not rulings and not args.json and not args.no_app and _interactive():
        from ctbench.review.blind_app import BlindApp

        app = BlindApp(desk, args.id, actor, reveal_only=True)
        app.run()
        return app.return_code or 0
    revealed, result = desk.reveal(args.id, actor)
    ruled = None
    if rulings:
        ruled = desk.rule(
            args.id, actor, rulings, review_time_s=args.minutes * 60 if args.minutes is not None else None
        )
    if args.json:
        emit_json(
            {
                "task": args.id,
                "round": revealed.record.round,
                "comparison": revealed.comparison.model_dump(mode="json"),
                "status": (ruled or result).status.value,
                "commits": result.commits + (ruled.commits if ruled else []),
                "messages": result.messages + (ruled.messages if ruled else []),
            }
        )
        return 0
    for m in result.messages:
        _notify(m)
    sys.stdout.write(render_reveal(revealed))
    if ruled is not None:
        for m in ruled.messages:
            print(m)
    else:
        print(
            f"rule on the criteria: ctb-review reveal {args.id} --agree CRITERION... "
            "--disagree CRITERION TEXT",
            file=sys.stderr,
        )
    return 0


def cmd_respond(args: argparse.Namespace) -> int:
    from ctbench.approval.states import parse_criterion

    replies: dict[Any, tuple[Any, str]] = {}
    for stance, items in (("concede", args.concede or []), ("rebut", args.rebut or [])):
        for name, text in items:
            crit = parse_criterion(name)
            if crit in replies:
                raise CtbError(f"{crit.label} is answered twice")
            replies[crit] = (stance, text)
    desk = _desk(args)
    return _report(desk.respond(args.id, _actor(args, desk), replies, args.why or ""), args.json)


def cmd_discard(args: argparse.Namespace) -> int:
    desk = _desk(args)
    return _report(desk.discard(args.id, _actor(args, desk), args.reason), args.json)


def cmd_pr(args: argparse.Namespace) -> int:
    from ctbench.review.gitflow import branch_name
    from ctbench.review.prdesc import describe
    from ctbench.review.view import read_at
    from ctbench.yamlio import atomic_write_text

    desk = _desk(args)
    repo = desk.repo
    branch = branch_name(args.id)
    tip = repo.rev(f"refs/heads/{branch}") or repo.fetch_branch(branch)
    if not tip:
        raise CtbError(
            f"{args.id} has no review branch ({branch}); submit it first: ctb-review submit {args.id}"
        )
    if not args.no_push:
        with repo.locked(f"pr {args.id}"):
            if repo.rev(f"refs/heads/{branch}"):
                repo.push(branch, required=True)
                _notify(f"pushed {branch} to {repo.remote_name}")
    state = read_at(repo, tip, args.id)
    if state is None:
        raise CtbError(f"{branch} does not contain {args.id}")
    text = describe(desk.ts, repo, state)
    from ctbench.review.prdesc import title

    _notify(f"title: {title(state)}")
    if args.out:
        atomic_write_text(Path(args.out), text)
        _notify(
            f"wrote the pull-request description to {args.out} "
            f"(e.g. gh pr create --head {branch} --body-file {args.out})"
        )
    else:
        sys.stdout.write(text)
    return 0


def cmd_merge(args: argparse.Namespace) -> int:
    desk = _desk(args)
    return _report(desk.merge(args.id, _actor(args, desk)), args.json)


def cmd_audit(args: argparse.Namespace) -> int:
    from ctbench.review.audit import audit
    from ctbench.review.view import collect

    desk = _desk(args)
    _say_freshness(desk.repo)
    pending = desk.repo.pending()
    if pending:
        _notify(
            "warning: an interrupted ctb-review step is pending; any write command (or ctb-review recover) "
            "finishes it"
        )
    states = collect(desk.ts, desk.repo, skipped=lambda m: _notify(f"skipped: {m}"))
    items = audit(desk.ts, desk.repo, states, list(args.ids) or None)
    ok = all(i.ok for i in items)
    if args.json:
        emit_json({"ok": ok, "tasks": [i.to_json() for i in items]})
        return 0 if ok else 1
    for i in items:
        how = [f"blind by {i.blindness}"] if i.blindness else []
        how.append(
            ("signatures verified" if i.ok else "not verified") if i.signed else "steps unsigned (honour)"
        )
        print(f"{i.task} ({i.status.value}): {'ok' if i.ok else 'FAILED'} [{'; '.join(how)}]")
        for p in i.proofs:
            print(f"  proof: {p}")
        for p in i.problems:
            print(f"  problem: {p}")
        for p in i.notes:
            print(f"  note: {p}")
    bad = sum(1 for i in items if not i.ok)
    summary = f"{len(items)} decided task(s) audited: " + (
        "every blind answer was committed before its reveal" if ok else f"{bad} failed"
    )
    print(summary, file=sys.stdout if ok else sys.stderr)
    return 0 if ok else 1


def cmd_status(args: argparse.Namespace) -> int:
    from ctbench.review.gitflow import ReviewRepo
    from ctbench.review.history import review_stats
    from ctbench.tables import render

    ts = _open(args)
    try:
        repo: ReviewRepo | None = ReviewRepo(ts, notify=_notify)
    except CtbError:
        repo = None
        _notify(f"note: {ts.root} is not in a git repository; statistics come from the review records alone")
    if repo is not None:
        repo.offline = bool(args.offline)
        _say_freshness(repo)
        if repo.pending():
            _notify(
                "warning: an interrupted ctb-review step is pending; any write command (or ctb-review "
                "recover) finishes it"
            )
    stats = review_stats(ts, repo)
    if args.json or args.format == "json":
        emit_json(stats.to_json())
        return 0
    sys.stdout.write(render(stats.tables(), args.format))
    return 0


def cmd_recover(args: argparse.Namespace) -> int:
    desk = _desk(args)
    with desk.repo.locked("recover"):
        pass  # taking the lock finishes any interrupted step and reports it
    if not desk.repo.pending():
        print("the review state of this working tree is consistent")
    return 0


def cmd_seal(args: argparse.Namespace) -> int:
    desk = _desk(args)
    ids = [r.id for r in desk.ts.refs()] if args.all else list(args.ids)
    if not ids:
        raise CtbError("name the tasks to seal (ID ...) or give --all")
    return _report(desk.seal(ids, _actor(args, desk), commit=not args.no_commit), args.json)


def cmd_unseal(args: argparse.Namespace) -> int:
    desk = _desk(args)
    return _report(desk.unseal(args.id, _actor(args, desk), args.reviewer), args.json)


def _init_age(args: argparse.Namespace, listed: str | None) -> tuple[str | None, str | None]:
    """``--age FILE``: the age identity for sealed gold (made with ``--generate``); (public key, state)."""
    from ctbench.sealing import make_identity, public_key

    if not args.age:
        return None, None
    path = Path(args.age).expanduser()
    if path.exists():
        public = public_key(path)
    elif args.generate:
        public = make_identity(path)
        _notify(
            f"made a new age identity {path} (mode 0600; keep it private, name it with $CTBENCH_AGE_IDENTITY)"
        )
    else:
        raise CtbError(f"no age identity at {path}: add --generate to make one")
    return public, "listed" if listed == public else ("another key listed" if listed else "not listed")


def cmd_init_keys(args: argparse.Namespace) -> int:
    """Set this clone up to sign review steps with an SSH key, and say what reviewers.yaml must list."""
    import subprocess

    from ctbench.people import IdentityError, acting_person, ssh_public_of

    desk = _desk(args)
    repo = desk.repo
    key = Path(args.key).expanduser() if args.key else Path.home() / ".ssh" / "id_ed25519"
    if not key.exists():
        if not args.generate:
            raise CtbError(
                f"no SSH key at {key}: give --key FILE, or --generate to make one (ssh-keygen -t ed25519)"
            )
        key.parent.mkdir(parents=True, exist_ok=True)
        ident = repo.config_name() or "ctbench"
        proc = subprocess.run(
            ["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", ident, "-f", str(key)],
            capture_output=True,
            text=True,
            stdin=subprocess.DEVNULL,
        )
        if proc.returncode != 0:
            raise CtbError(f"ssh-keygen could not make {key}: {proc.stderr.strip()}")
        _notify(f"made a new ed25519 key {key} (no passphrase; keep it private)")
    public = ssh_public_of(str(key))
    if public is None:
        raise CtbError(f"{key}: not an SSH key ssh-keygen can read without a passphrase (or its {key}.pub)")
    repo.git("config", "--local", "gpg.format", "ssh")
    repo.git("config", "--local", "user.signingkey", str(key.resolve()))
    try:
        who: str | None = acting_person(repo.people, repo.workdir)
    except IdentityError as exc:
        who = None
        _notify(f"note: {exc}")
    listed = repo.people.ssh_key(who) if who else None
    state = "listed" if listed == public else ("another key listed" if listed else "not listed")
    age_public, age_state = _init_age(args, repo.people.age_key(who) if who else None)
    if args.json:
        emit_json(
            {
                "key": str(key.resolve()),
                "ssh": public,
                "person": who,
                "reviewers_file": state,
                "age": age_public,
                "age_in_reviewers_file": age_state,
            }
        )
        return 0
    if age_public:
        if age_state == "listed":
            print(f"{repo.people.source} lists your age recipient: sealed gold can be sealed to you")
        else:
            print(
                f"add to your entry under people: (and have it merged to the main branch)\n    age: {age_public}"
            )
    print(f"this clone signs review steps with {key.resolve()} (gpg.format=ssh, user.signingkey)")
    if state == "listed":
        print(f"{repo.people.source} lists this key for {who}: your steps will verify")
    else:
        print(
            f"{repo.people.source} does not list this key for {who or 'you'} yet: add to your entry under "
            f"people: (and have it merged to the main branch)\n    ssh: {public}"
        )
    return 0


# --------------------------------------------------------------------------- parser


def build() -> tuple[argparse.ArgumentParser, object]:
    parser, sub = build_parser("ctb-review", DESCRIPTION)
    parser.add_argument(
        "--tasks",
        metavar="DIR",
        default=None,
        help="task set folder (default: $CTBENCH_TASKS, else ./tasks, else the current folder)",
    )
    parser.add_argument(
        "--offline", action="store_true", help="do not fetch from or push to the review remote"
    )
    parser.add_argument(
        "--identity",
        metavar="FILE",
        default=None,
        help="your age identity file, for sealed gold (default: $CTBENCH_AGE_IDENTITY)",
    )

    def cmd(
        name: str, help_text: str, handler: Any, description: str | None = None
    ) -> argparse.ArgumentParser:
        p = add_command(sub, name, help_text, handler, description)
        _tasks_arg(p)
        p.add_argument("--json", action="store_true", help="machine-readable output on stdout")
        return p

    p = cmd(
        "submit",
        "submit a task for review (draft, or approved and changed since)",
        cmd_submit,
        "Submit a task for review. The task must pass `ctb-author validate`. Its review branch\n"
        "review/<ID> is created from the main branch (uncommitted changes to the task folder are\n"
        "committed on it), a review round is opened and the branch is pushed.\n"
        "An approved task whose content changed is resubmitted with exactly the criteria the change\n"
        "touches reopened (recordings: golden-action consistency + solvability; gold: answer\n"
        "completeness + solvability; golden actions: golden-action consistency; metadata: metadata\n"
        "correctness; statement: solvability).",
    )
    p.add_argument("id", metavar="ID")
    p.add_argument("--why", metavar="TEXT", help="a note kept in the record's provenance")
    p.add_argument(
        "--reviewer",
        metavar="NAME",
        help="request this reviewer for the round (a reviewer in reviewers.yaml, never an author of the task)",
    )
    _who_arg(p)
    _push_arg(p)

    p = cmd("checkout", "switch to a task's review branch (to revise it, or to look)", cmd_checkout)
    p.add_argument("id", metavar="ID")
    _who_arg(p)

    p = cmd(
        "assign",
        "propose (and with --apply record) reviewers for submitted tasks",
        cmd_assign,
        "Propose a reviewer for every submitted task whose round has none, from the reviewers file\n"
        "(tasks/reviewers.yaml: name, vendors, domains, capacity). Never an author of the task,\n"
        "never over capacity, least loaded among those whose expertise matches (a vendor of the\n"
        "task's devices, its family, a tag), then best match, then by name: deterministic.\n"
        "Exit status 1 when a task found nobody eligible.",
    )
    p.add_argument("ids", nargs="*", metavar="ID", help="only these tasks (default: every waiting task)")
    p.add_argument("--reviewers", metavar="FILE", help="reviewers file (default: <task set>/reviewers.yaml)")
    p.add_argument("--reviewer", metavar="NAME", help="assign this reviewer by hand (one task only)")
    p.add_argument(
        "--apply", action="store_true", help="record the assignment (a commit on each review branch)"
    )
    _who_arg(p)
    _push_arg(p)

    p = cmd("queue", "what waits for each reviewer and author", cmd_queue)
    p.add_argument("person", nargs="?", metavar="NAME", help="only this person's queue")

    p = cmd(
        "blind",
        "solve a task blind (app, or --answer FILE)",
        cmd_blind,
        "Solve a task as an agent would: the statement and a device console over the replay\n"
        "backend, never the gold. The answer (one line per root cause `node;object;label`, or one\n"
        "line per path `A_GE1/0/1 -> B_Gi0/1 -> C`) and the trajectory of commands are committed\n"
        "and pushed before anything hidden can be shown; the record keeps the answer's sha256.\n"
        "In a terminal without --answer, the blind app opens.",
    )
    p.add_argument("id", metavar="ID")
    p.add_argument("--answer", metavar="FILE", help="the blind answer ('-' for standard input)")
    p.add_argument(
        "--commands",
        metavar="FILE",
        help="commands to run through the replay backend first, one `DEVICE COMMAND` per line",
    )
    p.add_argument(
        "--trajectory", metavar="FILE", help="a replay trajectory (JSON lines) of the commands you ran"
    )
    p.add_argument("--minutes", type=float, metavar="N", help="time spent solving (default: measured)")
    _who_arg(p)
    _push_arg(p)

    p = cmd(
        "reveal",
        "score the blind answer against the gold and rule on the criteria",
        cmd_reveal,
        "Reveal the gold to the reviewer (refused until the reviewer's blind answer is committed),\n"
        "score the blind answer with the evaluator's metrics and lay out the answer lines, the golden\n"
        "actions against the reviewer's commands and the authored against the derived metadata.\n"
        "Verdicts by flags (criteria: solvability, completeness, golden, metadata), or in the app.\n"
        "Consensus on all four approves the task; a standing disagreement sends it back to the author.",
    )
    p.add_argument("id", metavar="ID")
    p.add_argument("--agree", nargs="+", action="extend", metavar="CRITERION", help="criteria you agree on")
    p.add_argument(
        "--disagree",
        nargs=2,
        action="append",
        metavar=("CRITERION", "TEXT"),
        help="a criterion you disagree on, with what is wrong (repeatable)",
    )
    p.add_argument(
        "--comment",
        nargs=2,
        action="append",
        metavar=("CRITERION", "TEXT"),
        help="a comment on an agreed criterion (repeatable)",
    )
    p.add_argument("--all-agree", action="store_true", help="agree on all four criteria")
    p.add_argument("--minutes", type=float, metavar="N", help="time spent on the comparison")
    p.add_argument("--no-app", action="store_true", help="print the comparison even in a terminal")
    _who_arg(p)
    _push_arg(p)

    p = cmd(
        "respond",
        "the author answers the reviewer's disagreements and resubmits",
        cmd_respond,
        "Answer every disagreement of the round: --concede CRITERION TEXT when you revised the task\n"
        "(edit it first, on its review branch: ctb-review checkout ID), --rebut CRITERION TEXT when it\n"
        "is right as it is. Uncommitted changes to the task folder are committed as the revision,\n"
        "then the task is resubmitted: agreements on unchanged parts carry over, the rest reopens.",
    )
    p.add_argument("id", metavar="ID")
    p.add_argument("--concede", nargs=2, action="append", metavar=("CRITERION", "TEXT"))
    p.add_argument("--rebut", nargs=2, action="append", metavar=("CRITERION", "TEXT"))
    p.add_argument("--why", metavar="TEXT", help="what the revision changed (commit body and provenance)")
    _who_arg(p)
    _push_arg(p)

    p = cmd("discard", "discard a task with a reason", cmd_discard)
    p.add_argument("id", metavar="ID")
    p.add_argument("--reason", required=True, metavar="TEXT", help="why (kept in the record and the commit)")
    _who_arg(p)
    _push_arg(p)

    p = cmd("pr", "push the review branch and write the pull-request description (Markdown)", cmd_pr)
    p.add_argument("id", metavar="ID")
    p.add_argument("--out", metavar="FILE", help="write the description here instead of standard output")
    _push_arg(p)

    p = cmd("merge", "merge an approved or discarded review branch into the main branch", cmd_merge)
    p.add_argument("id", metavar="ID")
    _who_arg(p)
    _push_arg(p)

    p = cmd(
        "audit",
        "prove every decided task was answered blind (exit 1 if not)",
        cmd_audit,
        "For every approved or discarded task (or the ones named): the blind answer's sha256 matches,\n"
        "its commit exists and strictly precedes the reveal commit, and an approved task has not\n"
        "changed since its approval. Exit status 1 when any check fails.",
    )
    p.add_argument("ids", nargs="*", metavar="ID")

    p = cmd("status", "yields, revisions, blind accuracy, agreement", cmd_status)
    p.add_argument(
        "--format", choices=list(TABLE_FORMATS), default="text", help=formats_help(TABLE_FORMATS.values())
    )

    cmd("recover", "finish a review step a killed process left half done", cmd_recover)

    p = cmd(
        "seal",
        "seal tasks' gold with age for their authors and the maintainers",
        cmd_seal,
        "Replace each task's plain hidden.yaml by hidden.yaml.age, encrypted (age format; the age CLI\n"
        "opens it) to the task's authors and the maintainers, with their public keys from the reviewers\n"
        "file (`age: age1...`), and write hidden.recipients.yaml beside it. A reviewer's clone then holds\n"
        "ciphertext only; after their blind commit is pushed, ctb-review unseal adds them. A sealed\n"
        "benchmark can also be published without putting its answers into training corpora.\n"
        "A plain hidden.yaml committed earlier stays in the history: seal before the first commit\n"
        "(review.seal_gold: true in ctbench.yaml seals new tasks from their first save).",
    )
    p.add_argument("ids", nargs="*", metavar="ID")
    p.add_argument("--all", action="store_true", help="every task of the set")
    p.add_argument("--no-commit", action="store_true", help="write the files only")
    _who_arg(p)

    p = cmd(
        "init-keys",
        "sign your review steps with an SSH key (sets gpg.format=ssh and user.signingkey here)",
        cmd_init_keys,
        "Every review step (submit, assign, blind, reveal, verdicts, respond, discard, unseal, merge)\n"
        "is a commit signed with its actor's SSH key when reviewers.yaml lists signing keys; the audit\n"
        "and the run gate verify each against the key listed for the person the step names. This sets\n"
        "this clone up (git's own SSH signing) and prints the `ssh:` line for your entry under people:.\n"
        "With --age FILE it reads (or, with --generate, makes) your age identity for sealed gold and\n"
        "prints the `age:` line too.",
    )
    p.add_argument("--key", metavar="FILE", help="your SSH private key (default: ~/.ssh/id_ed25519)")
    p.add_argument(
        "--generate", action="store_true", help="make missing keys (ssh-keygen; an age identity with --age)"
    )
    p.add_argument(
        "--age",
        metavar="FILE",
        help="your age identity for sealed gold (e.g. ~/.config/ctbench/age.txt): print its `age:` line",
    )

    p = cmd(
        "unseal",
        "let a reviewer decrypt the gold, after their blind commit is on the remote",
        cmd_unseal,
        "The author or a maintainer adds REVIEWER as a recipient of the sealed gold. Refused until the\n"
        "reviewer's blind commit exists on the remote; the commit records which blind commit it\n"
        "followed, and ctb-review audit checks that no reviewer could decrypt earlier.",
    )
    p.add_argument("id", metavar="ID")
    p.add_argument("--for", dest="reviewer", required=True, metavar="REVIEWER")
    _who_arg(p)
    _push_arg(p)
    return parser, sub


def main(argv: Sequence[str] | None = None) -> int:
    parser, _ = build()
    return run(parser, argv)


if __name__ == "__main__":
    sys.exit(main())
