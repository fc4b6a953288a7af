"""Derived metadata: what ctbench computes from a task rather than trusting the author (A.4).

Heterogeneity follows section 3.4: N_v and N_d count distinct vendors and device types among the
devices *required to solve the task* — the devices named in the golden actions — not the whole
network; h_L = max(N_v, N_d), mapped to a level with per-family thresholds from ``ctbench.yaml``.
"""

from __future__ import annotations

from ctbench.model import DerivedMetadata, Family, HiddenSpec, Network, TaskSpec
from ctbench.taxonomy import TaskSetConfig, Taxonomy, level_for


def derive(
    task: TaskSpec, hidden: HiddenSpec, network: Network | None, taxonomy: Taxonomy, config: TaskSetConfig
) -> DerivedMetadata:
    fam = task.family
    d = DerivedMetadata(family=fam)
    if fam == Family.RCA:
        triples = hidden.answer.rca or []
        labels = [taxonomy.resolve(t.label) or t.label for t in triples]
        d.entries = len({(t.node, t.object, lab) for t, lab in zip(triples, labels, strict=True)})
        d.labels = sorted(set(labels))
        d.mentions = len(d.labels)
        d.categories = sorted({c for c in (taxonomy.category_of(lab) for lab in labels) if c})
        d.root_cause_count = hidden.metadata.root_cause_count or d.entries
        d.observability = hidden.metadata.observability.value if hidden.metadata.observability else None
        d.chain_length = hidden.metadata.chain_length
    elif fam == Family.TOPOLOGY:
        d.entries = len(hidden.answer.links or [])
    elif fam != Family.PATH:  # a plug-in family: its gold is a list of entries under its name
        d.entries = len(hidden.answer.plugin(fam.value) or [])
    else:
        paths = hidden.answer.paths or []
        d.path_count = len(paths)
        d.path_lengths = [len(p.hops) for p in paths]
    d.golden_length = len(hidden.golden_actions)
    d.golden_tier = level_for(config.golden_tiers.for_family(fam), d.golden_length)
    devices = network.device_map() if network else {}
    used = [devices[a.device] for a in hidden.golden_actions if a.device in devices]
    d.vendors = len({dev.vendor.strip().lower() for dev in used})
    d.device_types = len({dev.type.strip().lower() for dev in used})
    d.h_l = max(d.vendors, d.device_types)
    d.heterogeneity = level_for(config.heterogeneity.for_family(fam), d.h_l)
    d.protocol_complexity = len(set(hidden.metadata.protocol_mechanisms))
    return d


DECLARED_FIELDS = (
    "categories",
    "entries",
    "path_count",
    "golden_length",
    "vendors",
    "device_types",
    "h_l",
    "heterogeneity",
)


def mismatches(hidden: HiddenSpec, derived: DerivedMetadata) -> list[tuple[str, object, object]]:
    """(field, declared, derived) for every declared value that disagrees with the derived one."""
    out: list[tuple[str, object, object]] = []
    declared = hidden.metadata.declared
    for name in DECLARED_FIELDS:
        value = getattr(declared, name)
        if value is None:
            continue
        actual = getattr(derived, name)
        if name == "categories":
            if sorted(set(value)) != sorted(actual):
                out.append((name, sorted(set(value)), actual))
        elif value != actual:
            out.append((name, value, actual))
    if hidden.metadata.root_cause_count is not None and derived.family == Family.RCA:
        if hidden.metadata.root_cause_count > derived.entries:
            out.append(
                (
                    "root_cause_count",
                    hidden.metadata.root_cause_count,
                    f"at most {derived.entries} (the number of gold entries)",
                )
            )
    return out
