"""Network: which (shared) network the task runs on, its devices and links, and who agents may query."""

from __future__ import annotations

from pydantic import ValidationError
from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.widgets import DataTable, Label, Static

from ctbench.authoring.app.dialogs.confirm import ConfirmDialog
from ctbench.authoring.app.dialogs.form import FormDialog, FormField, FormValues
from ctbench.authoring.app.dialogs.pick import Choice, PickDialog
from ctbench.authoring.app.widgets.sections.base import Section
from ctbench.authoring.app.widgets.validation_panel import Target
from ctbench.authoring.app.workers import background
from ctbench.authoring.editing import EditSession
from ctbench.authoring.working_copy import EditError, split_csv
from ctbench.dialects import os_families
from ctbench.errors import validation_message
from ctbench.model import Device


def device_fields(dev: Device | None) -> list[FormField]:
    d = dev
    return [
        FormField("name", "Name (no spaces or ';')", d.name if d else "", required=True),
        FormField(
            "vendor",
            "Vendor",
            d.vendor if d else "",
            placeholder="Huawei, H3C, Cisco, Juniper…",
            required=True,
            suggestions=("Huawei", "H3C", "Cisco", "Juniper", "Generic"),
        ),
        FormField(
            "os",
            "CLI family (empty for hosts without a CLI)",
            (d.os or "") if d else "",
            kind="select",
            options=tuple((o, o) for o in os_families()),
        ),
        FormField(
            "type",
            "Device type",
            d.type if d else "",
            placeholder="router, switch, firewall, server, pc…",
            required=True,
            suggestions=("router", "switch", "firewall", "server", "pc", "load balancer"),
        ),
        FormField("role", "Role", d.role if d else "", placeholder="core, access, gateway, PE…"),
        FormField("site", "Site", d.site if d else ""),
        FormField("cluster", "Cluster (HA pair, stack)", d.cluster if d else ""),
        FormField("model", "Hardware model", d.model if d else ""),
        FormField(
            "interfaces", "Interfaces, comma-separated (full names)", ", ".join(d.interfaces) if d else ""
        ),
        FormField(
            "addresses", "Addresses, comma-separated (a.b.c.d/len)", ", ".join(d.addresses) if d else ""
        ),
    ]


def device_from(values: FormValues) -> Device:
    try:
        return Device(
            name=values["name"].strip(),
            vendor=values["vendor"].strip(),
            os=values["os"] or None,
            type=values["type"].strip(),
            role=values["role"].strip(),
            site=values["site"].strip(),
            cluster=values["cluster"].strip(),
            model=values["model"].strip(),
            interfaces=split_csv(values["interfaces"]),
            addresses=split_csv(values["addresses"]),
        )
    except ValidationError as exc:
        raise EditError(validation_message(exc, "")) from None


