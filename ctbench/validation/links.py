"""The one check of a topology-restoration gold: what makes a set of links impossible to state.

A link names two ends, each a node of the task's network and a port of that node; a physical port
holds one cable, so a port used by two gold links is an error, and so is a link from a port to
itself. A port the network file does not list for a node that lists its interfaces is an error too
(a typo in the gold would otherwise be a link no agent can name).

:func:`cable_problems` is the check, on plain ``((node, port), (node, port))`` values; validation
(:func:`link_problems`, on ``hidden.yaml``'s ``answer.links``) and the topology family's
``gold_problems`` (:mod:`ctbench.scoring.topology`, on the judge's normalised gold) both call it, so
the two cannot disagree. It lives in the core because validation runs below the scoring layer.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence

from ctbench.model import HiddenSpec, Network

Problem = tuple[list[str | int], str, str]
"""(location in hidden.yaml, message, what was expected)."""
Cable = tuple[tuple[str, str], tuple[str, str]]
"""A link's two ends, (node, port) each, ports as the network names them."""


def cable_problems(
    links: Sequence[Cable],
    devices: Collection[str],
    interfaces: Callable[[str], set[str]] = lambda node: set(),
    network: str = "the network",
) -> list[tuple[int, str, str]]:
    """(index of the link, message, what was expected) for every problem of ``links`` on a network
    with ``devices`` (``interfaces(node)``: the ports a node lists, empty when it lists none)."""
    out: list[tuple[int, str, str]] = []
    used: dict[tuple[str, str], int] = {}
    for i, (a, b) in enumerate(links):
        ends = []
        for node, port in (a, b):
            if node not in devices:
                out.append((i, f"link end {node!r} is not in {network}", "a node of the network"))
                continue
            known = interfaces(node)
            if known and port not in known:
                out.append((i, f"{node} has no port {port!r}", "one of " + ", ".join(sorted(known)[:8])))
            key = (node, port)
            if key in used and used[key] != i:
                out.append(
                    (i, f"port {node}({port}) already holds link {used[key] + 1}", "one cable per port")
                )
            used[key] = i
            ends.append(key)
        if len(ends) == 2 and ends[0] == ends[1]:
            out.append((i, "a link joins a port to itself", "two different ends"))
    return out


def link_problems(
    hidden: HiddenSpec,
    net: Network,
    interfaces: Callable[[str], set[str]],
    normalize: Callable[[str, str], str],
) -> list[Problem]:
    """Every problem of the task's gold links on ``net`` (empty when it can be stated)."""
    devices = net.device_map()

    def end(node: str, interface: str) -> tuple[str, str]:
        return (node, normalize(node, interface) if node in devices else interface)

    cables = [(end(x.a.node, x.a.interface), end(x.b.node, x.b.interface)) for x in hidden.answer.links or []]
    return [
        (["answer", "links", i], message, expected)
        for i, message, expected in cable_problems(cables, devices, interfaces, f"network {net.name}")
    ]
