"""The pull-request description of a task's review, in Markdown, from the branch alone.

It is what a maintainer reads before merging: where the review stands, how the blind answer
compared with the gold, which disagreements are open, and exactly which fields changed since the
previous round (so a re-review looks only at what moved). It is plain Markdown, ready to paste
into a hosting site or to hand to its command-line client (``gh pr create --body-file``).
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from ctbench.approval.hashes import PartReader, sha256_bytes
from ctbench.approval.records import ReviewRecord, cell_value
from ctbench.approval.states import CRITERIA, Action, Role, Verdict
from ctbench.gitsafe import git_env
from ctbench.review.audit import audit_task, git_reader
from ctbench.review.gitflow import LogEntry, ReviewRepo, branch_name
from ctbench.review.view import TaskState
from ctbench.store import HIDDEN_FILE, SEALED_HIDDEN_FILE, TASK_FILE, TaskSet
from ctbench.validation.validator import Finding
from ctbench.yamlio import load_fast

_MARK = {Verdict.AGREE: "✅ agree", Verdict.DISAGREE: "❌ disagree", Verdict.OPEN: "⏳ open"}


def _md(text: object) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def _flatten(value: Any, prefix: str, out: dict[str, Any]) -> None:
    if isinstance(value, dict):
        for k, v in value.items():
            _flatten(v, f"{prefix}.{k}" if prefix else str(k), out)
    elif isinstance(value, list) and value and all(isinstance(v, dict) for v in value):
        for i, v in enumerate(value):
            _flatten(v, f"{prefix}[{i}]", out)
    else:
        out[prefix] = value


def snapshot(read: PartReader) -> dict[str, Any]:
    """Every reviewed field of one task version as ``file: dotted.path -> value`` (recordings by hash)."""
    out: dict[str, Any] = {}
    for name in (TASK_FILE, HIDDEN_FILE):
        data = read(name)
        if data is None:
            continue
        try:
            doc = load_fast(Path(name), data.decode("utf-8"))
        except Exception:
            out[f"{name}"] = sha256_bytes(data)
            continue
        flat: dict[str, Any] = {}
        _flatten(doc if isinstance(doc, dict) else {"value": doc}, "", flat)
        for k, v in flat.items():
            if name == TASK_FILE and (k == "status" or k.startswith("recordings")):
                continue
            out[f"{name}: {k}"] = v
    task = read(TASK_FILE)
    if task is not None:
        try:
            doc = load_fast(Path(TASK_FILE), task.decode("utf-8")) or {}
        except Exception:
            doc = {}
        for rec in doc.get("recordings") or []:
            if isinstance(rec, dict):
                data = read(str(rec.get("file", "")))
                out[f"recording {rec.get('device')}: {rec.get('command')}"] = (
                    sha256_bytes(data)[7:19] if data is not None else "missing"
                )
    return out


def field_diff(before: dict[str, Any], after: dict[str, Any]) -> list[str]:
    lines = []
    for key in sorted(set(before) | set(after)):
        a, b = before.get(key, None), after.get(key, None)
        if key not in before:
            lines.append(f"- added `{_md(key)}`: `{_md(_short(b))}`")
        elif key not in after:
            lines.append(f"- removed `{_md(key)}` (was `{_md(_short(a))}`)")
        elif a != b:
            lines.append(f"- changed `{_md(key)}`: `{_md(_short(a))}` → `{_md(_short(b))}`")
    return lines


def _short(value: Any, limit: int = 120) -> str:
    text = str(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _base_of_round(log: Iterable[LogEntry], round_no: int) -> LogEntry | None:
    """The last reviewer-side commit of the previous round: what the re-review is relative to."""
    ends = {Action.REQUEST_REVISION.value, Action.APPROVE.value, Action.MERGE.value}
    for e in log:  # newest first
        if e.round is not None and e.round < round_no and e.action in ends:
            return e
    return None


def title(state: TaskState) -> str:
    """The pull request's title: task, title, where the review stands."""
    rounds = len(state.records)
    return f"review({state.id}): {state.title or '(untitled)'} — {state.status.value}" + (
        f" after {rounds} round(s)" if rounds else ""
    )


