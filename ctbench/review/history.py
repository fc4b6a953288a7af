"""Review statistics from the records and the git history (paper section 3.2 and appendix A.3).

The paper reports the pipeline's numbers: 359 candidates -> 234 retained (RCA 205 -> 126, 61.46%;
path 154 -> 108, 70.13%; 65.18% overall), 154 of the retained tasks (65.81%) revised before
consensus, and an expert blind baseline (80.95% RCA, 96.30% path). The same numbers come out of
ctbench's history, plus what a maintainer needs to run the process: rounds and time per task, each
reviewer's blind accuracy, and agreement per criterion.

Definitions (fixed here because the paper leaves them implicit):

- *candidate*: a task with review records (it was submitted through ``ctb-review``), or with a submit
  commit in git history even if its folder was later deleted; *retained*: approved, and its audit
  passes (an approved task whose audit fails is counted apart, never as retained); yield = retained /
  candidates. A task with no review record is *never reviewed*, whatever its status line says (a
  hand-edited ``approved`` is not a review), and is its own line, outside the yields.
- *revised before consensus*: an approved task whose approval came after round 1 of its cycle.
- *blind accuracy*: exact match of the blind answer against the gold as it stood at the reveal,
  scored by the evaluator (the reviewer's first reveal of each blind solve).
- *Cohen's kappa (author vs reviewer)*, per criterion, over every verdict a reviewer gave in a round:
  the reviewer rates agree/disagree; the author's rating is "agree" (submitting asserts every
  criterion holds) unless the author conceded that criterion in that round.
- *Krippendorff's alpha*, per criterion, over tasks seen by two or more reviewers: each reviewer's
  first verdict on the criterion (nominal data; needs the ``krippendorff`` package).
"""

from __future__ import annotations

import math
import statistics
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ctbench.approval.states import CRITERIA, Action, Role, Verdict
from ctbench.errors import CtbError
from ctbench.model import Family, Status
from ctbench.review.gitflow import ReviewRepo
from ctbench.review.view import TaskState, collect
from ctbench.store import TaskSet
from ctbench.tables import Table


def _pct(num: int, den: int) -> float | None:
    return round(100.0 * num / den, 2) if den else None


def cohen_kappa(pairs: Sequence[tuple[str, str]]) -> float | None:
    """Cohen's kappa for two raters over nominal labels; None when undefined (no items, or no variation)."""
    n = len(pairs)
    if n == 0:
        return None
    observed = sum(1 for a, b in pairs if a == b) / n
    left = Counter(a for a, _ in pairs)
    right = Counter(b for _, b in pairs)
    expected = sum(left[k] * right[k] for k in set(left) | set(right)) / (n * n)
    if math.isclose(expected, 1.0):
        return None
    return (observed - expected) / (1 - expected)


def krippendorff_alpha(units: Sequence[Sequence[str]]) -> float | None:
    """Nominal alpha over units (each the list of ratings one task got); None when not computable."""
    usable = [u for u in units if len(u) >= 2]
    if not usable:
        return None
    try:
        import krippendorff
        import numpy as np
    except ImportError:
        return None
    raters = max(len(u) for u in usable)
    codes = {"agree": 1.0, "disagree": 0.0}
    data = np.full((raters, len(usable)), np.nan)
    for j, unit in enumerate(usable):
        for i, value in enumerate(unit):
            data[i, j] = codes[value]
    values = {v for u in usable for v in u}
    if len(values) < 2:
        return None  # everybody gave the same rating: alpha is undefined (0/0)
    try:
        alpha = float(krippendorff.alpha(reliability_data=data, level_of_measurement="nominal"))
    except (ValueError, ZeroDivisionError):
        return None
    return None if math.isnan(alpha) else alpha


