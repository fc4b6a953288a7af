"""Validation of a topology-restoration gold (``answer.links``): what makes it impossible to state.

A link names two ends, each a node of the task's network and a port of that node; a physical port
holds one cable, so a port used by two gold links is an error, and so is a link from a port to
itself. A port the network file does not list for a node that lists its interfaces is an error too
(a typo in the gold would otherwise be a link no agent can name). The scorer's own gold check
(:func:`ctbench.scoring.topology.gold_problems`) asks the same of a gold; this copy lives in the
core because validation runs below the scoring layer.
"""

from __future__ import annotations

from collections.abc import Callable

from ctbench.model import HiddenSpec, Network

Problem = tuple[list[str | int], str, str]
"""(location in hidden.yaml, message, what was expected)."""


def link_problems(
    hidden: HiddenSpec,
    net: Network,
    interfaces: Callable[[str], set[str]],
    normalize: Callable[[str, str], str],
) -> list[Problem]:
    """Every problem of the task's gold links on ``net`` (empty when it can be stated)."""
    devices = net.device_map()
    out: list[Problem] = []
    used: dict[tuple[str, str], int] = {}
    for i, x in enumerate(hidden.answer.links or []):
        ends = []
        for side, end in (("a", x.a), ("b", x.b)):
            loc: list[str | int] = ["answer", "links", i]
            if end.node not in devices:
                out.append(
                    (loc, f"link end {end.node!r} is not in network {net.name}", "a node of the network")
                )
                continue
            port = normalize(end.node, end.interface)
            known = interfaces(end.node)
            if known and port not in known:
                out.append(
                    (
                        loc,
                        f"{end.node} has no port {end.interface!r}",
                        "one of " + ", ".join(sorted(known)[:8]),
                    )
                )
            key = (end.node, port)
            if key in used and used[key] != i:
                out.append(
                    (loc, f"port {end.node}({port}) already holds link {used[key] + 1}", "one cable per port")
                )
            used[key] = i
            ends.append(key)
            del side
        if len(ends) == 2 and ends[0] == ends[1]:
            out.append((["answer", "links", i], "a link joins a port to itself", "two different ends"))
    return out
