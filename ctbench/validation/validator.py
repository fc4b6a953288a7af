"""Task validation: what a reviewer would otherwise catch by hand, with file and line for each finding.

Fast path first: every file is read with the C YAML loader and checked against the models; only files
that have findings are re-read in round-trip mode to put a line number on them. Recording text is
read only where a check needs it (an RCA object that is neither an interface nor a known address is
looked for in the node's own recordings).
"""

from __future__ import annotations

import ipaddress
import os
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from ctbench.derived import derive, mismatches
from ctbench.errors import CtbError
from ctbench.model import Device, Family, HiddenSpec, Network, PathHop, TaskSpec
from ctbench.store import (
    CONFIG_FILE,
    HIDDEN_FILE,
    RECORDINGS_DIR,
    SEALED_HIDDEN_FILE,
    TASK_FILE,
    TAXONOMY_FILE,
    RecordingAccessError,
    TaskRef,
    TaskSet,
    check_recording_rel,
    safe_recording_path,
    scan_recordings,
    set_relative,
)
from ctbench.taxonomy import TaskSetConfig, Taxonomy
from ctbench.validation.family_gold import FamilyGoldCheck
from ctbench.validation.links import link_problems
from ctbench.yamlio import YamlFileError, is_leftover_temp, line_of, load_document, load_fast, read_text


class Severity(StrEnum):
    ERROR = "error"
    WARNING = "warning"


class Finding(BaseModel):
    severity: Severity
    code: str
    file: str
    line: int | None = None
    message: str
    expected: str = ""
    task: str | None = None
    loc: list[str | int] = []

    def render(self) -> str:
        where = f"{self.file}:{self.line}" if self.line else self.file
        tail = f" (expected {self.expected})" if self.expected else ""
        return f"{where}: {self.severity.value}[{self.code}]: {self.message}{tail}"


@dataclass
class Report:
    findings: list[Finding] = field(default_factory=list)
    tasks_checked: int = 0

    @property
    def errors(self) -> list[Finding]:
        return [f for f in self.findings if f.severity == Severity.ERROR]

    @property
    def warnings(self) -> list[Finding]:
        return [f for f in self.findings if f.severity == Severity.WARNING]

    @property
    def tasks_with_errors(self) -> set[str]:
        """Ids of the tasks with an error of their own (set-level errors are in :attr:`set_errors`)."""
        return {f.task for f in self.errors if f.task}

    @property
    def set_errors(self) -> list[Finding]:
        """Errors in set-level files (configuration, taxonomy, a network): they can break every task."""
        return [f for f in self.errors if not f.task]

    def task_errors(self, task_id: str) -> list[Finding]:
        return [f for f in self.errors if f.task == task_id]

    def to_json(self) -> dict[str, Any]:
        return {
            "tasks_checked": self.tasks_checked,
            "errors": len(self.errors),
            "warnings": len(self.warnings),
            "findings": [f.model_dump(mode="json", exclude={"loc"}) for f in self.findings],
        }


_IFACE_RE = re.compile(
    r"^(?:[A-Za-z][A-Za-z-]*\d+(?:[/:.]\d+)*|(?:ge|xe|et|fe|ae|lo|irb|em|me|fxp|reth|vlan)-?\d*(?:[/.:]\d+)*)$",
    re.IGNORECASE,
)


def _is_address(text: str) -> bool:
    try:
        if "/" in text:
            ipaddress.ip_network(text, strict=False)
        else:
            ipaddress.ip_address(text)
        return True
    except ValueError:
        return False


def _known_address(obj: str, known: set[str]) -> bool:
    """An address owned in the network, or a prefix that contains one (a route's destination)."""
    if obj.split("/")[0] in known:
        return True
    if "/" not in obj:
        return False
    net = ipaddress.ip_network(obj, strict=False)
    for addr in known:
        try:
            if ipaddress.ip_address(addr) in net:
                return True
        except ValueError:
            continue
    return False


MAX_RECORDING_BYTES = 1_000_000
"""A recording larger than this is warned about: the replay shows at most this much of one answer
(``ReplayEngine.max_output``), and real captures are tens of kilobytes (the largest public one is 35 KB)."""

MAX_TASK_FILE_BYTES = 256 * 1024
"""A task.yaml or hidden.yaml larger than this is warned about (real ones are a few kilobytes)."""


def _file_size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0


def _size(n: int) -> str:
    return f"{n / 1_000_000:.1f} MB" if n >= 1_000_000 else f"{n / 1000:.0f} KB"


