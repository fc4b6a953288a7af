"""The task model: what a task *is*, independent of how it is stored or shown.

A task is split in two on purpose (docs/task-folder.md): :class:`TaskSpec` is everything an
agent or a blind reviewer may see (statement, network reference, accessible devices, recordings
index); :class:`HiddenSpec` is everything they must never see (gold answer, golden actions, authored
metadata, the author's rationale). Code that serves agents only ever constructs a ``TaskSpec``.

Every field of the paper's Table 10 has a home here: family and id on ``TaskSpec``; observability,
root-cause count, propagation-chain length, protocol mechanisms (complexity) in
:class:`AuthoredMetadata`; categories, entries, path count, golden length, vendors, device types,
h_L and heterogeneity level in :class:`DerivedMetadata` (computed, and optionally declared by the
author in ``AuthoredMetadata.declared`` so validation can compare the two).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from enum import StrEnum
from typing import Annotated, Any, ClassVar, Protocol, TypeVar

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    GetCoreSchemaHandler,
    GetJsonSchemaHandler,
    field_validator,
    model_serializer,
    model_validator,
)
from pydantic.json_schema import JsonDict, JsonSchemaValue
from pydantic_core import CoreSchema, PydanticCustomError, core_schema

from ctbench.answer import Hop, Path, RcaEntry, path_line
from ctbench.dialects import os_families

Name = Annotated[str, Field(min_length=1, max_length=128, pattern=r"^[^\s;]+$")]
"""Device and node names: no spaces (answers are split on spaces) and no ``;`` (RCA separator)."""

TaskId = Annotated[str, Field(min_length=1, max_length=64, pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")]


class Strict(BaseModel):
    """Base for on-disk models: unknown keys are errors, so typos surface in validation."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)


def _link_schema(schema: JsonDict) -> None:
    """On disk a link is a pair of ``node:interface`` strings; say so in the exported JSON Schema."""
    schema.clear()
    schema.update(
        {
            "type": "array",
            "minItems": 2,
            "maxItems": 2,
            "title": "Link",
            "description": "A cable: [node:interface, node:interface]",
            "items": {"type": "string", "pattern": "^[^:\\s]+:.+$"},
        }
    )


BUILTIN_FAMILIES: tuple[str, ...] = ("rca", "path", "topology")
"""The task families ctbench ships: the paper's two and TTAC Track B's topology restoration."""
FAMILIES_GROUP = "ctbench.families"
"""The entry-point group task-family plug-ins register in (``ctbench.scoring.families``)."""
_FAMILY_NAME = re.compile(r"^[a-z][a-z0-9_]{0,31}$")


def family_names() -> tuple[str, ...]:
    """Every task family there is: the built-ins, then installed plug-ins' names in name order.

    Only the entry points' names are read (nothing is imported), so the core learns which families
    exist without depending on the scoring layer that implements them, as with the CLI families of
    :func:`ctbench.dialects.os_families`. Read afresh on each call; the built-ins never need it.
    """
    from importlib.metadata import entry_points

    found = {ep.name for ep in entry_points(group=FAMILIES_GROUP)} - set(BUILTIN_FAMILIES)
    return (*BUILTIN_FAMILIES, *sorted(n for n in found if _FAMILY_NAME.match(n)))


class _FamilyType(type):
    """Iterating ``Family`` gives every family there is, as iterating an enum gives its members."""

    def __iter__(cls) -> Iterator[Family]:
        return iter([Family(n) for n in family_names()])


