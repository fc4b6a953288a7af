"""Importing raw terminal session captures: one log in, one recording per (device, command) out.

Experts already have evidence: SecureCRT, PuTTY or ``script`` logs of the sessions in which they
troubleshot the real incident. This module turns such a log into recordings, keyed the way the
replay backend looks them up (device, canonical command), without touching a byte of what the device
printed except the terminal's own artefacts:

* Prompts split the log into commands. Each vendor's prompt is recognised (``<HOST>``/``[HOST]``
  on VRP and Comware, with the USG's ``HRP_M``/``HRP_S`` prefix and VRP8's ``[~HOST]``;
  ``HOST#``/``HOST>`` on IOS and NX-OS; ``user@HOST>`` on Junos). The hostname must name a device of
  the task's network (case, ``-`` and ``_`` are not significant), unless ``device`` says whose log
  it is.
* Pagination prompts are removed together with the erase sequences the device sends after the key
  press (ANSI cursor-left, backspaces, carriage returns and the blanking spaces between them):
  ``  ---- More ----`` (VRP, Comware), `` --More-- `` (IOS, NX-OS), ``---(more)---`` (Junos). The
  line the device printed after the page break follows on directly, so the output is whole again.
* The Junos ``{master:0}`` line printed before each prompt is not output and is dropped.
* The typed command is cleaned of line-editing keystrokes and resolved by the device's vendor
  dialect, so ``dis ip rou`` is stored as ``display ip routing-table``.
* Everything else, CRLF line ends and trailing spaces included, is kept exactly.

Commands that cannot become a recording are reported with their line in the log and the reason
(unknown host, a line the device rejected, output taken through a filter, configuration commands,
the last command of a log cut before its prompt came back), never silently dropped; and an
existing recording is only replaced when the author says so.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, cast

from pydantic import BaseModel, Field

from ctbench.authoring.working_copy import EditError
from ctbench.dialects import get_dialect
from ctbench.errors import CtbError
from ctbench.model import Device, Recording, TaskSpec
from ctbench.store import TaskSet, recording_filename
from ctbench.yamlio import read_input

# --------------------------------------------------------------------------- terminal artefacts

# Logs are handled as Latin-1 text: every byte maps to one character and back, so regular
# expressions can work on them while the output round-trips byte for byte (UTF-8 included).
_ENC = "latin-1"

_MORE = re.compile(
    r"(?:\x1b\[7m)?"  # NX-OS shows its --More-- in reverse video
    r"(?:[ ]{0,2}-{4}[ ]More[ ]-{4}|[ ]?--More--[ ]?|---\(more(?:[ ]\d{1,3}%)?\)---)"
    r"(?:\x1b\[(?:0|27)?m)?"
    # The erase the device sends once a key is pressed: cursor-left / erase-line escapes, backspaces,
    # bare carriage returns, and blanking spaces (only when another erase step follows them, so the
    # indentation of the next output line is never eaten).
    r"(?:\x1b\[\d*[DKC]|\x08|\r(?!\n)|[ ]+(?=[\x08\x1b\r]))*"
)
_JUNOS_BANNER = re.compile(r"^\{(?:master|backup|primary|secondary|linecard|hold)(?::[\w-]+)?\}\r?$")
_SCRIPT_TRAILER = re.compile(r"(?:\r?\n)?Script done(?: on [^\n]*)?\r?\n?\Z")
_PUTTY_HEADER = re.compile(r"^=~=~=~=~=~=~=~=~=~=~=~= PuTTY log .* =~=~=~=~=~=~=~=~=~=~=~=\r?\n?$")
_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b[()][AB012]")

_VRP_PROMPT = re.compile(
    r"^(?:HRP_[MSAB])?(?:<(?P<user>[A-Za-z0-9][^<>\s]*)>|\[(?!edit\b)(?P<sys>[~*]?[A-Za-z0-9][^\[\]\s]*)\])(?P<cmd>.*)$"
)
_JUNOS_PROMPT = re.compile(r"^(?P<user>[\w.\-]+)@(?P<host>[\w.\-]+)(?P<sign>[>#%])[ ]?(?P<cmd>.*)$")
_CISCO_PROMPT = re.compile(
    r"^(?P<host>[A-Za-z0-9][\w.\-/:]*?)(?:\((?P<mode>[\w\-/.]+)\))?(?P<sign>[>#])(?P<cmd>.*)$"
)

_READ_VERBS: dict[str, tuple[str, ...]] = {
    "vrp": ("display", "ping", "tracert", "dir"),
    "cisco": ("show", "ping", "traceroute", "dir"),
    "junos": ("show", "ping", "traceroute"),
}
_DEVICE_ERRORS = re.compile(
    r"^(?:\s*\^\s*$|Error(?:\[\d+\])?:|\s?% ?(?:Unrecognized|Incomplete|Ambiguous|Too many|Wrong parameter|Invalid)"
    r"|% Invalid|% Incomplete|% Ambiguous|% Unknown command|unknown command\.|syntax error|error: )",
    re.IGNORECASE,
)

PromptStyle = Literal["vrp", "cisco", "junos"]


def _style_of_os(os_name: str) -> PromptStyle | None:
    """The prompt shape of ``os_name`` in a session log: ``capture_prompt`` in its dialect data file."""
    try:
        return cast(PromptStyle | None, get_dialect(os_name).capture_prompt)
    except ValueError:  # not a known family (validation reports it)
        return None


_LINE_STAMP = re.compile(
    r"\[(?:\d{4}[-/.]\d{1,2}[-/.]\d{1,2}[ T]|\d{1,2}[-/.]\d{1,2}[-/.]\d{4} |\w{3} \w{3} +\d{1,2} )?"
    r"\d{1,2}:\d{2}:\d{2}(?:[.,]\d{1,6})?(?: \d{4})?\] ?"
)
"""A per-line timestamp a terminal adds when told to (SecureCRT's "timestamp each line" with a
``[%Y-%M-%D %h:%m:%s]`` format, Xshell's ``[2026-12-01 09:41:00.123]``, MobaXterm's ``[09:41:00]``),
with the one blank that separates it from what the device printed."""

STAMPED_SHARE = 0.6
"""A log counts as timestamped when this share of its non-blank lines starts with a timestamp; an
output line that merely begins with ``[09:41:00]`` in an unstamped log is never cut."""


def strip_line_timestamps(text: str) -> str:
    """Remove the terminal's per-line timestamps (Latin-1 decoded log text); the rest is kept exactly.

    Only the stamp and the one blank after it go: a device line that starts with spaces (a VRP
    routing table) keeps them. Logs without stamps come back unchanged.
    """
    lines = text.split("\n")
    filled = [ln for ln in lines if ln.strip("\r ")]
    stamps = [_LINE_STAMP.match(ln) for ln in lines]
    if not filled or sum(m is not None for m in stamps) < STAMPED_SHARE * len(filled):
        return text
    return "\n".join(ln if m is None else ln[m.end() :] for ln, m in zip(lines, stamps, strict=True))


def strip_pagination(text: str) -> str:
    """Remove pagination prompts and their erase sequences (Latin-1 decoded log text)."""
    return _MORE.sub("", text)


def _edit_line(raw: str) -> str:
    """What the device received: apply backspaces and drop escape sequences from an echoed line."""
    raw = _ANSI.sub("", raw)
    out: list[str] = []
    for ch in raw:
        if ch in "\x08\x7f":
            if out:
                out.pop()
        elif ch == "\r" or ch == "\x07":
            continue
        else:
            out.append(ch)
    return "".join(out).strip()


def fold_host(name: str) -> str:
    """Hostname key: real devices say ``HQ-CORE-01`` where the network file says ``HQ_CORE_01``."""
    return name.casefold().replace("-", "_")


# --------------------------------------------------------------------------- splitting


@dataclass(frozen=True)
class Prompt:
    host: str
    style: PromptStyle
    config_mode: bool
    command: str


def match_prompt(line: str) -> Prompt | None:
    """The prompt at the start of one log line (without its line end), if there is one."""
    m = _JUNOS_PROMPT.match(line)
    if m:
        return Prompt(m.group("host"), "junos", m.group("sign") != ">", _edit_line(m.group("cmd")))
    m = _VRP_PROMPT.match(line)
    if m:
        if m.group("user") is not None:
            return Prompt(m.group("user"), "vrp", False, _edit_line(m.group("cmd")))
        return Prompt(m.group("sys").lstrip("~*"), "vrp", True, _edit_line(m.group("cmd")))
    m = _CISCO_PROMPT.match(line)
    if m:
        return Prompt(m.group("host"), "cisco", m.group("mode") is not None, _edit_line(m.group("cmd")))
    return None


@dataclass
class Block:
    """One command as the log shows it: where, which prompt, what was typed and what came back."""

    line: int
    prompt: Prompt
    output: bytes
    terminated: bool  # a prompt followed the output, so it is complete


def split_session(data: bytes, hosts: Iterable[str] = ()) -> list[Block]:
    """Split a raw session log into command blocks.

    ``hosts`` are the hostnames (folded with :func:`fold_host`) that count as devices. A system-view
    prompt ``[HOST-view]`` is attributed to the longest known host it starts with; prompts of hosts
    not in ``hosts`` still split the log (and are reported by the caller), so an unknown device's
    output never leaks into the previous command's recording.
    """
    known = sorted({fold_host(h) for h in hosts}, key=len, reverse=True)
    text = strip_pagination(strip_line_timestamps(data.decode(_ENC)))
    # Split on LF only: str.splitlines would also split on \x85 and friends, which are bytes of
    # UTF-8 characters here (Latin-1 view), and on a lone CR.
    lines = [ln + "\n" for ln in text.split("\n")]
    lines[-1] = lines[-1][:-1]
    blocks: list[Block] = []
    current: Prompt | None = None
    start_line = 0
    buf: list[str] = []

    def close(terminated: bool) -> None:
        if current is None:
            return
        body = "".join(buf)
        if terminated and current.style == "junos":
            # Junos prints {master:0} on its own line just before each prompt; it is not output.
            last = body.rstrip("\r\n").rsplit("\n", 1)[-1]
            if _JUNOS_BANNER.match(last):
                body = body[: len(body.rstrip("\r\n")) - len(last)]
        if not terminated:
            body = _SCRIPT_TRAILER.sub("", body)
        blocks.append(Block(start_line, current, body.encode(_ENC), terminated))

    for number, raw in enumerate(lines, start=1):
        if _PUTTY_HEADER.match(raw):
            continue  # PuTTY writes this banner whenever logging (re)starts
        stripped = raw.rstrip("\r\n")
        prompt = match_prompt(stripped)
        if prompt is not None and prompt.style == "vrp" and prompt.config_mode:
            prompt = _attribute_view(prompt, known)
        if prompt is not None and not _plausible(prompt, known):
            prompt = None
        if prompt is None:
            if current is not None:
                buf.append(raw)
            continue
        close(True)
        current, start_line, buf = prompt, number, []
    close(False)
    # A prompt with nothing typed after it (Enter pressed) ends the previous command but is none itself.
    return [b for b in blocks if b.prompt.command]


def _attribute_view(prompt: Prompt, known: Sequence[str]) -> Prompt:
    """``[HQ-CORE-01-GigabitEthernet0/0/1]``: the host is the longest known name it starts with."""
    folded = fold_host(prompt.host)
    for host in known:
        if folded == host or folded.startswith(host + "_"):
            return Prompt(prompt.host[: len(host)], prompt.style, True, prompt.command)
    return prompt


def _plausible(prompt: Prompt, known: Sequence[str]) -> bool:
    """Guard against output lines that look like prompts (``R1#`` in a banner, say).

    A known host is always a prompt. An unknown one counts only in the unambiguous VRP/Junos forms,
    or as a Cisco prompt that carries a command, so that it can be reported as an unknown device.
    """
    if fold_host(prompt.host) in known:
        return True
    if prompt.style == "cisco":
        # ``r>i10.0.0.0/8`` in a BGP table is not a prompt: ask for a real hostname and an EXEC word.
        return len(prompt.host) >= 2 and _looks_like_exec(prompt.command)
    return True


_EXEC_WORDS = (
    "show",
    "ping",
    "traceroute",
    "terminal",
    "enable",
    "disable",
    "exit",
    "configure",
    "dir",
    "write",
    "copy",
    "quit",
    "logout",
    "end",
)


def _looks_like_exec(command: str) -> bool:
    word = command.split(" ", 1)[0].lower()
    return bool(word) and any(w.startswith(word) for w in _EXEC_WORDS)


# --------------------------------------------------------------------------- importing


class CapturedRecording(BaseModel):
    device: str
    command: str = Field(description="Canonical command, the recording key.")
    typed: str = Field(description="The command as typed in the log.")
    file: str = Field(description="Recording file, relative to the task folder.")
    bytes: int
    source: str = Field(description="capture file:line of the prompt")
    action: Literal["added", "replaced", "unchanged", "would add", "would replace"]


class SkippedRecording(BaseModel):
    device: str
    command: str
    file: str
    source: str
    reason: str


class Unattributed(BaseModel):
    source: str = Field(description="capture file:line of the prompt")
    host: str
    typed: str
    reason: str


NO_PROMPT = (
    "no device prompt found, so no command to import: a session log shows each command after its "
    "prompt, e.g. '<CORE_SW_01>display ip routing-table', 'R1#show ip route' or 'admin@PE1> show route'"
)


class CaptureReport(BaseModel):
    task: str
    files: list[str]
    commands: int = 0
    recorded: list[CapturedRecording] = Field(default_factory=list)
    skipped: list[SkippedRecording] = Field(default_factory=list)
    unattributed: list[Unattributed] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list)
    index_updated: bool = False


@dataclass
class _Candidate:
    device: Device
    canonical: str
    typed: str
    output: bytes
    source: str


def _resolve(device: Device, typed: str, extra_trees: tuple[Path, ...]) -> tuple[str | None, str | None]:
    """(canonical, problem) for a typed command on a device, via its vendor dialect."""
    assert device.os is not None
    dialect = get_dialect(device.os, extra_trees=extra_trees)
    res = dialect.resolve(typed)
    if res.error is not None:
        prompt = dialect.prompt(device.name)
        text = dialect.render_error(res.error, typed, prompt).strip().splitlines()
        return (
            None,
            f"not a valid {dialect.display_name} command ({text[-1].strip() if text else res.error.kind})",
        )
    if res.filters:
        return None, (
            f"output was taken through a filter ({' '.join(str(f) for f in res.filters)}); "
            f"record '{res.canonical}' without it"
        )
    return res.canonical, None


def _device_rejected(output: bytes) -> str | None:
    """The device's own error text at the top of an output (the line was invalid on the real box)."""
    head = [ln for ln in output.decode(_ENC).splitlines()[:4] if ln.strip()]
    for ln in head[:2]:
        if _DEVICE_ERRORS.match(ln):
            return f"the device rejected it: {ln.strip()[:100]}"
    return None


def collect(
    ts: TaskSet,
    task: TaskSpec,
    captures: Mapping[str, bytes],
    *,
    device: str | None = None,
) -> tuple[list[_Candidate], CaptureReport]:
    """Split every capture and attribute each command; nothing is written here."""
    net = ts.network(task.network)
    devices = net.device_map()
    forced: Device | None = None
    if device is not None:
        forced = devices.get(device)
        if forced is None:
            raise CtbError(
                f"--device {device}: no such device in network {net.name} "
                f"(devices: {', '.join(sorted(devices))})"
            )
        if forced.os is None:
            raise CtbError(
                f"--device {device}: {device} has no CLI (no os in {net.name}), it cannot have recordings"
            )
    by_host = {fold_host(d.name): d for d in net.devices}
    extra = ts.dialect_extensions()
    report = CaptureReport(task=task.id, files=list(captures))
    accessible = set(task.accessible) if task.accessible is not None else set(devices)
    candidates: dict[tuple[str, str], _Candidate] = {}
    hosts_seen: set[str] = set()
    for name, data in captures.items():
        blocks = split_session(data, by_host)
        if not blocks:
            report.notes.append(f"{name}: {NO_PROMPT}")
        for block in blocks:
            report.commands += 1
            source = f"{name}:{block.line}"
            typed = block.prompt.command
            hosts_seen.add(block.prompt.host)
            dev = forced or by_host.get(fold_host(block.prompt.host))

            def skip(
                reason: str, host: str = block.prompt.host, typed: str = typed, source: str = source
            ) -> None:
                report.unattributed.append(Unattributed(source=source, host=host, typed=typed, reason=reason))

            if dev is None:
                skip(
                    f"unknown host {block.prompt.host!r}: not a device of network {net.name} (use --device "
                    "if this log is from one device)"
                )
                continue
            if dev.os is None:
                skip(f"{dev.name} has no CLI in network {net.name} (no os)")
                continue
            style = _style_of_os(dev.os)
            if style is None:
                skip(f"{dev.name} runs {dev.os}, whose dialect data file names no capture_prompt")
                continue
            if style != block.prompt.style:
                skip(f"prompt looks like {block.prompt.style}, but {dev.name} runs {dev.os}")
                continue
            if block.prompt.config_mode and style != "vrp":
                skip("typed in configuration mode; only operational commands are recordings")
                continue
            verbs = _READ_VERBS[style]
            first = typed.split(" ", 1)[0].lower()
            if not any(v.startswith(first) for v in verbs):
                skip("session or configuration command, not a " + "/".join(verbs) + " command")
                continue
            canonical, problem = _resolve(dev, typed, extra)
            if problem is not None:
                skip(problem)
                continue
            assert canonical is not None
            if canonical.split()[0] not in verbs:
                skip("session or configuration command, not a " + "/".join(verbs) + " command")
                continue
            rejected = _device_rejected(block.output)
            if rejected is not None:
                skip(rejected)
                continue
            if not block.terminated:
                skip("the log ends before the prompt came back, so this output may be cut")
                continue
            if dev.name not in accessible:
                report.notes.append(f"{source}: {dev.name} is not accessible in {task.id}; recorded anyway")
            key = (dev.name, canonical)
            if key in candidates:
                report.notes.append(
                    f"{source}: {dev.name} '{canonical}' was captured again; "
                    f"the later output (this one) is kept, {candidates[key].source} dropped"
                )
            candidates[key] = _Candidate(dev, canonical, typed, block.output, source)
    if forced is not None and len(hosts_seen) > 1:
        report.notes.append(
            f"--device {forced.name}: the log shows several hostnames "
            f"({', '.join(sorted(hosts_seen))}); all of them were attributed to {forced.name}"
        )
    return list(candidates.values()), report


def import_capture(
    ts: TaskSet,
    task_id: str,
    files: Sequence[Path | str],
    *,
    device: str | None = None,
    replace: bool = False,
    dry_run: bool = False,
) -> CaptureReport:
    """Split capture files into recordings of task ``task_id`` and index them in its ``task.yaml``.

    Existing recordings (same device and canonical command, or a file already at the target path)
    are left alone unless ``replace``; each one left alone is listed with the reason. With
    ``dry_run`` nothing is written and the report says what would be.
    """
    ref = ts.ref(task_id)
    task = ts.load_task(ref)
    captures: dict[str, bytes] = {}
    for f in files:
        captures[str(f)] = read_input(f, "a session log")
    candidates, report = collect(ts, task, captures, device=device)
    index = task.recording_index()
    new_entries: list[Recording] = []
    for cand in sorted(candidates, key=lambda c: (c.device.name, c.canonical)):
        existing = index.get((cand.device.name, cand.canonical))
        rel = existing.file if existing is not None else recording_filename(cand.device.name, cand.canonical)
        target = ref.path / rel
        current = target.read_bytes() if target.is_file() else None
        if current is not None and current == cand.output:
            action = "unchanged"
        elif current is not None or existing is not None:
            if not replace:
                why = "already recorded" if existing is not None else "a file is already there (not indexed)"
                report.skipped.append(
                    SkippedRecording(
                        device=cand.device.name,
                        command=cand.canonical,
                        file=rel,
                        source=cand.source,
                        reason=f"{why}; use --replace",
                    )
                )
                continue
            action = "would replace" if dry_run else "replaced"
        else:
            action = "would add" if dry_run else "added"
        if not dry_run and action != "unchanged":
            written = (
                ts.write_recording(ref.path, cand.device.name, cand.canonical, cand.output)
                if existing is None
                else _write_at(ref.path, rel, cand.output)
            )
            rel = written
        if existing is None:
            new_entries.append(Recording(device=cand.device.name, command=cand.canonical, file=rel))
        report.recorded.append(
            CapturedRecording(
                device=cand.device.name,
                command=cand.canonical,
                typed=cand.typed,
                file=rel,
                bytes=len(cand.output),
                source=cand.source,
                action=action,
            )
        )
    if new_entries and not dry_run:
        spec = task.model_copy(update={"recordings": [*task.recordings, *new_entries]})
        ts.save_task(spec)
        report.index_updated = True
    return report


def _write_at(folder: Path, rel: str, data: bytes) -> str:
    from ctbench.store import safe_recording_path
    from ctbench.yamlio import atomic_write_bytes

    safe_recording_path(folder, rel)  # an index entry must not make us write outside recordings/
    atomic_write_bytes(folder / rel, data)
    return rel


def render_summary(report: CaptureReport) -> str:
    """The human summary ``ctb-author import-capture`` prints."""
    out: list[str] = []
    for r in report.recorded:
        out.append(f"{r.action:>13}  {r.device}  {r.command}  ({r.bytes} bytes, {r.file}) <- {r.source}")
    for s in report.skipped:
        out.append(f"{'skipped':>13}  {s.device}  {s.command}  ({s.file}): {s.reason} <- {s.source}")
    for u in report.unattributed:
        out.append(f"{'not imported':>13}  {u.source}  {u.host}: {u.typed!r}: {u.reason}")
    for n in report.notes:
        out.append(f"{'note':>13}  {n}")
    counts: dict[str, int] = {}
    for r in report.recorded:
        counts[r.action] = counts.get(r.action, 0) + 1
    parts = [f"{n} {a}" for a, n in counts.items()]
    if report.skipped:
        parts.append(f"{len(report.skipped)} skipped (existing)")
    if report.unattributed:
        parts.append(f"{len(report.unattributed)} not imported")
    out.append(
        f"{report.task}: {report.commands} command(s) in {len(report.files)} file(s): "
        + (", ".join(parts) if parts else "nothing to import")
        + ("; task.yaml recordings index updated" if report.index_updated else "")
    )
    return "\n".join(out)


# --------------------------------------------------------------------------- for the authoring app


@dataclass(frozen=True)
class CapturedOutput:
    """One command found in a session log, ready for :meth:`EditSession.add_recording`."""

    device: str
    command: str
    data: bytes
    source: str


def read_captures(
    ts: TaskSet, spec: TaskSpec, files: Sequence[Path | str], *, device: str | None = None
) -> tuple[list[CapturedOutput], list[str]]:
    """Split session logs with the capture importer without writing anything; (outputs, problems).

    The importer attributes each command to a device of the task's network by its prompt (or to
    ``device``) and resolves it to its canonical form; what it cannot attribute comes back as a
    problem line naming the log line, so nothing is dropped silently.
    """
    captures: dict[str, bytes] = {}
    for f in files:
        captures[str(f)] = read_input(f, "a session log", error=EditError)
    candidates, report = collect(ts, spec, captures, device=device)
    found = [CapturedOutput(c.device.name, c.canonical, c.output, c.source) for c in candidates]
    problems = [f"{u.source}: {u.host} {u.typed!r}: {u.reason}" for u in report.unattributed]
    problems += list(report.notes)
    return found, problems
