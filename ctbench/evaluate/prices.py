"""Moved to :mod:`ctbench.prices` (a core module: exporters price attempts through the plug-in face,
which sits below the evaluator). This name stays so code written against it keeps working."""

from ctbench.prices import (
    PER_TOKENS,
    REPORTED_CURRENCY,
    UNKNOWN,
    AttemptCost,
    CostedRun,
    CostSource,
    ModelPrice,
    Prices,
    PriceTable,
    attempt_cost,
    cost_section,
    currency_of,
    load_prices,
    prices_option,
)

__all__ = [
    "PER_TOKENS",
    "REPORTED_CURRENCY",
    "UNKNOWN",
    "AttemptCost",
    "CostSource",
    "CostedRun",
    "ModelPrice",
    "PriceTable",
    "Prices",
    "attempt_cost",
    "cost_section",
    "currency_of",
    "load_prices",
    "prices_option",
]