class Family(str, metaclass=_FamilyType):
    """A task family's name: the paper's two (``rca``, ``path``), TTAC Track B's ``topology``, or a
    plug-in's (``ctbench.families`` entry points, ``scoring/families.py``).

    Once an enum; now a ``str`` so that a plug-in family needs no edit here. The built-ins keep their
    constants (``Family.RCA``) and their identity (``Family("rca") is Family.RCA``), and ``.value`` still
    gives the name, so code written against the enum reads the same.
    """

    RCA: ClassVar[Family]
    PATH: ClassVar[Family]
    TOPOLOGY: ClassVar[Family]
    _builtin: ClassVar[dict[str, Family]] = {}

    def __new__(cls, value: object) -> Family:
        name = str(value)
        known = cls._builtin.get(name)
        if known is not None:
            return known
        if name not in BUILTIN_FAMILIES and name not in family_names():
            raise ValueError(
                f"unknown task family {name!r}; expected one of {', '.join(family_names())} "
                "(a plug-in family registers in the ctbench.families entry-point group)"
            )
        return super().__new__(cls, name)

    @property
    def value(self) -> str:
        return str(self)

    @property
    def name(self) -> str:
        return str(self).upper()

    @property
    def builtin(self) -> bool:
        """One of the families ctbench ships (:data:`BUILTIN_FAMILIES`), not a plug-in's."""
        return str(self) in BUILTIN_FAMILIES

    def __repr__(self) -> str:
        return f"Family({str(self)!r})"

    @classmethod
    def __get_pydantic_core_schema__(cls, source: Any, handler: GetCoreSchemaHandler) -> CoreSchema:
        def validate(value: str) -> Family:
            try:
                return cls(value)
            except ValueError as exc:
                raise PydanticCustomError("family", str(exc)) from None

        return core_schema.no_info_after_validator_function(
            validate, core_schema.str_schema(), serialization=core_schema.to_string_ser_schema()
        )

    @classmethod
    def __get_pydantic_json_schema__(cls, core: CoreSchema, handler: GetJsonSchemaHandler) -> JsonSchemaValue:
        return {
            "type": "string",
            "enum": list(family_names()),
            "title": "Family",
            "description": "The task family: the paper's two, TTAC Track B's topology restoration, or an "
            "installed plug-in's (scoring/families.py).",
        }


for _name in BUILTIN_FAMILIES:
    _family = str.__new__(Family, _name)
    Family._builtin[_name] = _family
    setattr(Family, _name.upper(), _family)


class Status(StrEnum):
    """Review state of a task (docs/review.md, "States")."""

    DRAFT = "draft"
    SUBMITTED = "submitted"
    IN_REVIEW = "in_review"
    NEEDS_REVISION = "needs_revision"
    APPROVED = "approved"
    DISCARDED = "discarded"


class Observability(StrEnum):
    O1 = "O1"  # decisive evidence directly observable through a permitted command
    O2 = "O2"  # decisive evidence only inferable from indirect observations


def _known_family(value: str) -> str:
    families = os_families()
    if value not in families:
        raise ValueError(
            f"unknown CLI family {value!r}; expected one of {', '.join(families)} "
            "(each has a dialect data file)"
        )
    return value


class _FamilyEnum:
    """The JSON schema lists the CLI families there are data files for when it is generated."""

    def __get_pydantic_json_schema__(
        self, core: CoreSchema, handler: GetJsonSchemaHandler
    ) -> JsonSchemaValue:
        schema = handler(core)
        schema["enum"] = list(os_families())
        return schema


OsFamily = Annotated[str, AfterValidator(_known_family), _FamilyEnum()]
"""A CLI family: the name of a vendor dialect data file (:func:`ctbench.dialects.os_families`), so a new
vendor needs no change here."""


# --------------------------------------------------------------------------- networks


class Device(Strict):
    name: Name
    vendor: str = Field(description="Vendor as engineers say it: Huawei, H3C, Cisco, Juniper, ...")
    os: OsFamily | None = Field(
        default=None,
        description="CLI family; selects the vendor dialect. Omitted for hosts without a CLI (PCs, servers).",
    )
    type: str = Field(description="Device type: router, switch, firewall, server, pc, ...")
    role: str = Field(default="", description="Role in the network: core, access, gateway, PE, leaf ...")
    site: str = Field(default="", description="Site or data centre the device sits in.")
    cluster: str = Field(default="", description="Logical cluster (HA pair, stack, server cluster).")
    model: str = Field(default="", description="Hardware model, informational.")
    interfaces: list[str] = Field(default_factory=list, description="Interface names (full form).")
    addresses: list[str] = Field(default_factory=list, description="IP addresses/prefixes owned.")


