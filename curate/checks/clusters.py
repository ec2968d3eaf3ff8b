"""Union-find clusters of items or chunks, remembering the edge (method, score) that joined them."""

from __future__ import annotations

from collections.abc import Hashable, Iterable
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Edge:
    """Two members found alike by one method, with its score."""

    a: str
    b: str
    method: str
    score: float


@dataclass
class Cluster:
    """Members joined by edges; `edges` are those that joined them."""

    members: list[str]
    edges: list[Edge] = field(default_factory=list)


def clusters(edges: Iterable[Edge], order: dict[Hashable, int] | None = None) -> list[Cluster]:
    """Return the clusters the edges form (members in `order`, clusters by their first member).

    >>> [c.members for c in clusters([Edge("b", "c", "exact", 100), Edge("a", "b", "fuzzy", 92)])]
    [['a', 'b', 'c']]
    """
    parent: dict[str, str] = {}

    def find(x: str) -> str:
        parent.setdefault(x, x)
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    joined: dict[str, list[Edge]] = {}
    edges = list(edges)
    for edge in edges:
        ra, rb = find(edge.a), find(edge.b)
        if ra != rb:
            parent[rb] = ra
    for edge in edges:
        joined.setdefault(find(edge.a), []).append(edge)
    groups: dict[str, list[str]] = {}
    for member in parent:
        groups.setdefault(find(member), []).append(member)
    rank = (lambda m: (order.get(m, len(order)), m)) if order else (lambda m: m)
    result = [Cluster(sorted(members, key=rank), joined.get(root, [])) for root, members in groups.items()]
    return sorted(result, key=lambda c: rank(c.members[0]))
