"""Build a gold path hop by hop, choosing at each node among the ways out that the links allow.

The author first picks the source node, then, at every node, an egress interface and the neighbour
cabled behind it (from the network's links), until choosing to end the path at the current node.
Typing filters the choices; Backspace on an empty filter takes the last hop back. For networks whose
links are incomplete, ``INTERFACE > NODE`` typed and entered adds a hop the links do not know.

A path named port by port (TTAC Track B's L2 paths, ``node(out)->node(in)``) also keeps the port
each hop is entered by: the far end of the chosen link (or ``INTERFACE > NODE(PORT)`` typed). The
builder opens that way for a gold already written so, and ctrl+n switches it either way.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.widgets import Input, Label, OptionList, Static
from textual.widgets.option_list import Option

from ctbench.authoring.app.dialogs.base import Dialog
from ctbench.authoring.working_copy import HopChoice

Hops = list[tuple[str, str | None, str | None]]
"""``(node, egress, ingress)``; the egress is None on the last hop, the ingress on the first (and on
every hop unless the path names ingress ports)."""


@dataclass(frozen=True)
class _Step:
    kind: str  # "start", "hop", "end"
    node: str
    egress: str | None = None
    ingress: str | None = None
    label: str = ""
    detail: str = ""


class PathBuilderDialog(Dialog[Hops | None]):
    """Returns the hops ``[(node, egress, ingress), ..., (last node, None, ingress)]`` or None when
    cancelled; ``start`` pre-fills them (editing a path), ``ingress`` names ingress ports."""

    DEFAULT_CSS = """
    PathBuilderDialog OptionList { height: auto; max-height: 14; margin-top: 1; }
    PathBuilderDialog #path-so-far { color: $accent; height: auto; }
    """

    BINDINGS = [
        Binding("down", "move(1)", show=False, id="path.down"),
        Binding("up", "move(-1)", show=False, id="path.up"),
        Binding(
            "backspace", "undo", "Undo hop", id="path.undo", tooltip="Take the last hop back", priority=True
        ),
        Binding(
            "ctrl+n",
            "ingress",
            "Ingress ports",
            id="path.ingress",
            tooltip="Name the port each hop is entered by (node(out)->node(in)), or not",
            show=False,
            priority=True,
        ),
    ]

    def __init__(
        self,
        devices: Sequence[tuple[str, str]],
        next_hops: Callable[[str], list[HopChoice]],
        *,
        title: str = "New path",
        ingress: bool = False,
        start: Hops | None = None,
    ) -> None:
        super().__init__()
        self.devices = list(devices)
        self.next_hops = next_hops
        self.title_text = title
        self.ingress = ingress
        self.hops: Hops = list(start or [])
        self.steps: list[_Step] = []

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Label(self.title_text, classes="dialog-title")
            yield Static("", id="path-so-far")
            yield Input(placeholder="type to filter, Enter to choose", id="path-filter")
            yield OptionList(id="path-options")
            yield Static(
                "Enter: choose · Backspace on empty filter: undo a hop · "
                "'IFACE > NODE' adds a hop the links do not know · Esc: cancel",
                classes="dialog-help",
            )

    def on_mount(self) -> None:
        self._refresh()
        self.query_one("#path-filter", Input).focus()

    # ------------------------------------------------------------------ state

    def _candidates(self) -> list[_Step]:
        if not self.hops:
            return [
                _Step("start", name, label=f"start at {name}", detail=detail) for name, detail in self.devices
            ]
        node = self.hops[-1][0]
        steps = [
            _Step(
                "hop",
                h.neighbour,
                h.egress,
                h.neighbour_interface,
                label=f"{h.egress} → {h.neighbour}",
                detail=f"arrives on {h.neighbour_interface}",
            )
            for h in self.next_hops(node)
        ]
        if len(self.hops) >= 2:
            steps.insert(0, _Step("end", node, label=f"■ end the path here at {node}"))
        return steps

    def _refresh(self, text: str = "") -> None:
        words = text.lower().split()
        self.steps = [
            s for s in self._candidates() if all(w in f"{s.label} {s.detail}".lower() for w in words)
        ]
        ol = self.query_one("#path-options", OptionList)
        ol.set_options(
            [Option(Text.assemble(s.label, ("  " + s.detail, "dim") if s.detail else "")) for s in self.steps]
        )
        ol.highlighted = 0 if self.steps else None
        if self.ingress:
            ports = [f"{n}({p})" for n, e, i in self.hops for p in (i, e) if p is not None]
            shown = " -> ".join(ports or [n for n, _, _ in self.hops]) or "(pick the source node)"
            shown = "ports in and out · " + shown
        else:
            shown = (
                " -> ".join(n if e is None else f"{n}_{e}" for n, e, _ in self.hops)
                or "(pick the source node)"
            )
        if self.hops:
            shown += "  …" if len(self.hops) < 2 else "  (or end here)"
        self.query_one("#path-so-far", Static).update(shown)

    def _take(self, step: _Step) -> None:
        if step.kind == "start":
            self.hops = [(step.node, None, None)]
        elif step.kind == "hop":
            node, _, ingress = self.hops[-1]
            self.hops[-1] = (node, step.egress, ingress)
            self.hops.append((step.node, None, step.ingress))
        else:
            self.dismiss([(n, e, i if self.ingress else None) for n, e, i in self.hops])
            return
        field = self.query_one("#path-filter", Input)
        field.value = ""
        self._refresh()

    # ------------------------------------------------------------------ events

    @on(Input.Changed, "#path-filter")
    def _changed(self, event: Input.Changed) -> None:
        self._refresh(event.value)

    @on(Input.Submitted, "#path-filter")
    def _submitted(self, event: Input.Submitted) -> None:
        event.stop()
        ol = self.query_one("#path-options", OptionList)
        if ol.highlighted is not None and ol.highlighted < len(self.steps):
            self._take(self.steps[ol.highlighted])
            return
        typed = event.value.strip()
        if self.hops and ">" in typed:
            iface, _, node = (p.strip() for p in typed.partition(">"))
            node, _, port = node.partition("(")  # NODE(PORT): the port it is entered by
            entered = port.rstrip(")").strip() or None
            node = node.strip()
            if iface and node in {name for name, _ in self.devices}:
                self._take(_Step("hop", node, iface, entered))
                return
        self.app.bell()

    @on(OptionList.OptionSelected, "#path-options")
    def _selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        self._take(self.steps[event.option_index])

    def action_move(self, step: int) -> None:
        ol = self.query_one("#path-options", OptionList)
        if ol.option_count:
            current = ol.highlighted if ol.highlighted is not None else 0
            ol.highlighted = max(0, min(ol.option_count - 1, current + step))

    def action_undo(self) -> None:
        field = self.query_one("#path-filter", Input)
        if field.value:
            field.action_delete_left()
            return
        if not self.hops:
            return
        self.hops.pop()
        if self.hops:
            node, _, ingress = self.hops[-1]
            self.hops[-1] = (node, None, ingress)
        self._refresh()

    def action_ingress(self) -> None:
        self.ingress = not self.ingress
        self._refresh(self.query_one("#path-filter", Input).value)