@dataclass
class ReviewStats:
    candidates: dict[str, int] = field(default_factory=dict)
    retained: dict[str, int] = field(default_factory=dict)
    discarded: dict[str, int] = field(default_factory=dict)
    in_progress: dict[str, int] = field(default_factory=dict)
    revised: dict[str, int] = field(default_factory=dict)
    rounds: dict[str, list[int]] = field(default_factory=dict)
    minutes: dict[str, list[float]] = field(default_factory=dict)
    blind: dict[str, list[bool]] = field(default_factory=dict)
    blind_by_reviewer: dict[str, list[bool]] = field(default_factory=dict)
    kappa_pairs: dict[str, list[tuple[str, str]]] = field(default_factory=dict)
    alpha_units: dict[str, list[list[str]]] = field(default_factory=dict)
    states: Counter[str] = field(default_factory=Counter)
    reasons: list[tuple[str, str]] = field(default_factory=list)
    never_reviewed: dict[str, int] = field(default_factory=dict)
    audit_failed: dict[str, int] = field(default_factory=dict)
    audit_problems: list[tuple[str, str]] = field(default_factory=list)
    rereview: list[tuple[str, str]] = field(default_factory=list)
    """Tasks approved once and changed (or set back to draft) since: (id, reason)."""
    seed: bool = False
    """The task set says its tasks are unreviewed seed tasks (ctbench.yaml review.unreviewed_seed)."""
    blindness: Counter[str] = field(default_factory=Counter)
    """Tasks with a blind solve, by how blindness was kept: "seal" (sealed gold) or "honour" (plain gold)."""

    # ------------------------------------------------------------------ derived numbers

    def yield_pct(self, fam: str | None = None) -> float | None:
        if fam is None:
            return _pct(sum(self.retained.values()), sum(self.candidates.values()))
        return _pct(self.retained.get(fam, 0), self.candidates.get(fam, 0))

    def agreement(self) -> list[dict[str, Any]]:
        out = []
        for crit in CRITERIA:
            pairs = self.kappa_pairs.get(crit.value, [])
            units = self.alpha_units.get(crit.value, [])
            observed = _pct(sum(1 for a, b in pairs if a == b), len(pairs))
            kappa = cohen_kappa(pairs)
            alpha = krippendorff_alpha(units)
            out.append(
                {
                    "criterion": crit.value,
                    "verdicts": len(pairs),
                    "observed_agreement_pct": observed,
                    "cohen_kappa": None if kappa is None else round(kappa, 4),
                    "multi_reviewer_tasks": sum(1 for u in units if len(u) >= 2),
                    "krippendorff_alpha": None if alpha is None else round(alpha, 4),
                }
            )
        return out

    def to_json(self) -> dict[str, Any]:
        fams = [f.value for f in Family]  # every installed family, plug-ins too
        per_family = {}
        for fam in fams:
            rounds = self.rounds.get(fam, [])
            minutes = self.minutes.get(fam, [])
            blind = self.blind.get(fam, [])
            per_family[fam] = {
                "candidates": self.candidates.get(fam, 0),
                "retained": self.retained.get(fam, 0),
                "discarded": self.discarded.get(fam, 0),
                "in_progress": self.in_progress.get(fam, 0),
                "audit_failed": self.audit_failed.get(fam, 0),
                "never_reviewed": self.never_reviewed.get(fam, 0),
                "yield_pct": self.yield_pct(fam),
                "revised_before_consensus": self.revised.get(fam, 0),
                "revised_pct": _pct(self.revised.get(fam, 0), self.retained.get(fam, 0)),
                "rounds_mean": round(statistics.fmean(rounds), 2) if rounds else None,
                "rounds_max": max(rounds) if rounds else None,
                "minutes_mean": round(statistics.fmean(minutes), 1) if minutes else None,
                "minutes_median": round(statistics.median(minutes), 1) if minutes else None,
                "blind_solves": len(blind),
                "blind_exact": sum(blind),
                "blind_accuracy_pct": _pct(sum(blind), len(blind)),
            }
        total_c = sum(self.candidates.values())
        total_r = sum(self.retained.values())
        return {
            "families": per_family,
            "total": {
                "candidates": total_c,
                "retained": total_r,
                "discarded": sum(self.discarded.values()),
                "yield_pct": self.yield_pct(),
                "revised_before_consensus": sum(self.revised.values()),
                "revised_pct": _pct(sum(self.revised.values()), total_r),
                "audit_failed": sum(self.audit_failed.values()),
                "never_reviewed": sum(self.never_reviewed.values()),
                "blind_by_seal": self.blindness.get("seal", 0),
                "blind_by_honour": self.blindness.get("honour", 0),
            },
            "unreviewed_seed": self.seed,
            "needs_rereview": [{"task": t, "reason": r} for t, r in self.rereview],
            "audit_failures": [{"task": t, "problem": p} for t, p in self.audit_problems],
            "states": dict(sorted(self.states.items())),
            "reviewers": {
                name: {
                    "blind_solves": len(v),
                    "blind_exact": sum(v),
                    "blind_accuracy_pct": _pct(sum(v), len(v)),
                }
                for name, v in sorted(self.blind_by_reviewer.items())
            },
            "agreement": self.agreement(),
            "discarded": [{"task": t, "reason": r} for t, r in self.reasons],
        }

    def tables(self) -> list[Table]:
        data = self.to_json()
        fams = data["families"]
        never = data["total"]["never_reviewed"]
        note = (
            "Over tasks with review records; approved tasks whose audit fails are not retained. "
            "Paper: RCA 205 -> 126 (61.46%), path 154 -> 108 (70.13%), 359 -> 234 (65.18%)."
        )
        if never:
            note += f" {never} task(s) never reviewed (no review record)" + (
                ": the set's unreviewed seed tasks (ctbench.yaml review.unreviewed_seed)."
                if self.seed
                else "; they are not counted above."
            )
        if self.blindness:
            note += (
                f" Blind solves: {self.blindness.get('seal', 0)} task(s) blind by seal, "
                f"{self.blindness.get('honour', 0)} blind by honour (gold readable in the reviewer's clone)."
            )
        for task_id, problem in self.audit_problems:
            note += f" Audit failed: {task_id} ({problem})."
        for task_id, reason in self.rereview:
            note += f" Needs re-review: {task_id} ({reason})."
        t = Table(
            title="Review yields (candidates -> retained)",
            key="review_yields",
            columns=[
                "family",
                "candidates",
                "retained",
                "discarded",
                "in progress",
                "audit failed",
                "yield %",
            ],
            note=note,
        )
        for fam, v in fams.items():
            t.add(
                fam,
                v["candidates"],
                v["retained"],
                v["discarded"],
                v["in_progress"],
                v["audit_failed"],
                v["yield_pct"],
            )
        tot = data["total"]
        t.add(
            "total",
            tot["candidates"],
            tot["retained"],
            tot["discarded"],
            sum(v["in_progress"] for v in fams.values()),
            tot["audit_failed"],
            tot["yield_pct"],
        )

        r = Table(
            title="Revision and effort",
            key="review_effort",
            columns=[
                "family",
                "revised before consensus",
                "% of retained",
                "rounds (mean)",
                "rounds (max)",
                "minutes/task (mean)",
                "minutes/task (median)",
            ],
            note="Paper: 154 of 234 retained tasks (65.81%) were revised before consensus.",
        )
        for fam, v in fams.items():
            r.add(
                fam,
                v["revised_before_consensus"],
                v["revised_pct"],
                v["rounds_mean"],
                v["rounds_max"],
                v["minutes_mean"],
                v["minutes_median"],
            )
        b = Table(
            title="Reviewers' blind accuracy (exact match vs gold)",
            key="review_blind",
            columns=["family", "blind solves", "exact", "accuracy %"],
            note="Paper's expert baseline: 80.95% RCA, 96.30% path.",
        )
        for fam, v in fams.items():
            b.add(fam, v["blind_solves"], v["blind_exact"], v["blind_accuracy_pct"])
        for name, v in data["reviewers"].items():
            b.add(f"  {name}", v["blind_solves"], v["blind_exact"], v["blind_accuracy_pct"])
        a = Table(
            title="Agreement per criterion",
            key="review_agreement",
            columns=[
                "criterion",
                "verdicts",
                "observed %",
                "Cohen's kappa (author vs reviewer)",
                "tasks with 2+ reviewers",
                "Krippendorff's alpha",
            ],
            note="– = not computable (too few items, or no variation in the ratings).",
        )
        for row in data["agreement"]:
            a.add(
                row["criterion"].replace("_", " "),
                row["verdicts"],
                row["observed_agreement_pct"],
                row["cohen_kappa"],
                row["multi_reviewer_tasks"],
                row["krippendorff_alpha"],
            )
        n = Table(
            title="Never reviewed (no review record)",
            key="review_never",
            columns=["family", "tasks"],
            note="The set's unreviewed seed tasks (ctbench.yaml review.unreviewed_seed)."
            if self.seed
            else "Drafts and tasks whose status was set by hand: submit them with ctb-review submit.",
        )
        for fam, v in fams.items():
            n.add(fam, v["never_reviewed"])
        n.add("total", never)
        return [t, n, r, b, a]


