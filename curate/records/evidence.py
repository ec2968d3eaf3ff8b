"""What counts as one piece of evidence: the evidence-group rule that import (qtype), difficulty,
the exports and evalrun's scoring all use.

DESIGN.md: the relevant set R of an item is its evidence *groups* with grade >= 1. Copies of the
same evidence (duplicate chunks) form one group; finding any one of them counts. Two passages that
support two facts must both be found; several passages that state the same fact may replace each
other. Where a chunker cut is no reason to join two facts: two quotes that touch one chunk stay two
groups, and that chunk, retrieved, finds both.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from rapidfuzz import fuzz

from curate.records.item import EvalItem, Evidence, KeyPoint
from curate.text.normalize import fold
from curate.text.salient import salient

# Two quotes whose folded texts are this alike (rapidfuzz ratio, 0-100) read as one text, when their
# numbers, dates, codes and negations agree: check-dups' threshold for a near copy.
NEAR_SAME = 90.0


@dataclass(frozen=True)
class EvidenceGroup:
    """Relevant evidence of which any one, found, counts for the group: one required fact."""

    group_id: str
    """The evidence id of the group's first member (in the item's order)."""
    evidence_ids: tuple[str, ...]
    """Every member's evidence id, in the item's order."""
    chunk_ids: tuple[str, ...]
    """Every chunk that finds the group (members' chunks and their copies), first seen first;
    empty when no member maps to a chunk of the snapshot. One chunk may find several groups."""
    grade: int
    """The best relevance grade among the members (1 or 2)."""

    @property
    def anchored(self) -> bool:
        """Return whether any chunk can find the group (False: nothing retrieved can count for it)."""
        return bool(self.chunk_ids)


def same_text(a: str, b: str) -> bool:
    """Return whether two quotes are one text: folded, equal or near-equal (ratio >= NEAR_SAME), and
    the same in their numbers, dates, amounts, codes, versions and negations.

    >>> same_text("退款期限为 30 天。", "退款期限为30天"), same_text("Refunds within 30 days.", "Refunds within 60 days.")
    (True, False)
    >>> same_text("大桥于2018年10月23日正式开通。", "大桥全长55公里。")
    False
    """
    return _Quote(a).same_as(_Quote(b))


class _Quote:
    """A quote with its folded text, and its salient tokens read only when a comparison needs them."""

    __slots__ = ("text", "folded", "_salient")

    def __init__(self, text: str):
        self.text, self.folded, self._salient = text, fold(text), None

    def salient(self) -> Counter:
        if self._salient is None:
            self._salient = salient(self.text)
        return self._salient

    def same_as(self, other: _Quote) -> bool:
        if not self.folded or not other.folded:
            return False
        if self.text == other.text:
            return True
        if self.folded != other.folded and fuzz.ratio(self.folded, other.folded) < NEAR_SAME:
            return False
        return self.salient() == other.salient()


def evidence_groups(evidence: Iterable[Evidence], key_points: Iterable[KeyPoint] = (),
                    copies: Mapping[str, Sequence[str]] | None = None) -> list[EvidenceGroup]:
    """Return the required evidence groups of an item, in the order of their first member.

    The rule:

    - only evidence graded 1 or 2 counts (grade 0 is "judged, not relevant");
    - evidence are alternatives, one group, when they are the same text (`same_text`: equal after
      folding, anywhere) or copies (they share a chunk, directly or through a copy of it — `copies`
      maps a chunk id to every chunk id of its duplicate group — and their texts agree: near-equal
      with no salient difference), or when they are declared alternatives: they carry the same
      `any_of` label, or one key point cites them all;
    - sharing a chunk is not enough: two facts a chunk happens to hold both (a boundary chunk of a
      re-chunking, a long chunk) stay two groups, and that one chunk finds both;
    - every group is required: recall counts the groups found, and a group is found when any one
      of its chunks is retrieved. Its grade is the best of its members;
    - evidence mapped to no chunk is a group with no chunks: nothing retrieved can find it, and a
      caller must say so rather than drop it.

    >>> from curate.records import Evidence, KeyPoint
    >>> evidence = [Evidence(evidence_id="e1", text="Refunds take 30 days.", chunk_ids=["a", "b"]),
    ...             Evidence(evidence_id="e2", text="Refunds take 30 days", chunk_ids=["a"], grade=1),
    ...             Evidence(evidence_id="e3", text="Support opens at 9:00.", chunk_ids=["a"]),
    ...             Evidence(evidence_id="e4", text="d", chunk_ids=["d"], grade=0),
    ...             Evidence(evidence_id="e5", text="lost", chunk_ids=[])]
    >>> [(g.group_id, g.evidence_ids, g.chunk_ids, g.grade) for g in evidence_groups(evidence)]
    [('e1', ('e1', 'e2'), ('a', 'b'), 2), ('e3', ('e3',), ('a',), 2), ('e5', ('e5',), (), 2)]
    >>> copy = Evidence(evidence_id="e6", text="Refunds take 30 days!", chunk_ids=["c"])   # c is a copy of b
    >>> len(evidence_groups(evidence + [copy], copies={"c": ["c", "b"], "b": ["c", "b"]}))
    3
    >>> [g.evidence_ids for g in evidence_groups(evidence, [KeyPoint(text="one fact", evidence_ids=["e1", "e3"])])]
    [('e1', 'e2', 'e3'), ('e5',)]
    """
    copies = copies or {}
    members: list[Evidence] = [e for e in evidence if e.grade >= 1]
    position = {e.evidence_id: i for i, e in enumerate(members)}
    parent = list(range(len(members)))

    def find(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    def join(i: int, j: int) -> None:
        a, b = find(i), find(j)
        if a != b:
            parent[max(a, b)] = min(a, b)

    chunks_of = [list(dict.fromkeys(c for chunk_id in e.chunk_ids for c in copies.get(chunk_id, [chunk_id])))
                 for e in members]
    if len(members) > 1:
        # Pairs that may be one text: the same folded text, or a chunk in common; `_Quote.same_as` decides.
        quotes = [_Quote(e.text) for e in members]
        holders: dict[tuple[str, str], list[int]] = {}
        for i, quote in enumerate(quotes):
            for key in [("chunk", c) for c in chunks_of[i]] + [("text", quote.folded)]:
                holders.setdefault(key, []).append(i)
        compared: set[tuple[int, int]] = set()
        for held in holders.values():
            for n, i in enumerate(held):
                for j in held[n + 1:]:
                    if (i, j) not in compared and find(i) != find(j):
                        compared.add((i, j))
                        if quotes[i].same_as(quotes[j]):
                            join(i, j)
    labelled: dict[str, int] = {}
    for i, member in enumerate(members):
        if member.any_of:
            join(labelled.setdefault(member.any_of, i), i)
    for point in key_points:
        cited = [position[e] for e in point.evidence_ids if e in position]
        for other in cited[1:]:
            join(cited[0], other)
    grouped: dict[int, list[int]] = {}
    for i in range(len(members)):
        grouped.setdefault(find(i), []).append(i)
    return [EvidenceGroup(group_id=members[indices[0]].evidence_id,
                          evidence_ids=tuple(members[i].evidence_id for i in indices),
                          chunk_ids=tuple(dict.fromkeys(c for i in indices for c in chunks_of[i])),
                          grade=max(members[i].grade for i in indices))
            for _, indices in sorted(grouped.items())]


def item_groups(item: EvalItem, copies: Mapping[str, Sequence[str]] | None = None) -> list[EvidenceGroup]:
    """Return an item's required evidence groups: `evidence_groups` of its evidence and key points."""
    return evidence_groups(item.evidence, item.key_points, copies)


def extend_with_copies(evidence: Evidence, copies: Mapping[str, Sequence[str]]) -> bool:
    """Add every copy of the evidence's own chunks to its chunk ids (and to its `copies`), taking out
    copies of a group since undone; return whether it changed.

    A span split over several chunks (`partial`) is left alone: its pieces are not interchangeable.

    >>> from curate.records import Evidence
    >>> evidence = Evidence(evidence_id="e1", text="a", chunk_ids=["a"])
    >>> extend_with_copies(evidence, {"a": ["a", "a-copy"]}), evidence.chunk_ids, evidence.copies
    (True, ['a', 'a-copy'], ['a-copy'])
    """
    if evidence.partial:
        return False
    own = [c for c in evidence.chunk_ids if c not in evidence.copies]
    extended = list(dict.fromkeys(c for chunk_id in own for c in copies.get(chunk_id, [chunk_id])))
    added = [c for c in extended if c not in own]
    if extended == evidence.chunk_ids and added == evidence.copies:
        return False
    evidence.chunk_ids, evidence.copies = extended, added
    return True


def extend_evidence(items: Iterable[EvalItem], copies: Mapping[str, Sequence[str]]) -> int:
    """Extend every evidence of `items` to the copies of its chunks (`extend_with_copies`); return how
    many evidence changed."""
    return sum(extend_with_copies(evidence, copies) for item in items for evidence in item.evidence)


GROUP_PREFIX = "group:"


def retrieval_qrels(item: EvalItem) -> tuple[dict[str, int], dict[str, tuple[str, ...]]] | str:
    """Return an answerable item's qrels in evidence-group terms — ({group key: grade}, {chunk id:
    the keys of every group it finds}, one chunk finding several groups when it holds several
    facts) — or, when its retrieval cannot be scored, why.

    evalrun scores with these, and the BEIR export writes them, so that trec_eval or ranx on the
    exported qrels and a run written in the same terms (`evalrun export-run`) give evalrun's values;
    where one retrieved chunk finds several groups at once they cannot (a TREC run gives a rank one
    id), and the exports count those items.

    >>> from curate.records import EvalItem, Evidence
    >>> item = EvalItem(id="q", question="?", language="en", source="human", evidence=[
    ...     Evidence(evidence_id="e1", text="a", chunk_ids=["a", "a-copy"]), Evidence(evidence_id="e2", text="b", chunk_ids=["b"], grade=1),
    ...     Evidence(evidence_id="e3", text="c", chunk_ids=["b"])])
    >>> grades, chunk_groups = retrieval_qrels(item)
    >>> grades
    {'group:e1': 2, 'group:e2': 1, 'group:e3': 2}
    >>> chunk_groups
    {'a': ('group:e1',), 'a-copy': ('group:e1',), 'b': ('group:e2', 'group:e3')}
    """
    groups = item_groups(item)
    if not groups:
        return "no relevant evidence labelled"
    unanchored = [g.group_id for g in groups if not g.anchored]
    if unanchored:
        return f"evidence {', '.join(unanchored)} maps to no chunk of the KB snapshot (curate remap)"
    grades = {GROUP_PREFIX + g.group_id: g.grade for g in groups}
    chunk_groups: dict[str, tuple[str, ...]] = {}
    for group in groups:
        for chunk_id in group.chunk_ids:
            chunk_groups[chunk_id] = chunk_groups.get(chunk_id, ()) + (GROUP_PREFIX + group.group_id,)
    return grades, chunk_groups
