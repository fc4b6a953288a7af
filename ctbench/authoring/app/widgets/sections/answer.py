"""Gold answer: RCA triples built with pickers, paths built hop by hop along the network's links, or
the cables of a topology-restoration task, each end picked as node(port).

An RCA triple is node (from the network), object (that node's interfaces and addresses, or typed),
label (searched in the taxonomy by label, alias, group or description; aliases are stored as their
canonical label). A path is built in the path builder, which offers at each node only the egress
interfaces and neighbours the links allow. A topology link is two ends, each a node and one of its
ports (or a port typed in), added in either direction (it is a cable).

A plug-in family's gold is shown and edited as answer lines, the way the agent writes them: a adds one,
e edits them all at once, x removes one; the family's own parser checks every line (a refused line is
named with its number and the reason, and the dialog stays open with what was typed), and the family
stores them under ``answer.<family>`` (:mod:`ctbench.authoring.plugin_answer`).
"""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.widgets import DataTable, Label, Static

from ctbench.authoring.app.dialogs.confirm import ConfirmDialog
from ctbench.authoring.app.dialogs.form import FormDialog, FormField, FormValues
from ctbench.authoring.app.dialogs.path_builder import PathBuilderDialog
from ctbench.authoring.app.dialogs.pick import Choice, PickDialog
from ctbench.authoring.app.widgets.sections.base import Section
from ctbench.authoring.app.widgets.validation_panel import Target
from ctbench.authoring.app.workers import background
from ctbench.authoring.editing import path_text, rca_text
from ctbench.authoring.links_editing import link_text
from ctbench.model import Family