def describe(ts: TaskSet, repo: ReviewRepo, state: TaskState) -> str:
    rev = state.rev or "HEAD"
    log = repo.log(rev, task=state.id)
    rec = state.current
    lines: list[str] = [
        f"# {_md(title(state))}",
        "",
        f"## Review of {state.id}: {_md(state.title or '(untitled)')}",
        "",
    ]
    reviewers = ", ".join(state.reviewers()) or "not assigned yet"
    lines += [
        "| | |",
        "|---|---|",
        f"| Task | `{state.id}` ({state.family.value}) |",
        f"| Status | **{state.status.value}** after {len(state.records)} round(s) |",
        f"| Authors | {_md(', '.join(state.authors) or '—')} |",
        f"| Reviewers | {_md(reviewers)} |",
        f"| Branch | `{branch_name(state.id)}` |",
        "",
    ]
    lines += _summary(repo, state, rev, log)
    lines += _validation(ts, repo, state, rev)
    if rec is not None:
        lines += [
            f"### Criteria (round {rec.round})",
            "",
            "| criterion | verdict | last word |",
            "|---|---|---|",
        ]
        for c in CRITERIA:
            cr = rec.criteria[c]
            last = cr.thread[-1] if cr.thread else None
            said = (last.text or (last.verdict.value if last.verdict else last.stance or "")) if last else ""
            word = f"{last.who} ({last.role.value}): {said}" if last and said else cr.carry_note()
            lines.append(f"| {c.label} | {_MARK[cr.verdict]} | {_md(_short(word, 160))} |")
        lines.append("")
        if rec.discard_reason:
            lines += [f"**Discarded:** {_md(rec.discard_reason)}", ""]
    sealed = repo.read_blob(rev, f"{state.rel}/{SEALED_HIDDEN_FILE}") is not None
    lines += _blind_section(state, sealed=sealed)
    lines += ["### Open disagreements", ""]
    open_items = _open_disagreements(state.records)
    lines += open_items or ["None.", ""]
    lines += _threads(state, log)
    lines += ["### Changes since the last round", ""]
    lines += _changes(repo, state, rev, log)
    item = audit_task(ts, repo, state) if state.records else None
    if item is not None:
        lines += ["### Blindness audit", ""]
        lines += [f"- ✅ {_md(p)}" for p in item.proofs] + [f"- ❌ {_md(p)}" for p in item.problems]
        if not item.proofs and not item.problems:
            lines.append("- nothing revealed yet")
        lines.append("")
    lines += [
        "<sub>Generated by `ctb-review pr`; every step is a commit with `Ctbench-*` trailers "
        f"(`git log --grep='Ctbench-Task: {state.id}'`).</sub>",
        "",
    ]
    return "\n".join(lines)


