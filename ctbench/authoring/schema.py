"""JSON Schema export, so editors (yaml-language-server) validate task files as people type."""

from __future__ import annotations

import json
from pathlib import Path

from pydantic import BaseModel

from ctbench.model import HiddenSpec, Network, TaskSpec
from ctbench.taxonomy import TaskSetConfig, Taxonomy
from ctbench.yamlio import atomic_write_text

MODELS: dict[str, type[BaseModel]] = {
    "task.schema.json": TaskSpec,
    "hidden.schema.json": HiddenSpec,
    "network.schema.json": Network,
    "taxonomy.schema.json": Taxonomy,
    "config.schema.json": TaskSetConfig,
}


def schema_for(model: type[BaseModel]) -> dict[str, object]:
    schema = model.model_json_schema(by_alias=True, mode="validation")
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    return schema


def export_schemas(out: Path, extra: dict[str, type[BaseModel]] | None = None) -> list[Path]:
    written = []
    for name, model in {**MODELS, **(extra or {})}.items():
        p = out / name
        atomic_write_text(p, json.dumps(schema_for(model), indent=2, sort_keys=True) + "\n")
        written.append(p)
    return written
