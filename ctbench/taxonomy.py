"""Root-cause taxonomy and task-set configuration, both data in the task set, not code.

The taxonomy (``tasks/taxonomy.yaml``) holds the schema-level L0 labels agents may answer with, their
L1-L3 groups (for hierarchical scoring, appendix B.2/B.4), their aliases (legacy spellings normalised
before scoring), the seven fine-grained fault domains (Table 7) and the five merged categories C1-C5
(Tables 3 and 9). The configuration (``tasks/ctbench.yaml``) holds everything the paper calls a
threshold: heterogeneity levels per family (Table 4), golden-length tiers, similarity weights, the
canary string and review limits. Changing either changes numbers, so both are versioned with the tasks.
"""

from __future__ import annotations

import re
from functools import cached_property

from pydantic import ConfigDict, Field, model_validator

from ctbench.model import Family, Strict


def _fold(text: str) -> str:
    """Case, spacing and punctuation-insensitive key for label and alias lookup."""
    return re.sub(r"[^a-z0-9]+", " ", text.lower()).strip()


class Label(Strict):
    label: str = Field(min_length=1, description="Schema-level (L0) label, as agents must write it.")
    l1: str = Field(description="Subtype (finest group).")
    l2: str = Field(description="Technical domain.")
    l3: str = Field(description="Broad fault family.")
    domain: str = Field(description="Fine-grained operational fault domain (Table 7).")
    category: str = Field(description="Merged category id, C1-C5 (Table 9).")
    aliases: list[str] = Field(default_factory=list)
    description: str = ""


class Category(Strict):
    id: str
    name: str


class Taxonomy(Strict):
    schema_: str | None = Field(default=None, alias="$schema", exclude=True)
    version: int = 1
    whitespace_blind: bool = Field(
        default=False,
        description="Match labels and aliases with every blank deleted too (TTAC Track B writes "
        "'missingstaticroute' for 'missing static route').",
    )
    categories: list[Category]
    labels: list[Label]

    model_config = ConfigDict(extra="forbid", populate_by_name=True, ignored_types=(cached_property,))

    @model_validator(mode="after")
    def _check(self) -> Taxonomy:
        cat_ids = {c.id for c in self.categories}
        seen: dict[str, str] = {}
        for lab in self.labels:
            if lab.category not in cat_ids:
                raise ValueError(
                    f"label {lab.label!r}: category {lab.category!r} is not one of {sorted(cat_ids)}"
                )
            for name in [lab.label, *lab.aliases]:
                key = _fold(name)
                if key in seen and seen[key] != lab.label:
                    raise ValueError(f"{name!r} names both {seen[key]!r} and {lab.label!r}")
                seen[key] = lab.label
        return self

    @cached_property
    def _lookup(self) -> dict[str, Label]:
        out: dict[str, Label] = {}
        for lab in self.labels:
            for name in [lab.label, *lab.aliases]:
                out[_fold(name)] = lab
        return out

    def resolve(self, text: str) -> str | None:
        """Canonical L0 label for a label or alias (case/spacing-insensitive); None if unknown."""
        lab = self.get(text)
        return lab.label if lab else None

    @cached_property
    def _squashed(self) -> dict[str, Label]:
        return {key.replace(" ", ""): lab for key, lab in self._lookup.items()}

    def get(self, label: str) -> Label | None:
        key = _fold(label)
        found = self._lookup.get(key)
        if found is None and self.whitespace_blind:
            found = self._squashed.get(key.replace(" ", ""))
        return found

    def category_of(self, label: str) -> str | None:
        lab = self.get(label)
        return lab.category if lab else None

    def levels(self) -> dict[str, tuple[str, str, str]]:
        return {lab.label: (lab.l1, lab.l2, lab.l3) for lab in self.labels}

    def category_name(self, cat_id: str) -> str:
        for c in self.categories:
            if c.id == cat_id:
                return c.name
        return cat_id


class Level(Strict):
    name: str
    max: int | None = Field(default=None, description="Upper bound (inclusive); omitted on the last level.")