def _blind_section(state: TaskState, *, sealed: bool = False) -> list[str]:
    """The latest reveal's comparison; for a sealed task, counts only (its gold lines and golden
    commands would otherwise sit in plain text in the pull request, readable by anyone)."""
    lines = ["### Blind result vs gold", ""]
    shown = False
    revealed = [r for r in state.records if r.comparison is not None]
    for r in revealed[-1:]:  # the latest comparison: the blind answer against the gold as it is now
        assert r.comparison is not None
        shown = True
        cmp_ = r.comparison
        blind_round = r.blind_round or r.round
        blind = next((x.blind for x in state.records if x.round == blind_round), None)
        parts = [
            f"exact match: **{'yes' if cmp_.exact else 'no'}**",
            *cmp_.score_parts(evidence_always=False),
        ]
        who = blind.reviewer if blind else r.reviewer
        extra = (
            (
                f", {blind.time_spent_s / 60:.1f} min, {blind.commands} command(s), sha256 "
                f"`{blind.answer_sha256[7:19]}…`"
            )
            if blind
            else ""
        )
        lines += [
            f"Round {r.round}: blind answer by {who} (solved in round {blind_round}{extra}) — "
            + ", ".join(parts)
            + f"; parse: {cmp_.parse_status}.",
            "",
        ]
        if sealed or cmp_.sealed is not None:
            n = cmp_.counts()  # the record's plain counts: the lines themselves are sealed, or not shown
            lines += [
                f"The gold is sealed: {n.get('gold_lines', 0)} gold line(s), {n.get('blind_lines', 0)} blind "
                f"line(s), {n.get('both', 0)} in both; golden actions run "
                f"{n.get('golden_covered', 0)}, missed {n.get('golden_missed', 0)} (lines and commands not "
                "shown).",
                "",
            ]
            continue
        lines += ["| gold | blind |", "|---|---|"]
        for _mark, g, m in cmp_.answer_rows(invalid=False):
            lines.append(f"| {'`' + _md(g) + '`' if g else ''} | {'`' + _md(m) + '`' if m else ''} |")
        for bad in cmp_.invalid_lines:  # the markup wraps the line alone, not the "unparsable:" label
            lines.append(f"| | unparsable: `{_md(bad)}` |")
        lines.append("")
        if cmp_.golden_missed:
            lines.append(
                "Golden actions the reviewer did not run: "
                + ", ".join(f"`{d}: {c}`" for d, c in cmp_.golden_missed)
            )
            lines.append("")
        if cmp_.metadata:
            lines += ["| metadata | authored | derived | agrees |", "|---|---|---|---|"]
            for row in cmp_.metadata:
                agrees = {True: "✅ yes", False: "❌ no", None: "— (nothing to compare)"}[row.agrees]
                lines.append(
                    f"| `{row.field}` | {_md(cell_value(row.authored, text=True) or '—')} | "
                    f"{_md(cell_value(row.derived, text=True) or '—')} | {agrees} |"
                )
            lines.append("")
    if not shown:
        lines += ["Not revealed yet.", ""]
    return lines


def _summary(repo: ReviewRepo, state: TaskState, rev: str, log: list[LogEntry]) -> list[str]:
    """Statement, rationale, golden actions with their reasons, and the recordings added or changed."""
    read = git_reader(repo, rev, state.rel)  # no identity: a sealed gold stays sealed in the PR text
    out = ["### The task", ""]
    task = _yaml(read(TASK_FILE))
    statement = str(task.get("statement") or "").strip()
    out += ["> " + line if line else ">" for line in statement.splitlines()] or ["> (no statement)"]
    out += [
        "",
        f"Network `{_md(task.get('network', '?'))}`; accessible devices: "
        f"{_md(', '.join(task.get('accessible') or []) or 'all')}.",
        "",
    ]
    hidden = _yaml(read(HIDDEN_FILE))
    if not hidden and read(SEALED_HIDDEN_FILE) is not None:
        out += [
            "The gold answer, golden actions and rationale are sealed (hidden.yaml.age) and are not shown "
            "here; a recipient reads them with `age -d -i KEY hidden.yaml.age`.",
            "",
        ]
    elif hidden:
        if hidden.get("rationale"):
            out += [f"**Rationale:** {_md(hidden['rationale'])}", ""]
        actions = hidden.get("golden_actions") or []
        if actions:
            out += ["**Golden actions:**", ""]
            for a in actions:
                if isinstance(a, dict):
                    why = f" — {_md(a.get('why'))}" if a.get("why") else ""
                    out.append(f"1. `{_md(a.get('device'))}: {_md(a.get('command'))}`{why}")
            out.append("")
    out += _recording_changes(repo, state, rev, log, task)
    return out


def _yaml(data: bytes | None) -> dict[str, Any]:
    if data is None:
        return {}
    try:
        doc = load_fast(Path("x.yaml"), data.decode("utf-8"))
    except Exception:
        return {}
    return doc if isinstance(doc, dict) else {}


