"""The null agent: looks at nothing and answers nothing. Every metric's floor."""

from __future__ import annotations

from ctbench.plugin_api import Agent, AgentContext, AgentResult


class NullAgent(Agent):
    name = "null"
    description = "answers nothing"

    async def solve(self, ctx: AgentContext) -> AgentResult:
        ctx.log.line("null agent: no commands, no answer")
        return AgentResult(rounds=0, input_tokens=0, output_tokens=0)
