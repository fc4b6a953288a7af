"""The probe: a fixed troubleshooting checklist on every accessible device, and no answer.

It measures how much golden evidence brute force collects without any reasoning - the evidence
metrics of a real agent mean little unless they beat this. The checklists are what an engineer types
first on an unfamiliar box of each vendor: inventory, interface and IP state, neighbours, routing,
protocol peers, redundancy, configuration and logs. They are kept in the vendor's dialect data file
(``first_commands``), so a new vendor brings its own.
"""

from __future__ import annotations

from ctbench.plugin_api import Agent, AgentContext, AgentResult, get_dialect

FALLBACK: tuple[str, ...] = ("show version",)
"""For a device whose dialect names no first commands."""


def checklist(os_name: str | None) -> tuple[str, ...]:
    """The commands run on a device of CLI family ``os_name``, in order: its dialect's ``first_commands``
    (the dialect data file is the one place a vendor's commands are written down)."""
    if os_name is None:
        return FALLBACK
    try:
        return get_dialect(os_name).first_commands or FALLBACK
    except ValueError:  # a family without a data file: the session would say the same
        return FALLBACK


class ProbeAgent(Agent):
    name = "probe"
    description = "fixed per-vendor checklist on every accessible device, no answer"

    async def solve(self, ctx: AgentContext) -> AgentResult:
        calls = 0
        for device in ctx.session.devices():
            for command in checklist(device.os):
                obs = ctx.session.run(device.name, command)
                calls += 1
                ctx.log.line(f"{device.name}> {command}  [{obs.outcome.value}, {obs.output_bytes} bytes]")
        return AgentResult(rounds=calls, input_tokens=0, output_tokens=0)