def level_for(levels: list[Level], value: int) -> str:
    for lv in levels:
        if lv.max is None or value <= lv.max:
            return lv.name
    return levels[-1].name if levels else ""


class PerFamily(Strict):
    rca: list[Level]
    path: list[Level]
    topology: list[Level] | None = Field(
        default=None,
        description="Topology restoration's own levels (TTAC Track B's third task kind); when a set's "
        "ctbench.yaml has none, ctbench's defaults for the family apply, never the path family's.",
    )

    def for_family(self, family: Family) -> list[Level]:
        if family == Family.RCA:
            return self.rca
        if family == Family.TOPOLOGY and self.topology is not None:
            return self.topology
        return self.path


class LabelWeights(Strict):
    exact: float = 1.0
    l1: float = 0.75
    l2: float = 0.5
    l3: float = 0.25


class NodeWeights(Strict):
    cluster: float = 0.75
    site_role: float = 0.5
    neighbour: float = 0.25
    hops: int = 1


class Similarity(Strict):
    label: LabelWeights = Field(default_factory=LabelWeights)
    node: NodeWeights = Field(default_factory=NodeWeights)


class ReviewConfig(Strict):
    max_rounds: int = Field(default=3, ge=1)
    remote: str = "origin"
    main_branch: str = "main"
    seal_gold: bool | None = Field(
        default=None,
        description="Keep every new task's hidden part sealed with age (hidden.yaml.age) to its authors and the "
        "maintainers (keys in reviewers.yaml); reviewers are added by ctb-review unseal. Unset: sealed when "
        "every person in reviewers.yaml has an age recipient (false: blind review rests on honour).",
    )
    unreviewed_seed: bool = Field(
        default=False,
        description="The set's tasks are seed tasks that were never reviewed (no review records): the "
        "run gate and ctb-review status report them as such instead of as broken approvals.",
    )


def _default_heterogeneity() -> PerFamily:
    # Table 4: RCA and path use different thresholds; PR-100 with h_L = 6 is still "low" for paths.
    # Topology restoration is not in the paper: a task reads the neighbour tables of the devices it may
    # query, so its h_L counts the vendors and device types of those, as an RCA task's does.
    return PerFamily(
        rca=[Level(name="low", max=2), Level(name="high")],
        path=[Level(name="low", max=6), Level(name="high")],
        topology=[Level(name="low", max=2), Level(name="high")],
    )


def _default_tiers() -> PerFamily:
    # Topology: one neighbour table per queried device, so T* is about the number of devices.
    return PerFamily(
        rca=[Level(name="short", max=4), Level(name="moderate", max=10), Level(name="long")],
        path=[Level(name="short/moderate", max=33), Level(name="long")],
        topology=[Level(name="short", max=2), Level(name="moderate", max=8), Level(name="long")],
    )


class TaskSetConfig(Strict):
    """``ctbench.yaml`` at the root of a task set."""

    schema_: str | None = Field(default=None, alias="$schema", exclude=True)
    name: str = "ctbench"
    canary: str = Field(default="", description="Contamination guard present in every task file.")
    heterogeneity: PerFamily = Field(default_factory=_default_heterogeneity)
    golden_tiers: PerFamily = Field(default_factory=_default_tiers)
    similarity: Similarity = Field(default_factory=Similarity)
    review: ReviewConfig = Field(default_factory=ReviewConfig)
    min_stratum: int = Field(default=10, ge=1, description="Warn when a reported stratum has fewer tasks.")
    golden_actions_required: bool = Field(
        default=True,
        description="A task without golden actions is an error; false for sets imported from a benchmark "
        "that publishes none (TTAC Track B), where it is a warning and evidence metrics are not computed.",
    )

    @model_validator(mode="after")
    def _topology_defaults(self) -> TaskSetConfig:
        """A ctbench.yaml written before the topology family gets that family's default levels."""
        if self.heterogeneity.topology is None:
            self.heterogeneity.topology = _default_heterogeneity().topology
        if self.golden_tiers.topology is None:
            self.golden_tiers.topology = _default_tiers().topology
        return self
