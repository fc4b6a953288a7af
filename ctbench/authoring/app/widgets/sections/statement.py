"""Statement: the title and the text the agent reads, with the full agent prompt one key away."""

from __future__ import annotations

from rich.text import Text
from textual import events, on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import ScrollableContainer
from textual.widgets import ContentSwitcher, Input, Label, Static, TextArea

from ctbench.authoring.app.widgets.sections.base import Section
from ctbench.authoring.app.widgets.validation_panel import Target
from ctbench.authoring.editing import EditSession
from ctbench.authoring.plugin_answer import statement_template
from ctbench.model import Family
from ctbench.scoring.prompt import build_prompt

STATEMENT_LABEL = "Statement  (ctrl+t: the agent's prompt · tab indents)"


def prompt_preview(session: EditSession) -> tuple[str, bool]:
    """(text, official) — the prompt agents get, from :func:`ctbench.scoring.prompt.build_prompt`.

    The preview is built from the working copy (unsaved statement and network edits included). A working
    copy the prompt cannot be built from yet says why instead, and ``official`` is False.
    """
    spec = session.draft.spec()
    try:
        network = session.network
    except Exception:
        network = None
    labels = [lab.label for lab in session.ts.taxonomy.labels] if spec.family == Family.RCA else []
    try:
        return build_prompt(spec, network, labels), True
    except Exception as exc:  # a half-edited task must not break editing
        return f"(the agent prompt cannot be rendered: {exc})", False


class StatementArea(TextArea):
    """The statement box: Tab indents, as in any text body, and Escape still closes the editor.

    After the title, a Tab pressed out of habit keeps the focus (and what is typed next) in the
    statement; shift+tab goes back to the title. (``tab_behavior="indent"`` would also take Escape.)
    """

    def check_consume_key(self, key: str, character: str | None = None) -> bool:
        return key == "tab" or super().check_consume_key(key, character)

    async def _on_key(self, event: events.Key) -> None:
        if event.key == "tab":
            event.stop()
            event.prevent_default()
            column = self.cursor_location[1]
            self.insert(" " * (self.indent_width - column % self.indent_width))
            return
        await super()._on_key(event)


class StatementSection(Section):
    SECTION_ID = "statement"
    TITLE = "Statement"
    HELP = "What the agent is told: the symptom, where it is seen, and the answer format — never the answer."

    BINDINGS = [
        Binding(
            "ctrl+t",
            "toggle_preview",
            "Prompt preview",
            id="statement.preview",
            tooltip="Switch between the statement and the full prompt an agent receives",
        )
    ]

    DEFAULT_CSS = """
    StatementSection #statement-text { height: 1fr; }
    StatementSection #statement-views { height: 1fr; }
    StatementSection #prompt-preview { height: 1fr; border: round $primary-background; }
    StatementSection #prompt-text { width: 1fr; }
    """

    def compose(self) -> ComposeResult:
        yield Label(self.TITLE, classes="section-title")
        yield Label(self.HELP, classes="section-help")
        yield Label("Title", classes="label")
        yield Input(
            id="statement-title",
            placeholder="one line an author recognises the case by",
            select_on_focus=False,  # a Tab into the title then a key must not replace all of it
        )
        yield Label(STATEMENT_LABEL, classes="label", id="statement-label")
        with ContentSwitcher(initial="statement-text", id="statement-views"):
            yield StatementArea(id="statement-text", soft_wrap=True, show_line_numbers=False)
            with ScrollableContainer(id="prompt-preview", can_focus=True):
                yield Static("", id="prompt-text")

    def on_mount(self) -> None:
        self.query_one("#statement-text", TextArea).placeholder = statement_template(self.session.family)
        self.refresh_view()

    def refresh_view(self) -> None:
        draft = self.session.draft
        title = self.query_one("#statement-title", Input)
        if title.value != draft.task.title and not title.has_focus:
            with title.prevent(Input.Changed):
                title.value = draft.task.title
        area = self.query_one("#statement-text", TextArea)
        if area.text != draft.statement and not area.has_focus:
            with area.prevent(TextArea.Changed):
                area.load_text(draft.statement)
        if self.query_one("#statement-views", ContentSwitcher).current == "prompt-preview":
            self._render_preview()

    def _render_preview(self) -> None:
        text, official = prompt_preview(self.session)
        body = Text(text)  # the agent's line breaks, and long lines wrapped to the screen instead of clipped
        if not official:
            body.stylize("italic")
        self.query_one("#prompt-text", Static).update(body)

    @on(TextArea.Changed, "#statement-text")
    def _statement(self, event: TextArea.Changed) -> None:
        text = event.text_area.text
        self.edit(lambda s: s.set_statement(text), "statement")

    @on(Input.Changed, "#statement-title")
    def _title(self, event: Input.Changed) -> None:
        value = event.value
        self.edit(lambda s: s.set_title(value), "title")

    def action_toggle_preview(self) -> None:
        switcher = self.query_one("#statement-views", ContentSwitcher)
        label = self.query_one("#statement-label", Label)
        if switcher.current == "statement-text":
            self._render_preview()
            switcher.current = "prompt-preview"
            label.update("Agent prompt preview  (ctrl+t: back to the statement)")
            self.query_one("#prompt-preview").focus()
        else:
            switcher.current = "statement-text"
            label.update(STATEMENT_LABEL)
            self.query_one("#statement-text", TextArea).focus()

    def focus_first(self) -> None:
        if self.query_one("#statement-views", ContentSwitcher).current != "statement-text":
            self.action_toggle_preview()  # a hidden text box would swallow what is typed next
        self.query_one("#statement-text", TextArea).focus()

    def focus_target(self, target: Target) -> None:
        if target.field == "title":
            self.query_one("#statement-title", Input).focus()
            return
        self.focus_first()