class Endpoint(Strict):
    node: Name
    interface: str = Field(min_length=1)

    @classmethod
    def parse(cls, text: str) -> Endpoint:
        node, sep, iface = text.partition(":")
        if not sep:
            raise ValueError(f"link endpoint {text!r} must be written node:interface")
        return cls(node=node.strip(), interface=iface.strip())

    def __str__(self) -> str:
        return f"{self.node}:{self.interface}"


class Link(Strict):
    """A cable between two interfaces; written ``[A:GE1/0/1, B:Gi0/1]`` in YAML."""

    model_config = ConfigDict(extra="forbid", json_schema_extra=_link_schema)

    a: Endpoint
    b: Endpoint

    @model_validator(mode="before")
    @classmethod
    def _from_pair(cls, data: object) -> object:
        if isinstance(data, list | tuple):
            if len(data) != 2:
                raise ValueError("a link is a pair [node:interface, node:interface]")
            return {"a": Endpoint.parse(str(data[0])), "b": Endpoint.parse(str(data[1]))}
        return data

    @model_serializer(mode="plain")
    def _to_pair(self) -> list[str]:
        return [str(self.a), str(self.b)]

    def as_pair(self) -> list[str]:
        return [str(self.a), str(self.b)]


class _Named(Protocol):
    @property
    def name(self) -> str: ...


_N = TypeVar("_N", bound=_Named)


def unique_names(items: list[_N], noun: str) -> list[_N]:
    """``items`` unchanged, or a ValueError ``{noun} 'x' is listed twice`` for a repeated ``.name``.

    For pydantic list validators: lists keyed by name (a network's devices, the reviewers file)
    where a repeat would silently shadow an entry, so the file's author hears about it instead.
    """
    seen: set[str] = set()
    for item in items:
        if item.name in seen:
            raise ValueError(f"{noun} {item.name!r} is listed twice")
        seen.add(item.name)
    return items


class Network(Strict):
    """A (possibly shared) network: devices and the links between their interfaces."""

    schema_: str | None = Field(default=None, alias="$schema", exclude=True)
    name: Name
    description: str = ""
    devices: list[Device]
    links: list[Link] = Field(default_factory=list)

    @field_validator("devices")
    @classmethod
    def _unique_devices(cls, devices: list[Device]) -> list[Device]:
        return unique_names(devices, "device")

    def device(self, name: str) -> Device | None:
        for d in self.devices:
            if d.name == name:
                return d
        return None

    def device_map(self) -> dict[str, Device]:
        return {d.name: d for d in self.devices}

    def neighbours(self) -> dict[str, set[str]]:
        adj: dict[str, set[str]] = {d.name: set() for d in self.devices}
        for link in self.links:
            adj.setdefault(link.a.node, set()).add(link.b.node)
            adj.setdefault(link.b.node, set()).add(link.a.node)
        return adj


# --------------------------------------------------------------------------- visible part


class Recording(Strict):
    """One recorded command output, indexed by (device, canonical command)."""

    device: Name
    command: str = Field(min_length=1, description="Canonical command (full keywords).")
    file: str = Field(min_length=1, description="Path relative to the task folder.")

    @property
    def key(self) -> tuple[str, str]:
        return (self.device, self.command)


class TaskSpec(Strict):
    """The agent-visible part of a task (``task.yaml``)."""

    schema_: str | None = Field(default=None, alias="$schema", exclude=True)
    id: TaskId
    family: Family
    status: Status = Status.DRAFT
    title: str = ""
    statement: str = Field(min_length=1, description="What is observed, where, and the answer format.")
    network: Name = Field(description="Name of a network file in the task set's networks/ folder.")
    accessible: list[Name] | None = Field(
        default=None, description="Devices the agent may query; omitted means every network device."
    )
    recordings: list[Recording] = Field(default_factory=list)
    authors: list[str] = Field(default_factory=list)
    tags: list[str] = Field(default_factory=list)
    canary: str = Field(default="", description="The task set's contamination-guard string.")

    def recording_index(self) -> dict[tuple[str, str], Recording]:
        return {r.key: r for r in self.recordings}


