"""Price tables (``--prices FILE``) and the cost of each attempt, with where the figure came from.

Some harnesses report what an attempt cost (Claude Code's ``total_cost_usd``, Hermes when it knows
the price); the others report tokens only. A price file turns those tokens into money, so every run
of a report gets a cost column, and every figure says where it came from:

- ``reported``: the harness's own figure (``cost_usd`` of the result line), in US dollars;
- ``priced``: input, cached input and output tokens of the line times the price file's entry for the
  model (the model id the endpoint reported, when the line has one, else the run's ``--model``);
- ``unknown``: neither (no price for the model, or no token counts).

A price file is small YAML (or JSON), one entry per model id, prices per million tokens::

    currency: USD            # ISO 4217 code; every price below is in it
    date: 2026-11-30         # when the prices were read: prices change, reports must say which
    source: https://...      # optional: where they were read
    models:
      gpt-5.5:
        input: 1.25          # per million uncached input tokens
        cached_input: 0.125  # per million cache-read input tokens (default: the input price)
        output: 10.0         # per million output tokens (reasoning tokens included)
        aliases: [openai/gpt-5.5]   # other ids the same model is run or reported under

Reported costs are in US dollars; with a price file in another currency they cannot be added to
priced figures, so such a run is priced from its tokens alone (and a warning says so).
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Any, Literal, Protocol

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from ctbench.model import BUILTIN_FAMILIES
from ctbench.yamlio import YamlFileError, line_of, load_document, plain, read_text


class _Attempt(Protocol):
    @property
    def task_id(self) -> str: ...

    @property
    def trial(self) -> int: ...

    @property
    def family(self) -> str: ...


class CostedRun(Protocol):
    """What :func:`cost_section` reads of a scored run (:class:`ctbench.evaluate.score.ScoredRun`)."""

    @property
    def trial_scores(self) -> Sequence[_Attempt]: ...

    @property
    def costs(self) -> Mapping[tuple[str, int], AttemptCost]: ...

    @property
    def prices(self) -> Prices | None: ...


PER_TOKENS = 1_000_000
"""Prices are per million tokens, as providers publish them."""
REPORTED_CURRENCY = "USD"
"""The currency of the costs harnesses report (``cost_usd``)."""

CostSource = Literal["reported", "priced", "unknown"]


class ModelPrice(BaseModel):
    """What one model costs per million tokens."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    input: float = Field(ge=0, description="Per million uncached input tokens.")
    output: float = Field(ge=0, description="Per million output tokens.")
    cached_input: float | None = Field(
        default=None, ge=0, description="Per million cache-read input tokens (default: the input price)."
    )
    aliases: tuple[str, ...] = Field(default=(), description="Other ids of the same model.")

    @field_validator("input", "output", "cached_input")
    @classmethod
    def _finite(cls, value: float | None) -> float | None:
        if value is not None and not math.isfinite(value):
            raise ValueError("a price is a finite number")
        return value

    def cost(self, input_tokens: int, cached_tokens: int, output_tokens: int) -> float:
        """Input tokens include the cached ones (as ctbench records them): those pay the cached price."""
        cached = min(max(cached_tokens, 0), input_tokens)
        cached_price = self.input if self.cached_input is None else self.cached_input
        return (
            (input_tokens - cached) * self.input + cached * cached_price + output_tokens * self.output
        ) / PER_TOKENS


