"""Editing a task: the domain operations behind both the authoring app and the scripted commands.

Everything an author can do to a task goes through :class:`EditSession`, which works on a
:class:`TaskDraft` — an in-memory working copy of the task folder (both YAML files, the network it
uses, and the recording bytes that are not on disk yet). The app calls the same methods on every key
press that the ``ctb-author add-recording``/``add-golden``/``set-answer`` commands call once, so a task
built by script and one built by hand are indistinguishable and checked by the same code.

Nothing here touches the disk until :meth:`EditSession.save`, which hands the draft to the
transactional save (:mod:`.saving`); live validation is the shadow validation (:mod:`.shadow`); the
working copy's types are in :mod:`.working_copy` and reading session logs in :mod:`.capture`.
"""

from __future__ import annotations

import difflib
import hashlib
from collections.abc import Sequence
from pathlib import Path

from pydantic import ValidationError

from ctbench.answer import path_line
from ctbench.authoring.links_editing import LinkEditing
from ctbench.authoring.plugin_answer import PluginAnswerEditing, statement_template
from ctbench.authoring.saving import save_draft
from ctbench.authoring.working_copy import (
    Action,
    EditError,
    HopChoice,
    MetaRow,
    SaveResult,
    TaskDraft,
    check_new_id,
    files_digest,
    format_validation,
    normalise_command,
)
from ctbench.derived import DECLARED_FIELDS, derive, mismatches
from ctbench.errors import CtbError
from ctbench.model import (
    AuthoredMetadata,
    DerivedMetadata,
    Device,
    Endpoint,
    Family,
    GoldAnswer,
    GoldenAction,
    GoldPath,
    HiddenSpec,
    Link,
    Network,
    PathHop,
    RcaTriple,
    Recording,
    Status,
    TaskSpec,
)
from ctbench.store import TaskSet, recording_filename, safe_recording_path

# --------------------------------------------------------------------------- the session


