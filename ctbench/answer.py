"""Answer values shared by the task model, the scorer, the replay ``submit`` tool and review.

They are plain immutable tuples so that set arithmetic (IoU) is cheap and hashing is exact; the
pydantic models in :mod:`ctbench.model` convert to and from them.
"""

from __future__ import annotations

from typing import NamedTuple


class RcaEntry(NamedTuple):
    """One root cause: ``node;object;label`` (label is the taxonomy's canonical L0 label)."""

    node: str
    object: str
    label: str

    def line(self) -> str:
        return f"{self.node};{self.object};{self.label}"


class Hop(NamedTuple):
    """A path element: a node and the interface the traffic leaves it by (``None`` on the terminal).

    ``ingress`` is the port the traffic enters it by, for paths named port by port on both sides
    (TTAC Track B's L2 paths, ``node(out)->node(in)->...``); ``None`` on the first hop and on every
    hop of a path written ``node_egress``. It is part of the hop's identity, so a path entering a
    node by the wrong port is not the gold's (:func:`align_ingress` says when it counts).
    """

    node: str
    egress: str | None = None
    ingress: str | None = None

    def token(self) -> str:
        return self.node if self.egress is None else f"{self.node}_{self.egress}"


Path = tuple[Hop, ...]


def has_ingress(path: Path) -> bool:
    return any(h.ingress is not None for h in path)


def path_line(path: Path) -> str:
    """Render a path the way agents must write it: ``A_GE1/0/1 -> B_Gi0/1 -> C``, or, when it names
    ingress ports, port by port as Track B's L2 paths: ``A(GE1/0/1) -> B(GE1/0/2) -> B(GE1/0/3) -> C(GE1)``."""
    if not has_ingress(path):
        return " -> ".join(h.token() for h in path)
    ports = [f"{h.node}({port})" for h in path for port in (h.ingress, h.egress) if port is not None]
    return " -> ".join(ports)


def align_ingress(predicted: tuple[Path, ...], gold: tuple[Path, ...]) -> tuple[Path, ...]:
    """The predicted paths as they are compared with ``gold``: ingress ports count only when the
    gold names them (Track B's L2 paths, where its rules compare the whole ``node(port)`` line); an
    answer written port by port against a ``node_egress`` gold is read for its nodes and egresses."""
    if any(has_ingress(p) for p in gold):
        return predicted
    return tuple(tuple(Hop(h.node, h.egress) for h in p) for p in predicted)


def path_edges(path: Path) -> list[tuple[Hop, Hop]]:
    """Directed edges between consecutive hops, egress interfaces included (the Path-Rest unit).

    The paper scores restoration on directed edges of the normalised path tokens, "including the
    egress interface encoded in each path token" (appendix B.1), so a right neighbour reached through
    the wrong port is not a matching edge.
    """
    return [(a, b) for a, b in zip(path, path[1:], strict=False)]