class _Ctx:
    """Collects findings for one file and attaches line numbers lazily."""

    def __init__(self, report: Report, root: Path, path: Path, task: str | None) -> None:
        self.report, self.root, self.path, self.task = report, root, path, task
        self.pending: list[Finding] = []

    def rel(self) -> str:
        return set_relative(self.root, self.path)

    def add(
        self,
        severity: Severity,
        code: str,
        message: str,
        *,
        loc: Sequence[str | int] = (),
        expected: str = "",
        line: int | None = None,
    ) -> None:
        self.pending.append(
            Finding(
                severity=severity,
                code=code,
                file=self.rel(),
                line=line,
                message=message,
                expected=expected,
                task=self.task,
                loc=list(loc),
            )
        )

    def error(self, code: str, message: str, **kw: Any) -> None:
        self.add(Severity.ERROR, code, message, **kw)

    def warn(self, code: str, message: str, **kw: Any) -> None:
        self.add(Severity.WARNING, code, message, **kw)

    def flush(self) -> None:
        if not self.pending:
            return
        doc = None
        if any(f.line is None and f.loc for f in self.pending) and self.path.is_file():
            try:
                doc = load_document(self.path)
            except CtbError:
                doc = None
        for f in self.pending:
            if f.line is None and doc is not None:
                f.line = line_of(doc, f.loc)
        self.report.findings.extend(self.pending)
        self.pending = []


def _schema_errors(ctx: _Ctx, exc: ValidationError, what: str) -> None:
    for err in exc.errors():
        loc = [p for p in err["loc"] if not (isinstance(p, str) and p.startswith("function-"))]
        dotted = ".".join(str(p) for p in loc) or "(top level)"
        kind = err["type"]
        if kind == "missing":
            ctx.error(
                "schema",
                f"{dotted}: required field is missing",
                loc=loc[:-1],
                expected=f"a value for {dotted} in {what}",
            )
        elif kind == "extra_forbidden":
            ctx.error("schema", f"{dotted}: unknown field", loc=loc, expected=f"only the fields of {what}")
        else:
            got = err.get("input")
            got_s = repr(got) if not isinstance(got, dict | list) else type(got).__name__
            ctx.error("schema", f"{dotted}: {err['msg']} (found {got_s[:80]})", loc=loc)


def _load_model(ctx: _Ctx, model: type[BaseModel], what: str) -> tuple[Any, str | None]:
    """Returns (model or None, raw text or None). Reports unreadable, broken or mistyped files."""
    if not ctx.path.exists():
        ctx.error("missing-file", f"{ctx.path.name} is missing", expected=f"a {what} file")
        return None, None
    try:
        text = read_text(ctx.path)
        data = load_fast(ctx.path, text)
    except YamlFileError as exc:
        ctx.error("yaml", exc.detail, line=exc.line)
        return None, None
    if data is None:
        ctx.error("empty-file", f"{ctx.path.name} is empty", expected=f"a {what} mapping")
        return None, text
    if not isinstance(data, dict):
        ctx.error("schema", f"top level is a {type(data).__name__}", expected=f"a mapping ({what})", line=1)
        return None, text
    try:
        return model.model_validate(data), text
    except ValidationError as exc:
        _schema_errors(ctx, exc, what)
        return None, text


