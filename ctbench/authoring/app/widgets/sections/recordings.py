"""Recordings: the captured device outputs the replay backend serves, viewed exactly as stored.

Outputs come from session logs (through the capture importer), from a file, or pasted. The view
shows the bytes as they are, with a line about what an eye would miss (CRLF ends, trailing spaces, a
missing final newline); ``i`` marks those invisibles in the text itself.
"""

from __future__ import annotations

from pathlib import Path

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import ScrollableContainer
from textual.reactive import reactive
from textual.widgets import DataTable, Label, Static

from ctbench.authoring.app.dialogs.confirm import ConfirmDialog
from ctbench.authoring.app.dialogs.form import FormDialog, FormField, FormValues
from ctbench.authoring.app.widgets.sections.base import Section
from ctbench.authoring.app.widgets.validation_panel import Target
from ctbench.authoring.app.workers import background
from ctbench.authoring.capture import CapturedOutput, read_captures
from ctbench.authoring.working_copy import EditError
from ctbench.errors import CtbError
from ctbench.model import Recording, TaskSpec


def describe_bytes(data: bytes) -> str:
    """What the eye misses in a recording: size, line ends, trailing spaces, final newline, encoding."""
    lines = data.split(b"\n")
    if lines and not lines[-1]:
        lines.pop()  # the final newline ends the last line, it does not start another
    crlf = data.count(b"\r\n")
    lf = data.count(b"\n") - crlf
    ends = (
        "CRLF"
        if crlf and not lf
        else "LF"
        if lf and not crlf
        else f"mixed ({crlf} CRLF, {lf} LF)"
        if crlf or lf
        else "no line ends"
    )
    trailing = sum(1 for ln in lines if ln.rstrip(b"\r").endswith((b" ", b"\t")))
    parts = [f"{len(data)} bytes", f"{len(lines)} lines", ends]
    if trailing:
        parts.append(f"{trailing} line(s) with trailing spaces")
    if data and not data.endswith(b"\n"):
        parts.append("no final newline")
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        parts.append("not UTF-8 (shown with replacement characters)")
    return " · ".join(parts)


def render_bytes(data: bytes, invisibles: bool) -> Text:
    """The recording as text; with ``invisibles``, CR, tabs, trailing spaces and control bytes are marked."""
    text = data.decode("utf-8", "replace")
    out = Text(no_wrap=True)
    for line in text.split("\n"):
        cr = line.endswith("\r")
        body = line[:-1] if cr else line
        stripped = body.rstrip(" \t")
        for ch in stripped:
            if ch == "\t":
                out.append("→   " if invisibles else "    ", style="dim" if invisibles else "")
            elif ch.isprintable():
                out.append(ch)
            else:
                out.append(f"\\x{ord(ch):02x}", style="reverse")
        tail = body[len(stripped) :]
        if invisibles:
            out.append(tail.replace(" ", "·").replace("\t", "→"), style="dim")
            if cr:
                out.append("␍", style="dim")
            out.append("␊\n", style="dim")
        else:
            out.append(tail + "\n")
    out.rstrip()
    return out