# --------------------------------------------------------------------------- hidden part


class RcaTriple(Strict):
    node: Name
    object: str = Field(min_length=1)
    label: str = Field(min_length=1)

    def entry(self) -> RcaEntry:
        return RcaEntry(self.node, self.object, self.label)


class PathHop(Strict):
    node: Name
    egress: str | None = Field(default=None, description="Egress interface; omitted on the terminal hop.")
    ingress: str | None = Field(
        default=None,
        description="Ingress interface, for a path named port by port on both sides (TTAC Track B's L2 "
        "paths, node(out)->node(in)); omitted on the first hop. When the gold names them, path metrics "
        "score them too.",
    )


class GoldPath(Strict):
    hops: list[PathHop] = Field(min_length=2)

    @model_validator(mode="after")
    def _terminal(self) -> GoldPath:
        if any(hop.ingress for hop in self.hops):
            if self.hops[0].ingress:
                raise ValueError(f"the first hop {self.hops[0].node} takes no ingress interface")
            for i, hop in enumerate(self.hops[1:], start=1):
                if not hop.ingress or (i < len(self.hops) - 1 and not hop.egress):
                    raise ValueError(
                        f"hop {i + 1} ({hop.node}): a path with ingress interfaces names both ports of "
                        "every hop but the ends (the first has an egress only, the last an ingress only)"
                    )
        if not any(hop.egress for hop in self.hops):
            return self  # a node-only path: benchmarks that score nodes only (TTAC Track B Phase 1)
        for i, hop in enumerate(self.hops[:-1]):
            if not hop.egress:
                raise ValueError(
                    f"hop {i + 1} ({hop.node}) needs an egress interface; only the last hop has none"
                )
        if self.hops[-1].egress:
            raise ValueError(f"the terminal hop {self.hops[-1].node} takes no egress interface")
        return self

    def value(self) -> Path:
        return tuple(Hop(h.node, h.egress, h.ingress) for h in self.hops)


class GoldAnswer(Strict):
    """The gold of a task, under its family's key. The built-ins' shapes are declared here; a plug-in
    family's gold sits under the family's own name (``answer: {toy: [...]}``) as plain YAML that the
    family reads (:meth:`plugin`), so a new family needs no field here. Any other key is an error."""

    model_config = ConfigDict(extra="allow", populate_by_name=True)

    rca: list[RcaTriple] | None = None
    paths: list[GoldPath] | None = None
    links: list[Link] | None = Field(
        default=None,
        description="Topology restoration: the physical links to restore, written like a network's "
        "links ([A:GE1/0/1, B:Gi0/1]); a cable has no direction.",
    )

    @model_validator(mode="after")
    def _plugin_keys(self) -> GoldAnswer:
        extra = set(self.model_extra or ())
        if extra:
            known = set(family_names())
            unknown = sorted(k for k in extra if k not in known or k in BUILTIN_FAMILIES)
            if unknown:
                raise ValueError(
                    f"unknown answer key(s) {', '.join(unknown)}; expected rca, paths, links or the name "
                    "of an installed task family"
                )
        return self

    def plugin(self, family: str) -> Any:
        """The gold a plug-in family wrote under its name, as plain YAML values (``None`` when absent)."""
        return (self.model_extra or {}).get(family)


class GoldenAction(Strict):
    device: Name
    command: str = Field(min_length=1, description="Canonical command; must have a recording.")
    why: str = Field(default="", description="Why this observation matters for the diagnosis.")

    @property
    def key(self) -> tuple[str, str]:
        return (self.device, self.command)


class DeclaredMetadata(Strict):
    """Values the author states for fields ctbench can also derive; validation compares the two."""

    categories: list[str] | None = None
    entries: int | None = None
    path_count: int | None = None
    golden_length: int | None = None
    vendors: int | None = None
    device_types: int | None = None
    h_l: int | None = None
    heterogeneity: str | None = None