class PriceTable(BaseModel):
    """A price file: currency, the date the prices were read, and a price per model id."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    currency: str = Field(pattern=r"^[A-Z]{3}$", description="ISO 4217 code, e.g. USD, EUR, CNY.")
    date: date
    source: str | None = None
    models: dict[str, ModelPrice] = Field(min_length=1)

    @model_validator(mode="after")
    def _ids_once(self) -> PriceTable:
        seen: dict[str, str] = {}
        for name, price in self.models.items():
            for model_id in (name, *price.aliases):
                if model_id in seen and seen[model_id] != name:
                    raise ValueError(
                        f"model id {model_id!r} is given for both {seen[model_id]!r} and {name!r}"
                    )
                seen[model_id] = name
        return self

    def lookup(self, *model_ids: str | None) -> tuple[str, ModelPrice] | None:
        """The entry of the first id that has one (an entry's name or one of its aliases)."""
        for model_id in model_ids:
            if not model_id:
                continue
            if model_id in self.models:
                return model_id, self.models[model_id]
            for name, price in self.models.items():
                if model_id in price.aliases:
                    return name, price
        return None


@dataclass(frozen=True)
class Prices:
    """A loaded price file and what identifies it in scores.json (its name and content hash, never
    its absolute path: scores.json must not change when the file moves)."""

    table: PriceTable
    name: str
    sha256: str

    def describe(self) -> dict[str, Any]:
        return {
            "file": self.name,
            "sha256": self.sha256,
            "currency": self.table.currency,
            "date": self.table.date.isoformat(),
            "source": self.table.source,
            "unit": "per million tokens",
        }


def load_prices(path: Path | str) -> Prices:
    """Read and check a price file; a problem is a :class:`CtbError` naming file and line."""
    path = Path(path)
    text = read_text(path)
    doc = load_document(path, text)
    if not isinstance(doc, dict):
        raise YamlFileError(path, 1, "expected a mapping with currency, date and models")
    try:
        table = PriceTable.model_validate(plain(doc))
    except ValidationError as exc:
        errors = exc.errors()
        # a misspelt key (``ouput``) also makes the right one missing: name the misspelling first
        err = next((e for e in errors if e["type"] == "extra_forbidden"), errors[0])
        loc = tuple(err["loc"])
        where = ".".join(str(p) for p in loc) or "the file"
        if err["type"] == "extra_forbidden":
            known = ModelPrice.model_fields if len(loc) == 3 else PriceTable.model_fields
            hint = f" (expected one of: {', '.join(known)})"
        else:
            hint = _HINTS.get(str(loc[-1]) if loc else "", "")
        raise YamlFileError(path, line_of(doc, loc), f"{where}: {err['msg']}{hint}") from None
    return Prices(table, path.name, hashlib.sha256(text.encode("utf-8")).hexdigest())


_HINTS = {
    "currency": " (an ISO 4217 code such as USD)",
    "date": " (the date the prices were read, YYYY-MM-DD)",
    "input": " (a price per million tokens, a number >= 0)",
    "output": " (a price per million tokens, a number >= 0)",
    "cached_input": " (a price per million tokens, a number >= 0)",
    "models": " (a mapping of model id -> input, cached_input, output)",
}


@dataclass(frozen=True)
class AttemptCost:
    """The cost of one result line and where it came from (``model``: the price entry used)."""

    value: float | None
    source: CostSource
    model: str | None = None


UNKNOWN = AttemptCost(None, "unknown")


def attempt_cost(line: Any, run_model: str | None, prices: Prices | None) -> AttemptCost:
    """A result line's cost, its retried attempts' included (an infrastructure error that had spent
    tokens before it failed): each one's own figure, else its tokens priced; the source is the
    line's."""
    own = _one_cost(line, run_model, prices)
    extra = [_one_cost(r, run_model, prices).value for r in getattr(line, "retries", None) or []]
    spent = [v for v in extra if v is not None]
    if not spent or own.value is None:
        return own
    return AttemptCost(own.value + math.fsum(spent), own.source, own.model)


def _one_cost(line: Any, run_model: str | None, prices: Prices | None) -> AttemptCost:
    """One attempt's cost: the harness's own figure, else its tokens times the price file's entry
    for the model the endpoint reported (``model_reported``) or the run's model, else unknown."""
    reported = getattr(line, "cost_usd", None)
    usable = prices is None or prices.table.currency == REPORTED_CURRENCY
    if reported is not None and usable and math.isfinite(reported) and reported >= 0:
        return AttemptCost(float(reported), "reported")
    if prices is None:
        return UNKNOWN
    reported_id = getattr(line, "model_reported", None)
    found = prices.table.lookup(reported_id if isinstance(reported_id, str) else None, run_model)
    tin, tout = getattr(line, "input_tokens", None), getattr(line, "output_tokens", None)
    if found is None or tin is None or tout is None:
        return UNKNOWN
    name, price = found
    cached = getattr(line, "cached_tokens", None) or 0
    return AttemptCost(price.cost(int(tin), int(cached), int(tout)), "priced", name)


def currency_of(prices: Prices | None) -> str:
    return REPORTED_CURRENCY if prices is None else prices.table.currency


def prices_option(value: str | None) -> Prices | None:
    """``--prices FILE`` of a command, loaded (None when not given)."""
    return None if value is None else load_prices(value)


def cost_section(run: CostedRun) -> dict[str, Any] | None:
    """scores.json's ``cost``: per family (``all``, the built-ins, then any plug-in family the run holds) the mean and median cost per task
    (a task's mean over its trials with a known cost), the total over every task-trial, how many tasks
    had a figure; how many task-trials each source gave; and the price file. None when no attempt of
    the run has a cost and no price file was given (a run of the oracle, say)."""
    import statistics

    keys = [(s.task_id, s.trial, s.family) for s in run.trial_scores]
    costs = {(tid, trial): run.costs.get((tid, trial), UNKNOWN) for tid, trial, _ in keys}
    if run.prices is None and all(c.value is None for c in costs.values()):
        return None
    by_family: dict[str, Any] = {}
    plugins = sorted({family for *_, family in keys} - set(BUILTIN_FAMILIES))
    for fam in ("all", *BUILTIN_FAMILIES, *plugins):
        per_task: dict[str, list[float]] = {}
        tasks: set[str] = set()
        sources = {name: 0 for name in ("reported", "priced", "unknown")}
        for tid, trial, family in keys:
            if fam != "all" and family != fam:
                continue
            tasks.add(tid)
            spent = costs[(tid, trial)]
            if (tid, trial) in run.costs:  # a task-trial without a result line spent nothing we know of
                sources[spent.source] += 1
            if spent.value is not None:
                per_task.setdefault(tid, []).append(spent.value)
        means = [sum(v) / len(v) for v in per_task.values()]
        by_family[fam] = {
            "n": len(means),
            "missing": len(tasks) - len(means),
            "mean": statistics.fmean(means) if means else None,
            "median": statistics.median(means) if means else None,
            "total": math.fsum(v for vs in per_task.values() for v in vs) if means else None,
            "sources": sources,
        }
    models = sorted({c.model for c in costs.values() if c.model})
    return {
        "currency": currency_of(run.prices),
        "sources": by_family["all"]["sources"],
        "by_family": by_family,
        "prices": None if run.prices is None else {**run.prices.describe(), "models": models},
        "rule": "reported (the harness's cost_usd) where the line has it, else its input, cached input and "
        "output tokens times the price file's entry for the endpoint-reported model id or the run's model; "
        "timeouts and errors count with what they spent",
    }