class NetworkSection(Section):
    SECTION_ID = "network"
    TITLE = "Network"
    HELP = (
        "Space: let agents query a device or not. Networks are shared: device and link edits apply to "
        "every task on the network."
    )

    BINDINGS = [
        Binding(
            "c",
            "choose_network",
            "Choose network",
            id="network.choose",
            tooltip="Run the task on another shared network",
        ),
        Binding(
            "N", "new_network", "New network", id="network.new", tooltip="Create a network for this task"
        ),
        Binding(
            "a", "add_device", "Add device", id="network.add_device", tooltip="Add a device to the network"
        ),
        Binding("e", "edit_device", "Edit", id="network.edit_device", tooltip="Edit the highlighted device"),
        Binding(
            "space",
            "toggle_access",
            "Agent access",
            id="network.toggle_access",
            tooltip="Let agents query the highlighted device, or not",
        ),
        Binding("l", "add_link", "Add link", id="network.add_link", tooltip="Cable two interfaces together"),
        Binding(
            "x",
            "remove",
            "Remove",
            id="network.remove",
            tooltip="Remove the highlighted device or link (asks first)",
        ),
    ]

    DEFAULT_CSS = """
    NetworkSection #network-devices { height: 2fr; }
    NetworkSection #network-links { height: 1fr; }
    NetworkSection #network-info { height: auto; padding-top: 1; }
    """

    def compose(self) -> ComposeResult:
        yield Label(self.TITLE, classes="section-title")
        yield Label(self.HELP, classes="section-help")
        yield Static("", id="network-info")
        yield Label("Devices", classes="label")
        yield DataTable(id="network-devices", cursor_type="row", zebra_stripes=True)
        yield Label("Links", classes="label")
        yield DataTable(id="network-links", cursor_type="row", zebra_stripes=True)

    def on_mount(self) -> None:
        self.query_one("#network-devices", DataTable).add_columns(
            "Device", "Vendor", "OS", "Type", "Role", "Site", "Agent access"
        )
        self.query_one("#network-links", DataTable).add_columns("#", "End A", "End B")
        self.refresh_view()

    def refresh_view(self) -> None:
        session = self.session
        try:
            net = session.network
        except Exception as exc:
            self.query_one("#network-info", Static).update(
                Text(f"network cannot be read: {exc}", style="red")
            )
            return
        draft = session.draft
        state = (
            "new network, saved with the task"
            if draft.network_is_new
            else "shared network, edited here: saved to networks/ with the task"
            if draft.network is not None
            else "shared network"
        )
        info = Text.assemble(
            ("Network ", "dim"),
            (net.name, "bold"),
            f"  ({state}) · ",
            (f"{len(net.devices)} device(s), {len(net.links)} link(s)", "dim"),
        )
        if net.description:
            info.append(f"\n{net.description}", style="dim")
        self.query_one("#network-info", Static).update(info)
        access = set(session.accessible_devices())
        devices = self.query_one("#network-devices", DataTable)
        row = devices.cursor_row
        devices.clear()
        for d in net.devices:
            if d.os is None:
                agent = Text("no CLI", style="dim")
            elif d.name in access:
                agent = Text("✓ yes", style="green")
            else:
                agent = Text("✗ no", style="yellow")
            devices.add_row(d.name, d.vendor, d.os or "-", d.type, d.role, d.site, agent, key=d.name)
        if devices.row_count:
            devices.move_cursor(row=min(row, devices.row_count - 1), animate=False)
        links = self.query_one("#network-links", DataTable)
        lrow = links.cursor_row
        links.clear()
        for i, lk in enumerate(net.links):
            links.add_row(str(i + 1), str(lk.a), str(lk.b))
        if links.row_count:
            links.move_cursor(row=min(lrow, links.row_count - 1), animate=False)

    def focus_first(self) -> None:
        self.query_one("#network-devices", DataTable).focus()

    def focus_target(self, target: Target) -> None:
        if target.field == "links":
            self.move_to_row(self.query_one("#network-links", DataTable), target.row)
        else:
            self.move_to_row(self.query_one("#network-devices", DataTable), target.row)

    def _current_device(self) -> str | None:
        table = self.query_one("#network-devices", DataTable)
        try:
            net = self.session.network
        except Exception:
            return None
        if not net.devices or table.cursor_row is None or table.cursor_row >= len(net.devices):
            return None
        return net.devices[table.cursor_row].name

    # ------------------------------------------------------------------ actions

    @background()
    async def action_choose_network(self) -> None:
        names = self.session.ts.network_names()
        choice = await self.app.push_screen_wait(
            PickDialog("Run the task on which shared network?", [Choice(n, n) for n in names], initial="")
        )
        if choice is not None:
            self.edit(lambda s: s.use_network(choice), f"network {choice}")

    @background()
    async def action_new_network(self) -> None:
        def check(values: FormValues) -> str | None:
            return self.try_edit(
                lambda s: s.create_network(values["name"].strip(), values["description"].strip())
            )

        await self.app.push_screen_wait(
            FormDialog(
                "New network for this task",
                [
                    FormField("name", "Network name (file networks/NAME.yaml)", required=True),
                    FormField("description", "Description"),
                ],
                check=check,
                submit_label="Create",
            )
        )

    @background()
    async def action_add_device(self) -> None:
        def check(values: FormValues) -> str | None:
            return self.try_edit(lambda s: s.upsert_device(device_from(values)))

        await self.app.push_screen_wait(
            FormDialog("Add a device", device_fields(None), check=check, submit_label="Add")
        )

    @background()
    async def action_edit_device(self) -> None:
        name = self._current_device()
        if name is None:
            return
        dev = self.session.device(name)

        def check(values: FormValues) -> str | None:
            return self.try_edit(lambda s: s.upsert_device(device_from(values), replaces=name))

        await self.app.push_screen_wait(
            FormDialog(f"Edit {name}", device_fields(dev), check=check, submit_label="Save")
        )

    def action_toggle_access(self) -> None:
        name = self._current_device()
        if name is None:
            return
        now = name in self.session.accessible_devices()
        self.edit(lambda s: s.set_accessible(name, not now), f"access {name}")

    @background()
    async def action_add_link(self) -> None:
        session: EditSession = self.session
        devices = [Choice(d.name, d.name, f"{d.vendor} {d.type}") for d in session.network.devices]
        ends: list[str] = []
        for which in ("A", "B"):
            node = await self.app.push_screen_wait(PickDialog(f"Link end {which}: device", devices))
            if node is None:
                return
            ifaces = [Choice(i, i) for i in session.device(node).interfaces]
            iface = await self.app.push_screen_wait(
                PickDialog(f"Link end {which}: interface of {node}", ifaces, allow_custom=True)
            )
            if not iface:
                return
            ends.append(f"{node}:{iface}")
        self.edit(lambda s: s.add_link(ends[0], ends[1]), "link")

    @background()
    async def action_remove(self) -> None:
        links = self.query_one("#network-links", DataTable)
        if links.has_focus:
            idx = links.cursor_row
            net = self.session.network
            if idx is None or idx >= len(net.links):
                return
            lk = net.links[idx]
            if await self.app.push_screen_wait(ConfirmDialog(f"Remove the link {lk.a} -- {lk.b}?")):
                self.edit(lambda s: s.remove_link(idx), "link removed")
            return
        name = self._current_device()
        if name is None:
            return
        if await self.app.push_screen_wait(
            ConfirmDialog(
                f"Remove {name} from network {self.session.network.name}?",
                detail="Its links go with it. Other tasks on this network lose the device too.",
                danger=True,
            )
        ):
            self.edit(lambda s: s.remove_device(name), f"removed {name}")

    @on(DataTable.RowSelected, "#network-devices")
    def _device_selected(self) -> None:
        self.action_edit_device()