def _recording_changes(
    repo: ReviewRepo, state: TaskState, rev: str, log: list[LogEntry], task: dict[str, Any]
) -> list[str]:
    rec = state.current
    base = _base_of_round(log, rec.round) if rec is not None and rec.round > 1 else None
    base_sha = base.sha if base else None
    if base_sha is None:
        main = repo.rev(f"refs/heads/{repo.main_branch}") or repo.rev(repo.remote_ref(repo.main_branch))
        try:
            base_sha = repo.git("merge-base", main, rev) if main else None
        except Exception:
            base_sha = None
    before = _yaml(repo.read_blob(base_sha, f"{state.rel}/{TASK_FILE}")) if base_sha else {}
    old = {
        (str(r.get("device")), str(r.get("command"))): r.get("file")
        for r in before.get("recordings") or []
        if isinstance(r, dict)
    }
    rows = []
    for r in task.get("recordings") or []:
        if not isinstance(r, dict):
            continue
        key = (str(r.get("device")), str(r.get("command")))
        data = repo.read_blob(rev, f"{state.rel}/{r.get('file')}")
        size = f"{len(data):,} bytes" if data is not None else "missing"
        if key not in old:
            rows.append(f"- added `{_md(key[0])}: {_md(key[1])}` ({size})")
        else:
            was = repo.read_blob(base_sha or rev, f"{state.rel}/{old[key]}")
            if was != data:
                was_size = f"{len(was):,} bytes" if was is not None else "missing"
                rows.append(f"- changed `{_md(key[0])}: {_md(key[1])}` ({was_size} → {size})")
    current = {
        (str(r.get("device")), str(r.get("command")))
        for r in task.get("recordings") or []
        if isinstance(r, dict)
    }
    rows += [f"- removed `{_md(d)}: {_md(c)}`" for d, c in sorted(set(old) - current)]
    total = len(task.get("recordings") or [])
    return [
        f"**Recordings:** {total} in the task" + (":" if rows else "; none added or changed in this review."),
        "",
        *rows,
        *([""] if rows else []),
    ]


def finding_line(f: Finding, *, sealed: bool) -> str:
    """One validation finding as a list item; on a sealed task without its message, which may quote
    the gold it checked ("no recording for CORE_SW_01 'display ...'" names a golden command)."""
    if sealed:
        where = f"{f.file}:{f.line}" if f.line else f.file
        return f"- `{_md(where)}: {f.severity.value}[{f.code}]`"
    return f"- `{_md(f.render())}`"


def _validation(ts: TaskSet, repo: ReviewRepo, state: TaskState, rev: str) -> list[str]:
    """``ctb-author validate`` on the branch's version of the task (checked out in a scratch folder)."""
    import subprocess
    import tarfile
    import tempfile

    from ctbench.scoring.gold_check import PluginGoldCheck
    from ctbench.store import TaskRef
    from ctbench.validation import Validator

    out = ["### Validation", ""]
    prefix = repo.prefix if repo.prefix not in ("", ".") else ""
    with tempfile.TemporaryDirectory(prefix="ctb-pr-") as tmp:
        proc = subprocess.run(
            ["git", "-C", str(repo.workdir), "archive", "--format=tar", rev, *([prefix] if prefix else [])],
            capture_output=True,
            env=git_env(repo.workdir),  # the repository's filters and the like run nothing
        )
        if proc.returncode != 0:
            return out + ["Not run: the branch could not be checked out for validation.", ""]
        archive = Path(tmp) / "branch.tar"
        archive.write_bytes(proc.stdout)
        with tarfile.open(archive) as tar:
            tar.extractall(Path(tmp) / "tree", filter="data")
        root = Path(tmp) / "tree" / prefix if prefix else Path(tmp) / "tree"
        shadow = TaskSet(root=root, identity=ts.identity)
        folder = root / state.family.value / state.id
        # a plug-in family's gold is checked against the network by the family, as ctb-author validate does
        check = PluginGoldCheck(shadow)
        report = Validator(shadow, gold_check=check).run([TaskRef(state.id, state.family, folder)])
        sealed = (folder / SEALED_HIDDEN_FILE).is_file()
    errors = [f for f in report.errors if f.task in (state.id, None)]
    warnings = [f for f in report.warnings if f.task in (state.id, None)]
    verdict = "✅ passes" if not errors else "❌ fails"
    out.append(
        f"`ctb-author validate` on `{branch_name(state.id)}`: {verdict} "
        f"({len(errors)} error(s), {len(warnings)} warning(s))"
    )
    out.append("")
    for f in [*errors, *warnings][:12]:
        out.append(finding_line(f, sealed=sealed))
    if sealed and (errors or warnings):
        out += [
            "",
            "(messages not shown: the gold is sealed; `ctb-author validate` shows them to its recipients)",
        ]
    return out + ([""] if errors or warnings else [])