def compute(
    states: Sequence[TaskState],
    history_candidates: dict[str, str] | None = None,
    *,
    audit_failed: dict[str, str] | None = None,
    seed: bool = False,
) -> ReviewStats:
    """Statistics over task states; ``history_candidates`` adds submitted tasks whose folders are gone.

    ``audit_failed`` (task id -> first problem) names approved tasks whose audit fails: they count as
    candidates, never as retained.
    """
    st = ReviewStats(seed=seed)
    failed = audit_failed or {}
    for family in Family:  # every installed family, plug-ins too
        for d in (
            st.candidates,
            st.retained,
            st.discarded,
            st.in_progress,
            st.revised,
            st.never_reviewed,
            st.audit_failed,
        ):
            d[family.value] = 0
    seen = set()
    for s in states:
        fam = s.family.value
        seen.add(s.id)
        st.states[s.status.value] += 1
        if not s.records:
            st.never_reviewed[fam] += 1
            continue
        st.candidates[fam] += 1
        if s.status == Status.APPROVED and s.id in failed:
            st.audit_failed[fam] += 1
            st.audit_problems.append((s.id, failed[s.id]))
        elif s.status == Status.APPROVED:
            st.retained[fam] += 1
        elif s.status == Status.DISCARDED:
            st.discarded[fam] += 1
            if s.records and s.records[-1].discard_reason:
                st.reasons.append((s.id, s.records[-1].discard_reason))
        else:
            st.in_progress[fam] += 1
        if s.records:
            st.rounds.setdefault(fam, []).append(len(s.records))
            spent = sum(r.time_spent_s for r in s.records)
            if spent > 0:
                st.minutes.setdefault(fam, []).append(spent / 60.0)
        if s.status == Status.APPROVED and s.id not in failed:
            start = 0
            for r in s.records[:-1]:
                if r.outcome == "approved":
                    start = r.round
            if s.records[-1].round - start > 1:
                st.revised[fam] += 1
        first_reveal: dict[str, bool] = {}
        first_verdict: dict[tuple[str, str], str] = {}
        for r in s.records:
            if r.comparison is not None and r.reviewer and r.reviewer not in first_reveal:
                first_reveal[r.reviewer] = r.comparison.exact
            for crit in CRITERIA:
                cr = r.criteria[crit]
                rulings = [
                    c
                    for c in cr.thread
                    if c.role == Role.REVIEWER and c.verdict in (Verdict.AGREE, Verdict.DISAGREE)
                ]
                if not rulings or cr.carried:
                    continue
                first, final = rulings[0], rulings[-1]
                assert first.verdict is not None and final.verdict is not None
                conceded = any(c.role == Role.AUTHOR and c.stance == "concede" for c in cr.thread)
                author = "disagree" if conceded else "agree"
                st.kappa_pairs.setdefault(crit.value, []).append((final.verdict.value, author))
                first_verdict.setdefault((final.who, crit.value), first.verdict.value)
        for reviewer, exact in first_reveal.items():
            st.blind.setdefault(fam, []).append(exact)
            st.blind_by_reviewer.setdefault(reviewer, []).append(exact)
        per_crit: dict[str, list[str]] = defaultdict(list)
        for (_who, crit_name), value in first_verdict.items():
            per_crit[crit_name].append(value)
        for crit_name, values in per_crit.items():
            st.alpha_units.setdefault(crit_name, []).append(values)
    for task_id, fam in (history_candidates or {}).items():
        if task_id not in seen and fam in st.candidates:
            st.candidates[fam] += 1
            st.discarded[fam] += 1
            st.reasons.append((task_id, "task folder removed after review"))
    return st


