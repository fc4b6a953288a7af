"""Agents behind one adapter interface (:mod:`ctbench.plugin_api.agent`), found through the ``ctbench.agents`` entry points.

=========  ================================================================================
oracle     runs the golden actions and answers the gold: the ceiling, and a check of the scorer
null       answers nothing: the floor
probe      a fixed per-vendor checklist on every accessible device, no answer: brute-force evidence
openai     a tool-calling loop for any OpenAI-compatible endpoint (official ``openai`` client)
command    any executable: prompt on stdin, replay endpoint in the environment, answer on stdout
codex      OpenAI Codex CLI (``codex exec``) on the replay's MCP tools
claude-code  Anthropic Claude Code (``claude -p``) on the replay's MCP tools
hermes     Hermes Agent (``hermes chat -q``) on the replay's MCP tools
=========  ================================================================================

Every agent, the built-in ones included, is registered in a package's metadata::

    [project.entry-points."ctbench.agents"]
    my-agent = "my_package.agent:MyAgent"

so adding an agent is one module plus one entry-point line, and ``ctb-eval agents`` lists what is
installed. Entry points are loaded on demand: ``ctb-eval run --agent oracle`` never imports the openai
client. When ctbench runs from a source tree that was never installed (no metadata), the built-in
table below stands in for its own entry points.
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib import import_module
from importlib.metadata import EntryPoint, entry_points
from typing import Any

from pydantic import BaseModel

from ctbench.plugin_api.agent import GROUP as GROUP
from ctbench.plugin_api.agent import (
    Agent,
    AgentConfigError,
    AgentContext,
    AgentError,
    AgentLog,
    AgentOptions,
    AgentResult,
    AgentSettings,
    Availability,
    InfrastructureError,
    NoOptions,
)

BUILTIN: dict[str, str] = {
    "oracle": "ctbench.evaluate.agents.oracle:OracleAgent",
    "null": "ctbench.evaluate.agents.null:NullAgent",
    "probe": "ctbench.evaluate.agents.probe:ProbeAgent",
    "openai": "ctbench.evaluate.agents.openai_chat:OpenAIAgent",
    "command": "ctbench.evaluate.agents.command:CommandAgent",
    "codex": "ctbench.evaluate.agents.codex:CodexAgent",
    "claude-code": "ctbench.evaluate.agents.claude_code:ClaudeCodeAgent",
    "hermes": "ctbench.evaluate.agents.hermes:HermesAgent",
}
"""The built-in agents' entry points, exactly as pyproject.toml declares them (checked by a test)."""


@dataclass(frozen=True)
class AgentEntry:
    """One registered agent, before it is imported."""

    name: str
    target: str
    """``module:Class``."""
    distribution: str | None

    def load(self) -> type[Agent]:
        module, _, attr = self.target.partition(":")
        try:
            found: Any = getattr(import_module(module), attr)
        except (ImportError, AttributeError) as exc:
            raise AgentConfigError(
                f"agent {self.name!r} ({self.target}, from "
                f"{self.distribution or 'an unknown package'}) cannot be loaded: {exc}"
            ) from None
        if not (isinstance(found, type) and issubclass(found, Agent)):
            raise AgentConfigError(f"agent {self.name!r}: {self.target} is not a ctbench Agent class")
        return found


def _entry(ep: EntryPoint) -> AgentEntry:
    dist = getattr(ep, "dist", None)
    return AgentEntry(ep.name, ep.value, getattr(dist, "name", None))


def registry() -> dict[str, AgentEntry]:
    """Every agent installed here, built-ins first, then plug-ins in name order.

    Read afresh on each call: a package installed while a process runs is found by the next call.
    """
    found = {ep.name: _entry(ep) for ep in entry_points(group=GROUP)}
    out = {name: found.pop(name, AgentEntry(name, target, "ctbench")) for name, target in BUILTIN.items()}
    out.update(sorted(found.items()))
    return out


def agent_names() -> list[str]:
    return list(registry())


def agent_help() -> str:
    """One line per built-in agent, for ``--help`` (``ctb-eval agents`` lists plug-ins too)."""
    lines = []
    for name, entry in registry().items():
        try:
            text = entry.load().description
        except AgentConfigError as exc:
            text = f"(cannot be loaded: {exc})"
        lines.append(f"  {name:<12} {text}")
    return "\n".join(lines)


def agent_class(name: str) -> type[Agent]:
    entries = registry()
    entry = entries.get(name)
    if entry is None:
        raise AgentConfigError(
            f"unknown agent {name!r}; choose one of: {', '.join(entries)} (ctb-eval agents lists them)"
        )
    return entry.load()


def parse_agent_args(items: list[str] | None) -> dict[str, str]:
    """``["k=v", ...]`` from ``--agent-arg`` into a dict; a malformed or repeated key is one clear line."""
    out: dict[str, str] = {}
    for item in items or []:
        key, sep, value = item.partition("=")
        key = key.strip()
        if not sep or not key:
            raise AgentConfigError(f"--agent-arg {item!r}: expected KEY=VALUE")
        if key in out:
            raise AgentConfigError(f"--agent-arg {key}: given twice")
        out[key] = value
    return out


def make_agent(name: str, options: AgentSettings, args: dict[str, Any] | BaseModel | None = None) -> Agent:
    """An agent instance with its options checked (raises :class:`AgentConfigError` when unusable)."""
    cls = agent_class(name)
    parsed = args if isinstance(args, BaseModel) else cls.parse_args(args or {})
    agent = cls(options, parsed)
    agent.check()
    return agent


__all__ = [
    "GROUP",
    "Agent",
    "AgentConfigError",
    "AgentContext",
    "AgentEntry",
    "AgentError",
    "AgentLog",
    "AgentOptions",
    "AgentResult",
    "AgentSettings",
    "Availability",
    "InfrastructureError",
    "NoOptions",
    "agent_class",
    "agent_help",
    "agent_names",
    "make_agent",
    "parse_agent_args",
    "registry",
]