class RecordingsSection(Section):
    SECTION_ID = "recordings"
    TITLE = "Recordings"
    HELP = "Captured outputs by device and canonical command; the replay backend serves them byte for byte."

    BINDINGS = [
        Binding(
            "p", "paste", "Paste", id="recordings.paste", tooltip="Add a recording by pasting the output"
        ),
        Binding(
            "f",
            "from_file",
            "From file",
            id="recordings.file",
            tooltip="Add a recording from a file holding one command's output",
        ),
        Binding(
            "a",
            "attach",
            "Attach capture",
            id="recordings.attach",
            tooltip="Import every command of a terminal session log (SecureCRT/PuTTY/script)",
        ),
        Binding(
            "r",
            "replace",
            "Replace",
            id="recordings.replace",
            tooltip="Replace the highlighted recording's output",
        ),
        Binding("x", "remove", "Remove", id="recordings.remove", tooltip="Remove the highlighted recording"),
        Binding(
            "g",
            "golden",
            "Make golden",
            id="recordings.golden",
            tooltip="Mark the highlighted recording as a golden action",
        ),
        Binding(
            "i",
            "invisibles",
            "Invisibles",
            id="recordings.invisibles",
            tooltip="Show line ends, tabs and trailing spaces",
        ),
    ]

    DEFAULT_CSS = """
    RecordingsSection #rec-table { height: 1fr; max-height: 14; }
    RecordingsSection #rec-info { height: auto; color: $text-muted; padding-top: 1; }
    RecordingsSection #rec-scroll { height: 1fr; border: round $primary-background; background: $surface; }
    RecordingsSection #rec-view { width: auto; }
    """

    invisibles: reactive[bool] = reactive(False)
    """Mark CR, tabs and trailing spaces in the viewer."""

    def compose(self) -> ComposeResult:
        yield Label(self.TITLE, classes="section-title")
        yield Label(self.HELP, classes="section-help")
        yield DataTable(id="rec-table", cursor_type="row", zebra_stripes=True)
        yield Static("", id="rec-info")
        with ScrollableContainer(id="rec-scroll", can_focus=True):
            yield Static("", id="rec-view")

    def on_mount(self) -> None:
        self.query_one("#rec-table", DataTable).add_columns("Device", "Command", "Golden", "State")
        self.refresh_view()

    def recordings(self) -> list[Recording]:
        return list(self.session.draft.task.recordings)

    def current(self) -> Recording | None:
        table = self.query_one("#rec-table", DataTable)
        recs = self.recordings()
        if not recs or table.cursor_row is None or table.cursor_row >= len(recs):
            return None
        return recs[table.cursor_row]

    def refresh_view(self) -> None:
        draft = self.session.draft
        golden = draft.hidden.golden_keys()
        table = self.query_one("#rec-table", DataTable)
        row = table.cursor_row
        table.clear()
        for rec in draft.task.recordings:
            state = (
                Text("unsaved", style="yellow") if rec.file in draft.pending else Text("saved", style="dim")
            )
            table.add_row(
                rec.device, rec.command, Text("★", style="bold") if rec.key in golden else "", state
            )
        if table.row_count:
            table.move_cursor(row=min(row, table.row_count - 1), animate=False)
        self._show_current()

    def _show_current(self) -> None:
        rec = self.current()
        info = self.query_one("#rec-info", Static)
        view = self.query_one("#rec-view", Static)
        if rec is None:
            info.update("No recordings yet: p paste · f from file · a attach a session log")
            view.update("")
            return
        try:
            data = self.session.read_recording(rec)
        except (CtbError, OSError) as exc:
            info.update(Text(f"{rec.file}: {exc}", style="red"))
            view.update("")
            return
        info.update(f"{rec.file} · {describe_bytes(data)}")
        view.update(render_bytes(data, self.invisibles))

    def watch_invisibles(self) -> None:
        if self.is_mounted:
            self._show_current()

    @on(DataTable.RowHighlighted, "#rec-table")
    def _highlighted(self) -> None:
        self._show_current()

    def focus_first(self) -> None:
        self.query_one("#rec-table", DataTable).focus()

    def focus_target(self, target: Target) -> None:
        self.move_to_row(self.query_one("#rec-table", DataTable), target.row)

    # ------------------------------------------------------------------ actions

    def _device_choices(self) -> list[str]:
        return [d.name for d in self.session.network.devices if d.os is not None]

    @background()
    async def action_paste(self) -> None:
        devices = self._device_choices()
        shown = self.current()
        first = shown.device if shown else (devices[0] if devices else "")

        def check(values: FormValues) -> str | None:
            data = values["output"].encode("utf-8")
            return self.try_edit(lambda s: s.add_recording(values["device"].strip(), values["command"], data))

        await self.app.push_screen_wait(
            FormDialog(
                "Paste a recording",
                [
                    FormField(
                        "device",
                        "Device",
                        first,
                        required=True,
                        suggestions=devices,
                        help="Devices with a CLI: " + ", ".join(devices),
                    ),
                    FormField(
                        "command", "Command, as typed on the device (stored in canonical form)", required=True
                    ),
                    FormField("output", "Output, as the device printed it", kind="text", required=True),
                ],
                check=check,
                submit_label="Add",
            )
        )

    @background()
    async def action_from_file(self) -> None:
        devices = self._device_choices()
        shown = self.current()
        first = shown.device if shown else (devices[0] if devices else "")

        def check(values: FormValues) -> str | None:
            try:
                data = Path(values["file"].strip()).expanduser().read_bytes()
            except OSError as exc:
                return f"{values['file']}: cannot read ({exc.strerror or exc})"
            return self.try_edit(lambda s: s.add_recording(values["device"].strip(), values["command"], data))

        await self.app.push_screen_wait(
            FormDialog(
                "Add a recording from a file",
                [
                    FormField("device", "Device", first, required=True, suggestions=devices),
                    FormField("command", "Command, as typed on the device", required=True),
                    FormField("file", "File with the output (read byte for byte)", required=True),
                ],
                check=check,
                submit_label="Add",
            )
        )

    @background()
    async def action_attach(self) -> None:
        values = await self.app.push_screen_wait(
            FormDialog(
                "Attach a terminal session log",
                [
                    FormField("files", "Session log file(s), comma-separated", required=True),
                    FormField(
                        "device",
                        "Device (only if the log shows no recognisable prompt)",
                        suggestions=self._device_choices(),
                    ),
                    FormField("replace", "Replace recordings that already exist? (yes/no)", "no"),
                ],
                submit_label="Import",
                help="Prompts tell which device each command ran on; pagination is removed, "
                "outputs are otherwise kept byte for byte.",
            )
        )
        if values is None:
            return
        files = [f.strip() for f in values["files"].split(",") if f.strip()]
        replace = values["replace"].strip().lower() in ("y", "yes", "true", "1")
        self.notify(f"Reading {len(files)} capture file(s)…", timeout=3)
        self._read_captures(files, values["device"].strip() or None, replace, self.session.draft.spec())

    @background(thread=True, group="capture", exclusive=True)
    def _read_captures(self, files: list[str], device: str | None, replace: bool, spec: TaskSpec) -> None:
        try:
            found, problems = read_captures(self.session.ts, spec, files, device=device)
        except (EditError, CtbError, OSError) as exc:
            self.app.call_from_thread(
                self.notify, str(exc), title="Capture not imported", severity="error", timeout=10
            )
            return
        except Exception as exc:  # the importer is another component: report its failure, keep editing
            self.app.call_from_thread(
                self.notify,
                f"the capture importer failed: {type(exc).__name__}: {exc}",
                title="Capture not imported",
                severity="error",
                timeout=10,
            )
            return
        self.app.call_from_thread(self._add_captured, found, problems, replace)

    def _add_captured(self, found: list[CapturedOutput], problems: list[str], replace: bool) -> None:
        added, refused = 0, list(problems)
        for out in found:
            try:
                self.session.add_recording(out.device, out.command, out.data, replace=replace)
                added += 1
            except (EditError, CtbError) as exc:
                refused.append(f"{out.source}: {exc}")
        if added:
            self.post_message(self.Edited(self.SECTION_ID, f"{added} recording(s) from capture"))
        message = f"{added} recording(s) added from the capture."
        if refused:
            message += "\nNot imported:\n" + "\n".join(refused[:8]) + ("\n…" if len(refused) > 8 else "")
        self.notify(message, title="Capture", severity="warning" if refused else "information", timeout=12)

    @background()
    async def action_replace(self) -> None:
        rec = self.current()
        if rec is None:
            return

        def check(values: FormValues) -> str | None:
            if values["file"].strip():
                try:
                    data = Path(values["file"].strip()).expanduser().read_bytes()
                except OSError as exc:
                    return f"{values['file']}: cannot read ({exc.strerror or exc})"
            elif values["output"]:
                data = values["output"].encode("utf-8")
            else:
                return "Paste the new output or name a file."
            return self.try_edit(lambda s: s.add_recording(rec.device, rec.command, data, replace=True))

        await self.app.push_screen_wait(
            FormDialog(
                f"Replace {rec.device} {rec.command}",
                [
                    FormField("output", "New output (pasted)", kind="text"),
                    FormField("file", "…or a file with the new output"),
                ],
                check=check,
                submit_label="Replace",
            )
        )

    @background()
    async def action_remove(self) -> None:
        rec = self.current()
        if rec is None:
            return
        golden = rec.key in self.session.draft.hidden.golden_keys()
        detail = "It is a golden action: the golden action goes too." if golden else ""
        if await self.app.push_screen_wait(
            ConfirmDialog(f"Remove the recording {rec.device} {rec.command}?", detail=detail, danger=golden)
        ):
            self.edit(
                lambda s: s.remove_recording(rec.device, rec.command, cascade=True), "recording removed"
            )

    @background()
    async def action_golden(self) -> None:
        rec = self.current()
        if rec is None:
            return

        def check(values: FormValues) -> str | None:
            return self.try_edit(lambda s: s.add_golden(rec.device, rec.command, values["why"]))

        await self.app.push_screen_wait(
            FormDialog(
                f"Golden action: {rec.device} {rec.command}",
                [
                    FormField("why", "Why this observation matters for the diagnosis", required=True),
                ],
                check=check,
                submit_label="Add",
            )
        )

    def action_invisibles(self) -> None:
        self.invisibles = not self.invisibles