def submitted_in_history(repo: ReviewRepo) -> dict[str, str]:
    """task id -> family for every task with a submit commit on any branch (deleted folders included)."""
    out: dict[str, str] = {}
    for e in repo.log("--all"):
        if e.action == Action.SUBMIT.value and e.task:
            fam = e.get("family")
            if fam in {f.value for f in Family}:  # every installed family, topology and plug-ins too
                out.setdefault(e.task, fam)
    return out


def open_repo(ts: TaskSet) -> ReviewRepo | None:
    try:
        return ReviewRepo(ts)
    except CtbError:  # not in a git repository: the records alone
        return None


def review_stats(ts: TaskSet, repo: ReviewRepo | None = None, *, use_git: bool = True) -> ReviewStats:
    """Statistics of a task set; from git as well when it is in a repository (``repo`` or found)."""
    if repo is None and use_git:
        repo = open_repo(ts)
    states = collect(ts, repo)
    failed: dict[str, str] = {}
    if repo is not None:
        from ctbench.review.audit import audit_task

        for s in states:
            if s.status == Status.APPROVED and s.records:
                item = audit_task(ts, repo, s)
                if not item.ok:
                    failed[s.id] = item.problems[0] if item.problems else "audit failed"
    st = compute(
        states,
        submitted_in_history(repo) if repo is not None else None,
        audit_failed=failed,
        seed=ts.config.review.unreviewed_seed,
    )
    from ctbench.approval.check import rereview_reason
    from ctbench.review.audit import blindness_of

    for s in states:
        if any(r.blind is not None for r in s.records):
            st.blindness[blindness_of(ts, repo, s)] += 1
    for s in states:
        if s.rev is None and s.records and s.records[-1].outcome == "approved":
            why = rereview_reason(ts, ts.ref(s.id))
            if why:
                st.rereview.append((s.id, why))
    return st


def review_counts(ts: TaskSet) -> dict[str, dict[str, int]]:
    """Candidates per family for ``ctb-author stats`` (tasks ever submitted, from records and history)."""
    st = review_stats(ts)
    return {fam: {"candidates": n} for fam, n in st.candidates.items()}