class EditSession(LinkEditing, PluginAnswerEditing):
    """A task set plus one task's working copy, with every edit an author can make.

    Methods raise :class:`EditError` with a message for a person when an edit does not make sense
    (unknown device, a golden action without a recording, an unknown root-cause label...), and
    otherwise change the draft and append a line to ``draft.changes`` for the commit message.
    """

    def __init__(self, ts: TaskSet, draft: TaskDraft) -> None:
        self.ts = ts
        self.draft = draft
        self.vendors = ts.vendors
        self.base: tuple[TaskSpec, HiddenSpec] | None = None
        """The task as on disk when this copy was taken from it (or last saved): what a merge with
        changes made there meanwhile compares against (:mod:`ctbench.authoring.merge`)."""

    # -------------------------------------------------------------- opening

    @classmethod
    def open(cls, ts: TaskSet, task_id: str) -> EditSession:
        ref = ts.ref(task_id)
        task = ts.load_task(ref)
        hidden = ts.load_hidden(ref)
        draft = TaskDraft(
            task=task, statement=task.statement, hidden=hidden, base_digest=files_digest(ref.path)
        )
        session = cls(ts, draft)
        session.base = (task.model_copy(deep=True), hidden.model_copy(deep=True))
        return session

    @classmethod
    def create(
        cls,
        ts: TaskSet,
        family: Family | str,
        task_id: str,
        network: str,
        *,
        statement: str | None = None,
        title: str = "",
        author: str = "",
        new_network: Network | None = None,
    ) -> EditSession:
        """A new task (not on disk until saved). ``new_network`` creates the named network with it."""
        family = Family(family)
        check_new_id(ts, task_id)
        if new_network is not None:
            if new_network.name != network:
                raise EditError(f"new network is named {new_network.name!r}, the task asks for {network!r}")
            if ts.network_path(network).exists():
                raise EditError(f"network {network} already exists; pick it instead of creating it")
        elif network not in ts.network_names():
            known = ", ".join(ts.network_names()) or "none yet"
            raise EditError(f"network {network!r} not found in {ts.root / 'networks'} (known: {known})")
        # None: start from the family's template. "" (the app): start empty, the template is a placeholder;
        # the model keeps the template meanwhile because task.yaml can never hold an empty statement.
        template = statement_template(family)
        text = template if statement is None else statement
        canary = ts.config.canary
        try:
            task = TaskSpec(
                id=task_id,
                family=family,
                status=Status.DRAFT,
                title=title,
                statement=text if text.strip() else template,
                network=network,
                authors=[author] if author else [],
                canary=canary,
            )
        except ValidationError as exc:
            raise EditError(format_validation(exc, "new task")) from None
        hidden = HiddenSpec(
            id=task_id,
            answer=GoldAnswer(
                rca=[] if family == Family.RCA else None,
                paths=[] if family == Family.PATH else None,
                links=[] if family == Family.TOPOLOGY else None,
            ),
            canary=canary,
        )
        draft = TaskDraft(
            task=task,
            statement=text,
            hidden=hidden,
            network=new_network,
            network_is_new=new_network is not None,
            is_new=True,
            changes=[f"created {family.value} task {task_id} on network {network}"],
        )
        return cls(ts, draft)

    @classmethod
    def duplicate(cls, ts: TaskSet, source_id: str, new_id: str, *, author: str = "") -> EditSession:
        """A new draft task copied from ``source_id``: same content, recordings carried along, status draft."""
        check_new_id(ts, new_id)
        src = cls.open(ts, source_id)
        ref = ts.ref(source_id)
        pending: dict[str, bytes] = {}
        for rec in src.draft.task.recordings:
            try:
                pending[rec.file] = ts.read_recording(ref, rec)
            except CtbError as exc:
                raise EditError(f"cannot copy {source_id}: {exc}") from None
        task = src.draft.task.model_copy(
            update={
                "id": new_id,
                "status": Status.DRAFT,
                "authors": [author] if author else list(src.draft.task.authors),
            }
        )
        hidden = src.draft.hidden.model_copy(update={"id": new_id})
        draft = TaskDraft(
            task=task,
            statement=src.draft.statement,
            hidden=hidden,
            pending=pending,
            is_new=True,
            origin=source_id,
            changes=[f"duplicated from {source_id}"],
        )
        return cls(ts, draft)

    # -------------------------------------------------------------- context

    @property
    def task_id(self) -> str:
        return self.draft.id

    @property
    def family(self) -> Family:
        return self.draft.family

    @property
    def folder(self) -> Path:
        return self.ts.task_dir(self.family, self.task_id)

    @property
    def network(self) -> Network:
        if self.draft.network is not None:
            return self.draft.network
        return self.ts.network(self.draft.task.network)

    def device(self, name: str) -> Device:
        dev = self.network.device(name)
        if dev is None:
            names = ", ".join(d.name for d in self.network.devices) or "none"
            raise EditError(f"device {name!r} is not in network {self.network.name} (devices: {names})")
        return dev

    def accessible_devices(self) -> list[str]:
        """Devices an agent may query (the task's list, or every device with a CLI)."""
        acc = self.draft.task.accessible
        names = [d.name for d in self.network.devices if d.os is not None]
        return [n for n in names if acc is None or n in acc]

    def _note(self, text: str) -> None:
        self.draft.changes.append(text)

    def _set_task(self, **update: object) -> None:
        self.draft.task = self.draft.task.model_copy(update=update)

    def _set_hidden(self, **update: object) -> None:
        self.draft.hidden = self.draft.hidden.model_copy(update=update)

    # -------------------------------------------------------------- statement

    def set_statement(self, text: str) -> None:
        if text == self.draft.statement:
            return
        self.draft.statement = text
        if text.strip():
            self._set_task(statement=text)
        if "edited the statement" not in self.draft.changes:
            self._note("edited the statement")

    def set_title(self, title: str) -> None:
        if title != self.draft.task.title:
            self._set_task(title=title)  # stripped when saved: the author may be typing a space
            self._note("changed the title")

    def set_rationale(self, text: str) -> None:
        if text != self.draft.hidden.rationale:
            self._set_hidden(rationale=text.strip())
            self._note("edited the rationale")

    # -------------------------------------------------------------- network

    def use_network(self, name: str) -> None:
        """Point the task at another shared network (drops a working copy of the old one)."""
        if name not in self.ts.network_names():
            raise EditError(f"network {name!r} not found (known: {', '.join(self.ts.network_names())})")
        self.draft.network = None
        self.draft.network_is_new = False
        self._set_task(network=name)
        self._note(f"uses network {name}")

    def create_network(self, name: str, description: str = "") -> None:
        if self.ts.network_path(name).exists():
            raise EditError(f"network {name} already exists; pick it instead")
        try:
            net = Network(name=name, description=description, devices=[])
        except ValidationError as exc:
            raise EditError(format_validation(exc, "network")) from None
        self.draft.network = net
        self.draft.network_is_new = True
        self._set_task(network=name, accessible=None)
        self._note(f"created network {name}")

    def _edit_network(self) -> Network:
        if self.draft.network is None:
            self.draft.network = self.ts.network(self.draft.task.network).model_copy(deep=True)
        return self.draft.network

    def upsert_device(self, device: Device, *, replaces: str | None = None) -> None:
        """Add a device, or replace ``replaces`` (renaming it in links when the name changes)."""
        net = self._edit_network()
        devices = list(net.devices)
        target = replaces or device.name
        idx = next((i for i, d in enumerate(devices) if d.name == target), None)
        if device.name != target and net.device(device.name) is not None:
            raise EditError(f"network {net.name} already has a device {device.name}")
        if idx is None:
            if net.device(device.name) is not None:
                raise EditError(f"network {net.name} already has a device {device.name}")
            devices.append(device)
            self._note(f"added device {device.name} to network {net.name}")
        else:
            devices[idx] = device
            self._note(f"edited device {device.name} in network {net.name}")
        links = list(net.links)
        if replaces and device.name != replaces:
            links = [
                Link(a=self._rename(lk.a, replaces, device.name), b=self._rename(lk.b, replaces, device.name))
                for lk in links
            ]
            acc = self.draft.task.accessible
            if acc is not None:
                self._set_task(accessible=[device.name if n == replaces else n for n in acc])
        self.draft.network = net.model_copy(update={"devices": devices, "links": links})

    @staticmethod
    def _rename(end: Endpoint, old: str, new: str) -> Endpoint:
        return Endpoint(node=new, interface=end.interface) if end.node == old else end

    def remove_device(self, name: str) -> None:
        net = self._edit_network()
        self.device(name)
        used = [r for r in self.draft.task.recordings if r.device == name]
        if used:
            raise EditError(f"{name} has {len(used)} recording(s) in this task; remove them first")
        links = [lk for lk in net.links if name not in (lk.a.node, lk.b.node)]
        self.draft.network = net.model_copy(
            update={"devices": [d for d in net.devices if d.name != name], "links": links}
        )
        acc = self.draft.task.accessible
        if acc is not None and name in acc:
            self._set_task(accessible=[n for n in acc if n != name])
        self._note(f"removed device {name} from network {net.name}")

    def add_link(self, a: str, b: str) -> Link:
        """Cable ``node:interface`` to ``node:interface``; interfaces are added to the devices if new."""
        net = self._edit_network()
        try:
            link = Link.model_validate([a, b])
        except (ValidationError, ValueError) as exc:
            raise EditError(f"link {a} -- {b}: expected node:interface on both ends ({exc})") from None
        devices = {d.name: d for d in net.devices}
        for end in (link.a, link.b):
            if end.node not in devices:
                raise EditError(f"link end {end}: no device {end.node!r} in network {net.name}")
        for existing in net.links:
            for end in (link.a, link.b):
                for other in (existing.a, existing.b):
                    if other.node == end.node and self.vendors.iface(
                        devices[end.node], other.interface
                    ) == self.vendors.iface(devices[end.node], end.interface):
                        raise EditError(
                            f"{end} is already cabled ({existing.as_pair()[0]} -- {existing.as_pair()[1]})"
                        )
        new_devices = []
        for d in net.devices:
            for end in (link.a, link.b):
                if end.node == d.name and end.interface not in d.interfaces:
                    d = d.model_copy(update={"interfaces": [*d.interfaces, end.interface]})
            new_devices.append(d)
        self.draft.network = net.model_copy(update={"devices": new_devices, "links": [*net.links, link]})
        self._note(f"linked {link.a} -- {link.b}")
        return link

    def remove_link(self, index: int) -> None:
        net = self._edit_network()
        if not 0 <= index < len(net.links):
            raise EditError(f"there is no link {index + 1}")
        gone = net.links[index]
        self.draft.network = net.model_copy(
            update={"links": [lk for i, lk in enumerate(net.links) if i != index]}
        )
        self._note(f"removed link {gone.a} -- {gone.b}")

    def set_accessible(self, name: str, accessible: bool) -> None:
        """Let agents query ``name`` or not. ``accessible`` is written out only when it restricts."""
        dev = self.device(name)
        if accessible and dev.os is None:
            raise EditError(f"{name} has no CLI (no os), agents cannot log into it")
        with_cli = [d.name for d in self.network.devices if d.os is not None]
        current = set(self.draft.task.accessible if self.draft.task.accessible is not None else with_cli)
        current = current | {name} if accessible else current - {name}
        ordered = [n for n in with_cli if n in current]
        # Hosts never count: "every device with a CLI" is written as an explicit list for clarity.
        self._set_task(accessible=ordered)
        self._note(f"{'opened' if accessible else 'closed'} {name} to agents")

    # -------------------------------------------------------------- recordings

    def canonical(self, device: str, command: str) -> tuple[str, str]:
        """(canonical command, note) for a command typed by an author on ``device``.

        The recording key must be what the replay engine resolves an agent's command to, so a
        command the vendor dialect understands is stored in its canonical spelling; output filters
        are refused because replay applies them to the unfiltered recording.
        """
        dev = self.device(device)
        if dev.os is None:
            raise EditError(f"{device} has no CLI (no os in the network), so it cannot have recordings")
        typed = normalise_command(command)
        if not typed:
            raise EditError("the command is empty")
        try:
            dialect = self.vendors.dialect(dev.os)
            if dialect is None:
                return typed, ""
            res = dialect.resolve(typed)
        except Exception:  # a dialect bug must not stop an author; validation reports what it can
            return typed, ""
        if getattr(res, "filters", ()):
            raise EditError(
                f"{typed!r} has an output filter; record the unfiltered output "
                "(replay applies | include/| match to it when an agent asks)"
            )
        if res.ok and res.canonical:
            note = "" if res.canonical == typed else f"stored as {res.canonical!r}"
            return str(res.canonical), note
        return typed, f"the {dev.os} dialect does not know {typed!r}; kept as typed"

    def find_recording(self, device: str, command: str) -> tuple[int, Recording]:
        canon, _ = self.canonical(device, command)
        for i, rec in enumerate(self.draft.task.recordings):
            if rec.device == device and rec.command in (canon, normalise_command(command)):
                return i, rec
        on_dev = [r.command for r in self.draft.task.recordings if r.device == device]
        hint = ("; recorded on it: " + "; ".join(on_dev)) if on_dev else f"; {device} has no recordings"
        raise EditError(f"no recording of {canon!r} on {device}{hint}")

    def _file_for(self, device: str, command: str) -> str:
        rel = recording_filename(device, command)
        taken = {r.file for r in self.draft.task.recordings}
        if rel in taken:
            digest = hashlib.sha1(f"{device}\0{command}".encode()).hexdigest()[:8]
            rel = rel[: -len(".txt")] + f"_{digest}.txt"
        return rel

    def add_recording(
        self, device: str, command: str, data: bytes, *, replace: bool = False
    ) -> tuple[Recording, str]:
        """Index ``data`` (bytes exactly as captured) as the output of ``command`` on ``device``."""
        if not data:
            raise EditError(f"the output for {device} {command!r} is empty; record what the device printed")
        canon, note = self.canonical(device, command)
        recs = list(self.draft.task.recordings)
        for rec in recs:
            if rec.key == (device, canon):
                if not replace:
                    raise EditError(
                        f"{device} {canon!r} is already recorded ({rec.file}); "
                        "replace it explicitly (--replace, or Replace in the app)"
                    )
                self.draft.pending[rec.file] = data
                if rec.file in self.draft.removed_files:
                    self.draft.removed_files.remove(rec.file)
                self._note(f"replaced recording {device} {canon!r}")
                return rec, note
        rel = self._file_for(device, canon)
        rec = Recording(device=device, command=canon, file=rel)
        recs.append(rec)
        self._set_task(recordings=recs)
        self.draft.pending[rel] = data
        if rel in self.draft.removed_files:
            self.draft.removed_files.remove(rel)
        self._note(f"added recording {device} {canon!r}")
        return rec, note

    def remove_recording(self, device: str, command: str, *, cascade: bool = False) -> list[GoldenAction]:
        """Drop a recording; golden actions on it go too when ``cascade``, else the edit is refused."""
        _, rec = self.find_recording(device, command)
        golden = [a for a in self.draft.hidden.golden_actions if a.key == rec.key]
        if golden and not cascade:
            raise EditError(f"{device} {rec.command!r} backs a golden action; remove the golden action first")
        self._set_task(recordings=[r for r in self.draft.task.recordings if r.key != rec.key])
        if golden:
            self._set_hidden(golden_actions=[a for a in self.draft.hidden.golden_actions if a.key != rec.key])
        self.draft.pending.pop(rec.file, None)
        if (self.folder / rec.file).exists() and rec.file not in self.draft.removed_files:
            self.draft.removed_files.append(rec.file)
        self._note(f"removed recording {device} {rec.command!r}")
        return golden

    def read_recording(self, rec: Recording) -> bytes:
        """The bytes of a recording as they will be stored (pending edit first, else the file)."""
        if rec.file in self.draft.pending:
            return self.draft.pending[rec.file]
        if self.draft.is_new:
            raise EditError(f"recording {rec.file} has no content")
        return safe_recording_path(self.folder, rec.file).read_bytes()

    # -------------------------------------------------------------- golden actions

    def add_golden(self, device: str, command: str, why: str = "") -> GoldenAction:
        _, rec = self.find_recording(device, command)
        if any(a.key == rec.key for a in self.draft.hidden.golden_actions):
            raise EditError(f"{device} {rec.command!r} is already a golden action")
        action = GoldenAction(device=device, command=rec.command, why=why.strip())
        self._set_hidden(golden_actions=[*self.draft.hidden.golden_actions, action])
        self._note(f"added golden action {device} {rec.command!r}")
        return action

    def set_golden_why(self, index: int, why: str) -> None:
        acts = list(self.draft.hidden.golden_actions)
        if not 0 <= index < len(acts):
            raise EditError(f"there is no golden action {index + 1}")
        acts[index] = acts[index].model_copy(update={"why": why.strip()})
        self._set_hidden(golden_actions=acts)
        self._note(f"explained golden action {acts[index].device} {acts[index].command!r}")

    def remove_golden(self, index: int) -> GoldenAction:
        acts = list(self.draft.hidden.golden_actions)
        if not 0 <= index < len(acts):
            raise EditError(f"there is no golden action {index + 1}")
        gone = acts.pop(index)
        self._set_hidden(golden_actions=acts)
        self._note(f"removed golden action {gone.device} {gone.command!r}")
        return gone

    def golden_candidates(self) -> list[Recording]:
        """Recordings that are not golden actions yet (what the golden-action picker offers)."""
        keys = self.draft.hidden.golden_keys()
        return [r for r in self.draft.task.recordings if r.key not in keys]

    # -------------------------------------------------------------- gold answer: RCA

    def resolve_label(self, text: str) -> str:
        """The taxonomy's canonical label for a label or alias; a clear error with close matches."""
        tax = self.ts.taxonomy
        found = tax.resolve(text)
        if found:
            return found
        names = [lab.label for lab in tax.labels] + [a for lab in tax.labels for a in lab.aliases]
        close = difflib.get_close_matches(text, names, n=3, cutoff=0.5)
        hint = (
            f"; did you mean {' or '.join(repr(c) for c in close)}?"
            if close
            else " (see taxonomy.yaml for the labels)"
        )
        raise EditError(f"unknown root-cause label {text!r}{hint}")

    def rca_objects(self, node: str) -> list[str]:
        """What an RCA object on ``node`` can be: its interfaces (named or cabled), then its addresses."""
        dev = self.device(node)
        objs: list[str] = list(dev.interfaces)
        for lk in self.network.links:
            for end in (lk.a, lk.b):
                if end.node == node and end.interface not in objs:
                    objs.append(end.interface)
        for addr in dev.addresses:
            bare = addr.split("/")[0]
            for cand in (bare, addr):
                if cand not in objs:
                    objs.append(cand)
        return objs

    def make_triple(self, node: str, obj: str, label: str) -> RcaTriple:
        self.device(node)
        canon = self.resolve_label(label.strip())
        try:
            return RcaTriple(node=node, object=obj.strip(), label=canon)
        except ValidationError as exc:
            raise EditError(format_validation(exc, "root cause")) from None

    def parse_rca(self, line: str) -> RcaTriple:
        parts = [p.strip() for p in line.split(";")]
        if len(parts) != 3 or not all(parts):
            raise EditError(f"{line!r}: expected node;object;root-cause label")
        return self.make_triple(*parts)

    def require_family(self, family: Family) -> None:
        """Refuse an answer of the other family with a message that says which one the task is."""
        if self.family != family:
            raise EditError(
                f"{self.task_id} is a {self.family.value} task; that answer belongs to {family.value} tasks"
            )

    def add_rca(self, triple: RcaTriple) -> None:
        self.require_family(Family.RCA)
        current = list(self.draft.hidden.answer.rca or [])
        if any(t == triple for t in current):
            raise EditError(f"{triple.node};{triple.object};{triple.label} is already in the answer")
        self._set_answer(rca=[*current, triple])
        self._note(f"added root cause {triple.node};{triple.object};{triple.label}")

    def remove_rca(self, index: int) -> RcaTriple:
        current = list(self.draft.hidden.answer.rca or [])
        if not 0 <= index < len(current):
            raise EditError(f"there is no root cause {index + 1}")
        gone = current.pop(index)
        self._set_answer(rca=current)
        self._note(f"removed root cause {gone.node};{gone.object};{gone.label}")
        return gone

    def set_rca(self, triples: Sequence[RcaTriple]) -> None:
        self.require_family(Family.RCA)
        self._set_answer(rca=list(triples))
        self._note("set the root causes: " + ", ".join(f"{t.node};{t.object};{t.label}" for t in triples))

    def _set_answer(self, **update: object) -> None:
        self._set_hidden(answer=self.draft.hidden.answer.model_copy(update=update))

    # -------------------------------------------------------------- gold answer: paths

    def next_hops(self, node: str) -> list[HopChoice]:
        """Where traffic can go from ``node``: each cabled interface and the neighbour behind it."""
        self.device(node)
        out: list[HopChoice] = []
        for lk in self.network.links:
            if lk.a.node == node:
                out.append(HopChoice(lk.a.interface, lk.b.node, lk.b.interface))
            if lk.b.node == node:
                out.append(HopChoice(lk.b.interface, lk.a.node, lk.a.interface))
        return out

    def make_path(
        self, hops: Sequence[tuple[str, str | None] | tuple[str, str | None, str | None]]
    ) -> GoldPath:
        """A path of ``(node, egress)`` hops, or ``(node, egress, ingress)`` for one named port by port
        on both sides (Track B's L2 paths): every hop but the first then names its ingress."""
        for node, *_ in hops:
            self.device(node)
        try:
            return GoldPath(
                hops=[PathHop(node=h[0], egress=h[1], ingress=h[2] if len(h) > 2 else None) for h in hops]
            )
        except ValidationError as exc:
            raise EditError(format_validation(exc, "path")) from None

    def paths_name_ingress(self) -> bool:
        """Whether the gold's paths are written port by port (their hops name ingress ports)."""
        return any(h.ingress for p in self.draft.hidden.answer.paths or [] for h in p.hops)

    def parse_path(self, line: str) -> GoldPath:
        """``A_GE1/0/1 -> B_Gi0/1 -> C``, node names split against the network (they may contain ``_``),
        or port by port, ``A(GE1/0/1) -> B(GE1/0/2) -> B(GE1/0/3) -> C(Gi0/1)`` (ingress kept)."""
        tokens = [t.strip() for t in line.split("->")]
        if len(tokens) < 2 or not all(tokens):
            raise EditError(f"{line!r}: expected at least two hops joined by ->")
        if all(t.endswith(")") and "(" in t for t in tokens):
            return self._parse_port_path(line, tokens)
        names = sorted((d.name for d in self.network.devices), key=len, reverse=True)
        hops: list[tuple[str, str | None]] = []
        for i, tok in enumerate(tokens):
            last = i == len(tokens) - 1
            if last:
                if tok not in names:
                    raise EditError(
                        f"{line!r}: the last hop {tok!r} must be a node name of network "
                        f"{self.network.name} (no interface)"
                    )
                hops.append((tok, None))
                continue
            node = next((n for n in names if tok.startswith(n + "_") and len(tok) > len(n) + 1), None)
            if node is None:
                raise EditError(
                    f"{line!r}: hop {i + 1} {tok!r} is not node_egress-interface for a node of "
                    f"network {self.network.name}"
                )
            hops.append((node, tok[len(node) + 1 :]))
        return self.make_path(hops)

    def _parse_port_path(self, line: str, tokens: list[str]) -> GoldPath:
        """``Node(port)`` tokens: a node's first port is where it is entered, its last where it is left."""
        groups: list[tuple[str, list[str]]] = []
        for tok in tokens:
            node, _, port = tok[:-1].partition("(")
            node, port = node.strip(), port.strip()
            if not node or not port:
                raise EditError(f"{line!r}: {tok!r} is not Node(port)")
            if groups and groups[-1][0] == node:
                groups[-1][1].append(port)
            else:
                groups.append((node, [port]))
        last = len(groups) - 1
        for i, (node, ports) in enumerate(groups[1:last], start=2):
            if len(ports) < 2:
                raise EditError(
                    f"{line!r}: hop {i} ({node}) names one port; write the port it is entered by and the "
                    f"one it leaves by: {node}(in) -> {node}(out)"
                )
        return self.make_path(
            [
                (node, ports[-1] if i < last else None, ports[0] if i > 0 else None)
                for i, (node, ports) in enumerate(groups)
            ]
        )

    def replace_path(self, index: int, path: GoldPath) -> None:
        self.require_family(Family.PATH)
        current = list(self.draft.hidden.answer.paths or [])
        if not 0 <= index < len(current):
            raise EditError(f"there is no path {index + 1}")
        if any(p == path for i, p in enumerate(current) if i != index):
            raise EditError("that path is already in the answer")
        old, current[index] = current[index], path
        self._set_answer(paths=current)
        self._note(f"changed path {index + 1}: {path_text(old)} to {path_text(path)}")

    def add_path(self, path: GoldPath) -> None:
        self.require_family(Family.PATH)
        current = list(self.draft.hidden.answer.paths or [])
        if any(p == path for p in current):
            raise EditError("that path is already in the answer")
        self._set_answer(paths=[*current, path])
        self._note("added path " + path_text(path))

    def remove_path(self, index: int) -> GoldPath:
        current = list(self.draft.hidden.answer.paths or [])
        if not 0 <= index < len(current):
            raise EditError(f"there is no path {index + 1}")
        gone = current.pop(index)
        self._set_answer(paths=current)
        self._note("removed path " + path_text(gone))
        return gone

    def set_paths(self, paths: Sequence[GoldPath]) -> None:
        self.require_family(Family.PATH)
        self._set_answer(paths=list(paths))
        self._note("set the paths: " + "; ".join(path_text(p) for p in paths))

    # -------------------------------------------------------------- metadata

    def set_metadata(self, **fields: object) -> AuthoredMetadata:
        """Update authored metadata fields (and ``declared`` ones as a dict); validated as a whole."""
        data = self.draft.hidden.metadata.model_dump()
        declared = fields.pop("declared", None)
        data.update(fields)
        if isinstance(declared, dict):
            data["declared"] = {**data["declared"], **declared}
        try:
            meta = AuthoredMetadata.model_validate(data)
        except ValidationError as exc:
            raise EditError(format_validation(exc, "metadata")) from None
        if meta != self.draft.hidden.metadata:
            self._set_hidden(metadata=meta)
            self._note("edited the metadata")
        return meta

    def derived(self) -> DerivedMetadata:
        return derive(self.draft.spec(), self.draft.hidden, self.network, self.ts.taxonomy, self.ts.config)

    def metadata_rows(self) -> list[MetaRow]:
        """Declared beside derived for every field ctbench can derive; mismatches as validation sees them."""
        derived = self.derived()
        bad = {name for name, _, _ in mismatches(self.draft.hidden, derived)}
        declared = self.draft.hidden.metadata.declared
        rows = []
        for name in DECLARED_FIELDS:
            if self.family == Family.RCA and name == "path_count":
                continue
            if self.family == Family.PATH and name in ("categories", "entries"):
                continue
            rows.append(MetaRow(name, getattr(declared, name), getattr(derived, name), name in bad))
        if self.family == Family.RCA:
            rows.append(
                MetaRow(
                    "root_cause_count",
                    self.draft.hidden.metadata.root_cause_count,
                    derived.entries,
                    "root_cause_count" in bad,
                )
            )
        return rows

    # -------------------------------------------------------------- snapshot / save

    def snapshot(self) -> TaskDraft:
        """A copy a worker thread may read while the author keeps typing."""
        return self.draft.model_copy(deep=True)

    def save(
        self,
        *,
        commit: bool = True,
        author: str = "",
        action: Action | None = None,
        message: str | None = None,
        force: bool = False,
    ) -> SaveResult:
        saved = self.snapshot()
        result = save_draft(
            self.ts, saved, commit=commit, author=author, action=action, message=message, force=force
        )
        self.mark_saved(saved)
        return result

    def mark_saved(self, saved: TaskDraft) -> None:
        """After ``saved`` (a snapshot) reached the disk: forget what it wrote, keep later edits."""
        d = self.draft
        for rel, data in saved.pending.items():
            if d.pending.get(rel) == data:
                del d.pending[rel]
        d.removed_files = [f for f in d.removed_files if f not in saved.removed_files]
        d.is_new = False
        d.origin = None
        if d.network_is_new and saved.network_is_new:
            d.network_is_new = False
        if d.network is not None and d.network == saved.network:
            d.network = None
        d.changes = d.changes[len(saved.changes) :]
        if saved.task.status != d.task.status:  # the save moved it (approved -> draft): the editor shows that
            d.task = d.task.model_copy(update={"status": saved.task.status})
        d.base_digest = files_digest(self.folder)
        self.base = (saved.spec(), saved.hidden.model_copy(deep=True))


def path_text(path: GoldPath) -> str:
    """The path as an agent writes it: ``A_GE1 -> B_GE2 -> C``, or port by port when it names ingress."""
    return path_line(path.value())


def rca_text(t: RcaTriple) -> str:
    return f"{t.node};{t.object};{t.label}"
