"""Moved to :mod:`ctbench.plugin_api.turns` (part of the plug-in contract: an adapter reads its
harness's log into :class:`ModelTurn`). This name stays so code written against it keeps working."""

from ctbench.plugin_api.turns import ModelTurn, TurnReader, ctbench_turn, log_turns, token_count

__all__ = ["ModelTurn", "TurnReader", "ctbench_turn", "log_turns", "token_count"]