class AnswerSection(Section):
    SECTION_ID = "answer"
    TITLE = "Gold answer"
    HELP = "What a correct agent answers. RCA: node;object;label per root cause. Paths: hop by hop."
    HELP_TOPOLOGY = (
        "What a correct agent answers: one cable per line, NODE-A(port)->NODE-B(port), either way."
    )

    BINDINGS = [
        Binding(
            "a", "add", "Add", id="answer.add", tooltip="Add a root cause (RCA) or a path (path restoration)"
        ),
        Binding("x", "remove", "Remove", id="answer.remove", tooltip="Remove the highlighted entry"),
        Binding(
            "e", "edit_path", "Edit", id="answer.edit", tooltip="Rebuild the highlighted path", show=False
        ),
    ]

    DEFAULT_CSS = """
    AnswerSection #answer-lines { height: auto; max-height: 8; border: round $primary-background; padding: 0 1; }
    """

    def compose(self) -> ComposeResult:
        yield Label(self.TITLE, classes="section-title")
        help_text = self.HELP_TOPOLOGY if self.session.family == Family.TOPOLOGY else self.HELP
        if self.session.answers_in_lines:
            help_text = (
                f"What a correct agent answers ({self.session.answer_format()}). "
                "a: add a line · e: edit all lines · x: remove the highlighted line"
            )
        yield Label(help_text, classes="section-help")
        yield DataTable(id="answer-table", cursor_type="row", zebra_stripes=True)
        yield Label("As the agent must write it", classes="label")
        yield Static("", id="answer-lines")

    def on_mount(self) -> None:
        table = self.query_one("#answer-table", DataTable)
        if self.session.family == Family.RCA:
            table.add_columns("#", "Node", "Object", "Root-cause label", "Category")
        elif self.session.family == Family.TOPOLOGY:
            table.add_columns("#", "End A", "End B")
        elif self.session.answers_in_lines:
            table.add_columns("#", "Answer line")
        else:
            table.add_columns("#", "Hops", "Path")
        self.refresh_view()

    def refresh_view(self) -> None:
        table = self.query_one("#answer-table", DataTable)
        row = table.cursor_row
        table.clear()
        answer = self.session.draft.hidden.answer
        lines: list[str] = []
        if self.session.family == Family.RCA:
            tax = self.session.ts.taxonomy
            for i, t in enumerate(answer.rca or []):
                cat = tax.category_of(t.label) or "?"
                table.add_row(str(i + 1), t.node, t.object, t.label, f"{cat} {tax.category_name(cat)}")
                lines.append(rca_text(t))
        elif self.session.family == Family.TOPOLOGY:
            for i, x in enumerate(answer.links or []):
                table.add_row(str(i + 1), f"{x.a.node}({x.a.interface})", f"{x.b.node}({x.b.interface})")
                lines.append(link_text(x))
        elif self.session.answers_in_lines:
            for i, line in enumerate(self.session.answer_lines()):
                table.add_row(str(i + 1), line)
                lines.append(line)
        else:
            for i, p in enumerate(answer.paths or []):
                table.add_row(str(i + 1), str(len(p.hops)), path_text(p))
                lines.append(path_text(p))
        if table.row_count:
            table.move_cursor(row=min(row, table.row_count - 1), animate=False)
        self.query_one("#answer-lines", Static).update(
            Text("\n".join(lines)) if lines else Text("(no answer yet: press a to add)", style="dim")
        )

    def focus_first(self) -> None:
        self.query_one("#answer-table", DataTable).focus()

    def focus_target(self, target: Target) -> None:
        self.move_to_row(self.query_one("#answer-table", DataTable), target.row)

    def _index(self) -> int | None:
        table = self.query_one("#answer-table", DataTable)
        n = len(self._entries())
        return table.cursor_row if n and table.cursor_row is not None and table.cursor_row < n else None

    # ------------------------------------------------------------------ actions

    def _entries(self) -> list[object]:
        answer = self.session.draft.hidden.answer
        family = self.session.family
        if family == Family.RCA:
            return list(answer.rca or [])
        if self.session.answers_in_lines:
            return list(self.session.answer_lines())
        return list((answer.links if family == Family.TOPOLOGY else answer.paths) or [])

    def action_add(self) -> None:
        if self.session.family == Family.RCA:
            self.add_rca()
        elif self.session.family == Family.TOPOLOGY:
            self.add_gold_link()
        elif self.session.answers_in_lines:
            self.add_answer_line()
        else:
            self.add_path()

    @background()
    async def add_answer_line(self) -> None:
        """One answer line of a plug-in family, checked by its parser before the dialog closes."""
        session = self.session

        def check(values: FormValues) -> str | None:
            return self.try_edit(lambda s: s.add_answer_line(values["line"]))

        await self.app.push_screen_wait(
            FormDialog(
                f"Answer line {len(session.answer_lines()) + 1}",
                [
                    FormField(
                        "line",
                        "Answer line, as the agent writes it",
                        placeholder=session.answer_format(),
                        required=True,
                        help=session.answer_format(),
                    )
                ],
                check=check,
                submit_label="Add",
            )
        )

    @background()
    async def edit_answer_lines(self) -> None:
        """Every answer line of a plug-in family at once: replaced only when the family takes all."""
        session = self.session

        def check(values: FormValues) -> str | None:
            return self.try_edit(lambda s: s.set_answer_lines(values["lines"].splitlines()))

        await self.app.push_screen_wait(
            FormDialog(
                "Gold answer lines",
                [
                    FormField(
                        "lines",
                        "One answer line per line, as the agent writes them",
                        value="\n".join(session.answer_lines()),
                        kind="text",
                        required=True,
                        help=session.answer_format(),
                    )
                ],
                check=check,
                submit_label="Save lines",
            )
        )

    @background()
    async def add_rca(self) -> None:
        session = self.session
        net = session.network
        nodes = [Choice(d.name, d.name, f"{d.vendor} {d.type} {d.role}".strip()) for d in net.devices]
        node = await self.app.push_screen_wait(PickDialog("Root cause 1/3 — faulty node", nodes))
        if node is None:
            return
        objects = [Choice(o, o) for o in session.rca_objects(node)]
        obj = await self.app.push_screen_wait(
            PickDialog(
                f"Root cause 2/3 — faulty object on {node}",
                objects,
                allow_custom=True,
                help="An interface or address of the node, or type another object (route, policy, VPN instance…)",
            )
        )
        if not obj:
            return
        tax = session.ts.taxonomy
        labels = [
            Choice(lab.label, lab.label, f"{lab.category} · {lab.l1} · {', '.join(lab.aliases[:3])}")
            for lab in tax.labels
        ]
        label = await self.app.push_screen_wait(
            PickDialog(
                f"Root cause 3/3 — label for {node};{obj}",
                labels,
                allow_custom=True,
                help="Search by label, alias, group or category; an alias is stored as its label",
            )
        )
        if not label:
            return
        self.edit(lambda s: s.add_rca(s.make_triple(node, obj, label)), "root cause")

    @background()
    async def add_gold_link(self) -> None:
        session = self.session
        n = len(session.draft.hidden.answer.links or []) + 1
        nodes = [
            Choice(d.name, d.name, f"{d.vendor} {d.type} {d.role}".strip()) for d in session.network.devices
        ]
        ends: list[tuple[str, str]] = []
        for step, side in ((1, "A"), (3, "B")):
            node = await self.app.push_screen_wait(
                PickDialog(f"Link {n} {step}/4 — node at end {side}", nodes)
            )
            if node is None:
                return
            ports = [Choice(p, p) for p in session.gold_link_ports(node)]
            port = await self.app.push_screen_wait(
                PickDialog(
                    f"Link {n} {step + 1}/4 — port of {node}",
                    ports,
                    allow_custom=True,
                    help="One of the node's interfaces, or type the port as the device names it",
                )
            )
            if not port:
                return
            ends.append((node, port))
        self.edit(lambda s: s.add_gold_link(s.make_gold_link(ends[0], ends[1])), "link")

    @background()
    async def add_path(self) -> None:
        session = self.session
        devices = [(d.name, f"{d.vendor} {d.type} {d.role}".strip()) for d in session.network.devices]
        n = len(session.draft.hidden.answer.paths or []) + 1
        hops = await self.app.push_screen_wait(
            PathBuilderDialog(
                devices, session.next_hops, title=f"Path {n}", ingress=session.paths_name_ingress()
            )
        )
        if not hops:
            return
        self.edit(lambda s: s.add_path(s.make_path(hops)), "path")

    @background()
    async def action_edit_path(self) -> None:
        """The path builder on the highlighted path, its hops (and ingress ports) loaded to take back."""
        if self.session.answers_in_lines:
            self.edit_answer_lines()
            return
        idx = self._index()
        if idx is None or self.session.family != Family.PATH:
            return
        session = self.session
        path = (session.draft.hidden.answer.paths or [])[idx]
        devices = [(d.name, f"{d.vendor} {d.type} {d.role}".strip()) for d in session.network.devices]
        hops = await self.app.push_screen_wait(
            PathBuilderDialog(
                devices,
                session.next_hops,
                title=f"Path {idx + 1}",
                ingress=any(h.ingress for h in path.hops),
                start=[(h.node, h.egress, h.ingress) for h in path.hops],
            )
        )
        if not hops:
            return
        self.edit(lambda s: s.replace_path(idx, s.make_path(hops)), "path changed")

    @background()
    async def action_remove(self) -> None:
        idx = self._index()
        if idx is None:
            return
        answer = self.session.draft.hidden.answer
        if self.session.family == Family.RCA:
            what = rca_text((answer.rca or [])[idx])
        elif self.session.family == Family.TOPOLOGY:
            what = link_text((answer.links or [])[idx])
        elif self.session.answers_in_lines:
            what = self.session.answer_lines()[idx]
        else:
            what = path_text((answer.paths or [])[idx])
        if not await self.app.push_screen_wait(ConfirmDialog(f"Remove {what} from the gold answer?")):
            return
        if self.session.family == Family.RCA:
            self.edit(lambda s: s.remove_rca(idx), "root cause removed")
        elif self.session.family == Family.TOPOLOGY:
            self.edit(lambda s: s.remove_gold_link(idx), "link removed")
        elif self.session.answers_in_lines:
            self.edit(lambda s: s.remove_answer_line(idx), "answer line removed")
        else:
            self.edit(lambda s: s.remove_path(idx), "path removed")