def _threads(state: TaskState, log: list[LogEntry]) -> list[str]:
    """Every round, every criterion: each ruling, each answer or concession, and each revision."""
    out = ["### Review thread, round by round", ""]
    revisions: dict[int, list[LogEntry]] = {}
    for e in reversed(log):  # oldest first
        if e.action == Action.REVISE.value and e.round is not None:
            revisions.setdefault(e.round, []).append(e)
    any_entry = False
    for r in state.records:
        out.append(f"**Round {r.round}** — reviewer {r.reviewer or 'not assigned'}, outcome {r.outcome}")
        out.append("")
        for c in CRITERIA:
            cr = r.criteria[c]
            note = cr.carry_note()
            if not cr.thread and not note:
                continue
            any_entry = True
            out.append(f"- {c.label}: {_MARK[cr.verdict]}" + (f" ({note})" if note else ""))
            for m in cr.thread:
                tag = m.verdict.value if m.role == Role.REVIEWER and m.verdict else (m.stance or "")
                out.append(
                    f"  - {m.who} ({m.role.value}{', ' + tag if tag else ''}, {m.when:%Y-%m-%d %H:%M}): "
                    f"{_md(m.text) or '—'}"
                )
        for e in revisions.get(r.round, []):
            any_entry = True
            parts = (e.get("parts") or "").replace(",", ", ") or "no reviewed part"
            who = e.get("author") or e.author  # the acting author (trailer), not whoever's clone committed
            out.append(f"- revision by {who} ({e.sha[:10]}): changed {parts}")
        out.append("")
    if not any_entry:
        out += ["No rulings yet.", ""]
    return out


def _open_disagreements(records: list[ReviewRecord]) -> list[str]:
    if not records:
        return []
    rec = records[-1]
    out = []
    for c in CRITERIA:
        cr = rec.criteria[c]
        if cr.verdict != Verdict.DISAGREE:
            continue
        out.append(f"- **{c.label}** (round {rec.round})")
        for m in cr.thread:
            tag = m.verdict.value if m.role == Role.REVIEWER and m.verdict else (m.stance or "")
            out.append(
                f"  - {m.who} ({m.role.value}{', ' + tag if tag else ''}, {m.when:%Y-%m-%d %H:%M}): "
                f"{_md(m.text)}"
            )
    return out + [""] if out else []


def _changes(repo: ReviewRepo, state: TaskState, rev: str, log: list[LogEntry]) -> list[str]:
    rec = state.current
    if rec is None:
        return ["No review round yet.", ""]
    base = _base_of_round(log, rec.round) if rec.round > 1 else None
    base_sha = base.sha if base else None
    label = f"round {base.round} ({base.sha[:10]})" if base else ""
    if base_sha is None:
        main = repo.rev(f"refs/heads/{repo.main_branch}") or repo.rev(repo.remote_ref(repo.main_branch))
        if main:
            try:
                base_sha = repo.git("merge-base", main, rev) or None
            except Exception:
                base_sha = None
            label = f"{repo.main_branch} ({(base_sha or '')[:10]})"
    after = snapshot(git_reader(repo, rev, state.rel))
    if base_sha is None or repo.read_blob(base_sha, f"{state.rel}/{TASK_FILE}") is None:
        return [
            f"New task: {len(after)} reviewed field(s) and recording(s), all new since "
            f"{label or 'the main branch'}.",
            "",
        ]
    before = snapshot(git_reader(repo, base_sha, state.rel))
    diff = field_diff(before, after)
    return [f"Relative to {label}:", "", *(diff or ["- no reviewed field changed"]), ""]
