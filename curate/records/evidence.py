"""What counts as one piece of evidence: the evidence-group rule that import (qtype), difficulty,
the exports and evalrun's scoring all use.

DESIGN.md: the relevant set R of an item is its evidence *groups* with grade >= 1. Copies of the
same evidence (duplicate chunks) form one group; finding any one of them counts.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from curate.records.item import EvalItem, Evidence


@dataclass(frozen=True)
class EvidenceGroup:
    """Relevant evidence that any one of the same chunks satisfies."""

    group_id: str
    """The evidence id of the group's first member (in the item's order)."""
    evidence_ids: tuple[str, ...]
    """Every member's evidence id, in the item's order."""
    chunk_ids: tuple[str, ...]
    """Every chunk that finds the group (members' chunks and their copies), first seen first;
    empty when no member maps to a chunk of the snapshot."""
    grade: int
    """The best relevance grade among the members (1 or 2)."""

    @property
    def anchored(self) -> bool:
        """Return whether any chunk can find the group (False: nothing retrieved can count for it)."""
        return bool(self.chunk_ids)


def evidence_groups(evidence: Iterable[Evidence], copies: Mapping[str, Sequence[str]] | None = None,
                    ) -> list[EvidenceGroup]:
    """Return the relevant evidence groups of an item's evidence, in the order of their first member.

    The rule:

    - only evidence graded 1 or 2 counts (grade 0 is "judged, not relevant");
    - evidence that shares a chunk with other evidence, directly or through a copy of that chunk
      (`copies`: chunk id -> every chunk id of its duplicate group), is one group: retrieving that
      chunk finds all of it. Its grade is the best of its members;
    - evidence mapped to no chunk is a group of its own with no chunks: nothing retrieved can find
      it, and a caller must say so rather than drop it.

    >>> from curate.records import Evidence
    >>> evidence = [Evidence(evidence_id="e1", text="a", chunk_ids=["a", "b"]),
    ...             Evidence(evidence_id="e2", text="a", chunk_ids=["a"], grade=1),
    ...             Evidence(evidence_id="e3", text="c", chunk_ids=["c"]),
    ...             Evidence(evidence_id="e4", text="d", chunk_ids=["d"], grade=0),
    ...             Evidence(evidence_id="e5", text="lost", chunk_ids=[])]
    >>> [(g.group_id, g.evidence_ids, g.chunk_ids, g.grade) for g in evidence_groups(evidence)]
    [('e1', ('e1', 'e2'), ('a', 'b'), 2), ('e3', ('e3',), ('c',), 2), ('e5', ('e5',), (), 2)]
    >>> len(evidence_groups(evidence, copies={"c": ["c", "b"], "b": ["c", "b"]}))  # c is a copy of b
    2
    """
    copies = copies or {}
    members: list[Evidence] = [e for e in evidence if e.grade >= 1]
    parent = list(range(len(members)))

    def find(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    chunks_of = [list(dict.fromkeys(c for chunk_id in e.chunk_ids for c in copies.get(chunk_id, [chunk_id])))
                 for e in members]
    holder: dict[str, int] = {}
    for i, chunks in enumerate(chunks_of):
        for chunk_id in chunks:
            if chunk_id in holder:
                a, b = find(holder[chunk_id]), find(i)
                if a != b:
                    parent[max(a, b)] = min(a, b)
            else:
                holder[chunk_id] = i
    grouped: dict[int, list[int]] = {}
    for i in range(len(members)):
        grouped.setdefault(find(i), []).append(i)
    return [EvidenceGroup(group_id=members[indices[0]].evidence_id,
                          evidence_ids=tuple(members[i].evidence_id for i in indices),
                          chunk_ids=tuple(dict.fromkeys(c for i in indices for c in chunks_of[i])),
                          grade=max(members[i].grade for i in indices))
            for _, indices in sorted(grouped.items())]


def extend_evidence(items: Iterable[EvalItem], copies: Mapping[str, Sequence[str]]) -> int:
    """Add every copy of an evidence's chunks to its chunk ids; return how many evidence changed.

    A span split over several chunks (`partial`) is left alone: its pieces are not interchangeable.
    """
    changed = 0
    for item in items:
        for evidence in item.evidence:
            if evidence.partial:
                continue
            extended = list(dict.fromkeys(c for chunk_id in evidence.chunk_ids
                                          for c in copies.get(chunk_id, [chunk_id])))
            if extended != evidence.chunk_ids:
                evidence.chunk_ids = extended
                changed += 1
    return changed