class AuthoredMetadata(Strict):
    observability: Observability | None = Field(default=None, description="RCA only: O1 or O2.")
    chain_length: int | None = Field(default=None, ge=1, description="RCA: propagation-chain length N_c.")
    protocol_mechanisms: list[str] = Field(
        default_factory=list, description="Mechanisms involved; protocol complexity N_p is their count."
    )
    root_cause_count: int | None = Field(
        default=None, ge=1, description="Independent root causes N_r, where it differs from the entry count."
    )
    ablation_of: TaskId | None = Field(
        default=None,
        description="RCA: this task is the O2->O1 ablation variant of the named O2 task (same "
        "network and statement, made directly observable, its own golden actions); "
        "reports pair the two (paper Tables 20-21).",
    )
    declared: DeclaredMetadata = Field(default_factory=DeclaredMetadata)


class HiddenSpec(Strict):
    """The part agents and blind reviewers never see (``hidden.yaml``)."""

    schema_: str | None = Field(default=None, alias="$schema", exclude=True)
    id: TaskId
    answer: GoldAnswer
    golden_actions: list[GoldenAction] = Field(default_factory=list)
    metadata: AuthoredMetadata = Field(default_factory=AuthoredMetadata)
    rationale: str = Field(default="", description="One sentence: how the evidence leads to the answer.")
    reference_answer: str = Field(
        default="",
        description="Imported tasks: the gold as the source benchmark spells it (TTAC Track B's ground "
        "truth, one line per entry), what that benchmark's own scoring rules compare with.",
    )
    canary: str = Field(default="", description="The task set's contamination-guard string.")
    hash_key: str = Field(
        default="",
        description="Sealed gold only: a random secret (hex) that keys the hashes of the hidden parts "
        "(HMAC-SHA256), so a review record's hashes cannot be matched against guessed answers. "
        "Written by ctbench when the gold is sealed; never edit it (a new key reopens the review).",
    )

    def rca_entries(self) -> frozenset[RcaEntry]:
        return frozenset(t.entry() for t in self.answer.rca or [])

    def gold_paths(self) -> tuple[Path, ...]:
        return tuple(p.value() for p in self.answer.paths or [])

    def golden_keys(self) -> frozenset[tuple[str, str]]:
        return frozenset(a.key for a in self.golden_actions)

    def gold_answer_lines(self, family: Family) -> list[str]:
        """The gold answer as an agent would write it: one line per root cause or per path.

        Rendered from the loaded spec so a caller that already holds it (the oracle check, the
        oracle agent) does not read ``hidden.yaml`` a second time just to write the answer out.
        """
        if family == Family.RCA:
            return [t.entry().line() for t in self.answer.rca or []]
        if family == Family.TOPOLOGY:
            return [
                f"{x.a.node}({x.a.interface})->{x.b.node}({x.b.interface})" for x in self.answer.links or []
            ]
        if family == Family.PATH:
            return [path_line(p) for p in self.gold_paths()]
        # a plug-in family: its entries as written (its own lines come from its TaskFamily.lines)
        return [json.dumps(x, sort_keys=True) for x in self.answer.plugin(str(family)) or []]


# --------------------------------------------------------------------------- derived


class DerivedMetadata(BaseModel):
    """Metadata computed from the task itself (see :mod:`ctbench.derived`)."""

    family: Family
    entries: int = 0
    mentions: int = 0
    labels: list[str] = Field(default_factory=list)
    categories: list[str] = Field(default_factory=list)
    root_cause_count: int = 0
    path_count: int = 0
    path_lengths: list[int] = Field(default_factory=list)
    golden_length: int = 0
    golden_tier: str = ""
    vendors: int = 0
    device_types: int = 0
    h_l: int = 0
    heterogeneity: str = ""
    protocol_complexity: int = 0
    observability: str | None = None
    chain_length: int | None = None
