"""The questions a new task starts with: family, id, network (shared or new) and title."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.widgets import Button, Input, Label, Select, Static

from ctbench.authoring.app.dialogs.base import Dialog
from ctbench.model import BUILTIN_FAMILIES, Family

NEW_NETWORK = "\x00new"


def _plugin_choices() -> list[tuple[str, str]]:
    """The installed plug-in families, after the built-ins, by their titles (a plug-in that does not
    load is left out here; ctb-author validate names it)."""
    from ctbench.scoring.families import families

    try:
        found = families()
    except Exception:
        return []
    return [(f"{name}: {fam.title}", name) for name, fam in found.items() if name not in BUILTIN_FAMILIES]


@dataclass(frozen=True)
class NewTaskRequest:
    family: Family
    task_id: str
    network: str
    new_network: bool
    title: str


class NewTaskDialog(Dialog[NewTaskRequest | None]):
    """Returns what to create; ``check`` may refuse it (taken id...) and keep the dialog open."""

    DEFAULT_CSS = """
    NewTaskDialog .form-label { padding-top: 1; }
    NewTaskDialog #new-netname { display: none; }
    NewTaskDialog.new-network #new-netname { display: block; }
    """

    BINDINGS = [
        Binding("ctrl+s", "submit", "Create", id="new.submit", tooltip="Create the task", priority=True)
    ]

    def __init__(
        self,
        networks: Sequence[str],
        suggest_id: Callable[[Family], str],
        *,
        check: Callable[[NewTaskRequest], str | None] | None = None,
        family: Family = Family.RCA,
        task_id: str | None = None,
        network: str | None = None,
        title: str = "",
    ) -> None:
        super().__init__()
        self.networks = list(networks)
        self.suggest_id = suggest_id
        self.check = check
        self.family = family
        self.initial_id = task_id
        self.initial_network = (
            network if network in self.networks else (self.networks[0] if self.networks else None)
        )
        self.new_network_name = network if network and network not in self.networks else ""
        self.initial_title = title
        self._id_touched = task_id is not None

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Label("New task", classes="dialog-title")
            yield Label("Family", classes="form-label")
            yield Select[str](
                [
                    ("RCA: root-cause analysis", "rca"),
                    ("Path restoration", "path"),
                    ("Topology restoration", "topology"),
                    *_plugin_choices(),
                ],
                value=self.family.value,
                allow_blank=False,
                id="new-family",
            )
            yield Label("Task id", classes="form-label")
            yield Input(self.initial_id or self.suggest_id(self.family), id="new-id")
            yield Label("Network", classes="form-label")
            options = [(n, n) for n in self.networks] + [("＋ a new network…", NEW_NETWORK)]
            initial = (
                self.initial_network if not self.new_network_name and self.initial_network else NEW_NETWORK
            )
            yield Select[str](options, value=initial, allow_blank=False, id="new-network")
            yield Input(
                self.new_network_name, placeholder="name of the new network, e.g. dc-fabric", id="new-netname"
            )
            yield Label("Title", classes="form-label")
            yield Input(
                self.initial_title,
                placeholder="one line an author would recognise the case by",
                id="new-title",
            )
            yield Static("", classes="dialog-error", id="new-error")
            with Horizontal(classes="dialog-buttons"):
                yield Button("Create (ctrl+s)", id="new-ok", variant="primary")
                yield Button("Cancel (esc)", id="new-cancel")

    def on_mount(self) -> None:
        self._sync_network()
        self.query_one("#new-title", Input).focus()

    def _sync_network(self) -> None:
        value = self.query_one("#new-network", Select).value
        self.set_class(value == NEW_NETWORK, "new-network")

    @on(Select.Changed, "#new-family")
    def _family(self, event: Select.Changed) -> None:
        if isinstance(event.value, str):
            self.family = Family(event.value)
            if not self._id_touched:
                field = self.query_one("#new-id", Input)
                field.value = self.suggest_id(self.family)
                self._id_touched = False

    @on(Input.Changed, "#new-id")
    def _id_changed(self, event: Input.Changed) -> None:
        if event.value != self.suggest_id(self.family):
            self._id_touched = True

    @on(Select.Changed, "#new-network")
    def _network(self) -> None:
        self._sync_network()

    def request(self) -> NewTaskRequest:
        net = self.query_one("#new-network", Select).value
        new = net == NEW_NETWORK
        name = self.query_one("#new-netname", Input).value.strip() if new else str(net)
        return NewTaskRequest(
            family=self.family,
            task_id=self.query_one("#new-id", Input).value.strip(),
            network=name,
            new_network=new,
            title=self.query_one("#new-title", Input).value.strip(),
        )

    def action_submit(self) -> None:
        req = self.request()
        if not req.task_id:
            problem: str | None = "The task needs an id."
        elif not req.network:
            problem = "Name the new network."
        else:
            problem = self.check(req) if self.check else None
        if problem:
            self.query_one("#new-error", Static).update(problem)
            return
        self.dismiss(req)

    @on(Input.Submitted)
    def _enter(self, event: Input.Submitted) -> None:
        event.stop()
        if event.input.id == "new-title":
            self.action_submit()
        else:
            self.focus_next()

    @on(Button.Pressed, "#new-ok")
    def _ok(self) -> None:
        self.action_submit()

    @on(Button.Pressed, "#new-cancel")
    def _cancel(self) -> None:
        self.dismiss(None)