class Validator:
    """Validates a task set or a selection of its tasks.

    ``gold_check`` checks a plug-in family's gold against the network (:mod:`.family_gold`); the
    tools above the core pass ``ctbench.scoring.gold_check.PluginGoldCheck``.
    """

    def __init__(self, tasks: TaskSet, *, gold_check: FamilyGoldCheck | None = None) -> None:
        self.ts = tasks
        self.gold_check = gold_check
        self.report = Report()
        self.config: TaskSetConfig | None = None
        self.taxonomy: Taxonomy | None = None
        self.networks: dict[str, Network | None] = {}
        self.vendors = tasks.vendors
        self.golds: dict[str, tuple[str, str, tuple[str, ...]]] = {}
        """task id -> (network, family, sorted gold lines), for the duplicated-gold warning."""

    # ------------------------------------------------------------------ set level

    def check_set_files(self) -> None:
        root = self.ts.root
        ctx = _Ctx(self.report, root, root / CONFIG_FILE, None)
        if ctx.path.exists():
            self.config, _ = _load_model(ctx, TaskSetConfig, "task-set configuration")
        else:
            ctx.warn(
                "missing-file",
                f"{CONFIG_FILE} is missing; defaults are used and no canary is checked",
                expected="a task-set configuration file",
            )
            self.config = TaskSetConfig()
        ctx.flush()
        ctx = _Ctx(self.report, root, root / TAXONOMY_FILE, None)
        self.taxonomy, _ = _load_model(ctx, Taxonomy, "root-cause taxonomy")
        ctx.flush()
        for folder in (root, root / "networks"):
            self._leftover_temps(folder, None)

    def _leftover_temps(self, folder: Path, task: str | None) -> None:
        try:
            names = sorted(e.name for e in os.scandir(folder) if e.is_file(follow_symlinks=False))
        except OSError:
            return
        for name in names:
            if not is_leftover_temp(name):
                continue
            original = name[1:].rsplit(".", 2)[0]
            ctx = _Ctx(self.report, self.ts.root, folder / name, task)
            gold = (
                " - it holds a copy of the gold, which `git add -A` would stage"
                if original == HIDDEN_FILE
                else ""
            )
            ctx.warn(
                "leftover-temp",
                f"temporary file of an interrupted save of {original}{gold}",
                expected="no such file: the next save of that file removes it, or delete it by hand",
            )
            ctx.flush()

    def network(self, name: str) -> Network | None:
        if name not in self.networks:
            path = self.ts.network_file(name)
            if path is None:
                self.networks[name] = None
                return None
            ctx = _Ctx(self.report, self.ts.root, path, None)
            net, _ = _load_model(ctx, Network, "network")
            if net is not None and net.name != name:
                ctx.error(
                    "network-name",
                    f"network file {path.name} declares name {net.name!r}",
                    loc=["name"],
                    expected=repr(name),
                )
            if net is not None:
                self._check_network(ctx, net)
            ctx.flush()
            self.networks[name] = net
        return self.networks[name]

    def _check_network(self, ctx: _Ctx, net: Network) -> None:
        names = net.device_map()
        seen: set[tuple[str, str]] = set()
        for i, link in enumerate(net.links):
            for end in (link.a, link.b):
                if end.node not in names:
                    ctx.error(
                        "link-device",
                        f"link {i + 1} names unknown device {end.node!r}",
                        loc=["links", i],
                        expected="a device listed under devices",
                    )
                key = (end.node, self.vendors.iface(names.get(end.node), end.interface))
                if key in seen:
                    ctx.warn("link-duplicate", f"interface {end} is cabled twice", loc=["links", i])
                seen.add(key)

    # ------------------------------------------------------------------ tasks

    def run(self, refs: Iterable[TaskRef] | None = None, *, cross_task: bool = True) -> Report:
        """Check the set's files and ``refs`` (default: every task). ``cross_task=False`` leaves out
        the warnings that compare tasks with each other (a copied gold): the run gate needs errors."""
        self.check_set_files()
        all_refs = self.ts.refs()
        selected = list(all_refs if refs is None else refs)
        if refs is None and not all_refs:
            ctx = _Ctx(self.report, self.ts.root, self.ts.root, None)
            families = "/, ".join(f.value for f in self.ts.families)
            ctx.error("no-tasks", "no task folders found", expected=f"task folders under {families}/")
            ctx.flush()
        for name in self.ts.unknown_families() if refs is None else ():
            ctx = _Ctx(self.report, self.ts.root, self.ts.root / name, None)
            ctx.error(
                "family",
                f"{name}/ holds tasks, but no task family {name!r} is installed: they are not checked",
                expected="a plug-in providing the family (ctbench.families entry point), or a folder name "
                "that is a family",
            )
            ctx.flush()
        dups = self.ts.duplicate_ids(all_refs)
        for ref in selected:
            self.report.tasks_checked += 1
            others = [r for r in dups.get(ref.id, []) if r.path != ref.path]
            self.check_task(ref, duplicate=bool(others), others=others)
        if not cross_task:
            return self.report
        from ctbench.validation.duplicates import duplicate_gold

        for ref, network, others_ in duplicate_gold(self.ts, self.golds, selected, all_refs):
            ctx = _Ctx(self.report, self.ts.root, ref.hidden_file, ref.id)
            ctx.warn(
                "duplicate-gold",
                f"the gold answer is the same as {', '.join(others_)} on network {network}: "
                "a copied task? (fine if the symptoms differ on purpose)",
                loc=["answer"],
                expected="a root cause or path no other task on this network has",
            )
            ctx.flush()
        return self.report

    def check_task(self, ref: TaskRef, *, duplicate: bool = False, others: Sequence[TaskRef] = ()) -> None:
        root = self.ts.root
        folder_ctx = _Ctx(self.report, root, ref.path, ref.id)
        if not any(ref.path.iterdir()):
            folder_ctx.error(
                "empty-folder", "task folder is empty", expected=f"{TASK_FILE} and {HIDDEN_FILE}"
            )
            folder_ctx.flush()
            return
        if duplicate:
            also = ", ".join(set_relative(root, r.path) for r in others) or "another task folder"
            folder_ctx.error(
                "duplicate-id",
                f"task id {ref.id!r} is also used by {also}; a run or export cannot tell them apart",
                expected="ids unique across rca/ and path/",
            )
        rec_dir = ref.path / RECORDINGS_DIR
        if rec_dir.is_symlink():
            target = os.readlink(rec_dir)
            folder_ctx.error(
                "recordings-link",
                f"{RECORDINGS_DIR}/ is a symbolic link (to {target}); the replay "
                "refuses every recording behind it",
                expected=f"a real {RECORDINGS_DIR}/ folder inside the task folder",
            )
        folder_ctx.flush()
        self._leftover_temps(ref.path, ref.id)
        for path in (ref.task_file, ref.hidden_file):
            if (size := _file_size(path)) > MAX_TASK_FILE_BYTES:
                big = _Ctx(self.report, root, path, ref.id)
                big.warn(
                    "large-file",
                    f"{path.name} is {_size(size)}, far larger than any real task file",
                    expected=f"at most {_size(MAX_TASK_FILE_BYTES)}",
                )
                big.flush()

        tctx = _Ctx(self.report, root, ref.task_file, ref.id)
        task, ttext = _load_model(tctx, TaskSpec, "task")
        if self.ts.is_sealed(ref):  # sealed gold: read through the store with the user's identity
            from ctbench.validation.sealed import load_sealed

            hctx = _Ctx(self.report, root, ref.path / SEALED_HIDDEN_FILE, ref.id)
            hidden, htext, exc = load_sealed(self.ts, ref, hctx.error, hctx.warn)
            if exc is not None:
                _schema_errors(hctx, exc, "hidden task part")
        else:
            hctx = _Ctx(self.report, root, ref.hidden_file, ref.id)
            hidden, htext = _load_model(hctx, HiddenSpec, "hidden task part")
        try:
            if task is not None:
                self._check_visible(tctx, ref, task, ttext or "")
            if hidden is not None:
                self._check_hidden_basics(hctx, ref, hidden, htext or "")
            if task is not None and hidden is not None:
                self._check_pair(tctx, hctx, ref, task, hidden)
        finally:
            tctx.flush()
            hctx.flush()

    def _canary(self, ctx: _Ctx, text: str, value: str) -> None:
        canary = self.config.canary if self.config else ""
        if canary and canary not in text:
            ctx.error(
                "canary",
                "the task set's canary string is missing",
                loc=["canary"],
                expected=f"canary: {canary!r}",
            )
        elif canary and value and value != canary:
            ctx.error("canary", "canary differs from the task set's", loc=["canary"], expected=repr(canary))

    def _check_visible(self, ctx: _Ctx, ref: TaskRef, task: TaskSpec, text: str) -> None:
        if task.id != ref.id:
            ctx.error(
                "id-mismatch",
                f"id {task.id!r} differs from the folder name",
                loc=["id"],
                expected=repr(ref.id),
            )
        if task.family != ref.family:
            ctx.error(
                "family-mismatch",
                f"family {task.family.value!r} but the task is under {ref.family.value}/",
                loc=["family"],
                expected=repr(ref.family.value),
            )
        self._canary(ctx, text, task.canary)
        net = self.network(task.network)
        if net is None:
            ctx.error(
                "network",
                f"network {task.network!r} not found or invalid",
                loc=["network"],
                expected=f"networks/{task.network}.yaml",
            )
            return
        devices = net.device_map()
        for i, name in enumerate(task.accessible or []):
            if name not in devices:
                ctx.error(
                    "accessible",
                    f"accessible device {name!r} is not in network {net.name}",
                    loc=["accessible", i],
                    expected="a device of the network",
                )
        seen: dict[tuple[str, str], int] = {}
        indexed: set[str] = set()
        through_link = (ref.path / RECORDINGS_DIR).is_symlink()
        regular, links = (set(), set()) if through_link else scan_recordings(ref.path)
        for i, rec in enumerate(task.recordings):
            loc: list[str | int] = ["recordings", i]
            dev = devices.get(rec.device)
            if dev is None:
                ctx.error(
                    "recording-device",
                    f"recording for unknown device {rec.device!r}",
                    loc=loc,
                    expected=f"a device of network {net.name}",
                )
            elif dev.os is None:
                ctx.error("recording-device", f"{rec.device} has no CLI (no os) but has a recording", loc=loc)
            elif (canon := self.vendors.canonical(dev, rec.command)) is not None and canon != rec.command:
                ctx.error(
                    "not-canonical",
                    f"command {rec.command!r} is not in canonical form",
                    loc=[*loc, "command"],
                    expected=repr(canon),
                )
            if rec.key in seen:
                ctx.error(
                    "recording-duplicate",
                    f"{rec.device} {rec.command!r} is recorded twice (also entry {seen[rec.key] + 1})",
                    loc=loc,
                    expected="one recording per device and command",
                )
            seen[rec.key] = i
            try:
                rel = str(check_recording_rel(rec.file))
            except RecordingAccessError as exc:
                ctx.error("recording-file", str(exc), loc=[*loc, "file"])
                continue
            indexed.add(rel)
            if rel in links or any(rel.startswith(link + "/") for link in links):
                ctx.error(
                    "recording-file",
                    f"recording path {rec.file!r} goes through a symbolic link",
                    loc=[*loc, "file"],
                    expected="a regular file inside recordings/",
                )
            elif rel not in regular:
                if not through_link:  # a linked recordings/ folder is one error, reported for the folder
                    ctx.error(
                        "recording-file",
                        f"recording file {rec.file} is missing",
                        loc=[*loc, "file"],
                        expected="the file the index names",
                    )
            elif (size := _file_size(ref.path / rel)) > MAX_RECORDING_BYTES:
                ctx.warn(
                    "large-recording",
                    f"recording {rel} is {_size(size)}, far larger than any real capture; "
                    "the replay shows only its first MB",
                    loc=[*loc, "file"],
                    expected=f"at most {_size(MAX_RECORDING_BYTES)}: record a narrower command",
                )
        temps = {rel for rel in regular if is_leftover_temp(rel.rsplit("/", 1)[-1])}
        for rel in sorted(temps):
            tctx = _Ctx(self.report, self.ts.root, ref.path / rel, ref.id)
            tctx.warn(
                "leftover-temp",
                "temporary file of an interrupted save of a recording",
                expected="no such file: the next save of that recording removes it, or delete it by hand",
            )
            tctx.flush()
        for rel in sorted(regular - indexed - temps):
            ctx.warn(
                "unused-recording",
                f"{rel} is not in the recordings index; nothing uses it",
                loc=["recordings"],
                expected="an index entry or removal of the file",
            )

    def _check_hidden_basics(self, ctx: _Ctx, ref: TaskRef, hidden: HiddenSpec, text: str) -> None:
        if hidden.id != ref.id:
            ctx.error(
                "id-mismatch",
                f"id {hidden.id!r} differs from the folder name",
                loc=["id"],
                expected=repr(ref.id),
            )
        self._canary(ctx, text, hidden.canary)
        if ref.family == Family.RCA:
            if not hidden.answer.rca:
                ctx.error(
                    "answer",
                    "an RCA task needs at least one root-cause triple",
                    loc=["answer"],
                    expected="answer.rca: [{node, object, label}]",
                )
            if hidden.answer.paths:
                ctx.error(
                    "answer", "an RCA task carries paths", loc=["answer", "paths"], expected="answer.rca only"
                )
            if hidden.metadata.observability is None:
                ctx.warn(
                    "metadata",
                    "observability (O1/O2) is not set",
                    loc=["metadata"],
                    expected="metadata.observability",
                )
            if hidden.metadata.chain_length is None:
                ctx.warn(
                    "metadata",
                    "propagation-chain length is not set",
                    loc=["metadata"],
                    expected="metadata.chain_length",
                )
        elif ref.family == Family.TOPOLOGY:
            if not hidden.answer.links or hidden.answer.rca or hidden.answer.paths:
                ctx.error(
                    "answer",
                    "a topology task states its gold as links only",
                    loc=["answer"],
                    expected="answer.links: [[A:port, B:port], ...]",
                )
        elif ref.family != Family.PATH:  # a plug-in family: its gold is a list under its name
            gold = hidden.answer.plugin(ref.family.value)
            if not isinstance(gold, list) or not gold or hidden.answer.rca or hidden.answer.paths:
                ctx.error(
                    "answer",
                    f"a {ref.family.value} task states its gold as a non-empty list under its family's name",
                    loc=["answer"],
                    expected=f"answer.{ref.family.value}: [...]",
                )
        else:
            if not hidden.answer.paths:
                ctx.error(
                    "answer",
                    "a path task needs at least one path",
                    loc=["answer"],
                    expected="answer.paths: [{hops: [...]}]",
                )
            if hidden.answer.rca:
                ctx.error(
                    "answer",
                    "a path task carries RCA triples",
                    loc=["answer", "rca"],
                    expected="answer.paths only",
                )
        if not hidden.golden_actions:
            if self.config is not None and not self.config.golden_actions_required:
                ctx.warn(
                    "golden", "no golden actions (the set's source publishes none)", loc=["golden_actions"]
                )
            else:
                ctx.error(
                    "golden",
                    "no golden actions",
                    loc=["golden_actions"],
                    expected="at least one golden action",
                )
        if not hidden.metadata.protocol_mechanisms:
            ctx.warn(
                "metadata",
                "no protocol mechanisms listed (protocol complexity is 0)",
                loc=["metadata"],
                expected="metadata.protocol_mechanisms",
            )

    def _check_pair(self, tctx: _Ctx, hctx: _Ctx, ref: TaskRef, task: TaskSpec, hidden: HiddenSpec) -> None:
        self.golds[ref.id] = (
            task.network,
            ref.family.value,
            tuple(sorted(hidden.gold_answer_lines(ref.family))),
        )
        net = self.network(task.network)
        if net is None:
            return
        devices = net.device_map()
        accessible = set(task.accessible) if task.accessible is not None else set(devices)
        index = task.recording_index()
        for i, act in enumerate(hidden.golden_actions):
            loc: list[str | int] = ["golden_actions", i]
            dev = devices.get(act.device)
            if dev is None:
                hctx.error(
                    "golden-device",
                    f"golden action on unknown device {act.device!r}",
                    loc=loc,
                    expected=f"a device of network {net.name}",
                )
                continue
            if act.device not in accessible:
                hctx.error(
                    "golden-device",
                    f"golden action on {act.device}, which the task makes inaccessible",
                    loc=loc,
                    expected="an accessible device",
                )
            canon = self.vendors.canonical(dev, act.command)
            key = (act.device, canon or act.command)
            if canon is not None and canon != act.command:
                hctx.error(
                    "not-canonical",
                    f"command {act.command!r} is not in canonical form",
                    loc=[*loc, "command"],
                    expected=repr(canon),
                )
            if key not in index:
                hctx.error(
                    "golden-recording",
                    f"no recording for {act.device} {act.command!r}",
                    loc=loc,
                    expected="a recording with this device and canonical command",
                )
        dup = [k for k, c in Counter(a.key for a in hidden.golden_actions).items() if c > 1]
        for dev_name, cmd in dup:
            hctx.warn(
                "golden-duplicate",
                f"golden action {dev_name} {cmd!r} is listed twice",
                loc=["golden_actions"],
            )

        if self.taxonomy is not None and self.config is not None:
            derived = derive(task, hidden, net, self.taxonomy, self.config)
            for name, declared, actual in mismatches(hidden, derived):
                hctx.error(
                    "metadata-mismatch",
                    f"metadata {name} is {declared!r} but the task gives {actual!r}",
                    loc=["metadata", "declared", name]
                    if name != "root_cause_count"
                    else ["metadata", "root_cause_count"],
                    expected=repr(actual),
                )
        if ref.family == Family.RCA:
            self._check_rca(hctx, ref, task, hidden, net)
        elif ref.family == Family.TOPOLOGY:
            devices_of = net.device_map()
            for loc, message, expected in link_problems(
                hidden,
                net,
                lambda node: self._interfaces(net, node),
                lambda node, port: self.vendors.iface(devices_of.get(node), port),
            ):
                hctx.error("answer-link", message, loc=loc, expected=expected)
        elif ref.family == Family.PATH:
            self._check_paths(hctx, hidden, net)
        elif self.gold_check is not None:  # a plug-in family: its own gold_problems, handed down
            self._check_plugin_gold(hctx, ref, task, hidden, net, self.gold_check)
        self._check_leaks(tctx, task, hidden)
        if hidden.metadata.ablation_of is not None:
            self._check_ablation(hctx, ref, task, hidden)

    def _check_plugin_gold(
        self,
        ctx: _Ctx,
        ref: TaskRef,
        task: TaskSpec,
        hidden: HiddenSpec,
        net: Network,
        check: FamilyGoldCheck,
    ) -> None:
        """A plug-in family's gold against the network, as the family judges it. Its messages name no
        position; a message that quotes exactly one of the gold's items is put on that item's line."""
        name = ref.family.value
        raw = hidden.answer.plugin(name)
        items = [str(x) for x in raw] if isinstance(raw, list) else []
        for message in check(task, hidden, net):
            quoted = [i for i, item in enumerate(items) if item and item in message]
            ctx.error(
                "answer-network",
                message,
                loc=["answer", name, quoted[0]] if len(quoted) == 1 else ["answer", name],
                expected=f"a gold the network can state (the {name} family's check of its gold)",
            )

    def _check_ablation(self, ctx: _Ctx, ref: TaskRef, task: TaskSpec, hidden: HiddenSpec) -> None:
        """An O2->O1 ablation variant (paper Table 20): an RCA task, O1, paired with an O2 original on the
        same network and statement, with golden actions of its own (the ablation regenerates them)."""
        loc: list[str | int] = ["metadata", "ablation_of"]
        other_id = hidden.metadata.ablation_of
        if ref.family != Family.RCA:
            ctx.error("ablation", "only RCA tasks can be observability ablation variants", loc=loc)
            return
        if hidden.metadata.observability != "O1":
            ctx.error(
                "ablation",
                "an ablation variant makes the evidence directly observable: its observability must be O1",
                loc=["metadata", "observability"],
                expected="O1",
            )
        try:
            oref = self.ts.ref(str(other_id))
            original, ohidden = self.ts.load_task(oref), self.ts.load_hidden(oref)
        except CtbError:
            ctx.error(
                "ablation",
                f"ablation_of names {other_id!r}, which is not a readable task of this set",
                loc=loc,
                expected="the id of the O2 task this one is a variant of",
            )
            return
        if oref.id == ref.id or oref.family != Family.RCA or ohidden.metadata.observability != "O2":
            ctx.error(
                "ablation",
                f"{oref.id} is not an O2 RCA task; an ablation variant pairs with one",
                loc=loc,
                expected="an RCA task with observability O2",
            )
        if original.network != task.network:
            ctx.error(
                "ablation",
                f"network {task.network!r} differs from {oref.id}'s {original.network!r}",
                loc=loc,
                expected="the same network as the original",
            )
        if " ".join(original.statement.split()) != " ".join(task.statement.split()):
            ctx.error(
                "ablation",
                f"the statement differs from {oref.id}'s: a variant asks the same question",
                loc=loc,
                expected="the original's statement",
            )
        if hidden.golden_keys() == ohidden.golden_keys():
            ctx.warn(
                "ablation",
                f"the golden actions are those of {oref.id}; the ablation regenerates them for the "
                "directly observable evidence",
                loc=["golden_actions"],
            )

    def _check_rca(self, ctx: _Ctx, ref: TaskRef, task: TaskSpec, hidden: HiddenSpec, net: Network) -> None:
        devices = net.device_map()
        known_addresses = {a.split("/")[0] for d in net.devices for a in d.addresses}
        for i, t in enumerate(hidden.answer.rca or []):
            loc: list[str | int] = ["answer", "rca", i]
            dev = devices.get(t.node)
            if dev is None:
                ctx.error(
                    "answer-node",
                    f"root-cause node {t.node!r} is not in network {net.name}",
                    loc=[*loc, "node"],
                    expected="a device of the network",
                )
            if self.taxonomy is not None and self.taxonomy.resolve(t.label) is None:
                ctx.error(
                    "label",
                    f"unknown root-cause label {t.label!r}",
                    loc=[*loc, "label"],
                    expected="a label or alias from taxonomy.yaml",
                )
            if dev is None:
                continue
            obj = t.object.strip()
            ifaces = self._interfaces(net, dev.name)
            if self.vendors.iface(dev, obj) in ifaces:
                continue
            if _is_address(obj) and _known_address(obj, known_addresses):
                continue
            if _IFACE_RE.match(obj) and not _is_address(obj) and ifaces:
                ctx.error(
                    "answer-object",
                    f"{t.node} has no interface {obj!r}",
                    loc=[*loc, "object"],
                    expected="one of " + ", ".join(sorted(ifaces)[:8]),
                )
                continue
            if not self._seen_in_recordings(ref, task, dev.name, obj):
                ctx.error(
                    "answer-object",
                    f"object {obj!r} of {t.node} appears nowhere: not an interface or "
                    "address in the network, nor in the node's recordings",
                    loc=[*loc, "object"],
                    expected="an interface, address or object visible on that node",
                )

    def _interfaces(self, net: Network, node: str) -> set[str]:
        dev = net.device(node)
        out = {self.vendors.iface(dev, i) for i in (dev.interfaces if dev else [])}
        for link in net.links:
            for end in (link.a, link.b):
                if end.node == node:
                    out.add(self.vendors.iface(dev, end.interface))
        return out

    def _seen_in_recordings(self, ref: TaskRef, task: TaskSpec, node: str, obj: str) -> bool:
        needle = obj.encode("utf-8", "replace")
        for rec in task.recordings:
            if rec.device != node:
                continue
            try:
                if needle in safe_recording_path(ref.path, rec.file).read_bytes():
                    return True
            except (RecordingAccessError, OSError):
                continue
        return False

    def _check_paths(self, ctx: _Ctx, hidden: HiddenSpec, net: Network) -> None:
        devices = net.device_map()
        peer: dict[tuple[str, str], str] = {}
        for link in net.links:
            da, db = devices.get(link.a.node), devices.get(link.b.node)
            peer[(link.a.node, self.vendors.iface(da, link.a.interface))] = link.b.node
            peer[(link.b.node, self.vendors.iface(db, link.b.interface))] = link.a.node
        seen_paths: set[tuple[tuple[str, str | None], ...]] = set()
        for p, path in enumerate(hidden.answer.paths or []):
            key = tuple((h.node, h.egress) for h in path.hops)
            if key in seen_paths:
                ctx.error(
                    "path-duplicate", f"path {p + 1} repeats an earlier path", loc=["answer", "paths", p]
                )
            seen_paths.add(key)
            first_visit: dict[str, int] = {}
            for h, hop in enumerate(path.hops):
                if hop.node in first_visit:
                    ctx.error(
                        "path-loop",
                        f"path {p + 1} visits {hop.node} twice (hops {first_visit[hop.node] + 1} "
                        f"and {h + 1})",
                        loc=["answer", "paths", p, "hops", h, "node"],
                        expected="a loop-free path: each node once",
                    )
                first_visit.setdefault(hop.node, h)
            for h, hop in enumerate(path.hops):
                loc: list[str | int] = ["answer", "paths", p, "hops", h]
                dev = devices.get(hop.node)
                if dev is None:
                    ctx.error(
                        "answer-node",
                        f"path {p + 1} hop {h + 1}: node {hop.node!r} is not in network {net.name}",
                        loc=[*loc, "node"],
                        expected="a device of the network",
                    )
                    continue
                if hop.ingress is not None and h > 0:
                    self._check_ingress(ctx, net, peer, dev, path.hops[h - 1].node, hop, p, loc)
                if hop.egress is None or h + 1 >= len(path.hops):
                    continue
                egress = self.vendors.iface(dev, hop.egress)
                ifaces = self._interfaces(net, hop.node)
                if ifaces and egress not in ifaces:
                    ctx.error(
                        "answer-interface",
                        f"path {p + 1} hop {h + 1}: {hop.node} has no interface {hop.egress!r}",
                        loc=[*loc, "egress"],
                        expected="one of " + ", ".join(sorted(ifaces)[:8]),
                    )
                    continue
                nxt = path.hops[h + 1].node
                linked = peer.get((hop.node, egress))
                if linked is not None and linked != nxt:
                    ctx.error(
                        "path-link",
                        f"path {p + 1}: {hop.node} {hop.egress} is cabled to {linked}, "
                        f"not to the next hop {nxt}",
                        loc=[*loc, "egress"],
                        expected=f"the interface of {hop.node} that links to {nxt}",
                    )
                elif linked is None and net.links:
                    via = sorted(i for (n, i), other in peer.items() if n == hop.node and other == nxt)
                    if via:  # a logical egress (a VLAN interface) over a cabled port: nothing to refute
                        ctx.warn(
                            "path-link-unknown",
                            f"path {p + 1}: no link is recorded on {hop.node} "
                            f"{hop.egress}; {hop.node} reaches {nxt} through {', '.join(via)}",
                            loc=[*loc, "egress"],
                        )
                    else:
                        ctx.error(
                            "path-link",
                            f"path {p + 1}: hop {h + 1} to {h + 2} crosses a link network "
                            f"{net.name} does not have: nothing connects {hop.node} to {nxt}",
                            loc=[*loc, "egress"],
                            expected=f"a link between {hop.node} and {nxt} under links",
                        )

    def _check_ingress(
        self,
        ctx: _Ctx,
        net: Network,
        peer: dict[tuple[str, str], str],
        dev: Device,
        before: str,
        hop: PathHop,
        p: int,
        loc: list[str | int],
    ) -> None:
        """An ingress port (Track B's L2 paths) is the hop's own, and cabled to the hop before it."""
        assert hop.ingress is not None
        ingress = self.vendors.iface(dev, hop.ingress)
        ifaces = self._interfaces(net, hop.node)
        if ifaces and ingress not in ifaces:
            ctx.error(
                "answer-interface",
                f"path {p + 1}: {hop.node} has no interface {hop.ingress!r}",
                loc=[*loc, "ingress"],
                expected="one of " + ", ".join(sorted(ifaces)[:8]),
            )
            return
        linked = peer.get((hop.node, ingress))
        if linked is not None and linked != before:
            ctx.error(
                "path-link",
                f"path {p + 1}: {hop.node} {hop.ingress} is cabled to {linked}, not to the hop before, {before}",
                loc=[*loc, "ingress"],
                expected=f"the interface of {hop.node} that links to {before}",
            )

    def _check_leaks(self, ctx: _Ctx, task: TaskSpec, hidden: HiddenSpec) -> None:
        statement = task.statement.lower()
        norm = re.sub(r"\s+", " ", statement)
        labels: set[str] = set()
        for t in hidden.answer.rca or []:
            labels.add(t.label)
            if self.taxonomy is not None:
                lab = self.taxonomy.get(t.label)
                if lab is not None:
                    labels.add(lab.label)
            line = f"{t.node};{t.object}".lower()
            if line in norm.replace(" ", ""):
                ctx.error(
                    "leak",
                    f"the statement contains the gold entry {t.node};{t.object}",
                    loc=["statement"],
                    expected="a statement that describes symptoms, not the answer",
                )
            elif re.search(rf"(?<![\w.]){re.escape(t.object.lower())}(?![\w.])", norm) and len(t.object) > 2:
                ctx.warn(
                    "leak-object",
                    f"the statement names the gold object {t.object!r}; fine if it is the "
                    "symptom's target (e.g. a ping destination), a leak if it points at the fault",
                    loc=["statement"],
                )

        def named(label: str) -> bool:
            return len(label) > 3 and re.search(rf"(?<!\w){re.escape(label.lower())}(?!\w)", norm) is not None

        # A statement that lists the answer's choices (TTAC Track B prompts carry the closed list of
        # reasons) names many labels: naming the gold's among them gives nothing away.
        listed = sum(named(lab.label) for lab in self.taxonomy.labels) if self.taxonomy is not None else 0
        for label in labels if listed < 3 else ():
            if named(label):
                ctx.error(
                    "leak",
                    f"the statement contains the gold root-cause label {label!r}",
                    loc=["statement"],
                    expected="a statement that does not name the root cause",
                )
        for p in hidden.answer.paths or []:
            tokens = [f"{h.node}_{h.egress}".lower() for h in p.hops if h.egress]
            if tokens and all(tok in norm for tok in tokens):
                ctx.error(
                    "leak",
                    "the statement spells out a gold path hop by hop",
                    loc=["statement"],
                    expected="only the endpoints",
                )


