"""The probe: a fixed troubleshooting checklist on every accessible device, and no answer.

It measures how much golden evidence brute force collects without any reasoning - the evidence
metrics of a real agent mean little unless they beat this. The checklists are what an engineer types
first on an unfamiliar box of each vendor: inventory, interface and IP state, neighbours, routing,
protocol peers, redundancy, configuration and logs.
"""

from __future__ import annotations

from types import MappingProxyType

from ctbench.evaluate.agents.base import Agent, AgentContext, AgentResult

_VRP_COMWARE = (
    "display version",
    "display interface brief",
    "display ip interface brief",
    "display lldp neighbor brief",
    "display arp",
    "display ip routing-table",
    "display ospf peer",
    "display bgp peer",
    "display vrrp",
    "display current-configuration",
    "display logbuffer",
)

CHECKLISTS: MappingProxyType[str, tuple[str, ...]] = MappingProxyType({
    "huawei_vrp": _VRP_COMWARE,
    "hp_comware": (
        "display version",
        "display interface brief",
        "display ip interface brief",
        "display lldp neighbor-information list",
        "display arp",
        "display ip routing-table",
        "display ospf peer",
        "display bgp peer ipv4",
        "display vrrp",
        "display current-configuration",
        "display logbuffer",
    ),
    "cisco_ios": (
        "show version",
        "show ip interface brief",
        "show interfaces",
        "show cdp neighbors",
        "show lldp neighbors",
        "show ip arp",
        "show ip route",
        "show ip ospf neighbor",
        "show ip bgp summary",
        "show standby brief",
        "show running-config",
        "show logging",
    ),
    "cisco_nxos": (
        "show version",
        "show interface brief",
        "show ip interface brief",
        "show cdp neighbors",
        "show lldp neighbors",
        "show ip arp",
        "show ip route",
        "show ip ospf neighbors",
        "show bgp ipv4 unicast summary",
        "show hsrp brief",
        "show running-config",
        "show logging logfile",
    ),
    "juniper_junos": (
        "show version",
        "show interfaces terse",
        "show lldp neighbors",
        "show arp no-resolve",
        "show route",
        "show ospf neighbor",
        "show bgp summary",
        "show vrrp summary",
        "show configuration",
        "show log messages",
    ),
})
"""Commands per CLI family (the ``os`` of a device), in the order they are run."""

FALLBACK: tuple[str, ...] = ("show version",)


class ProbeAgent(Agent):
    name = "probe"
    description = "fixed per-vendor checklist on every accessible device, no answer"

    async def solve(self, ctx: AgentContext) -> AgentResult:
        calls = 0
        for device in ctx.session.devices():
            for command in CHECKLISTS.get(device.os, FALLBACK):
                obs = ctx.session.run(device.name, command)
                calls += 1
                ctx.log.line(f"{device.name}> {command}  [{obs.outcome.value}, {obs.output_bytes} bytes]")
        return AgentResult(rounds=calls, input_tokens=0, output_tokens=0)
