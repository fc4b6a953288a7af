"""``ctb-author release``: the retained tasks as a dataset people can load, cite and gate.

A benchmark publishes its approved set, and researchers load benchmarks with Hugging Face
``datasets``. A release folder is laid out the way the Hub serves one, so it can be pushed as is:

```
OUT/
  README.md                              dataset card: YAML header (configs, gating, licence, canary)
  RELEASE.yaml                           manifest (ctbench.releases): version, hashes, counts, reviews
  tasks/test-00000-of-00001.parquet      config "tasks": one row per task
  networks/test-00000-of-00001.parquet   config "networks": one row per network the tasks use
  json/tasks.jsonl, json/networks.jsonl  the same rows for JSON readers (bytes as base64)
  taskset/ctbench.yaml, taxonomy.yaml    the set's configuration, for import-release and scoring
GOLD/                                    --gold-out: for a private, gated repository only
  README.md, RELEASE.yaml (a copy)
  gold/test-00000-of-00001.parquet       config "gold": id, family, hidden_yaml, per-part hashes
  <family>/<ID>/hidden.yaml              verbatim
```

Only retained tasks go in: approved, unchanged since approval and valid, decided by the run gate's
own code (:func:`ctbench.approval.gate.apply_gate`); every other task is listed with its reason.
Recordings keep every byte: ``output`` holds the text when the bytes are UTF-8, else ``output_bytes``
holds them; ``sha256`` is the hex digest of the bytes either way. The gold (answer, golden actions,
metadata, rationale) and the review records (which quote the gold) never enter the public folder;
the manifest publishes the hashes of the public parts and one combined content hash per task, never
a hash of the gold alone (a short answer's hash can be brute-forced).
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import tempfile
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ctbench import __version__
from ctbench.approval.gate import apply_gate, content_hash
from ctbench.approval.hashes import content_hashes, disk_reader
from ctbench.approval.records import ReviewRecord, load_records
from ctbench.derived import derive
from ctbench.errors import CtbError
from ctbench.model import HiddenSpec, Network, Strict, TaskSpec
from ctbench.people import people_of
from ctbench.provenance import task_set_commit
from ctbench.releases import (
    RELEASE_FILE,
    RELEASE_FORMAT,
    SHARD,
    SPLIT,
    ExcludedTask,
    ReleasedTask,
    ReleaseManifest,
    pyarrow_module,
    sha256_file,
    write_jsonl,
    write_parquet,
    yaml_header,
)
from ctbench.scoring.gold_check import PluginGoldCheck
from ctbench.sealing import seal
from ctbench.store import CONFIG_FILE, FAMILIES, TAXONOMY_FILE, TaskRef, TaskSet
from ctbench.yamlio import atomic_write_text, dump_document, to_commented

PUBLIC_CONFIGS = ("tasks", "networks")
GOLD_CONFIG = "gold"
SEALED_CONFIG = "sealed"
VERSION_RE = re.compile(r"[0-9A-Za-z][0-9A-Za-z.+_-]{0,63}")

Progress = Callable[[str], None]


_pa = pyarrow_module


# --------------------------------------------------------------------------- rows


def recording_row(device: str, command: str, file: str, data: bytes) -> dict[str, Any]:
    """One recording, byte-exact: text in ``output`` when it is UTF-8, else the bytes in ``output_bytes``."""
    try:
        text: str | None = data.decode("utf-8")
    except UnicodeDecodeError:
        text = None
    return {
        "device": device,
        "command": command,
        "file": file,
        "output": text,
        "output_bytes": None if text is not None else data,
        "sha256": hashlib.sha256(data).hexdigest(),
    }


def task_row(ts: TaskSet, ref: TaskRef, task: TaskSpec) -> dict[str, Any]:
    recordings = [
        recording_row(r.device, r.command, r.file, ts.read_recording(ref, r)) for r in task.recordings
    ]
    return {
        "id": task.id,
        "family": task.family.value,
        "title": task.title,
        "statement": task.statement,
        "network": task.network,
        "accessible": task.accessible,
        "recordings": recordings,
        "tags": list(task.tags),
        "authors": list(task.authors),
        "canary": ts.config.canary,
        "content_hash": content_hash(ref.path, ts),
        "task_yaml": ref.task_file.read_text(encoding="utf-8"),
    }


def network_row(ts: TaskSet, net: Network) -> dict[str, Any]:
    devices = [
        {
            "name": d.name,
            "vendor": d.vendor,
            "os": d.os,
            "type": d.type,
            "role": d.role,
            "site": d.site,
            "cluster": d.cluster,
            "model": d.model,
            "interfaces": list(d.interfaces),
            "addresses": list(d.addresses),
        }
        for d in net.devices
    ]
    return {
        "name": net.name,
        "description": net.description,
        "devices": devices,
        "links": [{"a": str(link.a), "b": str(link.b)} for link in net.links],
        "canary": ts.config.canary,
        "network_yaml": ts.network_path(net.name).read_text(encoding="utf-8"),
    }


def _schemas(pa: Any) -> dict[str, Any]:
    s = pa.string()
    strings = pa.list_(s)
    recording = pa.struct(
        [
            ("device", s),
            ("command", s),
            ("file", s),
            ("output", s),
            ("output_bytes", pa.binary()),
            ("sha256", s),
        ]
    )
    device = pa.struct(
        [(n, s) for n in ("name", "vendor", "os", "type", "role", "site", "cluster", "model")]
        + [("interfaces", strings), ("addresses", strings)]
    )
    return {
        "tasks": pa.schema(
            [
                ("id", s),
                ("family", s),
                ("title", s),
                ("statement", s),
                ("network", s),
                ("accessible", strings),
                ("recordings", pa.list_(recording)),
                ("tags", strings),
                ("authors", strings),
                ("canary", s),
                ("content_hash", s),
                ("task_yaml", s),
            ]
        ),
        "networks": pa.schema(
            [
                ("name", s),
                ("description", s),
                ("devices", pa.list_(device)),
                ("links", pa.list_(pa.struct([("a", s), ("b", s)]))),
                ("canary", s),
                ("network_yaml", s),
            ]
        ),
        SEALED_CONFIG: pa.schema([("id", s), ("family", s), ("hidden_yaml_age", pa.binary()), ("canary", s)]),
        GOLD_CONFIG: pa.schema(
            [("id", s), ("family", s), ("hidden_yaml", s), ("parts", pa.map_(s, s)), ("canary", s)]
        ),
    }


# --------------------------------------------------------------------------- review statistics


def _review_of(records: list[ReviewRecord]) -> dict[str, Any]:
    last = records[-1]
    blind = next((r.blind for r in reversed(records) if r.blind is not None), None)
    comparison = next((r.comparison for r in reversed(records) if r.comparison is not None), None)
    out: dict[str, Any] = {
        "rounds": len(records),
        "reviewers": sorted({r.reviewer for r in records if r.reviewer}),
        "approved": last.finished.date().isoformat() if last.finished else None,
    }
    if comparison is not None:
        out["blind_exact"] = comparison.exact
    if blind is not None:
        out["blind_time_s"] = round(blind.time_spent_s, 1)
    return out


def _blindness(ts: TaskSet, ref: TaskRef, records: list[ReviewRecord], signed: bool) -> str:
    """How the reviewer was kept from the gold before answering, in one or two sentences.

    Blind by seal or blind by honour is said out loud, as ``ctb-review audit`` says it: on an unsealed
    set the gold was plain text in the reviewer's clone. ``signed``: the set's reviewers file lists
    signing keys, so the gate that retained the task verified every review step's signature.
    """
    how = (
        " Blind by seal: the gold was sealed (age) in the task repository."
        if ts.is_sealed(ref)
        else " Blind by honour: the gold was plain text in the task repository."
    )
    if signed:
        how += " Every review step was SSH-signed by the person it names, and verified."
    for r in reversed(records):
        if r.blind is not None and r.comparison is not None:
            return (
                f"Blind solve by {r.blind.reviewer} (round {r.round}), answer hashed at "
                f"{r.blind.submitted.isoformat()} before the gold was revealed at "
                f"{r.comparison.revealed_at.isoformat()}.{how}"
            )
    if records:
        return f"Approved without a recorded blind solve.{how}"
    return "Not reviewed: released with --allow-unreviewed."


def review_statistics(reviews: dict[str, dict[str, Any]], unreviewed: list[str]) -> dict[str, Any]:
    """The released tasks' review figures: rounds, first-round approvals, reviewers' blind accuracy."""
    done = [r for r in reviews.values() if r]
    rounds = [r["rounds"] for r in done]
    exact = [r["blind_exact"] for r in done if "blind_exact" in r]
    return {
        "reviewed": len(done),
        "unreviewed": sorted(unreviewed),
        "rounds_mean": round(sum(rounds) / len(rounds), 2) if rounds else None,
        "rounds_max": max(rounds) if rounds else None,
        "approved_first_round": sum(1 for n in rounds if n == 1),
        "blind_exact": f"{sum(exact)}/{len(exact)}",
        "reviewers": sorted({name for r in done for name in r["reviewers"]}),
    }


# --------------------------------------------------------------------------- the release


@dataclass
class Retained:
    ref: TaskRef
    task: TaskSpec
    hidden: HiddenSpec
    hidden_text: str


@dataclass
class ReleaseResult:
    manifest: ReleaseManifest
    out: Path
    gold_out: Path | None
    warnings: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {
            "version": self.manifest.version,
            "out": str(self.out),
            "gold_out": str(self.gold_out) if self.gold_out else None,
            "tasks": [t.id for t in self.manifest.tasks],
            "excluded": [e.model_dump() for e in self.manifest.excluded],
            "counts": self.manifest.counts,
            "warnings": self.warnings,
        }


class ReleaseOptions(Strict):
    version: str
    license: str
    allow_unreviewed: bool = False
    replace: bool = False
    pretty_name: str | None = None
    seal_to: list[str] = []
    """age public keys: the gold also goes into the public folder, sealed (config "sealed")."""


def _check_places(out: Path, gold_out: Path | None, ts: TaskSet, replace: bool) -> None:
    out = out.resolve()
    gold = gold_out.resolve() if gold_out is not None else None
    if gold is not None and (out == gold or out.is_relative_to(gold) or gold.is_relative_to(out)):
        raise CtbError(
            f"--gold-out {gold} and --out {out} overlap: the gold must live outside the public folder "
            "(a public Hub repository serves every file in it)",
            exit_code=2,
        )
    for d, flag in ((out, "--out"), *(((gold, "--gold-out"),) if gold is not None else ())):
        if d.is_relative_to(ts.root.resolve()) or ts.root.resolve().is_relative_to(d):
            raise CtbError(
                f"{flag} {d} overlaps the task set {ts.root}; choose a folder outside it", exit_code=2
            )
        if d.exists() and not d.is_dir():
            raise CtbError(f"{flag} {d} exists and is not a folder", exit_code=2)
        if d.is_dir() and any(d.iterdir()) and not replace:
            raise CtbError(
                f"{flag} {d} is not empty; choose a new folder, or pass --replace to overwrite a release",
                exit_code=2,
            )


def _publish(staged: Path, final: Path) -> None:
    """Swap a fully written folder into place (the old one goes only once the new one is complete)."""
    if final.exists():
        old = final.with_name(f".{final.name}.old-{os.getpid()}")
        os.replace(final, old)
        os.replace(staged, final)
        shutil.rmtree(old)
    else:
        final.parent.mkdir(parents=True, exist_ok=True)
        os.replace(staged, final)


def _counts(ts: TaskSet, kept: list[Retained]) -> dict[str, Any]:
    by_family = Counter(k.ref.family.value for k in kept)
    strata: dict[str, dict[str, Counter[str]]] = {}
    for k in kept:
        try:
            net = ts.network(k.task.network)
        except CtbError:
            net = None
        d = derive(k.task, k.hidden, net, ts.taxonomy, ts.config)
        fields: dict[str, Any] = {
            "heterogeneity": d.heterogeneity,
            "golden_tier": d.golden_tier,
        }
        if d.observability is not None:
            fields["observability"] = d.observability
        if d.chain_length is not None:
            fields["chain_length"] = str(d.chain_length)
        if k.ref.family.value == "rca":
            fields["root_causes"] = str(d.root_cause_count)
            for cat in d.categories:
                strata.setdefault(k.ref.family.value, {}).setdefault("category", Counter())[cat] += 1
        elif k.ref.family.value == "path":
            fields["paths"] = str(d.path_count)
        else:
            fields["entries"] = str(d.entries)
        fam = strata.setdefault(k.ref.family.value, {})
        for name, value in fields.items():
            if value:
                fam.setdefault(name, Counter())[str(value)] += 1
    return {
        "tasks": len(kept),
        "recordings": sum(len(k.task.recordings) for k in kept),
        "by_family": {
            **{f.value: by_family.get(f.value, 0) for f in FAMILIES},
            **{
                f: n for f, n in sorted(by_family.items()) if f not in {b.value for b in FAMILIES}
            },  # plug-ins
        },
        "by_stratum": {
            fam: {name: dict(sorted(c.items())) for name, c in sorted(fields.items())}
            for fam, fields in sorted(strata.items())
        },
    }


def build_release(
    ts: TaskSet,
    out: Path,
    gold_out: Path | None,
    options: ReleaseOptions,
    *,
    progress: Progress | None = None,
    today: datetime | None = None,
) -> ReleaseResult:
    """Write the public release to ``out`` and the gold to ``gold_out``; both appear complete or not at all."""
    say = progress or (lambda _msg: None)
    if not VERSION_RE.fullmatch(options.version):
        raise CtbError(
            f"release version {options.version!r}: use letters, digits and . + _ - (e.g. 1.0.0)", exit_code=2
        )
    canary = ts.config.canary
    if not canary:
        raise CtbError(
            f'{ts.root / CONFIG_FILE}: no canary; a release needs one (canary: "...")', exit_code=2
        )
    if gold_out is None and not options.seal_to:
        raise CtbError(
            "where does the gold go? --gold-out GOLD_DIR (a private repository) or --seal-to AGE_KEY "
            "(sealed in the public folder)",
            exit_code=2,
        )
    _check_places(out, gold_out, ts, options.replace)
    pa = _pa()
    schemas = _schemas(pa)

    candidates: list[tuple[TaskRef, TaskSpec]] = []
    excluded: list[ExcludedTask] = []
    for ref in ts.unique_refs():
        try:
            candidates.append((ref, ts.load_task(ref)))
        except CtbError as exc:
            excluded.append(ExcludedTask(id=ref.id, reason=f"unreadable: {exc}"))
    say(f"checking {len(candidates)} task(s) against the gate (approved, unchanged, valid)")
    gate = apply_gate(
        ts, candidates, allow_unreviewed=options.allow_unreviewed, gold_check=PluginGoldCheck(ts)
    )
    excluded += [ExcludedTask(id=s.task_id, reason=s.reason) for s in gate.skipped]
    specs = dict((ref.id, spec) for ref, spec in candidates)
    kept: list[Retained] = []
    for ref in gate.admitted:
        try:
            hidden_text = ts.hidden_text(ref)
            kept.append(Retained(ref, specs[ref.id], ts.load_hidden(ref), hidden_text))
        except CtbError as exc:
            excluded.append(ExcludedTask(id=ref.id, reason=f"gold unreadable: {exc}"))
    if not kept:
        reasons = "; ".join(f"{e.id}: {e.reason}" for e in excluded[:5])
        raise CtbError(f"no task is retained, nothing to release ({reasons})")
    excluded.sort(key=lambda e: e.id)

    say(f"writing {len(kept)} task(s)")
    when = today or datetime.now(UTC)
    commit = task_set_commit(ts.root)
    rows = [task_row(ts, k.ref, k.task) for k in kept]
    networks = sorted({k.task.network for k in kept})
    net_rows = [network_row(ts, ts.network(n)) for n in networks]
    signed = people_of(ts.root).signing
    released: list[ReleasedTask] = []
    reviews: dict[str, dict[str, Any]] = {}
    gold_rows: list[dict[str, Any]] = []
    for k, row in zip(kept, rows, strict=True):
        records = load_records(k.ref.path)
        reviews[k.ref.id] = _review_of(records) if records else {}
        parts = content_hashes(disk_reader(k.ref.path, ts))
        released.append(
            ReleasedTask(
                id=k.ref.id,
                family=k.ref.family,
                content_hash=row["content_hash"],
                visible=parts.subset(("statement", "recordings")),
                recordings=len(row["recordings"]),
                review=reviews[k.ref.id],
                blindness=_blindness(ts, k.ref, records, signed),
            )
        )
        gold_rows.append(
            {
                "id": k.ref.id,
                "family": k.ref.family.value,
                "hidden_yaml": k.hidden_text,
                "parts": parts.subset(("gold", "golden_actions", "metadata")),
                "canary": canary,
            }
        )

    with tempfile.TemporaryDirectory(prefix=".ctb-release-", dir=out.resolve().parent) as tmp_pub:
        gold_parent = (gold_out or out).resolve().parent
        with tempfile.TemporaryDirectory(prefix=".ctb-gold-", dir=gold_parent) as tmp_gold:
            pub, gold = Path(tmp_pub) / "release", Path(tmp_gold) / "gold"
            files: dict[str, str] = {}
            for name, data in (("tasks", rows), ("networks", net_rows)):
                write_parquet(pub / name / SHARD, data, schemas[name])
                write_jsonl(pub / "json" / f"{name}.jsonl", data)
            if options.seal_to:
                sealed_rows = [
                    {
                        "id": g["id"],
                        "family": g["family"],
                        "hidden_yaml_age": seal(g["hidden_yaml"].encode("utf-8"), options.seal_to),
                        "canary": canary,
                    }
                    for g in gold_rows
                ]
                write_parquet(pub / SEALED_CONFIG / SHARD, sealed_rows, schemas[SEALED_CONFIG])
            for name in (CONFIG_FILE, TAXONOMY_FILE):
                if (ts.root / name).is_file():
                    _copy_new(ts.root / name, pub / "taskset" / name)
            for ext in ts.dialect_extensions():
                _copy_new(ext, pub / "taskset" / "dialects" / ext.name)
            for p in sorted(pub.rglob("*")):
                if p.is_file():
                    files[p.relative_to(pub).as_posix()] = sha256_file(p)
            manifest = ReleaseManifest(
                format=RELEASE_FORMAT,
                name=ts.config.name,
                version=options.version,
                date=when.date().isoformat(),
                ctbench_version=__version__,
                task_set={"commit": commit.commit, "dirty": commit.dirty},
                license=options.license,
                canary=canary,
                gold=_gold_note(gold_out, options.seal_to),
                counts=_counts(ts, kept),
                review=review_statistics(reviews, list(gate.unreviewed_admitted)),
                tasks=released,
                excluded=excluded,
                files=files,
            )
            manifest_text = render_manifest(manifest)
            atomic_write_text(pub / RELEASE_FILE, manifest_text)
            atomic_write_text(pub / "README.md", dataset_card(manifest, options))

            write_parquet(gold / GOLD_CONFIG / SHARD, gold_rows, schemas[GOLD_CONFIG])
            for k in kept:
                atomic_write_text(gold / k.ref.family.value / k.ref.id / "hidden.yaml", k.hidden_text)
            atomic_write_text(gold / RELEASE_FILE, manifest_text)
            atomic_write_text(gold / "README.md", gold_card(manifest, options))
            say(f"publishing {out}" + (f" and {gold_out}" if gold_out else ""))
            if gold_out is not None:
                _publish(gold, gold_out.resolve())
            _publish(pub, out.resolve())
    warnings = []
    if gate.unreviewed_admitted:
        warnings.append(
            f"{len(gate.unreviewed_admitted)} task(s) released without an approval (--allow-unreviewed); "
            "the manifest and the card say so"
        )
    return ReleaseResult(manifest, out, gold_out, warnings)


def _gold_note(gold_out: Path | None, seal_to: list[str]) -> str:
    notes = []
    if gold_out is not None:
        notes.append("separate: written to --gold-out for a private, gated repository, not in this folder")
    if seal_to:
        notes.append(
            f"sealed: config '{SEALED_CONFIG}' holds each task's hidden.yaml as age ciphertext to "
            f"{len(set(seal_to))} recipient(s); never in plain text"
        )
    return "; ".join(notes)


def _copy_new(src: Path, dst: Path) -> None:
    dst.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(src, dst)


def render_manifest(manifest: ReleaseManifest) -> str:
    header = (
        "# ctbench release manifest (ctb-author release). Cite the release by its version and the sha256 of\n"
        "# this file; every data file and every task's content hash is listed below.\n"
    )
    return header + dump_document(to_commented(manifest.model_dump(mode="json")))


# --------------------------------------------------------------------------- dataset cards


def dataset_card(manifest: ReleaseManifest, options: ReleaseOptions) -> str:
    """README.md of the public release: the Hub reads its YAML header (configs, gating, licence)."""
    configs = [
        {
            "config_name": name,
            **({"default": True} if name == "tasks" else {}),
            "data_files": [{"split": SPLIT, "path": f"{name}/{SPLIT}-*.parquet"}],
        }
        for name in PUBLIC_CONFIGS + ((SEALED_CONFIG,) if options.seal_to else ())
    ]
    header = {
        "pretty_name": options.pretty_name or f"{manifest.name} {manifest.version}",
        "license": manifest.license,
        "tags": ["network-troubleshooting", "root-cause-analysis", "agents", "benchmark", "ctbench"],
        "size_categories": ["n<1K"],
        "configs": configs,
        "extra_gated_prompt": (
            "This benchmark is gated to keep it out of training data. You agree not to train or fine-tune "
            "models on it, not to re-host it ungated, and to keep the canary string in every copy."
        ),
        "extra_gated_fields": {
            "Name": "text",
            "Affiliation": "text",
            "I will not use this dataset to train models and will keep its canary string": "checkbox",
        },
        "canary": manifest.canary,
    }
    c = manifest.counts
    review = manifest.review
    lines = [
        f"# {manifest.name} {manifest.version}",
        "",
        f"Troubleshooting tasks for AI agents on recorded network-device CLI output (CTBench-style), "
        f"released {manifest.date} with ctbench {manifest.ctbench_version}.",
        "",
        f"- {c['tasks']} tasks ({c['by_family']['rca']} root-cause analysis, {c['by_family']['path']} "
        f"path restoration"
        + (f", {c['by_family']['topology']} topology restoration" if c["by_family"].get("topology") else "")
        + "".join(f", {n} {f}" for f, n in c["by_family"].items() if f not in ("rca", "path", "topology"))
        + f"), {c['recordings']} recordings, byte-exact.",
        f"- Review: {review['reviewed']} reviewed blind by {len(review['reviewers'])} reviewer(s); "
        f"{review['approved_first_round']} approved in the first round; reviewers' blind answers exact: "
        f"{review['blind_exact']}.",
    ]
    if review["unreviewed"]:
        lines.append(
            f"- **Not reviewed**: {', '.join(review['unreviewed'])} (released with --allow-unreviewed)."
        )
    lines += [
        "- The gold answers are not in this repository.",
        "",
        "## Canary",
        "",
        f"`{manifest.canary}`",
        "",
        "Please exclude every document containing this string from training corpora.",
        "",
        "## Loading",
        "",
        "```python",
        "from datasets import load_dataset",
        "tasks = load_dataset(REPO_OR_FOLDER, 'tasks', split='test')",
        "networks = load_dataset(REPO_OR_FOLDER, 'networks', split='test')",
        "```",
        "",
        "Each task row holds `id`, `family`, `statement`, `network`, `accessible`, `canary` and `recordings`: "
        "a list of `{device, command, file, output, output_bytes, sha256}`, where `output` is the captured "
        "text when it is UTF-8 and `output_bytes` the raw bytes otherwise; `sha256` is the hex digest of the "
        "bytes. `json/*.jsonl` hold the same rows for JSON readers (`output_bytes` base64).",
        "",
        "Run agents on it with ctbench: `ctb-author import-release FOLDER --gold GOLD --out tasks`, then "
        "`ctb-eval run --tasks tasks --agent ...`. `RELEASE.yaml` lists every task's content hash.",
        "",
    ]
    return yaml_header(header) + "\n" + "\n".join(lines)


def gold_card(manifest: ReleaseManifest, options: ReleaseOptions) -> str:
    header = {
        "pretty_name": f"{manifest.name} {manifest.version} gold (private)",
        "license": manifest.license,
        "configs": [
            {
                "config_name": GOLD_CONFIG,
                "data_files": [{"split": SPLIT, "path": f"{GOLD_CONFIG}/{SPLIT}-*.parquet"}],
            }
        ],
        "extra_gated_prompt": "The gold answers of a benchmark: maintainers and scorers only.",
        "canary": manifest.canary,
    }
    body = (
        f"# {manifest.name} {manifest.version}: gold\n\n"
        "The hidden part of every released task (answer, golden actions, metadata, rationale). Keep this "
        "folder in a private repository; never push it beside the public release.\n"
    )
    return yaml_header(header) + "\n" + body
