"""Realism checks: a recording must parse the way output of the real device parses.

The network-automation community keeps TextFSM parsers for the common show/display commands of each
vendor (ntc-templates). Those parsers were written against thousands of real captures, so when a
recording that claims to be ``display interface brief`` on a Huawei switch does not parse with the
Huawei template, the recording was almost certainly typed by hand and got the format wrong. That is
the cheapest realism check there is, and it catches exactly the mistakes a reviewer would otherwise
have to spot by eye (columns out of place, a header from the wrong OS release, a missing legend).

Template selection follows the ntc-templates index (platform + command regex with ``[[...]]``
completion), with one deliberate difference: the index regex must match the *whole* canonical
command. ``clitable`` itself matches a prefix, which would parse ``show ip route 10.1.1.1`` (a
"Routing entry for" block) with the routing-*table* template and flag a perfectly real recording.
Filtered recordings (``| include``) are skipped for the same reason: the filter changes the format.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

import textfsm
from textfsm import clitable, texttable

from ctbench.dialects import os_families
from ctbench.errors import CtbError
from ctbench.model import Network, TaskSpec
from ctbench.store import RecordingAccessError, TaskRef, TaskSet, safe_recording_path, set_relative
from ctbench.validation import Finding, Report, Severity, resolve_targets


def _template_dir() -> Path:
    env = os.environ.get("NTC_TEMPLATES_DIR")
    if env:
        return Path(env)
    try:
        import ntc_templates
    except ImportError as exc:  # the CLI turns this into "install the realism extra"
        raise ImportError("ntc-templates is not installed") from exc
    return Path(ntc_templates.__file__).parent / "templates"


def _completion(match: re.Match[str]) -> str:
    """``sh[[ow]]`` -> ``sh(o(w)?)?``, exactly as clitable expands the index."""
    word = match.group()[2:-2]
    return "(" + "(".join(re.escape(c) for c in word) + ")?" * len(word)


@dataclass(frozen=True)
class TemplateMatch:
    platform: str
    command: str
    templates: str  # one file name or several joined by ':' (clitable merges them on their keys)
    regex: str


@dataclass(frozen=True)
class ParseOutcome:
    """What a template made of a recording: rows on success, the failing input line otherwise."""

    template: TemplateMatch
    rows: list[dict[str, object]]
    error: str | None = None
    line: int | None = None

    @property
    def ok(self) -> bool:
        return self.error is None and bool(self.rows)


class TemplateIndex:
    """The ntc-templates index, looked up by (platform, full canonical command)."""

    def __init__(self, template_dir: Path | None = None) -> None:
        self.template_dir = Path(template_dir) if template_dir else _template_dir()
        if not (self.template_dir / "index").is_file():
            raise CtbError(f"{self.template_dir}: no ntc-templates index file found")

    @cached_property
    def _rows(self) -> list[tuple[re.Pattern[str], re.Pattern[str], str, str]]:
        table = texttable.TextTable()
        with open(self.template_dir / "index", encoding="utf-8") as fh:
            table.CsvToTable(fh)  # strips comments and blank lines itself
        out = []
        for row in table:
            platform = str(row["Platform"]).strip()
            if not any(re.fullmatch(platform, p) for p in os_families()):
                continue
            raw = str(row["Command"]).strip()
            regex = re.sub(r"\[\[.+?\]\]", _completion, raw)
            out.append((re.compile(platform), re.compile(regex), str(row["Template"]).strip(), raw))
        return out

    def find(self, platform: str, command: str) -> TemplateMatch | None:
        """First index row whose platform and command regexes match the whole strings."""
        command = " ".join(command.split())
        for plat_re, cmd_re, templates, raw in self._rows:
            if plat_re.fullmatch(platform) and cmd_re.fullmatch(command):
                return TemplateMatch(platform, command, templates, raw)
        return None

    def parse(self, match: TemplateMatch, text: str) -> ParseOutcome:
        """Parse like netmiko does (LF line ends); keep the input line where a template gave up."""
        text = text.replace("\r\n", "\n").replace("\r", "\n")
        files = [self.template_dir / name for name in match.templates.split(":")]
        try:
            rows: list[dict[str, object]] | None = None
            for path in files:
                with open(path, encoding="utf-8") as fh:
                    fsm = textfsm.TextFSM(fh)
                records = fsm.ParseText(text)
                part = [dict(zip((h.lower() for h in fsm.header), rec, strict=True)) for rec in records]
                if rows is None:
                    rows = part
                else:  # multi-template entries add columns to the first table's rows
                    for base, extra in zip(rows, part, strict=False):
                        base.update({k: v for k, v in extra.items() if k not in base})
            return ParseOutcome(match, rows or [])
        except textfsm.TextFSMError as exc:
            return ParseOutcome(match, [], error=str(exc), line=_failing_line(str(exc), text))
        except (clitable.CliTableError, texttable.TableError, OSError) as exc:
            return ParseOutcome(match, [], error=f"template {match.templates}: {exc}")


def _failing_line(message: str, text: str) -> int | None:
    m = re.search(r"Input Line: (.*)$", message, re.DOTALL)
    if not m:
        return None
    needle = m.group(1).rstrip("\n")
    for i, line in enumerate(text.split("\n"), start=1):
        if line == needle:
            return i
    return None


def parse_recording(index: TemplateIndex, platform: str, command: str, data: bytes) -> ParseOutcome | None:
    """Parse one recording with its template; None when no template covers the command."""
    if "|" in command:
        return None
    match = index.find(platform, command)
    if match is None:
        return None
    return index.parse(match, data.decode("utf-8", "replace"))


def check_task(ts: TaskSet, ref: TaskRef, index: TemplateIndex, report: Report) -> int:
    """Append a finding for every recording of one task that its template rejects; returns recordings parsed."""
    try:
        task: TaskSpec = ts.load_task(ref)
        net: Network = ts.network(task.network)
    except CtbError:
        return 0  # the structural validator already reports broken task files
    devices = net.device_map()
    parsed = 0
    for rec in task.recordings:
        dev = devices.get(rec.device)
        if dev is None or dev.os is None:
            continue
        try:
            path = safe_recording_path(ref.path, rec.file)
            data = path.read_bytes()
        except (RecordingAccessError, OSError):
            continue  # reported by the structural validator
        outcome = parse_recording(index, dev.os, rec.command, data)
        if outcome is None:
            continue
        parsed += 1
        where = set_relative(ts.root, path)
        what = f"{rec.device} ({dev.os}) {rec.command!r}"
        if outcome.error is not None:
            report.findings.append(
                Finding(
                    severity=Severity.ERROR,
                    code="realism-parse",
                    file=where,
                    line=outcome.line,
                    task=ref.id,
                    message=f"{what} does not parse with ntc-templates {outcome.template.templates}: "
                    f"{_short(outcome.error)}",
                    expected="output in the device's real format",
                )
            )
        elif not outcome.rows and data.strip():
            report.findings.append(
                Finding(
                    severity=Severity.WARNING,
                    code="realism-empty",
                    file=where,
                    line=1,
                    task=ref.id,
                    message=f"{what}: ntc-templates {outcome.template.templates} finds no rows in non-empty output",
                    expected="rows the scenario implies (fine only for real 'nothing configured' answers)",
                )
            )
    return parsed


def _short(message: str) -> str:
    return " ".join(message.split())[:200]


def check_realism(paths: Sequence[str], report: Report, *, template_dir: Path | None = None) -> int:
    """Run the TextFSM check over the tasks ``paths`` name; returns how many recordings had a template."""
    ts, refs = resolve_targets(paths)
    return check_realism_tasks(ts, refs, report, template_dir=template_dir)


def check_realism_tasks(
    ts: TaskSet, refs: Sequence[TaskRef] | None, report: Report, *, template_dir: Path | None = None
) -> int:
    """The TextFSM check over targets already resolved (``None``: every task of ``ts``).

    ``ctb-author validate --realism`` resolves its paths once and hands the same task set (with its
    cached networks) to the validator and to this check, instead of opening the set twice.
    """
    index = TemplateIndex(template_dir)
    total = 0
    for ref in refs if refs is not None else ts.refs():
        total += check_task(ts, ref, index, report)
    return total