def resolve_targets(paths: Sequence[str]) -> tuple[TaskSet, list[TaskRef] | None]:
    """Map command-line paths (a task set, task folders, or files inside them) to what to validate."""
    if not paths:
        return TaskSet.open(None), None
    sets: dict[Path, TaskSet] = {}
    chosen: list[TaskRef] = []
    whole = False
    for raw in paths:
        p = Path(raw)
        if not p.exists():
            raise CtbError(f"{raw}: no such file or folder")
        ts = TaskSet.open(p)
        sets.setdefault(ts.root, ts)
        rp = p.resolve()
        if rp == ts.root.resolve():
            whole = True
            continue
        rel = rp.relative_to(ts.root.resolve()).parts
        folders = {f.value for f in ts.families}  # the built-ins' and installed plug-ins' folders
        if len(rel) >= 2 and rel[0] in folders:
            chosen.append(TaskRef(rel[1], Family(rel[0]), ts.root / rel[0] / rel[1]))
        elif rel and rel[0] in folders:
            chosen.extend(r for r in ts.refs() if r.family.value == rel[0])
        else:
            whole = True  # a set-level file (taxonomy, network, config) can break any task
    if len(sets) > 1:
        raise CtbError("paths belong to different task sets; validate one task set at a time")
    ts = next(iter(sets.values()))
    if whole:
        return ts, None
    unique = {r.path: r for r in chosen}
    return ts, sorted(unique.values(), key=lambda r: (r.family.value, r.id))


def validate_paths(paths: Sequence[str]) -> Report:
    """Validate what command-line ``paths`` name (see :func:`resolve_targets`)."""
    ts, refs = resolve_targets(paths)
    return Validator(ts).run(refs)
