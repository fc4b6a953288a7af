"""The CTBench leaderboard site's input rules, restated from its documented behaviour.

The site (womengjianhai/CTBench_leaderboard) refuses to build from a ``leaderboard.json`` or an
``agent-details.json`` that breaks these rules, raising ``ValueError``; this module states the same
rules in our own words so ctbench's export can be checked against them without the site's code.
One rule is a parameter here: the site pins the task counts of the paper's release (126 RCA, 108
path) as a guard against publishing scores of another release; :data:`PAPER_TASKS` is the default,
and a test of a smaller release passes the counts of that release.

What the site reads, beyond the rules: ``label`` (printed with the scores) and ``url`` (the source
column of its CSV), each row's ``harness``, ``model`` and both families' four figures.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from typing import Any

PAPER_TASKS = {"rca": 126, "path": 108}
TRACKS = ("rca", "path")
FIGURES = ("accuracy", "localization", "reasoning", "evidence")
EFFICIENCY = ("rounds", "latency", "tokens")
EXAMPLE_KINDS = {"synthetic", "recorded", "reference"}
PINNED_SOURCE = re.compile(r"https://github\.com/[\w.-]+/[\w.-]+/blob/[0-9a-f]{40}/.+")
PAPER_URL = re.compile(r"https://arxiv\.org/html/[0-9.v]+#[\w.]+")
PAPER_DISPLAY = re.compile(r"\d+(\.\d+)?k?")


class SiteRejects(ValueError):
    """The site would not build from this input."""


def _number(x: Any) -> bool:
    return type(x) in (int, float) and math.isfinite(x)


def check_leaderboard(data: Mapping[str, Any], tasks: Mapping[str, int] = PAPER_TASKS) -> None:
    """``leaderboard.json``: the release's task counts, one row per (harness, model), every figure of
    both tracks a finite percentage with a non-negative spread; plus the fields the site reads."""
    if data.get("tasks") != dict(tasks):
        raise SiteRejects(f"task counts {data.get('tasks')} are not the release's {dict(tasks)}")
    for key in ("label", "url"):
        if not isinstance(data.get(key), str):
            raise SiteRejects(f"no {key!r}: the site reads it")
    results = data.get("results") or []
    if not results:
        raise SiteRejects("no results")
    seen: set[tuple[str, str]] = set()
    for row in results:
        who = (row["harness"], row["model"])
        if who in seen:
            raise SiteRejects(f"{who} appears twice")
        seen.add(who)
        for track in TRACKS:
            if track not in row:
                raise SiteRejects(f"{who}: no {track} figures")
            for name in FIGURES:
                fig = row[track].get(name)
                if not isinstance(fig, Mapping) or not (_number(fig.get("mean")) and _number(fig.get("sd"))):
                    raise SiteRejects(f"{who} {track} {name}: mean and sd must be finite numbers")
                if not 0 <= fig["mean"] <= 100 or fig["sd"] < 0:
                    raise SiteRejects(f"{who} {track} {name}: mean outside 0-100 or negative sd")


def check_example(example: Any, agent: tuple[str, str] | None = None) -> None:
    """One worked example: its provenance (and the approvals that provenance needs), then its content."""
    if not isinstance(example, Mapping) or example.get("kind") not in EXAMPLE_KINDS:
        raise SiteRejects("an example must say whether it is synthetic, recorded or an expert reference")
    kind = example["kind"]
    approved = example.get("publicationApproved") is True
    if kind == "recorded":
        if agent is None or not approved:
            raise SiteRejects("a recorded example needs publication approval and must belong to an agent")
        if (example.get("harness"), example.get("model")) != agent:
            raise SiteRejects("a recorded example is attributed to another agent")
        if not example.get("sourceNote"):
            raise SiteRejects("a recorded example needs a source note")
    elif kind == "reference":
        if not approved or not example.get("sourceNote"):
            raise SiteRejects("a reference example needs publication approval and a source note")
        if example.get("harness") or example.get("model"):
            raise SiteRejects("a reference trace is an expert's, not an agent's")
        sources = example.get("sources") or []
        if not sources or any(
            not item.get("label") or not PINNED_SOURCE.fullmatch(item.get("url", "")) for item in sources
        ):
            raise SiteRejects("a reference example needs sources pinned to a GitHub commit")
    elif not str(example.get("id", "")).startswith("DEMO-"):
        raise SiteRejects("a synthetic example's id starts with DEMO-")
    for key in ("id", "title", "question", "finalAnswer"):
        if not isinstance(example.get(key), str) or not example[key].strip():
            raise SiteRejects(f"example field {key} is missing or blank")
    steps = example.get("steps")
    if not isinstance(steps, list) or not 1 <= len(steps) <= 100:
        raise SiteRejects("an example has 1 to 100 steps")
    for step in steps:
        for key in ("title", "command", "summary"):
            if not isinstance(step.get(key), str) or not step[key].strip():
                raise SiteRejects(f"a step's {key} is missing or blank")
        seen = step.get("observation")
        if kind != "reference" and (not isinstance(seen, str) or not seen.strip()):
            raise SiteRejects("recorded and synthetic steps show what was observed")
        if seen is not None and not isinstance(seen, str):
            raise SiteRejects("an observation is text or null")


def _check_metric(metric: Mapping[str, Any], key: str, total: int, source: Mapping[str, Any]) -> None:
    paper = metric.get("aggregation") == "paper-reported"
    observed = metric.get("observed")
    if paper:
        url = source.get("url", "")
        if source.get("type") != "paper" or not PAPER_URL.fullmatch(url) or metric.get("sourceUrl") != url:
            raise SiteRejects("paper-reported figures need the paper's URL, here and in the source")
        if observed is not None or metric.get("total") is not None:
            raise SiteRejects("paper-reported figures have no coverage")
    elif type(observed) is not int or not 0 <= observed <= total or metric.get("total") != total:
        raise SiteRejects(f"{key}: observed must be an integer 0..{total} and total {total}")
    if not metric.get("unit") or not metric.get("definition"):
        raise SiteRejects(f"{key}: needs a unit and a definition")
    status = metric.get("status")
    if status == "available":
        value = metric.get("value")
        if not _number(value) or value < 0 or (not paper and observed == 0):
            raise SiteRejects(
                f"{key}: an available figure is a finite non-negative number, observed at least once"
            )
        if paper:
            shown = metric.get("displayValue", "")
            if not PAPER_DISPLAY.fullmatch(shown):
                raise SiteRejects(f"{key}: a paper display value keeps the reported digits")
            scaled = float(shown.rstrip("k")) * (1000 if shown.endswith("k") else 1)
            if not math.isclose(scaled, value) or (shown.endswith("k") and key != "tokens"):
                raise SiteRejects(f"{key}: the display value is not the value")
    elif status != "unavailable" or metric.get("value") is not None or not metric.get("reason"):
        raise SiteRejects(f"{key}: an unavailable figure is null and says why")


def check_agent_details(details: Mapping[str, Any], board: Mapping[str, Any]) -> None:
    """``agent-details.json`` against the leaderboard it accompanies."""
    if details.get("schemaVersion") != 1:
        raise SiteRejects("agent details: schema version 1 only")
    source = details.get("efficiencySource") or {}
    if not source.get("label") or not source.get("note"):
        raise SiteRejects("efficiency figures need their provenance (label and note)")
    expected = {(r["harness"], r["model"]) for r in board["results"]}
    found: set[tuple[str, str]] = set()
    for agent in details.get("agents", []):
        who = (agent["harness"], agent["model"])
        if who in found:
            raise SiteRejects(f"{who}: details twice")
        found.add(who)
        for track, total in board["tasks"].items():
            for key in EFFICIENCY:
                _check_metric(agent["efficiency"][track][key], key, total, source)
            example = (agent.get("examples") or {}).get(track)
            if example is not None:
                check_example(example, who)
    if found != expected:
        raise SiteRejects("the agents with details are not the leaderboard's agents")
    for track, example in (details.get("examples") or {}).items():
        if track not in board["tasks"]:
            raise SiteRejects(f"an example for unknown track {track}")
        check_example(example)
