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
    """A path element: a node and the interface the traffic leaves it by (``None`` on the terminal)."""

    node: str
    egress: str | None = None

    def token(self) -> str:
        return self.node if self.egress is None else f"{self.node}_{self.egress}"


Path = tuple[Hop, ...]


def path_line(path: Path) -> str:
    """Render a path the way agents must write it: ``A_GE1/0/1 -> B_Gi0/1 -> C``."""
    return " -> ".join(h.token() for h in path)


def path_edges(path: Path) -> list[tuple[Hop, Hop]]:
    """Directed edges between consecutive hops, egress interfaces included (the Path-Rest unit).

    The paper scores restoration on directed edges of the normalised path tokens, "including the
    egress interface encoded in each path token" (appendix B.1), so a right neighbour reached through
    the wrong port is not a matching edge.
    """
    return [(a, b) for a, b in zip(path, path[1:], strict=False)]
