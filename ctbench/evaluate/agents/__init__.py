"""Agents behind one adapter interface (:mod:`.base`).

=========  ================================================================================
oracle     runs the golden actions and answers the gold: the ceiling, and a check of the scorer
null       answers nothing: the floor
probe      a fixed per-vendor checklist on every accessible device, no answer: brute-force evidence
openai     a tool-calling loop for any OpenAI-compatible endpoint (official ``openai`` client)
command    any executable: prompt on stdin, replay endpoint in the environment, answer on stdout
=========  ================================================================================

Adapters are imported on demand so that ``ctb-eval run --agent oracle`` never imports the openai
client.
"""

from __future__ import annotations

from importlib import import_module

from ctbench.evaluate.agents.base import (
    Agent,
    AgentConfigError,
    AgentContext,
    AgentError,
    AgentLog,
    AgentOptions,
    AgentResult,
    InfrastructureError,
)

_REGISTRY: dict[str, tuple[str, str, str]] = {
    "oracle": ("ctbench.evaluate.agents.oracle", "OracleAgent",
               "runs the golden actions and answers the gold (must score 100 on every metric)"),
    "null": ("ctbench.evaluate.agents.null", "NullAgent", "answers nothing (the floor)"),
    "probe": ("ctbench.evaluate.agents.probe", "ProbeAgent",
              "runs a fixed per-vendor checklist on every accessible device, answers nothing"),
    "openai": ("ctbench.evaluate.agents.openai_chat", "OpenAIAgent",
               "tool-calling loop on any OpenAI-compatible endpoint (--model, --base-url)"),
    "command": ("ctbench.evaluate.agents.command", "CommandAgent",
                "any executable (--agent-cmd): prompt on stdin, answer on stdout or in a file"),
    "codex": ("ctbench.evaluate.agents.codex", "CodexAgent",
              "OpenAI Codex CLI on the replay's MCP tools (ctb-eval harness install codex)"),
    "claude-code": ("ctbench.evaluate.agents.claude_code", "ClaudeCodeAgent",
                    "Anthropic Claude Code on the replay's MCP tools (ctb-eval harness install claude-code)"),
    "hermes": ("ctbench.evaluate.agents.hermes", "HermesAgent",
               "Hermes Agent on the replay's MCP tools (ctb-eval harness install hermes)"),
}

AGENT_NAMES: tuple[str, ...] = tuple(_REGISTRY)


def agent_help() -> str:
    """One line per agent, for ``--help``."""
    return "\n".join(f"  {name:<8} {text}" for name, (_, _, text) in _REGISTRY.items())


def agent_class(name: str) -> type[Agent]:
    try:
        module, cls, _ = _REGISTRY[name]
    except KeyError:
        raise AgentConfigError(f"unknown agent {name!r}; choose one of: {', '.join(AGENT_NAMES)}") from None
    found: type[Agent] = getattr(import_module(module), cls)
    return found


def make_agent(name: str, options: AgentOptions) -> Agent:
    """An agent instance with its options checked (raises :class:`AgentConfigError` when unusable)."""
    agent = agent_class(name)(options)
    agent.check()
    return agent


__all__ = [
    "AGENT_NAMES",
    "Agent",
    "AgentConfigError",
    "AgentContext",
    "AgentError",
    "AgentLog",
    "AgentOptions",
    "AgentResult",
    "InfrastructureError",
    "agent_class",
    "agent_help",
    "make_agent",
]
